//! Which compiled copy of the interpreter's straight-line loop this CPU runs.
//!
//! The loop (`interp::Execution::straight` and everything inlined into it) is compiled twice on
//! x86-64: once for the baseline instruction set the binary targets, and once with the
//! instructions of x86-64-v3 (AVX2, FMA, BMI1/2, LZCNT, MOVBE), which the compiler uses to apply an
//! instruction to a run of lanes several at a time and to make `mad` and `fma` one instruction
//! instead of a call to a software `fmaf`. The copy is chosen at run time, once per process, from
//! what the CPU reports. Both copies compute the same bits: the operations they compile are IEEE
//! and integer operations without fast-math freedoms, and a fused multiply-add is exact either
//! way. `CLRACE_CPU=baseline` forces the baseline copy (for comparing the two; `tests/cpu.rs`
//! does).
//!
//! It owns the choice only; it cannot see the loop nor what it runs.

use std::sync::OnceLock;

/// The environment variable that forces the baseline copy when it is `baseline`.
pub const CPU_VARIABLE: &str = "CLRACE_CPU";

/// True when the x86-64-v3 copy of the loop may run here: the CPU has every feature it was
/// compiled with, and `CLRACE_CPU` does not ask for the baseline.
#[inline]
pub fn wide() -> bool {
    static WIDE: OnceLock<bool> = OnceLock::new();
    *WIDE.get_or_init(|| {
        let forced = std::env::var(CPU_VARIABLE).is_ok_and(|v| v.eq_ignore_ascii_case("baseline"));
        !forced && has_v3()
    })
}

#[cfg(target_arch = "x86_64")]
fn has_v3() -> bool {
    std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("fma")
        && std::is_x86_feature_detected!("bmi1")
        && std::is_x86_feature_detected!("bmi2")
        && std::is_x86_feature_detected!("lzcnt")
        && std::is_x86_feature_detected!("movbe")
        && std::is_x86_feature_detected!("popcnt")
        && std::is_x86_feature_detected!("f16c")
}

#[cfg(not(target_arch = "x86_64"))]
fn has_v3() -> bool {
    false
}

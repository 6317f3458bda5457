//! The gate of on-device checking (issue 30, `docs/on-device.md`): runs the launch of a `.sim`
//! launch file on the first OpenCL device of the first platform three ways — the application's
//! own source, clrace's IR written back out as OpenCL C without hooks ("lowered"), and written
//! back out with the race and bounds hooks of `clrace::device` ("instrumented") — times each
//! kernel with profiling events (best of N, as `native_sim` does; the variants take turns within
//! each of the N repetitions, and `ratio_median` is the median over them of instrumented over
//! native), and prints the ratios, whether
//! the instrumented run's buffers equal the native run's, and the findings the instrumented
//! kernel left in its findings buffer.
//!
//! What it cannot see: the instrumenter refuses constructs outside the gate's kernels (it says
//! which, and this exits 2); anything the emulator alone sees (see the design note). The
//! shadow's zeroing is a separate fill, timed apart (`fill_ms`) and counted in `ratio_fill`.
//!
//! A fourth run measures the same hooks with plain shadow updates in place of atomics
//! (`-DCR_PLAIN_SHADOW`, `plain_shadow_*`): what the atomics cost; that variant can miss races.
//!
//! Usage: `on_device_gate [--reps N] [--source] [--lowered-source] [--only native|lowered|instrumented]
//! [--spirv FILE.spv] FILE.sim`. `--source` and `--lowered-source` print the program the driver
//! gets, with and without hooks. `--spirv` reads clrace's compiled form of the program from
//! FILE.spv, or compiles it and writes it there when that file does not exist: a machine without
//! clang-15 (a GPU machine) then runs what another machine prepared (`bench/device/bundle.sh`).
//! Prints on stdout one line
//! `on_device_gate: KERNEL on DEVICE: native_ms=… lowered_ms=… instrumented_ms=… fill_ms=…
//! ratio=… ratio_fill=… ratio_median=… plain_shadow_ms=… plain_shadow_ratio=… plain_shadow_findings=N
//! shadow=atomic|plain shadow_bytes=… outputs=same|differ findings=N dropped=D`, then one `finding: … [lines A B]`
//! line per finding of the instrumented run (A and B its two accesses' lines, smaller first). Exit status: 0 no finding, 1 findings, 2 an error.

mod common;
mod native;

use std::ffi::c_void;
use std::path::PathBuf;
use std::process::ExitCode;
use std::ptr;

use cl3::types::{cl_device_id, cl_mem};
use cl3::{device, memory};
use clrace::ArgValue;
use clrace::device::{Extra, Instrumented, Plan, instrument};
use clrace::launch::{self, LaunchData};

use common::{cl, first_device};
use native::Native;

fn main() -> ExitCode {
    match run() {
        Ok(false) => ExitCode::SUCCESS,
        Ok(true) => ExitCode::from(1),
        Err(message) => {
            eprintln!("on_device_gate: {message}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<bool, String> {
    const USAGE: &str = "usage: on_device_gate [--reps N] [--source] [--lowered-source] \
                         [--only native|lowered|instrumented] [--spirv FILE.spv] FILE.sim";
    let mut args = std::env::args().skip(1);
    let (mut file, mut reps, mut show, mut show_lowered, mut only, mut spirv) = (None, 5u32, false, false, None, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--source" => show = true,
            "--lowered-source" => show_lowered = true,
            "--spirv" => spirv = Some(PathBuf::from(args.next().ok_or(USAGE)?)),
            "--only" => {
                only = Some(
                    args.next().filter(|v| ["native", "lowered", "instrumented"].contains(&v.as_str())).ok_or(USAGE)?,
                )
            }
            "--reps" => reps = args.next().and_then(|v| v.parse().ok()).filter(|&n| n > 0).ok_or(USAGE)?,
            _ if arg.starts_with('-') || file.is_some() => return Err(USAGE.into()),
            _ => file = Some(PathBuf::from(arg)),
        }
    }
    let file = file.ok_or(USAGE)?;
    let text = launch::read_file(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let header = launch::parse_header(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let program_path = launch::resolve_program(&header.program, &file)
        .ok_or_else(|| format!("{}: program file '{}' not found", file.display(), header.program))?;
    let source = launch::read_file(&program_path).map_err(|e| format!("{}: {e}", program_path.display()))?;
    let options = header.build_options.clone().unwrap_or_default();
    let reflected = match &spirv {
        Some(spv) if spv.exists() => {
            let bytes = std::fs::read(spv).map_err(|e| format!("cannot read {}: {e}", spv.display()))?;
            clrace::Program::from_spirv(&bytes).map_err(|e| format!("{}: {e}", spv.display()))?
        }
        _ => {
            let built = clrace::compile::compile(&source, &program_path, &options)
                .map_err(|e| format!("{}: {e}", program_path.display()))?;
            if let Some(spv) = &spirv {
                std::fs::write(spv, &built.spirv).map_err(|e| format!("cannot write {}: {e}", spv.display()))?;
            }
            clrace::Program::from_spirv(&built.spirv).map_err(|e| format!("{}: {e}", program_path.display()))?
        }
    };
    let info = reflected.kernel(&header.kernel).ok_or_else(|| format!("no kernel named '{}'", header.kernel))?;
    let data = launch::parse_args(&text, &header, info, 1).map_err(|e| format!("{}: {e}", file.display()))?;
    let module = reflected.module();
    let lowered = instrument(module, &header.kernel, false).map_err(|e| e.to_string())?;
    let checked = instrument(module, &header.kernel, true).map_err(|e| e.to_string())?;
    if show {
        println!("{}", checked.source);
    }
    if show_lowered {
        println!("{}", lowered.source);
    }

    let device = first_device()?;
    let device_name: String =
        device::get_device_info(device, device::CL_DEVICE_NAME).map_err(cl("clGetDeviceInfo"))?.into();
    let plan = checked.plan(&arg_bytes(&data));
    if let Some(variant) = only {
        let (source, options) = if variant == "lowered" { (&lowered.source, "") } else { (&source, options.as_str()) };
        return only_one(device, &variant, (source, options), &checked, &plan, &data, reps);
    }
    let native = Run::new(device, &source, &options, &header.kernel, &data, None)?;
    let plain = Run::new(device, &lowered.source, "", &header.kernel, &data, None)?;
    // The prelude falls back to plain shadow updates where the driver has no 64-bit atomics;
    // a build with the probe fails exactly then.
    let probe = Run::new(device, &checked.source, "-DCR_PROBE_ATOMICS", &header.kernel, &data, Some((&checked, &plan)));
    let shadow_mode = if probe.is_ok() { "atomic" } else { "plain" };
    drop(probe);
    let hooked = Run::new(device, &checked.source, "", &header.kernel, &data, Some((&checked, &plan)))?;
    // The same hooks with plain shadow updates instead of atomics: what the atomics cost.
    let plain_shadow =
        Run::new(device, &checked.source, "-DCR_PLAIN_SHADOW", &header.kernel, &data, Some((&checked, &plan)))?;
    // The variants take turns within each repetition, so that each ratio compares runs that
    // met the same load on a shared machine.
    let mut times: [Vec<u64>; 5] = Default::default();
    for _ in 0..reps {
        times[0].push(native.one(&data)?);
        times[1].push(plain.one(&data)?);
        let (checked_ns, fill_ns) = hooked.one_checked(&data, &plan)?;
        times[2].push(checked_ns);
        times[3].push(fill_ns);
        times[4].push(plain_shadow.one_checked(&data, &plan)?.0);
    }
    let native_out = native.read_back(&data.buffers)?;
    let out = hooked.read_back(&data.buffers)?;
    let findings = checked.findings(&hooked.read_findings(&plan)?);
    let plain_findings = checked.findings(&plain_shadow.read_findings(&plan)?);
    let best = |v: &[u64]| v.iter().copied().min().unwrap_or(0);
    let (native_ns, lowered_ns, checked_ns, fill_ns, plain_shadow_ns) =
        (best(&times[0]), best(&times[1]), best(&times[2]), best(&times[3]), best(&times[4]));
    let mut ratios: Vec<f64> = times[0].iter().zip(&times[2]).map(|(&n, &c)| c as f64 / n.max(1) as f64).collect();
    ratios.sort_by(f64::total_cmp);
    let ratio_median = ratios.get(ratios.len() / 2).copied().unwrap_or(0.0);

    let ms = |ns: u64| ns as f64 / 1e6;
    println!(
        "on_device_gate: {} on {device_name}: native_ms={:.4} lowered_ms={:.4} instrumented_ms={:.4} fill_ms={:.4} \
         ratio={:.2} ratio_fill={:.2} ratio_median={:.2} plain_shadow_ms={:.4} plain_shadow_ratio={:.2} plain_shadow_findings={} \
         shadow={} shadow_bytes={} outputs={} findings={} dropped={}",
        header.kernel,
        ms(native_ns),
        ms(lowered_ns),
        ms(checked_ns),
        ms(fill_ns),
        checked_ns as f64 / native_ns.max(1) as f64,
        (checked_ns + fill_ns) as f64 / native_ns.max(1) as f64,
        ratio_median,
        ms(plain_shadow_ns),
        plain_shadow_ns as f64 / native_ns.max(1) as f64,
        plain_findings.records.len(),
        shadow_mode,
        plan.device_bytes(),
        if out == native_out { "same" } else { "differ" },
        findings.records.len(),
        findings.dropped
    );
    let names: Vec<String> = info.args.iter().map(|a| a.name.clone()).collect();
    let mut lines: Vec<String> = findings
        .records
        .iter()
        .map(|f| {
            let (a, b) = f.line_pair(module);
            format!("finding: {} [lines {a} {b}]", f.describe(module, &names))
        })
        .collect();
    lines.sort();
    for line in &lines {
        println!("{line}");
    }
    Ok(!findings.records.is_empty())
}

/// `--only`: `reps` launches of one variant back to back, from the buffers the last one left
/// (no restore, so that the process's CPU time is the kernels' and the shadow fills': measured
/// from outside with `perf stat -e task-clock`, which a shared machine's load does not inflate
/// as it does wall time). Prints nothing; finds nothing.
fn only_one(
    device: cl_device_id,
    variant: &str,
    (source, options): (&str, &str),
    checked: &Instrumented,
    plan: &Plan,
    data: &LaunchData,
    reps: u32,
) -> Result<bool, String> {
    let name = &data.launch.kernel;
    if variant != "instrumented" {
        let run = Run::new(device, source, options, name, data, None)?;
        for _ in 0..reps {
            run.launch(data)?;
        }
    } else {
        let run = Run::new(device, &checked.source, "", name, data, Some((checked, plan)))?;
        for _ in 0..reps {
            run.fill_and_launch(plan, data)?;
        }
    }
    Ok(false)
}

/// Per argument, the bytes the instrumenter's plan needs: a buffer's size, a `__local` size.
fn arg_bytes(data: &LaunchData) -> Vec<usize> {
    data.launch
        .args
        .iter()
        .map(|arg| match arg {
            ArgValue::Buffer(b) => data.buffers.get(*b).map_or(0, Vec::len),
            ArgValue::Local(bytes) => *bytes,
            _ => 0,
        })
        .collect()
}

/// One program built and bound to a launch's buffers (and, instrumented, to our extras).
struct Run {
    native: Native,
    /// Shadow, findings and meta buffers when instrumented.
    extras: Vec<cl_mem>,
}

impl Drop for Run {
    fn drop(&mut self) {
        // SAFETY: each extra buffer was created here and is released exactly once, before the
        // context `native` releases after this.
        unsafe {
            for &mem in &self.extras {
                let _ = memory::release_mem_object(mem);
            }
        }
    }
}

impl Run {
    fn new(
        device: cl_device_id,
        source: &str,
        options: &str,
        name: &str,
        data: &LaunchData,
        checked: Option<(&Instrumented, &Plan)>,
    ) -> Result<Run, String> {
        let mut native = Native::new(device, source, options, name)?;
        native.bind(data)?;
        let mut run = Run { native, extras: Vec::new() };
        if let Some((checked, plan)) = checked {
            let mut index = data.launch.args.len();
            let mut locals = plan.local_shadow_bytes.iter();
            for extra in &checked.extras {
                let findings: Vec<u8>;
                let meta: Vec<u8>;
                let mem = match extra {
                    Extra::Shadow => run.native.buffer(plan.shadow_bytes, None)?,
                    Extra::Findings => {
                        findings = plan.findings.iter().flat_map(|w| w.to_ne_bytes()).collect();
                        run.native.buffer(findings.len(), Some(&findings))?
                    }
                    Extra::Meta => {
                        meta = plan.meta.iter().flat_map(|w| w.to_ne_bytes()).collect();
                        run.native.buffer(meta.len(), Some(&meta))?
                    }
                    Extra::LocalShadow { .. } => {
                        let bytes = *locals.next().ok_or("no size for a __local shadow")?;
                        run.native.set_arg(index, bytes.max(8), ptr::null())?;
                        index += 1;
                        continue;
                    }
                };
                run.extras.push(mem);
                run.native.set_arg(index, size_of::<cl_mem>(), &mem as *const cl_mem as *const c_void)?;
                index += 1;
            }
        }
        Ok(run)
    }

    fn launch(&self, data: &LaunchData) -> Result<u64, String> {
        self.native.launch(data)
    }

    fn read_back(&self, initial: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, String> {
        self.native.read_back(initial)
    }

    /// One run from the launch's initial contents: its kernel time.
    fn one(&self, data: &LaunchData) -> Result<u64, String> {
        self.native.restore(&data.buffers)?;
        self.launch(data)
    }

    /// One run of the instrumented kernel, whose shadow is zeroed first (a fill, timed: the
    /// second value) and its findings header written.
    fn one_checked(&self, data: &LaunchData, plan: &Plan) -> Result<(u64, u64), String> {
        self.native.restore(&data.buffers)?;
        self.fill_and_launch(plan, data)
    }

    /// Writes the findings header, zeroes the shadow and launches: the kernel's time and the
    /// fill's.
    fn fill_and_launch(&self, plan: &Plan, data: &LaunchData) -> Result<(u64, u64), String> {
        let header: Vec<u8> = plan.findings.iter().flat_map(|w| w.to_ne_bytes()).collect();
        self.native.write(self.extras[1], &header)?;
        let fill = self.native.zero(self.extras[0], plan.shadow_bytes)?;
        Ok((self.launch(data)?, fill))
    }

    fn read_findings(&self, plan: &Plan) -> Result<Vec<u32>, String> {
        let bytes = self.native.read(self.extras[1], plan.findings.len() * 4)?;
        Ok(bytes.chunks_exact(4).map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect())
    }
}

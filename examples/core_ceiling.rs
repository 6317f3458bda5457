//! How much two threads give over one on this machine, for work that shares nothing: the ceiling
//! of clrace's own two threads against one, measured in the same benchmark run.
//!
//! Runs a fixed amount of integer arithmetic (no memory traffic, no locks) on one thread, then
//! the same amount split over two threads, in interleaved pairs, and prints the median, lowest
//! and highest ratio of the pairs (one-thread time over two-thread time) as one JSON object. On
//! a machine with two idle cores the ratio is about 2; where the two virtual CPUs share a core,
//! or other tenants take one, it is what is left (`bench/run.py` prints it beside clrace's
//! ratios).
//!
//! Run: `cargo run --release --example core_ceiling [PAIRS]` (default 9).

use std::hint::black_box;
use std::time::Instant;

/// A share of work: enough to take milliseconds, little enough that a pair takes well under a second.
const STEPS: u64 = 20_000_000;

/// `steps` rounds of four independent multiply-add chains the compiler cannot fold away: several
/// instructions a cycle, as an interpreter's loop runs, so that two threads on one core's two
/// hardware threads show it (a single chain would leave the core half idle and hide it).
fn spin(steps: u64) -> u64 {
    let mut x = black_box([0x9e37_79b9_7f4a_7c15u64, 1, 2, 3]);
    for i in 0..steps {
        for (k, v) in x.iter_mut().enumerate() {
            *v = v.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i ^ k as u64);
        }
    }
    black_box(x.iter().fold(0, |a, v| a ^ v))
}

fn main() {
    let pairs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(9).max(1);
    let mut ratios: Vec<f64> = (0..pairs)
        .map(|_| {
            let one = Instant::now();
            spin(2 * STEPS);
            let one = one.elapsed().as_secs_f64();
            let two = Instant::now();
            std::thread::scope(|s| {
                let other = s.spawn(|| spin(STEPS));
                spin(STEPS);
                other.join().expect("the spinning thread does not panic");
            });
            one / two.elapsed().as_secs_f64()
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    println!(
        "{{\"pairs\": {pairs}, \"median\": {:.3}, \"min\": {:.3}, \"max\": {:.3}}}",
        ratios[pairs / 2],
        ratios[0],
        ratios[pairs - 1]
    );
}

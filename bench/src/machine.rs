//! The machine the figures come from, and how much its cores give together.
//!
//! `available_parallelism` counts the cores a process may use, not what they do at
//! once: on a virtual machine two of them may be two hardware threads of one
//! physical core, or share one with another tenant, and then two busy threads each
//! run at half speed or worse. A ratio at 64 senders reads very differently on two
//! cores that add up to one, so the run measures it ([`parallel_speedup`]) and the
//! table's header says it.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::stats::Summary;

/// The machine the figures come from.
#[derive(Debug, Serialize)]
pub(crate) struct Machine {
    cores: usize,
    cpu: Option<String>,
    kernel: Option<String>,
    /// How many times one thread's work the cores did together, all of them busy
    /// at once (see [`parallel_speedup`]); `None` on one core.
    parallel_speedup: Option<f64>,
}

impl Machine {
    /// Reads the machine's description and measures its cores together (about a
    /// quarter of a second; a hundredth of that for a `quick` run, whose figures
    /// mean little anyway).
    pub(crate) fn detect(quick: bool) -> Self {
        let read = |path: &str| std::fs::read_to_string(path).ok();
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Self {
            cores,
            cpu: read("/proc/cpuinfo").and_then(|info| {
                info.lines()
                    .find_map(|l| l.strip_prefix("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, name)| name.trim().to_owned())
            }),
            kernel: read("/proc/sys/kernel/osrelease").map(|k| k.trim().to_owned()),
            parallel_speedup: (cores > 1).then(|| {
                parallel_speedup(cores, if quick { ITERATIONS / 100 } else { ITERATIONS })
            }),
        }
    }

    /// One line for the table's header.
    pub(crate) fn describe(&self) -> String {
        let together = self.parallel_speedup.map_or_else(String::new, |speedup| {
            format!(" (together {speedup:.2}× the work of one)")
        });
        format!(
            "{} core{}{together}, {}, Linux {}",
            self.cores,
            if self.cores == 1 { "" } else { "s" },
            self.cpu.as_deref().unwrap_or("unknown CPU"),
            self.kernel.as_deref().unwrap_or("?")
        )
    }
}

/// Rounds of the probe; the median speedup is kept, as a neighbour's burst can slow
/// one round.
const ROUNDS: usize = 3;

/// Iterations of one thread's work: about 40 ms on the machines this runs on.
const ITERATIONS: u64 = 12_000_000;

/// How many times one thread's work `threads` threads do in the same time, each
/// doing the same work at once: `threads` on cores that are each a whole core, about
/// 1 on two that share one. The work is the send path's kind (random reads and
/// writes over 256 KiB, beyond the first-level cache, with integer arithmetic), not
/// a loop that fits in registers, which hardware threads of one core share well.
pub(crate) fn parallel_speedup(threads: usize, iterations: u64) -> f64 {
    let speedups: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let alone = timed(|| {
                std::hint::black_box(work(iterations));
            });
            let together = timed(|| {
                std::thread::scope(|scope| {
                    for _ in 0..threads {
                        scope.spawn(|| std::hint::black_box(work(iterations)));
                    }
                });
            });
            speedup(alone, together, threads)
        })
        .collect();
    Summary::of(&speedups).map_or(threads as f64, |summary| summary.median)
}

/// The speedup of `threads` threads that took `together` to do what one did in
/// `alone` each.
fn speedup(alone: Duration, together: Duration, threads: usize) -> f64 {
    let together = together.as_secs_f64();
    if together <= 0.0 {
        return threads as f64;
    }
    threads as f64 * alone.as_secs_f64() / together
}

fn timed(f: impl FnOnce()) -> Duration {
    let started = Instant::now();
    f();
    started.elapsed()
}

/// One thread's share of the probe: a pseudo-random walk over its own 256 KiB.
fn work(iterations: u64) -> u64 {
    const WORDS: usize = 1 << 15;
    let mut words = vec![0_u64; WORDS];
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for i in 0..iterations {
        // A linear congruential step (Knuth's MMIX constants): cheap, and its high
        // bits are spread enough to pick the word.
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let at = usize::try_from(state >> 49).unwrap_or(0) % WORDS;
        words[at] = words[at].wrapping_add(i);
    }
    words.iter().fold(0, |sum, word| sum ^ word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores_that_each_do_a_whole_cores_work_speed_up_by_their_number() {
        let alone = Duration::from_millis(40);
        assert!((speedup(alone, alone, 2) - 2.0).abs() < 1e-9);
        // Two threads that took twice as long: two cores that add up to one.
        assert!((speedup(alone, alone * 2, 2) - 1.0).abs() < 1e-9);
        assert!((speedup(alone, Duration::from_millis(80), 4) - 2.0).abs() < 1e-9);
    }

    #[test]
    fn a_together_time_of_zero_is_not_a_division_by_zero() {
        let got = speedup(Duration::from_millis(1), Duration::ZERO, 2);
        assert!(got.is_finite());
    }

    #[test]
    fn the_header_says_what_the_cores_do_together() {
        let machine = Machine {
            cores: 2,
            cpu: Some(String::from("Some CPU")),
            kernel: Some(String::from("6.1")),
            parallel_speedup: Some(1.07),
        };
        assert_eq!(
            machine.describe(),
            "2 cores (together 1.07× the work of one), Some CPU, Linux 6.1"
        );
        let one = Machine {
            parallel_speedup: None,
            cores: 1,
            ..machine
        };
        assert_eq!(one.describe(), "1 core, Some CPU, Linux 6.1");
    }

    #[test]
    fn the_work_depends_on_its_length() {
        // Not optimised into a constant: different lengths leave different words.
        assert_ne!(work(1_000), work(2_000));
    }
}

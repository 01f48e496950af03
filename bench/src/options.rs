//! How much each suite measures: repeats, run lengths, sizes.

use std::time::Duration;

use serde::Serialize;

/// The sizes and repeat counts every suite reads.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Options {
    /// Measured runs per figure (after the warm-up).
    pub(crate) repeats: usize,
    /// Whether one unmeasured run goes first, to fill caches, pools and allocator
    /// arenas before anything counts.
    pub(crate) warmup: bool,
    /// How long each closed-loop request/reply run offers load.
    pub(crate) run_secs: f64,
    /// The concurrent-sender counts of the request/reply cases.
    pub(crate) senders: Vec<usize>,
    /// Messages per fire-and-forget run.
    pub(crate) fire_messages: usize,
    /// Sessions (and raw actors) the sessions suite spawns.
    pub(crate) sessions: usize,
    /// How long the overload suite offers ten times the sustainable rate.
    pub(crate) overload_secs: f64,
    /// How long the sustained suite offers load (default five minutes: long enough to see growth that a short run hides).
    pub(crate) sustained_secs: f64,
    /// How often the sustained suite samples the server's memory and throughput.
    pub(crate) sample_secs: f64,
    /// Whether this is the smoke run (`--quick`).
    pub(crate) quick: bool,
}

impl Options {
    /// The full measurement: 5 repeats after a warm-up, at the sizes the targets name.
    pub(crate) fn full() -> Self {
        Self {
            repeats: 5,
            warmup: true,
            run_secs: 1.0,
            senders: vec![1, 64, 1024],
            fire_messages: 128_000,
            sessions: 100_000,
            overload_secs: 10.0,
            sustained_secs: 300.0,
            sample_secs: 10.0,
            quick: false,
        }
    }

    /// A smoke run that exercises every code path in seconds: one repeat, no warm-up,
    /// small sizes. Its figures say that the program works, not what things cost.
    pub(crate) fn quick() -> Self {
        Self {
            repeats: 1,
            warmup: false,
            run_secs: 0.1,
            senders: vec![1, 64, 1024],
            fire_messages: 4_096,
            sessions: 2_000,
            overload_secs: 0.5,
            sustained_secs: 2.5,
            sample_secs: 0.5,
            quick: true,
        }
    }

    /// Runs per figure, the warm-up included.
    pub(crate) fn rounds(&self) -> usize {
        self.repeats + usize::from(self.warmup)
    }

    /// Whether round `round` (counting from 0) is measured.
    pub(crate) fn measured(&self, round: usize) -> bool {
        round >= usize::from(self.warmup)
    }

    pub(crate) fn run_time(&self) -> Duration {
        Duration::from_secs_f64(self.run_secs)
    }

    /// The round's label for progress lines, e.g. `warm-up` or `run 2/5`.
    pub(crate) fn round_label(&self, round: usize) -> String {
        if self.measured(round) {
            format!(
                "run {}/{}",
                round + 1 - usize::from(self.warmup),
                self.repeats
            )
        } else {
            String::from("warm-up")
        }
    }
}

/// Prints a progress line on stderr, so a ten-minute run shows where it is while the
/// table stays alone on stdout.
pub(crate) fn progress(line: impl AsRef<str>) {
    eprintln!("· {}", line.as_ref());
}

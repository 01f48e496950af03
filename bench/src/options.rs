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
    /// `--only`: measure only the cases whose ids hold one of these as whole words
    /// ([`Options::wants`]; all when empty).
    pub(crate) only: Vec<String>,
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
            only: Vec::new(),
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
            only: Vec::new(),
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

    /// Whether the case `id` (its rows' id without the figure, e.g.
    /// `http.send.message.16`) is measured: every case unless `--only` names others.
    /// A part names the cases that hold it as whole dot-separated words, so that
    /// `request_reply.1` is not also `request_reply.1024`.
    pub(crate) fn wants(&self, id: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|part| holds_words(id, part))
    }

    /// Refuses a run of `suite` none of whose `cases` `--only` names, listing them.
    pub(crate) fn wants_any(&self, suite: &str, cases: &[String]) -> crate::error::Result<()> {
        if cases.iter().any(|case| self.wants(case)) {
            return Ok(());
        }
        Err(crate::error::Error::Unexpected(format!(
            "--only {} names no case of the {suite} suite; its cases are {}",
            self.only.join(","),
            cases.join(", ")
        )))
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

/// Whether `part` is a run of whole dot-separated words of `id`.
fn holds_words(id: &str, part: &str) -> bool {
    id.match_indices(part).any(|(at, _)| {
        let end = at + part.len();
        (at == 0 || id[..at].ends_with('.')) && (end == id.len() || id[end..].starts_with('.'))
    })
}

#[cfg(test)]
mod tests {
    use super::{Options, holds_words};

    #[test]
    fn a_part_names_whole_words_of_a_case_id() {
        assert!(holds_words("supervisor.request_reply.1", "request_reply.1"));
        assert!(!holds_words(
            "supervisor.request_reply.1024",
            "request_reply.1"
        ));
        assert!(holds_words(
            "supervisor.request_reply.1024",
            "request_reply.1024"
        ));
        assert!(holds_words("http.v1.send.message.16", "send.message.16"));
        assert!(!holds_words(
            "http.v1.send.message.16",
            "http.send.message.16"
        ));
        assert!(holds_words("store.journal.http", "store"));
        assert!(!holds_words("store.journal.http", "journ"));
        // A later occurrence counts when the first is inside a word.
        assert!(holds_words("http.stream.11.stream.1", "stream.1"));
    }

    #[test]
    fn every_case_is_wanted_unless_only_names_others() {
        let mut options = Options::quick();
        assert!(options.wants("http.send.task.64"));
        options.only = vec![String::from("send.message"), String::from("journal")];
        assert!(options.wants("http.send.message.1"));
        assert!(options.wants("store.journal.http"));
        assert!(!options.wants("http.send.task.64"));
    }
}

//! Statistics: the median and range of a figure over repeated runs, and latency
//! percentiles within one run.

use std::time::Duration;

use serde::Serialize;

#[cfg(test)]
mod tests;

/// A figure over repeated runs: its median and its range.
///
/// The median, not the mean, because the machine is shared: one run slowed by a
/// neighbour should move the range, not the headline figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct Summary {
    pub(crate) median: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
    /// How many runs the figure summarizes.
    pub(crate) runs: usize,
}

impl Summary {
    /// Summarizes `values`; `None` when there are none.
    pub(crate) fn of(values: &[f64]) -> Option<Self> {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let (&min, &max) = (sorted.first()?, sorted.last()?);
        let mid = sorted.len() / 2;
        let median = if sorted.len() % 2 == 1 {
            sorted[mid]
        } else {
            (sorted[mid - 1] + sorted[mid]) / 2.0
        };
        Some(Self {
            median,
            min,
            max,
            runs: sorted.len(),
        })
    }
}

/// `runtime / floor` for each pair of runs made side by side.
///
/// Ratios are taken per pair, then summarized, because the two halves of a pair ran
/// under the same neighbour load: the noise that moves both cancels out of their ratio.
pub(crate) fn pair_ratios(runtime: &[f64], floor: &[f64]) -> Vec<f64> {
    runtime
        .iter()
        .zip(floor)
        .map(|(r, f)| if *f == 0.0 { f64::NAN } else { r / f })
        .collect()
}

/// The latencies of one run, in nanoseconds, kept whole so percentiles are exact.
///
/// A sample costs 8 bytes; a run of a million requests holds 8 MB, less than one
/// histogram per sender would at a thousand senders.
#[derive(Debug, Clone, Default)]
pub(crate) struct Latencies {
    samples: Vec<u64>,
    sorted: bool,
}

impl Latencies {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn record(&mut self, latency: Duration) {
        self.samples
            .push(u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX));
        self.sorted = false;
    }

    /// Adds another run's (or another sender's) latencies.
    pub(crate) fn merge(&mut self, other: &Self) {
        self.samples.extend_from_slice(&other.samples);
        self.sorted = false;
    }

    /// Sorts the samples once, so that reading percentiles does not copy them.
    pub(crate) fn sort(&mut self) {
        if !self.sorted {
            self.samples.sort_unstable();
            self.sorted = true;
        }
    }

    pub(crate) fn count(&self) -> u64 {
        self.samples.len() as u64
    }

    /// The latency at `quantile` (0.5 for the median) by nearest rank, in nanoseconds;
    /// 0 when empty.
    pub(crate) fn quantile_ns(&self, quantile: f64) -> f64 {
        if self.samples.is_empty() {
            return 0.0;
        }
        let rank = (quantile.clamp(0.0, 1.0) * self.samples.len() as f64).ceil() as usize;
        let index = rank.clamp(1, self.samples.len()) - 1;
        if self.sorted {
            self.samples[index] as f64
        } else {
            let mut copy = self.samples.clone();
            let (_, nth, _) = copy.select_nth_unstable(index);
            *nth as f64
        }
    }

    /// The largest latency, in nanoseconds; 0 when empty.
    pub(crate) fn max_ns(&self) -> f64 {
        self.samples.iter().max().map_or(0.0, |&max| max as f64)
    }
}

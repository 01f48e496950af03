//! The results: one row per figure, printed as a table and written as JSON.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::stats::{Summary, pair_ratios};

#[cfg(test)]
mod tests;

/// What a figure counts. Values are stored in the base unit and scaled for display.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Unit {
    /// Events per second.
    PerSecond,
    /// A duration in nanoseconds.
    Nanos,
    /// A duration in seconds.
    Seconds,
    /// Bytes.
    Bytes,
}

/// Which way is better for a figure, so a reader knows how to read its ratio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Better {
    Higher,
    Lower,
}

/// One figure of the runtime beside its floor, each over the same repeated runs.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    /// A stable key for tracking the figure over time, e.g.
    /// `supervisor.request_reply.64.throughput`.
    pub(crate) id: String,
    pub(crate) suite: &'static str,
    pub(crate) case: String,
    /// What the floor is, e.g. `ractor call`.
    pub(crate) floor_is: String,
    pub(crate) unit: Unit,
    pub(crate) better: Better,
    pub(crate) runtime: Summary,
    pub(crate) floor: Summary,
    /// `runtime / floor`, taken per pair of runs.
    pub(crate) ratio: Summary,
}

/// The description of a row before its numbers are known.
#[derive(Debug, Clone)]
pub(crate) struct Figure {
    pub(crate) id: String,
    pub(crate) suite: &'static str,
    pub(crate) case: String,
    pub(crate) floor_is: String,
    pub(crate) unit: Unit,
    pub(crate) better: Better,
}

impl Figure {
    pub(crate) fn new(
        suite: &'static str,
        id: impl Into<String>,
        case: impl Into<String>,
        unit: Unit,
        better: Better,
    ) -> Self {
        Self {
            id: format!("{suite}.{}", id.into()),
            suite,
            case: case.into(),
            floor_is: String::new(),
            unit,
            better,
        }
    }

    /// Names the floor the figure is compared with.
    pub(crate) fn against(mut self, floor_is: impl Into<String>) -> Self {
        self.floor_is = floor_is.into();
        self
    }

    /// The row for these paired runs: `runtime[i]` and `floor[i]` ran side by side.
    ///
    /// # Errors
    /// [`Error::Unexpected`] when there are no runs.
    pub(crate) fn row(self, runtime: &[f64], floor: &[f64]) -> Result<Row> {
        let empty = || Error::Unexpected(format!("no runs measured for `{}`", self.id));
        Ok(Row {
            runtime: Summary::of(runtime).ok_or_else(empty)?,
            floor: Summary::of(floor).ok_or_else(empty)?,
            ratio: Summary::of(&pair_ratios(runtime, floor)).ok_or_else(empty)?,
            id: self.id,
            suite: self.suite,
            case: self.case,
            floor_is: self.floor_is,
            unit: self.unit,
            better: self.better,
        })
    }
}

/// A fact a suite checked (every accepted request completed, …): not a speed, so it
/// has no floor, but a run where it fails is not a valid measurement.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Check {
    pub(crate) suite: &'static str,
    pub(crate) what: String,
    pub(crate) ok: bool,
}

/// Where the runtime stands against one of the performance targets.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Target {
    pub(crate) target: &'static str,
    /// The measured figure, in words.
    pub(crate) measured: String,
    /// `None` when the suite that measures it did not run.
    pub(crate) met: Option<bool>,
}

impl Target {
    pub(crate) fn new(target: &'static str, measured: String, met: bool) -> Self {
        Self {
            target,
            measured,
            met: Some(met),
        }
    }

    /// A target one row decides: `measured` says what the row holds and `met` judges
    /// it; "suite not run" and no verdict when the row is missing.
    fn from_row(
        target: &'static str,
        row: Option<&Row>,
        measured: impl FnOnce(&Row) -> String,
        met: impl FnOnce(&Row) -> bool,
    ) -> Self {
        Self {
            target,
            measured: row.map_or_else(not_run, measured),
            met: row.map(met),
        }
    }

    /// A target that each of `expected` ratios must reach `least`, from the ratios
    /// measured (by row); not decided when `--only` left some of them out.
    pub(crate) fn from_ratios(
        target: &'static str,
        ratios: &[(String, f64)],
        expected: usize,
        least: f64,
    ) -> Self {
        let measured = ratios
            .iter()
            .map(|(id, r)| format!("{id}: {}", fmt_against(*r, least)))
            .collect::<Vec<_>>()
            .join(", ");
        Self {
            target,
            measured: if measured.is_empty() {
                String::from("not measured")
            } else {
                measured
            },
            met: (ratios.len() == expected).then(|| ratios.iter().all(|(_, r)| *r >= least)),
        }
    }
}

/// Everything one run of the program measured.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Report {
    pub(crate) rows: Vec<Row>,
    pub(crate) checks: Vec<Check>,
    /// Context a reader needs: sizes, counts, what a figure leaves out.
    pub(crate) notes: Vec<String>,
    pub(crate) targets: Vec<Target>,
}

impl Report {
    pub(crate) fn row(&self, id: &str) -> Option<&Row> {
        self.rows.iter().find(|row| row.id == id)
    }

    pub(crate) fn check(&mut self, suite: &'static str, what: impl Into<String>, ok: bool) {
        self.checks.push(Check {
            suite,
            what: what.into(),
            ok,
        });
    }

    /// Puts the targets that rows decide ahead of those suites added
    /// themselves.
    pub(crate) fn evaluate_targets(&mut self) {
        let of_raw =
            |bound| move |row: &Row| format!("{} of raw", fmt_against(row.ratio.median, bound));
        let mut targets = vec![
            // The first wave's target, then issue 13's beside it: lower for many
            // senders, and a latency at one sender, so that every run says where that
            // issue stands.
            Target::from_row(
                "supervisor request/reply >= 50% of raw ractor `call` throughput at 64 senders",
                self.row("supervisor.request_reply.64.throughput"),
                of_raw(0.5),
                |row| row.ratio.median >= 0.5,
            ),
            Target::from_row(
                "supervisor request/reply >= 25% of raw ractor `call` throughput at 64 senders (issue 13)",
                self.row("supervisor.request_reply.64.throughput"),
                of_raw(0.25),
                |row| row.ratio.median >= 0.25,
            ),
            Target::from_row(
                "supervisor request/reply p50 <= 8 µs at one sender (issue 13)",
                self.row("supervisor.request_reply.1.p50"),
                |row| {
                    format!(
                        "{:.2} µs (raw `call` {:.2} µs)",
                        row.runtime.median / 1e3,
                        row.floor.median / 1e3
                    )
                },
                |row| row.runtime.median <= 8_000.0,
            ),
            Target::from_row(
                "<= 2 KiB more resident memory per idle session than a raw ractor actor",
                self.row("sessions.idle.bytes"),
                |row| {
                    format!(
                        "{:.0} B more ({:.0} B vs {:.0} B)",
                        row.runtime.median - row.floor.median,
                        row.runtime.median,
                        row.floor.median
                    )
                },
                |row| row.runtime.median - row.floor.median <= 2048.0,
            ),
            Target::from_row(
                "resident memory per idle session at or below a raw ractor actor's, spawned at a server's pace (issue 13)",
                self.row("sessions.idle_paced.bytes"),
                |row| {
                    format!(
                        "{:.0} B vs {:.0} B ({} of raw)",
                        row.runtime.median,
                        row.floor.median,
                        fmt_ratio(row.ratio.median)
                    )
                },
                |row| row.runtime.median <= row.floor.median,
            ),
        ];
        targets.append(&mut self.targets);
        self.targets = targets;
    }

    /// The table, the checks, the notes and the targets, as printed on stdout.
    pub(crate) fn render(&self, header: &str) -> String {
        let mut table: Vec<[String; 7]> = vec![[
            "suite".into(),
            "case".into(),
            "unit".into(),
            "runtime".into(),
            "floor".into(),
            "floor is".into(),
            "runtime/floor".into(),
        ]];
        for row in &self.rows {
            let scale = Scale::for_row(row);
            let arrow = match row.better {
                Better::Higher => "↑",
                Better::Lower => "↓",
            };
            table.push([
                row.suite.to_owned(),
                row.case.clone(),
                format!("{} {arrow}", scale.label),
                scale.summary(&row.runtime),
                scale.summary(&row.floor),
                row.floor_is.clone(),
                format!(
                    "{} [{}–{}]",
                    fmt_ratio(row.ratio.median),
                    fmt_ratio(row.ratio.min),
                    fmt_ratio(row.ratio.max)
                ),
            ]);
        }
        let mut widths = [0; 7];
        for line in &table {
            for (width, cell) in widths.iter_mut().zip(line) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let _ = writeln!(out, "{header}");
        for line in &table {
            let mut text = String::new();
            for (i, (cell, width)) in line.iter().zip(widths).enumerate() {
                if i > 0 {
                    text.push_str("  ");
                }
                text.push_str(cell);
                if i + 1 < line.len() {
                    let pad = width - cell.chars().count();
                    text.extend(std::iter::repeat_n(' ', pad));
                }
            }
            let _ = writeln!(out, "{}", text.trim_end());
        }
        if !self.checks.is_empty() {
            let _ = writeln!(out, "\nchecks:");
            for check in &self.checks {
                let mark = if check.ok { "ok    " } else { "FAILED" };
                let _ = writeln!(out, "  {mark} {}: {}", check.suite, check.what);
            }
        }
        if !self.notes.is_empty() {
            let _ = writeln!(out, "\nnotes:");
            for note in &self.notes {
                let _ = writeln!(out, "  - {note}");
            }
        }
        if !self.targets.is_empty() {
            let _ = writeln!(out, "\ntargets:");
            for target in &self.targets {
                let verdict = match target.met {
                    Some(true) => "met    ",
                    Some(false) => "MISSED ",
                    None => "not run",
                };
                let _ = writeln!(out, "  {verdict} {}: {}", target.target, target.measured);
            }
        }
        out
    }

    /// Writes the report as JSON, with the machine and options it ran with.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be written.
    pub(crate) fn write_json(&self, path: &Path, context: &impl Serialize) -> Result<()> {
        #[derive(Serialize)]
        struct Document<'a, C> {
            context: &'a C,
            #[serde(flatten)]
            report: &'a Report,
        }
        let text = serde_json::to_string_pretty(&Document {
            context,
            report: self,
        })?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| Error::Io {
                what: format!("creating {}", dir.display()),
                source,
            })?;
        }
        std::fs::write(path, text).map_err(|source| Error::Io {
            what: format!("writing {}", path.display()),
            source,
        })
    }
}

fn not_run() -> String {
    String::from("suite not run")
}

/// A ratio to three significant figures.
pub(crate) fn fmt_ratio(ratio: f64) -> String {
    if ratio.is_nan() {
        return String::from("n/a");
    }
    sig3(ratio)
}

/// A ratio as [`fmt_ratio`] prints it, with as many more digits as it takes to fall on
/// the same side of a target's `bound` as the ratio itself: 0.9496 against 0.95 prints
/// `0.9496`, not a `0.950` beside "MISSED".
pub(crate) fn fmt_against(ratio: f64, bound: f64) -> String {
    let side = |value: f64| value.partial_cmp(&bound);
    let shown = fmt_ratio(ratio);
    if shown.parse::<f64>().ok().and_then(side) == side(ratio) {
        return shown;
    }
    (4..=9)
        .map(|decimals| format!("{ratio:.decimals$}"))
        .find(|text| text.parse::<f64>().ok().and_then(side) == side(ratio))
        .unwrap_or_else(|| ratio.to_string())
}

/// Three significant figures, without exponent, for values a table shows.
fn sig3(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 100.0 {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else if magnitude >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

/// The display unit of one row: every number of the row is shown in it, so the
/// runtime and floor columns read side by side.
struct Scale {
    label: &'static str,
    divisor: f64,
}

impl Scale {
    fn for_row(row: &Row) -> Self {
        let largest = row.runtime.median.abs().max(row.floor.median.abs());
        let steps: &[(&'static str, f64)] = match row.unit {
            Unit::PerSecond => &[("/s", 1.0), ("k/s", 1e3), ("M/s", 1e6)],
            Unit::Nanos => &[("ns", 1.0), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)],
            Unit::Seconds => &[("ms", 1e-3), ("s", 1.0)],
            Unit::Bytes => &[
                ("B", 1.0),
                ("KiB", 1024.0),
                ("MiB", 1024.0 * 1024.0),
                ("GiB", 1024.0 * 1024.0 * 1024.0),
            ],
        };
        let (label, divisor) = steps
            .iter()
            .rev()
            .find(|(_, divisor)| largest >= *divisor)
            .unwrap_or(&steps[0]);
        Self {
            label,
            divisor: *divisor,
        }
    }

    fn summary(&self, summary: &Summary) -> String {
        format!(
            "{} [{}–{}]",
            sig3(summary.median / self.divisor),
            sig3(summary.min / self.divisor),
            sig3(summary.max / self.divisor)
        )
    }
}

/// What tests read of a report.
#[cfg(test)]
impl Report {
    /// The one target whose text begins with `start`; panics if none or two do.
    pub(crate) fn target(&self, start: &str) -> &Target {
        let mut found = self.targets.iter().filter(|t| t.target.starts_with(start));
        let target = found
            .next()
            .unwrap_or_else(|| panic!("no target `{start}…`"));
        assert!(found.next().is_none(), "two targets `{start}…`");
        target
    }
}

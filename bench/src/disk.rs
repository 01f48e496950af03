//! `agentyard-bench disk`: what this machine's disk charges for the ways a store can ask
//! for durability, so the disk figures in `docs/benchmarks.md` can be reproduced from
//! the repository rather than from a throwaway loop. (The store suite's ceilings come
//! from its own one-thread probe, run before its rounds.)
//!
//! Every mode writes blocks of `--size` bytes into one file in `--dir` for `--secs`
//! seconds from each thread count given, each thread at offsets of its own, and times
//! each write together with whatever makes it durable:
//!
//! - `grow`: appends (each write lengthens the file), then `fdatasync`: a log that is not
//!   written ahead of itself pays for its new length on every flush.
//! - `overwrite`: writes over blocks written and flushed beforehand, then `fdatasync`: what
//!   the journal does (it writes zeros ahead of its frames) and what SQLite's reused
//!   write-ahead log does.
//! - `dsync`: the file opened with `O_DSYNC`, over blocks written beforehand: each write
//!   returns once it is durable, so threads can have several commits in flight.
//! - `direct-dsync`: `O_DIRECT | O_DSYNC`, each write rounded up to whole 4 KiB blocks from
//!   an aligned buffer (the kernel's page cache skipped); a file system that refuses
//!   `O_DIRECT` (tmpfs) gets the mode reported as unsupported, not an error.
//!
//! A flush from several threads on one file waits for every thread's pages, so
//! `overwrite` with more threads shows how much one flush can carry for another.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::ValueEnum;

use crate::error::{Error, Result};
use crate::stats::Latencies;

/// The block `O_DIRECT` needs buffers, sizes and offsets aligned to on the disks here.
const DIRECT_ALIGN: usize = 4096;

/// How a timed write is made durable (see the [module](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Mode {
    /// Append, then `fdatasync`.
    Grow,
    /// Overwrite blocks flushed beforehand, then `fdatasync`.
    Overwrite,
    /// Overwrite with the file opened `O_DSYNC`.
    Dsync,
    /// Overwrite with the file opened `O_DIRECT | O_DSYNC`, whole 4 KiB blocks.
    DirectDsync,
}

impl Mode {
    fn label(self) -> &'static str {
        match self {
            Self::Grow => "grow + fdatasync",
            Self::Overwrite => "overwrite + fdatasync",
            Self::Dsync => "O_DSYNC",
            // No `|`: the label goes into a Markdown table.
            Self::DirectDsync => "O_DIRECT + O_DSYNC",
        }
    }

    /// Bytes one write carries: `O_DIRECT` only takes whole aligned blocks.
    fn write_size(self, size: usize) -> usize {
        match self {
            Self::DirectDsync => size.div_ceil(DIRECT_ALIGN).max(1) * DIRECT_ALIGN,
            _ => size.max(1),
        }
    }

    fn flags(self) -> i32 {
        match self {
            Self::Grow | Self::Overwrite => 0,
            Self::Dsync => libc::O_DSYNC,
            Self::DirectDsync => libc::O_DIRECT | libc::O_DSYNC,
        }
    }
}

/// What `agentyard-bench disk` was asked to measure.
#[derive(Debug, Clone)]
pub(crate) struct Probe {
    /// The directory whose disk is measured; the probe's file is made and removed in it.
    pub(crate) dir: PathBuf,
    /// Bytes a write carries.
    pub(crate) size: usize,
    /// How long each mode runs at each thread count.
    pub(crate) run: Duration,
    /// The thread counts, each run in turn.
    pub(crate) threads: Vec<usize>,
    /// The modes, each run in turn.
    pub(crate) modes: Vec<Mode>,
}

/// One mode at one thread count.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// The mode measured.
    pub(crate) mode: Mode,
    /// How many threads wrote.
    pub(crate) threads: usize,
    /// Bytes each write carried.
    pub(crate) size: usize,
    /// What the writes came to, or that the file system refused the mode.
    pub(crate) written: Written,
}

/// What one mode at one thread count came to.
#[derive(Debug)]
pub(crate) enum Written {
    /// The writes were made.
    Measured {
        /// Durable writes a second, all threads together.
        per_sec: f64,
        /// Each durable write's time, all threads' merged.
        times: Latencies,
    },
    /// The file system refused the mode (`O_DIRECT` on tmpfs, say): reported, not an
    /// error, so that the other modes are still measured.
    Unsupported,
}

/// Blocks each thread rotates through in the overwriting modes: enough that the disk
/// does not see the same block rewritten at once, few enough to write them all first.
const BLOCKS_PER_THREAD: usize = 64;

/// Runs every mode at every thread count, in the order given.
///
/// # Errors
/// The probe's file cannot be made, written or flushed (other than a file system that
/// refuses `O_DIRECT`, which is reported in the outcome).
pub(crate) fn run(probe: &Probe) -> Result<Vec<Outcome>> {
    let path = probe
        .dir
        .join(format!("agentyard-disk-probe-{}", std::process::id()));
    let result = probe
        .modes
        .iter()
        .flat_map(|&mode| probe.threads.iter().map(move |&threads| (mode, threads)))
        .map(|(mode, threads)| measure(&path, mode, threads.max(1), probe.size, probe.run))
        .collect();
    // Best effort: the figures are what was asked for, a leftover file is not.
    let _ = std::fs::remove_file(&path);
    result
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io { what, source }
}

/// Creates the file at `path` afresh (so one measurement's flushed blocks are not
/// another's) with `span` zero bytes written and flushed, so that no timed flush over
/// them also writes the file's new length.
fn prepared(path: &Path, span: usize) -> Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(path)
        .map_err(io(format!("creating {}", path.display())))?;
    if span > 0 {
        file.write_all_at(&vec![0; span], 0)
            .and_then(|()| file.sync_all())
            .map_err(io(format!("preparing {}", path.display())))?;
    }
    Ok(file)
}

/// `samples` times of `fdatasync` alone, each after `size` bytes written over the next
/// of [`BLOCKS_PER_THREAD`] blocks of a file prepared at `path` (as SQLite reuses its
/// write-ahead log from its start): the store suite's one-thread probe, by count
/// rather than by duration, with the write left out of the time. The file is removed.
///
/// # Errors
/// The file cannot be made, written or flushed.
pub(crate) fn overwrite_flushes(path: &Path, size: usize, samples: usize) -> Result<Latencies> {
    let size = size.max(1);
    let span = BLOCKS_PER_THREAD * size;
    let file = prepared(path, span)?;
    let block = vec![0x5a; size];
    let mut times = Latencies::new();
    let timed: Result<()> = (0..samples).try_for_each(|n| {
        let offset = u64::try_from((n * size) % span).unwrap_or_default();
        file.write_all_at(&block, offset)
            .map_err(io(format!("writing {}", path.display())))?;
        let start = Instant::now();
        file.sync_data()
            .map_err(io(format!("flushing {}", path.display())))?;
        times.record(start.elapsed());
        Ok(())
    });
    // Best effort, as in `run`.
    let _ = std::fs::remove_file(path);
    timed?;
    times.sort();
    Ok(times)
}

fn measure(path: &Path, mode: Mode, threads: usize, size: usize, run: Duration) -> Result<Outcome> {
    let size = mode.write_size(size);
    let span = match mode {
        Mode::Grow => 0,
        _ => threads * BLOCKS_PER_THREAD * size,
    };
    drop(prepared(path, span)?);
    let handle = match OpenOptions::new()
        .write(true)
        .custom_flags(mode.flags())
        .open(path)
    {
        Ok(handle) => handle,
        Err(error) if mode == Mode::DirectDsync && error.raw_os_error() == Some(libc::EINVAL) => {
            return Ok(Outcome {
                mode,
                threads,
                size,
                written: Written::Unsupported,
            });
        }
        Err(error) => {
            return Err(io(format!("opening {} ({})", path.display(), mode.label()))(error));
        }
    };
    let end = AtomicU64::new(0);
    let started = Instant::now();
    let per_thread = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|thread| {
                let (handle, end) = (&handle, &end);
                scope.spawn(move || writer(handle, mode, thread, size, end, run))
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| {
                worker.join().unwrap_or_else(|_| {
                    Err(Error::Unexpected(String::from("a probe thread panicked")))
                })
            })
            .collect::<Result<Vec<_>>>()
    })?;
    let elapsed = started.elapsed().as_secs_f64();
    let mut times = Latencies::new();
    for thread in &per_thread {
        times.merge(thread);
    }
    times.sort();
    // Counts of a few seconds of writes: exact in an f64.
    #[allow(clippy::cast_precision_loss)]
    let per_sec = times.count() as f64 / elapsed.max(1e-9);
    Ok(Outcome {
        mode,
        threads,
        size,
        written: Written::Measured { per_sec, times },
    })
}

/// One thread's writes for `run`: its own blocks in the overwriting modes, the next
/// free place at the end in `grow`.
fn writer(
    file: &File,
    mode: Mode,
    thread: usize,
    size: usize,
    end: &AtomicU64,
    run: Duration,
) -> Result<Latencies> {
    // O_DIRECT wants the buffer itself aligned: a slice of a larger one that starts on
    // the boundary.
    let backing = vec![0x5a_u8; size + DIRECT_ALIGN];
    let skip = backing
        .as_ptr()
        .align_offset(DIRECT_ALIGN)
        .min(DIRECT_ALIGN);
    let block = &backing[skip..skip + size];
    let size64 = u64::try_from(size).unwrap_or(u64::MAX);
    let first = u64::try_from(thread * BLOCKS_PER_THREAD).unwrap_or_default();
    let mut times = Latencies::new();
    let deadline = Instant::now() + run;
    let mut n = 0_u64;
    while Instant::now() < deadline {
        let offset = match mode {
            Mode::Grow => end.fetch_add(size64, Ordering::Relaxed),
            _ => (first + n % BLOCKS_PER_THREAD as u64) * size64,
        };
        let start = Instant::now();
        file.write_all_at(block, offset).map_err(io(format!(
            "writing {} bytes ({})",
            size,
            mode.label()
        )))?;
        if matches!(mode, Mode::Grow | Mode::Overwrite) {
            file.sync_data()
                .map_err(io(format!("flushing ({})", mode.label())))?;
        }
        times.record(start.elapsed());
        n += 1;
    }
    Ok(times)
}

/// The outcomes as a table for stdout.
pub(crate) fn table(probe: &Probe, outcomes: &[Outcome]) -> String {
    let mut out = format!(
        "disk probe in {}: {} bytes a write, {:.1} s a run\n\n\
         | mode | threads | bytes | durable writes/s | p50 µs | p90 µs | p99 µs |\n\
         |---|---:|---:|---:|---:|---:|---:|\n",
        probe.dir.display(),
        probe.size,
        probe.run.as_secs_f64(),
    );
    for outcome in outcomes {
        let line = match &outcome.written {
            Written::Measured { per_sec, times } => {
                let us = |q: f64| times.quantile_ns(q) / 1e3;
                format!(
                    "| {} | {} | {} | {per_sec:.0} | {:.1} | {:.1} | {:.1} |\n",
                    outcome.mode.label(),
                    outcome.threads,
                    outcome.size,
                    us(0.5),
                    us(0.9),
                    us(0.99),
                )
            }
            Written::Unsupported => format!(
                "| {} | {} | {} | not supported by this file system | | | |\n",
                outcome.mode.label(),
                outcome.threads,
                outcome.size,
            ),
        };
        out.push_str(&line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory of the test's own: the tests run in parallel in one process.
    fn scratch(test: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("agentyard-disk-test-{}-{test}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        dir
    }

    #[test]
    fn every_mode_writes_and_counts_from_several_threads() {
        let dir = scratch("modes");
        let probe = Probe {
            dir: dir.clone(),
            size: 1000,
            run: Duration::from_millis(30),
            threads: vec![1, 3],
            modes: vec![Mode::Grow, Mode::Overwrite, Mode::Dsync, Mode::DirectDsync],
        };
        let outcomes = run(&probe).expect("the probe runs");
        assert_eq!(outcomes.len(), 8);
        for outcome in &outcomes {
            if outcome.mode == Mode::DirectDsync {
                // Whole blocks, whether or not this file system takes O_DIRECT.
                assert_eq!(outcome.size, DIRECT_ALIGN);
            } else {
                assert_eq!(outcome.size, 1000);
            }
            if let Written::Measured { per_sec, times } = &outcome.written {
                assert!(times.count() > 0, "{outcome:?}");
                assert!(*per_sec > 0.0);
            } else {
                // Only O_DIRECT may be refused (tmpfs); the page cache's modes never.
                assert_eq!(outcome.mode, Mode::DirectDsync, "{outcome:?}");
            }
        }
        assert!(
            !std::fs::read_dir(&dir)
                .expect("the scratch dir")
                .any(|_| true),
            "the probe's file is removed"
        );
        let printed = table(&probe, &outcomes);
        assert_eq!(
            printed
                .lines()
                .filter(|line| line.starts_with("| O_DSYNC | 3 |"))
                .count(),
            1
        );
        std::fs::remove_dir(&dir).expect("an empty scratch dir");
    }

    #[test]
    fn the_store_suites_flushes_are_counted_and_their_file_removed() {
        let dir = scratch("flushes");
        let times = overwrite_flushes(&dir.join("probe"), 1000, 7).expect("flushes");
        assert_eq!(times.count(), 7);
        assert!(times.quantile_ns(1.0) > 0.0);
        assert_eq!(std::fs::read_dir(&dir).expect("the scratch dir").count(), 0);
        std::fs::remove_dir(&dir).expect("an empty scratch dir");
    }

    #[test]
    fn a_grown_file_holds_every_timed_write() {
        let dir = scratch("grow");
        let path = dir.join("file");
        let outcome = measure(&path, Mode::Grow, 2, 512, Duration::from_millis(20)).expect("grows");
        let length = std::fs::metadata(&path).expect("the file").len();
        let Written::Measured { times, .. } = &outcome.written else {
            panic!("growing a file is never refused: {outcome:?}");
        };
        assert_eq!(length, times.count() * 512);
        std::fs::remove_dir_all(&dir).expect("removed");
    }
}

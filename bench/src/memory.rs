//! Resident memory of this process or a child, from `/proc/<pid>/status` (Linux).

use crate::error::{Error, Result};

/// The resident set size now (`VmRSS`), in bytes.
///
/// # Errors
/// [`Error::Io`] off Linux or if `/proc` is not mounted; [`Error::Unexpected`] if the
/// field is missing.
pub(crate) fn rss_bytes() -> Result<u64> {
    status_field("VmRSS")
}

/// The largest resident set size this process has had (`VmHWM`), in bytes.
///
/// # Errors
/// As [`rss_bytes`].
pub(crate) fn peak_rss_bytes() -> Result<u64> {
    status_field("VmHWM")
}

/// The resident set size of process `pid` now (`VmRSS`), in bytes.
///
/// # Errors
/// As [`rss_bytes`], and [`Error::Io`] if the process has gone.
pub(crate) fn process_rss_bytes(pid: u32) -> Result<u64> {
    read_field(&format!("/proc/{pid}/status"), "VmRSS")
}

/// The largest resident set size process `pid` has had (`VmHWM`), in bytes.
///
/// # Errors
/// As [`process_rss_bytes`].
pub(crate) fn process_peak_rss_bytes(pid: u32) -> Result<u64> {
    read_field(&format!("/proc/{pid}/status"), "VmHWM")
}

fn status_field(name: &str) -> Result<u64> {
    read_field("/proc/self/status", name)
}

fn read_field(path: &str, name: &str) -> Result<u64> {
    let status = std::fs::read_to_string(path).map_err(|source| Error::Io {
        what: format!("reading {path} (resident memory is read from Linux's /proc)"),
        source,
    })?;
    parse_field(&status, name)
        .ok_or_else(|| Error::Unexpected(format!("{path} has no `{name}` in kB")))
}

/// Finds `name:   1234 kB` and returns it in bytes.
fn parse_field(status: &str, name: &str) -> Option<u64> {
    status.lines().find_map(|line| {
        let rest = line.strip_prefix(name)?.strip_prefix(':')?;
        let kib = rest.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()?;
        Some(kib * 1024)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_field_in_kibibytes_as_bytes() {
        let status = "Name:\tbench\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\n";
        assert_eq!(parse_field(status, "VmRSS"), Some(1024 * 1024));
        assert_eq!(parse_field(status, "VmHWM"), Some(2048 * 1024));
    }

    #[test]
    fn a_missing_field_is_none() {
        assert_eq!(parse_field("VmRSSX: 1 kB\n", "VmRSS"), None);
        assert_eq!(parse_field("Name: x\n", "VmRSS"), None);
    }

    #[test]
    fn this_process_has_resident_memory() {
        let rss = rss_bytes().expect("the benchmark runs on Linux");
        assert!(rss > 0);
        assert!(peak_rss_bytes().expect("VmHWM") >= rss);
        let pid = std::process::id();
        assert!(process_rss_bytes(pid).expect("VmRSS by pid") > 0);
        assert!(process_peak_rss_bytes(pid).expect("VmHWM by pid") > 0);
    }
}

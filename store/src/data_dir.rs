//! What a data directory holds, for the two stores that keep one (the journal and the
//! embedded SQLite store): its lock, and which of the two is in it.

use std::path::Path;

/// The lock file of a data directory (the journal's or the embedded store's).
pub const LOCK_FILE: &str = "agentyard.lock";

/// Takes the directory's lock, or says who holds it.
pub(crate) fn lock(dir: &Path) -> Result<std::fs::File, String> {
    use std::io::{Read, Seek, Write};
    let path = dir.join(LOCK_FILE);
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| format!("cannot open the lock file {}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            return Err(format!(
                "the data directory {} is in use by another agentyard process{} \
                 (stop it, or give this one another --data-dir)",
                dir.display(),
                match holder.trim() {
                    "" => String::new(),
                    pid => format!(" (pid {pid})"),
                }
            ));
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(format!("cannot lock {}: {e}", path.display()));
        }
    }
    // Who holds it, for the message above; the lock itself is what counts.
    let _ = file.set_len(0);
    let _ = file.rewind();
    let _ = write!(file, "{}", std::process::id());
    let _ = file.flush();
    Ok(file)
}

/// Whether `dir` holds an embedded (SQLite) store and no journal: a directory an
/// earlier version filled, whose tasks a server started on it without a `kind` keeps
/// reading.
#[must_use]
pub fn holds_sqlite_only(dir: &Path) -> bool {
    if !dir.join(crate::sql::EMBEDDED_FILE).is_file() {
        return false;
    }
    !std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(crate::journal::is_journal_file)
        })
    })
}

//! Atomic file replacement: write a temporary file beside the target, flush and fsync it,
//! rename it over the target, fsync the directory.
//!
//! A reader sees either the old file or the complete new one, never a partial file. On any
//! error (a refused dtype halfway through, a full disk, a read-only directory), the temporary
//! file is removed and the target is left as it was. A crash (power loss, SIGKILL) between
//! creating and renaming can leave a hidden `.<name>.<random>.tmp` file in the directory, but
//! never a partial target.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::error::{IoError, Result};

/// What the writing closure writes to.
pub(crate) type Sink<'a> = BufWriter<&'a mut File>;

/// Replaces `path` atomically with what `write` produces.
pub(crate) fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut Sink<'_>) -> Result<()>,
) -> Result<()> {
    let name = path.file_name().ok_or_else(|| {
        IoError::io(
            "cannot write",
            std::io::Error::other("the path names no file"),
        )
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    let mut tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| {
            IoError::io(
                format!("cannot create a temporary file in {}", dir.display()),
                e,
            )
        })?;
    // Keep the old file's permissions; a new file gets rw-r--r-- (tempfile makes it 0600).
    let perms = match std::fs::metadata(path) {
        Ok(m) => Some(m.permissions()),
        Err(_) => default_permissions(),
    };
    if let Some(p) = perms {
        tmp.as_file()
            .set_permissions(p)
            .map_err(|e| IoError::io("cannot set permissions", e))?;
    }
    {
        let mut sink = BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
        write(&mut sink)?;
        sink.flush().map_err(|e| IoError::io("cannot write", e))?;
    }
    tmp.as_file()
        .sync_all()
        .map_err(|e| IoError::io("cannot sync", e))?;
    tmp.persist(path)
        .map_err(|e| IoError::io(format!("cannot rename into {}", path.display()), e.error))?;
    // Make the rename durable. Not every platform or filesystem can sync a directory; the
    // data itself is already synced, so a failure here is not reported.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(unix)]
fn default_permissions() -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn default_permissions() -> Option<std::fs::Permissions> {
    None
}

//! Atomic file replacement: write a temporary file beside the target, flush and fsync it,
//! rename it over the target, fsync the directory.
//!
//! A reader sees either the old file or the complete new one, never a partial file. Writers
//! that follow TensorFlow's own practice (checkpoints: `BundleWriter` closes and renames
//! without syncing) may skip the two fsyncs ([`PrepareOptions::sync`]): the rename stays
//! atomic for every reader, and only durability across a power loss is left to the
//! filesystem (ext4's default `auto_da_alloc` flushes a file renamed over another). On any
//! error (a refused dtype halfway through, a full disk, a read-only directory), the temporary
//! file is removed and the target is left as it was. A crash (power loss, SIGKILL) between
//! creating and renaming can leave a hidden `.<name>.<random>.tmp` file in the directory, but
//! never a partial target. A process that catches `SIGINT`, `SIGTERM`, `SIGHUP` or `SIGXFSZ`
//! calls [`remove_temporary_files`] before it exits, which removes the temporary files of
//! writes in progress.
//!
//! Where the target is a symbolic link, the file it points to is replaced (as `cp` does), the
//! link stays. A target that is a FIFO or a character device is written as a stream (no
//! temporary file, nothing replaced); any other non-regular target is refused.
//! New files get `0666` minus the process's umask (the kernel applies it, as for any tool); a
//! replaced file keeps its mode.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::{IoError, Result};

/// The temporary files of writes in progress.
static IN_PROGRESS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn in_progress() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    IN_PROGRESS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes the temporary files of the atomic writes in progress in this process and returns
/// how many it removed; a write in progress then fails. For a program that handles `SIGINT`,
/// `SIGTERM`, `SIGHUP` or `SIGXFSZ` (on a thread of its own, as `signal-hook`'s iterator
/// does - not from inside an asynchronous signal handler) before it exits.
pub fn remove_temporary_files() -> usize {
    let mut v = in_progress();
    let n = v.iter().filter(|p| std::fs::remove_file(p).is_ok()).count();
    v.clear();
    n
}

/// Forgets a registered temporary file when dropped (the file itself is removed by tempfile's
/// own guard, or renamed).
struct Registered(PathBuf);

impl Drop for Registered {
    fn drop(&mut self) {
        in_progress().retain(|p| p != &self.0);
    }
}

/// Where a write goes once symbolic links are followed.
#[derive(Debug)]
pub(crate) enum Target {
    /// A regular file or a name that does not exist yet: replaced atomically.
    Replace(PathBuf),
    /// A FIFO or character device: written as a stream.
    Stream(PathBuf),
}

/// Follows `path`'s symbolic links (at most 40, as the kernel) to the name a write must
/// replace, and tells whether that is a file to replace or a stream to write.
pub(crate) fn resolve_target(path: &Path) -> Result<Target> {
    use std::os::unix::fs::FileTypeExt;
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p).map_err(|e| IoError::io("cannot read link", e))?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            Ok(m) => {
                let ft = m.file_type();
                if ft.is_file() {
                    return Ok(Target::Replace(p));
                }
                if ft.is_fifo() || ft.is_char_device() {
                    return Ok(Target::Stream(p));
                }
                let what = if ft.is_dir() {
                    "a directory"
                } else if ft.is_block_device() {
                    "a block device"
                } else {
                    "a socket"
                };
                return Err(IoError::io(
                    "cannot write",
                    std::io::Error::other(format!(
                        "{} is {what}, not a file (it is never replaced)",
                        p.display()
                    )),
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Target::Replace(p)),
            Err(e) => return Err(IoError::io("cannot stat", e)),
        }
    }
    Err(IoError::io(
        "cannot write",
        std::io::Error::other("too many levels of symbolic links"),
    ))
}

/// Writes `bytes` to a FIFO or character device (no temporary file, nothing replaced).
pub(crate) fn write_stream(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| IoError::io("cannot open", e))?;
    f.write_all(bytes)
        .and_then(|_| f.flush())
        .map_err(|e| IoError::io("cannot write", e))
}

/// What the writing closure writes to.
pub(crate) type Sink<'a> = BufWriter<&'a mut File>;

/// Replaces `path` atomically with what `write` produces.
pub(crate) fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut Sink<'_>) -> Result<()>,
) -> Result<()> {
    prepare(path, write)?.commit()
}

/// A temporary file written, flushed and synced beside its target, waiting to be renamed over
/// it by [`Prepared::commit`]; dropped without committing, it is removed.
pub(crate) struct Prepared {
    tmp: tempfile::NamedTempFile,
    registered: Registered,
    path: PathBuf,
    dir: PathBuf,
    sync: bool,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("path", &self.path)
            .finish()
    }
}

/// How [`prepare_with`] writes its temporary file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PrepareOptions {
    /// fsync the file before the rename and the directory after it (durable across a power
    /// loss); without it the replacement is still atomic for readers.
    pub sync: bool,
    /// The capacity of the [`Sink`]'s buffer: writes at least this large go to the file
    /// directly, without a copy through the buffer.
    pub buffer: usize,
}

impl PrepareOptions {
    /// Synced, with a 1 MiB buffer: what every tensor file writer uses.
    pub(crate) const DURABLE: Self = Self {
        sync: true,
        buffer: 1 << 20,
    };
}

/// Writes what `write` produces to a temporary file beside `path` (flushed and synced), to be
/// renamed over `path` by [`Prepared::commit`]. Several files can be prepared first and
/// committed together, so that a failure while writing any of them replaces none.
pub(crate) fn prepare(
    path: &Path,
    write: impl FnOnce(&mut Sink<'_>) -> Result<()>,
) -> Result<Prepared> {
    prepare_with(path, PrepareOptions::DURABLE, write)
}

/// [`prepare`] with a choice of syncing and buffer size.
pub(crate) fn prepare_with(
    path: &Path,
    options: PrepareOptions,
    write: impl FnOnce(&mut Sink<'_>) -> Result<()>,
) -> Result<Prepared> {
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
    // Created 0666: the kernel takes the umask off, as for any new file.
    let mut tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .permissions(new_file_permissions())
        .tempfile_in(dir)
        .map_err(|e| {
            IoError::io(
                format!("cannot create a temporary file in {}", dir.display()),
                e,
            )
        })?;
    in_progress().push(tmp.path().to_path_buf());
    let registered = Registered(tmp.path().to_path_buf());
    // Keep the old file's permissions.
    if let Ok(m) = std::fs::metadata(path) {
        tmp.as_file()
            .set_permissions(m.permissions())
            .map_err(|e| IoError::io("cannot set permissions", e))?;
    }
    {
        let mut sink = BufWriter::with_capacity(options.buffer.max(1), tmp.as_file_mut());
        write(&mut sink)?;
        sink.flush().map_err(|e| IoError::io("cannot write", e))?;
    }
    if options.sync {
        tmp.as_file()
            .sync_all()
            .map_err(|e| IoError::io("cannot sync", e))?;
    }
    Ok(Prepared {
        tmp,
        registered,
        path: path.to_path_buf(),
        dir: dir.to_path_buf(),
        sync: options.sync,
    })
}

impl Prepared {
    /// Renames the temporary file over its target and syncs the directory.
    pub(crate) fn commit(self) -> Result<()> {
        let Prepared {
            tmp,
            registered,
            path,
            dir,
            sync,
        } = self;
        {
            // Renamed under the lock, so a signal-handling thread removes the temporary file
            // either before the rename (which then fails) or not at all.
            let mut v = in_progress();
            if !v.contains(&registered.0) {
                return Err(IoError::io(
                    "cannot write",
                    std::io::Error::other("interrupted by a signal"),
                ));
            }
            tmp.persist(&path).map_err(|e| {
                IoError::io(format!("cannot rename into {}", path.display()), e.error)
            })?;
            v.retain(|p| p != &registered.0);
        }
        // Make the rename durable. Not every platform or filesystem can sync a directory; the
        // data itself is already synced, so a failure here is not reported.
        if !sync {
            return Ok(());
        }
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

fn new_file_permissions() -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt;
    std::fs::Permissions::from_mode(0o666)
}

//! The atomic output layer every writer goes through: write a temporary file beside the
//! target, flush and fsync it, rename it over the target, fsync the directory.
//!
//! A reader sees either the old file or the complete new one, never a partial file. Writers
//! that follow TensorFlow's own practice (checkpoints: `BundleWriter` closes and renames
//! without syncing) may skip the two fsyncs ([`OutputOptions::sync`]): the rename stays
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
//! temporary file, nothing replaced: `-o /dev/null` keeps the device); any other non-regular
//! target is refused. New files get `0666` minus the process's umask (the kernel applies it,
//! as for any tool); a replaced file keeps its mode.
//!
//! [`OutputFile`] is the layer's one entry: writers of every format (tensor files, TFRecord,
//! checkpoints, Parquet and Arrow through [`crate::write_file_streamed`]) go through it.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use crate::error::{IoError, Result};

/// The temporary files of writes in progress, and whether [`remove_temporary_files`] has run
/// (after which no new one is created: the process is about to end).
struct InProgress {
    paths: Vec<PathBuf>,
    closed: bool,
}

static IN_PROGRESS: Mutex<InProgress> = Mutex::new(InProgress {
    paths: Vec::new(),
    closed: false,
});

/// Held (shared) by a write that replaces several files in steps ([`commit_guard`]);
/// [`remove_temporary_files`] takes it exclusively, so a signal waits for those steps to end
/// rather than stopping a multi-file replacement between two renames.
static COMMITS: RwLock<()> = RwLock::new(());

fn in_progress() -> std::sync::MutexGuard<'static, InProgress> {
    IN_PROGRESS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes the temporary files of the atomic writes in progress in this process and returns
/// how many it removed; a write in progress then fails, and so does any write started later
/// (the process is expected to exit). A write that replaces several files in steps (a
/// checkpoint's data and index) finishes its renames first. For a program that handles
/// `SIGINT`, `SIGTERM`, `SIGHUP` or `SIGXFSZ` (on a thread of its own, as `signal-hook`'s
/// iterator does - not from inside an asynchronous signal handler) before it exits.
pub fn remove_temporary_files() -> usize {
    let _steps = COMMITS.write().unwrap_or_else(|e| e.into_inner());
    let mut v = in_progress();
    v.closed = true;
    let n = v
        .paths
        .iter()
        .filter(|p| std::fs::remove_file(p).is_ok())
        .count();
    v.paths.clear();
    n
}

/// Keeps [`remove_temporary_files`] (a signal) from running until it is dropped: for a write
/// that replaces several files in steps, each of which leaves a readable whole.
pub(crate) fn commit_guard() -> std::sync::RwLockReadGuard<'static, ()> {
    COMMITS.read().unwrap_or_else(|e| e.into_inner())
}

fn interrupted() -> IoError {
    IoError::io(
        "cannot write",
        std::io::Error::other("interrupted by a signal"),
    )
}

/// Where a write goes once symbolic links are followed.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// A regular file or a name that does not exist yet: replaced atomically.
    Replace(PathBuf),
    /// A FIFO or character device: written as a stream.
    Stream(PathBuf),
}

impl Target {
    /// The name written (links followed).
    pub(crate) fn path(&self) -> &Path {
        match self {
            Target::Replace(p) | Target::Stream(p) => p,
        }
    }
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
    let mut f = open_stream(path)?;
    f.write_all(bytes)
        .and_then(|_| f.flush())
        .map_err(|e| IoError::io("cannot write", e))
}

fn open_stream(path: &Path) -> Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| IoError::io("cannot open", e))
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

/// Options of [`OutputFile::create_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputOptions {
    /// fsync the file before the rename and the directory after it (durable across a power
    /// loss); without it the replacement is still atomic for readers. On by default.
    pub sync: bool,
}

impl Default for OutputOptions {
    fn default() -> Self {
        Self { sync: true }
    }
}

/// A file being written through the atomic output layer, as [`crate::write_file_with`] writes
/// tensor files: bytes written to it go to a hidden temporary
/// file beside the target, which [`OutputFile::commit`] renames over the target; dropped
/// without a commit (an error halfway), the temporary file is removed and the target is left
/// as it was. A FIFO or character device target (after symbolic links are followed) is
/// written as a stream instead: the bytes go to it as they are written, and nothing is
/// replaced. Unbuffered: wrap it in a `BufWriter` for small writes.
///
/// ```
/// use std::io::Write;
/// use tensorcast_io::OutputFile;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("out.bin");
/// let mut out = OutputFile::create(&path)?;
/// out.write_all(b"hello")?;
/// assert!(!path.exists(), "nothing is visible before the commit");
/// out.commit()?;
/// assert_eq!(std::fs::read(&path)?, b"hello");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct OutputFile {
    inner: Output,
}

#[derive(Debug)]
enum Output {
    Replace { temp: Temporary, target: PathBuf },
    Stream { file: File, target: PathBuf },
}

impl OutputFile {
    /// Starts writing `path` with the default options (synced).
    ///
    /// # Errors
    /// [`crate::ErrorKind::Io`] when the target is a directory, block device or socket, when
    /// the temporary file cannot be created in the target's directory (or a FIFO or device
    /// cannot be opened), or after [`remove_temporary_files`] ran.
    pub fn create(path: &Path) -> Result<Self> {
        Self::create_with(path, &OutputOptions::default())
    }

    /// Starts writing `path` with `options`.
    ///
    /// # Errors
    /// As [`OutputFile::create`].
    pub fn create_with(path: &Path, options: &OutputOptions) -> Result<Self> {
        Self::for_target(resolve_target(path)?, options.sync)
    }

    /// Starts writing a resolved target.
    pub(crate) fn for_target(target: Target, sync: bool) -> Result<Self> {
        match target {
            Target::Replace(p) => Self::replacing(&p, sync),
            Target::Stream(p) => Ok(Self {
                inner: Output::Stream {
                    file: open_stream(&p)?,
                    target: p,
                },
            }),
        }
    }

    /// A temporary file beside `target` (a regular file or a new name, links already
    /// followed), to be renamed over it.
    pub(crate) fn replacing(target: &Path, sync: bool) -> Result<Self> {
        Ok(Self {
            inner: Output::Replace {
                temp: Temporary::new(target, target, sync)?,
                target: target.to_path_buf(),
            },
        })
    }

    /// A temporary file beside `beside` with the mode `like` has (if it exists), to be
    /// renamed to a name in `beside`'s directory ([`Prepared::commit_as`]).
    pub(crate) fn staged(beside: &Path, like: &Path, sync: bool) -> Result<Self> {
        Ok(Self {
            inner: Output::Replace {
                temp: Temporary::new(beside, like, sync)?,
                target: beside.to_path_buf(),
            },
        })
    }

    /// True when the target is a FIFO or character device, written as a stream.
    pub fn is_stream(&self) -> bool {
        matches!(self.inner, Output::Stream { .. })
    }

    /// The file that a commit replaces (or the stream written), symbolic links followed.
    pub fn target(&self) -> &Path {
        match &self.inner {
            Output::Replace { target, .. } | Output::Stream { target, .. } => target,
        }
    }

    /// The file the bytes go to (the temporary file, or the stream).
    pub(crate) fn file_mut(&mut self) -> &mut File {
        match &mut self.inner {
            Output::Replace { temp, .. } => temp.tmp.as_file_mut(),
            Output::Stream { file, .. } => file,
        }
    }

    /// Syncs the temporary file (if asked) and renames it over the target, then syncs the
    /// directory; for a stream, flushes it.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Io`] when syncing or renaming fails (the target is then left as it
    /// was and the temporary file removed), or when [`remove_temporary_files`] removed the
    /// temporary file meanwhile (a signal).
    pub fn commit(self) -> Result<()> {
        match self.finish()? {
            Finished::Prepared(p) => p.commit(),
            Finished::Stream => Ok(()),
        }
    }

    /// Flushes and (if asked) syncs the file, leaving the rename for later.
    pub(crate) fn finish(self) -> Result<Finished> {
        match self.inner {
            Output::Replace { temp, target } => Ok(Finished::Prepared(temp.finish(target)?)),
            Output::Stream { mut file, .. } => {
                file.flush().map_err(|e| IoError::io("cannot write", e))?;
                Ok(Finished::Stream)
            }
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file_mut().write(buf)
    }

    fn write_vectored(&mut self, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
        self.file_mut().write_vectored(bufs)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file_mut().flush()
    }
}

/// An [`OutputFile`] whose bytes are all written: a temporary file to rename, or a stream
/// already flushed.
#[derive(Debug)]
pub(crate) enum Finished {
    /// A temporary file waiting for its rename.
    Prepared(Prepared),
    /// A stream: nothing left to do.
    Stream,
}

/// A temporary file, registered for [`remove_temporary_files`] until it is renamed or
/// dropped (then removed).
struct Temporary {
    tmp: tempfile::NamedTempFile,
    registered: Registered,
    dir: PathBuf,
    sync: bool,
}

impl std::fmt::Debug for Temporary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Temporary")
            .field("path", &self.tmp.path())
            .finish()
    }
}

/// Forgets a registered temporary file when dropped (the file itself is removed by tempfile's
/// own guard, or renamed).
struct Registered(PathBuf);

impl Drop for Registered {
    fn drop(&mut self) {
        in_progress().paths.retain(|p| p != &self.0);
    }
}

impl Temporary {
    /// A new temporary file `.<name>.<random>.tmp` in `beside`'s directory, `0666` minus the
    /// umask, or `like`'s mode where `like` exists.
    fn new(beside: &Path, like: &Path, sync: bool) -> Result<Self> {
        let name = beside.file_name().ok_or_else(|| {
            IoError::io(
                "cannot write",
                std::io::Error::other("the path names no file"),
            )
        })?;
        let dir = match beside.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let (tmp, registered) = {
            // Created and registered under the lock, so that a signal-handling thread either
            // sees it or has already closed the registry.
            let mut v = in_progress();
            if v.closed {
                return Err(interrupted());
            }
            let tmp = tempfile::Builder::new()
                .prefix(&hidden_prefix(name))
                .suffix(".tmp")
                // Created 0666: the kernel takes the umask off, as for any new file.
                .permissions(new_file_permissions())
                .tempfile_in(dir)
                .map_err(|e| {
                    IoError::io(
                        format!("cannot create a temporary file in {}", dir.display()),
                        e,
                    )
                })?;
            v.paths.push(tmp.path().to_path_buf());
            let registered = Registered(tmp.path().to_path_buf());
            (tmp, registered)
        };
        // Keep the old file's permissions.
        if let Ok(m) = std::fs::metadata(like) {
            tmp.as_file()
                .set_permissions(m.permissions())
                .map_err(|e| IoError::io("cannot set permissions", e))?;
        }
        Ok(Self {
            tmp,
            registered,
            dir: dir.to_path_buf(),
            sync,
        })
    }

    /// Syncs the file (if asked): it is ready to be renamed to `target`.
    fn finish(self, target: PathBuf) -> Result<Prepared> {
        if self.sync {
            self.tmp
                .as_file()
                .sync_all()
                .map_err(|e| IoError::io("cannot sync", e))?;
        }
        Ok(Prepared {
            temp: self,
            path: target,
        })
    }
}

fn hidden_prefix(name: &OsStr) -> std::ffi::OsString {
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(name);
    prefix.push(".");
    prefix
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
    let mut temp = Temporary::new(path, path, options.sync)?;
    write_through(temp.tmp.as_file_mut(), options.buffer, write)?;
    temp.finish(path.to_path_buf())
}

/// Runs `write` on a buffer of `buffer` bytes over `file` and flushes it.
pub(crate) fn write_through(
    file: &mut File,
    buffer: usize,
    write: impl FnOnce(&mut Sink<'_>) -> Result<()>,
) -> Result<()> {
    let mut sink = BufWriter::with_capacity(buffer.max(1), file);
    write(&mut sink)?;
    sink.flush().map_err(|e| IoError::io("cannot write", e))
}

/// A temporary file written, flushed and synced beside its target, waiting to be renamed over
/// it by [`Prepared::commit`]; dropped without committing, it is removed.
pub(crate) struct Prepared {
    temp: Temporary,
    path: PathBuf,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("path", &self.path)
            .finish()
    }
}

impl Prepared {
    /// Renames the temporary file over its target and syncs the directory.
    pub(crate) fn commit(self) -> Result<()> {
        let path = self.path.clone();
        self.commit_as(&path)
    }

    /// Renames the temporary file to `path` (in the same directory) and syncs the directory.
    pub(crate) fn commit_as(self, path: &Path) -> Result<()> {
        let Temporary {
            tmp,
            registered,
            dir,
            sync,
        } = self.temp;
        {
            // Renamed under the lock, so a signal-handling thread removes the temporary file
            // either before the rename (which then fails) or not at all.
            let mut v = in_progress();
            if !v.paths.contains(&registered.0) {
                return Err(interrupted());
            }
            tmp.persist(path).map_err(|e| {
                IoError::io(format!("cannot rename into {}", path.display()), e.error)
            })?;
            v.paths.retain(|p| p != &registered.0);
        }
        if sync {
            sync_dir(&dir);
        }
        Ok(())
    }
}

/// Makes a rename in `dir` durable. Not every platform or filesystem can sync a directory;
/// the data itself is already synced, so a failure here is not reported.
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Replaces `target` (a regular file or a new name, links followed) atomically with a file
/// holding the bytes of the regular file `from`, which stays: a hard link of `from` renamed
/// over `target` where the filesystem allows it (no copy), else a copy written through a
/// temporary file. The new file has `target`'s old mode (a link shares `from`'s, which a
/// caller creates with that mode).
pub(crate) fn replace_with_copy_of(from: &Path, target: &Path, sync: bool) -> Result<()> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = target.file_name().ok_or_else(|| {
        IoError::io(
            "cannot write",
            std::io::Error::other("the path names no file"),
        )
    })?;
    let linked = tempfile::Builder::new()
        .prefix(&hidden_prefix(name))
        .suffix(".tmp")
        .make_in(dir, |p| std::fs::hard_link(from, p));
    if let Ok(link) = linked {
        link.persist(target).map_err(|e| {
            IoError::io(format!("cannot rename into {}", target.display()), e.error)
        })?;
        if sync {
            sync_dir(dir);
        }
        return Ok(());
    }
    // No hard links here (another filesystem, or one without them): copy.
    let mut src = File::open(from).map_err(|e| IoError::io("cannot open", e))?;
    let mut out = OutputFile::replacing(target, sync)?;
    std::io::copy(&mut src, out.file_mut()).map_err(|e| IoError::io("cannot write", e))?;
    out.commit()
}

fn new_file_permissions() -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt;
    std::fs::Permissions::from_mode(0o666)
}

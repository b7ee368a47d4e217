//! Where the CLI's tensors come from and go to: files read safely (no memory map unless asked
//! for), `-` for standard input and output, FIFOs and pipes as bounded streams, and the memory
//! limits set by the global options.

use std::io::Write;
use std::path::Path;
use std::sync::OnceLock;

use anyhow::{anyhow, Context, Result};
use tensorcast::io::{
    FileContents, Format, MemoryBudget, NamedTensor, ReadMode, ReadOptions, WriteOptions,
};

static OPTIONS: OnceLock<ReadOptions> = OnceLock::new();

/// Sets the read options of this run (from the global command-line options), with one memory
/// budget of their `max_memory` shared by every read (named `--max-memory` in errors); first
/// call wins.
pub(crate) fn set_read_options(options: ReadOptions) {
    let _ = OPTIONS.set(options.with_shared_budget("--max-memory"));
}

/// The read options of this run: those set by [`set_read_options`], else the CLI's defaults
/// (read, do not map). Every clone shares the run's one memory budget (`--max-memory`), so
/// that all the readers of a command charge one limit.
pub(crate) fn read_options() -> ReadOptions {
    OPTIONS
        .get_or_init(|| {
            ReadOptions {
                mode: ReadMode::Read,
                ..ReadOptions::default()
            }
            .with_shared_budget("--max-memory")
        })
        .clone()
}

/// The command's memory budget (`--max-memory`): what every decode of this run allocates
/// beyond its input is charged to it.
pub(crate) fn budget() -> MemoryBudget {
    read_options().read_budget()
}

/// Gives back to the budget, when dropped, everything charged to it since it was made: for a
/// command that drops what it read before reading more (`inspect`, file after file, record
/// after record). Charges made meanwhile must be for things dropped by then.
pub(crate) struct BudgetScope {
    budget: MemoryBudget,
    mark: u64,
}

impl BudgetScope {
    /// A scope from now.
    pub(crate) fn enter() -> Self {
        let budget = budget();
        let mark = budget.used_bytes();
        Self { budget, mark }
    }
}

impl Drop for BudgetScope {
    fn drop(&mut self) {
        self.budget.release_to(self.mark);
    }
}

/// True for the path `-` (standard input or output).
pub(crate) fn is_std(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Reads every tensor of `path` (`-`: standard input); errors name the file.
///
/// Every file goes through the one input layer (`tensorcast::io::read_path_buffer`): regular
/// files are read into memory, not mapped, unless `--mmap` was given (another process
/// truncating a mapped file would kill tensorcast with `SIGBUS`, while a read file that
/// shrinks is a one-line error); standard input, pipes, FIFOs, character devices and files
/// that report a size of 0 (procfs, sysfs) are read as streams up to `--max-stream`.
pub(crate) fn load(path: &Path) -> Result<FileContents> {
    load_sized(path).map(|(c, _)| c)
}

/// [`load`], also returning the size of the input in bytes.
pub(crate) fn load_sized(path: &Path) -> Result<(FileContents, u64)> {
    let options = read_options();
    if is_std(path) {
        let buf =
            tensorcast::io::read_stream_buffer(std::io::stdin().lock(), options.max_stream_bytes)
                .context("-")?;
        let len = buf.len() as u64;
        let c = tensorcast::io::read_buffer_contents_with(buf, "", &options).context("-")?;
        return Ok((c, len));
    }
    let name = || tensorcast::io::escaped(&path.display().to_string());
    if let Some(what) = foreign_format(path) {
        return Err(anyhow!(what)).with_context(name);
    }
    let buf = tensorcast::io::read_path_buffer(path, &options).with_context(name)?;
    let len = buf.len() as u64;
    let hint = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    match tensorcast::io::read_buffer_contents_with(buf.clone(), hint, &options) {
        Ok(c) => Ok((c, len)),
        Err(_) if is_graph_def(buf.as_slice()) => Err(anyhow!(
            "a TensorFlow GraphDef, not a tensor file; use `tensorcast graph inspect {}`",
            name()
        ))
        .with_context(name),
        Err(e) => Err(e).with_context(name),
    }
}

/// Every tensor of the input `path` (`-`: standard input), whatever kind of file the one
/// detector ([`super::detect`]) says it is: a tensor file, a TFRecord file of
/// serialize_tensor records (named `record_<i>`), or a Parquet or Arrow IPC file (a tensor
/// per column). Errors name the file.
pub(crate) fn load_input(path: &Path) -> Result<Vec<NamedTensor>> {
    use super::detect::Input;
    match super::detect::detect_path(path) {
        Some(Input::Records(c)) => super::tfrecord::read_tensors(path, c),
        Some(Input::Arrow(_)) => super::arrow::load(path),
        Some(Input::Tensors(_)) | None => load(path).map(|c| c.tensors),
    }
}

/// The first `n` bytes of `path` (fewer if it is shorter); empty when it cannot be read.
fn head(path: &Path, n: u64) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.take(n).read_to_end(&mut out);
    }
    out
}

/// What a file tensorcast knows but does not read as tensors is, and what to do instead:
/// a SavedModel's `saved_model.pb`, a `MetaGraphDef` (`.meta`), an HDF5 file (Keras `.h5`), a
/// Keras `.keras` archive, a text GraphDef. `None` for anything else (regular files only).
pub(crate) fn foreign_format(path: &Path) -> Option<String> {
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or(".".to_string(), |p| {
            tensorcast::io::escaped(&p.display().to_string())
        });
    if name == "saved_model.pb" || name == "saved_model.pbtxt" {
        return Some(format!(
            "a SavedModel's graph ({name}), not a tensor file; for its variables name the \
             SavedModel directory: `tensorcast inspect {dir}`"
        ));
    }
    if ext == "meta" {
        return Some(
            "a MetaGraphDef (.meta, written by tf.compat.v1.train.Saver), not a tensor file; \
             the weights are in the checkpoint beside it: `tensorcast inspect PREFIX`"
                .to_string(),
        );
    }
    let h = head(path, 4096);
    const HDF5: &[u8] = b"\x89HDF\r\n\x1a\n";
    if h.starts_with(HDF5) || (h.len() >= 520 && h[512..].starts_with(HDF5)) {
        return Some(
            "an HDF5 file (Keras .h5 weights or model), which tensorcast does not read; save the \
             weights as a TensorFlow checkpoint (tf.train.Checkpoint(model=model).write(PREFIX)) \
             or with model.export, and read that"
                .to_string(),
        );
    }
    if h.starts_with(b"PK\x03\x04") {
        let keras_member = [
            &b"config.json"[..],
            b"metadata.json",
            b"model.weights.h5",
            b"model.weights.npz",
        ]
        .iter()
        .any(|m| h.windows(m.len()).any(|w| w == *m));
        if ext == "keras" || keras_member {
            return Some(
                "a Keras .keras archive (config.json and HDF5 weights), which tensorcast does not \
                 read; write the weights as a TensorFlow checkpoint \
                 (tf.train.Checkpoint(model=model).write(PREFIX)) and read that"
                    .to_string(),
            );
        }
    }
    if looks_like_text_graph_def(&h) {
        return Some(format!(
            "a text GraphDef, not a tensor file; use `tensorcast graph inspect {}`",
            tensorcast::io::escaped(&path.display().to_string())
        ));
    }
    None
}

/// A text-format GraphDef: its first field is `node {` (or `versions {`/`library {`), with
/// an `op:` inside.
fn looks_like_text_graph_def(head: &[u8]) -> bool {
    let Ok(text) =
        std::str::from_utf8(head).or_else(|e| std::str::from_utf8(&head[..e.valid_up_to()]))
    else {
        return false;
    };
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap_or("");
    let starts = ["node {", "node{", "library {", "versions {"]
        .iter()
        .any(|p| first.starts_with(p));
    starts && text.contains("op:")
}

/// True for the bytes of a binary GraphDef with nodes (checked only after the tensor decoders
/// refused the file; at most 256 MiB are decoded).
pub(crate) fn is_graph_def(bytes: &[u8]) -> bool {
    use tensorcast::proto::{GraphDef, Message};
    bytes.len() <= 256 << 20 && GraphDef::decode(bytes).is_ok_and(|g| !g.node.is_empty())
}

/// The bytes of `path` (`-`: standard input) through the same input layer as [`load`]: a
/// regular file read (or mapped with `--mmap`), a pipe, FIFO or device read as a stream up to
/// `--max-stream`. Errors name the file.
pub(crate) fn load_bytes(path: &Path) -> Result<tensorcast::buffer::Buffer> {
    let options = read_options();
    if is_std(path) {
        return tensorcast::io::read_stream_buffer(
            std::io::stdin().lock(),
            options.max_stream_bytes,
        )
        .context("-");
    }
    tensorcast::io::read_path_buffer(path, &options)
        .with_context(|| tensorcast::io::escaped(&path.display().to_string()))
}

/// Writes `bytes` to `path` (`-`: standard output) through the atomic output layer every
/// command uses; errors name the file.
pub(crate) fn write_bytes(path: &Path, bytes: &[u8]) -> Result<()> {
    if is_std(path) {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(bytes)
            .and_then(|_| out.flush())
            .context("-: cannot write");
    }
    tensorcast::io::write_file_bytes(path, bytes)
        .with_context(|| tensorcast::io::escaped(&path.display().to_string()))
}

/// Writes `tensors` as `format` to standard output (`-`).
pub(crate) fn write_stdout(format: Format, tensors: &[NamedTensor]) -> Result<()> {
    let bytes =
        tensorcast::io::write_bytes(format, tensors, &WriteOptions::default()).context("-")?;
    let mut out = std::io::stdout().lock();
    out.write_all(&bytes)
        .and_then(|_| out.flush())
        .context("-: cannot write")
}

/// `s` with its control characters (terminal escape sequences, carriage returns...) written
/// as `\xNN` / `\u{NN}`; backslashes are kept, so text that is already C-escaped (string
/// values in a DebugString) is unchanged while raw names inside it (variant type names) become
/// safe to print.
pub(crate) fn terminal_safe(s: &str) -> String {
    if !s.chars().any(|c| c.is_control() && c != '\n') {
        return s.to_string();
    }
    s.split('\n')
        .map(|line| {
            line.chars()
                .map(|c| {
                    if c.is_control() {
                        tensorcast::io::escaped(&c.to_string())
                    } else {
                        c.to_string()
                    }
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Parses a size as users write it: `1048576`, `64K`, `256M`, `4G`, `1T` (powers of 1024; a
/// trailing `B` or `iB` is allowed).
pub(crate) fn parse_size(s: &str) -> Result<u64> {
    let t = s.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (num, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => {
                    return Err(anyhow!(
                        "bad size '{s}': unknown unit '{c}' (use K, M, G or T)"
                    ))
                }
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    let n: u64 = num
        .trim()
        .parse()
        .map_err(|_| anyhow!("bad size '{s}' (write it as 1048576, 64K, 256M, 4G...)"))?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| anyhow!("bad size '{s}': too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_safe_escapes_controls_and_keeps_backslashes() {
        assert_eq!(terminal_safe("a\\n b"), "a\\n b");
        assert_eq!(terminal_safe("x\x1b[2Jy\nz\r"), "x\\x1b[2Jy\nz\\r");
    }

    #[test]
    fn parse_size_takes_units_of_1024() {
        assert_eq!(parse_size("1048576").unwrap(), 1 << 20);
        assert_eq!(parse_size("64K").unwrap(), 64 << 10);
        assert_eq!(parse_size("256M").unwrap(), 256 << 20);
        assert_eq!(parse_size("4GiB").unwrap(), 4 << 30);
        assert_eq!(parse_size("1t").unwrap(), 1 << 40);
        assert!(parse_size("12Q").is_err());
        assert!(parse_size("lots").is_err());
        assert!(parse_size("99999999999T").is_err());
    }
}

//! Where the CLI's tensors come from and go to: files read safely (no memory map unless asked
//! for), `-` for standard input and output, FIFOs and pipes as bounded streams, and the memory
//! limits set by the global options.

use std::io::Write;
use std::path::Path;
use std::sync::OnceLock;

use anyhow::{anyhow, Context, Result};
use tensorcast::io::{FileContents, Format, NamedTensor, ReadMode, ReadOptions, WriteOptions};

static OPTIONS: OnceLock<ReadOptions> = OnceLock::new();

/// Sets the read options of this run (from the global command-line options); first call wins.
pub(crate) fn set_read_options(options: ReadOptions) {
    let _ = OPTIONS.set(options);
}

/// The read options of this run: those set by [`set_read_options`], else the CLI's defaults
/// (read, do not map).
pub(crate) fn read_options() -> ReadOptions {
    OPTIONS.get().cloned().unwrap_or_else(|| ReadOptions {
        mode: ReadMode::Read,
        ..ReadOptions::default()
    })
}

/// True for the path `-` (standard input or output).
pub(crate) fn is_std(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Reads every tensor of `path` (`-`: standard input); errors name the file.
///
/// Regular files are read into memory, not mapped, unless `--mmap` was given: another process
/// truncating a mapped file would kill tensorcast with `SIGBUS`, while a read file that shrinks
/// is a one-line error. Standard input, pipes, FIFOs and character devices are read as streams
/// up to `--max-stream`.
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
    let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    if !regular && !path.is_dir() && path.exists() {
        // A FIFO, pipe or character device: a bounded stream.
        let f = std::fs::File::open(path).with_context(name)?;
        let buf =
            tensorcast::io::read_stream_buffer(f, options.max_stream_bytes).with_context(name)?;
        let len = buf.len() as u64;
        let hint = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let c =
            tensorcast::io::read_buffer_contents_with(buf, hint, &options).with_context(name)?;
        return Ok((c, len));
    }
    let c = tensorcast::io::read_file_contents_with(path, &options).with_context(name)?;
    let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    Ok((c, len))
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

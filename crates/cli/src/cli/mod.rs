//! The `tensorcast` subcommands and the helpers they share.
//!
//! Every subcommand returns `anyhow::Result<i32>`: `Ok(code)` with the exit code it chose
//! (0, or 1 for `diff` finding a difference), `Err` for anything that went wrong, printed by
//! `main` as one line `tensorcast: <file>: <problem>` with exit code 2.

pub(crate) mod arrow;
pub(crate) mod bench;
pub(crate) mod bitcast;
pub(crate) mod broadcast;
pub(crate) mod checkpoint;
pub(crate) mod convert;
pub(crate) mod decode;
pub(crate) mod detect;
pub(crate) mod diff;
pub(crate) mod example_spec;
pub(crate) mod graph;
pub(crate) mod inspect;
pub(crate) mod inspect_checkpoint;
pub(crate) mod progress;
pub(crate) mod record_summary;
pub(crate) mod saved_model;
pub(crate) mod signals;
pub(crate) mod source;
pub(crate) mod stats;
pub(crate) mod table;
pub(crate) mod tfrecord;

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use tensorcast::io::{FileContents, Format, NamedTensor};
use tensorcast::{DataType, Tensor, TensorShape};

/// Exit code for success.
pub(crate) const EXIT_OK: i32 = 0;
/// Exit code for `diff` finding a difference.
pub(crate) const EXIT_DIFFERENT: i32 = 1;
/// Exit code for an error.
pub(crate) const EXIT_ERROR: i32 = 2;

/// An error as one line: its causes joined by `: `, newlines flattened; a cause whose text
/// the line already holds (a decoder's error that a wrapper quoted in its own message) is not
/// repeated.
pub(crate) fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        let text = text.trim();
        // Short texts ("a", "eof") may appear inside others by chance: only whole endings count.
        let repeated = if text.len() >= 8 {
            line.contains(text)
        } else {
            line == text || line.ends_with(&format!(": {text}"))
        };
        if text.is_empty() || repeated {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(text);
    }
    line.replace(['\r', '\n'], " ")
}

/// Reads every tensor of `path` (format detected from the content; `-` is standard input);
/// errors name the file. See [`source::load`].
pub(crate) fn load(path: &Path) -> Result<FileContents> {
    source::load(path)
}

/// The tensors of `path`: a TensorFlow checkpoint by any name a TensorFlow user types (its
/// tensors chosen and named as `select` says), or whatever file the one detector says it is
/// (see [`source::load_input`]: a tensor file, serialize_tensor records, Parquet or Arrow).
pub(crate) fn load_tensors(path: &Path, select: &checkpoint::Select) -> Result<Vec<NamedTensor>> {
    if checkpoint::is_checkpoint(path) {
        checkpoint::load(path, select)
    } else {
        source::load_input(path)
    }
}

/// Parses a dtype as users write it (`float32`, `f32`, `bf16`, `DT_FLOAT`, `1`...).
pub(crate) fn parse_dtype(s: &str) -> Result<DataType> {
    DataType::parse_lenient(s).ok_or_else(|| {
        anyhow!("unknown data type '{s}' (try float32, f16, bf16, int8, uint8, float8_e4m3fn...)")
    })
}

/// Parses a shape written as comma-separated sizes: `2,3`, `[2, 3]`, `4`; empty (or `[]`) is
/// a scalar.
pub(crate) fn parse_shape(s: &str) -> Result<TensorShape> {
    let inner = s
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim();
    let mut dims = Vec::new();
    if !inner.is_empty() {
        for part in inner.split(',') {
            let p = part.trim();
            let d: i64 = p
                .parse()
                .map_err(|_| anyhow!("bad shape '{s}': '{p}' is not a dimension size"))?;
            if d < 0 {
                bail!("bad shape '{s}': dimension {d} is negative");
            }
            dims.push(d);
        }
    }
    TensorShape::new(&dims).map_err(|e| anyhow!("bad shape '{s}': {e}"))
}

/// The format to write `path` in: `explicit` when given, else the path's extension.
pub(crate) fn output_format(path: &Path, explicit: Option<&str>) -> Result<Format> {
    match explicit {
        Some(f) => f.parse::<Format>().map_err(|e| anyhow!("{e}")),
        None => Format::from_path(path).ok_or_else(|| {
            anyhow!(
                "cannot tell the output format from the file name; use an extension \
                 (.npy, .npz, .safetensors, .pb, .tfrecord, .parquet, .arrow) or --format"
            )
        }),
    }
}

/// Total bytes of the tensors' data.
pub(crate) fn total_bytes(tensors: &[NamedTensor]) -> u64 {
    tensors.iter().map(|t| t.tensor.total_bytes() as u64).sum()
}

/// Applies `op` to every tensor, with a progress bar labelled `what` for large inputs;
/// an error names the tensor when the file holds more than one.
pub(crate) fn map_tensors(
    tensors: Vec<NamedTensor>,
    what: &str,
    op: impl Fn(&Tensor) -> tensorcast::Result<Tensor>,
) -> Result<Vec<NamedTensor>> {
    let several = tensors.len() > 1;
    let pb = progress::bar(total_bytes(&tensors), what);
    let mut out = Vec::with_capacity(tensors.len());
    for nt in tensors {
        let t = op(&nt.tensor).map_err(|e| {
            if several {
                anyhow!("tensor '{}': {e}", tensorcast::io::escaped(&nt.name))
            } else {
                anyhow!("{e}")
            }
        })?;
        pb.inc(nt.tensor.total_bytes() as u64);
        out.push(NamedTensor::new(nt.name, t));
    }
    pb.finish_and_clear();
    Ok(out)
}

/// The file arguments of the per-tensor commands (`bitcast`, `broadcast`).
#[derive(clap::Args, Debug)]
pub(crate) struct MapArgs {
    /// The file to read (format detected from the content).
    pub input: PathBuf,
    /// The file to write (replaced atomically); the same as -o.
    #[arg(value_name = "OUT")]
    pub output_pos: Option<PathBuf>,
    /// The file to write (replaced atomically); `-` is standard output.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Output format (npy, npz, safetensors, pb); default: from OUT's extension.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
}

/// The body of the per-tensor commands (`bitcast`, `broadcast`): read the input, apply `op` to
/// every tensor (progress labelled `what`), write the results to the output in the format
/// asked for (or the one its extension names). Errors name the file they concern.
pub(crate) fn map_file(
    files: &MapArgs,
    what: &str,
    op: impl Fn(&Tensor) -> tensorcast::Result<Tensor>,
) -> Result<i32> {
    let input = &files.input;
    let output = &convert::output_path(files.output_pos.as_ref(), files.output.as_ref())
        .with_context(|| tensorcast::io::escaped(&input.display().to_string()))?;
    let format = output_format(output, files.format.as_deref())
        .with_context(|| output.display().to_string())?;
    let tensors = source::load_input(input)?;
    let tensors = map_tensors(tensors, what, op).context(input.display().to_string())?;
    write(output, format, &tensors)?;
    Ok(EXIT_OK)
}

/// Writes `tensors` to `path` in `format` (atomically), with a spinner for large outputs;
/// errors name the file.
pub(crate) fn write(path: &Path, format: Format, tensors: &[NamedTensor]) -> Result<()> {
    if source::is_std(path) {
        return source::write_stdout(format, tensors);
    }
    let pb = progress::spinner(total_bytes(tensors), &format!("writing {}", path.display()));
    let r = tensorcast::io::write_file(path, format, tensors);
    pb.finish_and_clear();
    r.with_context(|| tensorcast::io::escaped(&path.display().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse_leniently_and_reject_nonsense() {
        assert_eq!(parse_shape("2,3").unwrap().dim_sizes(), &[2, 3]);
        assert_eq!(parse_shape("[2, 3]").unwrap().dim_sizes(), &[2, 3]);
        assert_eq!(parse_shape("").unwrap().dim_sizes(), &[] as &[i64]);
        assert_eq!(
            parse_shape("2,x").unwrap_err().to_string(),
            "bad shape '2,x': 'x' is not a dimension size"
        );
        assert!(parse_shape("2,-1").is_err());
        assert!(parse_shape("2,,3").is_err());
    }

    #[test]
    fn one_line_does_not_repeat_a_cause() {
        let inner = std::io::Error::other("bad magic");
        let e = anyhow::Error::new(inner)
            .context("cannot decode: bad magic")
            .context("f.pb");
        assert_eq!(one_line(&e), "f.pb: cannot decode: bad magic");
        let e = anyhow!("b").context("a");
        assert_eq!(one_line(&e), "a: b");
    }

    #[test]
    fn dtypes_parse_leniently() {
        assert_eq!(parse_dtype("f32").unwrap(), DataType::FLOAT);
        assert_eq!(parse_dtype("DT_BFLOAT16").unwrap(), DataType::BFLOAT16);
        assert!(parse_dtype("float33")
            .unwrap_err()
            .to_string()
            .starts_with("unknown data type 'float33'"));
    }

    #[test]
    fn output_format_comes_from_the_flag_or_the_extension() {
        assert_eq!(
            output_format(Path::new("a.npz"), None).unwrap(),
            Format::Npz
        );
        assert_eq!(
            output_format(Path::new("a.bin"), Some("pb")).unwrap(),
            Format::TensorProto
        );
        assert!(output_format(Path::new("a.bin"), None).is_err());
    }
}

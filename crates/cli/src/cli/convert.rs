//! `tensorcast convert IN [OUT | -o OUT] [--format FORMAT] [--cast DTYPE]`: rewrites a tensor
//! file or a TensorFlow checkpoint in another format, optionally casting every tensor
//! (TensorFlow's `Cast`); `--format checkpoint` writes a TensorFlow checkpoint (a TF2 bundle
//! with an object graph built from the names) that `tf.train.Checkpoint(...).restore` loads.
//! `--to` is the old spelling of `--format`.

use std::path::PathBuf;
use tensorcast::prelude::TensorOps;

use anyhow::{anyhow, bail, Context, Result};
use tensorcast::io::checkpoint::{
    write_checkpoint, CheckpointWriteOptions, ObjectGraph, OBJECT_GRAPH_KEY,
};
use tensorcast::io::{escaped, NamedTensor};

use super::checkpoint::{self, Select};
use super::tfrecord;
use super::EXIT_OK;

/// Arguments of `convert`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The file to read (format detected from the content), or a TensorFlow checkpoint: its
    /// prefix, `.index` or `.data-*` file, its directory, or a SavedModel directory.
    pub input: PathBuf,
    /// The file to write (replaced atomically); the same as -o.
    #[arg(value_name = "OUT")]
    pub output_pos: Option<PathBuf>,
    /// The file to write (replaced atomically); `-` is standard output. For a checkpoint, its
    /// prefix.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Cast every tensor to this dtype first (float32, f16, bf16, int8, DT_DOUBLE...).
    #[arg(long, value_name = "DTYPE")]
    pub cast: Option<String>,
    /// Output format (npy, npz, safetensors, pb, tfrecord, checkpoint, parquet, arrow,
    /// arrow-stream); default: from OUT's extension (`.tfrecord`, `.tfrecords`, optionally with
    /// `.gz` or `.zz`, for TFRecord; `.parquet`, `.arrow` / `.feather`, `.arrows`).
    #[arg(long, visible_alias = "to", value_name = "FORMAT")]
    pub format: Option<String>,
    /// A TFRecord output's compression: none, gzip or zlib; default: from a `.gz` / `.zz`
    /// suffix of OUT, else none.
    #[arg(long, value_name = "C", value_parser = super::tfrecord::parse_compression)]
    pub compression: Option<tensorcast_records::Compression>,
    /// Parse a TFRecord file of tf.train.Examples with this feature spec (a JSON file:
    /// feature name -> `{"type": "FixedLenFeature", "shape": [4], "dtype": "float32"}`...), as
    /// tf.io.parse_example does, and write the results: `name` for dense features,
    /// `name.indices` / `.values` / `.dense_shape` for sparse ones, `name.flat_values` /
    /// `name.row_splits.0`... for ragged ones; to Parquet or Arrow, one row per Example and one
    /// column per feature (fixed-shape tensor columns, list columns for VarLen and ragged).
    #[arg(long, value_name = "SPEC.json")]
    pub spec: Option<PathBuf>,
    #[command(flatten)]
    pub select: Select,
}

/// The output of a command that writes one: `-o OUT` or the positional OUT, not both.
pub(crate) fn output_path(positional: Option<&PathBuf>, flag: Option<&PathBuf>) -> Result<PathBuf> {
    match (positional, flag) {
        (Some(p), None) | (None, Some(p)) => Ok(p.clone()),
        (Some(a), Some(b)) => bail!(
            "two outputs given ({} and -o {}); give one",
            escaped(&a.display().to_string()),
            escaped(&b.display().to_string())
        ),
        (None, None) => bail!("no output given (OUT or -o OUT)"),
    }
}

fn is_checkpoint_format(f: &str) -> bool {
    matches!(
        f.to_ascii_lowercase().as_str(),
        "checkpoint" | "ckpt" | "tf-checkpoint" | "bundle"
    )
}

/// The compression of a TFRecord output, or `None` when the output is not TFRecord: asked
/// for with `--format tfrecord`, or named `.tfrecord` / `.tfrecords` (+ `.gz` / `.zz`).
fn tfrecord_output(
    args: &Args,
    output: &std::path::Path,
) -> Option<tensorcast_records::Compression> {
    let by_name = super::detect::record_name_compression(output);
    let asked = args
        .format
        .as_deref()
        .is_some_and(|f| matches!(f.to_ascii_lowercase().as_str(), "tfrecord" | "tfrecords"));
    if !asked && (args.format.is_some() || by_name.is_none()) {
        return None;
    }
    Some(args.compression.or(by_name).unwrap_or_default())
}

/// Runs `convert`.
pub(crate) fn run(args: &Args) -> Result<i32> {
    let in_name = escaped(&args.input.display().to_string());
    let output = output_path(args.output_pos.as_ref(), args.output.as_ref())
        .with_context(|| in_name.clone())?;
    let out_name = escaped(&output.display().to_string());
    // One detector for every command: what `inspect` reads a file as, `convert` does too.
    let detected = super::detect::detect_path(&args.input);
    let in_tfrecord = match detected {
        Some(super::detect::Input::Records(c)) => Some(c),
        _ => None,
    };
    let in_arrow = match detected {
        Some(super::detect::Input::Arrow(kind)) => Some(kind),
        _ => None,
    };
    let out_tfrecord = tfrecord_output(args, &output);
    if args.compression.is_some() && out_tfrecord.is_none() {
        return Err(anyhow!(
            "--compression is for TFRecord outputs (.tfrecord, .tfrecords or --format tfrecord)"
        ))
        .context(out_name);
    }
    if args.spec.is_some() && in_tfrecord.is_none() {
        return Err(anyhow!(
            "--spec parses a TFRecord file of tf.train.Examples, and this is not a TFRecord file"
        ))
        .context(in_name);
    }
    let out_arrow = super::arrow::output_kind(&output, args.format.as_deref());
    if in_arrow.is_some() || out_arrow.is_some() {
        return convert_arrow(
            args,
            &output,
            in_tfrecord,
            in_arrow,
            out_arrow,
            out_tfrecord,
        );
    }
    if in_tfrecord.is_some() || out_tfrecord.is_some() {
        return convert_tfrecord(args, &output, in_tfrecord, out_tfrecord);
    }
    let to_checkpoint = args.format.as_deref().is_some_and(is_checkpoint_format);
    let format = if to_checkpoint {
        None
    } else {
        Some(super::output_format(&output, args.format.as_deref()).context(out_name.clone())?)
    };
    let dtype = cast_dtype(args)?;
    let from_checkpoint = checkpoint::is_checkpoint(&args.input);
    if to_checkpoint && from_checkpoint && dtype.is_none() {
        return rewrite_checkpoint(args, &output);
    }
    if from_checkpoint
        && format == Some(tensorcast::io::Format::Safetensors)
        && !super::source::is_std(&output)
    {
        checkpoint::convert_to_safetensors(&args.input, &args.select, dtype, &output)?;
        return Ok(EXIT_OK);
    }
    if to_checkpoint && !from_checkpoint && dtype.is_none() && stream_to_checkpoint(args, &output)?
    {
        return Ok(EXIT_OK);
    }
    let tensors = if from_checkpoint {
        checkpoint::load(&args.input, &args.select)?
    } else {
        super::load(&args.input)?.tensors
    };
    let tensors = match dtype {
        Some(d) => super::map_tensors(tensors, "casting", |t| t.cast(d))
            .with_context(|| in_name.clone())?,
        None => tensors,
    };
    match format {
        Some(format) => super::write(&output, format, &tensors)?,
        None => write_as_checkpoint(&output, tensors)?,
    }
    Ok(EXIT_OK)
}

/// Writes `tensors` as a TF2 checkpoint with prefix `prefix`: names that are object paths
/// become TF2 keys, and the object graph is built from the keys.
fn write_as_checkpoint(prefix: &std::path::Path, tensors: Vec<NamedTensor>) -> Result<()> {
    let name = || escaped(&prefix.display().to_string());
    if super::source::is_std(prefix) {
        return Err(anyhow!(
            "a checkpoint is two files and cannot go to standard output; name its prefix"
        ))
        .with_context(name);
    }
    let tensors: Vec<NamedTensor> = tensors
        .into_iter()
        .filter(|t| t.name != OBJECT_GRAPH_KEY)
        .map(|t| NamedTensor::new(checkpoint::key_of(&t.name), t.tensor))
        .collect();
    let graph = ObjectGraph::from_keys(tensors.iter().map(|t| t.name.as_str()));
    let options = CheckpointWriteOptions {
        object_graph: Some(graph),
        ..CheckpointWriteOptions::default()
    };
    let pb = super::progress::spinner(
        super::total_bytes(&tensors),
        &format!("writing {}", prefix.display()),
    );
    let r = write_checkpoint(prefix, &tensors, &options);
    pb.finish_and_clear();
    r.with_context(name)
}

/// `convert weights.safetensors PREFIX --format checkpoint`, streamed: the safetensors header
/// is read, then each tensor's bytes are copied from the file into the checkpoint's data file
/// piece by piece (checksummed on the way), so memory holds one piece, not the file. Returns
/// false, having done nothing, when the input is not a regular safetensors file whose
/// tensors can be copied as they are (the caller then reads it whole, with that reader's
/// errors).
fn stream_to_checkpoint(args: &Args, prefix: &std::path::Path) -> Result<bool> {
    use std::os::unix::fs::FileExt;
    use tensorcast::io::safetensors::{parse_header, PlannedTensor};
    let input = &args.input;
    if super::source::is_std(input) || super::source::is_std(prefix) || !input.is_file() {
        return Ok(false);
    }
    let Ok(file) = std::fs::File::open(input) else {
        return Ok(false);
    };
    let Ok(len) = file.metadata().map(|m| m.len()) else {
        return Ok(false);
    };
    let mut n8 = [0u8; 8];
    if file.read_exact_at(&mut n8, 0).is_err() {
        return Ok(false);
    }
    let n = u64::from_le_bytes(n8);
    // The safetensors reader's own limit on a header; past it, or past the file, the reader
    // gives the error.
    if n > 100_000_000 || 8 + n > len {
        return Ok(false);
    }
    let mut head = vec![0u8; 8 + n as usize];
    if file.read_exact_at(&mut head, 0).is_err() {
        return Ok(false);
    }
    let Ok(header) = parse_header(&head) else {
        return Ok(false);
    };
    let copyable = header
        .entries
        .iter()
        .all(|e| e.dtype.can_use_memcpy() && e.dtype != tensorcast::DataType::FLOAT4_E2M1FN);
    if !copyable || (header.data_start + header.data_bytes) as u64 > len {
        return Ok(false);
    }
    let entries: Vec<_> = header
        .entries
        .iter()
        .filter(|e| e.name != OBJECT_GRAPH_KEY)
        .collect();
    let planned: Vec<PlannedTensor> = entries
        .iter()
        .map(|e| PlannedTensor {
            name: checkpoint::key_of(&e.name),
            dtype: e.dtype,
            shape: e.shape.clone(),
        })
        .collect();
    let graph = ObjectGraph::from_keys(planned.iter().map(|p| p.name.as_str()));
    let options = CheckpointWriteOptions {
        object_graph: Some(graph),
        ..CheckpointWriteOptions::default()
    };
    let in_name = || escaped(&input.display().to_string());
    let total = header.data_bytes as u64;
    let pb = super::progress::bar(total, &format!("converting {}", input.display()));
    let mut read_error = None;
    let mut piece = vec![0u8; (256usize << 10).min(header.data_bytes.max(1))];
    let r = tensorcast::io::checkpoint::write_checkpoint_streamed(
        prefix,
        &planned,
        &options,
        &mut |i, out| {
            let (a, b) = entries[i].data_offsets;
            let mut at = (header.data_start + a) as u64;
            let end = (header.data_start + b) as u64;
            while at < end {
                let k = ((end - at) as usize).min(piece.len());
                if let Err(e) = file.read_exact_at(&mut piece[..k], at) {
                    let msg = if e.kind() == std::io::ErrorKind::UnexpectedEof {
                        "the file ended before its tensors' data (truncated while read?)".into()
                    } else {
                        format!("cannot read: {e}")
                    };
                    read_error = Some(msg.clone());
                    return Err(tensorcast::io::IoError::new(
                        tensorcast::io::ErrorKind::Truncated,
                        msg,
                    ));
                }
                out.write_all(&piece[..k]).map_err(|e| {
                    tensorcast::io::IoError::new(
                        tensorcast::io::ErrorKind::Io,
                        format!("cannot write: {e}"),
                    )
                })?;
                pb.inc(k as u64);
                at += k as u64;
            }
            Ok(None)
        },
    );
    pb.finish_and_clear();
    if let Some(e) = read_error {
        return Err(anyhow!(e)).with_context(in_name);
    }
    r.with_context(|| escaped(&prefix.display().to_string()))?;
    Ok(true)
}

/// A checkpoint rewritten as a checkpoint: every stored tensor under its key (a partitioned
/// tensor as its slices), shard by shard, in the order TensorFlow added them (so a checkpoint
/// TensorFlow wrote comes back byte for byte, zero-element tensors and slices included), the
/// object graph kept as it was.
fn rewrite_checkpoint(args: &Args, prefix: &std::path::Path) -> Result<i32> {
    let ckpt = checkpoint::open(&args.input)?;
    let name = || escaped(&args.input.display().to_string());
    let shards = tensorcast::io::checkpoint::stored_items(&ckpt).with_context(name)?;
    if super::source::is_std(prefix) {
        return Err(anyhow!(
            "a checkpoint is two files and cannot go to standard output; name its prefix"
        ))
        .with_context(|| escaped(&prefix.display().to_string()));
    }
    tensorcast::io::checkpoint::write_sharded_bundle(
        prefix,
        &shards,
        &CheckpointWriteOptions::default(),
    )
    .with_context(|| escaped(&prefix.display().to_string()))?;
    Ok(EXIT_OK)
}

/// The dtype of `--cast`, if given (an unknown name is an error naming the input).
fn cast_dtype(args: &Args) -> Result<Option<tensorcast::DataType>> {
    args.cast
        .as_deref()
        .map(super::parse_dtype)
        .transpose()
        .with_context(|| format!("{}: --cast", escaped(&args.input.display().to_string())))
}

/// `convert` with a TFRecord file on either side: records copied (TFRecord to TFRecord),
/// serialize_tensor records to and from tensors, or Examples parsed with `--spec`.
fn convert_tfrecord(
    args: &Args,
    output: &std::path::Path,
    input: Option<tensorcast_records::Compression>,
    out: Option<tensorcast_records::Compression>,
) -> Result<i32> {
    let in_name = || escaped(&args.input.display().to_string());
    let dtype = cast_dtype(args)?;
    if let (Some(from), Some(to), None, None) = (input, out, dtype, &args.spec) {
        tfrecord::copy_records(&args.input, from, output, to)?;
        return Ok(EXIT_OK);
    }
    let tensors = match (input, &args.spec) {
        (Some(c), Some(spec)) => {
            let specs = super::example_spec::load(spec)?;
            tfrecord::parse_file(&args.input, c, &specs)?
        }
        (Some(c), None) => tfrecord::read_tensors(&args.input, c)?,
        (None, _) if checkpoint::is_checkpoint(&args.input) => {
            checkpoint::load(&args.input, &args.select)?
        }
        (None, _) => super::load(&args.input)?.tensors,
    };
    let tensors = match dtype {
        Some(d) => super::map_tensors(tensors, "casting", |t| t.cast(d)).with_context(in_name)?,
        None => tensors,
    };
    match out {
        Some(c) => tfrecord::write_tensors(output, c, &tensors)?,
        None => {
            if is_checkpoint_format(args.format.as_deref().unwrap_or("")) {
                write_as_checkpoint(output, tensors)?;
            } else {
                let format = super::output_format(output, args.format.as_deref())
                    .with_context(|| escaped(&output.display().to_string()))?;
                super::write(output, format, &tensors)?;
            }
        }
    }
    Ok(EXIT_OK)
}

/// `convert` with a Parquet or Arrow IPC file on either side: tensors (or Examples parsed with
/// `--spec`) written as a record batch, or a record batch's columns read back as tensors.
fn convert_arrow(
    args: &Args,
    output: &std::path::Path,
    in_tfrecord: Option<tensorcast_records::Compression>,
    in_arrow: Option<tensorcast_arrow::FileKind>,
    out_arrow: Option<tensorcast_arrow::FileKind>,
    out_tfrecord: Option<tensorcast_records::Compression>,
) -> Result<i32> {
    let in_name = || escaped(&args.input.display().to_string());
    let dtype = cast_dtype(args)?;
    if let (Some(c), Some(spec), Some(kind)) = (in_tfrecord, &args.spec, out_arrow) {
        if dtype.is_some() {
            return Err(anyhow!(
                "--cast applies to tensors, not to Examples parsed with --spec"
            ))
            .with_context(in_name);
        }
        let specs = super::example_spec::load(spec)?;
        let parsed = tfrecord::parse_records(&args.input, c, &specs)?;
        super::arrow::write_parsed(output, kind, &parsed)?;
        return Ok(EXIT_OK);
    }
    let tensors = match (in_arrow, in_tfrecord, &args.spec) {
        (Some(_), _, _) => super::arrow::load(&args.input)?,
        (None, Some(c), Some(spec)) => {
            let specs = super::example_spec::load(spec)?;
            tfrecord::parse_file(&args.input, c, &specs)?
        }
        (None, Some(c), None) => tfrecord::read_tensors(&args.input, c)?,
        (None, None, _) if checkpoint::is_checkpoint(&args.input) => {
            checkpoint::load(&args.input, &args.select)?
        }
        (None, None, _) => super::load(&args.input)?.tensors,
    };
    let tensors = match dtype {
        Some(d) => super::map_tensors(tensors, "casting", |t| t.cast(d)).with_context(in_name)?,
        None => tensors,
    };
    match (out_arrow, out_tfrecord) {
        (Some(kind), _) => super::arrow::write_tensors(output, kind, &tensors)?,
        (None, Some(c)) => tfrecord::write_tensors(output, c, &tensors)?,
        (None, None) if is_checkpoint_format(args.format.as_deref().unwrap_or("")) => {
            write_as_checkpoint(output, tensors)?
        }
        (None, None) => {
            let format = super::output_format(output, args.format.as_deref())
                .with_context(|| escaped(&output.display().to_string()))?;
            super::write(output, format, &tensors)?;
        }
    }
    Ok(EXIT_OK)
}

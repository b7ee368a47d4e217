//! `tensorcast bitcast IN --to DTYPE -o OUT [--reinterpret]`: every tensor's bytes as
//! another dtype, without converting values: TensorFlow's `Bitcast` rule by default (the last
//! dimension is added or dropped), Ascend TIK's `reinterpret_cast_to` with `--reinterpret`
//! (same rank, last dimension scaled).

use std::path::PathBuf;

use anyhow::{Context, Result};
use tensorcast::ops;

use super::EXIT_OK;

/// Arguments of `bitcast`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The file to read (format detected from the content).
    pub input: PathBuf,
    /// The dtype to view the bytes as.
    #[arg(long, value_name = "DTYPE")]
    pub to: String,
    /// The file to write (replaced atomically).
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Use Ascend TIK's reinterpret_cast_to rule instead of TensorFlow's Bitcast.
    #[arg(long)]
    pub reinterpret: bool,
    /// Output format (npy, npz, safetensors, pb); default: from OUT's extension.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
}

/// Runs `bitcast`.
pub(crate) fn run(args: &Args) -> Result<i32> {
    let in_name = args.input.display().to_string();
    let format = super::output_format(&args.output, args.format.as_deref())
        .with_context(|| args.output.display().to_string())?;
    let dtype = super::parse_dtype(&args.to).with_context(|| format!("{in_name}: --to"))?;
    let contents = super::load(&args.input)?;
    let tensors = if args.reinterpret {
        super::map_tensors(contents.tensors, "reinterpreting", |t| {
            ops::reinterpret::reinterpret_cast_to(t, dtype)
        })
    } else {
        super::map_tensors(contents.tensors, "bitcasting", |t| {
            ops::bitcast::bitcast(t, dtype)
        })
    }
    .context(in_name)?;
    super::write(&args.output, format, &tensors)?;
    Ok(EXIT_OK)
}

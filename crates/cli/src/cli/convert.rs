//! `tensorcast convert IN OUT [--cast DTYPE] [--to FORMAT]`: rewrites a tensor file in
//! another format, optionally casting every tensor (TensorFlow's `Cast`).

use std::path::PathBuf;

use anyhow::{Context, Result};

use super::EXIT_OK;

/// Arguments of `convert`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The file to read (format detected from the content).
    pub input: PathBuf,
    /// The file to write (replaced atomically).
    pub output: PathBuf,
    /// Cast every tensor to this dtype first (float32, f16, bf16, int8, DT_DOUBLE...).
    #[arg(long, value_name = "DTYPE")]
    pub cast: Option<String>,
    /// Output format (npy, npz, safetensors, pb); default: from OUT's extension.
    #[arg(long, value_name = "FORMAT")]
    pub to: Option<String>,
}

/// Runs `convert`.
pub(crate) fn run(args: &Args) -> Result<i32> {
    let in_name = args.input.display().to_string();
    let out_name = args.output.display().to_string();
    let format = super::output_format(&args.output, args.to.as_deref()).context(out_name)?;
    let dtype = args
        .cast
        .as_deref()
        .map(super::parse_dtype)
        .transpose()
        .with_context(|| format!("{in_name}: --cast"))?;
    let contents = super::load(&args.input)?;
    let tensors = match dtype {
        Some(d) => super::map_tensors(contents.tensors, "casting", |t| t.cast(d))
            .with_context(|| in_name.clone())?,
        None => contents.tensors,
    };
    super::write(&args.output, format, &tensors)?;
    Ok(EXIT_OK)
}

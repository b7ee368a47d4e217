//! `tensorcast broadcast IN --shape 2,3 -o OUT`: every tensor broadcast to a shape
//! (TensorFlow's `BroadcastTo`, materialised).

use std::path::PathBuf;

use anyhow::{Context, Result};
use tensorcast::ops;

use super::EXIT_OK;

/// Arguments of `broadcast`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The file to read (format detected from the content).
    pub input: PathBuf,
    /// The target shape: comma-separated sizes (`2,3`; empty for a scalar).
    #[arg(long, value_name = "DIMS", allow_hyphen_values = true)]
    pub shape: String,
    /// The file to write (replaced atomically).
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Output format (npy, npz, safetensors, pb); default: from OUT's extension.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
}

/// Runs `broadcast`.
pub(crate) fn run(args: &Args) -> Result<i32> {
    let in_name = args.input.display().to_string();
    let format = super::output_format(&args.output, args.format.as_deref())
        .with_context(|| args.output.display().to_string())?;
    let shape = super::parse_shape(&args.shape).with_context(|| format!("{in_name}: --shape"))?;
    let contents = super::load(&args.input)?;
    let tensors = super::map_tensors(contents.tensors, "broadcasting", |t| {
        ops::broadcast::broadcast_to(t, &shape)
    })
    .context(in_name)?;
    super::write(&args.output, format, &tensors)?;
    Ok(EXIT_OK)
}

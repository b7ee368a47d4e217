//! `tensorcast broadcast IN --shape 2,3 [OUT | -o OUT]`: every tensor broadcast to a shape
//! (TensorFlow's `BroadcastTo`, materialised).

use anyhow::{Context, Result};
use tensorcast::ops;

/// Arguments of `broadcast`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub files: super::MapArgs,
    /// The target shape: comma-separated sizes (`2,3`; empty for a scalar).
    #[arg(long, value_name = "DIMS", allow_hyphen_values = true)]
    pub shape: String,
}

/// Runs `broadcast`.
pub(crate) fn run(args: &Args) -> Result<i32> {
    let in_name = args.files.input.display().to_string();
    let shape = super::parse_shape(&args.shape).with_context(|| format!("{in_name}: --shape"))?;
    super::map_file(&args.files, "broadcasting", |t| {
        ops::broadcast::broadcast_to(t, &shape)
    })
}

//! `tensorcast bitcast IN --dtype DTYPE [OUT | -o OUT] [--reinterpret]`: every tensor's bytes as
//! another dtype, without converting values: TensorFlow's `Bitcast` rule by default (the last
//! dimension is added or dropped), Ascend TIK's `reinterpret_cast_to` with `--reinterpret`
//! (same rank, last dimension scaled).

use anyhow::{Context, Result};
use tensorcast::ops;

/// Arguments of `bitcast`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub files: super::MapArgs,
    /// The dtype to view the bytes as (`--to` is the old spelling).
    #[arg(long, visible_alias = "to", value_name = "DTYPE")]
    pub dtype: String,
    /// Use Ascend TIK's reinterpret_cast_to rule instead of TensorFlow's Bitcast.
    #[arg(long)]
    pub reinterpret: bool,
}

/// Runs `bitcast`.
pub(crate) fn run(args: &Args) -> Result<i32> {
    let in_name = args.files.input.display().to_string();
    let dtype = super::parse_dtype(&args.dtype).with_context(|| format!("{in_name}: --dtype"))?;
    if args.reinterpret {
        super::map_file(&args.files, "reinterpreting", |t| {
            ops::reinterpret::reinterpret_cast_to(t, dtype)
        })
    } else {
        super::map_file(&args.files, "bitcasting", |t| {
            ops::bitcast::bitcast(t, dtype)
        })
    }
}

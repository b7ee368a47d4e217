//! `tensorcast graph optimize FILE.pb -o OUT.pb [--keep NODE]...`.

use anyhow::{Context, Result};
use tensorcast::graph::optimize_graph_def;
use tensorcast::proto::{GraphDef, Message};

use super::FileArg;
use crate::cli::EXIT_OK;

/// Arguments of `graph optimize`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The GraphDef file.
    pub file: FileArg,
    /// Where to write the optimized GraphDef (replaced atomically).
    #[arg(short, long)]
    pub output: FileArg,
    /// A node that must stay (one you fetch); repeatable.
    #[arg(long, value_name = "NODE")]
    pub keep: Vec<String>,
}

/// Runs `graph optimize`.
pub(crate) fn run(args: &Args) -> Result<i32> {
    let name = args.file.display().to_string();
    let bytes = std::fs::read(&args.file).with_context(|| name.clone())?;
    let gd =
        GraphDef::decode(bytes.as_slice()).with_context(|| format!("{name}: invalid GraphDef"))?;
    let keep: Vec<&str> = args.keep.iter().map(String::as_str).collect();
    let (out, removed) = optimize_graph_def(&gd, &keep).with_context(|| name.clone())?;
    let out_name = args.output.display().to_string();
    let tmp = args.output.with_extension("pb.tmp");
    std::fs::write(&tmp, out.encode_to_vec()).with_context(|| out_name.clone())?;
    std::fs::rename(&tmp, &args.output).with_context(|| out_name)?;
    eprintln!(
        "removed {} node(s){}{}",
        removed.len(),
        if removed.is_empty() { "" } else { ": " },
        removed.join(", ")
    );
    Ok(EXIT_OK)
}

//! `tensorcast graph optimize FILE.pb -o OUT.pb [--keep NODE]...`.

use anyhow::{Context, Result};
use tensorcast::graph::optimize_graph_def_owned;
use tensorcast::proto::{GraphDef, Message};

use super::{safe, shown, FileArg};
use crate::cli::EXIT_OK;

/// Arguments of `graph optimize`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The GraphDef file (`-`: standard input).
    pub file: FileArg,
    /// Where to write the optimized GraphDef (replaced atomically; `-`: standard output).
    #[arg(short, long)]
    pub output: FileArg,
    /// A node that must stay (one you fetch); repeatable.
    #[arg(long, value_name = "NODE")]
    pub keep: Vec<String>,
}

/// Runs `graph optimize`.
pub(crate) fn run(args: &Args) -> Result<i32> {
    let bytes = crate::cli::source::load_bytes(&args.file)?;
    let gd = GraphDef::decode(bytes.as_slice())
        .with_context(|| format!("{}: invalid GraphDef", shown(&args.file)))?;
    drop(bytes);
    let keep: Vec<&str> = args.keep.iter().map(String::as_str).collect();
    let (out, removed) = optimize_graph_def_owned(gd, &keep).with_context(|| shown(&args.file))?;
    crate::cli::source::write_bytes(&args.output, &out.encode_to_vec())?;
    let removed: Vec<String> = removed.iter().map(|n| safe(n)).collect();
    eprintln!(
        "removed {} node(s){}{}",
        removed.len(),
        if removed.is_empty() { "" } else { ": " },
        removed.join(", ")
    );
    Ok(EXIT_OK)
}

//! `tensorcast graph optimize FILE.pb -o OUT.pb [--keep NODE]...`.

use anyhow::{Context, Result};
use tensorcast::graph::optimize_graph_def_owned;
use tensorcast::proto::{graph_def_to_text, GraphDef, Message};

use super::{safe, shown, FileArg};
use crate::cli::EXIT_OK;

/// Arguments of `graph optimize`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The GraphDef file, binary or text (`-`: standard input).
    pub file: FileArg,
    /// Where to write the optimized GraphDef (replaced atomically; `-`: standard output).
    #[arg(short, long)]
    pub output: FileArg,
    /// A node that must stay (one you fetch); repeatable.
    #[arg(long, value_name = "NODE")]
    pub keep: Vec<String>,
    /// Write the text format (also chosen by a `.pbtxt` output name).
    #[arg(long)]
    pub text: bool,
}

/// Runs `graph optimize`.
pub(crate) fn run(args: &Args) -> Result<i32> {
    let bytes = super::load_graph_def_bytes(&args.file)?;
    let gd = GraphDef::decode(bytes.as_slice())
        .with_context(|| format!("{}: invalid GraphDef", shown(&args.file)))?;
    drop(bytes);
    let keep: Vec<&str> = args.keep.iter().map(String::as_str).collect();
    let (out, removed) = optimize_graph_def_owned(gd, &keep).with_context(|| shown(&args.file))?;
    let encoded = if args.text || super::is_text_path(&args.output) {
        graph_def_to_text(&out)
            .with_context(|| shown(&args.output))?
            .into_bytes()
    } else {
        out.encode_to_vec()
    };
    crate::cli::source::write_bytes(&args.output, &encoded)?;
    let removed: Vec<String> = removed.iter().map(|n| safe(n)).collect();
    eprintln!(
        "removed {} node(s){}{}",
        removed.len(),
        if removed.is_empty() { "" } else { ": " },
        removed.join(", ")
    );
    Ok(EXIT_OK)
}

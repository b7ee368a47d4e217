//! `tensorcast graph inspect|run|optimize|dot FILE.pb`: GraphDefs (as `tf.io.write_graph`
//! writes them) looked at, run on tensorcast's kernels, optimized, drawn.

pub(crate) mod dot;
pub(crate) mod inspect;
pub(crate) mod optimize;
pub(crate) mod run;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tensorcast::graph::{import_graph_def_bytes, Graph};

/// Arguments of `graph`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(subcommand)]
    pub command: Command,
}

/// The `graph` subcommands.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum Command {
    /// Nodes with op, inputs, attrs, and each output's dtype and inferred shape.
    Inspect(inspect::Args),
    /// Run the graph: feed tensor files, fetch outputs, write them to a tensor file.
    Run(run::Args),
    /// Write the graph after the optimization pass (BroadcastTo dropped where its consumers
    /// broadcast anyway), as a GraphDef TensorFlow still loads.
    Optimize(optimize::Args),
    /// Print the graph as Graphviz dot text.
    Dot(dot::Args),
}

/// Runs `graph`.
pub(crate) fn run(args: &Args) -> Result<i32> {
    match &args.command {
        Command::Inspect(a) => inspect::run(a),
        Command::Run(a) => run::run(a),
        Command::Optimize(a) => optimize::run(a),
        Command::Dot(a) => dot::run(a),
    }
}

/// Reads and imports a GraphDef file; errors name the file.
pub(crate) fn load(path: &Path) -> Result<Graph> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).with_context(|| name.clone())?;
    let graph = Graph::new();
    import_graph_def_bytes(&graph, &bytes).with_context(|| name)?;
    Ok(graph)
}

/// A path argument.
pub(crate) type FileArg = PathBuf;

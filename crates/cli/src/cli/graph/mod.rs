//! `tensorcast graph inspect|run|optimize|dot|bench FILE.pb`: GraphDefs (as `tf.io.write_graph`
//! writes them) looked at, run on tensorcast's kernels, optimized, drawn, timed.
//!
//! Every subcommand reads its GraphDef through the CLI's one input layer (`-` for standard
//! input, pipes and FIFOs bounded by `--max-stream`, `--mmap`) and writes through its one
//! atomic output layer; every string that comes from the GraphDef is escaped before it reaches
//! the terminal (or, in `graph dot`, the DOT text).

pub(crate) mod bench;
pub(crate) mod dot;
pub(crate) mod inspect;
pub(crate) mod optimize;
pub(crate) mod run;

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
use tensorcast::graph::{import_graph_def_bytes, Graph};
use tensorcast::proto::{graph_def_text_to_binary, looks_like_graph_def_text};

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
    /// Time `Session::run` (or a SavedModel signature): min, median and max latency over
    /// --runs runs after a warm-up.
    Bench(bench::Args),
}

/// Runs `graph`.
pub(crate) fn run(command: &Command) -> Result<i32> {
    match command {
        Command::Inspect(a) => inspect::run(a),
        Command::Run(a) => run::run(a),
        Command::Optimize(a) => optimize::run(a),
        Command::Dot(a) => dot::run(a),
        Command::Bench(a) => bench::run(a),
    }
}

/// The name of `path` as errors show it (escaped).
pub(crate) fn shown(path: &Path) -> String {
    tensorcast::io::escaped(&path.display().to_string())
}

/// A GraphDef file's binary wire bytes: the file's own bytes (never copied), or what its text
/// form encodes to.
pub(crate) enum GraphDefBytes {
    /// A binary file, as the input layer read (or mapped) it.
    Binary(tensorcast::buffer::Buffer),
    /// A text file, encoded.
    Text(Vec<u8>),
}

impl GraphDefBytes {
    /// The wire bytes.
    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            GraphDefBytes::Binary(b) => b.as_slice(),
            GraphDefBytes::Text(v) => v,
        }
    }
}

/// Reads a GraphDef file through the input layer as binary wire bytes: a text-format file
/// (`.pbtxt`, detected by its content) is parsed and encoded. Errors name the file.
pub(crate) fn load_graph_def_bytes(path: &Path) -> Result<GraphDefBytes> {
    let bytes = crate::cli::source::load_bytes(path)?;
    if looks_like_graph_def_text(bytes.as_slice()) {
        let text = std::str::from_utf8(bytes.as_slice())
            .map_err(|e| anyhow!("{}: text GraphDef is not UTF-8: {e}", shown(path)))?;
        return graph_def_text_to_binary(text)
            .map(GraphDefBytes::Text)
            .with_context(|| format!("{}: text GraphDef", shown(path)));
    }
    Ok(GraphDefBytes::Binary(bytes))
}

/// The folder of a SavedModel path (the folder itself, or the folder of its `saved_model.pb`).
pub(crate) fn saved_model_dir(path: &Path) -> PathBuf {
    if path.is_file() {
        path.parent().unwrap_or(Path::new(".")).to_path_buf()
    } else {
        path.to_path_buf()
    }
}

/// Reads (through the input layer) and imports a GraphDef file, binary or text; errors name
/// the file. A SavedModel (folder or `saved_model.pb`) gives the graph of its meta graph tagged
/// `serve` (or its only meta graph), function library included.
pub(crate) fn load(path: &Path) -> Result<Graph> {
    if tensorcast::io::saved_model::is_saved_model(path) {
        let dir = saved_model_dir(path);
        let sm = tensorcast::io::saved_model::SavedModel::open(
            &dir,
            &crate::cli::source::read_options(),
        )
        .with_context(|| shown(&dir))?;
        crate::cli::saved_model::warn(&sm);
        let metas = sm.meta_graphs_sorted();
        let meta = sm
            .meta_graph(&["serve"])
            .or_else(|| (metas.len() == 1).then(|| metas[0]))
            .ok_or_else(|| {
                anyhow!(
                    "{}: no meta graph tagged 'serve' among {} meta graphs",
                    shown(&dir),
                    metas.len()
                )
            })?;
        let graph = Graph::new();
        if let Some(gd) = &meta.graph_def {
            tensorcast::graph::import_graph_def(&graph, gd).with_context(|| shown(&dir))?;
        }
        return Ok(graph);
    }
    let bytes = load_graph_def_bytes(path)?;
    let graph = Graph::new();
    import_graph_def_bytes(&graph, bytes.as_slice()).with_context(|| shown(path))?;
    Ok(graph)
}

/// True when `path` names a text-format GraphDef by its extension (`.pbtxt`, `.pbtext`,
/// `.txt`).
pub(crate) fn is_text_path(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "pbtxt" | "pbtext" | "txt"))
}

/// `s` safe to print on a terminal: control characters escaped (see
/// [`crate::cli::source::terminal_safe`]), newlines too.
pub(crate) fn safe(s: &str) -> String {
    crate::cli::source::terminal_safe(s).replace('\n', "\\n")
}

/// A path argument.
pub(crate) type FileArg = PathBuf;

//! `tensorcast graph run FILE.pb --feed x=in.npy --fetch y:0 [-o out.npz] [--no-optimize]`, and
//! `tensorcast graph run SAVED_MODEL_DIR [--signature serving_default] [--tag-set serve]
//! --input x=in.npy [-o out.npz]`.

use std::io::Write;

use anyhow::{anyhow, bail, Context, Result};
use tensorcast::graph::{Error, Graph, Session, SessionOptions};
use tensorcast::io::NamedTensor;
use tensorcast::Tensor;

use super::FileArg;
use crate::cli::EXIT_OK;

/// What `graph run` and `graph bench` take to run a model: the graph or SavedModel, its feeds
/// and fetches, and for a SavedModel the signature and tag set.
#[derive(clap::Args, Debug)]
pub(crate) struct ModelArgs {
    /// The GraphDef file (`-`: standard input; binary or text), or a SavedModel folder.
    pub file: FileArg,
    /// `NAME=FILE`: feed tensor NAME (`x` or `x:0`) from FILE (any format the CLI reads; a
    /// file with several tensors takes `NAME=FILE:member`). For a SavedModel, NAME is a
    /// signature input key (as with --input).
    #[arg(long, value_name = "NAME=FILE")]
    pub feed: Vec<String>,
    /// `KEY=FILE`: a SavedModel signature's input KEY from FILE (as --feed).
    #[arg(long, value_name = "KEY=FILE")]
    pub input: Vec<String>,
    /// A tensor to fetch (`y` or `y:0`); repeatable. Required for a GraphDef; for a
    /// SavedModel, signature output keys (default: every output).
    #[arg(long, value_name = "NAME")]
    pub fetch: Vec<String>,
    /// The SavedModel signature to run.
    #[arg(long, value_name = "KEY", default_value = "serving_default")]
    pub signature: String,
    /// The SavedModel meta graph's tags, comma-separated.
    #[arg(long, value_name = "TAGS", default_value = "serve")]
    pub tag_set: String,
}

/// Arguments of `graph run`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Write the fetched tensors here (format from the extension, or --to); without it, print them.
    #[arg(short, long)]
    pub output: Option<FileArg>,
    /// Output format (npy, npz, safetensors, pb).
    #[arg(long, value_name = "FORMAT")]
    pub to: Option<String>,
    /// Run without the optimization pass.
    #[arg(long)]
    pub no_optimize: bool,
    /// Run without element-wise fusion (constant folding stays on).
    #[arg(long)]
    pub no_fuse: bool,
}

/// The tensors of `NAME=FILE` specs (`--feed`, `--input`), in order.
pub(super) fn load_feeds<'a>(
    specs: impl Iterator<Item = &'a String>,
) -> Result<Vec<(String, Tensor)>> {
    specs.map(|f| load_feed(f)).collect()
}

fn load_feed(spec: &str) -> Result<(String, Tensor)> {
    let (name, file) = spec
        .split_once('=')
        .ok_or_else(|| anyhow!("--feed {spec}: expected NAME=FILE"))?;
    let (path, member) = match file.rsplit_once(':') {
        Some((p, m)) if !std::path::Path::new(file).exists() => (p, Some(m)),
        _ => (file, None),
    };
    let contents = crate::cli::load(std::path::Path::new(path))?;
    let mut tensors = contents.tensors;
    let t = match member {
        Some(m) => tensors
            .into_iter()
            .find(|t| t.name == m)
            .ok_or_else(|| anyhow!("{path}: no tensor named {m}"))?,
        None if tensors.len() == 1 => tensors.remove(0),
        None => bail!(
            "{path}: holds {} tensors; say which with {name}={path}:MEMBER",
            tensors.len()
        ),
    };
    Ok((name.to_string(), t.tensor))
}

/// The options `graph run` and `graph bench` run a GraphDef or a SavedModel with: optimized
/// unless `--no-optimize` (fused unless `--no-fuse`), its constants and what its kernels
/// allocate from values they read bounded by `--max-memory`.
pub(super) fn session_options(no_optimize: bool, no_fuse: bool) -> SessionOptions {
    let max_memory = crate::cli::source::read_options().max_memory;
    SessionOptions {
        optimize: !no_optimize,
        fuse: !no_fuse,
        max_constant_bytes: max_memory,
        max_allocation_bytes: max_memory,
        ..SessionOptions::default()
    }
}

/// The session `graph run` and `graph bench` run a GraphDef in ([`session_options`]).
pub(super) fn session(graph: &Graph, no_optimize: bool, no_fuse: bool) -> Session {
    Session::with_options(graph, session_options(no_optimize, no_fuse))
}

/// A run's error as one line: the limits it hit name `--max-memory`, a node's error names the
/// node.
fn run_error(e: &Error) -> anyhow::Error {
    match (e, e.node()) {
        (Error::ConstantBudget { needed, limit }, _) => anyhow!(
            "the constants this run needs hold {needed} bytes, more than --max-memory \
             ({limit} bytes); raise --max-memory to run it"
        ),
        (Error::AllocationLimit { limit, .. }, Some(node)) => anyhow!(
            "node {}: {}; raise --max-memory (now {limit} bytes) to run it",
            super::safe(node),
            super::safe(&e.to_string())
        ),
        (_, Some(node)) => anyhow!(
            "node {}: {}",
            super::safe(node),
            super::safe(&e.to_string())
        ),
        (_, None) => anyhow!("{}", super::safe(&e.to_string())),
    }
}

/// The npz/safetensors member name of a fetch (`y:0` -> `y_0`), refused where a tool that
/// extracts the archive could be led out of its folder (`..` or `.` parts, a leading `/`).
fn member_name(fetch: &str) -> Result<String> {
    let name = fetch.replace(':', "_");
    if name.starts_with('/')
        || name
            .split('/')
            .any(|p| p.is_empty() || p == "." || p == "..")
    {
        bail!(
            "--fetch {}: the name would make an unsafe file name in the output archive \
             (a '.' or '..' part); fetch it into a file of its own",
            super::safe(fetch)
        );
    }
    Ok(name)
}

/// Runs `graph run`.
pub(crate) fn run(args: &Args) -> Result<i32> {
    if tensorcast::io::saved_model::is_saved_model(&args.model.file) {
        return run_saved_model(args);
    }
    if !args.model.input.is_empty() {
        bail!("--input names a SavedModel signature's inputs; a GraphDef takes --feed NAME=FILE");
    }
    if args.model.fetch.is_empty() {
        bail!("graph run on a GraphDef needs at least one --fetch NAME");
    }
    // Everything about the output is checked before the graph runs.
    let members: Vec<String> = match &args.output {
        Some(_) => args
            .model
            .fetch
            .iter()
            .map(|f| member_name(f))
            .collect::<Result<_>>()?,
        None => Vec::new(),
    };
    let mut seen = std::collections::HashSet::new();
    if let Some(dup) = members.iter().find(|m| !seen.insert(m.as_str())) {
        bail!(
            "--fetch: two fetches would both be written as '{}'; fetch each tensor once",
            super::safe(dup)
        );
    }
    let format = match &args.output {
        Some(path) => Some(
            crate::cli::output_format(path, args.to.as_deref())
                .with_context(|| super::shown(path))?,
        ),
        None => None,
    };
    let graph = super::load(&args.model.file)?;
    let name = super::shown(&args.model.file);
    let feeds = load_feeds(args.model.feed.iter())?;
    let feed_refs: Vec<(&str, Tensor)> =
        feeds.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    let fetch: Vec<&str> = args.model.fetch.iter().map(String::as_str).collect();
    let session = session(&graph, args.no_optimize, args.no_fuse);
    let out = session
        .run(&feed_refs, &fetch, &[])
        .map_err(|e| run_error(&e))
        .with_context(|| name)?;
    match (&args.output, format) {
        (Some(path), Some(format)) => {
            let tensors: Vec<NamedTensor> = members
                .into_iter()
                .zip(out)
                .map(|(name, tensor)| NamedTensor { name, tensor })
                .collect();
            crate::cli::write(path, format, &tensors)?;
        }
        _ => {
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            for (n, t) in args.model.fetch.iter().zip(&out) {
                writeln!(stdout, "{}: {}", super::safe(n), t.debug_string(24))?;
            }
            stdout.flush()?;
        }
    }
    Ok(EXIT_OK)
}

/// `graph run` on a SavedModel: the signature's outputs (all, or those fetched by key), named
/// by key.
/// The SavedModel `--model` names, loaded with the tags of `--tag-set` to run with `options`
/// (its file read and its runs bounded by `--max-memory` as a GraphDef's are), and its name as
/// messages show it.
pub(super) fn load_saved_model(
    m: &ModelArgs,
    options: SessionOptions,
) -> Result<(tensorcast::graph::SavedModel, String)> {
    let dir = super::saved_model_dir(&m.file);
    let name = super::shown(&dir);
    let tags: Vec<&str> = m
        .tag_set
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    let model = tensorcast::graph::SavedModel::load_with_options(
        &dir,
        &tags,
        options,
        &crate::cli::source::read_options(),
    )
    .map_err(|e| run_error(&e))
    .with_context(|| name.clone())?;
    for w in model.warnings() {
        eprintln!(
            "tensorcast: warning: {}",
            crate::cli::source::terminal_safe(w)
        );
    }
    Ok((model, name))
}

fn run_saved_model(args: &Args) -> Result<i32> {
    let format = match &args.output {
        Some(path) => Some(
            crate::cli::output_format(path, args.to.as_deref())
                .with_context(|| super::shown(path))?,
        ),
        None => None,
    };
    let (model, name) =
        load_saved_model(&args.model, session_options(args.no_optimize, args.no_fuse))?;
    let inputs = load_feeds(args.model.input.iter().chain(&args.model.feed))?;
    let refs: Vec<(&str, Tensor)> = inputs
        .iter()
        .map(|(n, t)| (n.as_str(), t.clone()))
        .collect();
    let out = model
        .run(&args.model.signature, &refs)
        .map_err(|e| run_error(&e))
        .with_context(|| name.clone())?;
    let out: Vec<(String, Tensor)> = if args.model.fetch.is_empty() {
        out
    } else {
        let mut picked = Vec::with_capacity(args.model.fetch.len());
        for f in &args.model.fetch {
            let t = out.iter().find(|(k, _)| k == f).ok_or_else(|| {
                anyhow!(
                    "{name}: signature '{}' has no output '{}'; its outputs are {}",
                    super::safe(&args.model.signature),
                    super::safe(f),
                    out.iter()
                        .map(|(k, _)| super::safe(k))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?;
            picked.push(t.clone());
        }
        picked
    };
    match (&args.output, format) {
        (Some(path), Some(format)) => {
            let tensors: Vec<NamedTensor> = out
                .into_iter()
                .map(|(k, tensor)| {
                    Ok(NamedTensor {
                        name: member_name(&k)?,
                        tensor,
                    })
                })
                .collect::<Result<_>>()?;
            crate::cli::write(path, format, &tensors)?;
        }
        _ => {
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            for (k, t) in &out {
                writeln!(stdout, "{}: {}", super::safe(k), t.debug_string(24))?;
            }
            stdout.flush()?;
        }
    }
    Ok(EXIT_OK)
}

//! `tensorcast graph run FILE.pb --feed x=in.npy --fetch y:0 [-o out.npz] [--no-optimize]`.

use anyhow::{anyhow, bail, Context, Result};
use tensorcast::graph::{Session, SessionOptions};
use tensorcast::io::NamedTensor;
use tensorcast::Tensor;

use super::FileArg;
use crate::cli::EXIT_OK;

/// Arguments of `graph run`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The GraphDef file.
    pub file: FileArg,
    /// `NAME=FILE`: feed tensor NAME (`x` or `x:0`) from FILE (any format the CLI reads; a
    /// file with several tensors takes `NAME=FILE:member`).
    #[arg(long, value_name = "NAME=FILE")]
    pub feed: Vec<String>,
    /// A tensor to fetch (`y` or `y:0`); repeatable.
    #[arg(long, value_name = "NAME", required = true)]
    pub fetch: Vec<String>,
    /// Write the fetched tensors here (format from the extension, or --to); without it, print them.
    #[arg(short, long)]
    pub output: Option<FileArg>,
    /// Output format (npy, npz, safetensors, pb).
    #[arg(long, value_name = "FORMAT")]
    pub to: Option<String>,
    /// Run without the optimization pass.
    #[arg(long)]
    pub no_optimize: bool,
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

/// Runs `graph run`.
pub(crate) fn run(args: &Args) -> Result<i32> {
    let graph = super::load(&args.file)?;
    let name = args.file.display().to_string();
    let feeds: Vec<(String, Tensor)> = args
        .feed
        .iter()
        .map(|f| load_feed(f))
        .collect::<Result<_>>()?;
    let feed_refs: Vec<(&str, Tensor)> =
        feeds.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    let fetch: Vec<&str> = args.fetch.iter().map(String::as_str).collect();
    let session = Session::with_options(
        &graph,
        SessionOptions {
            optimize: !args.no_optimize,
            ..SessionOptions::default()
        },
    );
    let out = session
        .run(&feed_refs, &fetch, &[])
        .map_err(|e| match e.node() {
            Some(node) => anyhow!("node {node}: {e}"),
            None => anyhow!("{e}"),
        })
        .with_context(|| name)?;
    match &args.output {
        None => {
            for (n, t) in args.fetch.iter().zip(&out) {
                println!("{n}: {}", t.debug_string(24));
            }
        }
        Some(path) => {
            let format = crate::cli::output_format(path, args.to.as_deref())
                .context(path.display().to_string())?;
            let tensors: Vec<NamedTensor> = args
                .fetch
                .iter()
                .zip(out)
                .map(|(n, tensor)| NamedTensor {
                    name: n.replace(':', "_"),
                    tensor,
                })
                .collect();
            crate::cli::write(path, format, &tensors)?;
        }
    }
    Ok(EXIT_OK)
}

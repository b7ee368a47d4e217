//! `tensorcast graph inspect FILE.pb [--json]`.

use std::io::Write;

use anyhow::Result;
use serde_json::json;
use tensorcast::graph::summarize_attr;

use super::{safe, FileArg};
use crate::cli::EXIT_OK;

/// Arguments of `graph inspect`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The GraphDef file (binary, as `tf.io.write_graph(..., as_text=False)` writes it; `-`:
    /// standard input).
    pub file: FileArg,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `graph inspect`.
pub(crate) fn run(args: &Args) -> Result<i32> {
    let graph = super::load(&args.file)?;
    let nodes = graph.nodes();
    // Written through a buffer whose errors are returned: a closed pipe (`| head`) ends the
    // command quietly (main treats a broken pipe as success), never a panic.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        let list: Vec<_> = nodes
            .iter()
            .map(|n| {
                let attrs: serde_json::Map<String, serde_json::Value> = n
                    .attrs()
                    .iter()
                    .map(|(k, v)| (k.clone(), json!(summarize_attr(v))))
                    .collect();
                let outputs: Vec<_> = (0..n.num_outputs())
                    .map(|i| {
                        json!({
                            "dtype": n.output_type(i).map(|d| d.name()),
                            "shape": n.output_shape(i).map(|s| s.to_string()),
                        })
                    })
                    .collect();
                json!({
                    "name": n.name(), "op": n.op_type(), "inputs": n.inputs(),
                    "device": n.requested_device(), "attrs": attrs, "outputs": outputs,
                })
            })
            .collect();
        let v = json!({"producer": graph.versions().producer, "nodes": list});
        writeln!(out, "{v}")?;
        out.flush()?;
        return Ok(EXIT_OK);
    }
    writeln!(
        out,
        "{} nodes, producer {}",
        nodes.len(),
        graph.versions().producer
    )?;
    writeln!(
        out,
        "{:<24} {:<12} {:<28} {:<26} attrs",
        "node", "op", "inputs", "outputs"
    )?;
    for n in &nodes {
        let outputs: Vec<String> = (0..n.num_outputs())
            .map(|i| {
                format!(
                    "{} {}",
                    n.output_type(i).map(|d| d.name()).unwrap_or_default(),
                    n.output_shape(i).map(|s| s.to_string()).unwrap_or_default()
                )
            })
            .collect();
        let outputs = if n.is_registered() {
            outputs.join(", ")
        } else {
            "(op unknown here)".into()
        };
        let attrs: Vec<String> = n
            .attrs()
            .iter()
            .filter(|(k, _)| k.as_str() != "value")
            .map(|(k, v)| format!("{}={}", safe(k), safe(&summarize_attr(v))))
            .collect();
        writeln!(
            out,
            "{:<24} {:<12} {:<28} {:<26} {}",
            safe(n.name()),
            safe(n.op_type()),
            safe(&n.inputs().join(", ")),
            outputs,
            attrs.join(" ")
        )?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}

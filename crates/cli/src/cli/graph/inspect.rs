//! `tensorcast graph inspect FILE.pb [--json]`.

use anyhow::Result;
use serde_json::json;
use tensorcast::graph::summarize_attr;

use super::FileArg;
use crate::cli::EXIT_OK;

/// Arguments of `graph inspect`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The GraphDef file (binary, as `tf.io.write_graph(..., as_text=False)` writes it).
    pub file: FileArg,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Runs `graph inspect`.
pub(crate) fn run(args: &Args) -> Result<i32> {
    let graph = super::load(&args.file)?;
    let nodes = graph.nodes();
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
        println!("{v}");
        return Ok(EXIT_OK);
    }
    println!(
        "{} nodes, producer {}",
        nodes.len(),
        graph.versions().producer
    );
    println!(
        "{:<24} {:<12} {:<28} {:<26} attrs",
        "node", "op", "inputs", "outputs"
    );
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
            .map(|(k, v)| format!("{k}={}", summarize_attr(v)))
            .collect();
        println!(
            "{:<24} {:<12} {:<28} {:<26} {}",
            n.name(),
            n.op_type(),
            n.inputs().join(", "),
            outputs,
            attrs.join(" ")
        );
    }
    Ok(EXIT_OK)
}

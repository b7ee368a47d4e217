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
        let functions: Vec<_> = functions(&graph)?
            .iter()
            .map(|f| {
                let sig = f.signature.clone().unwrap_or_default();
                let nodes: Vec<_> = f
                    .node_def
                    .iter()
                    .map(|n| json!({"name": n.name, "op": n.op, "inputs": n.input}))
                    .collect();
                json!({
                    "name": sig.name,
                    "inputs": sig.input_arg.iter().map(|a| a.name.clone()).collect::<Vec<_>>(),
                    "outputs": sig.output_arg.iter().map(|a| a.name.clone()).collect::<Vec<_>>(),
                    "nodes": nodes,
                })
            })
            .collect();
        let missing: Vec<_> = missing_kernels(&graph)
            .iter()
            .map(|(op, n)| json!({"op": op, "nodes": n}))
            .collect();
        let v = json!({
            "producer": graph.versions().producer, "nodes": list, "functions": functions,
            "ops_without_kernel": missing,
        });
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
    let functions = functions(&graph)?;
    if !functions.is_empty() {
        writeln!(out, "\n{} functions in the library", functions.len())?;
        for f in &functions {
            let sig = f.signature.clone().unwrap_or_default();
            let args = |l: &[tensorcast::proto::ArgDefProto]| {
                l.iter()
                    .map(|a| safe(&a.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            writeln!(
                out,
                "function {}({}) -> ({}): {} nodes",
                safe(&sig.name),
                args(&sig.input_arg),
                args(&sig.output_arg),
                f.node_def.len()
            )?;
            for n in &f.node_def {
                writeln!(
                    out,
                    "  {:<22} {:<12} {}",
                    safe(&n.name),
                    safe(&n.op),
                    safe(&n.input.join(", "))
                )?;
            }
        }
    }
    let missing = missing_kernels(&graph);
    if missing.is_empty() {
        writeln!(out, "\nevery op this graph runs has a kernel in tensorcast")?;
    } else {
        let list: Vec<String> = missing
            .iter()
            .map(|(op, n)| format!("{} ({n} node{})", safe(op), if *n == 1 { "" } else { "s" }))
            .collect();
        writeln!(
            out,
            "\n{} op{} without a kernel in tensorcast: {}",
            missing.len(),
            if missing.len() == 1 { "" } else { "s" },
            list.join(", ")
        )?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}

/// The functions of the graph's library (none without one).
fn functions(graph: &tensorcast::graph::Graph) -> Result<Vec<tensorcast::proto::FunctionDef>> {
    let bytes = graph.function_library_bytes();
    let library = tensorcast::proto::FunctionDefLibrary::decode_optional(bytes.as_ref())
        .map_err(|e| anyhow::anyhow!("the function library does not decode: {e}"))?;
    Ok(library.function)
}

/// The ops without a kernel (counting function bodies through their calls); a library that
/// cannot be inlined counts its calls as ops without a kernel.
fn missing_kernels(graph: &tensorcast::graph::Graph) -> Vec<(String, usize)> {
    tensorcast::graph::ops_without_kernel(graph).unwrap_or_else(|_| {
        let mut m: std::collections::BTreeMap<String, usize> = Default::default();
        for n in graph.nodes().iter().filter(|n| !n.is_registered()) {
            *m.entry(n.op_type().to_string()).or_default() += 1;
        }
        m.into_iter().collect()
    })
}

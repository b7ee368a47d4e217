//! `tensorcast graph dot FILE.pb`: Graphviz text (`| dot -Tsvg > g.svg`).

use anyhow::Result;

use super::FileArg;
use crate::cli::EXIT_OK;

/// Arguments of `graph dot`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The GraphDef file.
    pub file: FileArg,
}

fn quote(s: &str) -> String {
    // Label text uses dot's own `\n` escape for line breaks; only quotes need escaping.
    format!("\"{}\"", s.replace('"', "\\\""))
}

/// Runs `graph dot`.
pub(crate) fn run(args: &Args) -> Result<i32> {
    let graph = super::load(&args.file)?;
    let mut out = String::from(
        "digraph tensorcast {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n",
    );
    for n in graph.nodes() {
        let shape = n.output_shape(0).map(|s| s.to_string()).unwrap_or_default();
        let dtype = n.output_type(0).map(|d| d.name()).unwrap_or_default();
        let label = format!("{}\\n{} {} {}", n.name(), n.op_type(), dtype, shape);
        out.push_str(&format!(
            "  {} [label={}];\n",
            quote(n.name()),
            quote(&label)
        ));
        for input in n.inputs() {
            match input.strip_prefix('^') {
                Some(c) => out.push_str(&format!(
                    "  {} -> {} [style=dashed];\n",
                    quote(c),
                    quote(n.name())
                )),
                None => {
                    let (src, label) = match input.rsplit_once(':') {
                        Some((s, k)) if k.bytes().all(|b| b.is_ascii_digit()) => (s, k),
                        _ => (input.as_str(), "0"),
                    };
                    out.push_str(&format!(
                        "  {} -> {} [label={}];\n",
                        quote(src),
                        quote(n.name()),
                        quote(label)
                    ));
                }
            }
        }
    }
    out.push_str("}\n");
    print!("{out}");
    Ok(EXIT_OK)
}

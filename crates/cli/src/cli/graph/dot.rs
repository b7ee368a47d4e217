//! `tensorcast graph dot FILE.pb`: Graphviz text (`| dot -Tsvg > g.svg`).

use std::io::Write;

use anyhow::Result;

use super::FileArg;
use crate::cli::EXIT_OK;

/// Arguments of `graph dot`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The GraphDef file (`-`: standard input).
    pub file: FileArg,
}

/// `s` as a DOT double-quoted string whose text reads as `s`: backslashes and quotes escaped
/// (so nothing in a name can end the string and add statements or attributes, nor become one
/// of dot's `\N`, `\G`, `\l` label escapes), control characters (newlines included) written
/// as visible `\xNN` text.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if c.is_control() => out.push_str(&format!("\\\\x{:02x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A node's label: name, then op, dtype and shape on a second line (dot's `\n` break between
/// parts that are each quoted-safe).
fn label(parts: [&str; 2]) -> String {
    let q: Vec<String> = parts
        .iter()
        .map(|p| {
            let q = quote(p);
            q[1..q.len() - 1].to_string()
        })
        .collect();
    format!("\"{}\\n{}\"", q[0], q[1])
}

/// Runs `graph dot`.
pub(crate) fn run(args: &Args) -> Result<i32> {
    let graph = super::load(&args.file)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    writeln!(
        out,
        "digraph tensorcast {{\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];"
    )?;
    let nodes = graph.nodes();
    let op_of: std::collections::HashMap<&str, &str> =
        nodes.iter().map(|n| (n.name(), n.op_type())).collect();
    for n in &nodes {
        let shape = n.output_shape(0).map(|s| s.to_string()).unwrap_or_default();
        let dtype = n.output_type(0).map(|d| d.name()).unwrap_or_default();
        let second = format!("{} {} {}", n.op_type(), dtype, shape);
        writeln!(
            out,
            "  {} [label={}];",
            quote(n.name()),
            label([n.name(), &second])
        )?;
        for input in n.inputs() {
            let id = tensorcast::graph::parse_tensor_name(input);
            match id.node {
                c if id.is_control() && input.starts_with('^') => {
                    writeln!(out, "  {} -> {} [style=dashed];", quote(c), quote(n.name()))?
                }
                src => {
                    let index = id.index.to_string();
                    // A loop's back edge (`NextIteration` into `Merge`): drawn dashed, in
                    // blue, and not used to rank the nodes, so the loop reads top to bottom.
                    let back = matches!(n.op_type(), "Merge" | "RefMerge")
                        && matches!(
                            op_of.get(src).copied(),
                            Some("NextIteration" | "RefNextIteration")
                        );
                    let style = if back {
                        ", style=dashed, color=blue, constraint=false"
                    } else {
                        ""
                    };
                    writeln!(
                        out,
                        "  {} -> {} [label={}{style}];",
                        quote(src),
                        quote(n.name()),
                        quote(&index)
                    )?;
                }
            }
        }
    }
    writeln!(out, "}}")?;
    out.flush()?;
    Ok(EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_escapes_what_could_end_the_string_or_expand() {
        assert_eq!(quote("a"), "\"a\"");
        assert_eq!(quote("P\\\"]; evil"), "\"P\\\\\\\"]; evil\"");
        assert_eq!(quote("x\ny\u{1b}"), "\"x\\\\x0ay\\\\x1b\"");
        assert_eq!(quote("\\N"), "\"\\\\N\"");
    }
}

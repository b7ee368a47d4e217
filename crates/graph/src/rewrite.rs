//! The optimization pass as a GraphDef rewrite (what `tensorcast graph optimize` writes): a
//! `BroadcastTo` is dropped where its consumers compute the same without it, so the graph
//! TensorFlow then loads never materialises that broadcast.
//!
//! A `BroadcastTo` node `b = BroadcastTo(x, s)` is removed, and its consumers read `x` directly,
//! when it has no control inputs, nothing depends on it by a control edge, it has at least one
//! consumer, and either
//! - its inferred output shape equals `x`'s, both fully known (a broadcast to the input's own
//!   shape), or
//! - every consumer is an element-wise binary op whose inferred output shape is fully known and
//!   equal to what broadcasting `x` against the consumer's other operand gives (the op
//!   broadcasts anyway).
//!
//! Nodes may be fetched by name from outside; a `BroadcastTo` that is itself fetched would
//! disappear, so [`optimize_graph_def`] takes the names to keep.

use std::collections::{HashMap, HashSet};

use tensorcast_proto::GraphDef;

use crate::error::Result;
use crate::graph::{Endpoint, Graph, Node};
use crate::import::import_graph_def;
use crate::infer::broadcast_binary;
use crate::session::kernels::is_elementwise_binary;
use crate::shape::PShape;

/// The GraphDef after the optimization pass, with the nodes named in `keep` (fetches) left in
/// place. Returns the rewritten GraphDef and the names of the removed nodes.
///
/// # Errors
/// As [`import_graph_def`], for a GraphDef that does not import.
pub fn optimize_graph_def(gd: &GraphDef, keep: &[&str]) -> Result<(GraphDef, Vec<String>)> {
    let graph = Graph::new();
    import_graph_def(&graph, gd)?;
    let nodes = graph.nodes();
    let mut consumers: HashMap<usize, Vec<(usize, usize)>> = HashMap::new();
    let mut control_targets: HashSet<usize> = HashSet::new();
    for n in &nodes {
        for (pos, ep) in n.inputs.iter().enumerate() {
            consumers.entry(ep.node).or_default().push((n.id, pos));
        }
        control_targets.extend(n.control_inputs.iter().copied());
    }
    let shape_of = |ep: &Endpoint| -> PShape {
        nodes[ep.node]
            .output_shapes
            .get(ep.index)
            .cloned()
            .flatten()
    };
    let known = |s: &PShape| s.as_ref().is_some_and(|d| d.iter().all(|&x| x >= 0));
    // Removed BroadcastTo id -> the endpoint its consumers read instead.
    let mut bypass: HashMap<usize, Endpoint> = HashMap::new();
    for n in nodes
        .iter()
        .filter(|n| n.op == "BroadcastTo" && n.registered)
    {
        if keep.contains(&n.name.as_str())
            || !n.control_inputs.is_empty()
            || control_targets.contains(&n.id)
        {
            continue;
        }
        let Some(cons) = consumers.get(&n.id).filter(|c| !c.is_empty()) else {
            continue;
        };
        let Some(&src) = n.inputs.first() else {
            continue;
        };
        let src_shape = shape_of(&src);
        let out_shape = n.output_shapes.first().cloned().flatten();
        let identity = known(&src_shape) && src_shape == out_shape;
        let fused = cons
            .iter()
            .all(|&(c, pos)| consumer_broadcasts_anyway(&nodes[c], pos, &src_shape, &shape_of));
        if identity || fused {
            bypass.insert(n.id, src);
        }
    }
    let mut out = gd.clone();
    let mut removed = Vec::new();
    let names: HashMap<usize, String> = nodes.iter().map(|n| (n.id, n.name.clone())).collect();
    let endpoint_name = |ep: &Endpoint| {
        if ep.index == 0 {
            names[&ep.node].clone()
        } else {
            format!("{}:{}", names[&ep.node], ep.index)
        }
    };
    let by_name: HashMap<&str, usize> = nodes.iter().map(|n| (n.name.as_str(), n.id)).collect();
    out.node.retain(|nd| {
        let drop = by_name
            .get(nd.name.as_str())
            .is_some_and(|id| bypass.contains_key(id));
        if drop {
            removed.push(nd.name.clone());
        }
        !drop
    });
    for nd in &mut out.node {
        for input in &mut nd.input {
            if input.starts_with('^') {
                continue;
            }
            let (name, index) = match input.rsplit_once(':') {
                Some((n, k)) if k.bytes().all(|b| b.is_ascii_digit()) && !k.is_empty() => {
                    (n, k.parse().unwrap_or(0))
                }
                _ => (input.as_str(), 0usize),
            };
            if index != 0 {
                continue;
            }
            if let Some(src) = by_name.get(name).and_then(|id| bypass.get(id)) {
                // A bypassed BroadcastTo may read another bypassed one: follow the chain.
                let mut ep = *src;
                while let Some(next) = bypass.get(&ep.node).filter(|_| ep.index == 0) {
                    ep = *next;
                }
                *input = endpoint_name(&ep);
            }
        }
    }
    Ok((out, removed))
}

/// True when the consumer `c` (an element-wise binary op reading the broadcast at input `pos`)
/// gives the same, fully known output shape reading `src_shape` instead.
fn consumer_broadcasts_anyway(
    c: &Node,
    pos: usize,
    src_shape: &PShape,
    shape_of: &impl Fn(&Endpoint) -> PShape,
) -> bool {
    if !is_elementwise_binary(&c.op) || c.inputs.len() != 2 {
        return false;
    }
    let other = shape_of(&c.inputs[1 - pos]);
    let want = c.output_shapes.first().cloned().flatten();
    if !want.as_ref().is_some_and(|d| d.iter().all(|&x| x >= 0)) {
        return false;
    }
    let got = if pos == 0 {
        broadcast_binary(src_shape, &other, true)
    } else {
        broadcast_binary(&other, src_shape, true)
    };
    matches!(got, Ok(g) if g == want)
}

//! The optimization pass as a GraphDef rewrite (what `tensorcast graph optimize` writes): a
//! `BroadcastTo` is dropped where its consumers compute the same without it, so the graph
//! TensorFlow then loads never materialises that broadcast.
//!
//! A `BroadcastTo` node `b = BroadcastTo(x, s)` is removed, and its consumers read `x` directly,
//! when it has no control inputs, nothing depends on it by a control edge, it has at least one
//! consumer, and either
//! - its inferred output shape equals `x`'s, both fully known (a broadcast to the input's own
//!   shape), or
//! - every consumer is an element-wise binary op whose output shape is fully known and equal to
//!   what it computes from its operands **as they are in the rewritten graph** (`x` for `b`,
//!   and for every other operand that is itself a removed broadcast, that broadcast's input).
//!
//! The decision is made one `BroadcastTo` at a time in dependency order, each on the graph as
//! the earlier removals left it, so every node that stays keeps the output shape it had: the
//! rewritten graph computes the same values (`AddV2(b, b)` keeps its `b` unless `x` alone gives
//! the same shape, and of two broadcasts feeding one op at most what keeps the output's shape
//! is removed).
//!
//! Nodes may be fetched by name from outside; a `BroadcastTo` that is itself fetched would
//! disappear, so [`optimize_graph_def`] takes the names to keep.

use std::collections::{HashMap, HashSet};

use tensorcast_proto::GraphDef;

use crate::build::graph::{Endpoint, Graph, Node};
use crate::error::Result;
use crate::import::{import_graph_def, parse_input};
use crate::infer::broadcast_binary;
use crate::registry::opdef::Op;
use crate::shape::PShape;

/// The GraphDef after the optimization pass, with the nodes named in `keep` (fetches) left in
/// place. Returns the rewritten GraphDef and the names of the removed nodes.
///
/// # Errors
/// As [`import_graph_def`], for a GraphDef that does not import.
pub fn optimize_graph_def(gd: &GraphDef, keep: &[&str]) -> Result<(GraphDef, Vec<String>)> {
    optimize_graph_def_owned(gd.clone(), keep)
}

/// [`optimize_graph_def`] on a GraphDef the caller gives up: it is rewritten in place, so a
/// large graph is held once as a GraphDef (and once as the imported graph the rewrite decides
/// on), not twice.
///
/// # Errors
/// As [`import_graph_def`], for a GraphDef that does not import.
pub fn optimize_graph_def_owned(gd: GraphDef, keep: &[&str]) -> Result<(GraphDef, Vec<String>)> {
    let graph = Graph::new();
    import_graph_def(&graph, &gd)?;
    let nodes = graph.nodes();
    let mut consumers: HashMap<usize, Vec<(usize, usize)>> = HashMap::new();
    let mut control_targets: HashSet<usize> = HashSet::new();
    for n in &nodes {
        for (pos, ep) in n.inputs.iter().enumerate() {
            consumers.entry(ep.node).or_default().push((n.id, pos));
        }
        control_targets.extend(n.control_inputs.iter().copied());
    }
    let known = |s: &PShape| s.as_ref().is_some_and(|d| d.iter().all(|&x| x >= 0));
    // Removed BroadcastTo id -> the endpoint its consumers read instead (never itself removed:
    // chains are resolved as they are recorded).
    let mut bypass: HashMap<usize, Endpoint> = HashMap::new();
    // An endpoint as the rewritten graph reads it so far.
    let effective = |ep: Endpoint, bypass: &HashMap<usize, Endpoint>| match bypass.get(&ep.node) {
        Some(&src) if ep.index == 0 => src,
        _ => ep,
    };
    let shape_of = |ep: Endpoint| -> PShape {
        nodes[ep.node]
            .output_shapes
            .get(ep.index)
            .cloned()
            .flatten()
    };
    for id in dependency_order(&nodes) {
        let n = &nodes[id];
        if n.kind != Some(Op::BroadcastTo)
            || keep.contains(&n.name.as_str())
            || !n.control_inputs.is_empty()
            || control_targets.contains(&n.id)
        {
            continue;
        }
        let Some(cons) = consumers.get(&n.id).filter(|c| !c.is_empty()) else {
            continue;
        };
        let Some(&input) = n.inputs.first() else {
            continue;
        };
        let src = effective(input, &bypass);
        let src_shape = shape_of(src);
        let out_shape = n.output_shapes.first().cloned().flatten();
        let identity = known(&src_shape) && src_shape == out_shape;
        let fused = || {
            cons.iter().all(|&(c, _)| {
                let c = &nodes[c];
                // The consumer's operands as the graph reads them once `n` is removed too.
                let operand = |ep: &Endpoint| {
                    if ep.node == n.id && ep.index == 0 {
                        src_shape.clone()
                    } else {
                        shape_of(effective(*ep, &bypass))
                    }
                };
                consumer_keeps_shape(c, operand)
            })
        };
        if identity || fused() {
            bypass.insert(n.id, src);
        }
    }
    let mut out = gd;
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
            let (name, index) = parse_input(input);
            if index != 0 {
                continue;
            }
            if let Some(src) = by_name.get(name).and_then(|id| bypass.get(id)) {
                *input = endpoint_name(src);
            }
        }
    }
    Ok((out, removed))
}

/// True when `c`, an element-wise binary op, computes its (fully known) output shape from its
/// operands' shapes as `operand` gives them.
fn consumer_keeps_shape(c: &Node, operand: impl Fn(&Endpoint) -> PShape) -> bool {
    if !matches!(c.kind, Some(Op::Binary(_))) || c.inputs.len() != 2 {
        return false;
    }
    let want = c.output_shapes.first().cloned().flatten();
    if !want.as_ref().is_some_and(|d| d.iter().all(|&x| x >= 0)) {
        return false;
    }
    let got = broadcast_binary(&operand(&c.inputs[0]), &operand(&c.inputs[1]), true);
    matches!(got, Ok(g) if g == want)
}

/// The nodes' ids in an order where every node comes after its data and control inputs (a loop's back
/// edge, `NextIteration` into `Merge`, does not count: every imported node is placed).
fn dependency_order(nodes: &[std::sync::Arc<Node>]) -> Vec<usize> {
    let mut pending = vec![0usize; nodes.len()];
    let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for n in nodes {
        let back = |p: &usize| {
            crate::import::is_merge(&n.op) && crate::import::is_next_iteration(&nodes[*p].op)
        };
        for p in n
            .inputs
            .iter()
            .map(|e| e.node)
            .filter(|p| !back(p))
            .chain(n.control_inputs.iter().copied())
        {
            pending[n.id] += 1;
            consumers[p].push(n.id);
        }
    }
    let ready: Vec<usize> = (0..nodes.len())
        .rev()
        .filter(|&i| pending[i] == 0)
        .collect();
    crate::plan::order::kahn(ready, pending, &consumers)
}

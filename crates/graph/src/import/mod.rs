//! GraphDef import with TensorFlow's validation (`ImportGraphDef` / `import_graph_def(name="")`):
//! versions, node names, duplicates, inputs, output indices, control-input order, attrs, input
//! dtypes, shape functions, cycles. Iterative throughout: a deep or adversarial graph cannot
//! overflow the stack.

pub(crate) mod functions;

use std::collections::HashMap;

use bytes::Bytes;
use std::sync::Arc;

use tensorcast_proto::{GraphDef, Message, NodeDef, VersionDef};

use crate::build::finalize::Mode;
use crate::build::graph::{make_node, Endpoint, Graph, Node, NodeSpec, GRAPH_DEF_VERSION};
use crate::error::{Error, Result};

/// TensorFlow's node-name rule at import: `[A-Za-z0-9.][A-Za-z0-9_./>-]*`.
pub(crate) fn valid_node_name(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_ascii_alphanumeric() || first == '.')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '>' | '-'))
}

/// `name:k` (k all digits, fitting an `i32`) or `name` (output 0), as TensorFlow's import
/// parses an input: an index that does not fit leaves the whole string as the node's name
/// (`Unknown input node 'x:99999999999999999999999'`).
pub(crate) fn parse_input(s: &str) -> (&str, i64) {
    if let Some((name, k)) = s.rsplit_once(':') {
        if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(k) = k.parse::<i32>() {
                return (name, i64::from(k));
            }
        }
    }
    (s, 0)
}

/// TensorFlow's `TF_GRAPH_DEF_VERSION_MIN_PRODUCER`.
const GRAPH_DEF_VERSION_MIN_PRODUCER: i32 = 0;

/// Decodes GraphDef bytes and imports them into `graph` (see [`import_graph_def`]).
///
/// # Errors
/// [`Error::Decode`] for bytes that are not a GraphDef, else as [`import_graph_def`].
pub fn import_graph_def_bytes(graph: &Graph, bytes: &[u8]) -> Result<()> {
    let gd = GraphDef::decode(bytes).map_err(|e| Error::Decode(e.to_string()))?;
    let extras = Extras {
        versions: gd.versions.clone().unwrap_or_default(),
        library: gd.library.clone(),
        debug_info: gd.debug_info.clone(),
    };
    import_nodes(graph, extras, NodeDefs::Owned(gd.node))
}

/// The parts of a GraphDef besides its nodes.
struct Extras {
    versions: VersionDef,
    library: Option<Bytes>,
    debug_info: Option<Bytes>,
}

/// `b` appended to `a`: for encoded messages, protobuf's merge (repeated fields concatenate).
fn merged(a: Option<Bytes>, b: Option<Bytes>) -> Option<Bytes> {
    match (a, b) {
        (Some(a), Some(b)) if !b.is_empty() => {
            let mut v = a.to_vec();
            v.extend_from_slice(&b);
            Some(Bytes::from(v))
        }
        (a, b) => a.or(b),
    }
}

/// The nodes being imported: borrowed (each copied as it is built) or owned (each moved into
/// its node, so a decoded GraphDef's attrs are never held twice).
enum NodeDefs<'a> {
    Borrowed(&'a [NodeDef]),
    Owned(Vec<NodeDef>),
}

impl NodeDefs<'_> {
    fn as_slice(&self) -> &[NodeDef] {
        match self {
            NodeDefs::Borrowed(s) => s,
            NodeDefs::Owned(v) => v,
        }
    }

    /// Node `i`'s parts: copied, or moved out (each is taken once).
    fn take(&mut self, i: usize) -> NodeDef {
        match self {
            NodeDefs::Borrowed(s) => s[i].clone(),
            NodeDefs::Owned(v) => std::mem::take(&mut v[i]),
        }
    }
}

/// Imports `gd`'s nodes into `graph`, keeping their names (Python's `name=""`). Nodes may come in
/// any order; the graph lists them in the order TensorFlow's importer adds them (the GraphDef's
/// order when every node comes after its inputs, as TensorFlow's Python writes them; a loop's or
/// a conditional's nodes otherwise), so exporting an imported graph gives TensorFlow's
/// re-export. Importing into an empty graph takes the GraphDef's versions. On error the graph is
/// unchanged.
///
/// # Errors
/// TensorFlow's messages: versions, invalid or duplicate names, unknown inputs, invalid output
/// indices, control inputs before data inputs, cycles, missing attrs, disallowed types, input
/// dtypes, shape-function errors.
pub fn import_graph_def(graph: &Graph, gd: &GraphDef) -> Result<()> {
    let extras = Extras {
        versions: gd.versions.clone().unwrap_or_default(),
        library: gd.library.clone(),
        debug_info: gd.debug_info.clone(),
    };
    import_nodes(graph, extras, NodeDefs::Borrowed(&gd.node))
}

fn import_nodes(graph: &Graph, extras: Extras, mut defs: NodeDefs<'_>) -> Result<()> {
    let Extras {
        versions,
        library,
        debug_info,
    } = extras;
    if versions.producer < GRAPH_DEF_VERSION_MIN_PRODUCER {
        return Err(Error::ProducerTooOld {
            producer: versions.producer,
            min: GRAPH_DEF_VERSION_MIN_PRODUCER,
        });
    }
    if versions.min_consumer > GRAPH_DEF_VERSION {
        return Err(Error::MinConsumer {
            min_consumer: versions.min_consumer,
            current: GRAPH_DEF_VERSION,
        });
    }
    if versions.bad_consumers.contains(&GRAPH_DEF_VERSION) {
        return Err(Error::BadConsumer(GRAPH_DEF_VERSION));
    }
    let mut g = graph.write();
    let base = g.nodes.len();
    let nodes = defs.as_slice();
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(nodes.len());
    for (i, n) in nodes.iter().enumerate() {
        if !valid_node_name(&n.name) {
            return Err(Error::InvalidNodeName(n.name.clone()));
        }
        if index.insert(n.name.as_str(), i).is_some() || g.by_name.contains_key(&n.name) {
            return Err(Error::NodeNotUnique(n.name.clone()));
        }
        if n.op.is_empty() {
            return Err(Error::NoOperation(n.name.clone()));
        }
    }
    // Edges: (producer position in gd or existing id, output index).
    let n_new = nodes.len();
    let mut data: Vec<Vec<(Source, i64)>> = Vec::with_capacity(n_new);
    let mut control: Vec<Vec<Source>> = Vec::with_capacity(n_new);
    for n in nodes {
        let (mut d, mut c) = (Vec::new(), Vec::new());
        for s in &n.input {
            if let Some(ctrl) = s.strip_prefix('^') {
                c.push(
                    find(&index, &g.by_name, ctrl).ok_or_else(|| Error::UnknownInput {
                        node: n.name.clone(),
                        input: s.clone(),
                    })?,
                );
            } else {
                if !c.is_empty() {
                    return Err(Error::ControlBeforeData(n.name.clone()));
                }
                let (name, k) = parse_input(s);
                let src = find(&index, &g.by_name, name).ok_or_else(|| Error::UnknownInput {
                    node: n.name.clone(),
                    input: name.to_string(),
                })?;
                d.push((src, k));
            }
        }
        data.push(d);
        control.push(c);
    }
    // Topological order of the new nodes (Kahn's algorithm). As in TensorFlow, the only legal
    // cycles are loops: a `Merge`'s data input from a `NextIteration` (the back edge) does not
    // hold the `Merge` back; any other cycle is an error.
    let is_next = |s: &Source| match s {
        Source::New(p) => is_next_iteration(&nodes[*p].op),
        Source::Existing(id) => g.nodes.get(*id).is_some_and(|n| is_next_iteration(&n.op)),
    };
    let back: Vec<Vec<bool>> = (0..n_new)
        .map(|i| {
            let merge = is_merge(&nodes[i].op);
            data[i].iter().map(|(s, _)| merge && is_next(s)).collect()
        })
        .collect();
    let mut pending = vec![0usize; n_new];
    let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); n_new];
    for i in 0..n_new {
        let data_srcs = data[i]
            .iter()
            .zip(&back[i])
            .filter(|(_, b)| !**b)
            .map(|((s, _), _)| s);
        for s in data_srcs.chain(control[i].iter()) {
            if let Source::New(p) = s {
                pending[i] += 1;
                consumers[*p].push(i);
            }
        }
    }
    let order = graphdef_order(pending, &consumers);
    if order.len() < n_new {
        return Err(Error::Cycle(n_new - order.len()));
    }
    // Node ids follow that order (TensorFlow's importer adds nodes as it processes them, so
    // its graph - and what it exports - lists them in this order).
    let mut rank = vec![0usize; n_new];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r;
    }
    drop(index);
    drop(consumers);
    let producer = if base == 0 {
        versions.producer
    } else {
        g.versions.producer
    };
    let mut built: Vec<Option<Arc<Node>>> = vec![None; n_new];
    // `Merge` nodes built before the `NextIteration` of their back edge.
    let mut deferred: Vec<usize> = Vec::new();
    let mut budget = g.value_budget;
    for &i in &order {
        let n = defs.take(i);
        let id_of = |s: &Source| match s {
            Source::New(p) => base + rank[*p],
            Source::Existing(id) => *id,
        };
        let node_at = |id: usize| -> Option<&Node> {
            if id < base {
                g.nodes.get(id).map(Arc::as_ref)
            } else {
                built.get(id - base).and_then(Option::as_deref)
            }
        };
        let mut inputs = Vec::with_capacity(data[i].len());
        for ((s, k), &is_back) in data[i].iter().zip(&back[i]) {
            let id = id_of(s);
            if is_back && node_at(id).is_none() {
                // Checked (and named) once the `NextIteration` is built.
                deferred.push(rank[i]);
                inputs.push(Endpoint {
                    node: id,
                    index: usize::try_from(*k).unwrap_or(usize::MAX),
                });
                continue;
            }
            let p = node_at(id).ok_or_else(|| Error::Internal("import order".into()))?;
            if *k < 0 || (p.kind.is_some() && *k as usize >= p.output_types.len()) {
                return Err(Error::InvalidOutput {
                    node: n.name.clone(),
                    index: *k,
                    source_node: p.name.clone(),
                    num_outputs: p.output_types.len(),
                });
            }
            inputs.push(Endpoint {
                node: id,
                index: *k as usize,
            });
        }
        let spec = NodeSpec {
            name: n.name,
            op: n.op,
            inputs,
            control_inputs: control[i].iter().map(id_of).collect(),
            device: n.device,
            attrs: n.attr,
            experimental_type: n.experimental_type,
            debug_info: n.experimental_debug_info,
        };
        let node = make_node(
            base + rank[i],
            spec,
            Mode::Import,
            producer,
            &mut budget,
            node_at,
        )?;
        built[rank[i]] = Some(Arc::new(node));
    }
    deferred.dedup();
    for r in deferred {
        finish_back_edges(base, &mut built, r)?;
    }
    drop(data);
    drop(control);
    g.by_name.reserve(n_new);
    g.nodes.reserve(n_new);
    for node in built.into_iter().flatten() {
        g.by_name.insert(node.name.clone(), node.id);
        g.nodes.push(node);
    }
    if base == 0 {
        g.versions = versions;
    }
    g.value_budget = budget;
    // Function libraries and debug info are kept (and merged, as protobuf merges repeated
    // fields, when a GraphDef is imported into a graph that has some) for export.
    let lib = g.library.take();
    g.library = merged(lib, library);
    let dbg = g.debug_info.take();
    g.debug_info = merged(dbg, debug_info);
    Ok(())
}

/// The order in which TensorFlow's importer processes a GraphDef's nodes: Kahn's algorithm
/// taking the ready node that comes first in the GraphDef (for a GraphDef already in dependency
/// order, the GraphDef's own order). Nodes on a cycle are left out.
fn graphdef_order(mut pending: Vec<usize>, consumers: &[Vec<usize>]) -> Vec<usize> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut ready: BinaryHeap<Reverse<usize>> = (0..pending.len())
        .filter(|&i| pending[i] == 0)
        .map(Reverse)
        .collect();
    let mut order = Vec::with_capacity(pending.len());
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        for &c in &consumers[i] {
            pending[c] -= 1;
            if pending[c] == 0 {
                ready.push(Reverse(c));
            }
        }
    }
    order
}

/// `NextIteration` (or its ref form): the source of a loop's back edge.
pub(crate) fn is_next_iteration(op: &str) -> bool {
    matches!(op, "NextIteration" | "RefNextIteration")
}

/// `Merge` (or its ref form).
pub(crate) fn is_merge(op: &str) -> bool {
    matches!(op, "Merge" | "RefMerge")
}

/// A `Merge` built before the `NextIteration` nodes it reads: their output indices checked,
/// dtypes checked against the `Merge`'s `T`, and its input names written.
fn finish_back_edges(base: usize, built: &mut [Option<Arc<Node>>], i: usize) -> Result<()> {
    let node_of = |built: &[Option<Arc<Node>>], id: usize| -> Result<Arc<Node>> {
        id.checked_sub(base)
            .and_then(|j| built.get(j).cloned().flatten())
            .ok_or_else(|| Error::Internal("import order".into()))
    };
    let merge = node_of(built, base + i)?;
    let mut names = merge.input_names.clone();
    let want = merge.output_types.first().copied();
    for (pos, ep) in merge.inputs.iter().enumerate() {
        if !names[pos].is_empty() {
            continue;
        }
        let p = if ep.node < base {
            return Err(Error::Internal("back edge to an existing node".into()));
        } else {
            node_of(built, ep.node)?
        };
        if p.kind.is_some() && ep.index >= p.output_types.len() {
            return Err(Error::InvalidOutput {
                node: merge.name.clone(),
                index: i64::try_from(ep.index).unwrap_or(i64::MAX),
                source_node: p.name.clone(),
                num_outputs: p.output_types.len(),
            });
        }
        if let (Some(want), Some(&got)) = (want, p.output_types.get(ep.index)) {
            if want != got {
                return Err(Error::InputType {
                    index: pos,
                    node: merge.name.clone(),
                    actual: got,
                    source_name: format!("{}:{}", p.name, ep.index),
                    expected: want,
                });
            }
        }
        names[pos] = if ep.index == 0 {
            p.name.clone()
        } else {
            format!("{}:{}", p.name, ep.index)
        };
    }
    drop(merge);
    match built[i].as_mut().and_then(Arc::get_mut) {
        Some(n) => n.input_names = names,
        None => return Err(Error::Internal("merge shared during import".into())),
    }
    Ok(())
}

#[derive(Debug, Clone, Copy)]
enum Source {
    New(usize),
    Existing(usize),
}

fn find(
    index: &HashMap<&str, usize>,
    existing: &HashMap<String, usize>,
    name: &str,
) -> Option<Source> {
    index
        .get(name)
        .map(|&i| Source::New(i))
        .or_else(|| existing.get(name).map(|&id| Source::Existing(id)))
}

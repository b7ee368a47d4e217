//! Function calls (`PartitionedCall`, `StatefulPartitionedCall`), run by inlining: before a
//! session plans a run of a graph that calls functions from its library, the graph is
//! *lowered* - every call node is replaced by its function's body (nodes renamed
//! `<call>/<node>`, inputs wired to the call's inputs, nested calls expanded the same way) and
//! by a `NoOp` named as the call, which waits for the whole body (so `^call` still means "after
//! the call"). The call's outputs `call:k` become aliases of the body tensors the function
//! returns. The lowered graph is imported like any GraphDef (names, dtypes and shapes checked
//! and inferred) and planned like any graph, so a call costs nothing per run beyond its body's
//! nodes. The original graph is untouched: it exports as it was read.

use std::collections::{BTreeSet, HashMap, VecDeque};

use tensorcast_proto::{attr_value, FunctionDef, FunctionDefLibrary, GraphDef, Message, NodeDef};

use crate::build::graph::Graph;
use crate::build::tensor_id::parse_tensor_name;
use crate::error::{Error, Result};
use crate::import::import_graph_def;
use crate::kernels::Kernel;
use crate::registry::opdef::Op;

/// The ops that call a function named by their `f` attr.
pub(crate) fn is_call(op: &str) -> bool {
    matches!(op, "PartitionedCall" | "StatefulPartitionedCall")
}

/// How deep calls may nest (a function that calls itself would never end).
const MAX_CALL_DEPTH: usize = 64;

/// The most nodes a lowered graph may have: a function calling itself twice per level would
/// otherwise double the graph at every level before the depth limit is reached.
const MAX_LOWERED_NODES: usize = 1 << 18;

/// A graph with its calls inlined, and where the calls' outputs went.
#[derive(Debug)]
pub(crate) struct Lowered {
    /// The graph without call nodes.
    pub(crate) graph: Graph,
    /// `(call, k)` -> the tensor (`node` or `node:k`) of the lowered graph it stands for.
    pub(crate) aliases: HashMap<(String, i64), String>,
}

impl Lowered {
    /// `name` (`op` or `op:k`) as the lowered graph names it.
    pub(crate) fn resolve(&self, name: &str) -> String {
        let id = parse_tensor_name(name);
        match self
            .aliases
            .get(&(id.node.to_string(), i64::from(id.index)))
        {
            Some(t) => t.clone(),
            None => name.to_string(),
        }
    }
}

fn unsupported(what: String) -> Error {
    Error::Function(what)
}

/// The lowered form of `graph`, or `None` when it calls no function.
///
/// # Errors
/// [`Error::Function`] for a call whose function is not in the library, a signature with list
/// args, a body using attr placeholders, nesting past [`MAX_CALL_DEPTH`]; import errors of the
/// lowered graph.
pub(crate) fn lower(graph: &Graph) -> Result<Option<Lowered>> {
    let gd = graph.to_graph_def();
    if !gd.node.iter().any(|n| is_call(&n.op)) {
        return Ok(None);
    }
    let library = FunctionDefLibrary::decode_optional(gd.library.as_ref())
        .map_err(|e| unsupported(format!("the graph's function library does not decode: {e}")))?;
    let functions: HashMap<&str, &FunctionDef> = library.by_name().collect();
    let mut out: Vec<NodeDef> = Vec::with_capacity(gd.node.len());
    let mut aliases: HashMap<(String, i64), String> = HashMap::new();
    let mut queue: VecDeque<(NodeDef, usize)> = gd.node.into_iter().map(|n| (n, 0)).collect();
    while let Some((node, depth)) = queue.pop_front() {
        if !is_call(&node.op) {
            out.push(node);
            continue;
        }
        if depth >= MAX_CALL_DEPTH {
            return Err(unsupported(format!(
                "function calls nest deeper than {MAX_CALL_DEPTH} at node '{}' (a function that \
                 calls itself?)",
                node.name
            )));
        }
        let (body, noop, returns) = expand(&node, &functions)?;
        if out.len() + queue.len() + body.len() > MAX_LOWERED_NODES {
            return Err(unsupported(format!(
                "inlining the function calls would make a graph of more than {MAX_LOWERED_NODES} \
                 nodes (at node '{}')",
                node.name
            )));
        }
        for (k, t) in returns.into_iter().enumerate() {
            aliases.insert((node.name.clone(), k as i64), t);
        }
        queue.extend(body.into_iter().map(|n| (n, depth + 1)));
        out.push(noop);
    }
    // Consumers of a call's outputs read what the function returned (following nested calls).
    let resolve = |s: &str| -> String {
        let mut s = s.to_string();
        for _ in 0..=MAX_CALL_DEPTH {
            let id = parse_tensor_name(&s);
            match aliases.get(&(id.node.to_string(), i64::from(id.index))) {
                Some(t) => s = t.clone(),
                None => break,
            }
        }
        s
    };
    for n in &mut out {
        for input in n.input.iter_mut().filter(|i| !i.starts_with('^')) {
            *input = resolve(input);
        }
    }
    let resolved: HashMap<(String, i64), String> = aliases
        .keys()
        .map(|(op, k)| {
            let name = if *k == 0 {
                op.clone()
            } else {
                format!("{op}:{k}")
            };
            ((op.clone(), *k), resolve(&name))
        })
        .collect();
    let lowered = Graph::new();
    import_graph_def(
        &lowered,
        &GraphDef {
            node: out,
            library: None,
            version: 0,
            versions: gd.versions,
            debug_info: None,
        },
    )?;
    Ok(Some(Lowered {
        graph: lowered,
        aliases: resolved,
    }))
}

/// The output index of `node`'s output arg `arg` (element `index` of it): the position of the
/// arg among the op's registered outputs; for a call (one list output) and for ops not known
/// here, the index itself.
fn output_index(op: &str, arg: &str, index: i64) -> i64 {
    match Op::from_name(op) {
        Some(k) => k
            .def()
            .outputs
            .iter()
            .position(|a| a.name == arg)
            .map_or(index, |p| p as i64 + index),
        None => index,
    }
}

/// Inlines one call: its body (renamed, rewired), the `NoOp` that stands for the call, and the
/// tensors it returns, in output order.
fn expand(
    call: &NodeDef,
    functions: &HashMap<&str, &FunctionDef>,
) -> Result<(Vec<NodeDef>, NodeDef, Vec<String>)> {
    let fname = match call.attr.get("f").and_then(|a| a.value.as_ref()) {
        Some(attr_value::Value::Func(f)) => f.name.clone(),
        _ => {
            return Err(unsupported(format!(
                "node '{}' ({}) has no function attr 'f'",
                call.name, call.op
            )))
        }
    };
    let f = functions.get(fname.as_str()).ok_or_else(|| {
        unsupported(format!(
            "node '{}' calls function '{fname}', which the graph's library does not define",
            call.name
        ))
    })?;
    let sig = f.signature.clone().unwrap_or_default();
    if let Some(a) = sig
        .input_arg
        .iter()
        .chain(&sig.output_arg)
        .find(|a| !a.number_attr.is_empty() || !a.type_list_attr.is_empty())
    {
        return Err(unsupported(format!(
            "function '{fname}' has a list argument '{}' (not supported yet)",
            a.name
        )));
    }
    let data: Vec<&String> = call.input.iter().filter(|i| !i.starts_with('^')).collect();
    let control: Vec<&String> = call.input.iter().filter(|i| i.starts_with('^')).collect();
    if data.len() != sig.input_arg.len() {
        return Err(unsupported(format!(
            "node '{}' passes {} inputs to function '{fname}', which takes {}",
            call.name,
            data.len(),
            sig.input_arg.len()
        )));
    }
    let args: HashMap<&str, &str> = sig
        .input_arg
        .iter()
        .map(|a| a.name.as_str())
        .zip(data.iter().map(|s| s.as_str()))
        .collect();
    let ops: HashMap<&str, &str> = f
        .node_def
        .iter()
        .map(|n| (n.name.as_str(), n.op.as_str()))
        .collect();
    let prefix = &call.name;
    // `node:out_arg:index` -> the renamed tensor; an arg name -> the call's input. The index is
    // read by the one tensor-name parser; what is left is `node:out_arg`, or `node` (a tensor
    // name in the graph form), and a name without an index is an arg.
    let tensor = |s: &str| -> Result<String> {
        let id = parse_tensor_name(s);
        if id.node.len() == s.len() {
            return args.get(s).map(|t| t.to_string()).ok_or_else(|| {
                unsupported(format!(
                    "function '{fname}' reads '{s}', which is not one of its inputs"
                ))
            });
        }
        match id.node.split_once(':') {
            Some((_, out_arg)) if out_arg.contains(':') => Err(unsupported(format!(
                "function '{fname}': bad tensor name '{s}'"
            ))),
            Some((node, out_arg)) => {
                let op = ops.get(node).ok_or_else(|| {
                    unsupported(format!("function '{fname}' reads '{s}': no node '{node}'"))
                })?;
                let k = output_index(op, out_arg, i64::from(id.index));
                Ok(if k == 0 {
                    format!("{prefix}/{node}")
                } else {
                    format!("{prefix}/{node}:{k}")
                })
            }
            None => Ok(format!("{prefix}/{}:{}", id.node, id.index)),
        }
    };
    let mut body = Vec::with_capacity(f.node_def.len());
    for n in &f.node_def {
        if n.attr
            .values()
            .any(|v| matches!(v.value, Some(attr_value::Value::Placeholder(_))))
        {
            return Err(unsupported(format!(
                "function '{fname}' node '{}' has attrs set by the caller (polymorphic functions \
                 are not supported yet)",
                n.name
            )));
        }
        let mut inputs = Vec::with_capacity(n.input.len() + control.len());
        let mut controls = BTreeSet::new();
        for i in &n.input {
            let id = parse_tensor_name(i);
            if id.is_control() && i.starts_with('^') {
                controls.insert(format!("^{prefix}/{}", id.node));
            } else {
                inputs.push(tensor(i)?);
            }
        }
        controls.extend(control.iter().map(|c| c.to_string()));
        inputs.extend(controls);
        body.push(NodeDef {
            name: format!("{prefix}/{}", n.name),
            op: n.op.clone(),
            input: inputs,
            device: n.device.clone(),
            attr: n.attr.clone(),
            experimental_debug_info: n.experimental_debug_info.clone(),
            experimental_type: n.experimental_type.clone(),
        });
    }
    let mut returns = Vec::with_capacity(sig.output_arg.len());
    for a in &sig.output_arg {
        let r = f.ret.get(&a.name).ok_or_else(|| {
            unsupported(format!(
                "function '{fname}' returns nothing for output '{}'",
                a.name
            ))
        })?;
        returns.push(tensor(r)?);
    }
    let mut waits: BTreeSet<String> = body.iter().map(|n| format!("^{}", n.name)).collect();
    waits.extend(control.iter().map(|c| c.to_string()));
    let noop = NodeDef {
        name: call.name.clone(),
        op: "NoOp".into(),
        input: waits.into_iter().collect(),
        device: call.device.clone(),
        ..Default::default()
    };
    Ok((body, noop, returns))
}

/// The functions an op's attrs name: every `func` attr and every list of them (`While`'s
/// `cond` and `body`, `If`'s branches, `Case`'s `branches`, a call's `f`, ...).
pub(crate) fn called_functions<'a>(
    attrs: impl IntoIterator<Item = &'a tensorcast_proto::AttrValue>,
) -> impl Iterator<Item = &'a str> {
    attrs.into_iter().flat_map(|v| {
        let (one, list): (Option<&str>, &[tensorcast_proto::NameAttrList]) = match &v.value {
            Some(attr_value::Value::Func(f)) => (Some(f.name.as_str()), &[]),
            Some(attr_value::Value::List(l)) => (None, l.func.as_slice()),
            _ => (None, &[]),
        };
        one.into_iter().chain(list.iter().map(|f| f.name.as_str()))
    })
}

/// The ops without a kernel in the bodies of the functions `roots` name, and of the functions
/// those bodies call, transitively through `library` (each function counted once, however many
/// nodes call it): op name -> number of body nodes. A body node that calls a function (a
/// `PartitionedCall`, or an op named as a function of the library) is a call, not an op.
///
/// # Errors
/// [`Error::Function`] for a library that does not decode.
pub(crate) fn ops_without_kernel_in_functions<'a>(
    library: Option<&bytes::Bytes>,
    roots: impl IntoIterator<Item = &'a str>,
) -> Result<std::collections::BTreeMap<String, usize>> {
    let mut missing = std::collections::BTreeMap::new();
    let mut queue: VecDeque<String> = roots.into_iter().map(str::to_string).collect();
    let Some(bytes) = library.filter(|_| !queue.is_empty()) else {
        return Ok(missing);
    };
    let library = FunctionDefLibrary::decode(bytes.clone())
        .map_err(|e| unsupported(format!("the graph's function library does not decode: {e}")))?;
    let functions: HashMap<&str, &FunctionDef> = library.by_name().collect();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    while let Some(name) = queue.pop_front() {
        if !seen.insert(name.clone()) {
            continue;
        }
        // A function the library lacks fails when it is called, with its own message.
        let Some(f) = functions.get(name.as_str()) else {
            continue;
        };
        for n in &f.node_def {
            queue.extend(called_functions(n.attr.values()).map(str::to_string));
            if functions.contains_key(n.op.as_str()) {
                queue.push_back(n.op.clone());
            } else if !is_call(&n.op) && !Kernel::available(Op::from_name(&n.op)) {
                *missing.entry(n.op.clone()).or_default() += 1;
            }
        }
    }
    Ok(missing)
}

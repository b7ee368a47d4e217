//! Function calls (`PartitionedCall`, `StatefulPartitionedCall`), run by inlining: before a
//! session plans a run of a graph that calls functions from its library, the graph is
//! *lowered* - every call node is replaced by its function's body (nodes renamed
//! `<call>/<node>`, inputs wired to the call's inputs, nested calls expanded the same way) and
//! by a `NoOp` named as the call, which waits for the whole body (so `^call` still means "after
//! the call"). The call's outputs `call:k` become aliases of the body tensors the function
//! returns. The lowered graph is imported like any GraphDef (names, dtypes and shapes checked
//! and inferred) and planned like any graph, so a call costs nothing per run beyond its body's
//! nodes. The original graph is untouched: it exports as it was read.
//!
//! Before anything is built, the size of the lowered graph is computed from the call graph
//! (each function's inlined size once, saturating), so a library of a few kilobytes whose calls
//! would inline to 2^40 nodes is refused on the count, and a function that calls itself
//! (directly or through others: its inlining would never end) is refused by name. Calls of
//! different functions nest as deep as the library makes them.

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

/// The most nodes a lowered graph may have: a function calling another twice per level doubles
/// the graph at every level (40 levels of a few bytes each make 2^40 nodes).
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
/// args, a body using attr placeholders, a function that calls itself, a lowered graph of more
/// than [`MAX_LOWERED_NODES`] nodes (refused before it is built); import errors of the lowered
/// graph.
pub(crate) fn lower(graph: &Graph) -> Result<Option<Lowered>> {
    let gd = graph.to_graph_def();
    if !gd.node.iter().any(|n| is_call(&n.op)) {
        return Ok(None);
    }
    let library = FunctionDefLibrary::decode_optional(gd.library.as_ref())
        .map_err(|e| unsupported(format!("the graph's function library does not decode: {e}")))?;
    let functions: HashMap<&str, &FunctionDef> = library.by_name().collect();
    let sizes = inlined_sizes(&functions, gd.node.iter())?;
    let total = gd.node.iter().fold(0usize, |n, node| {
        n.saturating_add(match called(node).and_then(|f| sizes.get(f)) {
            Some(&body) => body.saturating_add(1),
            None => 1,
        })
    });
    if total > MAX_LOWERED_NODES {
        return Err(unsupported(format!(
            "inlining the function calls would make a graph of {} nodes, more than \
             {MAX_LOWERED_NODES}",
            if total == usize::MAX {
                "too many".to_string()
            } else {
                total.to_string()
            }
        )));
    }
    let mut out: Vec<NodeDef> = Vec::with_capacity(total);
    // `(call, k)` -> the tensor it stands for, in the order the calls were expanded (a call's
    // before those of the calls in its body).
    let mut aliases: Vec<((String, i64), String)> = Vec::new();
    let mut queue: VecDeque<NodeDef> = gd.node.into_iter().collect();
    while let Some(node) = queue.pop_front() {
        if !is_call(&node.op) {
            out.push(node);
            continue;
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
            aliases.push(((node.name.clone(), k as i64), t));
        }
        queue.extend(body);
        out.push(noop);
    }
    // Each alias resolved to a tensor that is no call's output: the deepest calls' first, so a
    // call that returns what a call in its body returns finds it resolved.
    let mut resolved: HashMap<(String, i64), String> = HashMap::with_capacity(aliases.len());
    for (key, t) in aliases.into_iter().rev() {
        let id = parse_tensor_name(&t);
        let t = resolved
            .get(&(id.node.to_string(), i64::from(id.index)))
            .cloned()
            .unwrap_or(t);
        resolved.insert(key, t);
    }
    // Consumers of a call's outputs read what the function returned (following nested calls).
    let resolve = |s: &str| -> Option<&String> {
        let id = parse_tensor_name(s);
        resolved.get(&(id.node.to_string(), i64::from(id.index)))
    };
    for n in &mut out {
        for input in n.input.iter_mut().filter(|i| !i.starts_with('^')) {
            if let Some(t) = resolve(input) {
                input.clone_from(t);
            }
        }
    }
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

/// The function a call node calls (its `f` attr).
fn called(node: &NodeDef) -> Option<&str> {
    if !is_call(&node.op) {
        return None;
    }
    match node.attr.get("f").and_then(|a| a.value.as_ref()) {
        Some(attr_value::Value::Func(f)) => Some(f.name.as_str()),
        _ => None,
    }
}

/// The number of nodes each function the `roots` call (directly or through other functions)
/// inlines to - its body's nodes, each call among them counted as its `NoOp` plus its
/// function's size - computed once per function over the call graph, saturating. A function
/// the library lacks is left out (expanding its call reports it).
///
/// # Errors
/// [`Error::Function`] for a function that calls itself, directly or through others.
fn inlined_sizes<'a>(
    functions: &HashMap<&'a str, &'a FunctionDef>,
    roots: impl Iterator<Item = &'a NodeDef>,
) -> Result<HashMap<&'a str, usize>> {
    let mut sizes: HashMap<&'a str, usize> = HashMap::new();
    // Depth-first on an explicit stack: (function, index of its next body node, size so far).
    let mut on_path: std::collections::HashSet<&'a str> = std::collections::HashSet::new();
    let mut stack: Vec<(&'a str, usize, usize)> = Vec::new();
    for root in roots.filter_map(called) {
        let Some((&root, _)) = functions.get_key_value(root) else {
            continue;
        };
        if sizes.contains_key(root) {
            continue;
        }
        stack.push((root, 0, 0));
        on_path.insert(root);
        while let Some(top) = stack.last_mut() {
            let (name, next, size) = *top;
            let body = &functions[name].node_def;
            let Some(node) = body.get(next) else {
                stack.pop();
                on_path.remove(name);
                sizes.insert(name, size);
                if let Some(parent) = stack.last_mut() {
                    parent.2 = parent.2.saturating_add(size).saturating_add(1);
                }
                continue;
            };
            top.1 += 1;
            let callee = called(node).and_then(|f| functions.get_key_value(f));
            match callee {
                Some((&callee, _)) if on_path.contains(callee) => {
                    return Err(unsupported(format!(
                        "function '{callee}' calls itself (directly or through other functions; \
                         node '{}' of function '{name}'): a recursive call cannot be inlined",
                        node.name
                    )));
                }
                Some((&callee, _)) => match sizes.get(callee) {
                    Some(&s) => top.2 = size.saturating_add(s).saturating_add(1),
                    None => {
                        on_path.insert(callee);
                        stack.push((callee, 0, 0));
                    }
                },
                None => top.2 = size.saturating_add(1),
            }
        }
    }
    Ok(sizes)
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

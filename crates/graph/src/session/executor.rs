//! The executor: prune to what the fetches need, order by dependencies (iteratively, so deep
//! graphs need no stack), run kernels, free each value after its last use, keep `BroadcastTo`
//! lazy where its consumers allow.

use std::collections::HashMap;
use std::sync::Arc;

use tensorcast_core::ops::broadcast::{check_broadcast_to, shape_from_tensor, BroadcastView};
use tensorcast_core::ops::elementwise::{binary, BinaryOp, Operand};
use tensorcast_core::{DataType, Tensor, TensorShape};

use super::kernels::{self, is_elementwise_binary};
use super::SessionOptions;
use crate::error::{Error, Result};
use crate::graph::{Endpoint, Node};
use crate::{attr, shape};

/// A value flowing along an edge.
#[derive(Clone)]
enum Value {
    /// A tensor.
    Dense(Tensor),
    /// `base` broadcast to `shape`, not materialised.
    Lazy { base: Tensor, shape: TensorShape },
}

impl Value {
    fn logical_shape(&self) -> TensorShape {
        match self {
            Value::Dense(t) => t.shape().clone(),
            Value::Lazy { shape, .. } => shape.clone(),
        }
    }
    fn materialize(self) -> Result<Tensor> {
        match self {
            Value::Dense(t) => Ok(t),
            Value::Lazy { base, shape } => {
                tensorcast_core::ops::broadcast::broadcast_to(&base, &shape).map_err(|source| {
                    Error::Kernel {
                        node: String::new(),
                        source,
                    }
                })
            }
        }
    }
}

/// `base` broadcast to `shape` as a value: the base itself when the shapes agree.
fn lazy(base: Tensor, shape: TensorShape) -> Value {
    if *base.shape() == shape {
        Value::Dense(base)
    } else {
        Value::Lazy { base, shape }
    }
}

/// Ops that can take a lazy broadcast as input without materialising it.
fn reads_lazy(op: &str) -> bool {
    is_elementwise_binary(op) || matches!(op, "Identity" | "Cast" | "BroadcastTo" | "Bitcast")
}

/// Values by endpoint with their remaining uses (vectors indexed by node id, then output index:
/// no hashing on the per-node path).
struct Slots {
    uses: Vec<Vec<usize>>,
    values: Vec<Vec<Option<Value>>>,
}

impl Slots {
    fn new(n: usize) -> Self {
        Slots {
            uses: vec![Vec::new(); n],
            values: (0..n).map(|_| Vec::new()).collect(),
        }
    }
    fn add_use(&mut self, ep: Endpoint) {
        let u = &mut self.uses[ep.node];
        if u.len() <= ep.index {
            u.resize(ep.index + 1, 0);
        }
        u[ep.index] += 1;
    }
    fn uses(&self, ep: Endpoint) -> usize {
        self.uses[ep.node].get(ep.index).copied().unwrap_or(0)
    }
    fn put(&mut self, ep: Endpoint, v: Value) {
        let slot = &mut self.values[ep.node];
        if slot.len() <= ep.index {
            slot.resize_with(ep.index + 1, || None);
        }
        slot[ep.index] = Some(v);
    }
    /// The value, moved out at its last use and cloned (an `Arc` clone) before.
    fn take(&mut self, ep: Endpoint) -> Option<Value> {
        let left = self.uses[ep.node].get_mut(ep.index).map(|u| {
            *u = u.saturating_sub(1);
            *u
        });
        let slot = self.values[ep.node].get_mut(ep.index)?;
        if left == Some(0) {
            slot.take()
        } else {
            slot.clone()
        }
    }
}

pub(super) fn run(
    nodes: &[Arc<Node>],
    feeds: Vec<(Endpoint, Tensor)>,
    fetches: &[Endpoint],
    targets: &[usize],
    options: SessionOptions,
) -> Result<Vec<Tensor>> {
    // Feeds: dtype and shape must fit the tensor they replace.
    let mut fed: HashMap<Endpoint, Tensor> = HashMap::new();
    for (ep, t) in feeds {
        let n = &nodes[ep.node];
        let name = format!("{}:{}", n.name, ep.index);
        if let Some(&want) = n.output_types.get(ep.index) {
            if t.dtype() != want {
                return Err(Error::FeedType {
                    name,
                    actual: t.dtype(),
                    expected: want,
                });
            }
        }
        if let Some(s) = n.output_shapes.get(ep.index) {
            if !shape::compatible(s, t.shape().dim_sizes()) {
                return Err(Error::FeedShape {
                    name,
                    actual: t.shape().to_string(),
                    expected: shape::debug(s),
                });
            }
        }
        if fed.insert(ep, t).is_some() {
            return Err(Error::DuplicateFeed(name));
        }
    }
    // Needed nodes (iterative walk from fetches and targets, stopping at fed tensors).
    let mut needed = vec![false; nodes.len()];
    let mut stack: Vec<usize> = targets.to_vec();
    stack.extend(
        fetches
            .iter()
            .filter(|ep| !fed.contains_key(ep))
            .map(|ep| ep.node),
    );
    while let Some(id) = stack.pop() {
        if needed[id] {
            continue;
        }
        needed[id] = true;
        let n = &nodes[id];
        stack.extend(
            n.inputs
                .iter()
                .filter(|ep| !fed.contains_key(ep))
                .map(|ep| ep.node),
        );
        stack.extend(n.control_inputs.iter().copied());
    }
    // Kahn's order over the needed nodes; use counts of every value.
    let mut pending = vec![0usize; nodes.len()];
    let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut slots = Slots::new(nodes.len());
    let mut lazy_ok = vec![true; nodes.len()];
    for (id, n) in nodes.iter().enumerate().filter(|(id, _)| needed[*id]) {
        for ep in &n.inputs {
            slots.add_use(*ep);
            if !reads_lazy(&n.op) {
                lazy_ok[ep.node] = false;
            }
            if !fed.contains_key(ep) {
                pending[id] += 1;
                consumers[ep.node].push(id);
            }
        }
        for &c in &n.control_inputs {
            pending[id] += 1;
            consumers[c].push(id);
        }
    }
    for ep in fetches {
        slots.add_use(*ep);
        lazy_ok[ep.node] = false;
    }
    let mut ready: Vec<usize> = (0..nodes.len())
        .filter(|&i| needed[i] && pending[i] == 0)
        .collect();
    ready.reverse();
    for (ep, t) in fed {
        slots.put(ep, Value::Dense(t));
    }
    while let Some(id) = ready.pop() {
        let n = &nodes[id];
        let mut inputs = Vec::with_capacity(n.inputs.len());
        for ep in &n.inputs {
            let v = slots
                .take(*ep)
                .ok_or_else(|| Error::Internal(format!("value of {} missing", n.name)))?;
            inputs.push(v);
        }
        let outputs =
            run_node(n, inputs, options.optimize && lazy_ok[id]).map_err(|e| e.at_node(&n.name))?;
        for (i, v) in outputs.into_iter().enumerate() {
            let ep = Endpoint { node: id, index: i };
            if slots.uses(ep) > 0 {
                slots.put(ep, v);
            }
        }
        for &c in &consumers[id] {
            pending[c] -= 1;
            if pending[c] == 0 {
                ready.push(c);
            }
        }
    }
    let mut out = Vec::with_capacity(fetches.len());
    for ep in fetches {
        let v = slots.take(*ep).ok_or_else(|| {
            Error::Internal(format!("fetch {} not computed", nodes[ep.node].name))
        })?;
        out.push(
            v.materialize()
                .map_err(|e| e.at_node(&nodes[ep.node].name))?,
        );
    }
    Ok(out)
}

/// Runs one node. `may_stay_lazy`: every consumer reads lazy values and nothing fetches it.
fn run_node(n: &Node, inputs: Vec<Value>, may_stay_lazy: bool) -> Result<Vec<Value>> {
    if n.op == "Placeholder" {
        let dtype = attr::get_type(&n.attrs, "dtype").unwrap_or(DataType::INVALID);
        let s = n.output_shapes.first().cloned().unwrap_or(None);
        return Err(Error::MissingFeed {
            name: n.name.clone(),
            dtype,
            shape: s.as_ref().map(|_| shape::debug(&s)),
        });
    }
    if !n.registered {
        return Err(Error::OpNotRegistered(n.op.clone()));
    }
    let has_lazy = inputs.iter().any(|v| matches!(v, Value::Lazy { .. }));
    if may_stay_lazy || has_lazy {
        if let Some(v) = run_lazy(n, &inputs, may_stay_lazy)? {
            return Ok(vec![v]);
        }
    }
    let dense: Vec<Tensor> = inputs
        .into_iter()
        .map(Value::materialize)
        .collect::<Result<_>>()?;
    Ok(kernels::compute(&n.op, &n.attrs, &dense)?
        .into_iter()
        .map(Value::Dense)
        .collect())
}

/// The lazy paths; `None` when the node must run on materialised inputs.
fn run_lazy(n: &Node, inputs: &[Value], may_stay_lazy: bool) -> Result<Option<Value>> {
    let out = match (n.op.as_str(), inputs) {
        ("BroadcastTo", [x, s]) if may_stay_lazy => {
            let Value::Dense(s) = s else { return Ok(None) };
            let valid = s.dims() == 1 && matches!(s.dtype(), DataType::INT32 | DataType::INT64);
            let Some(target) = valid.then(|| shape_from_tensor(s).ok()).flatten() else {
                return Ok(None);
            };
            if check_broadcast_to(&x.logical_shape(), &target).is_err() {
                return Ok(None);
            }
            match x {
                Value::Dense(b) | Value::Lazy { base: b, .. } => lazy(b.clone(), target),
            }
        }
        ("Identity", [x]) if may_stay_lazy => x.clone(),
        ("Cast", [Value::Lazy { base, shape }]) if may_stay_lazy => {
            let dst = attr::get_type(&n.attrs, "DstT").unwrap_or(DataType::INVALID);
            let truncate = attr::get_bool(&n.attrs, "Truncate").unwrap_or(false);
            lazy(kernels::cast(base, dst, truncate)?, shape.clone())
        }
        ("Bitcast", [Value::Lazy { base, shape }]) if may_stay_lazy => {
            let dst = attr::get_type(&n.attrs, "type").unwrap_or(DataType::INVALID);
            if dst.size() != base.dtype().size() || base.dtype().size() == 0 {
                return Ok(None);
            }
            let b = tensorcast_core::ops::bitcast::bitcast(base, dst).map_err(|source| {
                Error::Kernel {
                    node: String::new(),
                    source,
                }
            })?;
            lazy(b, shape.clone())
        }
        (op, [a, b]) if is_elementwise_binary(op) => {
            // The consumer reads each lazy input in place, as a stride-0 broadcast view.
            let Some(bop) = BinaryOp::from_name(op) else {
                return Ok(None);
            };
            let ise = kernels::incompatible_shape_error(&n.attrs);
            let k = |r: tensorcast_core::Result<Tensor>| {
                r.map_err(|source| Error::Kernel {
                    node: String::new(),
                    source,
                })
            };
            fn view(v: &Value) -> tensorcast_core::Result<Option<BroadcastView<'_>>> {
                match v {
                    Value::Dense(_) => Ok(None),
                    Value::Lazy { base, shape } => base.broadcast_view(shape).map(Some),
                }
            }
            let (va, vb) = (view(a), view(b));
            let (va, vb) = match (va, vb) {
                (Ok(va), Ok(vb)) => (va, vb),
                _ => return Ok(None),
            };
            let dense = |v: &Value| match v {
                Value::Dense(t) | Value::Lazy { base: t, .. } => t.clone(),
            };
            let (ta, tb) = (dense(a), dense(b));
            let oa: Operand<'_> = va
                .as_ref()
                .map_or_else(|| Operand::from(&ta), Operand::from);
            let ob: Operand<'_> = vb
                .as_ref()
                .map_or_else(|| Operand::from(&tb), Operand::from);
            Value::Dense(k(binary(bop, oa, ob, ise))?)
        }
        _ => return Ok(None),
    };
    Ok(Some(out))
}

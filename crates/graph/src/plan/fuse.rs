//! Element-wise fusion: a chain of `float` element-wise nodes that reads one tensor (and
//! constants) runs as one [`FusedChain`] pass instead of one tensor per node, when nothing
//! outside the chain reads its inner values.
//!
//! The nodes fused: `AddV2`, `Sub`, `Mul`, `RealDiv` (with a constant operand that is a scalar
//! or a vector along the last dimension, without NaN, or with both operands inside the chain),
//! the unary ops of `tensorcast_kernels::math::unary`, and `BiasAdd` (NHWC) - what Keras
//! models compute after each convolution or matmul: batch norm's scale and shift, the bias,
//! the activation (hard-swish is `x * relu6(x + 3) / 6`). Each fused step computes its node's
//! own bits (see `tensorcast_kernels::elementwise::fused`); a constant with NaN is left out
//! because which NaN an op returns can depend on the order its kernel reads the operands in.
//!
//! The chain runs as the last node's step, attributed to it; an input whose shape the chain
//! does not fit at run time (a vector operand that is not the input's last dimension) runs
//! the nodes one by one, each with its own kernel and errors.

use std::collections::HashMap;
use std::sync::Arc;

use tensorcast_core::{DataType, Tensor};
use tensorcast_kernels::elementwise::fused::{FusedArg, FusedChain, FusedStep};
use tensorcast_kernels::elementwise::BinaryOp;
use tensorcast_kernels::math::UnaryOp;

use crate::attr;
use crate::build::graph::{Endpoint, Node};
use crate::error::{Error, Result};
use crate::kernels::Kernel;
use crate::registry::opdef::Op;

/// A fused chain and, for an input it does not fit, its nodes to run one by one.
#[derive(Debug)]
pub(crate) struct Fused {
    /// The chain.
    pub(crate) chain: FusedChain,
    /// The nodes, in chain order (the last is the step's node).
    pub(crate) parts: Vec<Part>,
}

/// One fused node, as the unfused run needs it.
#[derive(Debug)]
pub(crate) struct Part {
    /// The node (its name attributes errors).
    pub(crate) node: Arc<Node>,
    /// Its kernel.
    pub(crate) kernel: Kernel,
    /// Its inputs.
    pub(crate) inputs: Vec<PartInput>,
}

/// An input of a [`Part`].
#[derive(Debug)]
pub(crate) enum PartInput {
    /// The chain's input (0) or part `i - 1`'s result (`i`).
    Value(usize),
    /// A constant.
    Const(Tensor),
}

impl Fused {
    /// The chain on `x`: in one pass where it fits, else node by node.
    pub(crate) fn run(&self, x: Tensor) -> Result<Tensor> {
        if let Some(r) = self.chain.run(&x) {
            let last = &self.parts[self.parts.len() - 1].node;
            return crate::kernels::kernel(r).map_err(|e| e.at_node(last));
        }
        let mut values = vec![x];
        for p in &self.parts {
            let inputs: Vec<Tensor> = p
                .inputs
                .iter()
                .map(|i| match i {
                    PartInput::Value(v) => values[*v].clone(),
                    PartInput::Const(t) => t.clone(),
                })
                .collect();
            let out = p.kernel.compute(&inputs).map_err(|e| e.at_node(&p.node))?;
            values.push(out);
        }
        values
            .pop()
            .ok_or_else(|| Error::Internal("an empty fused chain".into()))
    }
}

/// What a candidate node computes.
enum StepKind {
    Unary(UnaryOp),
    Binary(BinaryOp),
    BiasAdd,
}

/// An operand of a candidate: a tensor the plan computes, or a constant's value.
#[derive(Clone)]
enum Operand {
    Value(Endpoint),
    Const(Tensor),
}

/// A constant usable as a fused operand: `float`, a scalar or a vector, no NaN.
fn fusable_const(t: &Tensor) -> bool {
    t.dtype() == DataType::FLOAT
        && t.shape().rank() <= 1
        && t.as_slice::<f32>()
            .is_ok_and(|v| !v.iter().any(|x| x.is_nan()))
}

/// The node's op as a chain step, when it is one (a single `float` output, no control inputs).
fn step_kind(n: &Node) -> Option<StepKind> {
    if !n.control_inputs.is_empty() || n.output_types.as_slice() != [DataType::FLOAT] {
        return None;
    }
    match n.kind? {
        Op::Binary(op @ (BinaryOp::AddV2 | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::RealDiv))
            if n.inputs.len() == 2 =>
        {
            Some(StepKind::Binary(op))
        }
        Op::Reg(_) if n.op == "BiasAdd" && n.inputs.len() == 2 => {
            let format = attr::get_string(&n.attrs, "data_format").unwrap_or(b"NHWC");
            (format == b"NHWC").then_some(StepKind::BiasAdd)
        }
        Op::Reg(_) if n.inputs.len() == 1 => UnaryOp::from_name(&n.op).map(StepKind::Unary),
        _ => None,
    }
}

/// What the rewriting passes (`fuse`, `pad::fold_pads`) read of the planned graph: the nodes
/// in dependency order, which are needed and folded, and who reads each needed, unfolded node.
pub(crate) struct Rewrite<'a> {
    pub(crate) nodes: &'a [Arc<Node>],
    pub(crate) order: &'a [usize],
    pub(crate) needed: &'a [bool],
    pub(crate) folded: &'a [bool],
    /// Per node, the nodes reading one of its outputs, once per input that does.
    pub(crate) readers: Vec<Vec<usize>>,
    /// Per node, whether it is fetched, a target, or a control input.
    pub(crate) pinned: Vec<bool>,
}

impl<'a> Rewrite<'a> {
    pub(crate) fn new(
        nodes: &'a [Arc<Node>],
        order: &'a [usize],
        needed: &'a [bool],
        folded: &'a [bool],
        fetches: &[Endpoint],
        targets: &[usize],
    ) -> Self {
        let mut readers: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        let mut pinned = vec![false; nodes.len()];
        for &id in order {
            if !needed[id] || folded[id] {
                continue;
            }
            for ep in &nodes[id].inputs {
                readers[ep.node].push(id);
            }
            for &c in &nodes[id].control_inputs {
                pinned[c] = true;
            }
        }
        for ep in fetches {
            pinned[ep.node] = true;
        }
        for &t in targets {
            pinned[t] = true;
        }
        Rewrite {
            nodes,
            order,
            needed,
            folded,
            readers,
            pinned,
        }
    }

    /// Whether `ep` is output 0 of a node that only `reader` reads (once; not fetched, a
    /// target or a control input), not folded, with no control inputs of its own: a node a
    /// rewrite may merge into `reader`.
    pub(crate) fn feeds_only(&self, ep: &Endpoint, reader: usize) -> bool {
        let p = ep.node;
        ep.index == 0
            && !self.folded[p]
            && !self.pinned[p]
            && self.readers[p].as_slice() == [reader]
            && self.nodes[p].control_inputs.is_empty()
    }

    /// The value of a constant's output `ep`, if it is one.
    pub(crate) fn constant<'k>(ep: &Endpoint, kernels: &'k [Option<Kernel>]) -> Option<&'k Tensor> {
        match &kernels[ep.node] {
            Some(Kernel::Const(t)) if ep.index == 0 => Some(t),
            _ => None,
        }
    }
}

/// Finds the chains among the needed, unfolded nodes and resolves each: the last node's kernel
/// becomes [`Kernel::Fused`] and its data inputs the chain's input (returned, by node id); the
/// other nodes' kernels are taken (nothing needs them any more).
pub(crate) fn fuse(
    g: &Rewrite<'_>,
    kernels: &mut [Option<Kernel>],
) -> HashMap<usize, Vec<Endpoint>> {
    let mut inputs_of = HashMap::new();
    let &Rewrite {
        nodes,
        order,
        needed,
        folded,
        ref readers,
        ref pinned,
    } = g;
    let const_of = |ep: &Endpoint, kernels: &[Option<Kernel>]| {
        Rewrite::constant(ep, kernels)
            .filter(|t| fusable_const(t))
            .cloned()
    };
    // Candidates and their operands.
    let mut kind: Vec<Option<StepKind>> = (0..nodes.len()).map(|_| None).collect();
    let mut operands: Vec<Vec<Operand>> = vec![Vec::new(); nodes.len()];
    for &id in order {
        let n = &nodes[id];
        if !needed[id] || folded[id] || kernels[id].is_none() {
            continue;
        }
        let Some(k) = step_kind(n) else { continue };
        let ops: Vec<Operand> = n
            .inputs
            .iter()
            .map(|ep| match const_of(ep, kernels) {
                Some(t) => Operand::Const(t),
                None => Operand::Value(*ep),
            })
            .collect();
        let values = ops
            .iter()
            .filter(|o| matches!(o, Operand::Value(_)))
            .count();
        let ok = match k {
            StepKind::Unary(_) => values == 1,
            StepKind::BiasAdd => {
                matches!(ops[0], Operand::Value(_))
                    && matches!(&ops[1], Operand::Const(t) if t.shape().rank() == 1)
            }
            StepKind::Binary(_) => values >= 1,
        };
        if ok {
            kind[id] = Some(k);
            operands[id] = ops;
        }
    }
    // Grow groups in dependency order: a node joins the groups of its candidate producers
    // when, together, their members' values are read only inside and they read one tensor
    // from outside.
    let mut group_of: Vec<Option<usize>> = vec![None; nodes.len()];
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let externals = |members: &[usize], operands: &[Vec<Operand>]| {
        let mut ext: Vec<Endpoint> = Vec::new();
        for &m in members {
            for o in &operands[m] {
                if let Operand::Value(ep) = o {
                    let inside = members.contains(&ep.node) && ep.index == 0;
                    if !inside && !ext.contains(ep) {
                        ext.push(*ep);
                    }
                }
            }
        }
        ext
    };
    let closed = |members: &[usize], last: usize| {
        members
            .iter()
            .all(|&m| m == last || (!pinned[m] && readers[m].iter().all(|r| members.contains(r))))
    };
    for &id in order {
        if kind[id].is_none() {
            continue;
        }
        let mut producer_groups: Vec<usize> = Vec::new();
        for o in &operands[id] {
            if let Operand::Value(ep) = o {
                if let Some(g) = group_of[ep.node] {
                    if ep.index == 0 && !producer_groups.contains(&g) {
                        producer_groups.push(g);
                    }
                }
            }
        }
        let union = |gs: &[usize], groups: &[Vec<usize>]| {
            let mut m: Vec<usize> = gs.iter().flat_map(|&g| groups[g].iter().copied()).collect();
            m.push(id);
            m
        };
        let mut choice = None;
        let all = union(&producer_groups, &groups);
        if producer_groups.len() > 1 && closed(&all, id) && externals(&all, &operands).len() == 1 {
            choice = Some(producer_groups.clone());
        } else {
            for &g in &producer_groups {
                let m = union(&[g], &groups);
                if closed(&m, id) && externals(&m, &operands).len() == 1 {
                    choice = Some(vec![g]);
                    break;
                }
            }
        }
        let target = match choice {
            Some(gs) => {
                let keep = gs[0];
                for &g in &gs[1..] {
                    let moved = std::mem::take(&mut groups[g]);
                    for &m in &moved {
                        group_of[m] = Some(keep);
                    }
                    groups[keep].extend(moved);
                }
                keep
            }
            None => {
                groups.push(Vec::new());
                groups.len() - 1
            }
        };
        groups[target].push(id);
        group_of[id] = Some(target);
    }
    // Dependency order (each group's nodes were met in it, but merging interleaves groups).
    let rank: HashMap<usize, usize> = order.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    for mut members in groups.into_iter().filter(|m| m.len() >= 2) {
        members.sort_by_key(|m| rank[m]);
        let ext = externals(&members, &operands);
        let [head] = ext.as_slice() else { continue };
        let head = *head;
        let last = members[members.len() - 1];
        if !closed(&members, last) {
            continue;
        }
        let index_of = |ep: &Endpoint| -> usize {
            if *ep == head {
                0
            } else {
                members
                    .iter()
                    .position(|&m| m == ep.node)
                    .map_or(0, |p| p + 1)
            }
        };
        let mut steps = Vec::with_capacity(members.len());
        let mut parts = Vec::with_capacity(members.len());
        for &m in &members {
            let arg = |o: &Operand| match o {
                Operand::Value(ep) => FusedArg::Value(index_of(ep)),
                Operand::Const(t) => {
                    let v = t.as_slice::<f32>().unwrap_or_default();
                    if t.shape().rank() == 0 {
                        FusedArg::Scalar(v.first().copied().unwrap_or(0.0))
                    } else {
                        FusedArg::Channel(v.into())
                    }
                }
            };
            let ops = &operands[m];
            let step = match kind[m].as_ref() {
                Some(StepKind::Unary(op)) => match arg(&ops[0]) {
                    FusedArg::Value(v) => FusedStep::Unary(*op, v),
                    _ => break,
                },
                Some(StepKind::BiasAdd) => match (arg(&ops[0]), arg(&ops[1])) {
                    (FusedArg::Value(v), FusedArg::Channel(b)) => FusedStep::BiasAdd(v, b),
                    _ => break,
                },
                Some(StepKind::Binary(op)) => FusedStep::Binary(*op, arg(&ops[0]), arg(&ops[1])),
                None => break,
            };
            steps.push(step);
            let inputs: Vec<PartInput> = ops
                .iter()
                .map(|o| match o {
                    Operand::Value(ep) => PartInput::Value(index_of(ep)),
                    Operand::Const(t) => PartInput::Const(t.clone()),
                })
                .collect();
            parts.push(inputs);
        }
        if steps.len() != members.len() {
            continue;
        }
        let Some(chain) = FusedChain::new(steps) else {
            continue;
        };
        let mut resolved = Vec::with_capacity(members.len());
        for (&m, inputs) in members.iter().zip(parts) {
            let Some(kernel) = kernels[m].take() else {
                break;
            };
            resolved.push(Part {
                node: nodes[m].clone(),
                kernel,
                inputs,
            });
        }
        if resolved.len() != members.len() {
            // Not reached (every candidate has its kernel); put back what was taken.
            for p in resolved {
                kernels[p.node.id] = Some(p.kernel);
            }
            continue;
        }
        kernels[last] = Some(Kernel::Fused(Box::new(Fused {
            chain,
            parts: resolved,
        })));
        inputs_of.insert(last, vec![head]);
    }
    inputs_of
}

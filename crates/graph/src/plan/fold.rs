//! Constant folding when a plan is built (TensorFlow's grappler does the same before a
//! `Session` runs a graph): a node whose every data input is a constant, or a node folded
//! before it, is computed once, and the plan keeps its value as a constant step. Frozen Keras
//! graphs are full of such nodes - a batch normalisation's `Rsqrt(variance + epsilon) * gamma`,
//! the `Identity` left by each `ReadVariableOp` - which would otherwise run on every
//! `Session::run`.
//!
//! A node folds when
//! - it has data inputs, no control inputs, and every input is output 0 of a `Const` without
//!   control inputs or of a folded node, and none is fed;
//! - its kernel is pure: the graph layer's own single-output kernels other than `BroadcastTo`
//!   (which stays lazy for its consumers), or a registry op TensorFlow does not mark stateful,
//!   that calls no function and has one output;
//! - its output's shape is known at graph time and its value takes at most
//!   [`MAX_FOLDED_BYTES`], and all folded values of the plan together fit the session's
//!   constant budget;
//! - its kernel succeeds. A kernel that fails is left in the plan, so the run reports the error
//!   as it would have without folding.
//!
//! The value is what the same kernel computes at run time on the same inputs, so results are
//! unchanged, bit for bit (`tests/session.rs` checks a folded plan against an unfolded one).

use std::collections::HashMap;
use std::sync::Arc;

use tensorcast_core::Tensor;

use crate::build::graph::{Endpoint, Node};
use crate::kernels::Kernel;
use crate::registry::opdef::{AttrKind, Op};

/// The most bytes one folded value may take (grappler's limit for a folded constant, 10 MiB).
pub(crate) const MAX_FOLDED_BYTES: u64 = 10 << 20;

/// True when `kernel`, `node`'s, may run once at plan time in place of every run.
fn pure(node: &Node, kernel: &Kernel) -> bool {
    match kernel {
        Kernel::Identity
        | Kernel::Cast { .. }
        | Kernel::Shape { .. }
        | Kernel::Bitcast { .. }
        | Kernel::Reshape
        | Kernel::Binary { .. } => true,
        Kernel::Reg { out_types, .. } => {
            let Some(Op::Reg(r)) = node.kind else {
                return false;
            };
            let def = r.entry().def;
            out_types.len() == 1
                && !def.stateful
                && !def
                    .attrs
                    .iter()
                    .any(|a| matches!(a.kind, AttrKind::Func | AttrKind::ListFunc))
        }
        Kernel::Const(_)
        | Kernel::Fail(_)
        | Kernel::NoOp
        | Kernel::BroadcastTo
        | Kernel::Fused(_)
        | Kernel::ConvChain(_)
        | Kernel::ScaledSoftmax { .. } => false,
    }
}

/// The bytes `node`'s output 0 takes, when its shape is fully known at graph time.
fn known_bytes(node: &Node) -> Option<u64> {
    let dims = node.output_shapes.first()?.dims()?;
    let mut n: u64 = 1;
    for &d in dims {
        n = n.checked_mul(u64::try_from(d).ok()?)?;
    }
    let size = node.output_types.first()?.size().max(1) as u64;
    n.checked_mul(size)
}

/// Folds what can be folded among the `needed` nodes (`kernels` holds each needed node's
/// resolved kernel; a folded node's becomes `Kernel::Const`). `order` lists the needed nodes
/// with every node after its inputs; `fed` tells the fed endpoints. `budget` bounds the bytes
/// of all folded values together. Returns, by node id, whether the node was folded.
pub(crate) fn fold(
    nodes: &[Arc<Node>],
    order: &[usize],
    fed: &impl Fn(&Endpoint) -> bool,
    kernels: &mut [Option<Kernel>],
    budget: u64,
) -> Vec<bool> {
    let mut folded = vec![false; nodes.len()];
    let mut values: HashMap<usize, Tensor> = HashMap::new();
    let mut spent: u64 = 0;
    for &id in order {
        let node = &nodes[id];
        let Some(kernel) = kernels[id].as_ref() else {
            continue;
        };
        if !node.control_inputs.is_empty() {
            continue;
        }
        if let Kernel::Const(t) = kernel {
            values.insert(id, t.clone());
            continue;
        }
        if node.inputs.is_empty() || !pure(node, kernel) {
            continue;
        }
        let inputs: Option<Vec<Tensor>> = node
            .inputs
            .iter()
            .map(|ep| {
                if ep.index != 0 || fed(ep) {
                    None
                } else {
                    values.get(&ep.node).cloned()
                }
            })
            .collect();
        let Some(inputs) = inputs else {
            continue;
        };
        let Some(bytes) = known_bytes(node) else {
            continue;
        };
        if bytes > MAX_FOLDED_BYTES || spent.saturating_add(bytes) > budget {
            continue;
        }
        let Ok(value) = kernel.compute(&inputs) else {
            continue;
        };
        spent += bytes;
        values.insert(id, value.clone());
        kernels[id] = Some(Kernel::Const(value));
        folded[id] = true;
    }
    folded
}

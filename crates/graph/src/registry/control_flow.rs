//! Control flow. TensorFlow 1's loop and conditional primitives (`Enter`, `Exit`, `Merge`,
//! `Switch`, `NextIteration`, `LoopCond`) have no computation of their own: what they do -
//! frames, iterations, dead tensors - is the dataflow executor's (`session/dataflow.rs`), which
//! runs every graph that contains one. Their entries here give the signatures, shape functions
//! and the identity kernels the executor's bookkeeping wraps. TensorFlow 2's functional forms
//! (`While`, `If`, `Case` and their stateless twins) call functions of the graph's library
//! (`session/functions.rs`).

use tensorcast_core::Tensor;

use super::{defs, same_as_input0, Entry, KernelCtx, ShapeCtx};
use crate::error::{Error, Result};
use crate::opdef::Op;
use crate::shape::PShape;

/// What a TF1 control-flow op is to the dataflow executor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// `Enter`: into a child frame.
    Enter,
    /// `Exit`: back to the parent frame.
    Exit,
    /// `NextIteration`: to the next iteration of the frame.
    NextIteration,
    /// `Switch`: its data to one of two outputs, the other dead.
    Switch,
    /// `Merge`: the first live input.
    Merge,
    /// `LoopCond`: an identity the loop's `Switch` nodes read.
    LoopCond,
}

impl Flow {
    /// The control-flow role of `op`, if it has one.
    pub(crate) fn of(op: Option<Op>) -> Option<Flow> {
        let Some(Op::Reg(r)) = op else { return None };
        Some(match r.entry().def.name {
            "Enter" => Flow::Enter,
            "Exit" => Flow::Exit,
            "NextIteration" => Flow::NextIteration,
            "Switch" => Flow::Switch,
            "Merge" => Flow::Merge,
            "LoopCond" => Flow::LoopCond,
            _ => return None,
        })
    }
}

/// The identity the executor runs for `Enter`, `Exit`, `NextIteration`, `LoopCond`.
fn forward(_: &KernelCtx<'_>, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
    Ok(inputs)
}

/// `Switch` and `Merge` produce dead outputs, which only the dataflow executor represents: it
/// runs them itself and never calls this.
fn dataflow_only(c: &KernelCtx<'_>, _: Vec<Tensor>) -> Result<Vec<Tensor>> {
    Err(Error::Internal(format!(
        "node {} runs only in the dataflow executor",
        c.node
    )))
}

/// `Switch`: both outputs have the data's shape.
fn switch_shape(c: &ShapeCtx<'_>) -> Result<Vec<PShape>> {
    Ok(vec![c.shape(0), c.shape(0)])
}

/// `Merge`: the inputs' common shape - dims that differ unknown, a rank that differs (or an
/// input not known yet, such as a loop's back edge) unknown - and a scalar `value_index`.
fn merge_shape(c: &ShapeCtx<'_>) -> Result<Vec<PShape>> {
    let mut out = c.shape(0);
    for i in 1..c.num_inputs() {
        match (&mut out, c.shape(i)) {
            (Some(o), Some(s)) if s.len() == o.len() => {
                for (d, x) in o.iter_mut().zip(s) {
                    if *d != x {
                        *d = -1;
                    }
                }
            }
            _ => {
                out = None;
                break;
            }
        }
    }
    Ok(vec![out, Some(Vec::new())])
}

pub(super) fn entries() -> Vec<Entry> {
    let pass = |def| Entry {
        def,
        shape: same_as_input0,
        kernel: Some(forward),
        fold: false,
    };
    vec![
        pass(&defs::ENTER),
        pass(&defs::EXIT),
        pass(&defs::NEXT_ITERATION),
        pass(&defs::LOOP_COND),
        Entry {
            def: &defs::SWITCH,
            shape: switch_shape,
            kernel: Some(dataflow_only),
            fold: false,
        },
        Entry {
            def: &defs::MERGE,
            shape: merge_shape,
            kernel: Some(dataflow_only),
            fold: false,
        },
    ]
}

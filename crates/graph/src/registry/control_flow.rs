//! Control flow. TensorFlow 1's loop and conditional primitives (`Enter`, `Exit`, `Merge`,
//! `Switch`, `NextIteration`, `LoopCond`) have no computation of their own: what they do -
//! frames, iterations, dead tensors - is the dataflow executor's (`execute/dataflow.rs`), which
//! runs every graph that contains one. Their entries here give the signatures, shape functions
//! and the identity kernels the executor's bookkeeping wraps. TensorFlow 2's functional forms
//! (`While`, `If`, `Case` and their stateless twins) call functions of the graph's library
//! (`execute/calls.rs`).

use tensorcast_core::{Code, DataType, PartialTensorShape, Tensor};
use tensorcast_proto::attr_value::Value as AttrKind;

use super::spec::op_def;
use super::{forwarding, kernel_error, known, unknown_shapes, Entry, KernelCtx, ShapeCtx};
use crate::attr;
use crate::error::{Error, Result};
use crate::registry::opdef::Op;

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

/// `Switch` and `Merge` produce dead outputs, which only the dataflow executor represents: it
/// runs them itself and never calls this.
fn dataflow_only(c: &KernelCtx<'_>, _: Vec<Tensor>) -> Result<Vec<Tensor>> {
    Err(Error::Internal(format!(
        "node {} runs only in the dataflow executor",
        c.node
    )))
}

/// `Switch`: both outputs have the data's shape.
fn switch_shape(c: &ShapeCtx<'_>) -> Result<Vec<PartialTensorShape>> {
    Ok(vec![c.shape(0), c.shape(0)])
}

/// `Merge`: the inputs' common shape - dims that differ unknown, a rank that differs (or an
/// input not known yet, such as a loop's back edge) unknown - and a scalar `value_index`.
fn merge_shape(c: &ShapeCtx<'_>) -> Result<Vec<PartialTensorShape>> {
    let first = c.shape(0);
    let mut out: Option<Vec<i64>> = first.dims().map(<[i64]>::to_vec);
    for i in 1..c.num_inputs() {
        match (&mut out, c.shape(i).dims()) {
            (Some(o), Some(s)) if s.len() == o.len() => {
                for (d, &x) in o.iter_mut().zip(s) {
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
    let out = match out {
        Some(d) => known(&d)?,
        None => PartialTensorShape::unknown_rank(),
    };
    Ok(vec![
        out,
        PartialTensorShape::from(&tensorcast_core::TensorShape::scalar()),
    ])
}

/// The function a `func` attr names.
fn func_attr<'a>(c: &'a KernelCtx<'_>, name: &str) -> Result<&'a str> {
    match c.attrs.get(name).and_then(|v| v.value.as_ref()) {
        Some(AttrKind::Func(f)) => Ok(f.name.as_str()),
        _ => Err(Error::Function(format!(
            "node '{}' has no function attr '{name}'",
            c.node
        ))),
    }
}

fn op_error(op: &'static str, code: Code, message: String) -> Error {
    kernel_error(tensorcast_core::Error::Op { op, code, message })
}

/// TensorFlow's `ToBool` of a functional op's condition: a scalar is true when not zero (a
/// string when not empty); a tensor of another rank is true when it has elements.
fn to_bool(op: &'static str, t: &Tensor) -> Result<bool> {
    if t.dims() != 0 {
        return Ok(t.num_elements() > 0);
    }
    let nonzero = |t: &Tensor| -> Result<bool> {
        let d = tensorcast_kernels::cast::cast(t, DataType::DOUBLE).map_err(kernel_error)?;
        let v = d.as_slice::<f64>().map_err(kernel_error)?;
        Ok(v[0] != 0.0)
    };
    match t.dtype() {
        DataType::BOOL => Ok(t.as_slice::<bool>().map_err(kernel_error)?[0]),
        DataType::FLOAT
        | DataType::DOUBLE
        | DataType::INT32
        | DataType::UINT8
        | DataType::INT16
        | DataType::INT8
        | DataType::INT64 => nonzero(t),
        DataType::STRING => Ok(!t
            .as_slice::<tensorcast_core::TString>()
            .map_err(kernel_error)?[0]
            .is_empty()),
        d => Err(op_error(
            op,
            Code::InvalidArgument,
            format!("{} cannot be converted to a boolean", d.name()),
        )),
    }
}

/// `While` / `StatelessWhile`: `body` runs while `cond` holds, on the loop variables.
fn while_kernel(c: &KernelCtx<'_>, inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
    let functions = c.run.resources.functions()?;
    let (cond, body) = (func_attr(c, "cond")?, func_attr(c, "body")?);
    let mut vars = inputs;
    loop {
        // A loop that never ends stops when its run is cancelled.
        c.run.check_cancelled()?;
        let r = functions.call(cond, vars.clone(), c.run)?;
        if r.len() != 1 {
            return Err(op_error(
                "While",
                Code::InvalidArgument,
                format!(
                    "Expected a single scalar return value from WhileOp cond, got {} tensors.",
                    r.len()
                ),
            ));
        }
        if !to_bool("While", &r[0])? {
            return Ok(vars);
        }
        let next = functions.call(body, vars, c.run)?;
        if next.len() != c.out_types.len() {
            return Err(op_error(
                "While",
                Code::InvalidArgument,
                format!(
                    "While loop body returned {} arguments. Expected: {}",
                    next.len(),
                    c.out_types.len()
                ),
            ));
        }
        vars = next;
    }
}

/// `If` / `StatelessIf`: `then_branch` or `else_branch` on the inputs after the condition.
fn if_kernel(c: &KernelCtx<'_>, mut inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
    let functions = c.run.resources.functions()?;
    if inputs.is_empty() {
        return Err(Error::Internal("If without a condition".into()));
    }
    let cond = inputs.remove(0);
    let branch = if to_bool("If", &cond)? {
        func_attr(c, "then_branch")?
    } else {
        func_attr(c, "else_branch")?
    };
    let out = functions.call(branch, inputs, c.run)?;
    checked_outputs("If", c, out)
}

/// A branch's outputs, each of the dtype the node declares (TensorFlow's message for one that
/// is not).
fn checked_outputs(op: &'static str, c: &KernelCtx<'_>, out: Vec<Tensor>) -> Result<Vec<Tensor>> {
    for (i, (t, want)) in out.iter().zip(c.out_types).enumerate() {
        if t.dtype() != *want {
            return Err(op_error(
                op,
                Code::InvalidArgument,
                format!(
                    "Expect {i}-th output is of type {} but get {}",
                    want.name(),
                    t.dtype().name()
                ),
            ));
        }
    }
    Ok(out)
}

/// `Case` / `StatelessCase`: branch `branch_index` (the last one when out of range, as
/// TensorFlow's kernel does) on the inputs after the index.
fn case_kernel(c: &KernelCtx<'_>, mut inputs: Vec<Tensor>) -> Result<Vec<Tensor>> {
    let functions = c.run.resources.functions()?;
    if inputs.is_empty() {
        return Err(Error::Internal("Case without a branch index".into()));
    }
    let index = inputs.remove(0);
    if index.dims() != 0 {
        return Err(op_error(
            "Case",
            Code::InvalidArgument,
            "branch_index must be scalar".into(),
        ));
    }
    let k = index.as_slice::<i32>().map_err(kernel_error)?[0];
    let branches: Vec<&str> = match c.attrs.get("branches").and_then(|v| v.value.as_ref()) {
        Some(AttrKind::List(l)) => l.func.iter().map(|f| f.name.as_str()).collect(),
        _ => Vec::new(),
    };
    let Some(last) = branches.len().checked_sub(1) else {
        return Err(Error::Function(format!(
            "node '{}' has no branches",
            c.node
        )));
    };
    let pick = usize::try_from(k)
        .ok()
        .filter(|&k| k <= last)
        .unwrap_or(last);
    let out = functions.call(branches[pick], inputs, c.run)?;
    checked_outputs("Case", c, out)
}

/// `While`'s shapes: `output_shapes` when set, else the loop variables' (the shapes a loop
/// keeps from iteration to iteration).
fn while_shape(c: &ShapeCtx<'_>) -> Result<Vec<PartialTensorShape>> {
    match output_shapes(c) {
        Some(s) => s,
        None => Ok((0..c.out_types.len()).map(|i| c.shape(i)).collect()),
    }
}

/// `If`'s shapes: `output_shapes` when set, else unknown.
fn if_shape(c: &ShapeCtx<'_>) -> Result<Vec<PartialTensorShape>> {
    match output_shapes(c) {
        Some(s) => s,
        None => unknown_shapes(c),
    }
}

fn output_shapes(c: &ShapeCtx<'_>) -> Option<Result<Vec<PartialTensorShape>>> {
    match c.attrs.get("output_shapes").and_then(|v| v.value.as_ref()) {
        Some(AttrKind::List(l)) if !l.shape.is_empty() && l.shape.len() == c.out_types.len() => {
            Some(l.shape.iter().map(attr::partial_shape).collect())
        }
        _ => None,
    }
}

pub(super) fn entries() -> Vec<Entry> {
    // The identity the executor runs for `Enter`, `Exit`, `NextIteration`, `LoopCond`.
    let pass = |def| forwarding(def, false);
    vec![
        pass(op_def("Enter")),
        pass(op_def("Exit")),
        pass(op_def("NextIteration")),
        pass(op_def("LoopCond")),
        Entry {
            def: op_def("Switch"),
            shape: switch_shape,
            kernel: Some(dataflow_only),
            fold: false,
            sized_by_values: false,
        },
        Entry {
            def: op_def("Merge"),
            shape: merge_shape,
            kernel: Some(dataflow_only),
            fold: false,
            sized_by_values: false,
        },
        Entry {
            def: op_def("While"),
            shape: while_shape,
            kernel: Some(while_kernel),
            fold: false,
            sized_by_values: false,
        },
        Entry {
            def: op_def("StatelessWhile"),
            shape: while_shape,
            kernel: Some(while_kernel),
            fold: false,
            sized_by_values: false,
        },
        Entry {
            def: op_def("If"),
            shape: if_shape,
            kernel: Some(if_kernel),
            fold: false,
            sized_by_values: false,
        },
        Entry {
            def: op_def("StatelessIf"),
            shape: if_shape,
            kernel: Some(if_kernel),
            fold: false,
            sized_by_values: false,
        },
        Entry {
            def: op_def("Case"),
            shape: if_shape,
            kernel: Some(case_kernel),
            fold: false,
            sized_by_values: false,
        },
        Entry {
            def: op_def("StatelessCase"),
            shape: if_shape,
            kernel: Some(case_kernel),
            fold: false,
            sized_by_values: false,
        },
    ]
}

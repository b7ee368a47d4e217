//! Graph-time shape inference: TensorFlow's shape functions for the registered ops, over partial
//! shapes, with the constant and partial-value propagation (`Const`, `Shape`, `Cast`, `Identity`,
//! small constant subgraphs) that decides `BroadcastTo`'s and `Reshape`'s output.

mod shape_fns;
mod values;

use tensorcast_core::{DataType, Tensor};

use crate::attr::Attrs;
use crate::error::Result;
use crate::registry::opdef::Op;
use crate::shape::PShape;

pub(crate) use shape_fns::broadcast_binary;
pub(crate) use values::{Known, VALUE_BUDGET_BYTES};

/// What inference knows about one input.
#[derive(Debug, Clone)]
pub(crate) struct InferInput {
    pub(crate) shape: PShape,
    pub(crate) value: Option<Known>,
}

/// What inference found for a node's outputs.
#[derive(Debug, Clone, Default)]
pub(crate) struct Inferred {
    pub(crate) shapes: Vec<PShape>,
    pub(crate) values: Vec<Option<Known>>,
}

/// Runs `op`'s shape function and value propagation. `producer` is the graph's producer version
/// (Placeholder's legacy rule); `budget` is what the graph may still spend on values known at
/// graph time (bytes), and is charged for the values this node keeps.
pub(crate) fn infer(
    op: Op,
    attrs: &Attrs,
    inputs: &[InferInput],
    out_types: &[DataType],
    producer: i32,
    budget: &mut u64,
) -> Result<Inferred> {
    let shapes = shape_fns::run(op, attrs, inputs, out_types, producer)?;
    let values = values::propagate(op, attrs, inputs, out_types, &shapes, budget);
    Ok(Inferred { shapes, values })
}

/// The int32/int64 elements of a rank-1 tensor, if it is one.
pub(crate) fn int_values(t: &Tensor) -> Option<Vec<i64>> {
    if t.dims() != 1 {
        return None;
    }
    match t.dtype() {
        DataType::INT32 => t
            .as_slice::<i32>()
            .ok()
            .map(|s| s.iter().map(|&x| i64::from(x)).collect()),
        DataType::INT64 => t.as_slice::<i64>().ok().map(<[i64]>::to_vec),
        _ => None,
    }
}

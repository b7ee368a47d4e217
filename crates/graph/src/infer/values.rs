//! Value propagation: which outputs have a value known at graph time (a constant tensor), or a
//! known partial value (a shape vector with unknown entries, from `Shape` of a partial shape).

use tensorcast_core::{DataType, Tensor, TensorShape};

use super::InferInput;
use crate::attr::{self, Attrs};
use crate::registry::opdef::Op;
use crate::shape::PShape;

/// A value known at graph time.
#[derive(Debug, Clone)]
pub(crate) enum Known {
    /// The whole tensor.
    Tensor(Tensor),
    /// A shape-valued int vector with `-1` for entries not known.
    Partial(Vec<i64>),
}

/// Largest Const value (in elements) decoded at graph time: shape operands (rank at most 254)
/// and the small index vectors shape functions read fit easily.
const MAX_CONST_ELEMENTS: i64 = 1 << 10;

/// What one graph may keep, in all, of values known at graph time (decoded constants and folded
/// results), in bytes. Past it, further values are simply not known at graph time (inference
/// gives less precise shapes; nothing fails), so a GraphDef of many constants costs memory in
/// proportion to its own size, never 65,536 decoded elements per 20-byte node.
pub(crate) const VALUE_BUDGET_BYTES: u64 = 1 << 20;

/// True for the dtypes whose values shape inference uses (integers and bool); string, resource,
/// variant and floating values are never decoded at graph time.
fn decodable(dtype: DataType) -> bool {
    dtype == DataType::BOOL || dtype.is_integer()
}

/// Keeps `v` when `budget` allows its bytes, charging them.
fn charge(v: Option<Known>, budget: &mut u64) -> Option<Known> {
    let bytes = match &v {
        Some(Known::Tensor(t)) => t.total_bytes() as u64,
        Some(Known::Partial(d)) => (d.len() * 8) as u64,
        None => return None,
    };
    if bytes > *budget {
        return None;
    }
    *budget -= bytes;
    v
}

/// Largest output (in elements) folded at graph time.
const MAX_FOLD_ELEMENTS: i64 = 1 << 12;

/// Known values of a node's outputs.
pub(super) fn propagate(
    op: Op,
    attrs: &Attrs,
    inputs: &[InferInput],
    out_types: &[DataType],
    shapes: &[PShape],
    budget: &mut u64,
) -> Vec<Option<Known>> {
    let values = known_values(op, attrs, inputs, out_types, shapes);
    values.into_iter().map(|v| charge(v, budget)).collect()
}

fn known_values(
    op: Op,
    attrs: &Attrs,
    inputs: &[InferInput],
    out_types: &[DataType],
    shapes: &[PShape],
) -> Vec<Option<Known>> {
    let one = |v: Option<Known>| vec![v];
    match op {
        Op::Const => one(attr::get_tensor(attrs, "value").and_then(|p| {
            let dtype = DataType::from_number(p.dtype);
            if !decodable(dtype) || Some(&dtype) != out_types.first() {
                return None;
            }
            // Only small values are decoded at graph time (shape operands are small; a big or
            // fill-encoded value would cost memory its few bytes do not justify).
            let dims = p
                .tensor_shape
                .as_ref()
                .map(|s| s.dim.iter().map(|d| d.size).collect::<Vec<_>>())?;
            let n = dims.iter().try_fold(
                1i64,
                |acc, &d| if d < 0 { None } else { acc.checked_mul(d) },
            )?;
            if n > MAX_CONST_ELEMENTS {
                return None;
            }
            let t = tensorcast_proto::tensor_from_proto(p).ok()?;
            (Some(&t.dtype()) == out_types.first()).then_some(Known::Tensor(t))
        })),
        Op::Placeholder => one(None),
        Op::Identity => one(inputs.first().and_then(|i| i.value.clone())),
        Op::Shape => {
            let out_type = out_types.first().copied().unwrap_or(DataType::INT32);
            one(inputs.first().and_then(|i| {
                let d = i.shape.as_ref()?;
                if d.iter().all(|&x| x >= 0) {
                    shape_tensor(d, out_type).map(Known::Tensor)
                } else {
                    Some(Known::Partial(d.clone()))
                }
            }))
        }
        Op::Cast => {
            let dst = out_types.first().copied().unwrap_or(DataType::INVALID);
            match inputs.first().and_then(|i| i.value.as_ref()) {
                Some(Known::Partial(d)) if dst == DataType::INT32 || dst == DataType::INT64 => {
                    one(Some(Known::Partial(d.clone())))
                }
                _ => fold(op, attrs, inputs, shapes),
            }
        }
        Op::NoOp | Op::Bitcast | Op::BroadcastTo | Op::Reshape | Op::Binary(_) => {
            fold(op, attrs, inputs, shapes)
        }
        // A registry op folds when its entry says so and every output is an integer or bool.
        Op::Reg(r)
            if r.entry().fold
                && !r.entry().def.stateful
                && out_types.iter().all(|d| decodable(*d)) =>
        {
            fold(op, attrs, inputs, shapes)
        }
        Op::Reg(_) => vec![None; shapes.len()],
    }
}

/// The output dtypes of a fold are integers or bools (attrs that name the output dtype).
fn out_types_decodable(op: Op, attrs: &Attrs) -> bool {
    let named = match op {
        Op::Cast => attr::get_type(attrs, "DstT"),
        Op::Bitcast => attr::get_type(attrs, "type"),
        Op::Const
        | Op::Placeholder
        | Op::NoOp
        | Op::Identity
        | Op::Shape
        | Op::BroadcastTo
        | Op::Reshape
        | Op::Binary(_)
        | Op::Reg(_) => None,
    };
    named.is_none_or(decodable)
}

fn shape_tensor(dims: &[i64], dtype: DataType) -> Option<Tensor> {
    if dtype == DataType::INT64 {
        return Some(Tensor::vector(dims));
    }
    let v: Vec<i32> = dims
        .iter()
        .map(|&d| i32::try_from(d).ok())
        .collect::<Option<_>>()?;
    Some(Tensor::vector(&v))
}

/// Constant folding of a small node whose inputs are all known tensors.
fn fold(op: Op, attrs: &Attrs, inputs: &[InferInput], shapes: &[PShape]) -> Vec<Option<Known>> {
    let none = vec![None; shapes.len()];
    let small = shapes.iter().all(|s| {
        s.as_ref()
            .and_then(|d| TensorShape::new(d).ok())
            .is_some_and(|s| s.num_elements() <= MAX_FOLD_ELEMENTS)
    });
    // Folding reads only values already known (integers and bools); a Cast or Bitcast to
    // another dtype could produce a float value: keep those out too.
    let small = small && out_types_decodable(op, attrs);
    if inputs.is_empty() || !small {
        return none;
    }
    let mut tensors = Vec::with_capacity(inputs.len());
    for i in inputs {
        match &i.value {
            Some(Known::Tensor(t)) => tensors.push(t.clone()),
            _ => return none,
        }
    }
    match crate::kernels::compute(op, attrs, &tensors) {
        Ok(out) if out.len() == shapes.len() => {
            out.into_iter().map(|t| Some(Known::Tensor(t))).collect()
        }
        _ => none,
    }
}

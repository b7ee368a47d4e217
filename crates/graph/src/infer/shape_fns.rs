//! The shape function of each registered op (TensorFlow's `common_shape_fns` and the ops'
//! registrations), with TensorFlow's messages.

use tensorcast_core::DataType;

use super::{int_values, InferInput, Known};
use crate::attr::{self, Attrs};
use crate::error::{Error, Result};
use crate::registry::opdef::Op;
use crate::shape::{self, PShape};

/// Output shapes of `op`.
pub(super) fn run(
    op: Op,
    attrs: &Attrs,
    inputs: &[InferInput],
    out_types: &[DataType],
    producer: i32,
) -> Result<Vec<PShape>> {
    let input = |i: usize| inputs.get(i).map(|x| x.shape.clone()).unwrap_or(None);
    Ok(match op {
        Op::Const => vec![const_shape(attrs)?],
        Op::Placeholder => {
            let s = attr::get_shape(attrs, "shape")
                .map(shape::from_proto)
                .unwrap_or(None);
            // Legacy rule: GraphDefs up to version 21 wrote "unknown" as a shape with no dims.
            let s = match s {
                Some(d) if d.is_empty() && producer <= 21 => None,
                s => s,
            };
            vec![s]
        }
        Op::NoOp => Vec::new(),
        Op::Identity | Op::Cast => vec![input(0)],
        Op::Shape => vec![Some(vec![input(0).map_or(-1, |d| d.len() as i64)])],
        Op::Bitcast => vec![bitcast(attrs, input(0))?],
        Op::BroadcastTo => vec![broadcast_to(input(0), inputs.get(1))?],
        Op::Reshape => vec![reshape(input(0), inputs.get(1))?],
        // `incompatible_shape_error` (Equal and NotEqual; true for the ops without the attr).
        Op::Binary(_) => {
            let ise = attr::get_bool(attrs, "incompatible_shape_error").unwrap_or(true);
            vec![broadcast_binary(&input(0), &input(1), ise)?]
        }
        Op::Reg(r) => (r.entry().shape)(&crate::registry::ShapeCtx {
            attrs,
            inputs,
            out_types,
        })?,
    })
}

fn const_shape(attrs: &Attrs) -> Result<PShape> {
    let Some(proto) = attr::get_tensor(attrs, "value") else {
        return Ok(None);
    };
    let dims: Vec<i64> = proto
        .tensor_shape
        .as_ref()
        .map(|s| s.dim.iter().map(|d| d.size).collect())
        .unwrap_or_default();
    if dims.iter().any(|&d| d < 0) {
        return Err(Error::ShapeNotFullyDefined(shape::dims_debug(&dims)));
    }
    Ok(Some(dims))
}

fn bitcast(attrs: &Attrs, input: PShape) -> Result<PShape> {
    let Some(dims) = input else { return Ok(None) };
    let from = attr::get_type(attrs, "T").unwrap_or(DataType::INVALID);
    let to = attr::get_type(attrs, "type").unwrap_or(DataType::INVALID);
    let (a, b) = (from.size() as i64, to.size() as i64);
    if a == 0 || b == 0 {
        return Err(Error::InvalidInput(format!(
            "Cannot bitcast types {} to {} because one of the type sizes is zero.",
            from.name(),
            to.name()
        )));
    }
    if a == b {
        return Ok(Some(dims));
    }
    if a > b {
        let mut d = dims;
        d.push(a / b);
        return Ok(Some(d));
    }
    let Some(&last) = dims.last() else {
        return Err(Error::RankAtLeast {
            expected: 1,
            actual: 0,
        });
    };
    let ratio = b / a;
    if last >= 0 && last != ratio {
        return Err(Error::BitcastShape {
            from,
            to,
            last,
            ratio,
        });
    }
    let mut d = dims;
    d.pop();
    Ok(Some(d))
}

/// TensorFlow's largest rank (`TensorShape::MaxDimensions()`).
const MAX_RANK: i64 = 254;

/// `MakeShapeFromShapeTensor`: the partial shape a shape operand describes.
fn shape_from_shape_tensor(input: Option<&InferInput>) -> Result<PShape> {
    let Some(input) = input else { return Ok(None) };
    if let Some(d) = &input.shape {
        if d.len() != 1 {
            return Err(Error::RankMustBe {
                expected: 1,
                actual: d.len(),
            });
        }
    }
    match &input.value {
        Some(Known::Tensor(t)) => {
            if t.dtype() != DataType::INT32 && t.dtype() != DataType::INT64 {
                return Err(Error::ShapeTensorType(t.dtype()));
            }
            let values = int_values(t).unwrap_or_default();
            let mut out = Vec::with_capacity(values.len());
            for v in values {
                if v < -1 {
                    return Err(Error::InvalidShapeValue(v));
                }
                out.push(v);
            }
            Ok(Some(out))
        }
        Some(Known::Partial(d)) => Ok(Some(d.clone())),
        None => match &input.shape {
            Some(d) if d[0] > MAX_RANK => Err(Error::InvalidInput(format!(
                "Shape of rank {} is above the maximum rank {MAX_RANK}",
                d[0]
            ))),
            Some(d) if d[0] >= 0 => Ok(Some(vec![-1; d[0] as usize])),
            _ => Ok(None),
        },
    }
}

fn broadcast_to(input: PShape, target: Option<&InferInput>) -> Result<PShape> {
    let out = shape_from_shape_tensor(target)?;
    let (Some(mut out_dims), Some(in_dims)) = (out.clone(), input) else {
        return Ok(out);
    };
    if in_dims.len() > out_dims.len() {
        return Err(Error::RankAtMost {
            expected: out_dims.len(),
            actual: in_dims.len(),
        });
    }
    let offset = out_dims.len() - in_dims.len();
    for (i, &d) in in_dims.iter().enumerate() {
        let o = &mut out_dims[offset + i];
        if d > 1 {
            if *o < 0 {
                *o = d;
            } else if *o != d {
                return Err(Error::DimensionsMustBeEqual(d, *o));
            }
        }
    }
    Ok(Some(out_dims))
}

/// Element count of one side of a reshape: `(known product, index of the single unknown dim,
/// more than one unknown)`; any dim of 0 makes the count known (0).
fn reshape_side(d: &[i64]) -> (i64, Option<usize>, bool) {
    if d.contains(&0) {
        return (0, None, false);
    }
    let mut prod: i64 = 1;
    let mut unknown = None;
    let mut too_many = false;
    for (i, &x) in d.iter().enumerate() {
        if x < 0 {
            if unknown.is_some() {
                too_many = true;
            }
            unknown = Some(i);
        } else {
            prod = prod.saturating_mul(x);
        }
    }
    (prod, unknown, too_many)
}

fn reshape(input: PShape, target: Option<&InferInput>) -> Result<PShape> {
    let out = shape_from_shape_tensor(target)?;
    let Some(mut out_dims) = out else {
        return Ok(None);
    };
    let Some(in_dims) = input else {
        return Ok(Some(out_dims));
    };
    let (in_n, in_unknown, in_many) = reshape_side(&in_dims);
    let (out_n, out_unknown, out_many) = reshape_side(&out_dims);
    if in_many || out_many {
        return Ok(Some(out_dims));
    }
    match (in_unknown, out_unknown) {
        (None, None) if in_n != out_n => {
            return Err(Error::CannotReshape {
                input_elements: in_n,
                shape: shape::dims_debug(&out_dims),
                output_elements: out_n,
            });
        }
        (None, Some(i)) if out_n > 0 => {
            if in_n % out_n != 0 {
                return Err(Error::NotEvenlyDivisible {
                    divisor: out_n,
                    value: in_n,
                });
            }
            out_dims[i] = in_n / out_n;
        }
        (Some(_), None) if in_n != 0 && out_n % in_n != 0 => {
            return Err(Error::NotEvenlyDivisible {
                divisor: in_n,
                value: out_n,
            });
        }
        (Some(a), Some(b)) if in_n == out_n => {
            out_dims[b] = in_dims[a];
        }
        _ => {}
    }
    Ok(Some(out_dims))
}

/// `BroadcastBinaryOpOutputShapeFnHelper`.
pub(crate) fn broadcast_binary(x: &PShape, y: &PShape, ise: bool) -> Result<PShape> {
    let (Some(x), Some(y)) = (x, y) else {
        return Ok(None);
    };
    let n = x.len().max(y.len());
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let dx = if i < n - x.len() {
            1
        } else {
            x[i - (n - x.len())]
        };
        let dy = if i < n - y.len() {
            1
        } else {
            y[i - (n - y.len())]
        };
        if dx >= 0 && dy >= 0 {
            if dx == 1 {
                out.push(dy);
            } else if dy == 1 || dx == dy {
                out.push(dx);
            } else if ise {
                return Err(Error::DimensionsMustBeEqual(dx, dy));
            } else {
                return Ok(Some(Vec::new()));
            }
        } else if dx > 1 {
            if !ise {
                return Ok(None);
            }
            out.push(dx);
        } else if dy > 1 {
            if !ise {
                return Ok(None);
            }
            out.push(dy);
        } else if dx == 1 {
            out.push(dy);
        } else if dy == 1 {
            out.push(dx);
        } else if dx < 0 && dy < 0 {
            out.push(-1);
        } else {
            if !ise {
                return Ok(None);
            }
            out.push(-1);
        }
    }
    Ok(Some(out))
}

//! Partial shapes as shape inference handles them: `None` is unknown rank, `-1` an unknown dim.

use tensorcast_core::PartialTensorShape;
use tensorcast_proto::{tensor_shape_proto::Dim, TensorShapeProto};

/// A partial shape: `None` = unknown rank; a dim of -1 = unknown.
pub(crate) type PShape = Option<Vec<i64>>;

/// TensorFlow's `DebugString` of a partial shape: `[2,?]`, `<unknown>`, `[]`.
pub(crate) fn debug(s: &PShape) -> String {
    match s {
        None => "<unknown>".to_string(),
        Some(d) => dims_debug(d),
    }
}

/// `[2,?]` for a dim list (negative dims print as `?`).
pub(crate) fn dims_debug(d: &[i64]) -> String {
    let parts: Vec<String> = d
        .iter()
        .map(|&x| {
            if x < 0 {
                "?".to_string()
            } else {
                x.to_string()
            }
        })
        .collect();
    format!("[{}]", parts.join(","))
}

/// The public form.
pub(crate) fn to_partial(s: &PShape) -> PartialTensorShape {
    match s {
        None => PartialTensorShape::unknown_rank(),
        Some(d) => {
            PartialTensorShape::new(d).unwrap_or_else(|_| PartialTensorShape::unknown_rank())
        }
    }
}

/// From the public form.
pub(crate) fn from_partial(s: &PartialTensorShape) -> PShape {
    s.dims().map(<[i64]>::to_vec)
}

/// A `TensorShapeProto` for a partial shape (`unknown_rank: true` for unknown rank).
pub(crate) fn to_proto(s: &PShape) -> TensorShapeProto {
    match s {
        None => TensorShapeProto {
            dim: Vec::new(),
            unknown_rank: true,
        },
        Some(d) => TensorShapeProto {
            dim: d
                .iter()
                .map(|&size| Dim {
                    size,
                    name: String::new(),
                })
                .collect(),
            unknown_rank: false,
        },
    }
}

/// A partial shape from a `TensorShapeProto` as a shape attr (`unknown_rank` wins).
pub(crate) fn from_proto(p: &TensorShapeProto) -> PShape {
    if p.unknown_rank {
        None
    } else {
        Some(
            p.dim
                .iter()
                .map(|d| if d.size < 0 { -1 } else { d.size })
                .collect(),
        )
    }
}

/// TensorFlow's limit on a shape's rank (`TensorShape::MaxDimensions`).
pub(crate) const MAX_DIMS: usize = 254;

/// The checks TensorFlow's `PartialTensorShape` makes of a `TensorShapeProto`: at most 254 dims,
/// none below -1, and a known element count that fits an `i64`.
pub(crate) fn check_proto(p: &TensorShapeProto) -> crate::error::Result<()> {
    use crate::error::Error;
    if p.unknown_rank {
        return Ok(());
    }
    let shown = || {
        let parts: Vec<String> = p
            .dim
            .iter()
            .map(|d| {
                if d.size == -1 {
                    "?".to_string()
                } else {
                    d.size.to_string()
                }
            })
            .collect();
        format!("[{}]", parts.join(","))
    };
    if p.dim.len() > MAX_DIMS {
        return Err(Error::ShapeTooManyDims(shown()));
    }
    // Dim by dim, as TensorFlow builds the shape: a dim below -1 is refused where it comes;
    // the element count is checked while every dim so far is known (an unknown dim makes it
    // unknown, and TensorFlow checks no further).
    let mut n: Option<i64> = Some(1);
    for d in &p.dim {
        match d.size {
            s if s < -1 => return Err(Error::ShapeDimBelowUnknown(shown())),
            -1 => n = None,
            s => {
                if let Some(k) = n {
                    n = Some(
                        k.checked_mul(s)
                            .ok_or_else(|| Error::ShapeTooLarge(shown()))?,
                    );
                }
            }
        }
    }
    Ok(())
}

/// True when a concrete shape fits a partial one.
pub(crate) fn compatible(partial: &PShape, concrete: &[i64]) -> bool {
    match partial {
        None => true,
        Some(d) => {
            d.len() == concrete.len() && d.iter().zip(concrete).all(|(&p, &c)| p < 0 || p == c)
        }
    }
}

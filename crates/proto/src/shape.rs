//! `TensorShapeProto` <-> [`TensorShape`] / [`PartialTensorShape`], with TensorFlow's
//! `IsValidShape` rules and messages.

use tensorcast_core::{PartialTensorShape, TensorShape, MAX_DIMENSIONS};

use crate::messages::{tensor_shape_proto::Dim, TensorShapeProto};
use crate::ProtoError;

/// TensorFlow's `DebugString(const TensorShapeProto&)`: `<unknown>` for an unknown rank (alone
/// when there are no dims), then `[d0,d1,...]` with only `-1` printed as `?`.
pub fn shape_proto_debug_string(proto: &TensorShapeProto) -> String {
    let mut s = String::new();
    if proto.unknown_rank {
        s.push_str("<unknown>");
        if proto.dim.is_empty() {
            return s;
        }
    }
    s.push('[');
    for (i, d) in proto.dim.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        if d.size == -1 {
            s.push('?');
        } else {
            s.push_str(&d.size.to_string());
        }
    }
    s.push(']');
    s
}

/// The fully defined shape a `TensorShapeProto` describes (TensorFlow's `TensorShape(proto)`
/// after `TensorShape::IsValidShape(proto)`), or TensorFlow's error:
/// `Shape <dbg> has too many dimensions` (more than 254), `Shape <dbg> is not fully defined`
/// (a negative dim), `Shape <dbg> is too large (more than 2**63 - 1 entries)`.
///
/// `unknown_rank` is ignored, as TensorFlow's non-partial shapes ignore it: `{unknown_rank:
/// true}` with no dims is a scalar. A missing proto (`None`) is a scalar too.
///
/// # Errors
/// [`ProtoError::InvalidShape`] with one of the messages above.
///
/// ```
/// use tensorcast_proto::{shape_from_proto, tensor_shape_proto::Dim, TensorShapeProto};
/// let p = TensorShapeProto { dim: vec![Dim { size: -1, name: String::new() }], unknown_rank: false };
/// assert_eq!(shape_from_proto(Some(&p)).unwrap_err().to_string(), "Shape [?] is not fully defined");
/// assert_eq!(shape_from_proto(None)?.rank(), 0);
/// # Ok::<(), tensorcast_proto::ProtoError>(())
/// ```
pub fn shape_from_proto(proto: Option<&TensorShapeProto>) -> Result<TensorShape, ProtoError> {
    let Some(proto) = proto else {
        return Ok(TensorShape::scalar());
    };
    let invalid = |what: &str| {
        ProtoError::InvalidShape(format!("Shape {} {what}", shape_proto_debug_string(proto)))
    };
    if proto.dim.len() > MAX_DIMENSIONS {
        return Err(invalid("has too many dimensions"));
    }
    let mut n: i64 = 1;
    for d in &proto.dim {
        if d.size < 0 {
            return Err(invalid("is not fully defined"));
        }
        // TensorFlow's MultiplyWithoutOverflow: once the count is 0 it stays 0, so a zero dim
        // makes any later dim acceptable.
        n = if n == 0 {
            0
        } else {
            n.checked_mul(d.size).unwrap_or(-1)
        };
        if n < 0 {
            return Err(invalid("is too large (more than 2**63 - 1 entries)"));
        }
    }
    let dims: Vec<i64> = proto.dim.iter().map(|d| d.size).collect();
    Ok(TensorShape::new(&dims)?)
}

/// The proto of a shape (TensorFlow's `TensorShape::AsProto`): one `Dim` per dimension with
/// only its size set; `unknown_rank` false.
pub fn shape_to_proto(shape: &TensorShape) -> TensorShapeProto {
    dims_to_proto(shape.dim_sizes())
}

/// The proto of a shape of `dims` as given, unchecked (a decoder's tests and peers write
/// shapes no [`TensorShape`] holds: negative sizes, claims past the element limit).
pub fn dims_to_proto(dims: &[i64]) -> TensorShapeProto {
    TensorShapeProto {
        dim: dims
            .iter()
            .map(|&size| Dim {
                size,
                name: String::new(),
            })
            .collect(),
        unknown_rank: false,
    }
}

/// The partial shape a `TensorShapeProto` describes (TensorFlow's
/// `PartialTensorShape::BuildPartialTensorShape`), with its messages: `An unknown shape must
/// not have any dimensions set.`, `Shape <dbg> has too many dimensions`, `Shape <dbg> has
/// dimensions with values below -1 (where -1 means unknown)`, `Shape <dbg> is too large (more
/// than 2**63 - 1 entries)`.
///
/// # Errors
/// [`ProtoError::InvalidShape`] with one of the messages above.
pub fn partial_shape_from_proto(
    proto: Option<&TensorShapeProto>,
) -> Result<PartialTensorShape, ProtoError> {
    let Some(proto) = proto else {
        // A missing message reads as the default message: known rank 0.
        return Ok(PartialTensorShape::new(&[])?);
    };
    let invalid = |what: &str| {
        ProtoError::InvalidShape(format!("Shape {} {what}", shape_proto_debug_string(proto)))
    };
    if proto.unknown_rank {
        if !proto.dim.is_empty() {
            return Err(ProtoError::InvalidShape(
                "An unknown shape must not have any dimensions set.".to_string(),
            ));
        }
        return Ok(PartialTensorShape::unknown_rank());
    }
    if proto.dim.len() > MAX_DIMENSIONS {
        return Err(invalid("has too many dimensions"));
    }
    let mut n: i64 = 1;
    for d in &proto.dim {
        if d.size < -1 {
            return Err(invalid(
                "has dimensions with values below -1 (where -1 means unknown)",
            ));
        }
        if d.size == -1 {
            n = -1;
        } else if n > 0 {
            n = n.checked_mul(d.size).unwrap_or(-2);
            if n == -2 {
                return Err(invalid("is too large (more than 2**63 - 1 entries)"));
            }
        }
    }
    let dims: Vec<i64> = proto.dim.iter().map(|d| d.size).collect();
    Ok(PartialTensorShape::new(&dims)?)
}

/// The proto of a partial shape (`PartialTensorShape::AsProto`): `unknown_rank` and no dims for
/// an unknown rank, otherwise one `Dim` per dimension (-1 for unknown ones).
pub fn partial_shape_to_proto(shape: &PartialTensorShape) -> TensorShapeProto {
    match shape.dims() {
        None => TensorShapeProto {
            dim: Vec::new(),
            unknown_rank: true,
        },
        Some(d) => dims_to_proto(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proto(dims: &[i64]) -> TensorShapeProto {
        dims_to_proto(dims)
    }

    #[test]
    fn valid_shapes_convert() {
        let s = shape_from_proto(Some(&proto(&[2, 3]))).unwrap();
        assert_eq!(s.dim_sizes(), &[2, 3]);
        assert_eq!(shape_to_proto(&s), proto(&[2, 3]));
        let unknown = TensorShapeProto {
            dim: vec![],
            unknown_rank: true,
        };
        assert_eq!(shape_from_proto(Some(&unknown)).unwrap().rank(), 0);
    }

    #[test]
    fn invalid_shapes_have_tensorflow_messages() {
        let e = |d: &[i64]| shape_from_proto(Some(&proto(d))).unwrap_err().to_string();
        assert_eq!(e(&[2, -1]), "Shape [2,?] is not fully defined");
        assert_eq!(e(&[-5]), "Shape [-5] is not fully defined");
        assert_eq!(
            e(&[1 << 62, 4]),
            "Shape [4611686018427387904,4] is too large (more than 2**63 - 1 entries)"
        );
        assert!(e(&[1; 255]).ends_with(" has too many dimensions"));
        // A zero dim keeps the count at zero: later huge dims are accepted, as in TensorFlow.
        assert_eq!(
            shape_from_proto(Some(&proto(&[0, 1 << 62, 4])))
                .unwrap()
                .num_elements(),
            0
        );
        assert!(shape_from_proto(Some(&proto(&[1; 254]))).is_ok());
    }

    #[test]
    fn partial_shapes_convert_and_validate() {
        let p = partial_shape_from_proto(Some(&proto(&[-1, 3]))).unwrap();
        assert_eq!(p.dims(), Some(&[-1, 3][..]));
        assert_eq!(partial_shape_to_proto(&p), proto(&[-1, 3]));
        let unk = partial_shape_to_proto(&PartialTensorShape::unknown_rank());
        assert!(unk.unknown_rank);
        assert_eq!(partial_shape_from_proto(Some(&unk)).unwrap().rank(), None);
        assert_eq!(
            partial_shape_from_proto(Some(&proto(&[-2])))
                .unwrap_err()
                .to_string(),
            "Shape [-2] has dimensions with values below -1 (where -1 means unknown)"
        );
        let bad = TensorShapeProto {
            dim: proto(&[1]).dim,
            unknown_rank: true,
        };
        assert_eq!(
            partial_shape_from_proto(Some(&bad))
                .unwrap_err()
                .to_string(),
            "An unknown shape must not have any dimensions set."
        );
    }
}

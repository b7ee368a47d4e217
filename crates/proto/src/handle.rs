//! Resource handles <-> their protos (`ResourceHandle::FromProto` and `AsProto`). Variants,
//! which hold tensors, convert in `decode` and `encode` beside the tensors themselves, so that
//! neither module depends on the other.

use tensorcast_core::{DataType, ResourceHandle};

use crate::messages::{resource_handle_proto::DtypeAndShape, ResourceHandleProto};
use crate::shape::{partial_shape_from_proto, partial_shape_to_proto, shape_proto_debug_string};
use crate::ProtoError;

/// A short text form of a handle's proto for error messages (non-empty fields only, in the
/// spirit of protobuf's `ShortDebugString`).
fn short_debug(p: &ResourceHandleProto) -> String {
    let mut parts = Vec::new();
    for (name, v) in [
        ("device", &p.device),
        ("container", &p.container),
        ("name", &p.name),
    ] {
        if !v.is_empty() {
            parts.push(format!("{name}: {v:?}"));
        }
    }
    if p.hash_code != 0 {
        parts.push(format!("hash_code: {}", p.hash_code));
    }
    if !p.maybe_type_name.is_empty() {
        parts.push(format!("maybe_type_name: {:?}", p.maybe_type_name));
    }
    for d in &p.dtypes_and_shapes {
        let shape = d
            .shape
            .as_ref()
            .map(shape_proto_debug_string)
            .unwrap_or_else(|| "[]".to_string());
        parts.push(format!(
            "dtypes_and_shapes {{ dtype: {} shape: {shape} }}",
            DataType::from_number(d.dtype).name()
        ));
    }
    parts.join(" ")
}

/// TensorFlow's `ResourceHandle::FromProto`: copies the fields and validates every
/// dtype-and-shape record's shape as a partial shape; an invalid one gives
/// `Could not decode resource handle from proto "<proto>", returned status: <why>`.
///
/// # Errors
/// [`ProtoError::ResourceHandle`] when a record's shape is not a valid partial shape
/// ([`crate::partial_shape_from_proto`]).
pub fn resource_handle_from_proto(p: &ResourceHandleProto) -> Result<ResourceHandle, ProtoError> {
    let mut dtypes_and_shapes = Vec::with_capacity(p.dtypes_and_shapes.len());
    for d in &p.dtypes_and_shapes {
        let shape =
            partial_shape_from_proto(d.shape.as_ref()).map_err(|e| ProtoError::ResourceHandle {
                proto: short_debug(p),
                status: e.to_string(),
            })?;
        dtypes_and_shapes.push((DataType::from_number(d.dtype), shape));
    }
    Ok(ResourceHandle {
        device: p.device.clone(),
        container: p.container.clone(),
        name: p.name.clone(),
        hash_code: p.hash_code,
        maybe_type_name: p.maybe_type_name.clone(),
        dtypes_and_shapes,
    })
}

/// TensorFlow's `ResourceHandle::AsProto`.
pub fn resource_handle_to_proto(h: &ResourceHandle) -> ResourceHandleProto {
    ResourceHandleProto {
        device: h.device.clone(),
        container: h.container.clone(),
        name: h.name.clone(),
        hash_code: h.hash_code,
        maybe_type_name: h.maybe_type_name.clone(),
        dtypes_and_shapes: h
            .dtypes_and_shapes
            .iter()
            .map(|(dtype, shape)| DtypeAndShape {
                dtype: dtype.number(),
                shape: Some(partial_shape_to_proto(shape)),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tensorcast_core::PartialTensorShape;

    #[test]
    fn resource_handles_round_trip() {
        let h = ResourceHandle {
            device: "/cpu:0".into(),
            container: "c".into(),
            name: "v".into(),
            hash_code: 42,
            maybe_type_name: "Var".into(),
            dtypes_and_shapes: vec![
                (DataType::FLOAT, PartialTensorShape::new(&[-1, 3]).unwrap()),
                (DataType::INT32, PartialTensorShape::unknown_rank()),
            ],
        };
        assert_eq!(
            resource_handle_from_proto(&resource_handle_to_proto(&h)).unwrap(),
            h
        );
    }

    #[test]
    fn invalid_resource_shape_is_reported() {
        let mut p = resource_handle_to_proto(&ResourceHandle::named("a"));
        p.dtypes_and_shapes.push(DtypeAndShape {
            dtype: 1,
            shape: Some(crate::shape::dims_to_proto(&[-7])),
        });
        let e = resource_handle_from_proto(&p).unwrap_err().to_string();
        assert_eq!(
            e,
            "Could not decode resource handle from proto \"name: \"a\" dtypes_and_shapes { \
             dtype: float shape: [-7] }\", returned status: Shape [-7] has dimensions with \
             values below -1 (where -1 means unknown)"
        );
    }
}

//! What decoding a `TensorProto`'s wire bytes into message structs costs, learned from the
//! bytes before any struct is built.
//!
//! prost decodes every element of a repeated message or bytes field into a struct of its own:
//! an empty `string_val` element is 2 bytes of wire and a 32-byte `Bytes` (64 with the
//! vector's doubling); an empty `resource_handle_val` element is a struct of several strings,
//! a `variant_val` element a struct with a vector of nested protos. A few megabytes of such
//! elements would cost gigabytes. [`message_bytes`] walks the wire format (no allocation) and
//! sums those struct sizes, so a decode can charge them to its memory limit before prost runs.
//! Packed and scalar numeric fields are not counted: they decode to at most 8 bytes per wire
//! byte.

use std::mem::size_of;

use bytes::Bytes;

use crate::messages::{
    resource_handle_proto::DtypeAndShape, tensor_shape_proto::Dim, ResourceHandleProto,
    TensorProto, TensorShapeProto, VariantTensorDataProto,
};
use crate::options::MAX_NESTING_DEPTH;

/// What one element of a repeated field costs: its struct, twice (a growing vector's spare
/// capacity).
const fn element<T>() -> u128 {
    2 * size_of::<T>() as u128
}

/// One field of a message: its number and, for length-delimited fields, the payload.
struct Field<'a> {
    number: u64,
    payload: Option<&'a [u8]>,
}

/// Reads a varint; `None` at the end of the input or on a malformed one.
fn varint(b: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for i in 0..10 {
        let byte = *b.get(*pos)?;
        *pos += 1;
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// The fields of a message, in order; stops at the first malformed one (prost reports it).
fn fields(b: &[u8]) -> impl Iterator<Item = Field<'_>> {
    let mut pos = 0usize;
    std::iter::from_fn(move || {
        let key = varint(b, &mut pos)?;
        let payload = match key & 7 {
            0 => {
                varint(b, &mut pos)?;
                None
            }
            1 => {
                pos = pos.checked_add(8).filter(|&p| p <= b.len())?;
                None
            }
            2 => {
                let len = usize::try_from(varint(b, &mut pos)?).ok()?;
                let end = pos.checked_add(len).filter(|&e| e <= b.len())?;
                let p = &b[pos..end];
                pos = end;
                Some(p)
            }
            5 => {
                pos = pos.checked_add(4).filter(|&p| p <= b.len())?;
                None
            }
            _ => return None,
        };
        Some(Field {
            number: key >> 3,
            payload,
        })
    })
}

fn shape_bytes(b: &[u8]) -> u128 {
    fields(b)
        .filter(|f| f.number == 2 && f.payload.is_some())
        .map(|_| element::<Dim>())
        .sum()
}

fn resource_bytes(b: &[u8]) -> u128 {
    fields(b)
        .filter(|f| f.number == 6)
        .filter_map(|f| f.payload)
        .map(|p| {
            element::<DtypeAndShape>()
                + fields(p)
                    .filter(|f| f.number == 2)
                    .filter_map(|f| f.payload)
                    .map(|s| size_of::<TensorShapeProto>() as u128 + shape_bytes(s))
                    .sum::<u128>()
        })
        .sum()
}

fn variant_bytes(b: &[u8], depth: usize) -> u128 {
    fields(b)
        .filter(|f| f.number == 3)
        .filter_map(|f| f.payload)
        .map(|t| element::<TensorProto>() + tensor_bytes(t, depth + 1))
        .sum()
}

fn tensor_bytes(b: &[u8], depth: usize) -> u128 {
    if depth > MAX_NESTING_DEPTH {
        // The decode refuses deeper nesting (prost's own recursion limit is 100).
        return 0;
    }
    fields(b)
        .map(|f| match (f.number, f.payload) {
            (2, Some(p)) => size_of::<TensorShapeProto>() as u128 + shape_bytes(p),
            (8, Some(_)) => element::<Bytes>(),
            (14, Some(p)) => element::<ResourceHandleProto>() + resource_bytes(p),
            (15, Some(p)) => element::<VariantTensorDataProto>() + variant_bytes(p, depth),
            _ => 0,
        })
        .sum()
}

/// The bytes of message structs (and their vectors' spare capacity) that decoding the
/// serialized `TensorProto` `wire` builds, nested protos included.
pub(crate) fn message_bytes(wire: &[u8]) -> u128 {
    tensor_bytes(wire, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_bytes_counts_each_repeated_object_element() {
        // dtype string, 3 empty string_val elements.
        let wire = [0x08, 0x07, 0x42, 0x00, 0x42, 0x00, 0x42, 0x00];
        assert_eq!(message_bytes(&wire), 3 * element::<Bytes>());
        // Packed floats cost nothing here; a truncated field stops the walk.
        assert_eq!(message_bytes(&[0x2a, 0x04, 0, 0, 0x80, 0x3f]), 0);
        assert_eq!(message_bytes(&[0x42, 0x05, 0x00]), 0);
    }
}

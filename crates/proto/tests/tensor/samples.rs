//! Sample tensors of every dtype, and proto builders.

use bytes::Bytes;
use tensorcast_buffer::Buffer;
use tensorcast_core::{
    DataType, PartialTensorShape, ResourceHandle, TString, Tensor, TensorShape, Variant,
    VariantTensorData,
};
use tensorcast_proto::{shape_to_proto, TensorProto};

pub fn shape(dims: &[i64]) -> TensorShape {
    TensorShape::new(dims).unwrap()
}

/// A proto with a dtype number and dims, nothing else.
pub fn proto(dtype: DataType, dims: &[i64]) -> TensorProto {
    TensorProto {
        dtype: dtype.number(),
        tensor_shape: Some(shape_to_proto(&shape(dims))),
        ..Default::default()
    }
}

pub use tensorcast_testkit::strategies::canonical_byte;

/// A tensor of `dtype` and `dims`; memcpy-able dtypes get the bytes `seed`, `seed + 7`, ...
/// made canonical; strings, handles and variants get distinct values.
pub fn sample(dtype: DataType, dims: &[i64]) -> Tensor {
    let s = shape(dims);
    let n = s.num_elements_usize();
    match dtype {
        DataType::STRING => Tensor::from_vec(
            (0..n)
                .map(|i| TString::from(format!("s{i}").repeat(i % 3)))
                .collect(),
            &s,
        )
        .unwrap(),
        DataType::RESOURCE => Tensor::from_vec(
            (0..n)
                .map(|i| ResourceHandle {
                    device: "/job:localhost/replica:0/task:0/device:CPU:0".into(),
                    container: "c".into(),
                    name: format!("v{i}"),
                    hash_code: 0x9e37_79b9_7f4a_7c15 ^ i as u64,
                    maybe_type_name: "Var".into(),
                    dtypes_and_shapes: vec![(
                        DataType::FLOAT,
                        PartialTensorShape::new(&[-1, i as i64]).unwrap(),
                    )],
                })
                .collect(),
            &s,
        )
        .unwrap(),
        DataType::VARIANT => Tensor::from_vec(
            (0..n)
                .map(|i| match i % 3 {
                    0 => Variant::from(Tensor::from(42.0f32 + i as f32)),
                    1 => Variant::Encoded(VariantTensorData {
                        type_name: "tensorflow::TensorList".into(),
                        metadata: Bytes::from_static(b"\x00\x01\xff"),
                        tensors: vec![Tensor::vector(&[1i64, -2]), sample(DataType::HALF, &[2])],
                    }),
                    _ => Variant::Empty,
                })
                .collect(),
            &s,
        )
        .unwrap(),
        _ => {
            let bytes: Vec<u8> = (0..n * dtype.size())
                .map(|i| canonical_byte(dtype, (i as u8).wrapping_mul(37).wrapping_add(11)))
                .collect();
            Tensor::from_buffer(dtype, &s, Buffer::copy_from_slice(&bytes).unwrap()).unwrap()
        }
    }
}

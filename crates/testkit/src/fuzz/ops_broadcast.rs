//! Fuzz body for `BroadcastTo`: a random dtype (every dtype, strings and handles included), a
//! random input shape and a random shape operand (int32 or int64 mostly, sometimes another
//! dtype or rank; dims small, zero, negative, huge or overflowing; rank sometimes over 254)
//! go through [`broadcast_to_op`]. It must return an error or a tensor of the requested shape
//! whose elements match a naive reference; it must never panic. Targets whose output would
//! exceed [`MAX_OUTPUT_BYTES`] are skipped before the call, so a run never allocates more than
//! that.

use tensorcast_core::{
    DataType, ResourceHandle, TString, Tensor, TensorShape, Variant, MAX_DIMENSIONS,
};
use tensorcast_kernels::broadcast::broadcast_to_op;

/// Largest output the body lets the op allocate.
pub const MAX_OUTPUT_BYTES: u64 = 64 << 20;

/// Largest output compared element by element with the reference.
const MAX_CHECKED_ELEMENTS: usize = 1 << 16;

use super::reader::Reader;

/// One target dim: mostly small, sometimes 0, negative, huge or arbitrary.
fn dim(b: &mut Reader<'_>) -> i64 {
    match b.byte() % 16 {
        0 => 0,
        1 => -1 - i64::from(b.byte()),
        2 => b.i64(),
        3 => 1 << (b.byte() % 63),
        4..=7 => 1,
        k => i64::from(k % 5),
    }
}

fn input_tensor(dtype: DataType, shape: &TensorShape, b: &mut Reader<'_>) -> Option<Tensor> {
    let n = shape.num_elements_usize();
    let seed = b.byte();
    match dtype {
        DataType::STRING => {
            let v = (0..n)
                .map(|i| TString::from(format!("{}", i + seed as usize)))
                .collect();
            Tensor::from_vec::<TString, _>(v, shape).ok()
        }
        DataType::RESOURCE => {
            let v = (0..n)
                .map(|i| ResourceHandle::named(format!("r{i}")))
                .collect();
            Tensor::from_vec::<ResourceHandle, _>(v, shape).ok()
        }
        DataType::VARIANT => {
            let v = (0..n)
                .map(|i| Variant::from(Tensor::from(i as i32)))
                .collect();
            Tensor::from_vec::<Variant, _>(v, shape).ok()
        }
        d => {
            let mut bytes: Vec<u8> = (0..n * d.size())
                .map(|i| (i as u8).wrapping_mul(37).wrapping_add(seed))
                .collect();
            if d == DataType::BOOL {
                bytes.iter_mut().for_each(|x| *x &= 1);
            }
            let buf = tensorcast_core::buffer::Buffer::copy_from_slice(&bytes).ok()?;
            Tensor::from_buffer(d, shape, buf).ok()
        }
    }
}

/// The shape operand: int32/int64 vectors mostly, sometimes another dtype or rank.
fn shape_operand(dims: &[i64], b: &mut Reader<'_>) -> Option<Tensor> {
    let n = dims.len() as i64;
    let sel = b.byte() % 16;
    let vec_shape = TensorShape::new(&[n]).ok()?;
    Some(match sel {
        0 => Tensor::from_vec(dims.iter().map(|&d| d as f32).collect(), &vec_shape).ok()?,
        1 => Tensor::from_vec(dims.iter().map(|&d| d as u8).collect(), &vec_shape).ok()?,
        2 => {
            let m = TensorShape::new(&[1, n]).ok()?;
            Tensor::from_vec(dims.iter().map(|&d| d as i32).collect(), &m).ok()?
        }
        3 => Tensor::from(dims.first().copied().unwrap_or(0)),
        4..=9 => Tensor::from_vec(dims.iter().map(|&d| d as i32).collect(), &vec_shape).ok()?,
        _ => Tensor::from_vec(dims.to_vec(), &vec_shape).ok()?,
    })
}

/// The dims the op will see from the shape operand, if it is an int vector.
fn operand_dims(t: &Tensor) -> Option<Vec<i64>> {
    if t.dims() != 1 {
        return None;
    }
    match t.dtype() {
        DataType::INT32 => Some(
            t.as_slice::<i32>()
                .ok()?
                .iter()
                .map(|&d| i64::from(d))
                .collect(),
        ),
        DataType::INT64 => Some(t.as_slice::<i64>().ok()?.to_vec()),
        _ => None,
    }
}

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let mut b = Reader::new(data);
    let dtypes: Vec<DataType> = DataType::all().filter(|d| d.is_supported()).collect();
    if dtypes.is_empty() {
        return;
    }
    let dtype = dtypes[b.byte() as usize % dtypes.len()];
    let in_rank = (b.byte() % 6) as usize;
    let in_dims: Vec<i64> = (0..in_rank).map(|_| i64::from(b.byte() % 5)).collect();
    let Ok(in_shape) = TensorShape::new(&in_dims) else {
        return;
    };
    let out_rank = match b.byte() {
        250..=255 => MAX_DIMENSIONS - 2 + (b.byte() % 5) as usize,
        r => (r % 8) as usize,
    };
    let mut out_dims: Vec<i64> = Vec::with_capacity(out_rank);
    for i in 0..out_rank {
        // Often reuse the input's dims (right-aligned) so that valid broadcasts are common.
        let k = out_rank - i;
        if k <= in_rank && b.byte().is_multiple_of(2) {
            out_dims.push(in_dims[in_rank - k]);
        } else {
            out_dims.push(dim(&mut b));
        }
    }
    let Some(input) = input_tensor(dtype, &in_shape, &mut b) else {
        return;
    };
    let Some(shape) = shape_operand(&out_dims, &mut b) else {
        return;
    };
    // Bound the allocation: skip valid targets whose output would be too large.
    if let Some(dims) = operand_dims(&shape) {
        if let Ok(target) = TensorShape::make_shape(&dims) {
            let per = if dtype.can_use_memcpy() {
                dtype.size().max(1) as u64
            } else {
                256
            };
            if (target.num_elements() as u64).saturating_mul(per) > MAX_OUTPUT_BYTES {
                return;
            }
        }
    }
    let Ok(out) = broadcast_to_op(&input, &shape) else {
        return;
    };
    let target =
        operand_dims(&shape).expect("the op accepted a shape operand that is not an int vector");
    assert_eq!(out.shape().dim_sizes(), &target[..], "result shape");
    assert_eq!(out.dtype(), dtype, "result dtype");
    let n = out.shape().num_elements_usize();
    if n == 0 || n > MAX_CHECKED_ELEMENTS {
        return;
    }
    if dtype.can_use_memcpy() {
        let es = dtype.size();
        let (src, got) = (
            input.tensor_data().unwrap_or(&[]),
            out.tensor_data().unwrap_or(&[]),
        );
        for i in 0..n {
            let j = crate::reference::broadcast_source_index(&in_dims, &target, i);
            assert_eq!(
                &got[i * es..(i + 1) * es],
                &src[j * es..(j + 1) * es],
                "element {i}"
            );
        }
    } else if dtype == DataType::STRING {
        let (src, got) = (
            input.as_slice::<TString>().unwrap_or(&[]),
            out.as_slice::<TString>().unwrap_or(&[]),
        );
        for (i, g) in got.iter().enumerate() {
            assert_eq!(
                g,
                &src[crate::reference::broadcast_source_index(&in_dims, &target, i)]
            );
        }
    }
}

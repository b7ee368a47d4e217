//! Fuzz target body for the data-movement and shape ops (`tensorcast_kernels::array`): a random
//! op, a random dtype number (any `i32` now and then), a small random data tensor, and value
//! inputs (axes, perm, begin/end/strides, paddings, multiples, dims, indices, sizes) that are
//! mostly small but sometimes extreme (`i64::MIN`, `i64::MAX`, 2^40, 2^62) or of the wrong
//! dtype, plus random attrs (masks of any `i32`).
//!
//! Input layout (missing bytes read as 0): the op byte, the dtype tag (`% 4 == 3`: the next 4
//! bytes as a raw `i32`; otherwise the next byte `% 36`), the data shape (a rank byte `% 5`,
//! that many dims `% 5`), an index-dtype byte (`% 5`: int32, int64, int16, float, uint8), then
//! the value inputs and attrs as each op reads them; the rest are the data's bytes.
//!
//! Every op must return `Ok` or `Err`, never panic, abort or allocate beyond what the input
//! justifies; an op whose output the shape function (given every value) says would hold more
//! than [`MAX_ELEMENTS`] elements is only run through its shape function. When both the eager
//! op and its shape function succeed, the result's shape is the one the shape function gives.

use tensorcast_core::{DataType, PartialTensorShape, Tensor, TensorShape};
use tensorcast_kernels::array as a;

use super::reader::{tensor_over, Reader};

/// The most elements a fuzzed input or output holds.
pub const MAX_ELEMENTS: usize = 1 << 14;

const EXTREMES: [i64; 6] = [i64::MIN, i64::MAX, 1 << 40, 1 << 62, -(1 << 40), -1];

impl Reader<'_> {
    fn arr_dtype(&mut self) -> DataType {
        let tag = self.byte();
        if tag % 4 == 3 {
            DataType::from_number(i32::from_le_bytes(self.array()))
        } else {
            DataType::from_number(i32::from(self.byte() % 36))
        }
    }

    fn arr_shape(&mut self) -> Vec<i64> {
        let rank = usize::from(self.byte() % 5);
        (0..rank).map(|_| i64::from(self.byte() % 5)).collect()
    }

    /// One index value: mostly in [-3, 5), sometimes extreme.
    fn value(&mut self) -> i64 {
        let b = self.byte();
        if b >= 248 {
            EXTREMES[usize::from(b - 248) % EXTREMES.len()]
        } else {
            i64::from(b % 8) - 3
        }
    }

    /// An index tensor of `dims` in `dtype` (values cut to the dtype's width).
    fn values(&mut self, dtype: DataType, dims: &[i64]) -> Tensor {
        let n: i64 = dims.iter().product();
        let v: Vec<i64> = (0..n.clamp(0, 64)).map(|_| self.value()).collect();
        let shape = TensorShape::new(dims).unwrap_or_default();
        let t = match dtype {
            DataType::INT64 => Tensor::from_vec(v, &shape),
            DataType::INT16 => Tensor::from_vec(v.iter().map(|&x| x as i16).collect(), &shape),
            DataType::FLOAT => Tensor::from_vec(v.iter().map(|&x| x as f32).collect(), &shape),
            DataType::UINT8 => Tensor::from_vec(v.iter().map(|&x| x as u8).collect(), &shape),
            _ => Tensor::from_vec(v.iter().map(|&x| x as i32).collect(), &shape),
        };
        t.unwrap_or_else(|_| Tensor::from(0i32))
    }

    fn vector(&mut self, dtype: DataType, len: usize) -> Tensor {
        // Now and then a wrong length or rank.
        match self.byte() % 8 {
            0 => self.values(dtype, &[len as i64 + 1]),
            1 => self.values(dtype, &[1, len as i64]),
            _ => self.values(dtype, &[len as i64]),
        }
    }

    fn scalar(&mut self, dtype: DataType) -> Tensor {
        if self.byte().is_multiple_of(8) {
            self.values(dtype, &[1])
        } else {
            self.values(dtype, &[])
        }
    }
}

fn known(s: &TensorShape) -> PartialTensorShape {
    PartialTensorShape::from(s)
}

fn small(shapes: &[tensorcast_core::Result<PartialTensorShape>]) -> bool {
    shapes.iter().all(|s| match s {
        Ok(s) => s.dims().is_some_and(|d| {
            d.iter().all(|&x| x >= 0)
                && d.iter().map(|&x| x as u128).product::<u128>() <= MAX_ELEMENTS as u128
        }),
        Err(_) => true,
    })
}

fn agree(
    got: &tensorcast_core::Result<Vec<Tensor>>,
    want: &[tensorcast_core::Result<PartialTensorShape>],
) {
    if let Ok(ts) = got {
        if want.len() == ts.len() {
            for (t, w) in ts.iter().zip(want) {
                if let Ok(w) = w {
                    if let Some(d) = w.dims() {
                        assert_eq!(t.shape().dim_sizes(), d, "eager shape vs shape function");
                    }
                }
            }
        }
    }
}

/// Runs the target on one input.
pub fn run(data: &[u8]) {
    let mut r = Reader::new(data);
    let op = r.byte() % 24;
    let dtype = r.arr_dtype();
    let dims = r.arr_shape();
    let it = [
        DataType::INT32,
        DataType::INT64,
        DataType::INT16,
        DataType::FLOAT,
        DataType::UINT8,
    ][usize::from(r.byte() % 5)];
    let shape = TensorShape::new(&dims).unwrap_or_default();
    let rank = dims.len();
    // Value inputs and attrs first (their bytes are read before the data's).
    let v1 = r.vector(it, rank);
    let v2 = r.vector(it, rank);
    let v3 = r.vector(it, rank);
    let s1 = r.scalar(it);
    let k = r.value();
    let masks = a::StridedSliceMasks {
        begin_mask: i64::from(r.byte()),
        end_mask: i64::from(r.byte()),
        ellipsis_mask: if r.byte().is_multiple_of(4) {
            i64::from(r.byte())
        } else {
            0
        },
        new_axis_mask: if r.byte().is_multiple_of(4) {
            i64::from(r.byte())
        } else {
            0
        },
        shrink_axis_mask: if r.byte().is_multiple_of(3) {
            i64::from(i32::from_le_bytes(r.array()))
        } else {
            0
        },
    };
    let pads_dims = [rank as i64, if r.byte().is_multiple_of(8) { 3 } else { 2 }];
    let pads = r.values(it, &pads_dims);
    let x = tensor_over(dtype, &shape, r.rest(), MAX_ELEMENTS, true);
    let y = tensor_over(
        dtype,
        &shape,
        r.rest().get(1..).unwrap_or(&[]),
        MAX_ELEMENTS,
        true,
    );
    let xs = known(&shape);
    let one = |t: tensorcast_core::Result<Tensor>| t.map(|t| vec![t]);
    match op {
        0 => {
            let w = [a::transpose_shape(&xs, &known(v1.shape()), Some(&v1))];
            agree(&one(a::transpose(&x, &v1)), &w);
        }
        1 => {
            let w = [a::concat_v2_shape(&[&xs, &xs], Some(&s1))];
            agree(&one(a::concat_v2(&[&x, &y], &s1)), &w);
        }
        2 => {
            let w = [a::pack_shape(&[&xs, &xs], k)];
            agree(&one(a::pack(&[&x, &y], k)), &w);
        }
        3 => {
            let n = k.clamp(-1, 8);
            let w = a::unpack_shape(&xs, n, i64::from(masks.begin_mask as i8));
            let got = a::unpack(&x, n, i64::from(masks.begin_mask as i8));
            agree(
                &got,
                &w.map(|v| v.into_iter().map(Ok).collect::<Vec<_>>())
                    .unwrap_or_default(),
            );
        }
        4 => {
            let _ = a::split(&s1, &x, k.clamp(-2, 8));
        }
        5 => {
            let _ = a::split_v(&x, &v1, &s1);
        }
        6 => {
            let axis: Vec<i64> = (0..(k.rem_euclid(3))).map(|_| r.value()).collect();
            let w = [a::squeeze_shape(&xs, &axis)];
            agree(&one(a::squeeze(&x, &axis)), &w);
        }
        7 => {
            let w = [a::expand_dims_shape(&xs, Some(&s1))];
            agree(&one(a::expand_dims(&x, &s1)), &w);
        }
        8 => {
            let w = [a::slice_shape(
                &xs,
                &known(v1.shape()),
                Some(&v1),
                Some(&v2),
            )];
            agree(&one(a::slice(&x, &v1, &v2)), &w);
        }
        9 => {
            let n = v1.shape().dim_sizes().first().map(|&d| d as usize);
            let w = [a::strided_slice_shape(
                &xs,
                n,
                Some(&v1),
                Some(&v2),
                Some(&v3),
                masks,
            )];
            if small(&w) {
                agree(&one(a::strided_slice(&x, &v1, &v2, &v3, masks)), &w);
            }
        }
        10 => {
            let w = [a::gather_v2_shape(
                &xs,
                &known(v2.shape()),
                Some(&s1),
                k.clamp(-3, 3),
            )];
            if small(&w) {
                agree(&one(a::gather_v2(&x, &v2, &s1, k.clamp(-3, 3))), &w);
            }
        }
        11..=13 => {
            let w = [a::pad_shape(&xs, &known(pads.shape()), Some(&pads))];
            if small(&w) {
                let got = match op {
                    11 => a::pad(&x, &pads),
                    12 => a::pad_v2(
                        &x,
                        &pads,
                        &Tensor::new(dtype, TensorShape::scalar()).unwrap_or_default(),
                    ),
                    _ => a::mirror_pad(&x, &pads, if k % 2 == 0 { "REFLECT" } else { "SYMMETRIC" }),
                };
                agree(&one(got), &w);
            }
        }
        14 => {
            let w = [a::tile_shape(&xs, &known(v1.shape()), Some(&v1))];
            if small(&w) {
                agree(&one(a::tile(&x, &v1)), &w);
            }
        }
        15 => {
            let w = [a::fill_shape(&known(v1.shape()), Some(&v1))];
            if small(&w) {
                let value = tensor_over(dtype, &TensorShape::scalar(), r.rest(), 1, true);
                agree(&one(a::fill(&v1, &value)), &w);
            }
        }
        16 => {
            let (s, l, d) = (r.scalar(it), r.scalar(it), r.scalar(it));
            let w = [a::range_shape(Some(&s), Some(&l), Some(&d))];
            if small(&w) {
                agree(&one(a::range(&s, &l, &d)), &w);
            }
        }
        17 => {
            let _ = a::zeros_like(&x);
        }
        18 => {
            let _ = a::ones_like(&x);
        }
        19 => {
            let _ = a::size(&x, it);
        }
        20 => {
            let depth = r.scalar(DataType::INT32);
            let w = [a::one_hot_shape(
                &known(v1.shape()),
                Some(&depth),
                k.clamp(-2, 4),
            )];
            if small(&w) {
                let on = tensor_over(dtype, &TensorShape::scalar(), r.rest(), 1, true);
                agree(&one(a::one_hot(&v1, &depth, &on, &on, k.clamp(-2, 4))), &w);
            }
        }
        21 => {
            let w = [Ok(a::cumsum_shape(&xs))];
            agree(&one(a::cumsum(&x, &s1, k % 2 == 0, k % 3 == 0)), &w);
        }
        22 => {
            let got = a::top_k_v2(&x, &s1, k % 2 == 0, it).map(|t| vec![t.values, t.indices]);
            let w = a::top_k_v2_shape(&xs, Some(&s1));
            agree(
                &got,
                &w.map(|v| v.into_iter().map(Ok).collect::<Vec<_>>())
                    .unwrap_or_default(),
            );
        }
        _ => {
            let _ = a::shape_n(&[&x, &y], it);
        }
    }
}

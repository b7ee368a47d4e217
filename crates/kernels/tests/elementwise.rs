//! Laws of the element-wise ops: each op agrees with a scalar reference written independently
//! (random shapes that broadcast, random and edge values); an op on a lazy broadcast view
//! equals the op on the materialised broadcast; commutative ops commute; a view is read in
//! place (the output is the only buffer allocated).

use std::sync::Arc;
use tensorcast_kernels::TensorOps;

use proptest::prelude::*;
use tensorcast_core::buffer::{cpu_allocator, Allocator, TrackingAllocator};
use tensorcast_core::{DataType, Tensor, TensorShape};
use tensorcast_kernels::elementwise::{
    binary, binary_in, binary_scalars, equal_with, not_equal_with, BinaryOp,
};
use tensorcast_testkit::reference::broadcast_source_index;
use tensorcast_testkit::strategies::broadcast_pair;

fn shape(d: &[i64]) -> TensorShape {
    TensorShape::new(d).unwrap()
}

fn full_out(a: &[i64], b: &[i64]) -> Vec<i64> {
    let rank = a.len().max(b.len());
    (0..rank)
        .map(|i| {
            let x = if i + a.len() >= rank {
                a[i + a.len() - rank]
            } else {
                1
            };
            let y = if i + b.len() >= rank {
                b[i + b.len() - rank]
            } else {
                1
            };
            if x == 1 {
                y
            } else {
                x
            }
        })
        .collect()
}

/// Independent DAZ/FTZ for the reference: subnormal (or flushed) values as signed zeros.
fn flush(x: f32) -> f32 {
    if x != 0.0 && x.abs() < f32::MIN_POSITIVE {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// The reference for f32: exact in f64, rounded once, flushed.
fn ref_f32(op: BinaryOp, x: f32, y: f32, vector_lane: bool) -> Option<f32> {
    let (x, y) = (flush(x), flush(y));
    let (a, b) = (f64::from(x), f64::from(y));
    let r = match op {
        BinaryOp::AddV2 => flush((a + b) as f32),
        BinaryOp::Sub => flush((a - b) as f32),
        BinaryOp::Mul => flush((a * b) as f32),
        BinaryOp::Maximum | BinaryOp::Minimum => {
            if x.is_nan() || y.is_nan() {
                f32::NAN
            } else if x == y {
                // 0 and -0: TensorFlow's vector lanes give y, its scalar tail x.
                if vector_lane {
                    y
                } else {
                    x
                }
            } else if (op == BinaryOp::Maximum) == (x > y) {
                x
            } else {
                y
            }
        }
        _ => return None,
    };
    Some(r)
}

fn ref_cmp<T: PartialOrd>(op: BinaryOp, x: T, y: T) -> bool {
    match op {
        BinaryOp::Equal => x == y,
        BinaryOp::NotEqual => x != y,
        BinaryOp::Less => x < y,
        BinaryOp::LessEqual => x <= y,
        BinaryOp::Greater => x > y,
        BinaryOp::GreaterEqual => x >= y,
        _ => unreachable!(),
    }
}

fn ref_i32(op: BinaryOp, x: i32, y: i32) -> i32 {
    match op {
        BinaryOp::AddV2 => x.wrapping_add(y),
        BinaryOp::Sub => x.wrapping_sub(y),
        BinaryOp::Mul => x.wrapping_mul(y),
        BinaryOp::Maximum => x.max(y),
        BinaryOp::Minimum => x.min(y),
        _ => unreachable!(),
    }
}

/// f32 values: random normals mixed with edge values (zeros, subnormals, infinities, NaN).
fn f32_value() -> impl Strategy<Value = f32> {
    prop_oneof![
        3 => -1000.0f32..1000.0,
        1 => prop::sample::select(vec![
            0.0f32,
            -0.0,
            f32::from_bits(1),
            -f32::from_bits(0x007f_ffff),
            f32::MIN_POSITIVE,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MAX,
            1.5,
        ]),
    ]
}

fn same_f32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn f32_tensor(d: &[i64], v: &[f32]) -> Tensor {
    let n = d.iter().product::<i64>() as usize;
    let vals: Vec<f32> = (0..n).map(|i| v[i % v.len().max(1)]).collect();
    Tensor::from_vec(vals, shape(d)).unwrap()
}

fn i32_tensor(d: &[i64], v: &[i32]) -> Tensor {
    let n = d.iter().product::<i64>() as usize;
    let vals: Vec<i32> = (0..n).map(|i| v[i % v.len().max(1)]).collect();
    Tensor::from_vec(vals, shape(d)).unwrap()
}

/// The reference for `half` (`bf16: false`) and `bfloat16` given as bits: widened to f32
/// (with DAZ for bfloat16, whose subnormals are f32 subnormals), the f32 result (exact in f64,
/// rounded once, flushed for bfloat16) rounded once more to the type; `None` for a NaN result,
/// whose bits the recorded TensorFlow vectors pin down. Maximum/Minimum select an operand:
/// a NaN operand's own bits (`x`'s first), else `x` on ties, and in bfloat16's vector lanes a
/// subnormal result is flushed.
fn ref_16(op: BinaryOp, bf16: bool, x: u16, y: u16, vector_lane: bool) -> Option<u16> {
    let widen = |v: u16| -> f32 {
        if bf16 {
            flush(half::bf16::from_bits(v).to_f32())
        } else {
            half::f16::from_bits(v).to_f32()
        }
    };
    let narrow = |r: f32| -> u16 {
        if bf16 {
            half::bf16::from_f32(flush(r)).to_bits()
        } else {
            half::f16::from_f32(r).to_bits()
        }
    };
    let (a, b) = (widen(x), widen(y));
    let arith = |r: f64| {
        let r = r as f32;
        (!r.is_nan()).then(|| narrow(r))
    };
    match op {
        BinaryOp::AddV2 => arith(f64::from(a) + f64::from(b)),
        BinaryOp::Sub => arith(f64::from(a) - f64::from(b)),
        BinaryOp::Mul => arith(f64::from(a) * f64::from(b)),
        BinaryOp::Maximum | BinaryOp::Minimum => {
            let pick = if a.is_nan() {
                x
            } else if b.is_nan() {
                y
            } else if a == b || (op == BinaryOp::Maximum) == (a > b) {
                x
            } else {
                y
            };
            let subnormal = pick & 0x7f80 == 0 && pick & 0x7fff != 0;
            Some(if bf16 && vector_lane && subnormal {
                pick & 0x8000
            } else {
                pick
            })
        }
        _ => None,
    }
}

/// 16-bit patterns: random ones (every class: NaNs, subnormals, infinities) and edges.
fn bits16() -> impl Strategy<Value = u16> {
    prop_oneof![
        3 => any::<u16>(),
        1 => prop::sample::select(vec![
            0u16, 0x8000, 0x0001, 0x8003, 0x3c00, 0x3f80, 0xbf80, 0x7c00, 0x7f80, 0xff80,
            0x7e00, 0x7fc0, 0xffc1, 0x7c01, 0x7f81, 0x4040, 0x0400, 0x0080,
        ]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn f32_ops_match_the_scalar_reference(
        (sa, sb, _out) in broadcast_pair(4, 5),
        va in proptest::collection::vec(f32_value(), 1..40),
        vb in proptest::collection::vec(f32_value(), 1..40),
        k in 0usize..11,
    ) {
        let op = BinaryOp::ALL[k];
        let (x, y) = (f32_tensor(&sa, &va), f32_tensor(&sb, &vb));
        let got = binary(op, &x, &y, true).unwrap();
        let out = full_out(&sa, &sb);
        prop_assert_eq!(got.shape(), &shape(&out));
        let n = got.num_elements() as usize;
        let (xs, ys) = (x.to_vec::<f32>().unwrap(), y.to_vec::<f32>().unwrap());
        for i in 0..n {
            let (a, b) = (xs[broadcast_source_index(&sa, &out, i)], ys[broadcast_source_index(&sb, &out, i)]);
            if op.is_comparison() {
                let want = ref_cmp(op, flush(a), flush(b));
                prop_assert_eq!(got.to_vec::<bool>().unwrap()[i], want, "{:?}({}, {})", op, a, b);
            } else {
                let want = ref_f32(op, a, b, i < n - n % 8).unwrap();
                let g = got.to_vec::<f32>().unwrap()[i];
                prop_assert!(same_f32(g, want), "{:?}({:e}, {:e}) = {:e}, want {:e}", op, a, b, g, want);
            }
        }
    }

    #[test]
    fn half_and_bfloat16_ops_match_the_scalar_reference(
        (sa, sb, _out) in broadcast_pair(4, 5),
        va in proptest::collection::vec(bits16(), 1..40),
        vb in proptest::collection::vec(bits16(), 1..40),
        k in 0usize..11,
        bf16 in any::<bool>(),
    ) {
        let op = BinaryOp::ALL[k];
        let dtype = if bf16 { DataType::BFLOAT16 } else { DataType::HALF };
        let bits = |d: &[i64], v: &[u16]| {
            let n = d.iter().product::<i64>() as usize;
            let vals: Vec<u16> = (0..n).map(|i| v[i % v.len()]).collect();
            let t = Tensor::from_vec(vals, shape(d)).unwrap();
            (t.bitcast_to(dtype, t.shape()).unwrap(), (0..n).map(|i| v[i % v.len()]).collect::<Vec<_>>())
        };
        let ((x, xs), (y, ys)) = (bits(&sa, &va), bits(&sb, &vb));
        let got = binary(op, &x, &y, true).unwrap();
        let out = full_out(&sa, &sb);
        prop_assert_eq!(got.shape(), &shape(&out));
        let n = got.num_elements() as usize;
        let data = got.tensor_data().unwrap();
        for i in 0..n {
            let (a, b) = (xs[broadcast_source_index(&sa, &out, i)], ys[broadcast_source_index(&sb, &out, i)]);
            if op.is_comparison() {
                let w = |v: u16| if bf16 { flush(half::bf16::from_bits(v).to_f32()) } else { half::f16::from_bits(v).to_f32() };
                prop_assert_eq!(data[i] == 1, ref_cmp(op, w(a), w(b)), "{:?}({:04x}, {:04x})", op, a, b);
                continue;
            }
            let g = u16::from_le_bytes([data[2 * i], data[2 * i + 1]]);
            match ref_16(op, bf16, a, b, i < n - n % 8) {
                Some(want) => prop_assert_eq!(g, want, "{:?} {}({:04x}, {:04x}) = {:04x}, want {:04x}", op, dtype, a, b, g, want),
                None => prop_assert!(
                    if bf16 { g & 0x7f80 == 0x7f80 && g & 0x7f != 0 } else { g & 0x7c00 == 0x7c00 && g & 0x3ff != 0 },
                    "{:?} {}({:04x}, {:04x}) = {:04x}, want a NaN", op, dtype, a, b, g
                ),
            }
        }
    }

    #[test]
    fn i32_ops_match_the_scalar_reference(
        (sa, sb, _out) in broadcast_pair(4, 5),
        va in proptest::collection::vec(any::<i32>(), 1..40),
        vb in proptest::collection::vec(any::<i32>(), 1..40),
        k in 0usize..11,
    ) {
        let op = BinaryOp::ALL[k];
        let (x, y) = (i32_tensor(&sa, &va), i32_tensor(&sb, &vb));
        let got = binary(op, &x, &y, true).unwrap();
        let out = full_out(&sa, &sb);
        let n = got.num_elements() as usize;
        let (xs, ys) = (x.to_vec::<i32>().unwrap(), y.to_vec::<i32>().unwrap());
        for i in 0..n {
            let (a, b) = (xs[broadcast_source_index(&sa, &out, i)], ys[broadcast_source_index(&sb, &out, i)]);
            if op.is_comparison() {
                prop_assert_eq!(got.to_vec::<bool>().unwrap()[i], ref_cmp(op, a, b));
            } else {
                prop_assert_eq!(got.to_vec::<i32>().unwrap()[i], ref_i32(op, a, b));
            }
        }
    }

    #[test]
    fn op_on_a_view_equals_op_on_the_materialised_broadcast(
        (sa, sb, _out) in broadcast_pair(4, 5),
        va in proptest::collection::vec(f32_value(), 1..20),
        vb in proptest::collection::vec(f32_value(), 1..20),
        k in 0usize..11,
    ) {
        let op = BinaryOp::ALL[k];
        let out = full_out(&sa, &sb);
        let (x, y) = (f32_tensor(&sa, &va), f32_tensor(&sb, &vb));
        let view = x.broadcast_view(&shape(&out)).unwrap();
        let mat = view.to_tensor().unwrap();
        let lazy = binary(op, &view, &y, true).unwrap();
        let eager = binary(op, &mat, &y, true).unwrap();
        prop_assert_eq!(lazy.tensor_data().unwrap(), eager.tensor_data().unwrap());
    }

    #[test]
    fn commutative_ops_commute(
        (sa, sb, _out) in broadcast_pair(4, 5),
        va in proptest::collection::vec(any::<i32>(), 1..20),
        vb in proptest::collection::vec(any::<i32>(), 1..20),
        fa in proptest::collection::vec(-100.0f32..100.0, 1..20),
        fb in proptest::collection::vec(-100.0f32..100.0, 1..20),
        k in 0usize..11,
    ) {
        let op = BinaryOp::ALL[k];
        prop_assume!(op.is_commutative());
        let (x, y) = (i32_tensor(&sa, &va), i32_tensor(&sb, &vb));
        prop_assert_eq!(binary(op, &x, &y, true).unwrap(), binary(op, &y, &x, true).unwrap());
        // Floats without NaN or zeros of both signs (where TensorFlow is not symmetric).
        let (x, y) = (f32_tensor(&sa, &fa), f32_tensor(&sb, &fb));
        let (xy, yx) = (binary(op, &x, &y, true).unwrap(), binary(op, &y, &x, true).unwrap());
        prop_assert_eq!(xy.tensor_data().unwrap(), yx.tensor_data().unwrap());
    }
}

#[test]
fn equal_incompatible_shape_error_false_gives_a_scalar() {
    let a = Tensor::vector(&[1i32, 2]);
    let b = Tensor::vector(&[1i32, 2, 3]);
    let e = equal_with(&a, &b, false).unwrap();
    assert_eq!(
        (e.shape().rank(), e.to_vec::<bool>().unwrap()),
        (0, vec![false])
    );
    let ne = not_equal_with(&a, &b, false).unwrap();
    assert_eq!(ne.to_vec::<bool>().unwrap(), vec![true]);
    assert_eq!(
        equal_with(&a, &b, true).unwrap_err().to_string(),
        "Incompatible shapes: [2] vs. [3]"
    );
    // The dtype check still comes first.
    let f = Tensor::vector(&[1.0f32, 2.0, 3.0]);
    assert!(equal_with(&a, &f, false)
        .unwrap_err()
        .to_string()
        .starts_with("cannot compute Equal as input #1(zero-based)"));
}

#[test]
fn more_than_five_merged_dims_is_unimplemented_as_in_tensorflow() {
    let x = f32_tensor(&[2, 1, 2, 1, 2, 1], &[1.0]);
    let y = f32_tensor(&[1, 2, 1, 2, 1, 2], &[1.0]);
    let err = binary(BinaryOp::AddV2, &x, &y, true).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Broadcast between [2,1,2,1,2,1] and [1,2,1,2,1,2] is not supported yet."
    );
    // Five groups are fine.
    let y5 = f32_tensor(&[1, 2, 1, 2, 1, 1], &[1.0]);
    assert!(binary(BinaryOp::AddV2, &x, &y5, true).is_ok());
}

#[test]
fn op_on_a_view_allocates_only_its_output() {
    let tracking = Arc::new(TrackingAllocator::new(cpu_allocator()));
    let alloc: Arc<dyn Allocator> = tracking.clone();
    let row = f32_tensor(&[1, 1024], &[1.0, 2.0, 3.0]);
    let x = f32_tensor(&[512, 1024], &[2.0, 1.0]);
    let view = row.broadcast_view(x.shape()).unwrap();
    let before = tracking.stats().unwrap();
    let out = binary_in(&alloc, BinaryOp::Equal, &view, &x, true).unwrap();
    let after = tracking.stats().unwrap();
    assert_eq!(after.num_allocs - before.num_allocs, 1, "only the output");
    assert_eq!(after.bytes_in_use, 512 * 1024, "the bool output's bytes");
    assert_eq!(tracking.live_allocations(), 1);
    assert_eq!(out.dtype(), DataType::BOOL);
    let want = binary(BinaryOp::Equal, &view.to_tensor().unwrap(), &x, true).unwrap();
    assert_eq!(out.tensor_data().unwrap(), want.tensor_data().unwrap());
}

#[test]
fn large_outputs_split_across_threads_match_a_serial_reference() {
    // 3 MiB of f32 output, so the engine runs in parallel chunks whose starts fall mid-row.
    let x = f32_tensor(&[769, 1023], &[1.5, -2.0, 0.25, 7.0, -0.5]);
    let col = f32_tensor(&[769, 1], &[3.0, -1.0, 0.5]);
    let got = binary(BinaryOp::Sub, &x, &col, true).unwrap();
    let (xs, cs, gs) = (
        x.to_vec::<f32>().unwrap(),
        col.to_vec::<f32>().unwrap(),
        got.to_vec::<f32>().unwrap(),
    );
    for (i, g) in gs.iter().enumerate() {
        assert_eq!(*g, xs[i] - cs[i / 1023], "element {i}");
    }
}

/// Random `f32` bits with runs of ordinary numbers and, now and then, a subnormal, zero, NaN
/// or infinity: long enough that the kernels' vector loops and their per-block fallback (when a
/// block holds an element the plain result is wrong for) both run.
fn long_f32(n: usize, seed: u32) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            let normal = f32::from_bits(0x3c00_0000 + (s & 0x07ff_ffff))
                * if s >> 31 == 1 { -1.0 } else { 1.0 };
            match (i / 700 % 3, s % 97) {
                (0, _) => normal,
                (_, 0) => f32::from_bits(s & 0x807f_ffff),
                (_, 1) => f32::from_bits(0x7f80_0000 | (s & 0x807f_ffff)),
                (_, 2) => f32::MIN_POSITIVE * (normal - normal.trunc()),
                _ => normal,
            }
        })
        .collect()
}

#[test]
fn f32_arithmetic_on_long_rows_matches_the_reference() {
    let (rows, cols) = (3i64, 4099i64);
    let x = Tensor::from_vec(long_f32((rows * cols) as usize, 7), shape(&[rows, cols])).unwrap();
    let ys = [
        Tensor::from_vec(long_f32((rows * cols) as usize, 11), shape(&[rows, cols])).unwrap(),
        Tensor::from_vec(long_f32(cols as usize, 13), shape(&[1, cols])).unwrap(),
        Tensor::from_vec(long_f32(rows as usize, 17), shape(&[rows, 1])).unwrap(),
        Tensor::from_vec(vec![1.5f32], TensorShape::scalar()).unwrap(),
        Tensor::from_vec(vec![f32::from_bits(3)], TensorShape::scalar()).unwrap(),
    ];
    let out = [rows, cols];
    let xs = x.to_vec::<f32>().unwrap();
    for y in &ys {
        let sb = y.shape().dim_sizes().to_vec();
        let yv = y.to_vec::<f32>().unwrap();
        for op in [
            BinaryOp::AddV2,
            BinaryOp::Sub,
            BinaryOp::Mul,
            BinaryOp::Maximum,
            BinaryOp::Minimum,
        ] {
            let got = binary(op, &x, y, true).unwrap().to_vec::<f32>().unwrap();
            let n = got.len();
            for (i, g) in got.iter().enumerate() {
                let (a, b) = (xs[i], yv[broadcast_source_index(&sb, &out, i)]);
                let want = ref_f32(op, a, b, i < n - n % 8).unwrap();
                assert!(
                    same_f32(*g, want),
                    "{op:?}({a:e}, {b:e}) = {g:e}, want {want:e} at {i} of {sb:?}"
                );
            }
        }
    }
}

#[test]
fn bf16_mul_of_every_value_matches_the_reference() {
    use tensorcast_core::bf16;
    // The reference: DAZ, the product exact in f64 (8-bit significands), rounded to f32, FTZ,
    // then rounded to nearest even; every NaN is 0x7fc0.
    let reference = |x: bf16, y: bf16| -> u16 {
        let (a, b) = (flush(x.to_f32()), flush(y.to_f32()));
        let p = flush((f64::from(a) * f64::from(b)) as f32);
        if p.is_nan() {
            0x7fc0
        } else {
            bf16::from_f32(p).to_bits()
        }
    };
    let all: Vec<bf16> = (0..=u16::MAX).map(bf16::from_bits).collect();
    let x = Tensor::from_vec(all.clone(), shape(&[1 << 16])).unwrap();
    let scalars = [
        0.0f32,
        -0.0,
        1.5,
        -3.0,
        1e-30,
        2e-38,
        f32::MIN_POSITIVE,
        1e30,
        f32::INFINITY,
        f32::NAN,
    ];
    for s in scalars
        .iter()
        .map(|&v| bf16::from_f32(v))
        .chain([bf16::from_bits(1), bf16::from_bits(0x8040)])
    {
        let y = Tensor::from_vec(vec![s], TensorShape::scalar()).unwrap();
        for (xy, flip) in [
            (binary(BinaryOp::Mul, &x, &y, true), false),
            (binary(BinaryOp::Mul, &y, &x, true), true),
        ] {
            let got = xy.unwrap().to_vec::<bf16>().unwrap();
            for (g, &v) in got.iter().zip(&all) {
                let want = if flip {
                    reference(s, v)
                } else {
                    reference(v, s)
                };
                assert_eq!(g.to_bits(), want, "{:#x} * {:#x}", v.to_bits(), s.to_bits());
            }
        }
    }
    // Both operands dense: every value against a rotation of every value.
    let rot: Vec<bf16> = (0..=u16::MAX)
        .map(|b| bf16::from_bits(b.rotate_left(7)))
        .collect();
    let y = Tensor::from_vec(rot.clone(), shape(&[1 << 16])).unwrap();
    let got = binary(BinaryOp::Mul, &x, &y, true)
        .unwrap()
        .to_vec::<bf16>()
        .unwrap();
    for ((g, &a), &b) in got.iter().zip(&all).zip(&rot) {
        assert_eq!(
            g.to_bits(),
            reference(a, b),
            "{:#x} * {:#x}",
            a.to_bits(),
            b.to_bits()
        );
    }
}

#[test]
fn unaligned_operands_are_read_through_an_aligned_copy() {
    // Float tensors over bytes at an odd address: the small path and a broadcast.
    let odd = |vals: &[f32]| {
        let mut bytes = vec![0u8];
        for v in vals {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        let n = vals.len();
        let buf = tensorcast_core::buffer::Buffer::copy_from_slice(&bytes)
            .unwrap()
            .slice(1..1 + 4 * n)
            .unwrap();
        Tensor::from_buffer(DataType::FLOAT, &shape(&[n as i64]), buf).unwrap()
    };
    let x = odd(&[1.5, -2.0, 3.25]);
    let y = odd(&[0.5, 0.25, 0.125]);
    let sum = binary(BinaryOp::AddV2, &x, &y, true).unwrap();
    assert_eq!(sum.to_vec::<f32>().unwrap(), vec![2.0, -1.75, 3.375]);
    let s = odd(&[2.0]);
    let product = binary(BinaryOp::Mul, &x, &s, true).unwrap();
    assert_eq!(product.to_vec::<f32>().unwrap(), vec![3.0, -4.0, 6.5]);
    let m = Tensor::from_vec(vec![1.0f32; 6], shape(&[2, 3])).unwrap();
    let less = binary(BinaryOp::Less, &m, &x, true).unwrap();
    assert_eq!(
        less.to_vec::<bool>().unwrap(),
        vec![true, false, true, true, false, true]
    );
}

#[test]
fn long_broadcast_rows_match_the_scalar_reference() {
    // Rows of 5,001 f32 (20 KB, more than half an L1 cache), 1.3 MB of output: parallel chunks
    // start mid-row, and the last 5 elements are TensorFlow's scalar remainder (0 and -0 pick
    // the other operand there). The row is y, then x; values include NaN, zeros of both signs
    // and subnormals.
    let (rows, cols) = (67i64, 5001i64);
    let edges = [
        1.5f32,
        -0.0,
        0.0,
        f32::NAN,
        -2.0,
        f32::from_bits(3),
        7.25,
        f32::INFINITY,
        -f32::from_bits(0x0040_0000),
        0.5,
        -3.0,
    ];
    let x = f32_tensor(&[rows, cols], &edges);
    let row_vals: Vec<f32> = (0..cols as usize)
        .map(|i| edges[(i * 7 + 3) % edges.len()])
        .collect();
    let row = f32_tensor(&[1, cols], &row_vals);
    let out = [rows, cols];
    let n = (rows * cols) as usize;
    let xs = x.to_vec::<f32>().unwrap();
    for op in [
        BinaryOp::AddV2,
        BinaryOp::Sub,
        BinaryOp::Maximum,
        BinaryOp::Less,
    ] {
        for row_first in [false, true] {
            let (a, b, sa, sb) = if row_first {
                (&row, &x, [1, cols], [rows, cols])
            } else {
                (&x, &row, [rows, cols], [1, cols])
            };
            let got = binary(op, a, b, true).unwrap();
            let (av, bv) = (a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
            let (gb, gf) = if op.is_comparison() {
                (got.to_vec::<bool>().unwrap(), Vec::new())
            } else {
                (Vec::new(), got.to_vec::<f32>().unwrap())
            };
            for i in 0..n {
                let (p, q) = (
                    av[broadcast_source_index(&sa, &out, i)],
                    bv[broadcast_source_index(&sb, &out, i)],
                );
                if op.is_comparison() {
                    let want = ref_cmp(op, flush(p), flush(q));
                    assert_eq!(gb[i], want, "{op:?} element {i}");
                } else {
                    let want = ref_f32(op, p, q, i < n - n % 8).unwrap();
                    let g = gf[i];
                    assert!(
                        same_f32(g, want),
                        "{op:?} element {i}: {g:e}, want {want:e}"
                    );
                }
            }
        }
    }
    assert_eq!(xs.len(), n);
    // bfloat16: 2-byte elements, rows of 9,000 (18 KB), through Mul and Maximum.
    let cols = 9000i64;
    let bits: Vec<u16> = (0..(rows * cols) as usize)
        .map(|i| [0x3f80u16, 0xc040, 0x0001, 0x8000, 0x7fc1, 0x4120][i % 6])
        .collect();
    let bx = Tensor::from_vec(bits.clone(), shape(&[rows, cols])).unwrap();
    let bx = bx.bitcast_to(DataType::BFLOAT16, bx.shape()).unwrap();
    let rbits: Vec<u16> = (0..cols as usize)
        .map(|i| [0x4000u16, 0x0000, 0xff80, 0x3f00, 0x8001][i % 5])
        .collect();
    let br = Tensor::from_vec(rbits.clone(), shape(&[1, cols])).unwrap();
    let br = br.bitcast_to(DataType::BFLOAT16, br.shape()).unwrap();
    let n = (rows * cols) as usize;
    for op in [BinaryOp::Mul, BinaryOp::Maximum] {
        let got = binary(op, &bx, &br, true).unwrap();
        let data = got.tensor_data().unwrap();
        for i in 0..n {
            let (p, q) = (bits[i], rbits[i % cols as usize]);
            let g = u16::from_le_bytes([data[2 * i], data[2 * i + 1]]);
            match ref_16(op, true, p, q, i < n - n % 8) {
                Some(want) => assert_eq!(g, want, "{op:?} element {i}"),
                None => assert!(g & 0x7f80 == 0x7f80 && g & 0x7f != 0, "{op:?} element {i}"),
            }
        }
    }
}

/// Two rank-0 operands take a shortcut (one element, no planning); its results, bit for bit,
/// are those of the general loops on one-element vectors, for every op, dtype and edge value
/// (NaNs with payloads, subnormals, signed zeros, infinities, wrapping integers).
#[test]
fn scalar_operands_match_one_element_vectors() {
    let f32s = [
        0.0f32,
        -0.0,
        1.5,
        -2.25,
        f32::from_bits(1),
        -f32::from_bits(0x007f_ffff),
        f32::MIN_POSITIVE,
        f32::MAX,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::from_bits(0xffa0_0001),
    ];
    let f64s: Vec<f64> = f32s
        .iter()
        .map(|&v| f64::from(v))
        .chain([
            f64::from_bits(1),
            f64::MAX,
            f64::from_bits(0xfff0_0000_0000_0001),
        ])
        .collect();
    let i32s = [0i32, 1, -1, 7, i32::MAX, i32::MIN];
    let i64s = [0i64, 1, -1, 7, i64::MAX, i64::MIN];
    fn pairs<T: Copy + tensorcast_core::Element>(
        vals: &[T],
    ) -> Vec<(Tensor, Tensor, Tensor, Tensor)> {
        let mut out = Vec::new();
        for &a in vals {
            for &b in vals {
                out.push((
                    Tensor::scalar_of(a),
                    Tensor::scalar_of(b),
                    Tensor::from_vec(vec![a], shape(&[1])).unwrap(),
                    Tensor::from_vec(vec![b], shape(&[1])).unwrap(),
                ));
            }
        }
        out
    }
    let all = [pairs(&f32s), pairs(&f64s), pairs(&i32s), pairs(&i64s)];
    for op in BinaryOp::ALL {
        for (x, y, vx, vy) in all.iter().flatten() {
            let want = binary(op, vx, vy, true);
            // By value: shared operands (a new output) and operands held by nothing else (the
            // output in an operand's buffer).
            let shared = binary_scalars(op, x.clone(), y.clone());
            let unique = binary_scalars(op, x.deep_copy().unwrap(), y.deep_copy().unwrap());
            for by_value in [shared, unique] {
                match (by_value, &want) {
                    (Ok(Ok(g)), Ok(w)) => {
                        assert_eq!(g.shape(), &TensorShape::scalar(), "{op:?}");
                        assert_eq!(g.dtype(), w.dtype(), "{op:?}");
                        assert_eq!(g.tensor_data().unwrap(), w.tensor_data().unwrap(), "{op:?}");
                    }
                    // No fast path: the operands come back as they were.
                    (Err((a, b)), _) => {
                        assert_eq!(a.tensor_data().unwrap(), x.tensor_data().unwrap());
                        assert_eq!(b.tensor_data().unwrap(), y.tensor_data().unwrap());
                    }
                    (g, w) => panic!("{op:?}({x:?}, {y:?}) by value: {g:?} vs {w:?}"),
                }
            }
            let got = binary(op, x, y, true);
            match (got, want) {
                (Ok(g), Ok(w)) => {
                    assert_eq!(g.shape(), &TensorShape::scalar(), "{op:?}");
                    assert_eq!(g.dtype(), w.dtype(), "{op:?}");
                    assert_eq!(
                        g.tensor_data().unwrap(),
                        w.tensor_data().unwrap(),
                        "{op:?}({x:?}, {y:?})"
                    );
                }
                (Err(g), Err(w)) => assert_eq!(g.to_string(), w.to_string(), "{op:?}"),
                (g, w) => panic!("{op:?}({x:?}, {y:?}): {g:?} vs {w:?}"),
            }
        }
    }
}

/// `binary_scalars` writes its result into an operand that nothing else holds (as TensorFlow
/// forwards an input buffer), and never into one that another tensor shares.
#[test]
fn binary_scalars_reuses_only_unshared_operands() {
    let x = Tensor::scalar_of(5i32);
    let at = x.data_ptr();
    let out = binary_scalars(BinaryOp::AddV2, x, Tensor::scalar_of(2i32))
        .unwrap()
        .unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), &[7]);
    assert_eq!(out.data_ptr(), at);

    let x = Tensor::scalar_of(5i32);
    let kept = x.clone();
    let y = Tensor::scalar_of(2i32);
    let y_at = y.data_ptr();
    let out = binary_scalars(BinaryOp::Mul, x, y).unwrap().unwrap();
    assert_eq!(out.as_slice::<i32>().unwrap(), &[10]);
    assert_eq!(out.data_ptr(), y_at);
    assert_eq!(kept.as_slice::<i32>().unwrap(), &[5]);

    // Both shared: a new tensor; a comparison's bool never lands in an int32 buffer.
    let (x, y) = (Tensor::scalar_of(1.5f32), Tensor::scalar_of(2.0f32));
    let out = binary_scalars(BinaryOp::Less, x.clone(), y.clone())
        .unwrap()
        .unwrap();
    assert_eq!(out.as_slice::<bool>().unwrap(), &[true]);
    assert_eq!(x.as_slice::<f32>().unwrap(), &[1.5]);
    assert_eq!(y.as_slice::<f32>().unwrap(), &[2.0]);
    let out = binary_scalars(
        BinaryOp::Less,
        Tensor::scalar_of(3i32),
        Tensor::scalar_of(4i32),
    );
    assert_eq!(out.unwrap().unwrap().as_slice::<bool>().unwrap(), &[true]);

    // Not scalars, or no fast path: the operands come back.
    let v = Tensor::vector(&[1i32, 2]);
    assert!(binary_scalars(BinaryOp::AddV2, v.clone(), v).is_err());
    let h = Tensor::scalar_of(half::f16::ONE);
    assert!(binary_scalars(BinaryOp::AddV2, h.clone(), h).is_err());
}

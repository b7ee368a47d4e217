//! BroadcastTo through the public API: TensorFlow's own test table (TF_SEMANTICS §7.3), the
//! seed 002 examples, the order of checks and their messages, sharing, every dtype family, the
//! parallel kernel on large outputs, and properties against a naive reference and against the
//! lazy view.

use std::sync::Arc;
use tensorcast_kernels::TensorOps;

use proptest::prelude::*;
use tensorcast_core::buffer::{cpu_allocator, Allocator, Buffer, TrackingAllocator};
use tensorcast_core::{
    bf16, f16, Code, Complex64, DataType, ResourceHandle, TString, Tensor, TensorShape, Variant,
};
use tensorcast_kernels::broadcast::{
    broadcast_to, broadcast_to_in, broadcast_to_op, check_broadcast_to,
};
use tensorcast_testkit::reference::broadcast_source_index;
use tensorcast_testkit::strategies::broadcastable_to;

fn shape(d: &[i64]) -> TensorShape {
    TensorShape::new(d).unwrap()
}

/// numpy's `broadcast_to`, one output element at a time: the input index is the output index
/// with the leading extra axes dropped and every size-1 input axis read at 0.
fn reference_indices(input: &[i64], output: &[i64]) -> Vec<usize> {
    let n: i64 = output.iter().product();
    (0..n as usize)
        .map(|flat| broadcast_source_index(input, output, flat))
        .collect()
}

/// The reference result on raw bytes (`es` bytes per element).
fn reference_bytes(src: &[u8], es: usize, input: &[i64], output: &[i64]) -> Vec<u8> {
    reference_indices(input, output)
        .into_iter()
        .flat_map(|i| src[i * es..(i + 1) * es].to_vec())
        .collect()
}

fn bytes_tensor(dtype: DataType, dims: &[i64], seed: u8) -> Tensor {
    let s = shape(dims);
    let n = s.num_elements() as usize * dtype.size();
    let bytes: Vec<u8> = (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect();
    Tensor::from_buffer(dtype, &s, Buffer::copy_from_slice(&bytes).unwrap()).unwrap()
}

/// Broadcasts and checks the result against the reference, byte for byte.
fn check_against_reference(t: &Tensor, out: &[i64]) {
    let got = broadcast_to(t, &shape(out)).unwrap();
    assert_eq!(got.shape().dim_sizes(), out);
    assert_eq!(got.dtype(), t.dtype());
    let want = reference_bytes(
        t.tensor_data().unwrap(),
        t.dtype().size(),
        t.shape().dim_sizes(),
        out,
    );
    assert!(
        got.tensor_data().unwrap() == want.as_slice(),
        "{} {} -> {:?} differs from the reference",
        t.dtype(),
        t.shape(),
        out
    );
}

fn err(input: &Tensor, out: &Tensor) -> String {
    let e = broadcast_to_op(input, out).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e}");
    e.to_string()
}

// ----- TF_SEMANTICS §7.3: broadcast_to_ops_test.py -----------------------------------------

#[test]
fn broadcast_to_basic_every_numeric_dtype_matches_numpy() {
    fn case<T: tensorcast_core::Element + Copy + PartialEq>(vals: [T; 3]) {
        let x = Tensor::vector(&vals);
        let y = broadcast_to_op(&x, &Tensor::vector(&[3i32, 3])).unwrap();
        assert_eq!(y.shape().dim_sizes(), &[3, 3]);
        let want: Vec<T> = vals.iter().cycle().take(9).copied().collect();
        assert_eq!(y.to_vec::<T>().unwrap(), want);
    }
    case([1u8, 2, 3]);
    case([1u16, 2, 3]);
    case([1i8, 2, 3]);
    case([1i16, 2, 3]);
    case([1i32, 2, 3]);
    case([1i64, 2, 3]);
    case([f16::from_f32(1.0), f16::from_f32(2.0), f16::from_f32(3.0)]);
    case([1.0f32, 2.0, 3.0]);
    case([1.0f64, 2.0, 3.0]);
    case([
        bf16::from_f32(1.0),
        bf16::from_f32(2.0),
        bf16::from_f32(3.0),
    ]);
}

#[test]
fn broadcast_to_string_repeats_the_row() {
    let x = Tensor::vector(&[TString::from("1"), TString::from("2"), TString::from("3")]);
    let y = broadcast_to_op(&x, &Tensor::vector(&[3i32, 3])).unwrap();
    let got: Vec<String> = y
        .as_slice::<TString>()
        .unwrap()
        .iter()
        .map(|s| String::from_utf8_lossy(s.as_bytes()).into_owned())
        .collect();
    assert_eq!(got, ["1", "2", "3", "1", "2", "3", "1", "2", "3"]);
}

#[test]
fn broadcast_to_bool_repeats_the_row() {
    let x = Tensor::vector(&[true, false, true]);
    let y = broadcast_to_op(&x, &Tensor::vector(&[3i64, 3])).unwrap();
    assert_eq!(
        y.as_slice::<bool>().unwrap(),
        &[true, false, true, true, false, true, true, false, true]
    );
}

#[test]
fn broadcast_to_shape_every_rank_pair_matches_reference() {
    for in_rank in 1..=5usize {
        for out_rank in in_rank..=5 {
            let x = bytes_tensor(DataType::INT32, &vec![2; in_rank], in_rank as u8);
            check_against_reference(&x, &vec![2; out_rank]);
        }
    }
}

#[test]
fn broadcast_to_inner_and_larger_dims_match_reference() {
    check_against_reference(&bytes_tensor(DataType::INT32, &[2, 1, 3], 1), &[2, 5, 3]);
    check_against_reference(
        &bytes_tensor(DataType::INT32, &[2, 1, 3, 2, 2, 2], 2),
        &[1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 15, 3, 2, 2, 2],
    );
    check_against_reference(
        &bytes_tensor(DataType::INT32, &[2, 1, 3, 2, 2, 2, 1, 1, 1], 3),
        &[1, 1, 1, 2, 5, 3, 2, 2, 2, 3, 3, 3],
    );
}

#[test]
fn broadcast_to_scalars_fill_the_shape() {
    let y = broadcast_to_op(&Tensor::from(1i32), &Tensor::vector(&[3i32, 3])).unwrap();
    assert_eq!(y.as_slice::<i32>().unwrap(), &[1; 9]);
    let y = broadcast_to_op(
        &Tensor::from(1.0f32),
        &Tensor::vector(&[2i32, 3, 4, 1, 1, 1]),
    )
    .unwrap();
    assert_eq!(y.shape().dim_sizes(), &[2, 3, 4, 1, 1, 1]);
    assert_eq!(y.as_slice::<f32>().unwrap(), &[1.0; 24]);
}

#[test]
fn broadcast_to_shape_dtype_does_not_change_the_result() {
    let x = Tensor::vector(&[1i32, 2, 3]);
    let a = broadcast_to_op(&x, &Tensor::vector(&[3i32, 3])).unwrap();
    let b = broadcast_to_op(&x, &Tensor::vector(&[3i64, 3])).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.shape().dim_sizes(), &[3, 3]);
}

#[test]
fn broadcast_to_bad_output_shape_is_unable_to_broadcast() {
    assert_eq!(
        err(&Tensor::vector(&[0i32, 1]), &Tensor::vector(&[2i32, 1])),
        "Unable to broadcast tensor of shape [2] to tensor of shape [2,1]"
    );
}

#[test]
fn broadcast_to_gradient_cases_forward_match_reference() {
    // The gradient tests' forward passes.
    check_against_reference(&bytes_tensor(DataType::FLOAT, &[], 4), &[2, 4, 3]);
    check_against_reference(&bytes_tensor(DataType::FLOAT, &[2, 1, 3], 5), &[2, 5, 3]);
    check_against_reference(&bytes_tensor(DataType::FLOAT, &[2, 1], 6), &[5, 2, 3]);
    check_against_reference(&bytes_tensor(DataType::FLOAT, &[1], 7), &[5, 2, 3]);
    check_against_reference(
        &bytes_tensor(DataType::FLOAT, &[2, 1, 3, 2, 2, 2, 1, 1, 1], 8),
        &[1, 1, 1, 2, 5, 3, 2, 2, 2, 3, 3, 3],
    );
}

#[test]
fn broadcast_to_invalid_shape_overflows_in_make_shape() {
    let dims = [110i64, 53, 104, 147, 157, 123, 5, 24, 188, 40, 5, 2];
    let msg =
        "Shape [110,53,104,147,157,123,5,24,188,40,5,2] would have more than 2**63 - 1 elements";
    assert_eq!(
        err(&Tensor::vector(&[1i32, 2, 3]), &Tensor::vector(&dims)),
        msg
    );
    let dims32: Vec<i32> = dims.iter().map(|&d| d as i32).collect();
    assert_eq!(
        err(&Tensor::vector(&[1i32, 2, 3]), &Tensor::vector(&dims32)),
        msg
    );
}

#[test]
fn broadcast_to_invalid_shape_for_empty_is_incompatible() {
    let x = Tensor::new(DataType::INT32, shape(&[3, 0, 5])).unwrap();
    assert_eq!(
        err(&x, &Tensor::vector(&[3i32, 0, 3])),
        "Incompatible shapes: [3,0,5] vs. [3,0,3]"
    );
}

// ----- seed 002 -----------------------------------------------------------------------------

#[test]
fn seed_002_row_and_padded_vector_give_the_same_matrix() {
    let x = Tensor::from_slice(&[1i32, 2, 3], shape(&[1, 3])).unwrap();
    let y = broadcast_to(&x, &shape(&[2, 3])).unwrap();
    assert_eq!(y.dtype(), DataType::INT32);
    assert_eq!(y.shape().dim_sizes(), &[2, 3]);
    assert_eq!(y.matrix::<i32>().unwrap().row(1).to_vec(), vec![1, 2, 3]);
    assert_eq!(y.as_slice::<i32>().unwrap(), &[1, 2, 3, 1, 2, 3]);
    let v = Tensor::vector(&[1i32, 2, 3]);
    assert_eq!(broadcast_to(&v, &shape(&[2, 3])).unwrap(), y);
    // The materialised result takes the full memory; the lazy view takes none.
    assert_eq!(y.total_bytes(), 24);
    let view = v.broadcast_view(&shape(&[2, 3])).unwrap();
    assert_eq!(view.array::<i32>().unwrap().strides(), &[0, 1]);
}

// ----- order of checks and messages (TF_SEMANTICS §6) -------------------------------------

#[test]
fn shape_operand_must_be_an_int_vector() {
    let x = Tensor::vector(&[1.0f32]);
    let m = Tensor::from_slice(&[1i32, 2], shape(&[1, 2])).unwrap();
    assert_eq!(
        err(&x, &m),
        "shape must be a vector of {int32,int64}, got shape [1,2]"
    );
    assert_eq!(
        err(&x, &Tensor::from(3i32)),
        "shape must be a vector of {int32,int64}, got shape []"
    );
    // Rank is checked before dtype.
    let fm = Tensor::from_slice(&[1.0f32], shape(&[1, 1])).unwrap();
    assert_eq!(
        err(&x, &fm),
        "shape must be a vector of {int32,int64}, got shape [1,1]"
    );
    for bad in [
        Tensor::vector(&[2.0f32]),
        Tensor::vector(&[2u8]),
        Tensor::vector(&[2u32]),
        Tensor::vector(&[2i16]),
    ] {
        assert_eq!(err(&x, &bad), "shape must be a vector of {int32,int64}.");
    }
}

#[test]
fn shape_values_follow_make_shape() {
    let x = Tensor::vector(&[1.0f32]);
    assert_eq!(
        err(&x, &Tensor::vector(&[2i32, -1])),
        "Dimension -1 must be >= 0"
    );
    assert_eq!(
        err(&x, &Tensor::vector(&[-5i64, 2])),
        "Dimension -5 must be >= 0"
    );
    assert_eq!(
        err(&x, &Tensor::vector(&[1i32; 255])),
        "Too many dimensions"
    );
    assert_eq!(
        err(&x, &Tensor::vector(&[1i64; 10_000])),
        "Too many dimensions"
    );
    // 254 dims are allowed.
    let y = broadcast_to_op(&x, &Tensor::vector(&[1i64; 254])).unwrap();
    assert_eq!(y.dims(), 254);
    assert_eq!(
        err(&x, &Tensor::vector(&[1i64 << 62, 4])),
        format!(
            "Shape [{},4] would have more than 2**63 - 1 elements",
            1i64 << 62
        )
    );
    // Overflow is found before a later negative dim.
    assert_eq!(
        err(&x, &Tensor::vector(&[1i64 << 62, 4, -1])),
        format!(
            "Shape [{},4,?] would have more than 2**63 - 1 elements",
            1i64 << 62
        )
    );
    // A zero dim stops the product: no overflow.
    let y = broadcast_to_op(&x, &Tensor::vector(&[0i64, 1 << 62, 4])).unwrap();
    assert_eq!(y.num_elements(), 0);
}

#[test]
fn same_shape_returns_the_input_itself_before_other_checks() {
    let x = Tensor::from_slice(&[1i32, 2, 3, 4, 5, 6], shape(&[2, 3])).unwrap();
    let y = broadcast_to_op(&x, &Tensor::vector(&[2i64, 3])).unwrap();
    assert!(y.shares_buffer_with(&x));
    assert_eq!(y.data_ptr(), x.data_ptr());
    // Strings share their objects too.
    let s = Tensor::vector(&[TString::from("a"), TString::from("b")]);
    assert!(s.broadcast_to(&shape(&[2])).unwrap().shares_buffer_with(&s));
    // Even an uninitialised tensor is forwarded, as TensorFlow forwards it.
    let u = Tensor::unallocated(DataType::FLOAT, &shape(&[4]));
    assert!(!broadcast_to(&u, &shape(&[4])).unwrap().is_initialized());
    // A different shape copies.
    let z = broadcast_to(&x, &shape(&[1, 2, 3])).unwrap();
    assert!(!z.shares_buffer_with(&x));
}

#[test]
fn rank_is_checked_before_compatibility() {
    let x = Tensor::from_slice(&[1i32, 2, 3, 4, 5, 6], shape(&[2, 3])).unwrap();
    assert_eq!(
        err(&x, &Tensor::vector(&[3i32])),
        "Rank of input (2) must be no greater than rank of output shape (1)."
    );
    assert_eq!(
        err(&x, &Tensor::vector(&[0i32])),
        "Rank of input (2) must be no greater than rank of output shape (1)."
    );
    assert_eq!(
        err(&x, &Tensor::vector(&[4i32, 3])),
        "Incompatible shapes: [2,3] vs. [4,3]"
    );
    assert_eq!(
        err(&x, &Tensor::vector(&[2i32, 3, 1])),
        "Incompatible shapes: [2,3] vs. [2,3,1]"
    );
    assert_eq!(
        err(
            &Tensor::vector(&[1.0f32, 2.0, 3.0]),
            &Tensor::vector(&[2i32, 4])
        ),
        "Incompatible shapes: [3] vs. [2,4]"
    );
    let col = Tensor::from_slice(&[1i8, 2, 3], shape(&[3, 1])).unwrap();
    assert_eq!(
        err(&col, &Tensor::vector(&[1i32, 3])),
        "Unable to broadcast tensor of shape [3,1] to tensor of shape [1,3]"
    );
}

#[test]
fn zero_is_an_ordinary_size() {
    // 1 -> 0 is a broadcast; the result is empty.
    let y = broadcast_to(&Tensor::vector(&[5i32]), &shape(&[3, 0])).unwrap();
    assert_eq!(y.shape().dim_sizes(), &[3, 0]);
    assert_eq!(y.num_elements(), 0);
    // 0 -> 5 is not.
    let e = Tensor::new(DataType::INT32, shape(&[0])).unwrap();
    assert_eq!(
        err(&e, &Tensor::vector(&[5i32])),
        "Incompatible shapes: [0] vs. [5]"
    );
    // 0 -> 1: BCast gives 0, which is not the target.
    assert_eq!(
        err(&e, &Tensor::vector(&[1i32])),
        "Unable to broadcast tensor of shape [0] to tensor of shape [1]"
    );
    // 0 with a new leading axis.
    let y = broadcast_to(&e, &shape(&[4, 0])).unwrap();
    assert_eq!(y.shape().dim_sizes(), &[4, 0]);
    // A scalar fills a 0-element shape, and strings behave the same.
    let y = broadcast_to(&Tensor::from("s"), &shape(&[2, 0, 3])).unwrap();
    assert_eq!((y.dtype(), y.num_elements()), (DataType::STRING, 0));
    // Empty outputs are still validated.
    assert_eq!(
        err(&Tensor::vector(&[1i32, 2]), &Tensor::vector(&[0i32, 3])),
        "Incompatible shapes: [2] vs. [0,3]"
    );
}

#[test]
fn check_broadcast_to_matches_the_op_messages() {
    let cases: &[(&[i64], &[i64])] = &[
        (&[2, 3], &[3]),
        (&[3], &[2, 4]),
        (&[2], &[2, 1]),
        (&[3, 0, 5], &[3, 0, 3]),
        (&[1, 3], &[5, 3]),
    ];
    for (i, o) in cases {
        let x = Tensor::new(DataType::INT8, shape(i)).unwrap();
        let op = broadcast_to(&x, &shape(o))
            .map(|_| ())
            .map_err(|e| e.to_string());
        let chk = check_broadcast_to(&shape(i), &shape(o)).map_err(|e| e.to_string());
        assert_eq!(op, chk, "{i:?} -> {o:?}");
    }
}

#[test]
fn huge_valid_target_fails_as_an_error_not_an_abort() {
    let x = Tensor::vector(&[1.0f64]);
    let e = broadcast_to(&x, &shape(&[1 << 40, 1 << 20])).unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{e}");
    let s = Tensor::vector(&[TString::from("x")]);
    let e = broadcast_to(&s, &shape(&[1 << 40, 1 << 20])).unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{e}");
}

// ----- every dtype family --------------------------------------------------------------------

#[test]
fn every_memcpy_dtype_broadcasts_its_bytes() {
    let mut seen = 0;
    for dtype in DataType::all().filter(|d| d.can_use_memcpy()) {
        let x = bytes_tensor(dtype, &[3, 1, 2], dtype.number() as u8);
        check_against_reference(&x, &[2, 3, 4, 2]);
        let s = bytes_tensor(dtype, &[], 9);
        check_against_reference(&s, &[5, 3]);
        seen += 1;
    }
    // float, double, ints, uints, bool, complex, quantized, bfloat16, half, float8, int4/int2,
    // float4.
    assert_eq!(seen, 30);
}

#[test]
fn complex_and_float8_values_are_repeated_exactly() {
    let c = Tensor::vector(&[Complex64::new(1.5, -2.0), Complex64::new(f64::NAN, 0.0)]);
    let y = broadcast_to(&c, &shape(&[2, 2])).unwrap();
    assert_eq!(y.dtype(), DataType::COMPLEX128);
    let v = y.as_slice::<Complex64>().unwrap();
    assert_eq!(v[2], Complex64::new(1.5, -2.0));
    assert!(v[3].re.is_nan());
    let q = bytes_tensor(DataType::QINT8, &[2, 1], 0x7f);
    check_against_reference(&q, &[2, 3]);
    let f8 = bytes_tensor(DataType::FLOAT8_E4M3FN, &[1, 2], 0x80);
    check_against_reference(&f8, &[3, 2]);
}

#[test]
fn object_dtypes_clone_each_element() {
    let h = Tensor::vector(&[ResourceHandle::named("a"), ResourceHandle::named("b")]);
    let y = broadcast_to(&h, &shape(&[2, 1, 2])).unwrap();
    let names: Vec<&str> = y
        .as_slice::<ResourceHandle>()
        .unwrap()
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(names, ["a", "b", "a", "b"]);
    let v = Tensor::from_vec(
        vec![Variant::from(Tensor::from(1i32)), Variant::Empty],
        shape(&[2, 1]),
    )
    .unwrap();
    let y = broadcast_to(&v, &shape(&[2, 3])).unwrap();
    let vals = y.as_slice::<Variant>().unwrap();
    assert_eq!(vals.len(), 6);
    assert!(vals[..3]
        .iter()
        .all(|x| *x == Variant::from(Tensor::from(1i32))));
    assert!(vals[3..].iter().all(|x| *x == Variant::Empty));
    let s = Tensor::from_vec(
        vec![TString::from("x"), TString::from("yy")],
        shape(&[2, 1]),
    )
    .unwrap();
    let y = broadcast_to(&s, &shape(&[2, 2])).unwrap();
    let got: Vec<&[u8]> = y
        .as_slice::<TString>()
        .unwrap()
        .iter()
        .map(|t| t.as_bytes())
        .collect();
    assert_eq!(got, [&b"x"[..], b"x", b"yy", b"yy"]);
}

// ----- the kernel on large outputs (parallel, streaming) and odd layouts -------------------

#[test]
fn large_outputs_match_reference_across_chunk_boundaries() {
    // Each is over the parallel threshold; sizes are odd so chunks split rows.
    check_against_reference(&bytes_tensor(DataType::FLOAT, &[1, 1531], 1), &[397, 1531]);
    check_against_reference(&bytes_tensor(DataType::FLOAT, &[1531, 1], 2), &[1531, 397]);
    check_against_reference(
        &bytes_tensor(DataType::INT16, &[7, 1, 301], 3),
        &[7, 251, 301],
    );
    check_against_reference(&bytes_tensor(DataType::UINT8, &[], 4), &[3, 1_000_003]);
    check_against_reference(&bytes_tensor(DataType::INT8, &[99_991, 1], 5), &[99_991, 3]);
    check_against_reference(&bytes_tensor(DataType::INT8, &[1, 3], 6), &[700_001, 3]);
    check_against_reference(
        &bytes_tensor(DataType::COMPLEX128, &[3, 1, 5, 1], 7),
        &[3, 97, 5, 101],
    );
    check_against_reference(
        &bytes_tensor(DataType::FLOAT, &[2, 1, 3, 1, 2], 8),
        &[2, 577, 3, 113, 2],
    );
}

#[test]
fn unaligned_input_slices_broadcast_correctly() {
    let base = bytes_tensor(DataType::UINT8, &[41], 3);
    let sliced = base.slice(1, 41).unwrap(); // starts at an odd address
    let as_f32 = sliced
        .bitcast_to(DataType::FLOAT, &shape(&[10, 1]))
        .unwrap();
    check_against_reference(&as_f32, &[10, 7]);
}

#[test]
fn the_given_allocator_holds_the_output() {
    let tracking = Arc::new(TrackingAllocator::new(cpu_allocator()));
    let alloc: Arc<dyn Allocator> = tracking.clone();
    let x = Tensor::vector(&[1.0f32, 2.0]);
    let y = broadcast_to_in(&alloc, &x, &shape(&[1000, 2])).unwrap();
    assert_eq!(tracking.stats().unwrap().bytes_in_use, 8000);
    drop(y);
    assert_eq!(tracking.stats().unwrap().bytes_in_use, 0);
}

// ----- properties ----------------------------------------------------------------------------

fn dtype_strategy() -> impl Strategy<Value = DataType> {
    prop::sample::select(vec![
        DataType::UINT8,
        DataType::INT16,
        DataType::FLOAT,
        DataType::DOUBLE,
        DataType::COMPLEX128,
        DataType::BOOL,
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn materialised_equals_naive_reference((inp, out) in broadcastable_to(5, 6), dtype in dtype_strategy(), seed in any::<u8>()) {
        let mut x = bytes_tensor(dtype, &inp, seed);
        if dtype == DataType::BOOL {
            x = bytes_tensor(DataType::UINT8, &inp, seed);
            let bits: Vec<bool> = x.as_slice::<u8>().unwrap().iter().map(|b| b & 1 == 1).collect();
            x = Tensor::from_vec(bits, shape(&inp)).unwrap();
        }
        let got = broadcast_to(&x, &shape(&out)).unwrap();
        let want = reference_bytes(x.tensor_data().unwrap(), dtype.size(), &inp, &out);
        prop_assert_eq!(got.shape().dim_sizes(), &out[..]);
        prop_assert_eq!(got.tensor_data().unwrap(), &want[..]);
        if inp == out {
            prop_assert!(got.num_elements() == 0 || got.shares_buffer_with(&x));
        }
    }

    #[test]
    fn lazy_view_reads_as_the_materialised((inp, out) in broadcastable_to(5, 6), seed in any::<u8>()) {
        let x = bytes_tensor(DataType::FLOAT, &inp, seed);
        let m = broadcast_to(&x, &shape(&out)).unwrap();
        let v = x.broadcast_view(&shape(&out)).unwrap();
        let v = v.array::<f32>().unwrap();
        prop_assert_eq!(v.shape(), &m.shape().dims_usize()[..]);
        if m.num_elements() > 0 {
            // The unchecked view agrees wherever there is something to read.
            let u = x.broadcast_view(&shape(&out)).unwrap();
            let u = u.array::<f32>().unwrap();
            let ub: Vec<u32> = u.iter().map(|f| f.to_bits()).collect();
            let vb: Vec<u32> = v.iter().map(|f| f.to_bits()).collect();
            prop_assert_eq!(ub, vb);
        }
        let lazy: Vec<u32> = v.iter().map(|f| f.to_bits()).collect();
        let mat: Vec<u32> = m.as_slice::<f32>().unwrap().iter().map(|f| f.to_bits()).collect();
        prop_assert_eq!(lazy, mat);
    }

    #[test]
    fn strings_match_the_reference((inp, out) in broadcastable_to(5, 6)) {
        let n: i64 = inp.iter().product();
        let vals: Vec<TString> = (0..n).map(|i| TString::from(format!("s{i}"))).collect();
        let x = Tensor::from_vec(vals.clone(), shape(&inp)).unwrap();
        let got = broadcast_to(&x, &shape(&out)).unwrap();
        let want: Vec<TString> = reference_indices(&inp, &out).into_iter().map(|i| vals[i].clone()).collect();
        prop_assert_eq!(got.to_vec::<TString>().unwrap(), want);
    }

    #[test]
    fn any_shapes_error_or_match_the_rule(inp in proptest::collection::vec(0i64..4, 0..5), out in proptest::collection::vec(0i64..4, 0..5)) {
        let x = bytes_tensor(DataType::INT32, &inp, 1);
        let got = broadcast_to(&x, &shape(&out));
        // The rule, stated independently: ranks fit and each input dim is 1 or the target's.
        let lead = out.len().checked_sub(inp.len());
        let ok = inp == out || lead.is_some_and(|lead| {
            inp.iter().enumerate().all(|(i, &d)| d == 1 || d == out[lead + i])
        });
        prop_assert_eq!(got.is_ok(), ok, "{:?} -> {:?}: {:?}", inp, out, got.as_ref().err());
        // The checked lazy view fails exactly as the op does; the unchecked one accepts the
        // same pairs wherever the output has elements (its message may differ).
        let checked = x.broadcast_view(&shape(&out));
        prop_assert_eq!(
            checked.as_ref().map(|_| ()).map_err(|e| e.to_string()),
            got.as_ref().map(|_| ()).map_err(|e| e.to_string())
        );
        if out.iter().product::<i64>() > 0 {
            prop_assert_eq!(x.broadcast_view(&shape(&out)).is_ok(), ok);
        }
        if let Ok(t) = got {
            let want = reference_bytes(x.tensor_data().unwrap(), 4, &inp, &out);
            prop_assert_eq!(t.tensor_data().unwrap(), &want[..]);
        }
    }
}

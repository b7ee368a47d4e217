//! The zero-copy reinterpretation ops against their documentation: every example of the
//! `tf.bitcast` docs (seeds 000 and 003), every row of TensorFlow's bitcast tests
//! (TF_SEMANTICS §7.1 and §7.2), both Ascend TIK `reinterpret_cast_to` examples of seed 004 with
//! the exact numbers they print, its `(128, 1)` error, and property tests.

use proptest::prelude::*;
use tensorcast_core::buffer::Buffer;
use tensorcast_core::{f16, Code, DataType, Error, Tensor, TensorShape};
use tensorcast_kernels::bitcast::reinterpret::{reinterpret_cast_to, LAST_DIMENSION_ERROR};
use tensorcast_kernels::bitcast::{bitcast, BITCAST_TYPES};
use tensorcast_kernels::TensorOps;

fn shape(dims: &[i64]) -> TensorShape {
    TensorShape::new(dims).unwrap()
}

/// Checks what every success case of `bitcast_op_test.py` checks: the target dtype, the
/// shape, the same bytes; and what tensorcast adds: the same buffer, at the same address.
fn assert_bitcast(input: &Tensor, dtype: DataType, want_dims: &[i64]) -> Tensor {
    let out = bitcast(input, dtype).unwrap();
    assert_eq!(out.dtype(), dtype);
    assert_eq!(out.shape().dim_sizes(), want_dims);
    assert_eq!(out.tensor_data().unwrap(), input.tensor_data().unwrap());
    if input.buffer().is_some() {
        assert!(out.shares_buffer_with(input));
        assert_eq!(out.data_ptr(), input.data_ptr());
    }
    out
}

fn assert_bitcast_error(input: &Tensor, dtype: DataType, message: &str) {
    let err = bitcast(input, dtype).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert_eq!(err.to_string(), message);
}

// ----- seeds 000 and 003: the tf.bitcast documentation ---------------------------------------

#[test]
fn doc_example1_float_to_complex128_is_cannot_bitcast_1_to_18() {
    // Seed 003 prints today's message; seed 000 shows the removed 2015 kernel's
    // `Cannot bitcast from float to complex128: shape [3]` (TF_SEMANTICS §5, historical note).
    let a = Tensor::vector(&[1.0f32, 2.0, 3.0]);
    assert_bitcast_error(&a, DataType::COMPLEX128, "Cannot bitcast from 1 to 18");
}

#[test]
fn doc_example2_uint32_all_ones_to_uint8_gives_four_255() {
    let x = Tensor::from(0xffff_ffffu32);
    let y = assert_bitcast(&x, DataType::UINT8, &[4]);
    assert_eq!(y.as_slice::<u8>().unwrap(), &[255, 255, 255, 255]);
}

#[test]
fn doc_example3_bitcast_of_float_zero_one_one_gives_ieee_bytes() {
    // The bitcast step of example 3 on the float32 tensor the docs print for the cast.
    let equality_cast = Tensor::vector(&[0.0f32, 1.0, 1.0]);
    let b = assert_bitcast(&equality_cast, DataType::UINT8, &[3, 4]);
    let rows: Vec<Vec<u8>> = b
        .matrix::<u8>()
        .unwrap()
        .rows()
        .into_iter()
        .map(|r| r.to_vec())
        .collect();
    assert_eq!(
        rows,
        vec![vec![0, 0, 0, 0], vec![0, 0, 128, 63], vec![0, 0, 128, 63]]
    );
}

#[test]
fn doc_example1_cast_float_to_complex128_gives_zero_imaginary_parts() {
    // The other half of example 1: where bitcast fails, cast makes `[1+0j 2+0j 3+0j]`.
    let a = Tensor::vector(&[1.0f32, 2.0, 3.0]);
    let c = tensorcast_kernels::cast::cast(&a, DataType::COMPLEX128).unwrap();
    assert_eq!(c.dtype(), DataType::COMPLEX128);
    assert_eq!(c.shape().dim_sizes(), &[3]);
    assert_eq!(
        c.as_slice::<tensorcast_core::Complex64>().unwrap(),
        &[1.0, 2.0, 3.0].map(|re| tensorcast_core::Complex64::new(re, 0.0))
    );
}

#[test]
fn doc_example3_equal_then_cast_then_bitcast() {
    let x = Tensor::vector(&[1.0f32, 2.0, 3.0]);
    let y = Tensor::vector(&[0.0f32, 2.0, 3.0]);
    let equality = tensorcast_kernels::elementwise::equal::equal(&x, &y).unwrap();
    assert_eq!(equality.dtype(), DataType::BOOL);
    assert_eq!(equality.shape().dim_sizes(), &[3]);
    assert_eq!(equality.as_slice::<bool>().unwrap(), &[false, true, true]);
    // A bool tensor cannot be bitcast: the op's type list refuses it.
    assert!(bitcast(&equality, DataType::UINT8).is_err());

    let equality_cast = tensorcast_kernels::cast::cast(&equality, DataType::FLOAT).unwrap();
    assert_eq!(equality_cast.shape().dim_sizes(), &[3]);
    assert_eq!(equality_cast.as_slice::<f32>().unwrap(), &[0.0, 1.0, 1.0]);

    let equality_bitcast = assert_bitcast(&equality_cast, DataType::UINT8, &[3, 4]);
    assert_eq!(
        equality_bitcast.as_slice::<u8>().unwrap(),
        &[0, 0, 0, 0, 0, 0, 128, 63, 0, 0, 128, 63]
    );
    assert_eq!(
        equality_bitcast.debug_string(100),
        "Tensor<type: uint8 shape: [3,4] values: [0 0 0...]...>"
            .replace("[0 0 0...]...", "[0 0 0 0][0 0 128 63][0 0 128 63]")
    );
}

#[test]
fn bool_and_string_operands_fail_the_type_list() {
    let list = "bfloat16, half, float, double, int64, int32, uint8, uint16, uint32, uint64, \
                int8, int16, complex64, complex128, qint8, quint8, qint16, quint16, qint32";
    let b = Tensor::vector(&[true, false]);
    assert_bitcast_error(
        &b,
        DataType::UINT8,
        &format!("Value for attr 'T' of bool is not in the list of allowed values: {list}"),
    );
    assert_bitcast_error(
        &Tensor::vector(&[1u8]),
        DataType::STRING,
        &format!("Value for attr 'type' of string is not in the list of allowed values: {list}"),
    );
    // T is checked before type.
    assert_bitcast_error(
        &Tensor::from("x"),
        DataType::BOOL,
        &format!("Value for attr 'T' of string is not in the list of allowed values: {list}"),
    );
    for dt in [DataType::FLOAT8_E4M3FN, DataType::INT4, DataType::FLOAT_REF] {
        assert!(bitcast(&Tensor::vector(&[1u8]), dt).is_err());
    }
}

// ----- TF_SEMANTICS §7.1: python/kernel_tests/array_ops/bitcast_op_test.py --------------------

#[test]
fn tf_test_smaller_float64_3x2_to_int8_appends_8() {
    let vals: Vec<f64> = (0..6).map(|i| (i as f64 * 0.37).sin() * 1e3).collect();
    let x = Tensor::from_vec(vals, shape(&[3, 2])).unwrap();
    assert_bitcast(&x, DataType::INT8, &[3, 2, 8]);
}

#[test]
fn tf_test_larger_int8_arange16_4x4_to_int32_drops_last() {
    let x = Tensor::from_vec((0..16).collect::<Vec<i8>>(), shape(&[4, 4])).unwrap();
    let y = assert_bitcast(&x, DataType::INT32, &[4]);
    assert_eq!(
        y.as_slice::<i32>().unwrap(),
        &[0x0302_0100, 0x0706_0504, 0x0b0a_0908, 0x0f0e_0d0c]
    );
}

#[test]
fn tf_test_same_dtype_float64_keeps_shape() {
    let x = Tensor::from_vec(vec![1.5f64; 12], shape(&[3, 4])).unwrap();
    assert_bitcast(&x, DataType::DOUBLE, &[3, 4]);
}

#[test]
fn tf_test_same_size_float64_to_int64_keeps_shape() {
    let x = Tensor::from_vec(vec![-0.0f64; 12], shape(&[3, 4])).unwrap();
    let y = assert_bitcast(&x, DataType::INT64, &[3, 4]);
    assert!(y.as_slice::<i64>().unwrap().iter().all(|&v| v == i64::MIN));
}

#[test]
fn tf_test_errors_int8_1x1_to_int32_is_cannot_bitcast_6_to_3() {
    let x = Tensor::new(DataType::INT8, shape(&[1, 1])).unwrap();
    assert_bitcast_error(&x, DataType::INT32, "Cannot bitcast from 6 to 3");
}

#[test]
fn tf_test_empty_int32_scalar_to_int8_gives_4() {
    let x = Tensor::from(1i32);
    let y = assert_bitcast(&x, DataType::INT8, &[4]);
    assert_eq!(y.as_slice::<i8>().unwrap(), &[1, 0, 0, 0]);
}

#[test]
fn tf_test_unknown_shape_float32_to_int8_succeeds_for_any_shape() {
    // testUnknownShape builds a graph on a placeholder of unknown shape; tensorcast has no
    // graph mode. Its eager meaning: a larger-to-smaller bitcast never fails on shape.
    for dims in [&[][..], &[0], &[5], &[2, 0], &[1, 2, 3], &[2, 1, 1, 3]] {
        let x = Tensor::new(DataType::FLOAT, shape(dims)).unwrap();
        let mut want = dims.to_vec();
        want.push(4);
        assert_bitcast(&x, DataType::INT8, &want);
    }
}

#[test]
fn tf_test_quantized_type_uint16_to_quint16_keeps_shape() {
    let x = Tensor::new(DataType::UINT16, shape(&[3, 4])).unwrap();
    assert_bitcast(&x, DataType::QUINT16, &[3, 4]);
}

#[test]
fn tf_test_unsigned_type_int64_to_uint64_keeps_shape() {
    let x = Tensor::new(DataType::INT64, shape(&[3, 4])).unwrap();
    assert_bitcast(&x, DataType::UINT64, &[3, 4]);
}

// ----- TF_SEMANTICS §7.2: tensorflow/c/kernels/bitcast_op_test.cc ------------------------------

#[test]
fn c_test_upcast_uint8_8_ones_to_uint64_scalar() {
    let x = Tensor::vector(&[1u8; 8]);
    let y = assert_bitcast(&x, DataType::UINT64, &[]);
    assert_eq!(*y.scalar::<u64>().unwrap(), 0x0101_0101_0101_0101);
}

#[test]
fn c_test_downcast_uint64_scalar_1_to_uint8_8() {
    let x = Tensor::from(1u64);
    let y = assert_bitcast(&x, DataType::UINT8, &[8]);
    assert_eq!(y.as_slice::<u8>().unwrap(), &[1, 0, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn c_test_cast_to_same_size_uint32_4x6_to_uint8_appends_4() {
    let x = Tensor::new(DataType::UINT32, shape(&[4, 6])).unwrap();
    assert_bitcast(&x, DataType::UINT8, &[4, 6, 4]);
}

#[test]
fn c_test_impossible_cast_uint8_1_to_uint32_is_invalid_argument() {
    assert_bitcast_error(
        &Tensor::vector(&[7u8]),
        DataType::UINT32,
        "Cannot bitcast from 4 to 22",
    );
}

#[test]
fn c_test_shape_inference_larger_int64_3x4_to_int8_is_3x4x8() {
    let x = Tensor::new(DataType::INT64, shape(&[3, 4])).unwrap();
    assert_bitcast(&x, DataType::INT8, &[3, 4, 8]);
}

#[test]
fn c_test_shape_inference_smaller_int8_3x4x8_to_int64_is_3x4() {
    let x = Tensor::new(DataType::INT8, shape(&[3, 4, 8])).unwrap();
    assert_bitcast(&x, DataType::INT64, &[3, 4]);
}

#[test]
fn c_test_shape_inference_same_float_3x4_to_int32_is_3x4() {
    let x = Tensor::new(DataType::FLOAT, shape(&[3, 4])).unwrap();
    assert_bitcast(&x, DataType::INT32, &[3, 4]);
}

// ----- more TensorFlow rules (TF_SEMANTICS §5) -------------------------------------------------

#[test]
fn complex64_to_float_appends_real_then_imaginary() {
    let x = Tensor::vector(&[tensorcast_core::Complex32::new(1.5, -2.0)]);
    let y = assert_bitcast(&x, DataType::FLOAT, &[1, 2]);
    assert_eq!(y.as_slice::<f32>().unwrap(), &[1.5, -2.0]);
    let back = assert_bitcast(&y, DataType::COMPLEX64, &[1]);
    assert_eq!(back, x);
}

#[test]
fn empty_tensors_follow_the_same_shape_rules() {
    let x = Tensor::new(DataType::FLOAT, shape(&[0])).unwrap();
    assert_bitcast(&x, DataType::INT8, &[0, 4]);
    let x = Tensor::new(DataType::INT8, shape(&[0, 3])).unwrap();
    assert_bitcast_error(&x, DataType::INT32, "Cannot bitcast from 6 to 3");
    let x = Tensor::new(DataType::INT8, shape(&[0, 4])).unwrap();
    assert_bitcast(&x, DataType::INT32, &[0]);
}

#[test]
fn bitcast_of_a_slice_shares_the_slice_bytes() {
    let x = Tensor::from_vec((0..8).map(|i| i as f32).collect(), shape(&[4, 2])).unwrap();
    let s = x.slice(1, 3).unwrap();
    let y = assert_bitcast(&s, DataType::UINT32, &[2, 2]);
    assert!(y.shares_buffer_with(&x));
    assert_eq!(
        y.as_slice::<u32>().unwrap(),
        &[
            2.0f32.to_bits(),
            3.0f32.to_bits(),
            4.0f32.to_bits(),
            5.0f32.to_bits()
        ]
    );
}

#[test]
fn bitcast_method_matches_the_function() {
    let x = Tensor::vector(&[1u16, 2, 3, 4]);
    assert_eq!(
        x.bitcast(DataType::QINT8).unwrap(),
        bitcast(&x, DataType::QINT8).unwrap()
    );
}

// ----- seed 004: Ascend TIK reinterpret_cast_to -------------------------------------------------

/// numpy's `%.3e` (what TIK's printed arrays use): `4.812e+00`, `-5.846e+04`.
fn sci4(x: f16) -> String {
    let s = format!("{:.3e}", f64::from(x.to_f32()));
    let (mantissa, exp) = s.split_once('e').unwrap();
    let exp: i32 = exp.parse().unwrap();
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.abs())
}

fn half_values(t: &Tensor) -> Vec<String> {
    t.as_slice::<f16>()
        .unwrap()
        .iter()
        .map(|&v| sci4(v))
        .collect()
}

/// data_A of both examples, as the seed prints it.
const TIK_EX1_A: [&str; 16] = [
    "4.812e+00",
    "1.870e-04",
    "-5.692e-02",
    "2.528e-02",
    "-9.225e+02",
    "-1.431e+02",
    "-1.541e+01",
    "-2.018e-03",
    "1.653e-03",
    "-4.090e+00",
    "2.016e+01",
    "-5.846e+04",
    "-8.072e-03",
    "2.627e+00",
    "-3.174e-02",
    "-3.088e-01",
];
const TIK_EX1_B: [u32; 8] = [
    169952464, 645507913, 3631866677, 2552417204, 3289847493, 4213394698, 1094819874, 3035736080,
];
const TIK_EX2_A: [&str; 16] = [
    "4.566e+01",
    "-7.880e+02",
    "1.414e-04",
    "-1.300e-02",
    "-1.893e+03",
    "-1.622e-01",
    "-1.289e+00",
    "2.478e+02",
    "-3.107e+00",
    "-2.072e+01",
    "7.192e-01",
    "-1.805e+00",
    "3.259e+01",
    "-3.181e-03",
    "-3.248e-05",
    "4.086e+04",
];
const TIK_EX2_B: [u16; 16] = [
    20917, 57896, 2210, 41640, 59237, 45361, 48424, 23486, 49719, 52526, 14785, 48952, 20499,
    39556, 33313, 30973,
];

#[test]
fn tik_example1_float16_16_to_uint32_8_and_back() {
    // The float16 bit patterns: each printed uint32 is two float16 elements, the first in its
    // low half (little-endian).
    let bits: Vec<f16> = TIK_EX1_B
        .iter()
        .flat_map(|&w| [w as u16, (w >> 16) as u16])
        .map(f16::from_bits)
        .collect();
    let data_a = Tensor::vector(&bits);
    // These bit patterns are the values the seed prints for data_A.
    assert_eq!(half_values(&data_a), TIK_EX1_A);

    let data_b = data_a.reinterpret_cast_to(DataType::UINT32).unwrap();
    assert_eq!(data_b.shape().dim_sizes(), &[8]);
    assert_eq!(data_b.as_slice::<u32>().unwrap(), &TIK_EX1_B);
    assert!(data_b.shares_buffer_with(&data_a));

    let data_c = data_b.reinterpret_cast_to(DataType::HALF).unwrap();
    assert_eq!(data_c.shape().dim_sizes(), &[16]);
    assert_eq!(half_values(&data_c), TIK_EX1_A);
    assert_eq!(data_c, data_a);
}

#[test]
fn tik_example2_float16_16_to_uint16_16_and_back() {
    let data_a = Tensor::vector(&TIK_EX2_B.map(f16::from_bits));
    assert_eq!(half_values(&data_a), TIK_EX2_A);

    let data_b = data_a.reinterpret_cast_to(DataType::UINT16).unwrap();
    assert_eq!(data_b.shape().dim_sizes(), &[16]);
    assert_eq!(data_b.as_slice::<u16>().unwrap(), &TIK_EX2_B);
    assert!(data_b.shares_buffer_with(&data_a));

    let data_c = data_b.reinterpret_cast_to(DataType::HALF).unwrap();
    assert_eq!(half_values(&data_c), TIK_EX2_A);
    assert_eq!(data_c, data_a);
}

#[test]
fn tik_restriction_float16_128x1_to_float32_last_dimension_cannot_be_divided() {
    let x = Tensor::new(DataType::HALF, shape(&[128, 1])).unwrap();
    let err = x.reinterpret_cast_to(DataType::FLOAT).unwrap_err();
    assert_eq!(err.to_string(), LAST_DIMENSION_ERROR);
    assert_eq!(err.to_string(), "Last dimension can't be divided");
    assert_eq!(err.code(), Code::InvalidArgument);
    // "Setting the tensor shape to 128 can avoid this error": 64 float32.
    let flat = x.reshape(shape(&[128])).unwrap();
    let y = flat.reinterpret_cast_to(DataType::FLOAT).unwrap();
    assert_eq!(y.shape().dim_sizes(), &[64]);
    assert!(y.shares_buffer_with(&x));
}

#[test]
fn reinterpret_keeps_rank_for_quantized_float8_int4_and_bool() {
    let x = Tensor::new(DataType::QINT32, shape(&[2, 3])).unwrap();
    for (dt, last) in [
        (DataType::FLOAT8_E4M3FN, 12),
        (DataType::FLOAT8_E5M2FNUZ, 12),
        (DataType::INT4, 12),
        (DataType::UINT2, 12),
        (DataType::FLOAT4_E2M1FN, 12),
        (DataType::BOOL, 12),
        (DataType::BFLOAT16, 6),
        (DataType::QUINT16, 6),
        (DataType::FLOAT, 3),
    ] {
        let y = reinterpret_cast_to(&x, dt).unwrap();
        assert_eq!(y.shape().dim_sizes(), &[2, last], "{dt}");
        assert!(y.shares_buffer_with(&x));
    }
    // A row of 3 qint32 is 12 bytes: not a whole number of complex128 or double elements.
    assert_eq!(
        reinterpret_cast_to(&x, DataType::COMPLEX128)
            .unwrap_err()
            .to_string(),
        LAST_DIMENSION_ERROR
    );
    assert_eq!(
        reinterpret_cast_to(&x, DataType::DOUBLE)
            .unwrap_err()
            .to_string(),
        LAST_DIMENSION_ERROR
    );
}

#[test]
fn reinterpret_to_bool_holds_bytes_that_views_refuse() {
    let x = Tensor::vector(&[2u8, 1]);
    let b = x.reinterpret_cast_to(DataType::BOOL).unwrap();
    assert!(b.as_slice::<bool>().is_err());
    assert_eq!(b.tensor_data().unwrap(), &[2, 1]);
}

#[test]
fn reinterpret_refuses_non_memcpy_dtypes() {
    let x = Tensor::vector(&[1u8]);
    for dt in [
        DataType::STRING,
        DataType::RESOURCE,
        DataType::VARIANT,
        DataType::INVALID,
        DataType::FLOAT_REF,
        DataType::from_number(77),
    ] {
        let err = x.reinterpret_cast_to(dt).unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument);
        assert!(
            matches!(err, Error::NotBytes { op, dtype } if op.contains("target") && dtype == dt),
            "{err}"
        );
    }
    let err = Tensor::from("s")
        .reinterpret_cast_to(DataType::UINT8)
        .unwrap_err();
    assert!(
        matches!(err, Error::NotBytes { op, dtype: DataType::STRING } if op.contains("source")),
        "{err}"
    );
}

#[test]
fn reinterpret_of_a_scalar_needs_equal_sizes() {
    let x = Tensor::from(1.0f32);
    assert_eq!(x.reinterpret_cast_to(DataType::INT32).unwrap().dims(), 0);
    assert!(x.reinterpret_cast_to(DataType::UINT8).is_err());
    assert!(x.reinterpret_cast_to(DataType::DOUBLE).is_err());
}

// ----- properties ------------------------------------------------------------------------------

fn memcpy_dtypes() -> Vec<DataType> {
    DataType::all().filter(|d| d.can_use_memcpy()).collect()
}

/// A few NaN and edge patterns mixed into random bytes, so payloads are sure to be covered.
fn with_nan_payloads(mut bytes: Vec<u8>, seed: usize) -> Vec<u8> {
    const PATTERNS: [&[u8]; 5] = [
        &0x7fc0_0001u32.to_le_bytes(),           // quiet f32 NaN, payload 1
        &0xff80_0001u32.to_le_bytes(),           // signalling negative f32 NaN
        &0x7ff0_0000_0000_0001u64.to_le_bytes(), // signalling f64 NaN
        &0x7e01u16.to_le_bytes(),                // f16 NaN with a payload
        &0xffc1u16.to_le_bytes(),                // bf16 negative NaN
    ];
    let p = PATTERNS[seed % PATTERNS.len()];
    if bytes.len() >= p.len() {
        let at = (seed / PATTERNS.len()) % (bytes.len() - p.len() + 1);
        bytes[at..at + p.len()].copy_from_slice(p);
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Bitcast T -> U -> T gives back the same dtype, shape and bytes, over the same buffer,
    /// for every pair of the op's 19 types and random shapes and bytes (NaN payloads included).
    #[test]
    fn bitcast_there_and_back_is_the_identity(
        a in 0usize..19,
        b in 0usize..19,
        outer in proptest::collection::vec(0i64..4, 0..4),
        seed in any::<usize>(),
        raw in proptest::collection::vec(any::<u8>(), 0..2048),
    ) {
        let (t, u) = (BITCAST_TYPES[a], BITCAST_TYPES[b]);
        // The smaller source needs a last dim equal to the ratio.
        let mut dims = outer;
        if t.size() < u.size() {
            dims.push((u.size() / t.size()) as i64);
        }
        let s = shape(&dims);
        let n = s.num_elements_usize() * t.size();
        let mut bytes = raw;
        bytes.resize(n, 0xa5);
        let bytes = with_nan_payloads(bytes, seed);
        let x = Tensor::from_buffer(t, &s, Buffer::copy_from_slice(&bytes).unwrap()).unwrap();
        let y = bitcast(&x, u).unwrap();
        prop_assert_eq!(y.tensor_data().unwrap(), &bytes[..]);
        let z = bitcast(&y, t).unwrap();
        prop_assert_eq!(z.dtype(), t);
        prop_assert_eq!(z.shape(), x.shape());
        prop_assert_eq!(z.tensor_data().unwrap(), &bytes[..]);
        prop_assert!(n == 0 || (z.shares_buffer_with(&x) && z.data_ptr() == x.data_ptr()));
        prop_assert!(z == x);
    }

    /// A smaller source whose last dim is not the ratio (or a scalar) is refused with
    /// TensorFlow's message; a same-size or larger source never is.
    #[test]
    fn bitcast_shape_rule(
        a in 0usize..19,
        b in 0usize..19,
        dims in proptest::collection::vec(0i64..20, 0..4),
    ) {
        let (t, u) = (BITCAST_TYPES[a], BITCAST_TYPES[b]);
        let x = Tensor::new(t, shape(&dims)).unwrap();
        let ok = t.size() >= u.size()
            || dims.last() == Some(&((u.size() / t.size()) as i64));
        match bitcast(&x, u) {
            Ok(y) => {
                prop_assert!(ok);
                prop_assert_eq!(y.total_bytes(), x.total_bytes());
            }
            Err(e) => {
                prop_assert!(!ok);
                prop_assert_eq!(
                    e.to_string(),
                    format!("Cannot bitcast from {} to {}", t.number(), u.number())
                );
            }
        }
    }

    /// reinterpret_cast_to T -> U -> T is the identity on dtype, shape and bytes whenever the
    /// first step succeeds, which it does exactly when the last dim's bytes divide into U's.
    #[test]
    fn reinterpret_round_trips(
        a in 0usize..64,
        b in 0usize..64,
        dims in proptest::collection::vec(0i64..40, 1..4),
        seed in any::<usize>(),
        raw in proptest::collection::vec(any::<u8>(), 0..4096),
    ) {
        let all = memcpy_dtypes();
        let (t, u) = (all[a % all.len()], all[b % all.len()]);
        let s = shape(&dims);
        let n = s.num_elements_usize() * t.size();
        let mut bytes = raw;
        bytes.resize(n, 0x5a);
        let bytes = with_nan_payloads(bytes, seed);
        let x = Tensor::from_buffer(t, &s, Buffer::copy_from_slice(&bytes).unwrap()).unwrap();
        let last = *dims.last().unwrap();
        let divides = (last as usize * t.size()).is_multiple_of(u.size());
        match reinterpret_cast_to(&x, u) {
            Ok(y) => {
                prop_assert!(divides);
                prop_assert_eq!(y.dims(), x.dims());
                prop_assert_eq!(&y.shape().dim_sizes()[..dims.len() - 1], &dims[..dims.len() - 1]);
                prop_assert_eq!(
                    *y.shape().dim_sizes().last().unwrap(),
                    last * t.size() as i64 / u.size() as i64
                );
                // The bytes x holds: the given ones, except that a sub-byte integer dtype keeps
                // only its value bits (its canonical byte, `DataType::sub_byte_mask`).
                let mask = t.sub_byte_mask().unwrap_or(0xff);
                let held: Vec<u8> = bytes.iter().map(|b| b & mask).collect();
                prop_assert_eq!(x.tensor_data().unwrap(), &held[..]);
                prop_assert_eq!(y.tensor_data().unwrap(), &held[..]);
                let z = reinterpret_cast_to(&y, t).unwrap();
                prop_assert!(z == x);
                prop_assert!(n == 0 || z.shares_buffer_with(&x));
            }
            Err(e) => {
                prop_assert!(!divides);
                prop_assert_eq!(e.to_string(), LAST_DIMENSION_ERROR);
            }
        }
    }
}

#[test]
fn memcpy_dtypes_are_the_30_of_tensorflow() {
    assert_eq!(memcpy_dtypes().len(), 30);
}

#[test]
fn any_dtype_number_gives_an_error_not_a_crash() {
    // DataType::name once recursed once per 100 of the number: i32::MAX overflowed the stack.
    let x = Tensor::vector(&[1u8, 2, 3, 4]);
    for n in [i32::MIN, -1, 0, 34, 99, 100, 133, 134, 250, i32::MAX] {
        let dt = DataType::from_number(n);
        assert_eq!(
            bitcast(&x, dt).unwrap_err().code(),
            Code::InvalidArgument,
            "{n}"
        );
        assert_eq!(
            x.reinterpret_cast_to(dt).unwrap_err().code(),
            Code::InvalidArgument
        );
    }
    let err = bitcast(&x, DataType::from_number(250))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("Value for attr 'type' of unknown dtype enum (150)_ref is not in"),
        "{err}"
    );
}

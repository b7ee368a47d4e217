//! `math` and `reduce`: TensorFlow's semantics on edge values (NaN through Relu, half to even
//! rounding, wrapping integers, negative axes, empty reductions) and its errors (a repeated
//! axis is one, as TensorFlow 2.21 records it).

use tensorcast_core::{Tensor, TensorShape};
use tensorcast_kernels::math::{leaky_relu, log_softmax, softmax, unary, UnaryOp};
use tensorcast_kernels::reduce::{reduce, reduce_shape, Reduction};

#[test]
fn unary_edge_values() {
    let x = Tensor::vector(&[f32::NAN, -2.5, -0.0, 0.5, 2.5, 7.0]);
    let relu = unary(UnaryOp::Relu, &x).unwrap().to_vec::<f32>().unwrap();
    assert!(relu[0].is_nan());
    assert_eq!(&relu[1..], &[0.0, -0.0, 0.5, 2.5, 7.0]);
    let r6 = unary(UnaryOp::Relu6, &x).unwrap().to_vec::<f32>().unwrap();
    assert!(r6[0].is_nan());
    assert_eq!(&r6[1..], &[0.0, 0.0, 0.5, 2.5, 6.0]);
    let round = unary(UnaryOp::Round, &x).unwrap().to_vec::<f32>().unwrap();
    assert_eq!(&round[1..], &[-2.0, -0.0, 0.0, 2.0, 7.0]);
    let i = Tensor::vector(&[i32::MIN, -3, 0, 4]);
    assert_eq!(
        unary(UnaryOp::Neg, &i).unwrap().to_vec::<i32>().unwrap(),
        [i32::MIN, 3, 0, -4]
    );
    assert_eq!(
        unary(UnaryOp::Sign, &i).unwrap().to_vec::<i32>().unwrap(),
        [-1, -1, 0, 1]
    );
    assert!(unary(UnaryOp::Exp, &i).is_err());
    let l = leaky_relu(&Tensor::vector(&[-1.0f32, 2.0]), 0.2).unwrap();
    assert_eq!(l.to_vec::<f32>().unwrap(), [-0.2, 2.0]);
    let erf = unary(UnaryOp::Erf, &Tensor::vector(&[0.5f64])).unwrap();
    assert!((erf.to_vec::<f64>().unwrap()[0] - 0.520_499_877_813_046_5).abs() < 1e-15);
}

#[test]
fn softmax_rows_sum_to_one() {
    let x = Tensor::from_slice(
        &[1.0f32, 2.0, 3.0, 1000.0, 1000.0, 1000.0],
        TensorShape::new(&[2, 3]).unwrap(),
    )
    .unwrap();
    let s = softmax(&x).unwrap().to_vec::<f32>().unwrap();
    assert!((s[0] - 0.090_030_57).abs() < 1e-7);
    assert!((s[3] - 1.0 / 3.0).abs() < 1e-7);
    let l = log_softmax(&x).unwrap().to_vec::<f32>().unwrap();
    assert!((l[2] - (-0.407_605_96)).abs() < 1e-6);
    // float runs on oneDNN in TensorFlow, which refuses a scalar with its own text.
    assert_eq!(
        softmax(&Tensor::from(1.0f32)).unwrap_err().to_string(),
        "Input dims must be <= 5 and >=1"
    );
    assert_eq!(
        softmax(&Tensor::from(1.0f64)).unwrap_err().to_string(),
        "logits must have >= 1 dimension, got []"
    );
}

#[test]
fn reductions_follow_tensorflow() {
    let x = Tensor::from_slice(&[1i32, 2, 3, 4, 5, 6], TensorShape::new(&[2, 3]).unwrap()).unwrap();
    let sum = |axes: &[i32], keep| reduce(Reduction::Sum, &x, &Tensor::vector(axes), keep).unwrap();
    assert_eq!(sum(&[0], false).to_vec::<i32>().unwrap(), [5, 7, 9]);
    assert_eq!(sum(&[-1], true).shape().dim_sizes(), &[2, 1]);
    assert_eq!(sum(&[1, 0], false).to_vec::<i32>().unwrap(), [21]);
    let dup = reduce(Reduction::Sum, &x, &Tensor::vector(&[1i32, -1]), false).unwrap_err();
    assert_eq!(
        dup.to_string(),
        "Invalid reduction arguments: Axes contains duplicate dimension: 1"
    );
    assert_eq!(sum(&[], false).to_vec::<i32>().unwrap(), [1, 2, 3, 4, 5, 6]);
    let mean = reduce(Reduction::Mean, &x, &Tensor::vector(&[1i64]), false).unwrap();
    assert_eq!(mean.to_vec::<i32>().unwrap(), [2, 5]);
    let e = reduce(Reduction::Sum, &x, &Tensor::vector(&[2i32]), false).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Invalid reduction dimension (2 for input with 2 dimension(s)"
    );
    let empty = Tensor::from_slice(&[] as &[f32], TensorShape::new(&[0, 3]).unwrap()).unwrap();
    let m = reduce(Reduction::Max, &empty, &Tensor::vector(&[0i32]), false).unwrap();
    assert_eq!(m.to_vec::<f32>().unwrap(), [f32::NEG_INFINITY; 3]);
    let nan = Tensor::vector(&[1.0f32, f32::NAN, 3.0]);
    assert!(
        reduce(Reduction::Max, &nan, &Tensor::vector(&[0i32]), false)
            .unwrap()
            .to_vec::<f32>()
            .unwrap()[0]
            .is_nan()
    );
    let b = Tensor::vector(&[true, false]);
    assert_eq!(
        reduce(Reduction::Any, &b, &Tensor::vector(&[0i32]), false)
            .unwrap()
            .to_vec::<bool>()
            .unwrap(),
        [true]
    );
    assert_eq!(
        reduce(Reduction::All, &b, &Tensor::vector(&[0i32]), false)
            .unwrap()
            .to_vec::<bool>()
            .unwrap(),
        [false]
    );
    let s = reduce_shape(
        &tensorcast_core::PartialTensorShape::new(&[-1, 4, 5]).unwrap(),
        Some(&Tensor::vector(&[1i32])),
        true,
    )
    .unwrap();
    assert_eq!(s.dims(), Some(&[-1, 1, 5][..]));
}

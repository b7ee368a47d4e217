//! Arguments that ask for absurd amounts of memory or make no sense (issue 18, section 5): each
//! gives TensorFlow 2.21's error text (recorded from its eager ops on this machine), never a
//! panic, an abort or an attempt to allocate what was asked.

use tensorcast_core::{Code, DataType, Tensor, TensorShape};
use tensorcast_kernels::array::{self as a, StridedSliceMasks};
use tensorcast_kernels::linalg::mat_mul;
use tensorcast_kernels::nn::{conv2d, Padding};

const ON_CPU: &str = " on /job:localhost/replica:0/task:0/device:CPU:0 by allocator mklcpu";

fn oom(shape: &str, dtype: &str) -> String {
    format!("OOM when allocating tensor with shape{shape} and type {dtype}{ON_CPU}")
}

#[test]
fn mat_mul_of_a_terabyte_output_is_tensorflows_oom_text() {
    let a = Tensor::new(DataType::FLOAT, [1_000_000i64, 1].as_slice()).unwrap();
    let b = Tensor::new(DataType::FLOAT, [1i64, 1_000_000].as_slice()).unwrap();
    let e = mat_mul(&a, &b, false, false).unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted);
    assert_eq!(e.to_string(), oom("[1000000,1000000]", "float"));
}

#[test]
fn conv2d_of_a_terabyte_output_is_tensorflows_oom_text() {
    // TensorFlow 2.21's oneDNN kernel reports this OOM, then crashes the process; the text is
    // what it reports.
    let x = Tensor::from_vec(vec![1.0f32], [1i64, 1, 1, 1].as_slice()).unwrap();
    let w = Tensor::from_vec(vec![1.0f32; 64], [1i64, 1, 1, 64].as_slice()).unwrap();
    let pads = [0, 0, 1_000_000, 1_000_000, 1_000_000, 1_000_000, 0, 0];
    let ones = [1i64; 4];
    let e = conv2d(&x, &w, (&ones, Padding::Explicit, &pads, &ones)).unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted);
    assert_eq!(e.to_string(), oom("[1,2000001,2000001,64]", "float"));
}

#[test]
fn range_fill_and_tile_asking_for_terabytes_are_tensorflows_oom_text() {
    let e = a::range(
        &Tensor::from(0i64),
        &Tensor::from(1i64 << 40),
        &Tensor::from(1i64),
    )
    .unwrap_err();
    assert_eq!(e.to_string(), oom("[1099511627776]", "int64"));
    let e = a::fill(
        &Tensor::vector(&[1i64 << 20, 1 << 20]),
        &Tensor::from(1.0f32),
    )
    .unwrap_err();
    assert_eq!(e.to_string(), oom("[1048576,1048576]", "float"));
    let x = Tensor::new(DataType::FLOAT, TensorShape::new(&[2, 2]).unwrap()).unwrap();
    let e = a::tile(&x, &Tensor::vector(&[1i32 << 30, 1 << 30])).unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted);
    assert_eq!(e.to_string(), oom("[2147483648,2147483648]", "float"));
}

/// `Range`'s shape function gives the length without making the output (the `ops_array` fuzz
/// target's finding: it built the whole range, 1 TiB here, to learn its length).
#[test]
fn range_shape_never_makes_the_range() {
    let (s, l, d) = (
        Tensor::from(0i64),
        Tensor::from((1i64 << 37) - 1),
        Tensor::from(1i64),
    );
    let t = std::time::Instant::now();
    let shape = a::range_shape(Some(&s), Some(&l), Some(&d)).unwrap();
    assert_eq!(shape.dims(), Some(&[(1i64 << 37) - 1][..]));
    assert!(t.elapsed() < std::time::Duration::from_secs(1));
    // Past the output limit: unknown length, as before.
    let l = Tensor::from(1i64 << 40);
    let shape = a::range_shape(Some(&s), Some(&l), Some(&d)).unwrap();
    assert_eq!(shape.dims(), Some(&[-1i64][..]));
    // Its errors are still Range's.
    let e = a::range_shape(Some(&s), Some(&l), Some(&Tensor::from(0i64))).unwrap_err();
    assert!(e.to_string().contains("Requires delta != 0"), "{e}");
}

fn strided(
    x: &Tensor,
    begin: &[i64],
    end: &[i64],
    strides: &[i64],
    m: StridedSliceMasks,
) -> String {
    match a::strided_slice(
        x,
        &Tensor::vector(begin),
        &Tensor::vector(end),
        &Tensor::vector(strides),
        m,
    ) {
        Ok(t) => format!("ok {:?}", t.shape().dim_sizes()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn strided_slice_with_absurd_masks_gives_tensorflows_text() {
    let x = Tensor::new(DataType::FLOAT, TensorShape::new(&[2, 2]).unwrap()).unwrap();
    let none = StridedSliceMasks::default();
    // A spec of 32 entries or more (the masks are 32 bits), as TensorFlow refuses it.
    let forty = vec![0i64; 40];
    let new_axes = StridedSliceMasks {
        new_axis_mask: -1,
        ..none
    };
    assert_eq!(
        strided(&x, &forty, &forty, &vec![1; 40], new_axes),
        "Expected begin, end, and strides to be 1D equal size tensors, but got shapes [40], [40], and [40] instead."
    );
    let under = vec![0i64; 31];
    assert!(strided(&x, &under, &under, &vec![1; 31], new_axes).starts_with("ok"));
    let masks = |ellipsis_mask, begin_mask, end_mask, shrink_axis_mask| StridedSliceMasks {
        ellipsis_mask,
        begin_mask,
        end_mask,
        shrink_axis_mask,
        ..none
    };
    // (begin, end, strides, masks, what TensorFlow says); what it accepts, it gives the same
    // shape for.
    type Case<'a> = (&'a [i64], &'a [i64], &'a [i64], StridedSliceMasks, &'a str);
    let cases: [Case; 5] = [
        (
            &[0, 0],
            &[1, 1],
            &[1, 1],
            masks(3, 0, 0, 0),
            "Multiple ellipses in slice spec not allowed",
        ),
        (&[0], &[1], &[0], none, "strides[0] must be non-zero"),
        (
            &[5, 0],
            &[6, 1],
            &[1, 1],
            masks(0, 0, 0, -1),
            "slice index 5 of dimension 0 out of bounds.",
        ),
        (&[-(1 << 62)], &[1 << 62], &[1 << 62], none, "ok [1, 2]"),
        (&[0, 0], &[1, 1], &[1, 1], masks(0, -1, -1, -1), "ok []"),
    ];
    for (begin, end, strides, m, want) in cases {
        assert_eq!(
            strided(&x, begin, end, strides, m),
            want,
            "{begin:?} {end:?} {strides:?}"
        );
    }
}

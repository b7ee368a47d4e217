//! Laws of the tensor core, checked on random inputs.

use proptest::prelude::*;
use tensorcast_core::{DataType, Tensor, TensorShape};

fn shape(d: &[i64]) -> TensorShape {
    TensorShape::new(d).unwrap()
}

/// A float tensor with a random shape (rank 1..4, dims 0..6) holding 0, 1, 2, ...
fn arb_tensor() -> impl Strategy<Value = Tensor> {
    prop::collection::vec(0i64..6, 1..4).prop_map(|dims| {
        let s = shape(&dims);
        let vals: Vec<f32> = (0..s.num_elements()).map(|i| i as f32).collect();
        Tensor::from_vec(vals, &s).unwrap()
    })
}

proptest! {
    #[test]
    fn slice_of_slice_equals_composed_slice(
        t in arb_tensor(),
        a in 0i64..7, b in 0i64..7, c in 0i64..7, d in 0i64..7,
    ) {
        let dim0 = t.dim_size(0).unwrap();
        let (s0, l0) = (a.min(b).min(dim0), a.max(b).min(dim0));
        let outer = t.slice(s0, l0).unwrap();
        let len = l0 - s0;
        let (s1, l1) = (c.min(d).min(len), c.max(d).min(len));
        let inner = outer.slice(s1, l1).unwrap();
        let direct = t.slice(s0 + s1, s0 + l1).unwrap();
        prop_assert_eq!(&inner, &direct);
        prop_assert_eq!(inner.data_ptr(), direct.data_ptr());
        if inner.num_elements() > 0 {
            prop_assert!(inner.shares_buffer_with(&t));
        }
    }

    #[test]
    fn sub_slice_matches_slice_without_dim0(t in arb_tensor(), i in 0i64..6) {
        let dim0 = t.dim_size(0).unwrap();
        prop_assume!(i < dim0);
        let sub = t.sub_slice(i).unwrap();
        let sl = t.slice(i, i + 1).unwrap();
        prop_assert_eq!(sub.tensor_data().unwrap(), sl.tensor_data().unwrap());
        prop_assert_eq!(sub.shape().dim_sizes(), &t.shape().dim_sizes()[1..]);
    }

    #[test]
    fn bitcast_from_round_trips_bytes(
        bytes in prop::collection::vec(any::<u8>(), 0..64),
        from in prop::sample::select(vec![DataType::UINT8, DataType::INT16, DataType::FLOAT, DataType::DOUBLE, DataType::COMPLEX128, DataType::HALF, DataType::QINT32]),
        to in prop::sample::select(vec![DataType::UINT8, DataType::UINT16, DataType::INT32, DataType::INT64, DataType::COMPLEX64, DataType::BFLOAT16, DataType::FLOAT8_E5M2]),
    ) {
        // Trim to a length both sizes divide.
        let unit = 16;
        let n = bytes.len() / unit * unit;
        let raw = Tensor::from_vec(bytes[..n].to_vec(), shape(&[n as i64])).unwrap();
        let a = raw.bitcast_to(from, &shape(&[(n / from.size()) as i64])).unwrap();
        let b = a.bitcast_to(to, &shape(&[(n / to.size()) as i64])).unwrap();
        let back = b.bitcast_to(from, a.shape()).unwrap();
        prop_assert_eq!(back.tensor_data().unwrap(), &bytes[..n]);
        prop_assert_eq!(&back, &a);
        if n > 0 {
            prop_assert!(back.shares_buffer_with(&raw));
        }
    }

    #[test]
    fn shapes_never_overflow_silently(dims in prop::collection::vec(0i64..=i64::MAX, 0..8)) {
        let exact: Option<i128> = dims.iter().try_fold(1i128, |acc, &d| {
            let p = acc * d as i128;
            (p <= i64::MAX as i128).then_some(p)
        });
        match TensorShape::new(&dims) {
            Ok(s) => {
                let want = dims.iter().map(|&d| d as i128).product::<i128>();
                prop_assert_eq!(s.num_elements() as i128, want);
            }
            Err(e) => {
                // Only a product that really exceeds i64 (at some prefix) may fail.
                prop_assert!(exact.is_none() || dims.iter().scan(1i128, |acc, &d| { *acc *= d as i128; Some(*acc) }).any(|p| p > i64::MAX as i128), "{}", e);
            }
        }
        match TensorShape::make_shape(&dims) {
            Ok(s) => prop_assert!(s.num_elements() >= 0),
            Err(e) => prop_assert!(e.to_string().contains("2**63 - 1"), "{}", e),
        }
    }

    #[test]
    fn negative_dims_are_always_rejected(dims in prop::collection::vec(-5i64..5, 1..6)) {
        let has_negative = dims.iter().any(|&d| d < 0);
        prop_assert_eq!(TensorShape::new(&dims).is_err(), has_negative);
    }
}

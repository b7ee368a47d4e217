//! Matrix products against a naive reference, and hostile sizes.

use proptest::prelude::*;
use tensorcast_core::{Code, Tensor};
use tensorcast_kernels::linalg::{batch_mat_mul_v2, mat_mul};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn mat_mul_matches_naive_for_every_engine(m in 0usize..20, n in 0usize..20, k in 0usize..20, ta: bool, tb: bool, seed in 0u64..1000) {
        let mut state = seed;
        let mut next = || { state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); ((state >> 33) % 9) as i64 - 4 };
        let a: Vec<i64> = (0..m * k).map(|_| next()).collect();
        let b: Vec<i64> = (0..k * n).map(|_| next()).collect();
        let at = |i: usize, p: usize| if ta { a[p * m + i] } else { a[i * k + p] };
        let bt = |p: usize, j: usize| if tb { b[j * k + p] } else { b[p * n + j] };
        let want: Vec<i64> = (0..m * n).map(|e| (0..k).map(|p| at(e / n, p) * bt(p, e % n)).sum()).collect();
        let sa = if ta { [k as i64, m as i64] } else { [m as i64, k as i64] };
        let sb = if tb { [n as i64, k as i64] } else { [k as i64, n as i64] };
        let ai = Tensor::from_vec(a.clone(), sa.as_slice()).unwrap();
        let bi = Tensor::from_vec(b.clone(), sb.as_slice()).unwrap();
        prop_assert_eq!(mat_mul(&ai, &bi, ta, tb).unwrap().to_vec::<i64>().unwrap(), want.clone());
        let af = Tensor::from_vec(a.iter().map(|&v| v as f64).collect::<Vec<_>>(), sa.as_slice()).unwrap();
        let bf = Tensor::from_vec(b.iter().map(|&v| v as f64).collect::<Vec<_>>(), sb.as_slice()).unwrap();
        let got = batch_mat_mul_v2(&af, &bf, ta, tb).unwrap().to_vec::<f64>().unwrap();
        prop_assert_eq!(got, want.iter().map(|&v| v as f64).collect::<Vec<_>>());
    }
}

#[test]
fn mat_mul_terabyte_output_is_an_allocation_error_not_an_abort() {
    // [1e6, 1] x [1, 1e6] floats: a 4 TB output.
    let a = Tensor::new(
        tensorcast_core::DataType::FLOAT,
        [1_000_000i64, 1].as_slice(),
    )
    .unwrap();
    let b = Tensor::new(
        tensorcast_core::DataType::FLOAT,
        [1i64, 1_000_000].as_slice(),
    )
    .unwrap();
    let e = mat_mul(&a, &b, false, false).unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{e}");
}

//! `Select`/`SelectV2` against a naive reference: every output element is `then`'s or `else`'s
//! element at the broadcast position, chosen by the condition's.

use proptest::prelude::*;
use tensorcast_core::{Tensor, TensorShape};
use tensorcast_kernels::unary::{select, select_v2};

/// The row-major index into `dims` (right-aligned, size-1 dims broadcast) of output index `i`.
fn source_index(i: usize, out: &[usize], dims: &[usize]) -> usize {
    let mut rem = i;
    let mut idx = 0;
    let mut stride = 1;
    let off = out.len() - dims.len();
    for d in (0..out.len()).rev() {
        let pos = rem % out[d];
        rem /= out[d];
        if d >= off {
            let n = dims[d - off];
            if n != 1 {
                idx += pos * stride;
            }
            stride *= n;
        }
    }
    idx
}

fn shape(dims: &[usize]) -> TensorShape {
    let d: Vec<i64> = dims.iter().map(|&x| x as i64).collect();
    TensorShape::new(&d).unwrap()
}

proptest! {
    #[test]
    fn select_v2_matches_a_naive_broadcast(
        out in proptest::collection::vec(1usize..4, 0..4),
        masks in proptest::collection::vec(any::<(bool, bool, bool)>(), 4),
        seed in any::<u64>(),
    ) {
        // Each operand keeps or drops (to 1) each dim, and may be of lower rank.
        let pick = |k: usize| -> Vec<usize> {
            out.iter().zip(&masks).map(|(&d, m)| {
                let keep = [m.0, m.1, m.2][k];
                if keep { d } else { 1 }
            }).collect()
        };
        let (cd, td, ed) = (pick(0), pick(1), pick(2));
        // Where all three drop a dim, the output's is 1.
        let out: Vec<usize> = (0..out.len()).map(|i| cd[i].max(td[i]).max(ed[i])).collect();
        let n = |d: &[usize]| d.iter().product::<usize>();
        let cond: Vec<bool> = (0..n(&cd)).map(|i| (seed >> (i % 64)) & 1 == 1).collect();
        let t: Vec<i32> = (0..n(&td)).map(|i| i as i32).collect();
        let e: Vec<i32> = (0..n(&ed)).map(|i| -(i as i32) - 1).collect();
        let got = select_v2(
            &Tensor::from_slice(&cond, shape(&cd)).unwrap(),
            &Tensor::from_slice(&t, shape(&td)).unwrap(),
            &Tensor::from_slice(&e, shape(&ed)).unwrap(),
        ).unwrap();
        prop_assert_eq!(got.shape(), &shape(&out));
        let got = got.to_vec::<i32>().unwrap();
        for (i, g) in got.iter().enumerate() {
            let c = cond[source_index(i, &out, &cd)];
            let want = if c { t[source_index(i, &out, &td)] } else { e[source_index(i, &out, &ed)] };
            prop_assert_eq!(*g, want);
        }
    }
}

#[test]
fn select_v1_picks_rows_scalars_and_elements() {
    let s = shape(&[3, 2]);
    let t = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &s).unwrap();
    let e = Tensor::from_slice(&[-1.0f64, -2.0, -3.0, -4.0, -5.0, -6.0], &s).unwrap();
    let rows = select(&Tensor::vector(&[false, true, false]), &t, &e).unwrap();
    assert_eq!(
        rows.to_vec::<f64>().unwrap(),
        vec![-1.0, -2.0, 3.0, 4.0, -5.0, -6.0]
    );
    let all = select(&Tensor::scalar_of(true), &t, &e).unwrap();
    assert_eq!(
        all.to_vec::<f64>().unwrap(),
        vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    );
    let c = Tensor::from_slice(&[true, false, false, true, true, false], &s).unwrap();
    let each = select(&c, &t, &e).unwrap();
    assert_eq!(
        each.to_vec::<f64>().unwrap(),
        vec![1.0, -2.0, -3.0, 4.0, 5.0, -6.0]
    );
    // Empty inputs give an empty output.
    let z = shape(&[0, 2]);
    let empty = Tensor::from_slice::<f32, _>(&[], &z).unwrap();
    let out = select_v2(&Tensor::scalar_of(true), &empty, &empty).unwrap();
    assert_eq!(out.shape(), &z);
}

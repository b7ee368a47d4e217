//! The data-movement ops against naive references (proptest), their zero-copy views, the
//! parallel and blocked copy paths, strings, and hostile sizes.

use proptest::prelude::*;
use tensorcast_core::{Code, DataType, TString, Tensor, TensorShape};
use tensorcast_kernels::array as a;

fn iota(dims: &[i64]) -> Tensor {
    let n: i64 = dims.iter().product();
    Tensor::from_vec((0..n as i32).collect::<Vec<i32>>(), dims).unwrap()
}

fn strides_of(dims: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; dims.len()];
    for d in (0..dims.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * dims[d + 1];
    }
    s
}

/// Every multi-index of `dims`, row-major.
fn indices(dims: &[i64]) -> Vec<Vec<i64>> {
    let n: i64 = dims.iter().product();
    (0..n)
        .map(|mut f| {
            let mut idx = vec![0i64; dims.len()];
            for d in (0..dims.len()).rev() {
                idx[d] = f % dims[d];
                f /= dims[d];
            }
            idx
        })
        .collect()
}

fn shape_and_perm() -> impl Strategy<Value = (Vec<i64>, Vec<i64>)> {
    prop::collection::vec(1i64..5, 0..5).prop_flat_map(|dims| {
        let n = dims.len();
        (
            Just(dims),
            Just((0..n as i64).collect::<Vec<_>>()).prop_shuffle(),
        )
    })
}

proptest! {
    #[test]
    fn transpose_matches_naive((dims, perm) in shape_and_perm()) {
        let x = iota(&dims);
        let y = a::transpose(&x, &Tensor::vector(&perm)).unwrap();
        let out_dims: Vec<i64> = perm.iter().map(|&p| dims[p as usize]).collect();
        prop_assert_eq!(y.shape().dim_sizes(), &out_dims[..]);
        let st = strides_of(&dims);
        let want: Vec<i32> = indices(&out_dims)
            .iter()
            .map(|o| perm.iter().enumerate().map(|(i, &p)| o[i] * st[p as usize]).sum::<i64>() as i32)
            .collect();
        prop_assert_eq!(y.to_vec::<i32>().unwrap(), want);
    }

    #[test]
    fn strided_slice_1d_matches_python(n in 0i64..12, b in -14i64..14, e in -14i64..14, s in prop::sample::select(vec![-3i64, -2, -1, 1, 2, 3]), bm in 0i64..2, em in 0i64..2) {
        let x = iota(&[n]);
        let got = a::strided_slice(
            &x,
            &Tensor::vector(&[b]),
            &Tensor::vector(&[e]),
            &Tensor::vector(&[s]),
            a::StridedSliceMasks { begin_mask: bm, end_mask: em, ..Default::default() },
        ).unwrap();
        // Python's slice semantics (what StridedSlice implements for one axis).
        let norm = |v: i64, lo: i64, hi: i64| { let v = if v < 0 { v + n } else { v }; v.clamp(lo, hi) };
        let (lo, hi) = if s > 0 { (0, n) } else { (-1, n - 1) };
        let start = if bm == 1 { if s > 0 { 0 } else { n - 1 } } else { norm(b, lo, hi) };
        let stop = if em == 1 { if s > 0 { n } else { -1 } } else { norm(e, lo, hi) };
        let mut want = Vec::new();
        let mut i = start;
        while (s > 0 && i < stop) || (s < 0 && i > stop) {
            want.push(i as i32);
            i += s;
        }
        prop_assert_eq!(got.to_vec::<i32>().unwrap(), want);
    }

    #[test]
    fn split_then_concat_is_identity(dims in prop::collection::vec(1i64..5, 1..4), axis_seed in 0usize..4, parts in 1i64..4) {
        let axis = axis_seed % dims.len();
        let mut dims = dims;
        dims[axis] *= parts;
        let x = iota(&dims);
        let pieces = a::split(&Tensor::from(axis as i32), &x, parts).unwrap();
        let refs: Vec<&Tensor> = pieces.iter().collect();
        let back = if refs.len() == 1 { refs[0].clone() } else { a::concat_v2(&refs, &Tensor::from(axis as i32)).unwrap() };
        prop_assert_eq!(back, x);
    }

    #[test]
    fn tile_matches_naive(dims in prop::collection::vec(1i64..4, 0..4), mult_seed in prop::collection::vec(0i64..4, 4)) {
        let x = iota(&dims);
        let m: Vec<i64> = mult_seed[..dims.len()].to_vec();
        let y = a::tile(&x, &Tensor::vector(&m)).unwrap();
        let out: Vec<i64> = dims.iter().zip(&m).map(|(d, k)| d * k).collect();
        let st = strides_of(&dims);
        let want: Vec<i32> = indices(&out)
            .iter()
            .map(|o| o.iter().enumerate().map(|(i, &v)| (v % dims[i]) * st[i]).sum::<i64>() as i32)
            .collect();
        prop_assert_eq!(y.to_vec::<i32>().unwrap(), want);
    }

    #[test]
    fn pad_and_mirror_pad_match_naive(dims in prop::collection::vec(1i64..4, 1..5), p in prop::collection::vec(0i64..3, 10), sym in any::<bool>()) {
        let x = iota(&dims);
        let rank = dims.len();
        let pads: Vec<i64> = (0..rank).flat_map(|i| {
            let lim = if sym { dims[i] } else { dims[i] - 1 };
            [p[2 * i].min(lim), p[2 * i + 1].min(lim)]
        }).collect();
        let pt = Tensor::from_vec(pads.clone(), [rank as i64, 2]).unwrap();
        let out: Vec<i64> = (0..rank).map(|i| dims[i] + pads[2 * i] + pads[2 * i + 1]).collect();
        let st = strides_of(&dims);
        let zero = a::pad(&x, &pt).unwrap();
        let mirror = a::mirror_pad(&x, &pt, if sym { "SYMMETRIC" } else { "REFLECT" }).unwrap();
        let mut want_zero = Vec::new();
        let mut want_mirror = Vec::new();
        for o in indices(&out) {
            let mut inside = true;
            let mut off_z = 0;
            let mut off_m = 0;
            for i in 0..rank {
                let c = o[i] - pads[2 * i];
                let n = dims[i];
                if c < 0 || c >= n { inside = false; } else { off_z += c * st[i]; }
                let m = if c < 0 { if sym { -c - 1 } else { -c } } else if c >= n { if sym { 2 * n - 1 - c } else { 2 * n - 2 - c } } else { c };
                off_m += m * st[i];
            }
            want_zero.push(if inside { off_z as i32 } else { 0 });
            want_mirror.push(off_m as i32);
        }
        prop_assert_eq!(zero.to_vec::<i32>().unwrap(), want_zero);
        prop_assert_eq!(mirror.to_vec::<i32>().unwrap(), want_mirror);
    }

    #[test]
    fn gather_matches_naive(rows in 1i64..6, cols in 1i64..5, idx in prop::collection::vec(0i64..6, 0..8), axis in 0i32..2) {
        let x = iota(&[rows, cols]);
        let lim = if axis == 0 { rows } else { cols };
        let idx: Vec<i64> = idx.into_iter().map(|i| i % lim).collect();
        let g = a::gather_v2(&x, &Tensor::vector(&idx), &Tensor::from(axis), 0).unwrap();
        let want: Vec<i32> = if axis == 0 {
            idx.iter().flat_map(|&i| (0..cols).map(move |c| (i * cols + c) as i32)).collect()
        } else {
            (0..rows).flat_map(|r| idx.iter().map(move |&i| (r * cols + i) as i32)).collect()
        };
        prop_assert_eq!(g.to_vec::<i32>().unwrap(), want);
    }
}

#[test]
fn slice_of_leading_rows_shares_the_buffer() {
    let x = iota(&[4, 3]);
    let y = a::slice(
        &x,
        &Tensor::vector(&[1i32, 0]),
        &Tensor::vector(&[2i32, -1]),
    )
    .unwrap();
    assert!(y.shares_buffer_with(&x));
    assert_eq!(y.to_vec::<i32>().unwrap(), vec![3, 4, 5, 6, 7, 8]);
    let parts = a::unpack(&x, 4, 0).unwrap();
    assert!(parts.iter().all(|p| p.shares_buffer_with(&x)));
    let col = a::slice(
        &x,
        &Tensor::vector(&[0i32, 1]),
        &Tensor::vector(&[-1i32, 1]),
    )
    .unwrap();
    assert!(!col.shares_buffer_with(&x));
    assert_eq!(col.to_vec::<i32>().unwrap(), vec![1, 4, 7, 10]);
}

#[test]
fn large_transpose_uses_parallel_blocked_path_correctly() {
    // 1024 x 700 f32 (2.8 MiB): parallel chunks, bands of 16 rows, a ragged last band.
    let (r, c) = (1024i64, 700i64);
    let x = iota(&[r, c]);
    let y = a::transpose(&x, &Tensor::vector(&[1i32, 0])).unwrap();
    let v = y.to_vec::<i32>().unwrap();
    for j in [0, 1, 15, 16, 17, 350, 699] {
        for i in [0, 1, 511, 1023] {
            assert_eq!(v[(j * r + i) as usize], (i * c + j) as i32);
        }
    }
    let back = a::transpose(&y, &Tensor::vector(&[1i32, 0])).unwrap();
    assert_eq!(back, x);
}

#[test]
fn strings_move_like_numbers() {
    let s: Vec<TString> = (0..6).map(|i| TString::from(format!("s{i}"))).collect();
    let x = Tensor::from_vec(s, [2i64, 3]).unwrap();
    let y = a::transpose(&x, &Tensor::vector(&[1i32, 0])).unwrap();
    let got: Vec<String> = y
        .as_slice::<TString>()
        .unwrap()
        .iter()
        .map(|t| String::from_utf8_lossy(t.as_bytes()).into_owned())
        .collect();
    assert_eq!(got, ["s0", "s3", "s1", "s4", "s2", "s5"]);
    let p = a::pad(
        &x,
        &Tensor::from_vec(vec![0i32, 0, 1, 0], [2i64, 2]).unwrap(),
    )
    .unwrap();
    assert_eq!(p.shape().dim_sizes(), &[2, 4]);
    assert_eq!(p.as_slice::<TString>().unwrap()[0], TString::from(""));
}

#[test]
fn terabyte_requests_fail_with_tensorflows_text_without_allocating() {
    let e = a::fill(
        &Tensor::vector(&[1i64 << 20, 1 << 20]),
        &Tensor::from(1.0f32),
    )
    .unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted);
    assert_eq!(
        e.to_string(),
        "OOM when allocating tensor with shape[1048576,1048576] and type float on \
         /job:localhost/replica:0/task:0/device:CPU:0 by allocator mklcpu"
    );
    let e = a::fill(
        &Tensor::vector(&[1i64 << 40, 1 << 40]),
        &Tensor::from(1.0f32),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Shape [1099511627776,1099511627776] would have more than 2**63 - 1 elements"
    );
    let x = Tensor::new(DataType::FLOAT, TensorShape::new(&[2, 2]).unwrap()).unwrap();
    let e = a::tile(&x, &Tensor::vector(&[1i32 << 30, 1 << 30])).unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted);
    let e = a::range(
        &Tensor::from(0i64),
        &Tensor::from(1i64 << 40),
        &Tensor::from(1i64),
    )
    .unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted);
    let e = a::strided_slice(
        &x,
        &Tensor::vector(&[0i32; 40]),
        &Tensor::vector(&[1i32; 40]),
        &Tensor::vector(&[1i32; 40]),
        a::StridedSliceMasks {
            new_axis_mask: -1,
            ..Default::default()
        },
    );
    assert!(e.is_err() || e.unwrap().dims() <= 64);
}

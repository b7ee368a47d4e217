//! Convolutions against a naive reference: every dtype's path (gemm, f32 for the half types,
//! wrapping integers) over strides, dilations and paddings.

use proptest::prelude::*;
use tensorcast_core::Tensor;
use tensorcast_kernels::nn::{conv2d, Padding};

/// Naive NHWC convolution in i64 (the reference for integer and small-integer float inputs).
#[allow(
    clippy::too_many_arguments,
    reason = "a reference with the op's arguments"
)]
fn naive(
    x: &[i64],
    xd: [usize; 4],
    f: &[i64],
    fd: [usize; 4],
    s: (usize, usize),
    d: (usize, usize),
    pad: (usize, usize),
    out: (usize, usize),
) -> Vec<i64> {
    let groups = xd[3] / fd[2];
    let cout_g = fd[3] / groups;
    let mut res = Vec::new();
    for n in 0..xd[0] {
        for oy in 0..out.0 {
            for ox in 0..out.1 {
                for co in 0..fd[3] {
                    let g = co / cout_g;
                    let mut acc = 0i64;
                    for ky in 0..fd[0] {
                        for kx in 0..fd[1] {
                            let iy = (oy * s.0 + ky * d.0) as i64 - pad.0 as i64;
                            let ix = (ox * s.1 + kx * d.1) as i64 - pad.1 as i64;
                            if iy < 0 || ix < 0 || iy >= xd[1] as i64 || ix >= xd[2] as i64 {
                                continue;
                            }
                            for ci in 0..fd[2] {
                                let xv = x[((n * xd[1] + iy as usize) * xd[2] + ix as usize)
                                    * xd[3]
                                    + g * fd[2]
                                    + ci];
                                let fv = f[((ky * fd[1] + kx) * fd[2] + ci) * fd[3] + co];
                                acc += xv * fv;
                            }
                        }
                    }
                    res.push(acc);
                }
            }
        }
    }
    res
}

fn same(input: usize, k: usize, s: usize, d: usize) -> (usize, usize) {
    same_eff(input, (k - 1) * d + 1, s)
}

/// Input and filter values in -3..=3 from `seed` (products and sums stay exact in every
/// type the tests use), for an input of dims `xd` and a filter of dims `fd`.
fn small_ints(seed: u64, xd: [usize; 4], fd: [usize; 4]) -> (Vec<i64>, Vec<i64>) {
    let mut state = seed;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) % 7) as i64 - 3
    };
    let x: Vec<i64> = (0..xd.iter().product::<usize>()).map(|_| next()).collect();
    let f: Vec<i64> = (0..fd.iter().product::<usize>()).map(|_| next()).collect();
    (x, f)
}

/// An element type the small-integer cases run in: `naive`'s `i64` sums stay exact in it.
trait Small: tensorcast_core::Element + PartialEq + std::fmt::Debug {
    fn from_small(v: i64) -> Self;
}

macro_rules! small {
    ($($t:ty),*) => {$(
        impl Small for $t {
            fn from_small(v: i64) -> Self {
                v as $t
            }
        }
    )*};
}

small!(i32, f32, f64);

/// One small-integer case: input and filter values with their dims, and `naive`'s output.
struct Case<'a> {
    x: &'a [i64],
    xd: [usize; 4],
    f: &'a [i64],
    fd: [usize; 4],
    want: &'a [i64],
}

impl Case<'_> {
    /// Runs `conv` on the input and filter as `T` tensors and checks that it gives `want`;
    /// returns the output for further checks.
    fn check<T: Small>(
        &self,
        conv: impl Fn(&Tensor, &Tensor) -> tensorcast_core::Result<Tensor>,
    ) -> Result<Tensor, TestCaseError> {
        let values = |v: &[i64]| v.iter().map(|&v| T::from_small(v)).collect::<Vec<T>>();
        let tensor = |v: &[i64], dims: [usize; 4]| {
            Tensor::from_vec(values(v), dims.map(|d| d as i64).as_slice()).unwrap()
        };
        let got = conv(&tensor(self.x, self.xd), &tensor(self.f, self.fd)).unwrap();
        prop_assert_eq!(got.to_vec::<T>().unwrap(), values(self.want));
        Ok(got)
    }
}

/// SAME's output size and leading padding for a window spanning `eff` inputs at stride `s`.
fn same_eff(input: usize, eff: usize, s: usize) -> (usize, usize) {
    let out = input.div_ceil(s);
    (out, ((out - 1) * s + eff).saturating_sub(input) / 2)
}

/// One of the three paddings (`kind` 0: SAME, 1: VALID, 2: EXPLICIT with `pads` as top,
/// bottom, left, right) for an input of `h` x `w` under windows spanning `eff` rows and
/// columns (dilation included) at strides `s`: the padding, its explicit amounts, the
/// leading padding of each axis and the output size; `None` where VALID or EXPLICIT leave no
/// output.
#[allow(clippy::type_complexity, reason = "a test case's parts")]
fn padding_case(
    kind: usize,
    pads: [usize; 4],
    (h, w): (usize, usize),
    (eff_h, eff_w): (usize, usize),
    (sh, sw): (usize, usize),
) -> Option<(Padding, Vec<i64>, (usize, usize), (usize, usize))> {
    let out = |size: usize, eff: usize, s: usize| (size - eff) / s + 1;
    match kind {
        0 => {
            let (oh, ph) = same_eff(h, eff_h, sh);
            let (ow, pw) = same_eff(w, eff_w, sw);
            Some((Padding::Same, vec![], (ph, pw), (oh, ow)))
        }
        1 => (h >= eff_h && w >= eff_w).then(|| {
            (
                Padding::Valid,
                vec![],
                (0, 0),
                (out(h, eff_h, sh), out(w, eff_w, sw)),
            )
        }),
        _ => {
            let [t, b, l, r] = pads;
            let e = [0, 0, t, b, l, r, 0, 0].map(|v| v as i64).to_vec();
            (h + t + b >= eff_h && w + l + r >= eff_w).then(|| {
                (
                    Padding::Explicit,
                    e,
                    (t, l),
                    (out(h + t + b, eff_h, sh), out(w + l + r, eff_w, sw)),
                )
            })
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn conv2d_matches_naive_reference(
        n in 1usize..3, h in 1usize..9, w in 1usize..9, groups in 1usize..3, cin_g in 1usize..4,
        kh in 1usize..4, kw in 1usize..4, cout_g in 1usize..4, s in 1usize..3, d in 1usize..3,
        seed in 0u64..1000,
    ) {
        let (cin, cout) = (groups * cin_g, groups * cout_g);
        let xd = [n, h, w, cin];
        let fd = [kh, kw, cin_g, cout];
        let (x, f) = small_ints(seed, xd, fd);
        let (oh, ph) = same(h, kh, s, d);
        let (ow, pw) = same(w, kw, s, d);
        let want = naive(&x, xd, &f, fd, (s, s), (d, d), (ph, pw), (oh, ow));
        let strides = [1, s as i64, s as i64, 1];
        let dil = [1, d as i64, d as i64, 1];
        // int32 (wrapping integer engine) and float/double (gemm): exact on small integers.
        let case = Case { x: &x, xd, f: &f, fd, want: &want };
        let conv = |x: &Tensor, f: &Tensor| conv2d(x, f, (&strides, Padding::Same, &[], &dil));
        case.check::<i32>(conv)?;
        case.check::<f32>(conv)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    /// Stride-1 convolutions over every padding and height dilation: with 64 taps or more
    /// (`kh * kw * in`) the path that reads taps in place from padded row blocks, at sizes
    /// that split images into row bands, group small images and share the blocks out across
    /// threads; with fewer, the direct path.
    #[test]
    fn stride_one_conv2d_matches_naive_reference(
        n in 1usize..4, h in 1usize..40, w in 1usize..40, cin in 1usize..20, cout in 1usize..9,
        kh in 1usize..4, kw in 1usize..4, dh in 1usize..3, kind in 0usize..3,
        pads in proptest::array::uniform4(0usize..3), seed in 0u64..1000,
    ) {
        let xd = [n, h, w, cin];
        let fd = [kh, kw, cin, cout];
        let eff_h = (kh - 1) * dh + 1;
        let case = padding_case(kind, pads, (h, w), (eff_h, kw), (1, 1));
        prop_assume!(case.is_some());
        let Some((padding, explicit, (ph, pw), (oh, ow))) = case else { unreachable!() };
        let (x, f) = small_ints(seed, xd, fd);
        let want = naive(&x, xd, &f, fd, (1, 1), (dh, 1), (ph, pw), (oh, ow));
        let dil = [1, dh as i64, 1, 1];
        let case = Case { x: &x, xd, f: &f, fd, want: &want };
        let conv = |x: &Tensor, f: &Tensor| conv2d(x, f, (&[1, 1, 1, 1], padding, &explicit, &dil));
        let got = case.check::<f32>(conv)?;
        prop_assert_eq!(got.shape().dim_sizes(), &[n as i64, oh as i64, ow as i64, cout as i64][..]);
        case.check::<f64>(conv)?;
    }
}

#[test]
fn conv2d_mismatched_depths_give_tensorflow_text() {
    let x = Tensor::from_vec(vec![0.0f32; 3], [1i64, 1, 1, 3].as_slice()).unwrap();
    let w = Tensor::from_vec(vec![0.0f32; 8], [1i64, 1, 2, 4].as_slice()).unwrap();
    let ones = [1i64; 4];
    let e = conv2d(&x, &w, (&ones, Padding::Valid, &[], &ones)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "input depth must be evenly divisible by filter depth: 3 vs 2"
    );
}

#[test]
fn conv2d_input_of_depth_zero_is_an_error_not_a_division_by_zero() {
    // Found by the ops_nn fuzz body on random inputs.
    let x = Tensor::new(tensorcast_core::DataType::FLOAT, [1i64, 2, 2, 0].as_slice()).unwrap();
    let w = Tensor::from_vec(vec![0.0f32; 2], [1i64, 1, 1, 2].as_slice()).unwrap();
    let ones = [1i64; 4];
    assert!(conv2d(&x, &w, (&ones, Padding::Valid, &[], &ones)).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Depthwise convolutions over strides, dilations and every padding: channel counts below,
    /// at and past the 16-lane blocks (with a remainder), rows wide enough for the blocks of 8
    /// and 4 pixels between the padded borders, channel multipliers above 1 (the general loop).
    #[test]
    fn depthwise_matches_naive_reference(
        n in 1usize..3, h in 1usize..12, w in 1usize..40, cin in 1usize..40, mult in 1usize..3,
        k in 1usize..6, s in 1usize..3, d in 1usize..3, kind in 0usize..3,
        pads in proptest::array::uniform4(0usize..3), seed in 0u64..1000,
    ) {
        use tensorcast_kernels::nn::depthwise_conv2d_native;
        let xd = [n, h, w, cin];
        let fd = [k, k, cin, mult];
        let eff = (k - 1) * d + 1;
        let case = padding_case(kind, pads, (h, w), (eff, eff), (s, s));
        prop_assume!(case.is_some());
        let Some((padding, explicit, (ph, pw), (oh, ow))) = case else { unreachable!() };
        let (x, f) = small_ints(seed, xd, fd);
        // A depthwise filter [k, k, cin, mult] is a grouped one [k, k, 1, cin * mult].
        let want = naive(&x, xd, &f, [k, k, 1, cin * mult], (s, s), (d, d), (ph, pw), (oh, ow));
        let strides = [1, s as i64, s as i64, 1];
        let dil = [1, d as i64, d as i64, 1];
        let case = Case { x: &x, xd, f: &f, fd, want: &want };
        let conv = |x: &Tensor, f: &Tensor| depthwise_conv2d_native(x, f, (&strides, padding, &explicit, &dil));
        let got = case.check::<f32>(conv)?;
        prop_assert_eq!(got.shape().dim_sizes(), &[n as i64, oh as i64, ow as i64, (cin * mult) as i64][..]);
        // TensorFlow's `double` kernel has no dilations (its error, checked elsewhere).
        if d == 1 {
            case.check::<f64>(conv)?;
        }
    }
}

/// Each convolution path with an epilogue: the same bits as the epilogue run over the plain
/// convolution's output, every block whole pixels.
#[test]
fn an_epilogue_sees_whole_pixels_and_gives_the_bits_of_running_it_after() {
    use tensorcast_kernels::nn::{conv_with, depthwise_conv2d_native, ConvOp};
    // A per-channel step, so that a block starting mid-pixel would show.
    let epilogue = |cout: usize| {
        move |b: &mut [f32]| {
            assert_eq!(b.len() % cout, 0, "a block of whole pixels");
            for (i, v) in b.iter_mut().enumerate() {
                *v = (*v * (1.0 + (i % cout) as f32)).max(-0.5);
            }
        }
    };
    let data = |dims: [i64; 4]| {
        let n = dims.iter().product::<i64>() as usize;
        let v: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * 3.0).collect();
        Tensor::from_vec(v, dims.as_slice()).unwrap()
    };
    let bits = |t: &Tensor| -> Vec<u32> {
        t.to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect()
    };
    // (input, filter, stride, padding): few taps, taps in place, im2col, 1x1 of several blocks,
    // grouped, Winograd.
    let cases: [([i64; 4], [i64; 4], i64, Padding); 6] = [
        ([2, 17, 15, 3], [3, 3, 3, 5], 2, Padding::Same),
        ([2, 9, 11, 8], [3, 3, 8, 6], 1, Padding::Same),
        ([2, 9, 11, 8], [3, 3, 8, 6], 2, Padding::Valid),
        ([3, 90, 80, 5], [1, 1, 5, 7], 1, Padding::Valid),
        ([1, 9, 8, 8], [3, 3, 4, 6], 1, Padding::Valid),
        ([2, 25, 23, 17], [3, 3, 17, 18], 1, Padding::Same),
    ];
    for (xd, fd, s, pad) in cases {
        let (x, f) = (data(xd), data(fd));
        let st = [1, s, s, 1];
        let ones = [1i64; 4];
        let plain = conv2d(&x, &f, (&st, pad, &[], &ones)).unwrap();
        let cout = fd[3] as usize;
        let e = epilogue(cout);
        let mut want = plain.to_vec::<f32>().unwrap();
        e(&mut want);
        let got = conv_with(ConvOp::Conv2D, &x, &f, (&st, pad, &[], &ones), Some(&e)).unwrap();
        let want_bits: Vec<u32> = want.iter().map(|v| v.to_bits()).collect();
        assert_eq!(bits(&got), want_bits, "{xd:?} {fd:?}");
    }
    let (x, f) = (data([2, 13, 12, 4]), data([3, 3, 4, 2]));
    let (st, ones) = ([1i64, 2, 2, 1], [1i64; 4]);
    let plain = depthwise_conv2d_native(&x, &f, (&st, Padding::Same, &[], &ones)).unwrap();
    let e = epilogue(8);
    let mut want = plain.to_vec::<f32>().unwrap();
    e(&mut want);
    let dw = ConvOp::DepthwiseConv2dNative;
    let got = conv_with(dw, &x, &f, (&st, Padding::Same, &[], &ones), Some(&e)).unwrap();
    assert_eq!(
        bits(&got),
        want.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    // Only `float` outputs take an epilogue.
    let xd = Tensor::from_vec(vec![1.0f64; 4], [1i64, 2, 2, 1].as_slice()).unwrap();
    let fd = Tensor::from_vec(vec![1.0f64], [1i64, 1, 1, 1].as_slice()).unwrap();
    let err = conv_with(
        ConvOp::Conv2D,
        &xd,
        &fd,
        (&ones, Padding::Valid, &[], &ones),
        Some(&epilogue(1)),
    );
    assert!(err.unwrap_err().to_string().contains("epilogue"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// 3x3 stride-1 `float` convolutions with 16 channels or more in and out and 1,024 output
    /// pixels or more take the Winograd path (F(2x2, 3x3)); on small integers its transforms'
    /// halves and sums are exact, so it gives the direct sums' values: over every padding, odd
    /// output sizes (tiles past the edge) and channel counts past the 16-lane blocks.
    #[test]
    fn winograd_conv2d_matches_naive_reference_on_small_integers(
        n in 1usize..3, h in 22usize..40, w in 22usize..40, cin in 16usize..23,
        cout in 16usize..21, kind in 0usize..3, pads in proptest::array::uniform4(0usize..3),
        seed in 0u64..1000,
    ) {
        let xd = [n, h, w, cin];
        let fd = [3, 3, cin, cout];
        let case = padding_case(kind, pads, (h, w), (3, 3), (1, 1));
        prop_assume!(case.is_some());
        let Some((padding, explicit, (ph, pw), (oh, ow))) = case else { unreachable!() };
        prop_assume!(n * oh * ow >= 1024);
        let (x, f) = small_ints(seed, xd, fd);
        let want = naive(&x, xd, &f, fd, (1, 1), (1, 1), (ph, pw), (oh, ow));
        let case = Case { x: &x, xd, f: &f, fd, want: &want };
        let ones = [1i64; 4];
        let conv = |x: &Tensor, f: &Tensor| conv2d(x, f, (&ones, padding, &explicit, &ones));
        case.check::<f32>(conv)?;
    }
}

/// `f64` sums of a 3x3 stride-1 SAME convolution, and per output `S = sum |x| |w|` over its
/// taps and `T = sum over channels of (largest |x| of the channel in the output's 4x4 input
/// tile) * (sum of the channel's 9 |w|)`, the Winograd bound's scale.
fn reference_3x3(x: &[f32], xd: [usize; 4], f: &[f32], cout: usize) -> Vec<(f64, f64, f64)> {
    let [n, h, w, cin] = xd;
    let mut res = Vec::with_capacity(n * h * w * cout);
    let at = |b: usize, iy: isize, ix: isize, c: usize| -> Option<f64> {
        (iy >= 0 && ix >= 0 && (iy as usize) < h && (ix as usize) < w)
            .then(|| f64::from(x[((b * h + iy as usize) * w + ix as usize) * cin + c]))
    };
    for b in 0..n {
        for oy in 0..h {
            for ox in 0..w {
                // The tile's first padded pixel (SAME pads one before).
                let (ty, tx) = ((oy / 2 * 2) as isize - 1, (ox / 2 * 2) as isize - 1);
                for k in 0..cout {
                    let (mut y, mut s, mut t) = (0.0, 0.0, 0.0);
                    for c in 0..cin {
                        let mut wsum = 0.0;
                        for ky in 0..3 {
                            for kx in 0..3 {
                                let wv = f64::from(f[((ky * 3 + kx) * cin + c) * cout + k]);
                                wsum += wv.abs();
                                let xv = at(b, (oy + ky) as isize - 1, (ox + kx) as isize - 1, c);
                                if let Some(xv) = xv {
                                    y += xv * wv;
                                    s += (xv * wv).abs();
                                }
                            }
                        }
                        let tile_max = (0..16)
                            .filter_map(|q| at(b, ty + q / 4, tx + q % 4, c))
                            .fold(0.0f64, |m, v| m.max(v.abs()));
                        t += tile_max * wsum;
                    }
                    res.push((y, s, t));
                }
            }
        }
    }
    res
}

/// The Winograd path on floating-point data, against `f64` sums: within the direct sums' own
/// bound (`2 K eps S`) on inputs of one magnitude, within the bound its docs state
/// (`2 (K + 360) eps T`) when a tile mixes magnitudes; a NaN or an infinity reaches only the
/// outputs whose taps read it, as in TensorFlow's direct sums, and so does one in the filter.
#[test]
fn winograd_conv2d_stays_within_its_stated_bound_and_keeps_nan_and_infinity_where_they_belong() {
    let (xd, cout) = ([2usize, 25, 23, 20], 18usize);
    let [_, h, w, cin] = xd;
    let mut state = 7u64;
    let mut uniform = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    };
    let mut x: Vec<f32> = (0..xd.iter().product::<usize>())
        .map(|_| uniform())
        .collect();
    let mut f: Vec<f32> = (0..9 * cin * cout).map(|_| uniform()).collect();
    let k = (9 * cin) as f64;
    let eps = f64::from(f32::EPSILON);
    let run = |x: &[f32], f: &[f32]| {
        let xt = Tensor::from_vec(x.to_vec(), xd.map(|d| d as i64).as_slice()).unwrap();
        let ft = Tensor::from_vec(f.to_vec(), [3i64, 3, cin as i64, cout as i64].as_slice());
        let ones = [1i64; 4];
        let y = conv2d(&xt, &ft.unwrap(), (&ones, Padding::Same, &[], &ones)).unwrap();
        y.to_vec::<f32>().unwrap()
    };
    // One magnitude: the direct sums' bound, with room to spare.
    let got = run(&x, &f);
    let mut worst = 0.0f64;
    for (g, (y, s, _)) in got.iter().zip(reference_3x3(&x, xd, &f, cout)) {
        worst = worst.max((f64::from(*g) - y).abs() / (2.0 * k * eps * s));
    }
    assert!(worst <= 1.0, "{worst} of the direct sums' bound");
    // Mixed magnitudes in a tile: the stated bound.
    for i in (0..x.len()).step_by(97) {
        x[i] *= 1e6;
    }
    let got = run(&x, &f);
    for (i, (g, (y, _, t))) in got.iter().zip(reference_3x3(&x, xd, &f, cout)).enumerate() {
        let d = (f64::from(*g) - y).abs();
        assert!(d <= 2.0 * (k + 360.0) * eps * t, "output {i}: {g} vs {y}");
    }
    // A NaN and an infinity in the input, far apart: the outputs whose taps read them are
    // NaN or infinite as the f64 sums are; the others stay within the bound.
    x[(3 * w + 4) * cin + 2] = f32::NAN;
    x[((h + 20) * w + 17) * cin + 9] = f32::INFINITY;
    let check = |got: &[f32], x: &[f32], f: &[f32]| {
        let mut special = 0;
        for (i, (g, (y, _, t))) in got.iter().zip(reference_3x3(x, xd, f, cout)).enumerate() {
            if y.is_nan() {
                special += 1;
                assert!(g.is_nan(), "output {i}: {g} vs NaN");
            } else if y.is_infinite() {
                special += 1;
                assert_eq!(f64::from(*g), y, "output {i}");
            } else {
                let d = (f64::from(*g) - y).abs();
                assert!(d <= 2.0 * (k + 360.0) * eps * t, "output {i}: {g} vs {y}");
            }
        }
        assert!(special > 0);
    };
    check(&run(&x, &f), &x, &f);
    // An infinity in the filter's centre tap (which never reads the padding): every output
    // of that channel.
    let x: Vec<f32> = x
        .iter()
        .map(|v| if v.is_finite() { *v } else { 0.5 })
        .collect();
    f[(4 * cin + 3) * cout + 5] = f32::NEG_INFINITY;
    check(&run(&x, &f), &x, &f);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    /// Depthwise convolutions with fewer than 16 channels, one filter each and stride 1 along
    /// the row (run flat: 16 consecutive elements of a row, whatever their channels, to a
    /// vector) give, on values that round, the bits of sums taken in `(ky, kx)` order over the
    /// taps inside the input, as the other paths take them.
    #[test]
    fn depthwise_with_few_channels_sums_its_taps_in_order(
        h in 1usize..9, w in 1usize..70, cin in 1usize..16, k in 1usize..6, sh in 1usize..3,
        d in 1usize..3, kind in 0usize..3, pads in proptest::array::uniform4(0usize..3),
        seed in 0u64..1000,
    ) {
        use tensorcast_kernels::nn::depthwise_conv2d_native;
        let eff = (k - 1) * d + 1;
        let case = padding_case(kind, pads, (h, w), (eff, eff), (sh, 1));
        prop_assume!(case.is_some());
        let Some((padding, explicit, (ph, pw), (oh, ow))) = case else { unreachable!() };
        let value = |i: usize| ((i as f64 * 0.731 + seed as f64).sin() * 3.0) as f32;
        let x: Vec<f32> = (0..h * w * cin).map(value).collect();
        let f: Vec<f32> = (0..k * k * cin).map(|i| value(i + 7919)).collect();
        let mut want = vec![0f32; oh * ow * cin];
        for oy in 0..oh {
            for ox in 0..ow {
                for c in 0..cin {
                    let mut a = 0f32;
                    for ky in 0..k {
                        for kx in 0..k {
                            let iy = (oy * sh + ky * d) as i64 - ph as i64;
                            let ix = (ox + kx * d) as i64 - pw as i64;
                            if iy < 0 || ix < 0 || iy >= h as i64 || ix >= w as i64 {
                                continue;
                            }
                            let xi = (iy as usize * w + ix as usize) * cin + c;
                            a += x[xi] * f[(ky * k + kx) * cin + c];
                        }
                    }
                    want[(oy * ow + ox) * cin + c] = a;
                }
            }
        }
        let xt = Tensor::from_vec(x, [1i64, h as i64, w as i64, cin as i64].as_slice()).unwrap();
        let ft = Tensor::from_vec(f, [k as i64, k as i64, cin as i64, 1].as_slice()).unwrap();
        let strides = [1, sh as i64, 1, 1];
        let dil = [1, d as i64, d as i64, 1];
        let got = depthwise_conv2d_native(&xt, &ft, (&strides, padding, &explicit, &dil)).unwrap();
        let bits = |v: &[f32]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        prop_assert_eq!(bits(got.as_slice::<f32>().unwrap()), bits(&want));
    }
}

//! Summary statistics of a numeric tensor (min, max, mean, NaN count) and number formatting.
//!
//! Floats of every width (half, bfloat16, the float8 and float4 kinds, float, double) are
//! widened to `f64`, which holds each of them exactly; min and max skip NaNs and the mean is
//! over the non-NaN elements (numpy's `nanmin`/`nanmax`/`nanmean`). Integers, quantized
//! integers and bool (as 0/1) are exact (`i128`). Complex tensors are summarised by their
//! magnitudes `|z|` (an element is NaN when either part is), and say so (`of: "abs"`).

use serde_json::{json, Value};
use tensorcast::{DataType, Tensor};

use tensorcast::buffer::simd::Kernel;

use super::decode::{Chunk, Decoder, Kind, CHUNK_ELEMS};
use super::table::Align;

/// A min or max: exact for integers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    /// A floating-point value.
    Float(f64),
    /// An exact integer.
    Int(i128),
}

/// What the statistics are of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Of {
    /// The values themselves.
    Value,
    /// The magnitudes `|z|` of complex values.
    Abs,
}

/// Statistics of a numeric tensor with at least one element.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stats {
    /// Values or magnitudes.
    pub of: Of,
    /// Smallest non-NaN value (NaN when every element is NaN).
    pub min: Num,
    /// Largest non-NaN value.
    pub max: Num,
    /// Mean of the non-NaN values.
    pub mean: f64,
    /// Number of NaN elements.
    pub nan_count: u64,
}

/// Computes the statistics of `tensor`, calling `progress(bytes)` after each chunk; `None`
/// for non-numeric dtypes and empty tensors.
pub(crate) fn compute(tensor: &Tensor, progress: &mut dyn FnMut(u64)) -> Option<Stats> {
    let mut acc = Accum::of(tensor.dtype())?;
    acc.add(tensor, progress);
    acc.finish()
}

/// The statistics of many tensors of one numeric dtype together (the records of a file, say):
/// elements are added tensor by tensor, accumulators merge, and [`Accum::finish`] gives the
/// [`Stats`] of all the elements added.
#[derive(Debug, Clone)]
pub(crate) struct Accum {
    kind: Kind,
    fmin: f64,
    fmax: f64,
    fsum: f64,
    imin: i128,
    imax: i128,
    isum: i128,
    /// Non-NaN elements.
    count: u64,
    nan: u64,
}

impl Accum {
    /// An empty accumulator for elements of `dtype`; `None` when it is not numeric.
    pub(crate) fn of(dtype: DataType) -> Option<Self> {
        Some(Self {
            kind: super::decode::kind(dtype)?,
            fmin: f64::INFINITY,
            fmax: f64::NEG_INFINITY,
            fsum: 0.0,
            imin: i128::MAX,
            imax: i128::MIN,
            isum: 0,
            count: 0,
            nan: 0,
        })
    }

    /// Adds the elements of `tensor` (of the accumulator's kind of dtype), calling
    /// `progress(bytes)` after each chunk.
    pub(crate) fn add(&mut self, tensor: &Tensor, progress: &mut dyn FnMut(u64)) {
        if tensor.num_elements() <= 0 {
            return;
        }
        if tensor.dtype() == DataType::FLOAT {
            if let Ok(bytes) = tensor.tensor_data() {
                // The common case, without widening each chunk into a vector first.
                let n = (tensor.num_elements() as usize).min(bytes.len() / 4);
                for part in bytes[..n * 4].chunks(CHUNK_ELEMS * 4) {
                    let l = f32_lanes(part);
                    self.add_lanes(&l, part.len() as u64 / 4);
                    progress(part.len() as u64);
                }
                return;
            }
        }
        let Some(mut dec) = Decoder::new(tensor) else {
            return;
        };
        let elem_bytes = dec.element_bytes() as u64;
        let mut chunk = Chunk::Float(Vec::new());
        loop {
            let n = dec.next_chunk(CHUNK_ELEMS, &mut chunk);
            if n == 0 {
                break;
            }
            match &chunk {
                Chunk::Float(v) => self.add_lanes(&float_lanes(v), v.len() as u64),
                Chunk::Int(v) => {
                    for &x in v {
                        self.imin = self.imin.min(x);
                        self.imax = self.imax.max(x);
                        self.isum += x;
                    }
                    self.count += v.len() as u64;
                }
                Chunk::Complex(v) => {
                    let mut s = 0.0;
                    for &(re, im) in v {
                        let a = re.hypot(im);
                        if re.is_nan() || im.is_nan() {
                            self.nan += 1;
                        } else {
                            self.fmin = self.fmin.min(a);
                            self.fmax = self.fmax.max(a);
                            s += a;
                            self.count += 1;
                        }
                    }
                    self.fsum += s;
                }
            }
            progress(n as u64 * elem_bytes);
        }
    }

    fn add_lanes(&mut self, l: &Lanes, n: u64) {
        self.fmin = self.fmin.min(l.min);
        self.fmax = self.fmax.max(l.max);
        self.fsum += l.sum;
        self.nan += l.nans;
        self.count += n - l.nans;
    }

    /// Adds what `other` (of the same kind) accumulated.
    pub(crate) fn merge(&mut self, other: &Accum) {
        self.fmin = self.fmin.min(other.fmin);
        self.fmax = self.fmax.max(other.fmax);
        self.fsum += other.fsum;
        self.imin = self.imin.min(other.imin);
        self.imax = self.imax.max(other.imax);
        self.isum += other.isum;
        self.count += other.count;
        self.nan += other.nan;
    }

    /// The statistics of the elements added; `None` when none were.
    pub(crate) fn finish(&self) -> Option<Stats> {
        if self.count == 0 && self.nan == 0 {
            return None;
        }
        Some(match self.kind {
            Kind::Int => Stats {
                of: Of::Value,
                min: Num::Int(self.imin),
                max: Num::Int(self.imax),
                mean: self.isum as f64 / self.count as f64,
                nan_count: 0,
            },
            kind => {
                let (min, max, mean) = if self.count == 0 {
                    (f64::NAN, f64::NAN, f64::NAN)
                } else {
                    (self.fmin, self.fmax, self.fsum / self.count as f64)
                };
                Stats {
                    of: if kind == Kind::Complex {
                        Of::Abs
                    } else {
                        Of::Value
                    },
                    min: Num::Float(min),
                    max: Num::Float(max),
                    mean,
                    nan_count: self.nan,
                }
            }
        })
    }
}

/// [`Lanes`] of little-endian `f32` bytes (whole elements, any alignment): [`float_lanes`]
/// without widening into a vector first; the same results (min and max are exact either way,
/// and the sums are of the same `f64` values in the same lanes). Compiled for AVX2 where the
/// CPU has it (the same arithmetic, wider registers).
fn f32_lanes(bytes: &[u8]) -> Lanes {
    // NaN-free data (almost all) in one pass of min, max and add; a NaN shows in a lane's
    // sum, and then the chunk is done again counting and skipping them.
    let fast = tensorcast::buffer::simd::vectorize(F32Lanes(bytes));
    if fast.sum.is_nan() {
        f32_lanes_nan(bytes)
    } else {
        fast
    }
}

/// [`f32_lanes_no_nan`] as a [`Kernel`] (certain to be compiled for AVX2 where the CPU has it).
struct F32Lanes<'a>(&'a [u8]);

impl Kernel for F32Lanes<'_> {
    type Output = Lanes;
    #[inline(always)]
    fn run(self) -> Lanes {
        f32_lanes_no_nan(self.0)
    }
}

/// [`float_lanes_inline`] as a [`Kernel`].
struct FloatLanes<'a>(&'a [f64]);

impl Kernel for FloatLanes<'_> {
    type Output = Lanes;
    #[inline(always)]
    fn run(self) -> Lanes {
        float_lanes_inline(self.0)
    }
}

/// The 8 lanes of `f32`s a block of 32 bytes holds.
#[inline(always)]
fn f32_block(b: &[u8]) -> [f32; 8] {
    // Whole-array indexing: a vector load, not a byte shuffle per element.
    std::array::from_fn(|i| {
        f32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
    })
}

/// [`f32_lanes`] of bytes without NaNs (with one, its sum is NaN and the rest undefined).
#[inline(always)]
fn f32_lanes_no_nan(bytes: &[u8]) -> Lanes {
    const W: usize = 8;
    let mut min = [f32::INFINITY; W];
    let mut max = [f32::NEG_INFINITY; W];
    let mut sum = [0.0f64; W];
    let mut blocks = bytes.chunks_exact(4 * W);
    for b in &mut blocks {
        let x = f32_block(b);
        for i in 0..W {
            // Plain comparisons (one `minps`/`maxps` each): without NaNs they are `min` and
            // `max`, and a NaN is caught by the sum.
            min[i] = if x[i] < min[i] { x[i] } else { min[i] };
            max[i] = if x[i] > max[i] { x[i] } else { max[i] };
            sum[i] += f64::from(x[i]);
        }
    }
    for (i, e) in blocks.remainder().chunks_exact(4).enumerate() {
        let x = f32::from_le_bytes([e[0], e[1], e[2], e[3]]);
        min[i] = min[i].min(x);
        max[i] = max[i].max(x);
        sum[i] += f64::from(x);
    }
    Lanes {
        min: f64::from(min.iter().copied().fold(f32::INFINITY, f32::min)),
        max: f64::from(max.iter().copied().fold(f32::NEG_INFINITY, f32::max)),
        sum: sum.iter().sum(),
        nans: 0,
    }
}

/// [`f32_lanes`] of bytes that may hold NaNs: counted, and left out of the min, max and sum.
fn f32_lanes_nan(bytes: &[u8]) -> Lanes {
    const W: usize = 8;
    let mut min = [f32::INFINITY; W];
    let mut max = [f32::NEG_INFINITY; W];
    let mut sum = [0.0f64; W];
    let mut nans = [0u64; W];
    let mut step = |i: usize, x: f32| {
        let is_nan = x.is_nan();
        nans[i] += u64::from(is_nan);
        min[i] = min[i].min(x);
        max[i] = max[i].max(x);
        sum[i] += if is_nan { 0.0 } else { f64::from(x) };
    };
    let mut blocks = bytes.chunks_exact(4 * W);
    for b in &mut blocks {
        for (i, x) in f32_block(b).into_iter().enumerate() {
            step(i, x);
        }
    }
    for (i, e) in blocks.remainder().chunks_exact(4).enumerate() {
        step(i, f32::from_le_bytes([e[0], e[1], e[2], e[3]]));
    }
    Lanes {
        min: f64::from(min.iter().copied().fold(f32::INFINITY, f32::min)),
        max: f64::from(max.iter().copied().fold(f32::NEG_INFINITY, f32::max)),
        sum: sum.iter().sum(),
        nans: nans.iter().sum(),
    }
}

/// Min, max and sum of the non-NaN values of a chunk, and its NaN count.
struct Lanes {
    min: f64,
    max: f64,
    sum: f64,
    nans: u64,
}

/// [`Lanes`] of `v`, over 8 independent accumulators so that the loop vectorises instead of
/// waiting on one serial chain of additions; branch-free (`f64::min`/`max` ignore a NaN
/// operand, and a NaN adds 0 to the sum). Compiled for AVX2 where the CPU has it.
fn float_lanes(v: &[f64]) -> Lanes {
    tensorcast::buffer::simd::vectorize(FloatLanes(v))
}

#[inline(always)]
fn float_lanes_inline(v: &[f64]) -> Lanes {
    const W: usize = 8;
    let mut min = [f64::INFINITY; W];
    let mut max = [f64::NEG_INFINITY; W];
    let mut sum = [0.0f64; W];
    let mut nans = [0u64; W];
    let mut step = |i: usize, x: f64| {
        let is_nan = x.is_nan();
        nans[i] += u64::from(is_nan);
        min[i] = min[i].min(x);
        max[i] = max[i].max(x);
        sum[i] += if is_nan { 0.0 } else { x };
    };
    let mut blocks = v.chunks_exact(W);
    for b in &mut blocks {
        for (i, &x) in b.iter().enumerate() {
            step(i, x);
        }
    }
    for (i, &x) in blocks.remainder().iter().enumerate() {
        step(i, x);
    }
    Lanes {
        min: min.iter().copied().fold(f64::INFINITY, f64::min),
        max: max.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        sum: sum.iter().sum(),
        nans: nans.iter().sum(),
    }
}

/// True when values of `dtype` (or their magnitudes) are exactly `f32`s: printed as `f32`.
fn narrow(dtype: DataType) -> bool {
    !matches!(dtype, DataType::DOUBLE | DataType::COMPLEX128)
}

/// Shortest text that reads back as `x` (as `f32` when `as_f32`), in exponent form for very
/// large and very small magnitudes.
pub(crate) fn fmt_float(x: f64, as_f32: bool) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let a = x.abs();
    let exp = a != 0.0 && !(1e-4..1e7).contains(&a);
    match (as_f32, exp) {
        (true, true) => format!("{:e}", x as f32),
        (true, false) => format!("{}", x as f32),
        (false, true) => format!("{x:e}"),
        (false, false) => format!("{x}"),
    }
}

/// `x` rounded to 7 significant digits, shortest form (for means).
pub(crate) fn fmt_mean(x: f64) -> String {
    let rounded: f64 = format!("{x:.6e}").parse().unwrap_or(x);
    fmt_float(rounded, false)
}

/// A min or max as text for `dtype`.
pub(crate) fn fmt_num(n: Num, dtype: DataType) -> String {
    match n {
        Num::Int(i) => i.to_string(),
        Num::Float(f) => fmt_float(f, narrow(dtype)),
    }
}

/// A float as JSON: a number when finite (shortest `f32` text for narrow dtypes), else the
/// string `"nan"`, `"inf"` or `"-inf"` (JSON has no non-finite numbers).
pub(crate) fn json_float(x: f64, as_f32: bool) -> Value {
    if !x.is_finite() {
        return Value::String(fmt_float(x, false));
    }
    let v = if as_f32 {
        format!("{}", x as f32).parse().unwrap_or(x)
    } else {
        x
    };
    json!(v)
}

/// A min or max as JSON.
pub(crate) fn json_num(n: Num, dtype: DataType) -> Value {
    match n {
        // Elements are at most 64 bits wide, so every value fits an i64 or a u64.
        Num::Int(i) => match (i64::try_from(i), u64::try_from(i)) {
            (Ok(v), _) => json!(v),
            (_, Ok(v)) => json!(v),
            _ => Value::String(i.to_string()),
        },
        Num::Float(f) => json_float(f, narrow(dtype)),
    }
}

impl Stats {
    /// The columns of [`Stats::cells`] in a table.
    pub(crate) const COLUMNS: [(&'static str, Align); 4] = [
        ("min", Align::Right),
        ("max", Align::Right),
        ("mean", Align::Right),
        ("NaN", Align::Right),
    ];

    /// The min, max, mean and NaN-count cells of a table row (`|z| ` before the magnitudes of
    /// complex values; `-` where there are no statistics).
    pub(crate) fn cells(stats: Option<&Stats>, dtype: DataType) -> [String; 4] {
        match stats {
            Some(st) => {
                let abs = if st.of == Of::Abs { "|z| " } else { "" };
                [
                    format!("{abs}{}", fmt_num(st.min, dtype)),
                    format!("{abs}{}", fmt_num(st.max, dtype)),
                    format!("{abs}{}", fmt_mean(st.mean)),
                    st.nan_count.to_string(),
                ]
            }
            None => std::array::from_fn(|_| "-".to_string()),
        }
    }

    /// The statistics as a JSON object.
    pub(crate) fn to_json(&self, dtype: DataType) -> Value {
        json!({
            "of": match self.of { Of::Value => "value", Of::Abs => "abs" },
            "min": json_num(self.min, dtype),
            "max": json_num(self.max, dtype),
            "mean": json_float(self.mean, false),
            "nan_count": self.nan_count,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tensorcast::{bf16, Complex64};

    fn stats(t: &Tensor) -> Stats {
        compute(t, &mut |_| {}).unwrap()
    }

    #[test]
    fn float_stats_skip_nans() {
        let s = stats(&Tensor::vector(&[1.0f32, f32::NAN, -3.0, 4.0]));
        assert_eq!(s.min, Num::Float(-3.0));
        assert_eq!(s.max, Num::Float(4.0));
        assert!((s.mean - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.nan_count, 1);
    }

    #[test]
    fn lanes_agree_with_a_plain_loop_across_blocks_and_remainder() {
        let v: Vec<f64> = (0..37)
            .map(|i| match i % 7 {
                3 => f64::NAN,
                _ => (i as f64 - 18.0) * 0.5,
            })
            .collect();
        let l = float_lanes(&v);
        let ok: Vec<f64> = v.iter().copied().filter(|x| !x.is_nan()).collect();
        assert_eq!(l.nans, 5);
        assert_eq!(l.min, -9.0);
        assert_eq!(l.max, 9.0);
        assert_eq!(l.sum, ok.iter().sum::<f64>());
    }

    #[test]
    fn float32_lanes_agree_with_the_widened_ones() {
        let v: Vec<f32> = (0..1001)
            .map(|i| match i % 11 {
                4 => f32::NAN,
                _ => (i as f32 - 500.0) * 0.25,
            })
            .collect();
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let wide: Vec<f64> = v.iter().map(|&x| f64::from(x)).collect();
        let (a, b) = (f32_lanes(&bytes), float_lanes(&wide));
        assert_eq!((a.min, a.max, a.sum, a.nans), (b.min, b.max, b.sum, b.nans));
        // Without NaNs, the one-pass path: the same as the careful one.
        let clean: Vec<u8> = v
            .iter()
            .filter(|x| !x.is_nan())
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let (a, b) = (f32_lanes(&clean), f32_lanes_nan(&clean));
        assert_eq!((a.min, a.max, a.sum, a.nans), (b.min, b.max, b.sum, b.nans));
        let mut acc = Accum::of(DataType::FLOAT).unwrap();
        let t = Tensor::vector(&v);
        acc.add(&t, &mut |_| {});
        acc.merge(&acc.clone());
        let s = acc.finish().unwrap();
        assert_eq!(s.nan_count, 2 * 91);
        assert_eq!(s.min, Num::Float(-125.0));
    }

    #[test]
    fn all_nan_gives_nan_stats() {
        let s = stats(&Tensor::vector(&[bf16::NAN, bf16::NAN]));
        assert!(matches!(s.min, Num::Float(x) if x.is_nan()));
        assert_eq!(s.nan_count, 2);
    }

    #[test]
    fn int_stats_are_exact() {
        let s = stats(&Tensor::vector(&[i64::MAX, i64::MAX - 1]));
        assert_eq!(s.min, Num::Int(i128::from(i64::MAX) - 1));
        assert_eq!(s.max, Num::Int(i128::from(i64::MAX)));
        let s = stats(&Tensor::vector(&[true, false, true, true]));
        assert_eq!(s.mean, 0.75);
    }

    #[test]
    fn complex_stats_are_of_magnitudes() {
        let s = stats(&Tensor::vector(&[
            Complex64::new(3.0, 4.0),
            Complex64::new(0.0, 1.0),
        ]));
        assert_eq!(s.of, Of::Abs);
        assert_eq!(s.max, Num::Float(5.0));
        assert_eq!(s.min, Num::Float(1.0));
    }

    #[test]
    fn empty_and_string_tensors_have_no_stats() {
        assert!(compute(&Tensor::vector::<f32>(&[]), &mut |_| {}).is_none());
        assert!(compute(&Tensor::from("x"), &mut |_| {}).is_none());
    }

    #[test]
    fn floats_print_shortest() {
        assert_eq!(fmt_float(0.1f32 as f64, true), "0.1");
        assert_eq!(fmt_float(0.1, false), "0.1");
        assert_eq!(fmt_float(1e20, false), "1e20");
        assert_eq!(fmt_float(-2.5e-7, false), "-2.5e-7");
        assert_eq!(fmt_mean(2.0 / 3.0), "0.6666667");
        assert_eq!(json_float(0.1f32 as f64, true), json!(0.1));
        assert_eq!(json_float(f64::NAN, true), json!("nan"));
    }
}

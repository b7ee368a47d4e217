//! `MaxPool` and `AvgPool` (NHWC, SAME / VALID), with their shape functions.

use tensorcast_core::dtypes;
use tensorcast_core::{
    bf16, f16, DataType, Element, Error, PartialTensorShape, Result, Tensor, TensorShape,
};

use super::window::{axis, axis_shape, Axis, AxisAttrs, Padding};
use crate::chunks::for_each_chunk;
use crate::linalg::util::{data, not_in_type_list, onednn, output};

const MAX_TYPES: &[DataType] =
    dtypes!("half, bfloat16, float, double, int32, int64, uint8, int16, int8, uint16, qint8");
const AVG_TYPES: &[DataType] = crate::type_lists::FLOATING_POINT_TYPES;

const MAX_OPDEF_AFTER: &str = "; attr=ksize:list(int),min=4; attr=strides:list(int),min=4; \
attr=padding:string,allowed=[\"SAME\", \"VALID\", \"EXPLICIT\"]; attr=explicit_paddings:list(int),default=[]; \
attr=data_format:string,default=\"NHWC\",allowed=[\"NHWC\", \"NCHW\", \"NCHW_VECT_C\"]";
const AVG_OPDEF_BEFORE: &str = "attr=ksize:list(int),min=4; attr=strides:list(int),min=4; \
attr=padding:string,allowed=[\"SAME\", \"VALID\"]; attr=data_format:string,default=\"NHWC\",allowed=[\"NHWC\", \"NCHW\"]; ";

fn list(v: &[i64]) -> String {
    v.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
}

/// Checks a pool's arguments; its two spatial axes.
/// A checked pooling: the two spatial axes, the input's batch and depth, the output's shape.
struct Pooling {
    h: Axis,
    w: Axis,
    batch: usize,
    depth: usize,
    shape: TensorShape,
}

impl Pooling {
    /// The pooled output of `input`: `f(taps, count, out)` writes one output pixel's depth
    /// row from the window's taps (`count` of them inside the input).
    fn run<T: Element + Copy + Send + Sync>(
        self,
        input: &Tensor,
        f: impl Fn(&mut dyn Iterator<Item = &[T]>, usize, &mut [T]) + Sync,
    ) -> Result<Tensor> {
        let x = data::<T>(input)?;
        output::<T>(T::DTYPE, self.shape, |out| {
            pool(&x, out, (self.batch, self.depth), &self.h, &self.w, f);
            Ok(())
        })
    }
}

fn check(
    op: &'static str,
    input: &Tensor,
    ksize: &[i64],
    strides: &[i64],
    padding: Padding,
) -> Result<Pooling> {
    let dtype = input.dtype();
    let (allowed, node, sig, before, after): (&'static [DataType], &str, &str, &str, String) =
        if op == "MaxPool" {
            (
                MAX_TYPES,
                "MaxPool",
                "input:T -> output:T",
                "",
                MAX_OPDEF_AFTER.to_string(),
            )
        } else if onednn(dtype) {
            (
                AVG_TYPES,
                "_MklNativeAvgPool",
                "value:T -> output:T",
                "",
                String::new(),
            )
        } else {
            (
                AVG_TYPES,
                "AvgPool",
                "value:T -> output:T",
                AVG_OPDEF_BEFORE,
                String::new(),
            )
        };
    if !allowed.contains(&dtype) || dtype == DataType::QINT8 {
        let sig = if op == "MaxPool" {
            "input:T -> output:T"
        } else {
            "value:T -> output:T"
        };
        return Err(if op == "MaxPool" {
            not_in_type_list_default(op, dtype, allowed, sig, MAX_OPDEF_AFTER)
        } else {
            not_in_type_list(op, dtype, allowed, sig, AVG_OPDEF_BEFORE, "")
        });
    }
    for (name, v) in [("ksize", ksize), ("strides", strides)] {
        if v.len() < 4 {
            let opdef = if op == "MaxPool" {
                format!(
                    "Op<name={node}; signature={sig}; attr=T:type,default=DT_FLOAT,allowed=[{}]{after}>",
                    enums(allowed)
                )
            } else if node == "_MklNativeAvgPool" {
                format!(
                    "Op<name={node}; signature={sig}; {AVG_OPDEF_BEFORE}attr=T:type,allowed=[DT_FLOAT, DT_HALF, DT_DOUBLE, DT_BFLOAT16]>"
                )
            } else {
                format!(
                    "Op<name={node}; signature={sig}; {before}attr=T:type,allowed=[{}]>",
                    enums(allowed)
                )
            };
            return Err(Error::invalid_argument(
                op,
                format!(
                    "Length for attr '{name}' of {} must be at least minimum 4\n\t; NodeDef: {{{{node {node}}}}}; {opdef}",
                    v.len()
                ),
            ));
        }
    }
    if padding == Padding::Explicit {
        return Err(Error::invalid_argument(
            op,
            "EXPLICIT padding is not supported by this pool",
        ));
    }
    let x = input.shape();
    if x.rank() != 4 {
        return Err(Error::invalid_argument(
            op,
            if onednn(dtype) {
                "Input must be 4 or 5-dimensional".to_string()
            } else {
                "input must be 4-dimensional".to_string()
            },
        ));
    }
    if ksize.len() != 4 || strides.len() != 4 {
        return Err(Error::invalid_argument(
            op,
            "Sliding window ksize field must specify 4 dimensions",
        ));
    }
    if ksize[0] != 1 || strides[0] != 1 {
        return Err(unimplemented(
            op,
            "Pooling is not yet supported on the batch dimension.",
        ));
    }
    let positive = |values: &[i64], what: &str| {
        if values.iter().all(|&v| v > 0) {
            return Ok(());
        }
        Err(Error::invalid_argument(
            op,
            format!(
                "Sliding window {what} must be positive. The specified or inferred {what} is: {}",
                list(values)
            ),
        ))
    };
    positive(ksize, "ksize")?;
    positive(strides, "stride")?;
    if ksize[3] != 1 {
        return Err(unimplemented(
            op,
            "MaxPooling supports exactly one of pooling across depth or pooling across width/height.",
        ));
    }
    let d = x.dim_sizes();
    let h = axis(op, d[1], ksize[1], 1, strides[1], padding, (0, 0))?;
    let w = axis(op, d[2], ksize[2], 1, strides[2], padding, (0, 0))?;
    Ok(Pooling {
        h,
        w,
        batch: d[0] as usize,
        depth: d[3] as usize,
        shape: TensorShape::new(&[d[0], h.output as i64, w.output as i64, d[3]])?,
    })
}

fn unimplemented(op: &'static str, m: &str) -> Error {
    Error::Op {
        op,
        code: tensorcast_core::Code::Unimplemented,
        message: m.to_string(),
    }
}

fn enums(allowed: &[DataType]) -> String {
    allowed
        .iter()
        .map(|d| format!("DT_{}", d.name().to_uppercase()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The type-list text of an op whose `T` has a default (`MaxPool`'s `DT_FLOAT`).
fn not_in_type_list_default(
    op: &'static str,
    dtype: DataType,
    allowed: &[DataType],
    sig: &str,
    after: &str,
) -> Error {
    let names: Vec<String> = allowed.iter().map(|d| d.name()).collect();
    Error::invalid_argument(
        op,
        format!(
            "Value for attr 'T' of {} is not in the list of allowed values: {}\n\t; NodeDef: {{{{node {op}}}}}; \
             Op<name={op}; signature={sig}; attr=T:type,default=DT_FLOAT,allowed=[{}]{after}>",
            dtype.name(),
            names.join(", "),
            enums(allowed)
        ),
    )
}

/// Runs `f(window taps' values) -> output` over every output position, rows split across the
/// rayon pool. `f` gets the channel slice of each tap inside the input and writes `c` outputs.
fn pool<T: Element + Copy + Send + Sync>(
    x: &[T],
    out: &mut [T],
    n_c: (usize, usize),
    h: &Axis,
    w: &Axis,
    f: impl Fn(&mut dyn Iterator<Item = &[T]>, usize, &mut [T]) + Sync,
) {
    let c = n_c.1;
    let row_len = w.output * c;
    if row_len == 0 {
        return;
    }
    let parallel = out.len().saturating_mul(h.window * w.window) >= POOL_PARALLEL_MIN_TAPS;
    for_each_chunk(
        out,
        row_len,
        parallel,
        || (),
        |(), (r, row)| {
            let (n, oy) = (r / h.output, r % h.output);
            for ox in 0..w.output {
                let mut taps = (0..h.window)
                    .filter_map(|ky| h.source(oy, ky))
                    .flat_map(|iy| {
                        (0..w.window)
                            .filter_map(move |kx| w.source(ox, kx))
                            .map(move |ix| (iy, ix))
                    })
                    .map(|(iy, ix)| &x[((n * h.input + iy) * w.input + ix) * c..][..c]);
                let count = (0..h.window)
                    .filter(|&ky| h.source(oy, ky).is_some())
                    .count()
                    * (0..w.window)
                        .filter(|&kx| w.source(ox, kx).is_some())
                        .count();
                f(&mut taps, count, &mut row[ox * c..(ox + 1) * c]);
            }
        },
    );
}

/// The fewest taps (output elements times window size) a pooling splits across the rayon
/// pool.
const POOL_PARALLEL_MIN_TAPS: usize = 1 << 16;

/// Maximum with TensorFlow's pooling rule: the running maximum starts at the type's lowest
/// value and a tap replaces it when larger, so NaN taps are skipped (oneDNN's rule, measured).
trait PoolMax: Element + Copy + Send + Sync {
    fn lowest() -> Self;
    fn take(self, v: Self) -> Self;
}
macro_rules! pool_max_int {
    ($($t:ty),*) => {$(impl PoolMax for $t {
        fn lowest() -> Self { <$t>::MIN }
        fn take(self, v: Self) -> Self { if v > self { v } else { self } }
    })*};
}
pool_max_int!(i8, i16, i32, i64, u8, u16);
macro_rules! pool_max_float {
    ($($t:ty => $low:expr),*) => {$(impl PoolMax for $t {
        fn lowest() -> Self { $low }
        fn take(self, v: Self) -> Self { if v > self { v } else { self } }
    })*};
}
pool_max_float!(f32 => f32::MIN, f64 => f64::MIN, f16 => f16::MIN, bf16 => bf16::MIN);

/// `MaxPool` (NHWC, `ksize` and `strides` of 4 with 1 for batch and depth, SAME or VALID):
/// TensorFlow's `tf.raw_ops.MaxPool`, exact (a maximum); NaN taps are skipped, as
/// TensorFlow's `float` kernel skips them.
///
/// # Errors
/// TensorFlow's texts (type list; `ksize`/`strides` shorter than 4; `Pooling is not yet
/// supported on the batch dimension.`; non-positive windows; depth pooling); a zero stride,
/// which makes TensorFlow 2.21 die of a division by zero, is `Sliding window stride must be
/// positive. ...`; allocation errors.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::nn::{max_pool, Padding};
/// let x = Tensor::from_vec(vec![1.0f32, 5.0, 3.0, 2.0], [1i64, 2, 2, 1].as_slice())?;
/// let y = max_pool(&x, &[1, 2, 2, 1], &[1, 1, 1, 1], Padding::Valid)?;
/// assert_eq!(y.to_vec::<f32>()?, vec![5.0]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn max_pool(
    input: &Tensor,
    ksize: &[i64],
    strides: &[i64],
    padding: Padding,
) -> Result<Tensor> {
    let p = check("MaxPool", input, ksize, strides, padding)?;
    fn go<T: PoolMax>(input: &Tensor, p: Pooling) -> Result<Tensor> {
        p.run::<T>(input, |taps, _, o| {
            o.fill(T::lowest());
            for t in taps {
                for (m, &v) in o.iter_mut().zip(t) {
                    *m = m.take(v);
                }
            }
        })
    }
    match input.dtype() {
        DataType::FLOAT => go::<f32>(input, p),
        DataType::DOUBLE => go::<f64>(input, p),
        DataType::HALF => go::<f16>(input, p),
        DataType::BFLOAT16 => go::<bf16>(input, p),
        DataType::INT8 => go::<i8>(input, p),
        DataType::INT16 => go::<i16>(input, p),
        DataType::INT32 => go::<i32>(input, p),
        DataType::INT64 => go::<i64>(input, p),
        DataType::UINT8 => go::<u8>(input, p),
        DataType::UINT16 => go::<u16>(input, p),
        other => Err(Error::Internal(format!("max_pool on {}", other.name()))),
    }
}

/// `AvgPool` (NHWC, SAME or VALID): TensorFlow's `tf.raw_ops.AvgPool`; a window's sum divided
/// by the number of its taps inside the input (SAME's padding is not counted). `bfloat16` sums
/// in `float` (oneDNN), `half` in `half` with each sum rounded (Eigen's reducer).
///
/// Accuracy: `|ours - tf| <= 2 * K * eps * mean|x|` per element (`K` taps), plus one rounding
/// of the type for `half` and `bfloat16`, asserted over the recorded vectors.
///
/// # Errors
/// As [`max_pool`], with `AvgPool`'s type list.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::nn::{avg_pool, Padding};
/// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [1i64, 1, 3, 1].as_slice())?;
/// // SAME with a 1x2 window: [1+2]/2, [3]/1 (the padding is not counted).
/// let y = avg_pool(&x, &[1, 1, 2, 1], &[1, 1, 2, 1], Padding::Same)?;
/// assert_eq!(y.to_vec::<f32>()?, vec![1.5, 3.0]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn avg_pool(
    value: &Tensor,
    ksize: &[i64],
    strides: &[i64],
    padding: Padding,
) -> Result<Tensor> {
    let p = check("AvgPool", value, ksize, strides, padding)?;
    macro_rules! go {
        ($t:ty, $acc:ty, $to:expr, $from:expr) => {
            go!($t, $acc, $to, $from, |a: $acc| a)
        };
        ($t:ty, $acc:ty, $to:expr, $from:expr, $round:expr) => {
            p.run::<$t>(value, |taps, count, o| {
                let mut acc = vec![0 as $acc; o.len()];
                for t in taps {
                    for (a, &v) in acc.iter_mut().zip(t) {
                        *a = $round(*a + $to(v));
                    }
                }
                let n = count.max(1) as $acc;
                for (o, a) in o.iter_mut().zip(acc) {
                    *o = $from(a / n);
                }
            })
        };
    }
    match value.dtype() {
        DataType::FLOAT => go!(f32, f32, |v: f32| v, |a: f32| a),
        DataType::DOUBLE => go!(f64, f64, |v: f64| v, |a: f64| a),
        // Eigen's half reducer adds in half, each sum rounded.
        DataType::HALF => go!(f16, f32, |v: f16| v.to_f32(), f16::from_f32, |a: f32| {
            f16::from_f32(a).to_f32()
        }),
        DataType::BFLOAT16 => go!(bf16, f32, |v: bf16| v.to_f32(), bf16::from_f32),
        other => Err(Error::Internal(format!("avg_pool on {}", other.name()))),
    }
}

/// `MaxPool`'s and `AvgPool`'s shape function (NHWC).
///
/// # Errors
/// `Shape must be rank 4 but is rank 3`; `Negative dimension size caused by subtracting 3 from
/// 2` (VALID windows larger than the input); non-positive strides.
///
/// ```
/// use tensorcast_core::PartialTensorShape;
/// use tensorcast_kernels::nn::{pool_shape, Padding};
/// let x = PartialTensorShape::new(&[-1, 5, -1, 3])?;
/// let y = pool_shape(&x, &[1, 2, 2, 1], &[1, 2, 2, 1], Padding::Same)?;
/// assert_eq!(y.dims(), Some(&[-1i64, 3, -1, 3][..]));
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn pool_shape(
    input: &PartialTensorShape,
    ksize: &[i64],
    strides: &[i64],
    padding: Padding,
) -> Result<PartialTensorShape> {
    let x = match input.dims() {
        None => [-1i64; 4],
        Some(d) if d.len() == 4 => [d[0], d[1], d[2], d[3]],
        Some(d) => {
            return Err(Error::invalid_argument(
                "shape",
                format!("Shape must be rank 4 but is rank {}", d.len()),
            ))
        }
    };
    if ksize.len() != 4 || strides.len() != 4 {
        return Err(Error::invalid_argument(
            "shape",
            format!(
                "MaxPool requires ksize and strides to contain 4 values, but got: {} and {}",
                ksize.len(),
                strides.len()
            ),
        ));
    }
    let dim = |d: usize| axis_shape(x[d], AxisAttrs::pool(ksize[d], strides[d], padding));
    let (rows, cols) = (dim(1)?, dim(2)?);
    // The depth stride is ignored when the window's depth is 1, as the eager kernels do.
    let depth = if ksize[3] == 1 { x[3] } else { dim(3)? };
    PartialTensorShape::new(&[x[0], rows, cols, depth])
}

//! `Conv2D` (direct, taps read in place, im2col on the `gemm` crate, or Winograd's F(2x2, 3x3)
//! for `float` 3x3 windows) and `DepthwiseConv2dNative` (direct), NHWC, with their shape
//! functions.

mod winograd;

use rayon::prelude::*;
use tensorcast_core::dtypes;
use tensorcast_core::{
    bf16, f16, Code, DataType, Element, Error, PartialTensorShape, Result, Tensor, TensorShape,
};

use super::window::{axis, axis_shape, Axis, Padding};
use crate::chunks::for_each_chunk;
use crate::linalg::engine::{GemmElement, Geometry};
use crate::linalg::util::{
    data, dims, not_in_type_list, onednn, output, second_input_mismatch, try_vec,
};
use tensorcast_buffer::gemm::{matmul, matmul_add, MatRef, Scalar};
use tensorcast_buffer::simd::vectorized_wide;

const CONV_TYPES: &[DataType] = dtypes!("half, bfloat16, float, double, int32");
const DEPTHWISE_TYPES: &[DataType] = crate::type_lists::FLOATING_POINT_TYPES;

/// The attrs of a 2-D convolution, checked: spatial strides and dilations, paddings.
struct Params {
    padding: Padding,
    stride: (i64, i64),
    dilation: (i64, i64),
    pads: ((i64, i64), (i64, i64)),
}

impl Params {
    /// The output rows' and columns' windows over input `x` (NHWC dims) for filter `f`.
    fn axes(&self, op: &'static str, x: &[i64], f: &[i64]) -> Result<(Axis, Axis)> {
        let h = axis(
            op,
            x[1],
            f[0],
            self.dilation.0,
            self.stride.0,
            self.padding,
            self.pads.0,
        )?;
        let w = axis(
            op,
            x[2],
            f[1],
            self.dilation.1,
            self.stride.1,
            self.padding,
            self.pads.1,
        )?;
        Ok((h, w))
    }
}

fn check_params(
    op: &'static str,
    dtype: DataType,
    (strides, padding, explicit_paddings, dilations): ConvAttrs<'_>,
    depthwise: bool,
) -> Result<Params> {
    let mkl = onednn(dtype);
    let err = |m: &str| Error::invalid_argument(op, m.to_string());
    let unimplemented = |m: &str| Error::Op {
        op,
        code: Code::Unimplemented,
        message: m.to_string(),
    };
    let four_values = |values: &[i64], field: &str| {
        if values.len() == 4 {
            return Ok(());
        }
        let counts = if mkl { "4 or 5" } else { "4" };
        Err(err(&format!(
            "Sliding window {field} field must specify {counts} dimensions"
        )))
    };
    four_values(strides, "strides")?;
    if strides[0] != 1 || strides[3] != 1 {
        return Err(unimplemented(
            "Current implementation does not yet support strides in the batch and depth dimensions.",
        ));
    }
    if mkl {
        if let Some(s) = [strides[1], strides[2]].into_iter().find(|&s| s <= 0) {
            return Err(err(&format!("Stride must be > 0, but got {s}")));
        }
    } else if depthwise {
        if strides[1] != strides[2] {
            return Err(err(
                "Current implementation only supports equal length strides in the row and column dimensions.",
            ));
        }
        if strides[1] <= 0 {
            return Err(err("Row and column strides should be larger than 0."));
        }
    } else if strides[1] <= 0 || strides[2] <= 0 {
        return Err(err("Row and column strides should be larger than 0."));
    }
    if depthwise && !mkl && dilations.iter().any(|&d| d != 1) {
        let d: Vec<String> = dilations.iter().map(i64::to_string).collect();
        return Err(unimplemented(&format!(
            "Current kernel implementation does not support dilations, received [{}]",
            d.join(" ")
        )));
    }
    four_values(dilations, "dilations")?;
    if dilations[0] != 1 || dilations[3] != 1 {
        let m = "Current implementation does not yet support dilations in the batch and depth dimensions.";
        // oneDNN's kernels call it an invalid argument, Eigen's unimplemented.
        return Err(if mkl { err(m) } else { unimplemented(m) });
    }
    if dilations[1] <= 0 || dilations[2] <= 0 {
        return Err(err("Dilated rates should be larger than 0."));
    }
    let mut pads = ((0, 0), (0, 0));
    if mkl {
        // oneDNN's kernels read the spatial pairs (elements 2..6) of EXPLICIT padding and
        // ignore the attribute otherwise.
        if padding == Padding::Explicit {
            if explicit_paddings.len() < 6 {
                return Err(err(&format!(
                    "explicit_paddings attribute must contain 8 values, but got: {}",
                    explicit_paddings.len()
                )));
            }
            let p = &explicit_paddings[2..6];
            // oneDNN fails on negative padding with an internal error (TensorFlow's
            // `Aborted`: "could not create a primitive descriptor"); this reports Eigen's
            // check instead.
            if p.iter().any(|&v| v < 0) {
                return Err(err("All elements of explicit_paddings must be nonnegative"));
            }
            pads = ((p[0], p[1]), (p[2], p[3]));
        }
    } else {
        check_explicit(op, padding, explicit_paddings)?;
        if padding == Padding::Explicit {
            let p = explicit_paddings;
            pads = ((p[2], p[3]), (p[4], p[5]));
        }
    }
    Ok(Params {
        padding,
        stride: (strides[1], strides[2]),
        dilation: (dilations[1], dilations[2]),
        pads,
    })
}

/// TensorFlow's `CheckValidPadding` (Eigen kernels and shape functions).
fn check_explicit(op: &'static str, padding: Padding, p: &[i64]) -> Result<()> {
    let err = |m: String| Error::invalid_argument(op, m);
    if padding != Padding::Explicit {
        if !p.is_empty() {
            return Err(err(
                "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT"
                    .into(),
            ));
        }
        return Ok(());
    }
    if p.len() != 8 {
        return Err(err(format!(
            "explicit_paddings attribute must contain 8 values, but got: {}",
            p.len()
        )));
    }
    if p.iter().any(|&v| v < 0) {
        return Err(err(
            "All elements of explicit_paddings must be nonnegative".into()
        ));
    }
    if p[0] != 0 || p[1] != 0 || p[6] != 0 || p[7] != 0 {
        return Err(err(
            "Nonzero explicit padding in the batch or depth dimensions is not supported".into(),
        ));
    }
    Ok(())
}

/// The checks both kernels start with, in TensorFlow's order: the types (`allowed`, and the
/// signature's attrs `after` them in the type-list error), the attrs, then the filter's and
/// the input's ranks. Returns the checked attrs and the input's and filter's dims.
fn check_conv<'t>(
    op: &'static str,
    (input, filter): (&'t Tensor, &'t Tensor),
    allowed: &'static [DataType],
    after: &str,
    attrs: ConvAttrs<'_>,
    depthwise: bool,
) -> Result<(Params, &'t [i64], &'t [i64])> {
    let dtype = input.dtype();
    check_types(op, dtype, filter.dtype(), allowed, after)?;
    let p = check_params(op, dtype, attrs, depthwise)?;
    let (xs, fs) = (input.shape(), filter.shape());
    if fs.rank() != 4 {
        // Eigen's Conv2D kernel says "convolution filter", its other kernels "filter".
        let word = if depthwise || onednn(dtype) {
            ""
        } else {
            "convolution "
        };
        return Err(Error::invalid_argument(
            op,
            format!("{word}filter must be 4-dimensional: {}", dims(fs)),
        ));
    }
    if xs.rank() != 4 {
        // TensorFlow aborts on Conv2D here; the text is its check's, without the colon.
        let colon = if depthwise { ": " } else { "" };
        return Err(Error::invalid_argument(
            op,
            format!("input must be 4-dimensional{colon}{}", dims(xs)),
        ));
    }
    Ok((p, xs.dim_sizes(), fs.dim_sizes()))
}

fn check_types(
    op: &'static str,
    a: DataType,
    b: DataType,
    allowed: &'static [DataType],
    after: &str,
) -> Result<()> {
    if !allowed.contains(&a) {
        return Err(not_in_type_list(
            op,
            a,
            allowed,
            "input:T, filter:T -> output:T",
            "",
            after,
        ));
    }
    if b != a {
        let mkl = if op == "Conv2D" {
            "_MklNativeConv2D"
        } else {
            "_MklNativeDepthwiseConv2dNative"
        };
        return Err(second_input_mismatch(op, mkl, a, b));
    }
    Ok(())
}

/// `Conv2D` (NHWC input `[batch, height, width, in_depth]`, filter `[height, width,
/// in_depth / groups, out_depth]`): TensorFlow's `tf.raw_ops.Conv2D` with `data_format` NHWC.
/// `padding` SAME, VALID or EXPLICIT (`explicit_paddings`: before/after pairs for N, H, W, C);
/// grouped convolutions when the filter's in-depth divides the input's.
///
/// Runs on the `gemm` crate. `float` and `double` convolutions of stride 1 (one group, no
/// width dilation) read their patches in place from zero-padded copies of blocks of input
/// rows, as `kh` products with overlapping rows summed into the output; the others gather
/// the patches of a block of output pixels into a `[pixels, kh*kw*in]` matrix (im2col;
/// skipped for 1x1 filters of stride 1 without padding, which read the input in place) and
/// multiply it by the filter seen as `[kh*kw*in, out]`, straight into the output. `half` and
/// `bfloat16` multiply in `float`; `int32` wraps. A `float` 3x3 convolution of stride and
/// dilation 1 with 16 channels or more in and out and 1,024 output pixels or more runs by
/// Winograd's F(2x2, 3x3) instead (2.25x fewer multiply-adds; 1.4x faster than the in-place
/// path on 8x56x56x64 -> 64), unless the environment sets `TENSORCAST_CONV_WINOGRAD=0`
/// (read once). (TensorFlow's GPU convolutions may run cuDNN's Winograd algorithms too, which
/// its `TF_ENABLE_WINOGRAD_NONFUSED` switches.)
///
/// Accuracy against TensorFlow 2.21 (oneDNN for `float`): `|ours - tf| <= 2 * K * eps *
/// sum_taps |x| |w|` per element with `K = kh*kw*in/groups`, asserted over the recorded
/// vectors (for `half` and `bfloat16`, plus one rounding of the type). Winograd's path:
/// `|y - exact| <= 2 * (K + 360) * eps * T`, `T = sum_c (largest |x| of channel c in the
/// output's 4x4 input tile) * (sum of the channel's 9 |w|)`, which on inputs of one
/// magnitude is within the bound above (measured: 0.25% of it on uniform data); blocks
/// holding a NaN, an infinity or a value large enough to overflow a transform take the
/// in-place path.
///
/// # Errors
/// TensorFlow's texts (types; strides, dilations and paddings, which the oneDNN kernels of
/// `float` and `bfloat16` check with their own words; filter rank; depths; empty filters).
/// An input that is not 4-D, which makes TensorFlow 2.21 abort, is `input must be
/// 4-dimensional[...]`. Allocation errors when the output or the patch block cannot be had.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::nn::{conv2d, Padding};
/// let x = Tensor::from_vec((1..=9).map(|v| v as f32).collect(), [1i64, 3, 3, 1].as_slice())?;
/// let w = Tensor::from_vec(vec![1.0f32; 4], [2i64, 2, 1, 1].as_slice())?;
/// let ones = [1i64, 1, 1, 1];
/// let y = conv2d(&x, &w, (&ones, Padding::Valid, &[], &ones))?;
/// assert_eq!(y.to_vec::<f32>()?, vec![12.0, 16.0, 24.0, 28.0]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn conv2d(input: &Tensor, filter: &Tensor, attrs: ConvAttrs<'_>) -> Result<Tensor> {
    conv_with(ConvOp::Conv2D, input, filter, attrs, None)
}

/// Work run on each block of a `float` convolution's output as soon as the block is computed,
/// while it is still in cache: `f(block)`, where `block` is whole output pixels (a multiple of
/// the output depth, starting at a pixel's first channel). The session runs the element-wise
/// chain that follows a convolution (batch norm's scale and shift, an activation) this way
/// ([`crate::elementwise::fused::FusedChain::apply_in_place`]) instead of as a second pass
/// over memory.
pub type Epilogue<'a> = &'a (dyn Fn(&mut [f32]) + Sync);

/// A convolution's attrs, as its node holds them: `(strides, padding, explicit_paddings,
/// dilations)`. TensorFlow wants 4 strides and dilations (NHWC), and 8 explicit paddings
/// (before and after each dim) for [`Padding::Explicit`], none otherwise; the kernels and
/// shape functions check them with its texts.
pub type ConvAttrs<'a> = (&'a [i64], Padding, &'a [i64], &'a [i64]);

/// The two NHWC convolutions [`conv_with`] runs, as a convolution node names its op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvOp {
    /// `Conv2D` ([`conv2d`]).
    Conv2D,
    /// `DepthwiseConv2dNative` ([`depthwise_conv2d_native`]).
    DepthwiseConv2dNative,
}

impl ConvOp {
    /// The op's TensorFlow name.
    pub fn name(self) -> &'static str {
        match self {
            ConvOp::Conv2D => "Conv2D",
            ConvOp::DepthwiseConv2dNative => "DepthwiseConv2dNative",
        }
    }

    /// The convolution whose TensorFlow name is `op`, if it is one of the two.
    pub fn from_name(op: &str) -> Option<ConvOp> {
        [ConvOp::Conv2D, ConvOp::DepthwiseConv2dNative]
            .into_iter()
            .find(|c| c.name() == op)
    }
}

/// A convolution's operands once [`check_conv`] has passed them: the checked attrs, the
/// input's and filter's dims, and the output blocks' epilogue.
struct Checked<'t, 'e> {
    p: Params,
    x: &'t [i64],
    f: &'t [i64],
    e: BlockFn<'e, f32>,
}

/// [`conv2d`] or [`depthwise_conv2d_native`] (as `op` says), then `epilogue` on each block of
/// the output (see [`Epilogue`]): the same bits as running the epilogue over the
/// convolution's result.
///
/// # Errors
/// The convolution's; an internal error for an epilogue on an input that is not `float`.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::nn::{conv_with, ConvOp, Padding};
/// let x = Tensor::from_vec(vec![1.0f32, -2.0, 3.0, -4.0], [1i64, 2, 2, 1].as_slice())?;
/// let w = Tensor::from_vec(vec![2.0f32], [1i64, 1, 1, 1].as_slice())?;
/// let relu = |b: &mut [f32]| b.iter_mut().for_each(|v| *v = v.max(0.0));
/// let ones = [1i64, 1, 1, 1];
/// let y = conv_with(ConvOp::Conv2D, &x, &w, (&ones, Padding::Valid, &[], &ones), Some(&relu))?;
/// assert_eq!(y.to_vec::<f32>()?, vec![2.0, 0.0, 6.0, 0.0]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn conv_with(
    op: ConvOp,
    input: &Tensor,
    filter: &Tensor,
    attrs: ConvAttrs<'_>,
    epilogue: Option<Epilogue<'_>>,
) -> Result<Tensor> {
    let name = op.name();
    let (types, after, depthwise) = match op {
        ConvOp::Conv2D => (
            CONV_TYPES,
            "; attr=strides:list(int); attr=use_cudnn_on_gpu:bool,default=true; \
             attr=padding:string,allowed=[\"SAME\", \"VALID\", \"EXPLICIT\"]; \
             attr=explicit_paddings:list(int),default=[]; \
             attr=data_format:string,default=\"NHWC\",allowed=[\"NHWC\", \"NCHW\"]; \
             attr=dilations:list(int),default=[1, 1, 1, 1]",
            false,
        ),
        ConvOp::DepthwiseConv2dNative => (
            DEPTHWISE_TYPES,
            "; attr=strides:list(int); attr=padding:string,allowed=[\"SAME\", \"VALID\", \"EXPLICIT\"]; \
             attr=explicit_paddings:list(int),default=[]; \
             attr=data_format:string,default=\"NHWC\",allowed=[\"NHWC\", \"NCHW\"]; \
             attr=dilations:list(int),default=[1, 1, 1, 1]",
            true,
        ),
    };
    let (p, x, f) = check_conv(name, (input, filter), types, after, attrs, depthwise)?;
    let e = float_epilogue(name, input.dtype(), epilogue)?;
    let c = Checked { p, x, f, e };
    match op {
        ConvOp::Conv2D => conv2d_checked((input, filter), c),
        ConvOp::DepthwiseConv2dNative => depthwise_checked((input, filter), c),
    }
}

/// [`conv2d`] on operands [`check_conv`] passed.
fn conv2d_checked((input, filter): (&Tensor, &Tensor), c: Checked<'_, '_>) -> Result<Tensor> {
    const OP: &str = "Conv2D";
    let dtype = input.dtype();
    let Checked { p, x, f, e } = c;
    if filter.shape().num_elements() == 0 {
        return Err(Error::invalid_argument(
            OP,
            "filter must not have zero elements (i.e. all dimensions must be non-zero)",
        ));
    }
    if x[3] % f[2] != 0 {
        return Err(Error::invalid_argument(
            OP,
            format!(
                "input depth must be evenly divisible by filter depth: {} vs {}",
                x[3], f[2]
            ),
        ));
    }
    let groups = x[3] / f[2];
    // An input of depth 0 has no groups (TensorFlow divides by zero there): the same error.
    if groups == 0 || f[3] % groups != 0 {
        return Err(Error::invalid_argument(
            OP,
            format!(
                "output depth must be evenly divisible by number of groups: {} vs {groups}",
                f[3]
            ),
        ));
    }
    let (h, w) = p.axes(OP, x, f)?;
    let shape = TensorShape::new(&[x[0], h.output as i64, w.output as i64, f[3]])?;
    let g = Conv {
        batch: x[0] as usize,
        h,
        w,
        cin: x[3] as usize,
        cout: f[3] as usize,
        groups: groups as usize,
    };
    let ops = (input, filter);
    match dtype {
        DataType::FLOAT if g.few_taps() => g.run(ops, shape, e, Conv::compute_direct::<f32>),
        DataType::DOUBLE if g.few_taps() => g.run(ops, shape, None, Conv::compute_direct::<f64>),
        DataType::FLOAT if g.winograd() => g.run(ops, shape, e, Conv::compute_winograd),
        DataType::FLOAT if g.taps_in_place() => g.run(ops, shape, e, Conv::compute_in_place::<f32>),
        DataType::DOUBLE if g.taps_in_place() => {
            g.run(ops, shape, None, Conv::compute_in_place::<f64>)
        }
        DataType::FLOAT => g.run(ops, shape, e, Conv::compute::<f32>),
        DataType::DOUBLE => g.run(ops, shape, None, Conv::compute::<f64>),
        DataType::HALF => g.run(ops, shape, None, Conv::compute::<f16>),
        DataType::BFLOAT16 => g.run(ops, shape, None, Conv::compute::<bf16>),
        DataType::INT32 => g.run(ops, shape, None, Conv::compute::<i32>),
        other => Err(Error::Internal(format!("conv2d on {}", other.name()))),
    }
}

/// An output block's epilogue, typed for the kernel's element (`None` for no epilogue).
type BlockFn<'a, T> = Option<&'a (dyn Fn(&mut [T]) + Sync)>;

/// What a convolution path works on: the input's and the filter's elements, the output, and
/// the epilogue for the output's blocks.
struct Job<'a, T> {
    x: &'a [T],
    f: &'a [T],
    out: &'a mut [T],
    epi: BlockFn<'a, T>,
}

/// `epilogue` for a kernel on `dtype`: only `float` outputs take one.
fn float_epilogue<'a>(
    op: &str,
    dtype: DataType,
    epilogue: Option<Epilogue<'a>>,
) -> Result<BlockFn<'a, f32>> {
    if epilogue.is_some() && dtype != DataType::FLOAT {
        return Err(Error::Internal(format!(
            "{op}: an epilogue on a {} output",
            dtype.name()
        )));
    }
    Ok(epilogue)
}

/// Output pixels per task when an epilogue runs over a block computed as one piece.
const EPILOGUE_PIXELS: usize = 256;

/// `e` on `out` (whole pixels of `depth` channels), split across the rayon pool when large.
fn run_epilogue<T: Send>(e: BlockFn<'_, T>, out: &mut [T], depth: usize) {
    if let Some(e) = e {
        let piece = (EPILOGUE_PIXELS * depth).max(1);
        if out.len() > piece {
            out.par_chunks_mut(piece).for_each(e);
        } else {
            e(out);
        }
    }
}

/// A checked convolution's geometry.
struct Conv {
    batch: usize,
    h: Axis,
    w: Axis,
    cin: usize,
    cout: usize,
    groups: usize,
}

/// Bytes of padded input and output rows a block of the in-place path holds at most (the
/// fastest of 0.5, 1, 2 and 4 MiB on the 8x56x56x64 3x3 benchmark, with blocks split so
/// that each thread gets about four).
const SLAB_BLOCK_BYTES: usize = 2 << 20;

/// Taps (`kh * kw * in`) below which a convolution runs directly (see [`Conv::few_taps`]).
const DIRECT_MAX_TAPS: usize = 64;

/// Output pixels below which a block of the in-place path is not split further.
const MIN_BLOCK_PIXELS: usize = 256;

/// Output rows `oy0..oy0 + rows` of images `n0..n0 + images` (several images only when
/// whole ones fit).
struct Block {
    n0: usize,
    images: usize,
    oy0: usize,
    rows: usize,
}

/// Bytes of output rows per block of a 1x1 convolution (in the core's L2 cache while its
/// epilogue runs).
const POINTWISE_BLOCK_BYTES: usize = 128 << 10;

/// Bytes of im2col patches gathered per block (a few MiB: large enough for `gemm` to split
/// across the cores, small enough to stay in the last-level cache).
const PATCH_BLOCK_BYTES: usize = 8 << 20;

impl Conv {
    /// `compute(self, job)` on the tensors' elements, into a new output whose blocks take
    /// `epi`.
    fn run<T: Element + Default + Clone>(
        &self,
        (input, filter): (&Tensor, &Tensor),
        shape: TensorShape,
        epi: BlockFn<'_, T>,
        compute: impl FnOnce(&Self, Job<'_, T>) -> Result<()>,
    ) -> Result<Tensor> {
        let (x, f) = (data::<T>(input)?, data::<T>(filter)?);
        output::<T>(T::DTYPE, shape, |out| {
            compute(
                self,
                Job {
                    x: &x,
                    f: &f,
                    out,
                    epi,
                },
            )
        })
    }

    fn compute<T: GemmElement + Default>(&self, job: Job<'_, T>) -> Result<()> {
        let Job { x, f, out, epi } = job;
        let (h, w) = (&self.h, &self.w);
        let cin_g = self.cin / self.groups;
        let cout_g = self.cout / self.groups;
        let k = h.window * w.window * cin_g;
        let pixels = self.batch * h.output * w.output;
        if pixels == 0 || self.cout == 0 {
            return Ok(());
        }
        let direct = self.groups == 1
            && h.window == 1
            && w.window == 1
            && h.stride == 1
            && w.stride == 1
            && h.pad_before == 0
            && w.pad_before == 0
            && h.output == h.input
            && w.output == w.input;
        if direct {
            // A 1x1 convolution is a product of the input, as [pixels, in], and the filter.
            return self.pointwise(Job { x, f, out, epi });
        }
        let rows = (PATCH_BLOCK_BYTES / (k * std::mem::size_of::<T>()).max(1)).clamp(1, pixels);
        let mut patches = try_vec(rows * k, T::default(), T::DTYPE)?;
        let (mut fg, mut og) = if self.groups > 1 {
            (
                try_vec(k * cout_g, T::default(), T::DTYPE)?,
                try_vec(rows * cout_g, T::default(), T::DTYPE)?,
            )
        } else {
            (Vec::new(), Vec::new())
        };
        let mut start = 0;
        while start < pixels {
            let n = rows.min(pixels - start);
            for g in 0..self.groups {
                self.im2col(x, &mut patches[..n * k], start, g * cin_g, cin_g);
                let block = &mut out[start * self.cout..(start + n) * self.cout];
                if self.groups == 1 {
                    T::batched(
                        &patches[..n * k],
                        f,
                        block,
                        &Geometry::plain(n, self.cout, k),
                        &[(0, 0)],
                    )?;
                } else {
                    for (r, row) in fg.chunks_mut(cout_g).enumerate() {
                        row.copy_from_slice(&f[r * self.cout + g * cout_g..][..cout_g]);
                    }
                    let o = &mut og[..n * cout_g];
                    T::batched(
                        &patches[..n * k],
                        &fg,
                        o,
                        &Geometry::plain(n, cout_g, k),
                        &[(0, 0)],
                    )?;
                    for (dst, src) in block.chunks_mut(self.cout).zip(o.chunks(cout_g)) {
                        dst[g * cout_g..(g + 1) * cout_g].copy_from_slice(src);
                    }
                }
            }
            run_epilogue(
                epi,
                &mut out[start * self.cout..(start + n) * self.cout],
                self.cout,
            );
            start += n;
        }
        Ok(())
    }

    /// A 1x1, stride-1, unpadded convolution: the product of the input, as `[pixels, in]`, and
    /// the filter, in blocks of [`POINTWISE_BLOCK_BYTES`] of output rows, split across the
    /// rayon pool (`gemm` splits a block further where it pays), each block's epilogue run as
    /// soon as its product is made. Every output element is one dot product over `in`, whose
    /// order does not depend on the blocking.
    fn pointwise<T: GemmElement>(&self, job: Job<'_, T>) -> Result<()> {
        let Job { x, f, out, epi } = job;
        let (k, cout) = (self.cin, self.cout);
        let rows = (POINTWISE_BLOCK_BYTES / (cout * std::mem::size_of::<T>()).max(1)).max(1);
        out.par_chunks_mut(rows * cout)
            .enumerate()
            .try_for_each(|(i, o)| {
                let n = o.len() / cout;
                let a = &x[i * rows * k..][..n * k];
                T::batched(a, f, o, &Geometry::plain(n, cout, k), &[(0, 0)])?;
                if let Some(e) = epi {
                    e(o);
                }
                Ok(())
            })
    }

    /// Whether the direct path applies: one group, a window of more than one pixel, and
    /// fewer than [`DIRECT_MAX_TAPS`] taps (`kh * kw * in`), where a matrix product's
    /// packing costs more than its arithmetic (a network's first convolution, over 3 colour
    /// channels).
    fn few_taps(&self) -> bool {
        let window = self.h.window * self.w.window;
        self.groups == 1 && window > 1 && window * self.cin < DIRECT_MAX_TAPS
    }

    /// The convolution computed directly, for [`Conv::few_taps`] geometries: per output row,
    /// the `kh` input rows it reads are copied zero-padded, then blocks of pixels by output
    /// channels are summed in vector registers over every tap (compiled for the CPU's widest
    /// vectors); rows are split across the rayon pool. Each sum takes its taps in
    /// `(ky, kx, in)` order.
    fn compute_direct<T>(&self, job: Job<'_, T>) -> Result<()>
    where
        T: Element + Default + Copy + Send + Sync,
        T: std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
    {
        let Job { x, f, out, epi } = job;
        let (h, w) = (&self.h, &self.w);
        let (cin, cout) = (self.cin, self.cout);
        let row_len = w.output * cout;
        if out.is_empty() || row_len == 0 {
            return Ok(());
        }
        // The filter as [taps, cout_p], its channels zero-padded to whole blocks of lanes.
        let cout_p = cout.div_ceil(DIRECT_LANES) * DIRECT_LANES;
        let mut fp = try_vec(f.len() / cout * cout_p, T::default(), T::DTYPE)?;
        for (dst, src) in fp.chunks_exact_mut(cout_p).zip(f.chunks_exact(cout)) {
            dst[..cout].copy_from_slice(src);
        }
        // Pixels of a padded input row that an output row reads.
        let span = (w.output - 1) * w.stride + (w.window - 1) * w.dilation + 1;
        let geo = (h.window, cin, cout_p, span);
        out.par_chunks_mut(row_len).enumerate().for_each_init(
            || vec![T::default(); h.window * span * cin],
            |rows, (r, row)| {
                let (n, oy) = (r / h.output, r % h.output);
                // The rows the output row reads, zeros in the padding (which takes part in
                // the sums as zeros, as im2col's and the in-place path's do).
                for (ky, dst) in rows.chunks_exact_mut(span * cin).enumerate() {
                    let src = h.source(oy, ky).map(|iy| self.input_row(x, n, iy));
                    self.pad_row(src, dst);
                }
                vectorized_wide(
                    #[inline(always)]
                    || direct_row(rows, &fp, geo, w, row),
                );
                if let Some(e) = epi {
                    e(row);
                }
            },
        );
        Ok(())
    }

    /// Input row `iy` of image `n` (all its pixels' channels).
    fn input_row<'x, T>(&self, x: &'x [T], n: usize, iy: usize) -> &'x [T] {
        let len = self.w.input * self.cin;
        &x[(n * self.h.input + iy) * len..][..len]
    }

    /// `dst` (whole pixels) as a zero-padded copy of input row `src`: padded column `c` is
    /// input column `c - pad_before`, zeros elsewhere and for a row in the padding (`None`).
    fn pad_row<T: Copy + Default>(&self, src: Option<&[T]>, dst: &mut [T]) {
        let cin = self.cin;
        let Some(src) = src else {
            dst.fill(T::default());
            return;
        };
        let span = dst.len() / cin;
        let lead = self.w.pad_before.min(span);
        let body = self.w.input.min(span - lead);
        dst[..lead * cin].fill(T::default());
        dst[lead * cin..(lead + body) * cin].copy_from_slice(&src[..body * cin]);
        dst[(lead + body) * cin..].fill(T::default());
    }

    /// Whether the in-place path applies: one group, stride 1 and no dilation along the
    /// width, a window wider or taller than one pixel.
    fn taps_in_place(&self) -> bool {
        let (h, w) = (&self.h, &self.w);
        self.groups == 1
            && h.stride == 1
            && w.stride == 1
            && w.dilation == 1
            && h.window * w.window > 1
    }

    /// The convolution without im2col, for [`Conv::taps_in_place`] geometries. The input is
    /// copied once into zero-padded rows of `Wp = out_w + kw - 1` pixels. Seen flat, the
    /// taps `(ky, 0..kw)` of the output pixel at flat position `r` are then `kw * in`
    /// consecutive elements starting at pixel `r + ky * dh * Wp`: for each filter row `ky`
    /// the patches form a matrix whose rows overlap (row stride `in`), which `gemm` reads in
    /// place, and the `kh` products are summed into one output of `Wp` pixels a row, whose
    /// first `out_w` pixels are the result. Blocks of whole images (or of output rows of one
    /// image) keep the copies in the last-level cache.
    fn compute_in_place<T: Scalar + Element + Default>(&self, job: Job<'_, T>) -> Result<()> {
        let Job { x, f, out, epi } = job;
        let (h, w) = (&self.h, &self.w);
        let cout = self.cout;
        if self.batch * h.output * w.output == 0 || cout == 0 {
            return Ok(());
        }
        let wp = w.output + w.window - 1;
        let reach = (h.window - 1) * h.dilation;
        let threads = rayon::current_num_threads();
        // Output rows per block: within the budget, and enough blocks to share out.
        let row_bytes = wp * (self.cin + cout) * std::mem::size_of::<T>();
        let fit = (SLAB_BLOCK_BYTES / row_bytes.max(1))
            .saturating_sub(reach)
            .max(1);
        let total = self.batch * h.output;
        let share = total
            .div_ceil(4 * threads)
            .max(MIN_BLOCK_PIXELS.div_ceil(wp));
        let band = fit.min(share).max(1);
        let blocks: Vec<Block> = if band >= h.output {
            let per = (band / h.output).max(1);
            (0..self.batch)
                .step_by(per)
                .map(|n0| Block {
                    n0,
                    images: per.min(self.batch - n0),
                    oy0: 0,
                    rows: h.output,
                })
                .collect()
        } else {
            (0..self.batch)
                .flat_map(|n0| {
                    (0..h.output).step_by(band).map(move |oy0| Block {
                        n0,
                        images: 1,
                        oy0,
                        rows: band.min(h.output - oy0),
                    })
                })
                .collect()
        };
        let largest = blocks.iter().map(|b| b.images * (b.rows + reach)).max();
        let scratch = largest.unwrap_or(0) * wp;
        // The output of each block is one contiguous run of rows.
        let mut parts = Vec::with_capacity(blocks.len());
        let mut rest = out;
        for b in &blocks {
            let (head, tail) = rest.split_at_mut(b.images * b.rows * w.output * cout);
            parts.push((b, head));
            rest = tail;
        }
        let scratch_for = || -> Result<(Vec<T>, Vec<T>)> {
            Ok((
                try_vec(scratch * self.cin, T::default(), T::DTYPE)?,
                try_vec(scratch * cout, T::default(), T::DTYPE)?,
            ))
        };
        if blocks.len() < threads {
            // Too few blocks to share out: `gemm` splits each product instead.
            let (mut slab, mut acc) = scratch_for()?;
            return parts.into_iter().try_for_each(|(b, o)| {
                self.block_in_place(x, f, b, &mut slab, &mut acc, o, true)?;
                run_epilogue(epi, o, cout);
                Ok(())
            });
        }
        // One run of consecutive blocks per thread, each with its own scratch, allocated once.
        let per = parts.len().div_ceil(threads);
        parts.par_chunks_mut(per).try_for_each(|run| {
            let (mut slab, mut acc) = scratch_for()?;
            run.iter_mut().try_for_each(|(b, o)| {
                self.block_in_place(x, f, b, &mut slab, &mut acc, o, false)?;
                if let Some(e) = epi {
                    e(o);
                }
                Ok(())
            })
        })
    }

    /// One block of [`Conv::compute_in_place`]: the padded rows into `slab`, the `kh` products
    /// into `acc`, the result pixels into `out` (the block's own rows of the output).
    #[allow(
        clippy::too_many_arguments,
        reason = "one block's scratch and operands"
    )]
    fn block_in_place<T: Scalar + Element + Default>(
        &self,
        x: &[T],
        f: &[T],
        b: &Block,
        slab: &mut [T],
        acc: &mut [T],
        out: &mut [T],
        parallel: bool,
    ) -> Result<()> {
        let (h, w) = (&self.h, &self.w);
        let (cin, cout) = (self.cin, self.cout);
        let wp = w.output + w.window - 1;
        let height = b.rows + h.dilation * (h.window - 1);
        let slab = &mut slab[..b.images * height * wp * cin];
        // Slab row `s` of image `i` is padded row `oy0 + s`.
        for (q, dst) in slab.chunks_mut(wp * cin).enumerate() {
            let (i, s) = (q / height, q % height);
            let iy = (b.oy0 + s)
                .checked_sub(h.pad_before)
                .filter(|&iy| iy < h.input);
            self.pad_row(iy.map(|iy| self.input_row(x, b.n0 + i, iy)), dst);
        }
        // Flat output positions 0..m cover every result pixel of the block.
        let m = ((b.images - 1) * height + b.rows - 1) * wp + w.output;
        let acc = &mut acc[..m * cout];
        let taps = w.window * cin * cout;
        for ky in 0..h.window {
            let lhs = MatRef {
                data: &slab[ky * h.dilation * wp * cin..],
                rows: m,
                cols: w.window * cin,
                row_stride: cin,
                col_stride: 1,
            };
            let rhs = MatRef::row_major(&f[ky * taps..][..taps], w.window * cin, cout);
            let done = if ky == 0 {
                matmul(acc, lhs, rhs, false, false, parallel)
            } else {
                matmul_add(acc, lhs, rhs, parallel)
            };
            done.map_err(|e| Error::Internal(e.to_string()))?;
        }
        for (r, dst) in out.chunks_mut(w.output * cout).enumerate() {
            let (i, t) = (r / b.rows, r % b.rows);
            dst.copy_from_slice(&acc[(i * height + t) * wp * cout..][..w.output * cout]);
        }
        Ok(())
    }

    /// Gathers the patches of output pixels `start..start + rows` (channels `c0..c0 + cin_g`)
    /// into `dst`, one row of `kh * kw * cin_g` per pixel, zeros in the padding.
    fn im2col<T: Copy + Default + Send + Sync>(
        &self,
        x: &[T],
        dst: &mut [T],
        start: usize,
        c0: usize,
        cin_g: usize,
    ) {
        let (h, w) = (&self.h, &self.w);
        let k = h.window * w.window * cin_g;
        let zero = T::default();
        let fill = |(r, row): (usize, &mut [T])| {
            let p = start + r;
            let (n, rest) = (p / (h.output * w.output), p % (h.output * w.output));
            let (oy, ox) = (rest / w.output, rest % w.output);
            for ky in 0..h.window {
                let seg = &mut row[ky * w.window * cin_g..(ky + 1) * w.window * cin_g];
                let Some(iy) = h.source(oy, ky) else {
                    seg.fill(zero);
                    continue;
                };
                for kx in 0..w.window {
                    let d = &mut seg[kx * cin_g..(kx + 1) * cin_g];
                    match w.source(ox, kx) {
                        Some(ix) => {
                            let off = ((n * h.input + iy) * w.input + ix) * self.cin + c0;
                            d.copy_from_slice(&x[off..off + cin_g]);
                        }
                        None => d.fill(zero),
                    }
                }
            }
        };
        if dst.len() >= 1 << 15 {
            dst.par_chunks_mut(k).enumerate().for_each(fill);
        } else {
            dst.chunks_mut(k).enumerate().for_each(fill);
        }
    }
}

/// Multiply-add in the accumulation type of a depthwise convolution (`float` for the half
/// types, as TensorFlow's kernels widen them).
trait Accumulate: Element + Copy + Send + Sync {
    type Acc: Copy
        + Default
        + Send
        + Sync
        + std::ops::Add<Output = Self::Acc>
        + std::ops::Mul<Output = Self::Acc>;
    fn widen(self) -> Self::Acc;
    fn narrow(a: Self::Acc) -> Self;
}

impl Accumulate for f32 {
    type Acc = f32;
    fn widen(self) -> f32 {
        self
    }
    fn narrow(a: f32) -> Self {
        a
    }
}
impl Accumulate for f64 {
    type Acc = f64;
    fn widen(self) -> f64 {
        self
    }
    fn narrow(a: f64) -> Self {
        a
    }
}
/// `half` accumulates in `half`: each tap's multiply-add is done in `float` and rounded once,
/// as Eigen's packet `pmadd` for `half` does (measured: widening the whole sum to `float`
/// misses TensorFlow's results by up to 13 units in the last place on 3x3 windows).
/// `HalfAcc(v, 0)` is a running sum; a product is kept unrounded until it is added.
#[derive(Debug, Clone, Copy, Default)]
struct HalfAcc(f32);
impl std::ops::Add for HalfAcc {
    type Output = Self;
    fn add(self, b: Self) -> Self {
        HalfAcc(f16::from_f32(self.0 + b.0).to_f32())
    }
}
impl std::ops::Mul for HalfAcc {
    type Output = Self;
    fn mul(self, b: Self) -> Self {
        HalfAcc(self.0 * b.0)
    }
}
impl Accumulate for f16 {
    type Acc = HalfAcc;
    fn widen(self) -> HalfAcc {
        HalfAcc(self.to_f32())
    }
    fn narrow(a: HalfAcc) -> Self {
        f16::from_f32(a.0)
    }
}
impl Accumulate for bf16 {
    type Acc = f32;
    fn widen(self) -> f32 {
        self.to_f32()
    }
    fn narrow(a: f32) -> Self {
        bf16::from_f32(a)
    }
}

/// `DepthwiseConv2dNative` (NHWC input `[batch, height, width, in]`, filter `[height, width,
/// in, multiplier]`, output channel `c * multiplier + m`): TensorFlow's
/// `tf.raw_ops.DepthwiseConv2dNative`, computed directly (one pass over the taps per output
/// row, a loop over channels the compiler vectorises; with fewer than 16 channels, one filter
/// each and stride 1 along the row, 16 consecutive elements of a row, whatever their
/// channels, to a vector), rows split across the rayon pool.
///
/// Accuracy: `|ours - tf| <= 2 * K * eps * sum_taps |x| |w|` per element (`K = kh*kw`; plus one
/// rounding for `half` and `bfloat16`, which accumulate in `float`), asserted over the
/// recorded vectors.
///
/// # Errors
/// TensorFlow's texts (types; strides, dilations, which the Eigen kernels of `double` and
/// `half` refuse, paddings; ranks and depths); allocation errors.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::nn::{depthwise_conv2d_native, Padding};
/// // Two channels, a 1x1 filter scaling them by 2 and 3.
/// let x = Tensor::from_vec(vec![1.0f32, 10.0, 2.0, 20.0], [1i64, 1, 2, 2].as_slice())?;
/// let w = Tensor::from_vec(vec![2.0f32, 3.0], [1i64, 1, 2, 1].as_slice())?;
/// let ones = [1i64, 1, 1, 1];
/// let y = depthwise_conv2d_native(&x, &w, (&ones, Padding::Valid, &[], &ones))?;
/// assert_eq!(y.to_vec::<f32>()?, vec![2.0, 30.0, 4.0, 60.0]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn depthwise_conv2d_native(
    input: &Tensor,
    filter: &Tensor,
    attrs: ConvAttrs<'_>,
) -> Result<Tensor> {
    conv_with(ConvOp::DepthwiseConv2dNative, input, filter, attrs, None)
}

/// [`depthwise_conv2d_native`] on operands [`check_conv`] passed.
fn depthwise_checked((input, filter): (&Tensor, &Tensor), c: Checked<'_, '_>) -> Result<Tensor> {
    const OP: &str = "DepthwiseConv2dNative";
    let dtype = input.dtype();
    let Checked { p, x, f, e } = c;
    if x[3] != f[2] {
        let m = if onednn(dtype) {
            format!(
                "input depth must be evenly divisible by filter depth: {} vs {}",
                x[3], f[2]
            )
        } else {
            format!(
                "input and filter must have the same depth: {} vs {}",
                x[3], f[2]
            )
        };
        return Err(Error::invalid_argument(OP, m));
    }
    let (h, w) = p.axes(OP, x, f)?;
    let out_c = x[3]
        .checked_mul(f[3])
        .ok_or_else(|| Error::invalid_argument(OP, "output depth overflows"))?;
    let shape = TensorShape::new(&[x[0], h.output as i64, w.output as i64, out_c])?;
    let (cin, mult) = (x[3] as usize, f[3] as usize);
    #[allow(
        clippy::too_many_arguments,
        reason = "one convolution's operands and geometry"
    )]
    fn go<T: Accumulate>(
        input: &Tensor,
        filter: &Tensor,
        shape: TensorShape,
        h: Axis,
        w: Axis,
        cin: usize,
        mult: usize,
        epi: BlockFn<'_, T>,
    ) -> Result<Tensor> {
        let (x, f) = (data::<T>(input)?, data::<T>(filter)?);
        let fw: Vec<T::Acc> = f.iter().map(|v| v.widen()).collect();
        // For `Depthwise::flat`: each tap's filter repeated along `DIRECT_LANES + in`.
        let tiled: Vec<T::Acc> = if Depthwise::<T>::flat_applies(&w, cin, mult) {
            let span = DIRECT_LANES + cin;
            let taps = h.window * w.window;
            (0..taps * span)
                .map(|i| fw[i / span * cin + i % span % cin])
                .collect()
        } else {
            Vec::new()
        };
        let d = Depthwise {
            x: &x,
            fw: &fw,
            tiled: &tiled,
            h,
            w,
            cin,
            mult,
        };
        output::<T>(T::DTYPE, shape, |out| {
            let oc = cin * mult;
            let row_len = w.output * oc;
            if row_len == 0 {
                return Ok(());
            }
            // One output row at a time (`Depthwise::row`), compiled for the CPU's widest
            // vectors.
            let parallel =
                out.len().saturating_mul(h.window * w.window) >= DEPTHWISE_PARALLEL_MIN_MACS;
            let new_acc = || vec![T::Acc::default(); row_len];
            for_each_chunk(out, row_len, parallel, new_acc, |acc, (r, row)| {
                let (n, oy) = (r / h.output, r % h.output);
                vectorized_wide(
                    #[inline(always)]
                    || d.row((n, oy), acc, row),
                );
                if let Some(e) = epi {
                    e(row);
                }
            });
            Ok(())
        })
    }
    match dtype {
        DataType::FLOAT => go::<f32>(input, filter, shape, h, w, cin, mult, e),
        DataType::DOUBLE => go::<f64>(input, filter, shape, h, w, cin, mult, None),
        DataType::HALF => go::<f16>(input, filter, shape, h, w, cin, mult, None),
        DataType::BFLOAT16 => go::<bf16>(input, filter, shape, h, w, cin, mult, None),
        other => Err(Error::Internal(format!("depthwise on {}", other.name()))),
    }
}

/// The fewest multiply-adds a depthwise convolution splits across the rayon pool: below, its
/// rows run on the caller's thread (handing them to other threads and waiting costs more).
const DEPTHWISE_PARALLEL_MIN_MACS: usize = 1 << 18;

/// Output channels a direct convolution keeps in registers at once.
const DIRECT_LANES: usize = 16;
/// Output pixels a direct convolution computes at once (each filter row loaded serves all).
const DIRECT_PIXELS: usize = 4;
/// Output pixels a depthwise block sums at once: enough independent sums (one vector each)
/// to hide the adds' latency.
const DEPTHWISE_PIXELS: usize = 8;

/// `acc[p][j] += xs[p] * fr[j]`: a block's multiply-adds over whole arrays, so that the
/// sums stay in vector registers.
#[inline(always)]
fn madd_block<T, const P: usize>(
    acc: &mut [[T; DIRECT_LANES]; P],
    xs: &[T; P],
    fr: &[T; DIRECT_LANES],
) where
    T: Copy + std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
{
    for p in 0..P {
        for j in 0..DIRECT_LANES {
            acc[p][j] = acc[p][j] + xs[p] * fr[j];
        }
    }
}

/// Blocks of `P` output pixels from `ox` by [`DIRECT_LANES`] channels from `c0`, summed in
/// registers over every tap and written to `row`.
#[inline(always)]
#[allow(
    clippy::too_many_arguments,
    reason = "one block's operands and geometry"
)]
fn direct_block<T, const P: usize>(
    rows: &[T],
    f: &[T],
    (kh, cin, cout_p, span): (usize, usize, usize, usize),
    w: &Axis,
    (ox, c0): (usize, usize),
    row: &mut [T],
    cout: usize,
) where
    T: Copy + Default + std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
{
    let mut acc = [[T::default(); DIRECT_LANES]; P];
    for ky in 0..kh {
        let prow = &rows[ky * span * cin..][..span * cin];
        if w.dilation == 1 {
            // A filter row's taps (kx, ci) are one run of `kw * cin` input values per pixel.
            let taps = w.window * cin;
            let frow = &f[ky * taps * cout_p..][..taps * cout_p];
            let xs: [&[T]; P] = std::array::from_fn(|p| &prow[(ox + p) * w.stride * cin..][..taps]);
            for t in 0..taps {
                let Ok(fr) =
                    <&[T; DIRECT_LANES]>::try_from(&frow[t * cout_p + c0..][..DIRECT_LANES])
                else {
                    continue;
                };
                let xv: [T; P] = std::array::from_fn(|p| xs[p][t]);
                madd_block(&mut acc, &xv, fr);
            }
            continue;
        }
        for kx in 0..w.window {
            let taps = &f[(ky * w.window + kx) * cin * cout_p..][..cin * cout_p];
            let base: [usize; P] =
                std::array::from_fn(|p| ((ox + p) * w.stride + kx * w.dilation) * cin);
            for ci in 0..cin {
                let Ok(fr) =
                    <&[T; DIRECT_LANES]>::try_from(&taps[ci * cout_p + c0..][..DIRECT_LANES])
                else {
                    continue;
                };
                let xs: [T; P] = std::array::from_fn(|p| prow[base[p] + ci]);
                madd_block(&mut acc, &xs, fr);
            }
        }
    }
    // Each pixel's sums copied out whole first: indexing `acc` itself by the run-time width
    // would keep it in memory (stored and reloaded at every tap) instead of in registers.
    let width = DIRECT_LANES.min(cout - c0);
    for p in 0..P {
        let sums: [T; DIRECT_LANES] = acc[p];
        row[(ox + p) * cout + c0..][..width].copy_from_slice(&sums[..width]);
    }
}

/// One output row of a direct convolution (see [`Conv::compute_direct`]) from `rows`, the `kh`
/// input rows it reads, zero-padded to `span` pixels: blocks of [`DIRECT_PIXELS`] pixels
/// (then single pixels) by [`DIRECT_LANES`] channels. `f` is the filter as
/// `[kh * kw * in, cout_p]`, its channels zero-padded to a multiple of the lanes.
/// `#[inline(always)]` so that it is compiled inside `vectorized_wide`.
#[inline(always)]
fn direct_row<T>(rows: &[T], f: &[T], geo: (usize, usize, usize, usize), w: &Axis, row: &mut [T])
where
    T: Copy + Default + std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
{
    let cout = row.len() / w.output;
    for c0 in (0..cout).step_by(DIRECT_LANES) {
        let mut ox = 0;
        while ox + DIRECT_PIXELS <= w.output {
            direct_block::<T, DIRECT_PIXELS>(rows, f, geo, w, (ox, c0), row, cout);
            ox += DIRECT_PIXELS;
        }
        while ox < w.output {
            direct_block::<T, 1>(rows, f, geo, w, (ox, c0), row, cout);
            ox += 1;
        }
    }
}

/// A depthwise convolution's operands and geometry: the input, the filter widened to the
/// accumulator's type (and tiled, for [`Depthwise::flat`]), the two spatial axes, the input
/// depth and the channel multiplier.
struct Depthwise<'a, T: Accumulate> {
    x: &'a [T],
    fw: &'a [T::Acc],
    /// Where [`Depthwise::flat`] applies, tap `t`'s filter repeated: element `i` of tap `t`'s
    /// `DIRECT_LANES + in` is the filter's channel `i % in` (empty otherwise).
    tiled: &'a [T::Acc],
    h: Axis,
    w: Axis,
    cin: usize,
    mult: usize,
}

impl<T: Accumulate> Depthwise<'_, T> {
    /// One output row of a depthwise convolution. Each sum takes its taps in `(ky, kx)`
    /// order, skipping the padded ones. With one filter per channel (the usual case) and at
    /// least [`DIRECT_LANES`] channels, pixels whose taps all lie inside the input row go in
    /// blocks of [`DEPTHWISE_PIXELS`] (or [`DIRECT_PIXELS`]) pixels by [`DIRECT_LANES`]
    /// channels whose sums stay in registers ([`depthwise_block`]); the other pixels and
    /// channels run through `acc` (a few KiB, in L1), the taps outermost
    /// ([`Depthwise::pixels`]). `#[inline(always)]` so that it is compiled inside
    /// `vectorized_wide`.
    #[inline(always)]
    fn row(&self, (n, oy): (usize, usize), acc: &mut [T::Acc], row: &mut [T]) {
        let (x, fw, h, w) = (self.x, self.fw, &self.h, &self.w);
        let (cin, mult) = (self.cin, self.mult);
        // The filter rows with an input row, and where that row starts in `x`.
        let mut rows = [(0usize, 0usize); 16];
        let mut nrows = 0;
        for ky in 0..h.window {
            let Some(iy) = h.source(oy, ky) else { continue };
            if nrows == rows.len() {
                // A window taller than 16: the general loop alone.
                return self.pixels((n, oy), 0..w.output, acc, row);
            }
            rows[nrows] = (ky, (n * h.input + iy) * w.input * cin);
            nrows += 1;
        }
        let rows = &rows[..nrows];
        let inside = |ox: usize| w.source(ox, 0).is_some() && w.source(ox, w.window - 1).is_some();
        if Self::flat_applies(w, cin, mult) {
            // The pixels with every tap inside the row are one run (stride 1).
            let lo = (0..w.output).find(|&ox| inside(ox)).unwrap_or(w.output);
            let hi = (lo..w.output).find(|&ox| !inside(ox)).unwrap_or(w.output);
            if lo > 0 {
                self.pixels((n, oy), 0..lo, acc, row);
            }
            self.flat(rows, (lo * cin, hi * cin), row);
            if hi < w.output {
                self.pixels((n, oy), hi..w.output, acc, row);
            }
            return;
        }
        if mult != 1 || cin < DIRECT_LANES || w.window == 0 {
            return self.pixels((n, oy), 0..w.output, acc, row);
        }
        let full = cin / DIRECT_LANES * DIRECT_LANES;
        let mut ox = 0;
        while ox < w.output {
            if !inside(ox) {
                self.pixels((n, oy), ox..ox + 1, acc, row);
                ox += 1;
                continue;
            }
            let fits = |p: usize| ox + p <= w.output && inside(ox + p - 1);
            let p = if fits(DEPTHWISE_PIXELS) {
                DEPTHWISE_PIXELS
            } else if fits(DIRECT_PIXELS) {
                DIRECT_PIXELS
            } else {
                1
            };
            for c0 in (0..full).step_by(DIRECT_LANES) {
                match p {
                    DEPTHWISE_PIXELS => {
                        depthwise_block::<T, DEPTHWISE_PIXELS>(x, fw, rows, w, cin, (ox, c0), row)
                    }
                    DIRECT_PIXELS => {
                        depthwise_block::<T, DIRECT_PIXELS>(x, fw, rows, w, cin, (ox, c0), row)
                    }
                    _ => depthwise_block::<T, 1>(x, fw, rows, w, cin, (ox, c0), row),
                }
            }
            if full < cin {
                // The channels past the last whole block, through `acc`.
                for px in ox..ox + p {
                    let a = &mut acc[..cin - full];
                    a.fill(T::Acc::default());
                    for &(ky, base) in rows {
                        for kx in 0..w.window {
                            let ix = px * w.stride + kx * w.dilation - w.pad_before;
                            let ft = &fw[(ky * w.window + kx) * cin + full..][..cin - full];
                            let xin = &x[base + ix * cin + full..][..cin - full];
                            for ((a, &xv), &fv) in a.iter_mut().zip(xin).zip(ft) {
                                *a = *a + xv.widen() * fv;
                            }
                        }
                    }
                    for (o, &a) in row[px * cin + full..(px + 1) * cin]
                        .iter_mut()
                        .zip(a.iter())
                    {
                        *o = T::narrow(a);
                    }
                }
            }
            ox += p;
        }
    }

    /// Whether [`Depthwise::flat`] computes the pixels with every tap inside the row: one
    /// filter per channel, fewer than [`DIRECT_LANES`] channels, stride 1 along the row.
    fn flat_applies(w: &Axis, cin: usize, mult: usize) -> bool {
        mult == 1 && (1..DIRECT_LANES).contains(&cin) && w.stride == 1 && w.window > 0
    }

    /// The output row's elements `start..end` (whole pixels, every tap of each inside the
    /// input row), for [`Depthwise::flat_applies`] geometries. Seen flat, element `j` of the
    /// row (pixel `j / in`, channel `j % in`) sums `x[j + shift] * f[j % in]` over the taps
    /// (`shift` the tap's offset along the row), so that [`DIRECT_LANES`] consecutive
    /// elements, whatever their channels, are one vector, multiplied by the tap's filter
    /// repeated (`tiled`, read from `j % in`), and blocks of them keep their sums in
    /// registers. Each sum takes its taps in `(ky, kx)` order, as on the other paths, so the
    /// bits are theirs.
    #[inline(always)]
    fn flat(&self, rows: &[(usize, usize)], (start, end): (usize, usize), row: &mut [T]) {
        let mut j = start;
        while j + DEPTHWISE_PIXELS * DIRECT_LANES <= end {
            self.flat_block::<DEPTHWISE_PIXELS>(rows, j, row);
            j += DEPTHWISE_PIXELS * DIRECT_LANES;
        }
        while j + DIRECT_LANES <= end {
            self.flat_block::<1>(rows, j, row);
            j += DIRECT_LANES;
        }
        let (w, cin) = (&self.w, self.cin);
        for (j, o) in row.iter_mut().enumerate().take(end).skip(j) {
            let mut a = T::Acc::default();
            for &(ky, base) in rows {
                for kx in 0..w.window {
                    let xi = base + j + kx * w.dilation * cin - w.pad_before * cin;
                    let fi = (ky * w.window + kx) * cin + j % cin;
                    a = a + self.x[xi].widen() * self.fw[fi];
                }
            }
            *o = T::narrow(a);
        }
    }

    /// `P` vectors of [`Depthwise::flat`] from element `j` of the row.
    #[inline(always)]
    fn flat_block<const P: usize>(&self, rows: &[(usize, usize)], j: usize, row: &mut [T]) {
        let (w, cin) = (&self.w, self.cin);
        let span = DIRECT_LANES + cin;
        let mut acc = [[T::Acc::default(); DIRECT_LANES]; P];
        for &(ky, base) in rows {
            for kx in 0..w.window {
                let tile = &self.tiled[(ky * w.window + kx) * span..][..span];
                let x0 = base + j + kx * w.dilation * cin - w.pad_before * cin;
                let Some(xs) = self.x.get(x0..x0 + P * DIRECT_LANES) else {
                    continue;
                };
                for (p, a) in acc.iter_mut().enumerate() {
                    let phase = (j + p * DIRECT_LANES) % cin;
                    let (Ok(xv), Ok(fv)) = (
                        <&[T; DIRECT_LANES]>::try_from(&xs[p * DIRECT_LANES..][..DIRECT_LANES]),
                        <&[T::Acc; DIRECT_LANES]>::try_from(&tile[phase..][..DIRECT_LANES]),
                    ) else {
                        continue;
                    };
                    for l in 0..DIRECT_LANES {
                        a[l] = a[l] + xv[l].widen() * fv[l];
                    }
                }
            }
        }
        for (p, a) in acc.iter().enumerate() {
            let out = &mut row[j + p * DIRECT_LANES..][..DIRECT_LANES];
            for (o, &v) in out.iter_mut().zip(a) {
                *o = T::narrow(v);
            }
        }
    }

    /// The output pixels `pixels` of a depthwise convolution's row through `acc`, the taps
    /// outermost, so that each step is a loop over a pixel's channels; each sum takes its taps in
    /// `(ky, kx)` order, skipping the padded ones.
    #[inline(always)]
    fn pixels(
        &self,
        at: (usize, usize),
        pixels: std::ops::Range<usize>,
        acc: &mut [T::Acc],
        row: &mut [T],
    ) {
        let (n, oy) = at;
        let (x, fw, h, w) = (self.x, self.fw, &self.h, &self.w);
        let (cin, mult) = (self.cin, self.mult);
        let oc = cin * mult;
        let acc = &mut acc[pixels.start * oc..pixels.end * oc];
        acc.fill(T::Acc::default());
        for ky in 0..h.window {
            let Some(iy) = h.source(oy, ky) else { continue };
            let xrow = &x[(n * h.input + iy) * w.input * cin..][..w.input * cin];
            for kx in 0..w.window {
                let ft = &fw[(ky * w.window + kx) * oc..][..oc];
                for (ox, a) in pixels.clone().zip(acc.chunks_exact_mut(oc)) {
                    let Some(ix) = w.source(ox, kx) else { continue };
                    let xin = &xrow[ix * cin..][..cin];
                    if mult == 1 {
                        for ((a, &xv), &fv) in a.iter_mut().zip(xin).zip(ft) {
                            *a = *a + xv.widen() * fv;
                        }
                    } else {
                        for ((a, &xv), fm) in
                            a.chunks_exact_mut(mult).zip(xin).zip(ft.chunks_exact(mult))
                        {
                            let xv = xv.widen();
                            for (a, &fv) in a.iter_mut().zip(fm) {
                                *a = *a + xv * fv;
                            }
                        }
                    }
                }
            }
        }
        let out = &mut row[pixels.start * oc..pixels.end * oc];
        for (o, &a) in out.iter_mut().zip(acc.iter()) {
            *o = T::narrow(a);
        }
    }
}

/// `P` pixels from `ox` (every tap inside the input row) by [`DIRECT_LANES`] channels from
/// `c0` of a depthwise convolution with one filter per channel, summed in registers over the
/// taps of `rows` (`(ky, start of the input row in x)`), in `(ky, kx)` order.
#[inline(always)]
fn depthwise_block<T: Accumulate, const P: usize>(
    x: &[T],
    fw: &[T::Acc],
    rows: &[(usize, usize)],
    w: &Axis,
    cin: usize,
    (ox, c0): (usize, usize),
    row: &mut [T],
) {
    let mut acc = [[T::Acc::default(); DIRECT_LANES]; P];
    for &(ky, base) in rows {
        for kx in 0..w.window {
            let Ok(ft) = <&[T::Acc; DIRECT_LANES]>::try_from(
                &fw[(ky * w.window + kx) * cin + c0..][..DIRECT_LANES],
            ) else {
                continue;
            };
            // The block's pixels read this tap at one stride apart: one slice for them all,
            // so that each pixel's vector is an offset into it (no index arithmetic and bounds
            // check of its own, which cost as much as the multiply-adds).
            let step = w.stride * cin;
            let start = base + (ox * w.stride + kx * w.dilation - w.pad_before) * cin + c0;
            let Some(span) = x.get(start..start + (P - 1) * step + DIRECT_LANES) else {
                continue;
            };
            for (p, a) in acc.iter_mut().enumerate() {
                let Ok(xs) = <&[T; DIRECT_LANES]>::try_from(&span[p * step..][..DIRECT_LANES])
                else {
                    continue;
                };
                for j in 0..DIRECT_LANES {
                    a[j] = a[j] + xs[j].widen() * ft[j];
                }
            }
        }
    }
    for (p, a) in acc.iter().enumerate() {
        let out = &mut row[(ox + p) * cin + c0..][..DIRECT_LANES];
        for (o, &v) in out.iter_mut().zip(a) {
            *o = T::narrow(v);
        }
    }
}

fn rank4(s: &PartialTensorShape) -> Result<[i64; 4]> {
    match s.dims() {
        None => Ok([-1; 4]),
        Some(d) if d.len() == 4 => Ok([d[0], d[1], d[2], d[3]]),
        Some(d) => Err(Error::invalid_argument(
            "shape",
            format!("Shape must be rank 4 but is rank {}", d.len()),
        )),
    }
}

/// `Conv2D`'s shape function (NHWC): `[batch, out_rows, out_cols, out_depth]`, unknown dims
/// staying unknown.
///
/// # Errors
/// TensorFlow's shape-function texts: `Shape must be rank 4 but is rank 3`, `Conv2D on data
/// format NHWC requires the stride attribute to contain 4 values, but got: 3`, `Depth of input
/// (3) is not a multiple of input depth of filter (2)`, `Negative dimension size caused by
/// subtracting 3 from 2`, the padding checks.
///
/// ```
/// use tensorcast_core::PartialTensorShape;
/// use tensorcast_kernels::nn::{conv2d_shape, Padding};
/// let x = PartialTensorShape::new(&[-1, 7, 7, 3])?;
/// let w = PartialTensorShape::new(&[3, 3, 3, 4])?;
/// let y = conv2d_shape(&x, &w, (&[1, 2, 2, 1], Padding::Same, &[], &[1, 1, 1, 1]))?;
/// assert_eq!(y.dims(), Some(&[-1i64, 4, 4, 4][..]));
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn conv2d_shape(
    input: &PartialTensorShape,
    filter: &PartialTensorShape,
    attrs: ConvAttrs<'_>,
) -> Result<PartialTensorShape> {
    conv_shape("Conv2D", input, filter, attrs, false)
}

/// `DepthwiseConv2dNative`'s shape function (NHWC): `[batch, out_rows, out_cols, in *
/// multiplier]`.
///
/// # Errors
/// As [`conv2d_shape`], and `Dimensions must be equal, but are 2 and 3` when the input's and
/// the filter's depths differ.
///
/// ```
/// use tensorcast_core::PartialTensorShape;
/// use tensorcast_kernels::nn::{depthwise_conv2d_native_shape, Padding};
/// let x = PartialTensorShape::new(&[1, 5, 5, 2])?;
/// let w = PartialTensorShape::new(&[3, 3, 2, 2])?;
/// let ones = [1i64, 1, 1, 1];
/// let y = depthwise_conv2d_native_shape(&x, &w, (&ones, Padding::Valid, &[], &ones))?;
/// assert_eq!(y.dims(), Some(&[1i64, 3, 3, 4][..]));
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn depthwise_conv2d_native_shape(
    input: &PartialTensorShape,
    filter: &PartialTensorShape,
    attrs: ConvAttrs<'_>,
) -> Result<PartialTensorShape> {
    conv_shape("DepthwiseConv2D", input, filter, attrs, true)
}

fn conv_shape(
    name: &str,
    input: &PartialTensorShape,
    filter: &PartialTensorShape,
    (strides, padding, explicit_paddings, dilations): ConvAttrs<'_>,
    depthwise: bool,
) -> Result<PartialTensorShape> {
    let err = |m: String| Error::invalid_argument("shape", m);
    let x = rank4(input)?;
    let f = rank4(filter)?;
    // TensorFlow's depthwise shape function names the dilations attribute in the plural,
    // Conv2D's in the singular.
    let four_values = |values: &[i64], depthwise_attr: &str, conv_attr: &str| {
        let got = values.len();
        if got == 4 {
            Ok(())
        } else if depthwise {
            Err(err(format!(
                "DepthwiseConv2D requires the {depthwise_attr} attribute to contain 4 values, but got: {got}"
            )))
        } else {
            Err(err(format!(
                "{name} on data format NHWC requires the {conv_attr} attribute to contain 4 values, but got: {got}"
            )))
        }
    };
    four_values(strides, "stride", "stride")?;
    four_values(dilations, "dilations", "dilation")?;
    let out_depth = if depthwise {
        if strides[1] != strides[2] {
            return Err(err(
                "Current implementation only supports equal length strides in the row and column dimensions."
                    .into(),
            ));
        }
        if x[3] >= 0 && f[2] >= 0 && x[3] != f[2] {
            return Err(err(format!(
                "Dimensions must be equal, but are {} and {}",
                x[3], f[2]
            )));
        }
        let c = if x[3] >= 0 { x[3] } else { f[2] };
        if c >= 0 && f[3] >= 0 {
            c * f[3]
        } else {
            -1
        }
    } else {
        if x[3] >= 0 && f[2] > 0 && x[3] % f[2] != 0 {
            return Err(err(format!(
                "Depth of input ({}) is not a multiple of input depth of filter ({})",
                x[3], f[2]
            )));
        }
        if x[3] > 0 && f[2] > 0 && f[3] >= 0 {
            let groups = x[3] / f[2];
            if f[3] % groups != 0 {
                return Err(err(format!(
                    "Depth of output ({}) is not a multiple of the number of groups ({groups})",
                    f[3]
                )));
            }
        }
        f[3]
    };
    check_explicit("shape", padding, explicit_paddings)?;
    let (ph, pw) = if padding == Padding::Explicit {
        let p = explicit_paddings;
        ((p[2], p[3]), (p[4], p[5]))
    } else {
        ((0, 0), (0, 0))
    };
    // Rows and columns: dims 1 and 2 of the input, 0 and 1 of the filter.
    let dim = |d: usize, explicit| {
        let attrs = super::window::AxisAttrs {
            window: f[d - 1],
            dilation: dilations[d],
            stride: strides[d],
            padding,
            explicit,
        };
        axis_shape(x[d], attrs)
    };
    PartialTensorShape::new(&[x[0], dim(1, ph)?, dim(2, pw)?, out_depth])
}

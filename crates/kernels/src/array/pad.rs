//! `Pad`, `PadV2`, `MirrorPad` and `Tile`.

use std::ops::Range;

use tensorcast_core::{Code, DataType, Error, PartialTensorShape, Result, Tensor, TensorShape};

use super::common::{
    dims_text, dt, index_values, invalid, no_kernel, oom, partial, rank_of_input_and_rows, INT32_64,
};
use super::engine::{dense_strides, produce, strided, Elem, Kernel, Sink, StridedView};

/// How the border is filled.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Border {
    /// Input 1's single element.
    Constant,
    /// Mirrored without the edge element.
    Reflect,
    /// Mirrored with the edge element.
    Symmetric,
}

/// Unit = one output row (the innermost axis).
struct PadKernel {
    in_dims: Vec<usize>,
    in_strides: Vec<usize>,
    out_dims: Vec<usize>,
    before: Vec<usize>,
    border: Border,
}

impl PadKernel {
    /// The input coordinate of output coordinate `o` on axis `d`, `None` in a constant border.
    fn source(&self, d: usize, o: usize) -> Option<usize> {
        let n = self.in_dims[d] as i64;
        let c = o as i64 - self.before[d] as i64;
        let m = match self.border {
            Border::Constant => {
                if c < 0 || c >= n {
                    return None;
                }
                c
            }
            Border::Reflect => {
                if c < 0 {
                    -c
                } else if c >= n {
                    2 * n - 2 - c
                } else {
                    c
                }
            }
            Border::Symmetric => {
                if c < 0 {
                    -c - 1
                } else if c >= n {
                    2 * n - 1 - c
                } else {
                    c
                }
            }
        };
        Some(m as usize)
    }
}

impl Kernel for PadKernel {
    fn run<T: Elem, S: Sink<T>>(&self, inputs: &[&[T]], units: Range<usize>, sink: &mut S) {
        let src = inputs[0];
        let rank = self.out_dims.len();
        let last = rank - 1;
        let width = self.out_dims[last];
        let n = self.in_dims[last];
        let bl = self.before[last];
        let al = width - bl - n;
        let mut idx = vec![0usize; last];
        for r in units {
            let mut q = r;
            for d in (0..last).rev() {
                idx[d] = q % self.out_dims[d];
                q /= self.out_dims[d];
            }
            let mut row = 0usize;
            let mut inside = true;
            for (d, &o) in idx.iter().enumerate() {
                match self.source(d, o) {
                    Some(s) => row += s * self.in_strides[d],
                    None => {
                        inside = false;
                        break;
                    }
                }
            }
            if !inside {
                sink.fill(&inputs[1][0], width);
                continue;
            }
            match self.border {
                Border::Constant => {
                    sink.fill(&inputs[1][0], bl);
                    sink.slice(&src[row..row + n]);
                    sink.fill(&inputs[1][0], al);
                }
                Border::Reflect | Border::Symmetric => {
                    let sym = usize::from(self.border == Border::Symmetric);
                    if bl > 0 {
                        sink.strided(src, row + bl - sym, -1, bl);
                    }
                    sink.slice(&src[row..row + n]);
                    if al > 0 {
                        sink.strided(src, row + n - 2 + sym, -1, al);
                    }
                }
            }
        }
    }
}

fn paddings_of(
    op: &'static str,
    input: &Tensor,
    paddings: &Tensor,
    lower: bool,
) -> Result<Vec<(i64, i64)>> {
    let p = index_values(op, "Tpaddings", paddings, INT32_64)?;
    let ps = paddings.shape().dim_sizes();
    if ps.len() != 2 || ps[1] != 2 {
        return Err(invalid(
            op,
            format!(
                "paddings must be a matrix with 2 columns: {}",
                paddings.shape()
            ),
        ));
    }
    if ps[0] != input.dims() as i64 {
        return Err(invalid(
            op,
            format!(
                "The first dimension of paddings must be the rank of inputs{} {}",
                paddings.shape(),
                input.shape()
            ),
        ));
    }
    let mut out = Vec::with_capacity(input.dims());
    for pair in p.chunks(2) {
        if pair[0] < 0 || pair[1] < 0 {
            return Err(invalid(
                op,
                format!(
                    "{}addings must be non-negative: {} {}",
                    if lower { "p" } else { "P" },
                    pair[0],
                    pair[1]
                ),
            ));
        }
        out.push((pair[0], pair[1]));
    }
    Ok(out)
}

fn padded(
    op: &'static str,
    input: &Tensor,
    pads: &[(i64, i64)],
    fill: &Tensor,
    border: Border,
) -> Result<Tensor> {
    let d = input.shape().dim_sizes();
    let mut out = Vec::with_capacity(d.len());
    for (i, &(b, a)) in pads.iter().enumerate() {
        let v = d[i]
            .checked_add(b)
            .and_then(|v| v.checked_add(a))
            .ok_or_else(|| {
                invalid(
                    op,
                    format!(
                        "Encountered overflow when multiplying {} with {}, result: -1",
                        d[i], b
                    ),
                )
            })?;
        out.push(v);
    }
    let shape = TensorShape::new(&out).map_err(|_| oom(op, input.dtype(), &out))?;
    if d.is_empty() || pads.iter().all(|&(b, a)| b == 0 && a == 0) {
        return Ok(input.clone());
    }
    if shape.num_elements() == 0 {
        return Tensor::new(input.dtype(), &shape);
    }
    let mut in_dims = input.shape().dims_usize();
    let mut out_dims: Vec<usize> = out.iter().map(|&v| v as usize).collect();
    let mut before: Vec<usize> = pads.iter().map(|&(b, _)| b as usize).collect();
    if border == Border::Constant {
        // Unpadded trailing axes join the innermost padded one: a row becomes, say, a whole
        // padded image row of pixels rather than one pixel's channels.
        while before.len() >= 2 {
            let last = before.len() - 1;
            if before[last] != 0 || in_dims[last] != out_dims[last] {
                break;
            }
            let inner = in_dims[last];
            for v in [&mut in_dims, &mut out_dims, &mut before] {
                v.pop();
                if let Some(l) = v.last_mut() {
                    *l *= inner;
                }
            }
        }
    }
    let kernel = PadKernel {
        in_strides: dense_strides(&in_dims)
            .iter()
            .map(|&s| s as usize)
            .collect(),
        in_dims,
        out_dims,
        before,
        border,
    };
    let width = *kernel.out_dims.last().unwrap_or(&1);
    produce(op, input.dtype(), &shape, &[input, fill], width, &kernel)
}

fn pad_refused(d: DataType) -> bool {
    matches!(
        d,
        DataType::QINT16
            | DataType::QUINT16
            | DataType::FLOAT8_E4M3FN
            | DataType::FLOAT8_E5M2
            | DataType::INT4
            | DataType::UINT4
    )
}

/// TensorFlow's `Pad`: `input` with `paddings[i] = [before, after]` zeros (empty strings) on
/// each axis (`paddings` an `int32`/`int64` matrix of shape `[rank, 2]`). Exact bits; every
/// dtype but `qint16`, `quint16`, the float8 types, `int4`, `uint4`.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::array::pad;
/// let x = Tensor::vector(&[1i32, 2]);
/// let p = Tensor::from_vec(vec![1i32, 2], &[1i64, 2])?;
/// assert_eq!(pad(&x, &p)?.to_vec::<i32>()?, vec![0, 1, 2, 0, 0]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// TensorFlow's texts (`paddings must be a matrix with 2 columns: [..]`, `The first dimension
/// of paddings must be the rank of inputs[..] [..]`, `Paddings must be non-negative: B A`); no
/// kernel (`NOT_FOUND`).
pub fn pad(input: &Tensor, paddings: &Tensor) -> Result<Tensor> {
    let zero = Tensor::new(input.dtype(), TensorShape::scalar())?;
    pad_with("Pad", input, paddings, &zero)
}

/// TensorFlow's `PadV2`: [`pad`] with the border value `constant_values` (a scalar of the
/// input's dtype).
///
/// # Errors
/// As [`pad`], and `constant_values must be a scalar. Found: [..]`.
pub fn pad_v2(input: &Tensor, paddings: &Tensor, constant_values: &Tensor) -> Result<Tensor> {
    if constant_values.dims() != 0 {
        return Err(invalid(
            "PadV2",
            format!(
                "constant_values must be a scalar. Found: {}",
                constant_values.shape()
            ),
        ));
    }
    pad_with("PadV2", input, paddings, constant_values)
}

fn pad_with(op: &'static str, input: &Tensor, paddings: &Tensor, fill: &Tensor) -> Result<Tensor> {
    index_values(op, "Tpaddings", paddings, INT32_64)?;
    if pad_refused(input.dtype()) {
        return Err(no_kernel(
            op,
            &format!(
                "T={}, Tpaddings={}",
                dt(input.dtype()),
                dt(paddings.dtype())
            ),
        ));
    }
    let pads = paddings_of(op, input, paddings, false)?;
    padded(op, input, &pads, fill, Border::Constant)
}

/// TensorFlow's `MirrorPad`: `input` padded with its own mirror image, `REFLECT` (without the
/// edge element: each padding `<` the dim) or `SYMMETRIC` (with it: `<=` the dim).
///
/// # Errors
/// TensorFlow's texts (`paddings must be less than the dimension size: B, A not less than D`,
/// `paddings must be non-negative: B A`, ...); an unknown mode; no kernel (`NOT_FOUND`).
pub fn mirror_pad(input: &Tensor, paddings: &Tensor, mode: &str) -> Result<Tensor> {
    const OP: &str = "MirrorPad";
    index_values(OP, "Tpaddings", paddings, INT32_64)?;
    let border = match mode {
        "REFLECT" => Border::Reflect,
        "SYMMETRIC" => Border::Symmetric,
        other => {
            return Err(invalid(
                OP,
                format!("mode must be either REFLECT or SYMMETRIC, got '{other}'"),
            ))
        }
    };
    if pad_refused(input.dtype()) {
        return Err(no_kernel(
            OP,
            &format!(
                "T={}, Tpaddings={}, mode=\"{mode}\"",
                dt(input.dtype()),
                dt(paddings.dtype())
            ),
        ));
    }
    let pads = paddings_of(OP, input, paddings, true)?;
    let offset = i64::from(border == Border::Reflect);
    for (i, &(b, a)) in pads.iter().enumerate() {
        let d = input.shape().dim_sizes()[i];
        if b > d - offset || a > d - offset {
            return Err(invalid(
                OP,
                if border == Border::Reflect {
                    format!(
                        "paddings must be less than the dimension size: {b}, {a} not less than {d}"
                    )
                } else {
                    format!("paddings must be no greater than the dimension size: {b}, {a} greater than {d}")
                },
            ));
        }
    }
    let zero = Tensor::new(input.dtype(), TensorShape::scalar())?;
    padded(OP, input, &pads, &zero, border)
}

/// The shape function of `Pad`, `PadV2` and `MirrorPad`: each dim plus its paddings where both
/// are known.
///
/// # Errors
/// `Shape must be rank R but is rank S` when the paddings' rows differ from the input's rank.
pub fn pad_shape(
    input: &PartialTensorShape,
    paddings_shape: &PartialTensorShape,
    paddings: Option<&Tensor>,
) -> Result<PartialTensorShape> {
    const OP: &str = "Pad";
    let Some(rank) = rank_of_input_and_rows(OP, input, paddings_shape)? else {
        return Ok(PartialTensorShape::unknown_rank());
    };
    let Some(p) = paddings else {
        return partial(Some(vec![-1; rank]));
    };
    let p = index_values(OP, "Tpaddings", p, INT32_64)?;
    let out = (0..rank)
        .map(|i| {
            let d = input.dims().map_or(-1, |d| d[i]);
            if d < 0 {
                -1
            } else {
                d + p.get(2 * i).copied().unwrap_or(0) + p.get(2 * i + 1).copied().unwrap_or(0)
            }
        })
        .collect();
    partial(Some(out))
}

fn tile_refused(d: DataType) -> bool {
    d == DataType::UINT16
        || d.is_quantized()
        || matches!(
            d,
            DataType::FLOAT8_E4M3FN | DataType::FLOAT8_E5M2 | DataType::INT4 | DataType::UINT4
        )
}

/// TensorFlow's `Tile`: `input` repeated `multiples[i]` times along each axis (`multiples` an
/// `int32`/`int64` vector of the input's rank). A view with a stride-0 axis per repeat, copied
/// by the strided engine (runs and fills). Exact bits; the dtypes TensorFlow's CPU kernel
/// implements (not `uint16`, the quantized, float8 or 4-bit types: `UNIMPLEMENTED`, as there).
/// A product of dims that overflows, or an output too large to allocate, is TensorFlow's
/// error, never an abort.
///
/// ```
/// use tensorcast_core::Tensor;
/// use tensorcast_kernels::array::tile;
/// let x = Tensor::vector(&[1u8, 2]);
/// assert_eq!(tile(&x, &Tensor::vector(&[3i32]))?.to_vec::<u8>()?, vec![1, 2, 1, 2, 1, 2]);
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
///
/// # Errors
/// `Expected multiples to be 1-D, but got shape [..]`, `Expected multiples argument to be a
/// vector of length R but got length N`, `Expected multiples[i] >= 0, but got M`, `Encountered
/// overflow when multiplying A with B, result: -1`, OOM, `TileOp : The input data type is not
/// supported, DataType : T, Dimension : R`.
pub fn tile(input: &Tensor, multiples: &Tensor) -> Result<Tensor> {
    const OP: &str = "Tile";
    let m = index_values(OP, "Tmultiples", multiples, INT32_64)?;
    if multiples.dims() != 1 {
        return Err(invalid(
            OP,
            format!(
                "Expected multiples to be 1-D, but got shape {}",
                multiples.shape()
            ),
        ));
    }
    let rank = input.dims();
    if m.len() != rank {
        return Err(invalid(
            OP,
            format!(
                "Expected multiples argument to be a vector of length {rank} but got length {}",
                m.len()
            ),
        ));
    }
    let d = input.shape().dim_sizes();
    let mut out = Vec::with_capacity(rank);
    for (i, &k) in m.iter().enumerate() {
        if k < 0 {
            return Err(invalid(
                OP,
                format!("Expected multiples[{i}] >= 0, but got {k}"),
            ));
        }
        out.push(d[i].checked_mul(k).ok_or_else(|| {
            invalid(
                OP,
                format!(
                    "Encountered overflow when multiplying {} with {k}, result: -1",
                    d[i]
                ),
            )
        })?);
    }
    let mut total: i64 = 1;
    for &v in &out {
        total = total.checked_mul(v).ok_or_else(|| {
            invalid(
                OP,
                format!("Encountered overflow when multiplying {total} with {v}, result: -1"),
            )
        })?;
    }
    let shape = TensorShape::new(&out).map_err(|e| match e.code() {
        Code::InvalidArgument => invalid(OP, e.to_string()),
        _ => e,
    })?;
    if tile_refused(input.dtype()) {
        return Err(Error::Op {
            op: OP,
            code: Code::Unimplemented,
            message: format!(
                "TileOp : The input data type is not supported, DataType : {}, Dimension : {rank}",
                input.dtype().name()
            ),
        });
    }
    if total == 0 {
        return Tensor::new(input.dtype(), &shape);
    }
    if m.iter().all(|&k| k == 1) {
        return Ok(input.clone());
    }
    // The view [m0, d0, m1, d1, ...] with stride 0 on each repeat axis, read as the output.
    let in_dims = input.shape().dims_usize();
    let st = dense_strides(&in_dims);
    let mut vd = Vec::with_capacity(2 * rank);
    let mut vs = Vec::with_capacity(2 * rank);
    for i in 0..rank {
        vd.push(m[i] as usize);
        vs.push(0);
        vd.push(in_dims[i]);
        vs.push(st[i]);
    }
    let _ = dims_text;
    strided(OP, input, &shape, &StridedView::new(&vd, &vs, 0))
}

/// `Tile`'s shape function: each dim times its multiple where both are known.
///
/// # Errors
/// `Shape must be rank R but is rank S` when `multiples` has another length than the rank.
pub fn tile_shape(
    input: &PartialTensorShape,
    multiples_shape: &PartialTensorShape,
    multiples: Option<&Tensor>,
) -> Result<PartialTensorShape> {
    const OP: &str = "Tile";
    let n = multiples_shape
        .dims()
        .and_then(|d| d.first().copied())
        .filter(|&v| v >= 0);
    let rank = match (input.rank(), n) {
        (Some(r), Some(n)) if r as i64 != n => {
            return Err(invalid(
                OP,
                format!("Shape must be rank {r} but is rank {n}"),
            ))
        }
        (Some(r), _) => r,
        (None, Some(n)) => n as usize,
        (None, None) => return Ok(PartialTensorShape::unknown_rank()),
    };
    let Some(m) = multiples else {
        return partial(Some(vec![-1; rank]));
    };
    let m = index_values(OP, "Tmultiples", m, INT32_64)?;
    let out = (0..rank)
        .map(|i| {
            let d = input.dims().map_or(-1, |d| d[i]);
            let k = m.get(i).copied().unwrap_or(-1);
            if k == 0 {
                0
            } else if d < 0 || k < 0 {
                -1
            } else {
                d.saturating_mul(k)
            }
        })
        .collect();
    partial(Some(out))
}

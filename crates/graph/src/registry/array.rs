//! Data movement and shape ops (`tensorcast_kernels::array`): each an entry of its OpDef, its
//! shape function and its kernel.

use tensorcast_core::{DataType, PartialTensorShape, Tensor};
use tensorcast_kernels::array as k;

use super::spec::op_def;
use super::{kernel_entry, kernel_error, many, one, out, Entry, KernelFn, ShapeCtx, ShapeFn};
use crate::attr;
use crate::error::Result;
use crate::registry::opdef::OpDef;

fn outs(t: tensorcast_core::Result<Vec<Tensor>>) -> Result<Vec<Tensor>> {
    t.map_err(kernel_error)
}

fn int(attrs: &crate::attr::Attrs, name: &str) -> i64 {
    attr::get_int(attrs, name).unwrap_or(0)
}

fn out_type(attrs: &crate::attr::Attrs) -> DataType {
    attr::get_type(attrs, "out_type").unwrap_or(DataType::INT32)
}

fn masks(attrs: &crate::attr::Attrs) -> k::StridedSliceMasks {
    k::StridedSliceMasks {
        begin_mask: int(attrs, "begin_mask"),
        end_mask: int(attrs, "end_mask"),
        ellipsis_mask: int(attrs, "ellipsis_mask"),
        new_axis_mask: int(attrs, "new_axis_mask"),
        shrink_axis_mask: int(attrs, "shrink_axis_mask"),
    }
}

/// The partial shapes of inputs `range`.
fn partials(c: &ShapeCtx<'_>, range: std::ops::Range<usize>) -> Vec<PartialTensorShape> {
    range.map(|i| c.shape(i)).collect()
}

/// `Pad`'s, `PadV2`'s and `MirrorPad`'s shape: the input's, widened by the paddings.
fn pad_shape(c: &ShapeCtx<'_>) -> Result<Vec<PartialTensorShape>> {
    one(k::pad_shape(&c.shape(0), &c.shape(1), c.value(1)))
}

/// Data movement is cheap: small integer results fold at graph time.
fn entry(def: &'static OpDef, shape: ShapeFn, kernel: KernelFn) -> Entry {
    kernel_entry(def, shape, kernel, true)
}

/// An op whose output size comes from a value it reads (`Fill`'s dims, `Range`'s bounds,
/// `Tile`'s multiples, `Pad`'s paddings, `OneHot`'s depth), or multiplies its inputs' sizes
/// (`GatherV2`: indices times rows): checked against the run's allocation limit, from its
/// shape function on the actual inputs, before its kernel runs. (`StridedSlice`, `Slice`,
/// `ConcatV2` and the like never make more elements than their inputs hold.)
fn sized(def: &'static OpDef, shape: ShapeFn, kernel: KernelFn) -> Entry {
    Entry {
        sized_by_values: true,
        ..entry(def, shape, kernel)
    }
}

pub(super) fn entries() -> Vec<Entry> {
    vec![
        entry(
            op_def("Transpose"),
            |c| one(k::transpose_shape(&c.shape(0), &c.shape(1), c.value(1))),
            |_, x| out(k::transpose(&x[0], &x[1])),
        ),
        entry(
            op_def("ConcatV2"),
            |c| {
                let n = c.num_inputs().saturating_sub(1);
                let v = partials(c, 0..n);
                let refs: Vec<&PartialTensorShape> = v.iter().collect();
                one(k::concat_v2_shape(&refs, c.value(n)))
            },
            |_, x| {
                let (axis, values) = x.split_last().ok_or_else(missing)?;
                let refs: Vec<&Tensor> = values.iter().collect();
                out(k::concat_v2(&refs, axis))
            },
        ),
        entry(
            op_def("Pack"),
            |c| {
                let v = partials(c, 0..c.num_inputs());
                let refs: Vec<&PartialTensorShape> = v.iter().collect();
                one(k::pack_shape(&refs, int(c.attrs, "axis")))
            },
            |c, x| {
                let refs: Vec<&Tensor> = x.iter().collect();
                out(k::pack(&refs, int(c.attrs, "axis")))
            },
        ),
        entry(
            op_def("Unpack"),
            |c| {
                many(k::unpack_shape(
                    &c.shape(0),
                    int(c.attrs, "num"),
                    int(c.attrs, "axis"),
                ))
            },
            |c, x| outs(k::unpack(&x[0], int(c.attrs, "num"), int(c.attrs, "axis"))),
        ),
        entry(
            op_def("Split"),
            |c| {
                many(k::split_shape(
                    c.value(0),
                    &c.shape(1),
                    int(c.attrs, "num_split"),
                ))
            },
            |c, x| outs(k::split(&x[0], &x[1], int(c.attrs, "num_split"))),
        ),
        entry(
            op_def("SplitV"),
            |c| {
                many(k::split_v_shape(
                    &c.shape(0),
                    c.value(1),
                    c.value(2),
                    int(c.attrs, "num_split"),
                ))
            },
            |_, x| outs(k::split_v(&x[0], &x[1], &x[2])),
        ),
        entry(
            op_def("Squeeze"),
            |c| {
                let axis = attr::get_ints(c.attrs, "squeeze_dims").unwrap_or_default();
                one(k::squeeze_shape(&c.shape(0), axis))
            },
            |c, x| {
                let axis = attr::get_ints(c.attrs, "squeeze_dims").unwrap_or_default();
                out(k::squeeze(&x[0], axis))
            },
        ),
        entry(
            op_def("ExpandDims"),
            |c| one(k::expand_dims_shape(&c.shape(0), c.value(1))),
            |_, x| out(k::expand_dims(&x[0], &x[1])),
        ),
        entry(
            op_def("Slice"),
            |c| {
                one(k::slice_shape(
                    &c.shape(0),
                    &c.shape(1),
                    c.value(1),
                    c.value(2),
                ))
            },
            |_, x| out(k::slice(&x[0], &x[1], &x[2])),
        ),
        entry(
            op_def("StridedSlice"),
            |c| {
                let spec_len = c
                    .shape(1)
                    .dims()
                    .and_then(|d| d.first().copied())
                    .and_then(|n| usize::try_from(n).ok());
                one(k::strided_slice_shape(
                    &c.shape(0),
                    spec_len,
                    c.value(1),
                    c.value(2),
                    c.value(3),
                    masks(c.attrs),
                ))
            },
            |c, x| out(k::strided_slice(&x[0], &x[1], &x[2], &x[3], masks(c.attrs))),
        ),
        sized(
            op_def("GatherV2"),
            |c| {
                one(k::gather_v2_shape(
                    &c.shape(0),
                    &c.shape(1),
                    c.value(2),
                    int(c.attrs, "batch_dims"),
                ))
            },
            |c, x| {
                out(k::gather_v2(
                    &x[0],
                    &x[1],
                    &x[2],
                    int(c.attrs, "batch_dims"),
                ))
            },
        ),
        sized(op_def("Pad"), pad_shape, |_, x| out(k::pad(&x[0], &x[1]))),
        sized(op_def("PadV2"), pad_shape, |_, x| {
            out(k::pad_v2(&x[0], &x[1], &x[2]))
        }),
        sized(op_def("MirrorPad"), pad_shape, |c, x| {
            let mode = attr::get_string(c.attrs, "mode").unwrap_or_default();
            out(k::mirror_pad(&x[0], &x[1], &String::from_utf8_lossy(mode)))
        }),
        sized(
            op_def("Tile"),
            |c| one(k::tile_shape(&c.shape(0), &c.shape(1), c.value(1))),
            |_, x| out(k::tile(&x[0], &x[1])),
        ),
        sized(
            op_def("Fill"),
            |c| one(k::fill_shape(&c.shape(0), c.value(0))),
            |_, x| out(k::fill(&x[0], &x[1])),
        ),
        sized(
            op_def("Range"),
            |c| one(k::range_shape(c.value(0), c.value(1), c.value(2))),
            |_, x| out(k::range(&x[0], &x[1], &x[2])),
        ),
        entry(
            op_def("ZerosLike"),
            |c| Ok(vec![k::like_shape(&c.shape(0))]),
            |_, x| out(k::zeros_like(&x[0])),
        ),
        entry(
            op_def("OnesLike"),
            |c| Ok(vec![k::like_shape(&c.shape(0))]),
            |_, x| out(k::ones_like(&x[0])),
        ),
        entry(
            op_def("Size"),
            |_| Ok(vec![k::size_shape()]),
            |c, x| out(k::size(&x[0], out_type(c.attrs))),
        ),
        entry(
            op_def("Rank"),
            |_| Ok(vec![k::rank_shape()]),
            |_, x| Ok(vec![k::rank(&x[0])]),
        ),
        entry(
            op_def("ShapeN"),
            |c| {
                let v = partials(c, 0..c.num_inputs());
                let refs: Vec<&PartialTensorShape> = v.iter().collect();
                many(k::shape_n_shape(&refs))
            },
            |c, x| {
                let refs: Vec<&Tensor> = x.iter().collect();
                outs(k::shape_n(&refs, out_type(c.attrs)))
            },
        ),
        sized(
            op_def("OneHot"),
            |c| {
                one(k::one_hot_shape(
                    &c.shape(0),
                    c.value(1),
                    int(c.attrs, "axis"),
                ))
            },
            |c, x| out(k::one_hot(&x[0], &x[1], &x[2], &x[3], int(c.attrs, "axis"))),
        ),
        entry(
            op_def("Cumsum"),
            |c| Ok(vec![k::cumsum_shape(&c.shape(0))]),
            |c, x| {
                out(k::cumsum(
                    &x[0],
                    &x[1],
                    attr::get_bool(c.attrs, "exclusive").unwrap_or(false),
                    attr::get_bool(c.attrs, "reverse").unwrap_or(false),
                ))
            },
        ),
        entry(
            op_def("TopKV2"),
            |c| many(k::top_k_v2_shape(&c.shape(0), c.value(1))),
            |c, x| {
                let index_type = attr::get_type(c.attrs, "index_type").unwrap_or(DataType::INT32);
                let sorted = attr::get_bool(c.attrs, "sorted").unwrap_or(true);
                k::top_k_v2(&x[0], &x[1], sorted, index_type)
                    .map(|t| vec![t.values, t.indices])
                    .map_err(kernel_error)
            },
        ),
    ]
}

fn missing() -> crate::error::Error {
    crate::error::Error::Internal("an input the plan guarantees is missing".into())
}

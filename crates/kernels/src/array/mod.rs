//! Data movement and shape ops (`Transpose`, `ConcatV2`, `Pack`, `Unpack`, `Split`, `StridedSlice`, `GatherV2`, `Pad`, `Tile`, `Range`, `OneHot`, `TopKV2`, ...).
//!
//! Each op is an eager function on [`Tensor`](tensorcast_core::Tensor)s named after
//! TensorFlow's op in snake case, with its shape function beside it (`*_shape`, over
//! [`PartialTensorShape`](tensorcast_core::PartialTensorShape)s, for the graph layer). Value
//! inputs (axes, `perm`, paddings, multiples, begin/end/strides, `k`, depth) are tensors, read
//! as TensorFlow's kernels read them (`int32` or `int64` where the op allows both).
//!
//! Results are TensorFlow's bit for bit (data movement never changes a value; `Range` and
//! `Cumsum` compute in TensorFlow's order), and the errors are its texts, recorded from
//! TensorFlow 2.21 (`tests/tf_observed/gen_ops_array.py`). Where TensorFlow's CPU build has no
//! kernel for a dtype, the error is `NOT_FOUND` with the first line of TensorFlow's text.
//!
//! How the copies run: ops describe their output as units produced through one engine
//! (`engine.rs`), which copies every dtype as fixed-size elements (memcpy runs, fills, strided
//! reads, a blocked transpose), writes outputs once without zeroing them, splits large outputs
//! across the rayon pool, and hands out views of the input's buffer (no copy) whenever a result
//! is one dense run of it (`Slice`, `StridedSlice`, `Split`, `Unpack` along leading axes,
//! `Squeeze`, `ExpandDims`, identity `Transpose`). Outputs are allocated fallibly: an output
//! too large to allocate is TensorFlow's `RESOURCE_EXHAUSTED` text, never an abort.

pub(crate) mod common;
mod concat;
mod cumsum;
mod engine;
mod gather;
mod one_hot;
mod pad;
mod range;
mod shape_ops;
mod slice;
mod transpose;

pub(crate) use common::oom;
pub(crate) use engine::check_output;

pub use concat::{
    concat_v2, concat_v2_shape, pack, pack_shape, split, split_shape, split_v, split_v_shape,
    unpack, unpack_shape,
};
pub use cumsum::{cumsum, cumsum_shape, top_k_v2, top_k_v2_shape, TopK};
pub use gather::{gather_v2, gather_v2_shape};
pub use one_hot::{one_hot, one_hot_shape};
pub use pad::{mirror_pad, pad, pad_shape, pad_v2, tile, tile_shape};
pub use range::{range, range_shape};
pub use shape_ops::{
    expand_dims, expand_dims_shape, fill, fill_shape, like_shape, ones_like, rank, rank_shape,
    shape_n, shape_n_shape, size, size_shape, squeeze, squeeze_shape, zeros_like,
};
pub use slice::{slice, slice_shape, strided_slice, strided_slice_shape, StridedSliceMasks};
pub use transpose::{transpose, transpose_shape};

/// A copy of the strided view of `x` with `dims` and `strides` (in elements, from element 0):
/// a transpose, a diagonal (strides summed), a broadcast (stride 0) or any mix, on the
/// data-movement engine (shares `x`'s buffer when the view is one dense run). Every index the
/// view reaches must be in bounds of `x`.
pub(crate) fn strided_copy(
    op: &'static str,
    x: &tensorcast_core::Tensor,
    dims: &[usize],
    strides: &[isize],
) -> tensorcast_core::Result<tensorcast_core::Tensor> {
    let out: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
    engine::check_output(op, x.dtype(), &out)?;
    let shape = tensorcast_core::TensorShape::new(&out)?;
    engine::strided(op, x, &shape, &engine::StridedView::new(dims, strides, 0))
}

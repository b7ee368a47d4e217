//! `tf_observed/ops_array.jsonl`: the data-movement and shape ops of `tensorcast-kernels`
//! (`array` module) against TensorFlow 2.21 (`gen_ops_array.py`).
//!
//! Eager records: `name` (TensorFlow's op), `inputs` (argument -> tensor or list of tensors),
//! `attrs`, then `expect` (every output: dtype, shape and bytes, compared bit for bit) or
//! `error` {code, message}. Shape records (`"shape": true`): `inputs` give each argument's
//! partial shape (`null` = unknown rank, `null` dims = unknown) and, for constants, its
//! `value`; `expect` lists the outputs' partial shapes, or `error` the shape function's text.
//!
//! Messages compare exactly, except two kinds whose tail tensorcast does not reproduce: a
//! `NOT_FOUND` (no kernel for a dtype) compares its first line (TensorFlow then lists every
//! registered kernel), and a type-list error compares its first line (TensorFlow then appends
//! the `NodeDef` and `OpDef`).

use serde_json::Value;
use tensorcast_core::{Code, DataType, PartialTensorShape, Result, Tensor};
use tensorcast_kernels::array as a;

use crate::{check_tensor, tensor_of, Outcome};

pub fn run(rec: &Value) -> Outcome {
    let res = if rec["shape"].as_bool() == Some(true) {
        check_shape(rec)
    } else {
        check_eager(rec)
    };
    match res {
        Ok(true) => Outcome::Pass,
        Ok(false) => Outcome::Skip,
        Err(why) => Outcome::Fail(why),
    }
}

fn input(rec: &Value, name: &str) -> Result<Tensor, String> {
    tensor_of(&rec["inputs"][name]).map_err(|e| format!("{name}: {e}"))
}

fn inputs(rec: &Value, name: &str) -> Result<Vec<Tensor>, String> {
    rec["inputs"][name]
        .as_array()
        .ok_or(format!("{name} is not a list"))?
        .iter()
        .map(tensor_of)
        .collect()
}

fn attr_i(rec: &Value, name: &str, default: i64) -> i64 {
    rec["attrs"][name].as_i64().unwrap_or(default)
}

fn attr_b(rec: &Value, name: &str, default: bool) -> bool {
    rec["attrs"][name].as_bool().unwrap_or(default)
}

fn attr_dtype(rec: &Value, name: &str, default: DataType) -> Result<DataType, String> {
    match rec["attrs"][name].as_str() {
        None => Ok(default),
        Some("float32") => Ok(DataType::FLOAT),
        Some(s) => DataType::from_name(s).ok_or(format!("unknown dtype {s}")),
    }
}

fn masks(rec: &Value) -> a::StridedSliceMasks {
    a::StridedSliceMasks {
        begin_mask: attr_i(rec, "begin_mask", 0),
        end_mask: attr_i(rec, "end_mask", 0),
        ellipsis_mask: attr_i(rec, "ellipsis_mask", 0),
        new_axis_mask: attr_i(rec, "new_axis_mask", 0),
        shrink_axis_mask: attr_i(rec, "shrink_axis_mask", 0),
    }
}

/// Runs the eager op a record names; `None` for an op this runner does not know.
fn eager(rec: &Value) -> Result<Option<Result<Vec<Tensor>>>, String> {
    let name = rec["name"].as_str().ok_or("record without name")?;
    let one = |r: Result<Tensor>| Some(r.map(|t| vec![t]));
    Ok(match name {
        "Transpose" => one(a::transpose(&input(rec, "x")?, &input(rec, "perm")?)),
        "ConcatV2" => {
            let v = inputs(rec, "values")?;
            let refs: Vec<&Tensor> = v.iter().collect();
            one(a::concat_v2(&refs, &input(rec, "axis")?))
        }
        "Pack" => {
            let v = inputs(rec, "values")?;
            let refs: Vec<&Tensor> = v.iter().collect();
            one(a::pack(&refs, attr_i(rec, "axis", 0)))
        }
        "Unpack" => Some(a::unpack(
            &input(rec, "value")?,
            attr_i(rec, "num", 0),
            attr_i(rec, "axis", 0),
        )),
        "Split" => Some(a::split(
            &input(rec, "axis")?,
            &input(rec, "value")?,
            attr_i(rec, "num_split", 1),
        )),
        "SplitV" => Some(a::split_v(
            &input(rec, "value")?,
            &input(rec, "size_splits")?,
            &input(rec, "axis")?,
        )),
        "Squeeze" => {
            let axis: Vec<i64> = rec["attrs"]["axis"]
                .as_array()
                .map(|v| v.iter().filter_map(Value::as_i64).collect())
                .unwrap_or_default();
            one(a::squeeze(&input(rec, "input")?, &axis))
        }
        "ExpandDims" => one(a::expand_dims(&input(rec, "input")?, &input(rec, "axis")?)),
        "Slice" => one(a::slice(
            &input(rec, "input")?,
            &input(rec, "begin")?,
            &input(rec, "size")?,
        )),
        "StridedSlice" => one(a::strided_slice(
            &input(rec, "input")?,
            &input(rec, "begin")?,
            &input(rec, "end")?,
            &input(rec, "strides")?,
            masks(rec),
        )),
        "Fill" => one(a::fill(&input(rec, "dims")?, &input(rec, "value")?)),
        "ZerosLike" => one(a::zeros_like(&input(rec, "x")?)),
        "OnesLike" => one(a::ones_like(&input(rec, "x")?)),
        "Size" => one(a::size(
            &input(rec, "input")?,
            attr_dtype(rec, "out_type", DataType::INT32)?,
        )),
        "Rank" => one(Ok(a::rank(&input(rec, "input")?))),
        "ShapeN" => {
            let v = inputs(rec, "input")?;
            let refs: Vec<&Tensor> = v.iter().collect();
            Some(a::shape_n(
                &refs,
                attr_dtype(rec, "out_type", DataType::INT32)?,
            ))
        }
        "GatherV2" => one(a::gather_v2(
            &input(rec, "params")?,
            &input(rec, "indices")?,
            &input(rec, "axis")?,
            attr_i(rec, "batch_dims", 0),
        )),
        "Pad" => one(a::pad(&input(rec, "input")?, &input(rec, "paddings")?)),
        "PadV2" => one(a::pad_v2(
            &input(rec, "input")?,
            &input(rec, "paddings")?,
            &input(rec, "constant_values")?,
        )),
        "MirrorPad" => one(a::mirror_pad(
            &input(rec, "input")?,
            &input(rec, "paddings")?,
            rec["attrs"]["mode"].as_str().unwrap_or_default(),
        )),
        "Tile" => one(a::tile(&input(rec, "input")?, &input(rec, "multiples")?)),
        "Range" => one(a::range(
            &input(rec, "start")?,
            &input(rec, "limit")?,
            &input(rec, "delta")?,
        )),
        "OneHot" => one(a::one_hot(
            &input(rec, "indices")?,
            &input(rec, "depth")?,
            &input(rec, "on_value")?,
            &input(rec, "off_value")?,
            attr_i(rec, "axis", -1),
        )),
        "Cumsum" => one(a::cumsum(
            &input(rec, "x")?,
            &input(rec, "axis")?,
            attr_b(rec, "exclusive", false),
            attr_b(rec, "reverse", false),
        )),
        "TopKV2" => {
            let x = input(rec, "input")?;
            if has_nan(&x) {
                // TensorFlow's order of NaNs depends on its sort's path (see `top_k_v2`).
                return Ok(None);
            }
            Some(
                a::top_k_v2(
                    &x,
                    &input(rec, "k")?,
                    attr_b(rec, "sorted", true),
                    attr_dtype(rec, "index_type", DataType::INT32)?,
                )
                .map(|t| vec![t.values, t.indices]),
            )
        }
        _ => None,
    })
}

/// True for a float tensor holding a NaN.
fn has_nan(x: &Tensor) -> bool {
    match x.dtype() {
        DataType::FLOAT => x
            .to_vec::<f32>()
            .is_ok_and(|v| v.iter().any(|f| f.is_nan())),
        DataType::DOUBLE => x
            .to_vec::<f64>()
            .is_ok_and(|v| v.iter().any(|f| f.is_nan())),
        DataType::HALF => x
            .to_vec::<tensorcast_core::f16>()
            .is_ok_and(|v| v.iter().any(|f| f.is_nan())),
        DataType::BFLOAT16 => x
            .to_vec::<tensorcast_core::bf16>()
            .is_ok_and(|v| v.iter().any(|f| f.is_nan())),
        _ => false,
    }
}

fn code_of(name: Option<&str>) -> Result<Code, String> {
    Ok(match name {
        None | Some("InvalidArgumentError") => Code::InvalidArgument,
        Some("NotFoundError") => Code::NotFound,
        Some("UnimplementedError") => Code::Unimplemented,
        Some("ResourceExhaustedError") => Code::ResourceExhausted,
        Some("OutOfRangeError") => Code::OutOfRange,
        Some(other) => return Err(format!("unknown error code {other}")),
    })
}

/// The part of TensorFlow's message tensorcast reproduces (see the module docs).
fn comparable(want: &str) -> &str {
    if want.starts_with("Could not find device for node:") || want.contains("\n\t; NodeDef: ") {
        want.lines().next().unwrap_or(want)
    } else {
        want
    }
}

fn check_eager(rec: &Value) -> Result<bool, String> {
    let Some(got) = eager(rec)? else {
        return Ok(false);
    };
    if let Some(err) = rec.get("error") {
        let want = comparable(err["message"].as_str().unwrap_or_default());
        let code = code_of(err["code"].as_str())?;
        return match got {
            Ok(t) => Err(format!(
                "expected error {want:?}, got {} outputs (first {:?})",
                t.len(),
                t.first().map(|t| t.shape().clone())
            )),
            Err(e) if e.code() != code => Err(format!("error {e:?} is not of code {code:?}")),
            Err(e) if e.to_string() == want => Ok(true),
            Err(e) => Err(format!("error {:?} != expected {want:?}", e.to_string())),
        };
    }
    let got = got.map_err(|e| format!("unexpected error: {e}"))?;
    let want = rec["expect"].as_array().ok_or("record without expect")?;
    if got.len() != want.len() {
        return Err(format!("{} outputs, expected {}", got.len(), want.len()));
    }
    if rec["name"] == "TopKV2" && !attr_b(rec, "sorted", true) {
        // TensorFlow leaves the order of unsorted results unspecified: compare each row's
        // (value, index) pairs as sets.
        let (gv, gi) = (
            row_pairs(&got[0], &got[1])?,
            row_pairs(&tensor_of(&want[0])?, &tensor_of(&want[1])?)?,
        );
        return if gv == gi {
            Ok(true)
        } else {
            Err(format!("unsorted top-k {gv:?} != expected {gi:?}"))
        };
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        check_tensor(g, w).map_err(|e| format!("output {i}: {e}"))?;
    }
    Ok(true)
}

/// One row of a top-k result: (index, value bytes) pairs.
type RowPairs = Vec<(i64, Vec<u8>)>;

/// Each row's (index, value bytes) pairs of a top-k result, sorted by index.
fn row_pairs(values: &Tensor, indices: &Tensor) -> Result<Vec<RowPairs>, String> {
    let k = values
        .shape()
        .dim_sizes()
        .last()
        .copied()
        .unwrap_or(0)
        .max(1) as usize;
    let bytes = values.tensor_data().map_err(|e| e.to_string())?;
    let size = values.dtype().size();
    let idx: Vec<i64> = match indices.dtype() {
        DataType::INT64 => indices.to_vec::<i64>().map_err(|e| e.to_string())?,
        _ => indices
            .to_vec::<i32>()
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(i64::from)
            .collect(),
    };
    Ok(idx
        .chunks(k)
        .enumerate()
        .map(|(r, row)| {
            let mut v: Vec<(i64, Vec<u8>)> = row
                .iter()
                .enumerate()
                .map(|(j, &i)| {
                    (
                        i,
                        bytes[(r * k + j) * size..(r * k + j + 1) * size].to_vec(),
                    )
                })
                .collect();
            v.sort();
            v
        })
        .collect())
}

fn pshape(v: &Value) -> Result<PartialTensorShape, String> {
    match v["shape"].as_array() {
        None => Ok(PartialTensorShape::unknown_rank()),
        Some(d) => {
            let dims: Vec<i64> = d.iter().map(|x| x.as_i64().unwrap_or(-1)).collect();
            PartialTensorShape::new(&dims).map_err(|e| e.to_string())
        }
    }
}

fn shape_in(rec: &Value, name: &str) -> Result<PartialTensorShape, String> {
    pshape(&rec["inputs"][name])
}

fn value_in(rec: &Value, name: &str) -> Result<Option<Tensor>, String> {
    match rec["inputs"][name].get("value") {
        None => Ok(None),
        Some(v) => tensor_of(v).map(Some),
    }
}

fn shape_list(rec: &Value, name: &str) -> Result<Vec<PartialTensorShape>, String> {
    rec["inputs"][name]
        .as_array()
        .ok_or(format!("{name} is not a list"))?
        .iter()
        .map(pshape)
        .collect()
}

/// Runs the shape function a record names; `None` for an op this runner does not know.
fn shape_fn(rec: &Value) -> Result<Option<Result<Vec<PartialTensorShape>>>, String> {
    let name = rec["name"].as_str().ok_or("record without name")?;
    let one = |r: Result<PartialTensorShape>| Some(r.map(|s| vec![s]));
    Ok(match name {
        "Transpose" => one(a::transpose_shape(
            &shape_in(rec, "x")?,
            &shape_in(rec, "perm")?,
            value_in(rec, "perm")?.as_ref(),
        )),
        "ConcatV2" => {
            let v = shape_list(rec, "values")?;
            let refs: Vec<&PartialTensorShape> = v.iter().collect();
            one(a::concat_v2_shape(&refs, value_in(rec, "axis")?.as_ref()))
        }
        "Pack" => {
            let v = shape_list(rec, "values")?;
            let refs: Vec<&PartialTensorShape> = v.iter().collect();
            one(a::pack_shape(&refs, attr_i(rec, "axis", 0)))
        }
        "Unpack" => Some(a::unpack_shape(
            &shape_in(rec, "value")?,
            attr_i(rec, "num", 0),
            attr_i(rec, "axis", 0),
        )),
        "Split" => Some(a::split_shape(
            value_in(rec, "axis")?.as_ref(),
            &shape_in(rec, "value")?,
            attr_i(rec, "num_split", 1),
        )),
        "SplitV" => Some(a::split_v_shape(
            &shape_in(rec, "value")?,
            value_in(rec, "size_splits")?.as_ref(),
            value_in(rec, "axis")?.as_ref(),
            attr_i(rec, "num_split", 1),
        )),
        "Squeeze" => {
            let axis: Vec<i64> = rec["attrs"]["axis"]
                .as_array()
                .map(|v| v.iter().filter_map(Value::as_i64).collect())
                .unwrap_or_default();
            one(a::squeeze_shape(&shape_in(rec, "input")?, &axis))
        }
        "ExpandDims" => one(a::expand_dims_shape(
            &shape_in(rec, "input")?,
            value_in(rec, "axis")?.as_ref(),
        )),
        "Slice" => one(a::slice_shape(
            &shape_in(rec, "input")?,
            &shape_in(rec, "begin")?,
            value_in(rec, "begin")?.as_ref(),
            value_in(rec, "size")?.as_ref(),
        )),
        "StridedSlice" => {
            let b = shape_in(rec, "begin")?;
            let n = b
                .dims()
                .and_then(|d| d.first().copied())
                .filter(|&n| n >= 0);
            one(a::strided_slice_shape(
                &shape_in(rec, "input")?,
                n.map(|n| n as usize),
                value_in(rec, "begin")?.as_ref(),
                value_in(rec, "end")?.as_ref(),
                value_in(rec, "strides")?.as_ref(),
                masks(rec),
            ))
        }
        "Fill" => one(a::fill_shape(
            &shape_in(rec, "dims")?,
            value_in(rec, "dims")?.as_ref(),
        )),
        "ZerosLike" | "OnesLike" => one(Ok(a::like_shape(&shape_in(rec, "x")?))),
        "Size" => one(Ok(a::size_shape())),
        "Rank" => one(Ok(a::rank_shape())),
        "ShapeN" => {
            let v = shape_list(rec, "input")?;
            let refs: Vec<&PartialTensorShape> = v.iter().collect();
            Some(a::shape_n_shape(&refs))
        }
        "GatherV2" => one(a::gather_v2_shape(
            &shape_in(rec, "params")?,
            &shape_in(rec, "indices")?,
            value_in(rec, "axis")?.as_ref(),
            attr_i(rec, "batch_dims", 0),
        )),
        "Pad" | "PadV2" | "MirrorPad" => one(a::pad_shape(
            &shape_in(rec, "input")?,
            &shape_in(rec, "paddings")?,
            value_in(rec, "paddings")?.as_ref(),
        )),
        "Tile" => one(a::tile_shape(
            &shape_in(rec, "input")?,
            &shape_in(rec, "multiples")?,
            value_in(rec, "multiples")?.as_ref(),
        )),
        "Range" => one(a::range_shape(
            value_in(rec, "start")?.as_ref(),
            value_in(rec, "limit")?.as_ref(),
            value_in(rec, "delta")?.as_ref(),
        )),
        "OneHot" => one(a::one_hot_shape(
            &shape_in(rec, "indices")?,
            value_in(rec, "depth")?.as_ref(),
            attr_i(rec, "axis", -1),
        )),
        "Cumsum" => one(Ok(a::cumsum_shape(&shape_in(rec, "x")?))),
        "TopKV2" => Some(a::top_k_v2_shape(
            &shape_in(rec, "input")?,
            value_in(rec, "k")?.as_ref(),
        )),
        _ => None,
    })
}

fn check_shape(rec: &Value) -> Result<bool, String> {
    let Some(got) = shape_fn(rec)? else {
        return Ok(false);
    };
    if let Some(err) = rec.get("error") {
        let want = err["message"].as_str().unwrap_or_default();
        return match got {
            Ok(s) => Err(format!("expected error {want:?}, got {s:?}")),
            Err(e) if e.to_string() == want => Ok(true),
            Err(e) => Err(format!("error {:?} != expected {want:?}", e.to_string())),
        };
    }
    let got = got.map_err(|e| format!("unexpected error: {e}"))?;
    let want = rec["expect"].as_array().ok_or("record without expect")?;
    if got.len() != want.len() {
        return Err(format!("{} outputs, expected {}", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let w = match w.as_array() {
            None => PartialTensorShape::unknown_rank(),
            Some(d) => {
                let dims: Vec<i64> = d.iter().map(|x| x.as_i64().unwrap_or(-1)).collect();
                PartialTensorShape::new(&dims).map_err(|e| e.to_string())?
            }
        };
        if g.dims() != w.dims() {
            return Err(format!("output {i}: shape {g:?} != expected {w:?}"));
        }
    }
    Ok(true)
}

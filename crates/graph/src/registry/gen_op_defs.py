"""Writes defs.rs: TensorFlow 2.21's OpDef (signature, attrs, defaults, allowed values) of each op
the registry adds, read from TensorFlow's own op registry, as Rust constants.

    TF_CPP_MIN_LOG_LEVEL=3 .venv/bin/python crates/graph/src/registry/gen_op_defs.py

Facts only: names, types and defaults as TensorFlow registers them. Re-run after adding a name to
OPS below; `cargo fmt` afterwards.
"""
import os
import re

import numpy as np
import tensorflow as tf  # noqa: F401  (registers the ops)
from tensorflow.python.framework import op_def_registry

OPS = """
MatMul BatchMatMulV2 Einsum
Conv2D DepthwiseConv2dNative MaxPool AvgPool BiasAdd FusedBatchNormV3
Relu Relu6 Elu Selu LeakyRelu Sigmoid Tanh Softplus Softmax LogSoftmax Exp Log Log1p Sqrt Rsqrt
Square Neg Abs Sign Erf Erfc Floor Ceil Round Reciprocal LogicalNot Select SelectV2
Sum Mean Max Min Prod All Any ArgMax ArgMin
Transpose ConcatV2 Pack Unpack Split SplitV Squeeze ExpandDims Slice StridedSlice GatherV2 Pad
PadV2 MirrorPad Tile Fill Range ZerosLike OnesLike Size Rank ShapeN OneHot Cumsum TopKV2
StopGradient IdentityN PlaceholderWithDefault Snapshot PreventGradient
VarHandleOp ReadVariableOp AssignVariableOp
AddN BatchMatMul BatchMatMulV3 FusedBatchNorm ResizeBilinear ResizeNearestNeighbor Where
EnsureShape CheckNumerics Assert Bucketize DynamicStitch
While StatelessWhile If StatelessIf Case StatelessCase Enter Exit Merge Switch NextIteration LoopCond
TensorListReserve TensorListSetItem TensorListGetItem TensorListStack TensorListFromTensor
TensorListLength TensorListElementShape
ParseExampleV2 SaveV2 RestoreV2 MergeV2Checkpoints ShardedFilename StringJoin StaticRegexFullMatch
""".split()

DT = {v: k for k, v in tf.dtypes.as_dtype.__globals__["types_pb2"].DataType.items()}


def const_name(op):
    return re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z0-9])(?=[A-Z][a-z])", "_", op).upper()


def dtype(n):
    return "DataType::" + DT[n][3:]


def float_lit(x):
    # The shortest text that reads back as the same f32.
    r = str(np.float32(x))
    return r if ("." in r or "e" in r or "inf" in r or "nan" in r) else r + ".0"


def default(a):
    if not a.HasField("default_value"):
        return "None"
    v = a.default_value
    kind = v.WhichOneof("value")
    t = a.type
    if t == "type":
        return f"Some(AttrDefault::Type({dtype(v.type)}))"
    if t == "bool":
        return f"Some(AttrDefault::Bool({str(v.b).lower()}))"
    if t == "int":
        return f"Some(AttrDefault::Int({v.i}))"
    if t == "float":
        return f"Some(AttrDefault::Float({float_lit(v.f)}))"
    if t == "string":
        return f"Some(AttrDefault::Str({v.s.decode()!r}))".replace("'", '"')
    if t == "shape":
        if v.shape.unknown_rank:
            return "Some(AttrDefault::UnknownShape)"
        return "Some(AttrDefault::Shape(&[" + ", ".join(str(d.size) for d in v.shape.dim) + "]))"
    if t == "list(int)":
        return "Some(AttrDefault::ListInt(&[" + ", ".join(str(i) for i in v.list.i) + "]))"
    if t == "list(type)":
        return "Some(AttrDefault::ListType(&[" + ", ".join(dtype(i) for i in v.list.type) + "]))"
    if t == "list(float)":
        return "Some(AttrDefault::ListFloat(&[" + ", ".join(float_lit(f) for f in v.list.f) + "]))"
    if t == "list(string)":
        return "Some(AttrDefault::ListStr(&[" + ", ".join('"' + s.decode() + '"' for s in v.list.s) + "]))"
    if t == "list(shape)" and not v.list.shape:
        return "Some(AttrDefault::ListShape)"
    raise SystemExit(f"unhandled default {a.name}: {t} {kind}")


KIND = {
    "type": "Type", "bool": "Bool", "shape": "Shape", "tensor": "Tensor", "int": "Int",
    "float": "Float", "string": "String", "func": "Func", "list(int)": "ListInt",
    "list(type)": "ListType", "list(float)": "ListFloat", "list(string)": "ListString",
    "list(shape)": "ListShape", "list(func)": "ListFunc",
}


def arg(a):
    if a.number_attr:
        ty = f"ArgType::List {{ number: {a.number_attr!r}, ty: {a.type_attr!r} }}" if a.type_attr \
            else f"ArgType::FixedList {{ number: {a.number_attr!r}, dtype: {dtype(a.type)} }}"
    elif a.type_list_attr:
        ty = f"ArgType::TypeList({a.type_list_attr!r})"
    elif a.type_attr:
        ty = f"ArgType::Attr({a.type_attr!r})"
    else:
        ty = f"ArgType::Fixed({dtype(a.type)})"
    return f"ArgDef {{ name: {a.name!r}, ty: {ty} }}".replace("'", '"')


def attr(a):
    allowed = "None"
    strings = "None"
    if a.HasField("allowed_values"):
        lv = a.allowed_values.list
        if lv.type:
            allowed = "Some(&[" + ", ".join(dtype(t) for t in lv.type) + "])"
        if lv.s:
            strings = "Some(&[" + ", ".join('"' + s.decode() + '"' for s in lv.s) + "])"
    minimum = f"Some({a.minimum})" if a.has_minimum else "None"
    return (f"AttrDef {{ name: \"{a.name}\", kind: AttrKind::{KIND[a.type]}, default: {default(a)}, "
            f"allowed: {allowed}, allowed_strings: {strings}, minimum: {minimum} }}")


out = [
    "//! TensorFlow 2.21's `OpDef`s of the registry's ops, generated by `gen_op_defs.py` beside this",
    "//! file from TensorFlow's own op registry (facts: names, types, defaults). Do not edit by hand.",
    "",
    "use tensorcast_core::DataType;",
    "",
    "use crate::registry::opdef::{ArgDef, ArgType, AttrDef, AttrDefault, AttrKind, OpDef};",
    "",
]
for name in OPS:
    d = op_def_registry.get(name)
    if d is None:
        raise SystemExit(f"TensorFlow has no op {name}")
    out.append(f"/// `{name}`.")
    out.append(f"pub(crate) const {const_name(name)}: OpDef = OpDef {{")
    out.append(f"    name: \"{name}\",")
    out.append("    inputs: &[" + ", ".join(arg(a) for a in d.input_arg) + "],")
    out.append("    outputs: &[" + ", ".join(arg(a) for a in d.output_arg) + "],")
    out.append("    attrs: &[" + ", ".join(attr(a) for a in d.attr) + "],")
    out.append(f"    commutative: {str(d.is_commutative).lower()},")
    out.append(f"    aggregate: {str(d.is_aggregate).lower()},")
    out.append(f"    stateful: {str(d.is_stateful).lower()},")
    out.append("};")
    out.append("")
out.append("/// Every `OpDef` above: ops TensorFlow has that the registry knows, kernel or not.")
out.append("pub(crate) static EVERY_OP: &[&OpDef] = &[" + ", ".join("&" + const_name(n) for n in OPS) + "];")
out.append("")
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "defs.rs")
with open(path, "w") as f:
    f.write("\n".join(out))
print(f"wrote {len(OPS)} OpDefs to {path}")

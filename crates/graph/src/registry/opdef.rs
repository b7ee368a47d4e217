//! The op registrations tensorcast knows (TensorFlow 2.21's `OpDef`s for these ops, read from its
//! registry): inputs, outputs, attrs with defaults and allowed types, and `SummarizeOpDef`.

use tensorcast_core::DataType;
use tensorcast_kernels::elementwise::BinaryOp;

use crate::attr::{self, Attrs};
use crate::error::enum_name;
use crate::registry::RegOp;

/// Where an input or output's dtype comes from.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ArgType {
    /// The value of a `type` attr.
    Attr(&'static str),
    /// A fixed dtype.
    Fixed(DataType),
    /// `number * ty`: as many inputs as the int attr `number`, each of the type attr `ty`.
    List {
        /// The int attr holding the count.
        number: &'static str,
        /// The type attr of every element.
        ty: &'static str,
    },
    /// `number * dtype`: as many inputs as the int attr `number`, each of a fixed dtype.
    FixedList {
        /// The int attr holding the count.
        number: &'static str,
        /// The dtype of every element.
        dtype: DataType,
    },
    /// One input per entry of a `list(type)` attr.
    TypeList(&'static str),
}

/// One input or output of an op.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ArgDef {
    pub(crate) name: &'static str,
    pub(crate) ty: ArgType,
}

/// The kind of an attr (`AttrDef.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AttrKind {
    Type,
    Bool,
    Shape,
    Tensor,
    Int,
    Float,
    String,
    Func,
    ListInt,
    ListType,
    ListFloat,
    ListString,
    ListShape,
    ListFunc,
}

impl AttrKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            AttrKind::Type => "type",
            AttrKind::Bool => "bool",
            AttrKind::Shape => "shape",
            AttrKind::Tensor => "tensor",
            AttrKind::Int => "int",
            AttrKind::Float => "float",
            AttrKind::String => "string",
            AttrKind::Func => "func",
            AttrKind::ListInt => "list(int)",
            AttrKind::ListType => "list(type)",
            AttrKind::ListFloat => "list(float)",
            AttrKind::ListString => "list(string)",
            AttrKind::ListShape => "list(shape)",
            AttrKind::ListFunc => "list(func)",
        }
    }
}

/// An attr's default value.
#[derive(Debug, Clone, Copy)]
pub(crate) enum AttrDefault {
    Type(DataType),
    Bool(bool),
    UnknownShape,
    Int(i64),
    Float(f32),
    Str(&'static str),
    ListInt(&'static [i64]),
    ListStr(&'static [&'static str]),
    /// An empty `list(shape)`.
    ListShape,
}

impl AttrDefault {
    /// The default as an attr value.
    pub(crate) fn to_value(self) -> tensorcast_proto::AttrValue {
        use tensorcast_proto::attr_value::{ListValue, Value};
        use tensorcast_proto::AttrValue;
        let list = |l: ListValue| AttrValue {
            value: Some(Value::List(Box::new(l))),
        };
        match self {
            AttrDefault::Type(d) => AttrValue::of_type(d.number()),
            AttrDefault::Bool(b) => AttrValue::of_bool(b),
            AttrDefault::UnknownShape => {
                AttrValue::of_shape(tensorcast_proto::partial_shape_to_proto(
                    &tensorcast_core::PartialTensorShape::unknown_rank(),
                ))
            }
            AttrDefault::Int(i) => AttrValue::of_int(i),
            AttrDefault::Float(f) => AttrValue {
                value: Some(Value::F(f)),
            },
            AttrDefault::Str(s) => AttrValue {
                value: Some(Value::S(bytes::Bytes::from_static(s.as_bytes()))),
            },
            AttrDefault::ListInt(v) => list(ListValue {
                i: v.to_vec(),
                ..Default::default()
            }),
            AttrDefault::ListStr(v) => list(ListValue {
                s: v.iter()
                    .map(|s| bytes::Bytes::from_static(s.as_bytes()))
                    .collect(),
                ..Default::default()
            }),
            AttrDefault::ListShape => list(ListValue::default()),
        }
    }

    /// The default as `SummarizeOpDef` prints it (`default=[1, 1, 1, 1]`, `default="NHWC"`).
    fn summary(self) -> String {
        crate::attr::summarize(&self.to_value())
    }
}

/// One attr of an op.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AttrDef {
    pub(crate) name: &'static str,
    pub(crate) kind: AttrKind,
    pub(crate) default: Option<AttrDefault>,
    pub(crate) allowed: Option<&'static [DataType]>,
    /// The values a string attr may take (`padding`: `SAME`, `VALID`), if restricted.
    pub(crate) allowed_strings: Option<&'static [&'static str]>,
    /// The least value of an int attr (or length of a list attr), if bounded.
    pub(crate) minimum: Option<i64>,
}

/// An op registration.
#[derive(Debug)]
pub(crate) struct OpDef {
    pub(crate) name: &'static str,
    pub(crate) inputs: &'static [ArgDef],
    pub(crate) outputs: &'static [ArgDef],
    pub(crate) attrs: &'static [AttrDef],
    pub(crate) commutative: bool,
    pub(crate) aggregate: bool,
    pub(crate) stateful: bool,
}

const fn arg(name: &'static str, attr: &'static str) -> ArgDef {
    ArgDef {
        name,
        ty: ArgType::Attr(attr),
    }
}

const fn fixed(name: &'static str, dtype: DataType) -> ArgDef {
    ArgDef {
        name,
        ty: ArgType::Fixed(dtype),
    }
}

/// An attr of `kind` with no allowed-value list and no minimum.
const fn attr(name: &'static str, kind: AttrKind, default: Option<AttrDefault>) -> AttrDef {
    AttrDef {
        name,
        kind,
        default,
        allowed: None,
        allowed_strings: None,
        minimum: None,
    }
}

const fn type_attr(name: &'static str) -> AttrDef {
    attr(name, AttrKind::Type, None)
}

const fn type_in(name: &'static str, allowed: &'static [DataType]) -> AttrDef {
    AttrDef {
        allowed: Some(allowed),
        ..type_attr(name)
    }
}

const fn bool_attr(name: &'static str, default: bool) -> AttrDef {
    attr(name, AttrKind::Bool, Some(AttrDefault::Bool(default)))
}

const INDEX_TYPES: &[DataType] = &[DataType::INT32, DataType::INT64];

const fn index_attr(name: &'static str) -> AttrDef {
    AttrDef {
        default: Some(AttrDefault::Type(DataType::INT32)),
        ..type_in(name, INDEX_TYPES)
    }
}

/// `Bitcast`'s type list: the core op's, so graph and eager checks cannot drift apart.
const BITCAST_TYPES: &[DataType] = &tensorcast_kernels::bitcast::BITCAST_TYPES;

/// The element-wise ops' `T` lists: the eager ops' own, so graph and eager checks agree.
const fn binary_types(op: BinaryOp) -> &'static [DataType] {
    match op.allowed_dtypes() {
        Some(types) => types,
        None => &[],
    }
}
const ADD_TYPES: &[DataType] = binary_types(BinaryOp::AddV2);
const SUB_TYPES: &[DataType] = binary_types(BinaryOp::Sub);
const MUL_TYPES: &[DataType] = binary_types(BinaryOp::Mul);
const COMPARE_TYPES: &[DataType] = binary_types(BinaryOp::Less);
const MINMAX_TYPES: &[DataType] = binary_types(BinaryOp::Maximum);
const DIV_TYPES: &[DataType] = binary_types(BinaryOp::Div);
const FLOOR_MOD_TYPES: &[DataType] = binary_types(BinaryOp::FloorMod);
const POW_TYPES: &[DataType] = binary_types(BinaryOp::Pow);
const SQUARED_DIFFERENCE_TYPES: &[DataType] = binary_types(BinaryOp::SquaredDifference);
const BOOL_XY: &[ArgDef] = &[fixed("x", DataType::BOOL), fixed("y", DataType::BOOL)];
const XY: &[ArgDef] = &[arg("x", "T"), arg("y", "T")];
const Z_T: &[ArgDef] = &[arg("z", "T")];
const Z_BOOL: &[ArgDef] = &[fixed("z", DataType::BOOL)];
const ISE: AttrDef = bool_attr("incompatible_shape_error", true);

/// A stateless op that is neither commutative nor an aggregate.
const fn op(
    name: &'static str,
    inputs: &'static [ArgDef],
    outputs: &'static [ArgDef],
    attrs: &'static [AttrDef],
) -> OpDef {
    OpDef {
        name,
        inputs,
        outputs,
        attrs,
        commutative: false,
        aggregate: false,
        stateful: false,
    }
}

/// An element-wise binary op, `x: T, y: T -> z: T` (or `z: bool`) with `T` of `types`.
macro_rules! binary {
    ($name:literal, $out:expr, $types:expr) => {
        op($name, XY, $out, &[type_in("T", $types)])
    };
}

/// An op with TensorFlow's `SetIsCommutative()`.
const fn commutative(def: OpDef) -> OpDef {
    OpDef {
        commutative: true,
        ..def
    }
}

/// Every op tensorcast registers, in no particular order.
pub(crate) static OPS: &[OpDef] = &[
    op(
        "Const",
        &[],
        &[arg("output", "dtype")],
        &[attr("value", AttrKind::Tensor, None), type_attr("dtype")],
    ),
    op(
        "Placeholder",
        &[],
        &[arg("output", "dtype")],
        &[
            type_attr("dtype"),
            attr("shape", AttrKind::Shape, Some(AttrDefault::UnknownShape)),
        ],
    ),
    op("NoOp", &[], &[], &[]),
    op(
        "Identity",
        &[arg("input", "T")],
        &[arg("output", "T")],
        &[type_attr("T")],
    ),
    op(
        "Cast",
        &[arg("x", "SrcT")],
        &[arg("y", "DstT")],
        &[
            type_attr("SrcT"),
            type_attr("DstT"),
            bool_attr("Truncate", false),
        ],
    ),
    op(
        "Shape",
        &[arg("input", "T")],
        &[arg("output", "out_type")],
        &[type_attr("T"), index_attr("out_type")],
    ),
    op(
        "Bitcast",
        &[arg("input", "T")],
        &[arg("output", "type")],
        &[type_in("T", BITCAST_TYPES), type_in("type", BITCAST_TYPES)],
    ),
    op(
        "BroadcastTo",
        &[arg("input", "T"), arg("shape", "Tidx")],
        &[arg("output", "T")],
        &[type_attr("T"), index_attr("Tidx")],
    ),
    op(
        "Reshape",
        &[arg("tensor", "T"), arg("shape", "Tshape")],
        &[arg("output", "T")],
        &[type_attr("T"), index_attr("Tshape")],
    ),
    commutative(op("Equal", XY, Z_BOOL, &[type_attr("T"), ISE])),
    commutative(op("NotEqual", XY, Z_BOOL, &[type_attr("T"), ISE])),
    binary!("Less", Z_BOOL, COMPARE_TYPES),
    binary!("LessEqual", Z_BOOL, COMPARE_TYPES),
    binary!("Greater", Z_BOOL, COMPARE_TYPES),
    binary!("GreaterEqual", Z_BOOL, COMPARE_TYPES),
    OpDef {
        aggregate: true,
        ..commutative(binary!("AddV2", Z_T, ADD_TYPES))
    },
    binary!("Sub", Z_T, SUB_TYPES),
    commutative(binary!("Mul", Z_T, MUL_TYPES)),
    binary!("Maximum", Z_T, MINMAX_TYPES),
    binary!("Minimum", Z_T, MINMAX_TYPES),
    binary!("RealDiv", Z_T, DIV_TYPES),
    binary!("Div", Z_T, DIV_TYPES),
    binary!("FloorDiv", Z_T, DIV_TYPES),
    binary!("FloorMod", Z_T, FLOOR_MOD_TYPES),
    binary!("Pow", Z_T, POW_TYPES),
    commutative(binary!("SquaredDifference", Z_T, SQUARED_DIFFERENCE_TYPES)),
    commutative(op("LogicalAnd", BOOL_XY, Z_BOOL, &[])),
    commutative(op("LogicalOr", BOOL_XY, Z_BOOL, &[])),
];

/// Most outputs one node may declare (`Split`'s `num_split`, `Unpack`'s `num`, ...): beyond it
/// a GraphDef's attr is refused rather than believed.
pub(crate) const MAX_OUTPUTS: usize = 1 << 16;

/// The registration of `op`, if tensorcast has one.
pub(crate) fn lookup(op: &str) -> Option<&'static OpDef> {
    OPS.iter().find(|d| d.name == op)
}

/// The ops tensorcast registers, as a type: every stage (shape functions, value propagation,
/// kernels, rewrites) matches on it exhaustively, so a new op that one stage forgets is a
/// compile error, not a run-time surprise. A node's op type string is parsed into it once, when
/// the node is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(
    clippy::enum_variant_names,
    reason = "the variants are TensorFlow's op names, NoOp among them"
)]
pub(crate) enum Op {
    Const,
    Placeholder,
    NoOp,
    Identity,
    Cast,
    Shape,
    Bitcast,
    BroadcastTo,
    Reshape,
    /// The element-wise binary ops (`Equal` ... `Minimum`), one registration each.
    Binary(BinaryOp),
    /// An op of the registry (`registry/`): its entry holds its `OpDef`, shape function and kernel.
    Reg(RegOp),
}

impl Op {
    /// The op of a type string, if tensorcast registers it.
    pub(crate) fn from_name(name: &str) -> Option<Op> {
        Some(match name {
            "Const" => Op::Const,
            "Placeholder" => Op::Placeholder,
            "NoOp" => Op::NoOp,
            "Identity" => Op::Identity,
            "Cast" => Op::Cast,
            "Shape" => Op::Shape,
            "Bitcast" => Op::Bitcast,
            "BroadcastTo" => Op::BroadcastTo,
            "Reshape" => Op::Reshape,
            other => match BinaryOp::from_name(other) {
                Some(b) => Op::Binary(b),
                None => Op::Reg(RegOp::from_name(other)?),
            },
        })
    }

    /// The type string.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Op::Const => "Const",
            Op::Placeholder => "Placeholder",
            Op::NoOp => "NoOp",
            Op::Identity => "Identity",
            Op::Cast => "Cast",
            Op::Shape => "Shape",
            Op::Bitcast => "Bitcast",
            Op::BroadcastTo => "BroadcastTo",
            Op::Reshape => "Reshape",
            Op::Binary(b) => b.name(),
            Op::Reg(r) => r.entry().def.name,
        }
    }

    /// The registration (signature and attrs).
    pub(crate) fn def(self) -> &'static OpDef {
        if let Op::Reg(r) = self {
            return r.entry().def;
        }
        // Every other `Op` has a row in `OPS` (the `every_op_has_a_registration` test checks it).
        lookup(self.name()).unwrap_or(&OPS[0])
    }
}

impl OpDef {
    /// TensorFlow's `SummarizeOpDef`: `Op<name=Cast; signature=x:SrcT -> y:DstT; attr=...>`.
    pub(crate) fn summary(&self) -> String {
        let args = |list: &[ArgDef]| {
            list.iter()
                .map(|a| match a.ty {
                    ArgType::Attr(t) | ArgType::TypeList(t) => format!("{}:{t}", a.name),
                    ArgType::Fixed(d) => format!("{}:{}", a.name, d.name()),
                    ArgType::List { number, ty } => format!("{}:{number}*{ty}", a.name),
                    ArgType::FixedList { number, dtype } => {
                        format!("{}:{number}*{}", a.name, dtype.name())
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut s = format!(
            "Op<name={}; signature={} -> {}",
            self.name,
            args(self.inputs),
            args(self.outputs)
        );
        for a in self.attrs {
            s.push_str(&format!("; attr={}:{}", a.name, a.kind.name()));
            match a.default {
                Some(AttrDefault::Type(d)) => s.push_str(&format!(",default={}", enum_name(d))),
                Some(AttrDefault::Bool(b)) => s.push_str(&format!(",default={b}")),
                Some(AttrDefault::UnknownShape) => s.push_str(",default=<unknown>"),
                Some(d) => s.push_str(&format!(",default={}", d.summary())),
                None => {}
            }
            if let Some(list) = a.allowed_strings {
                let l: Vec<String> = list.iter().map(|v| format!("\"{v}\"")).collect();
                s.push_str(&format!(",allowed=[{}]", l.join(", ")));
            }
            if let Some(m) = a.minimum {
                s.push_str(&format!(",min={m}"));
            }
            if let Some(list) = a.allowed {
                let l: Vec<String> = list.iter().map(|d| enum_name(*d)).collect();
                s.push_str(&format!(",allowed=[{}]", l.join(", ")));
            }
        }
        if self.commutative {
            s.push_str("; is_commutative=true");
        }
        if self.aggregate {
            s.push_str("; is_aggregate=true");
        }
        s.push('>');
        s
    }

    /// The OpDef's input types for a node with these type attrs (`float, float`), as the
    /// input-count message prints them.
    pub(crate) fn input_types_string(&self, attrs: &Attrs) -> String {
        let mut out = Vec::new();
        for a in self.inputs {
            match a.ty {
                ArgType::Attr(t) => out.push(
                    attr::get_type(attrs, t)
                        .map(|d| d.name())
                        .unwrap_or_else(|| t.to_string()),
                ),
                ArgType::Fixed(d) => out.push(d.name()),
                ArgType::List { number, ty } => {
                    let name = attr::get_type(attrs, ty)
                        .map(|d| d.name())
                        .unwrap_or_else(|| ty.to_string());
                    match attr::get_int(attrs, number) {
                        Some(n) => out.extend((0..n.clamp(0, 64)).map(|_| name.clone())),
                        None => out.push(format!("{number}*{name}")),
                    }
                }
                ArgType::FixedList { number, dtype } => match attr::get_int(attrs, number) {
                    Some(n) => out.extend((0..n.clamp(0, 64)).map(|_| dtype.name())),
                    None => out.push(format!("{number}*{}", dtype.name())),
                },
                ArgType::TypeList(t) => match attr::get_types(attrs, t) {
                    Some(list) => out.extend(list.iter().map(|d| d.name())),
                    None => out.push(t.to_string()),
                },
            }
        }
        out.join(", ")
    }

    /// The flat dtypes of `args` (inputs or outputs) for a node with `attrs`, lists expanded:
    /// `None` where an attr the signature needs is missing or malformed (a list count that is
    /// negative or larger than `limit`, a count attr that is not an int).
    pub(crate) fn expand(
        args: &[ArgDef],
        attrs: &Attrs,
        limit: usize,
    ) -> Option<Vec<Option<DataType>>> {
        let mut out = Vec::with_capacity(args.len());
        let count = |number: &str| {
            let n = attr::get_int(attrs, number)?;
            usize::try_from(n).ok().filter(|&n| n <= limit)
        };
        for a in args {
            match a.ty {
                ArgType::Attr(t) => out.push(attr::get_type(attrs, t)),
                ArgType::Fixed(d) => out.push(Some(d)),
                ArgType::List { number, ty } => {
                    let n = count(number)?;
                    let d = attr::get_type(attrs, ty);
                    out.extend(std::iter::repeat_n(d, n));
                }
                ArgType::FixedList { number, dtype } => {
                    let n = count(number)?;
                    out.extend(std::iter::repeat_n(Some(dtype), n));
                }
                ArgType::TypeList(t) => {
                    let list = attr::get_types(attrs, t)?;
                    if list.len() > limit {
                        return None;
                    }
                    out.extend(list.into_iter().map(Some));
                }
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_op_has_a_registration_and_every_registration_an_op() {
        for def in OPS {
            let op = Op::from_name(def.name).expect(def.name);
            assert_eq!(op.name(), def.name);
            assert!(std::ptr::eq(op.def(), def), "{}", def.name);
        }
        for b in BinaryOp::ALL {
            assert!(lookup(b.name()).is_some(), "{}", b.name());
        }
    }

    #[test]
    fn summary_cast_matches_tensorflow() {
        assert_eq!(
            lookup("Cast").map(OpDef::summary).as_deref(),
            Some("Op<name=Cast; signature=x:SrcT -> y:DstT; attr=SrcT:type; attr=DstT:type; attr=Truncate:bool,default=false>")
        );
        assert_eq!(
            lookup("Equal").map(OpDef::summary).as_deref(),
            Some("Op<name=Equal; signature=x:T, y:T -> z:bool; attr=T:type; attr=incompatible_shape_error:bool,default=true; is_commutative=true>")
        );
    }
}

//! The error type of the core crate: one variant per failure mode, with the fields a caller
//! matches on, printing TensorFlow's exact message where TensorFlow has one.

use crate::shape::dims_string;
use crate::{DataType, PartialTensorShape, TensorShape};

/// TensorFlow's status codes (the subset tensorcast produces, here and in the graph layer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Code {
    /// `INVALID_ARGUMENT`.
    InvalidArgument,
    /// `NOT_FOUND`.
    NotFound,
    /// `ALREADY_EXISTS`.
    AlreadyExists,
    /// `OUT_OF_RANGE`.
    OutOfRange,
    /// `RESOURCE_EXHAUSTED`.
    ResourceExhausted,
    /// `UNIMPLEMENTED`.
    Unimplemented,
    /// `FAILED_PRECONDITION`.
    FailedPrecondition,
    /// `INTERNAL`.
    Internal,
    /// `ABORTED`.
    Aborted,
    /// `CANCELLED`.
    Cancelled,
}

impl Code {
    /// TensorFlow's spelling, e.g. `INVALID_ARGUMENT`.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidArgument => "INVALID_ARGUMENT",
            Code::NotFound => "NOT_FOUND",
            Code::AlreadyExists => "ALREADY_EXISTS",
            Code::OutOfRange => "OUT_OF_RANGE",
            Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Code::Unimplemented => "UNIMPLEMENTED",
            Code::FailedPrecondition => "FAILED_PRECONDITION",
            Code::Internal => "INTERNAL",
            Code::Aborted => "ABORTED",
            Code::Cancelled => "CANCELLED",
        }
    }
}

/// A dtype list printed as TensorFlow prints an attr's allowed values (`float, int32`).
struct TypeList(&'static [DataType]);

/// A type list as an op's `OpDef` prints it: `DT_FLOAT, DT_INT32`.
struct EnumList(&'static [DataType]);

impl std::fmt::Display for EnumList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "DT_{}", d.name().to_uppercase())?;
        }
        Ok(())
    }
}

impl std::fmt::Display for TypeList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(&d.name())?;
        }
        Ok(())
    }
}

/// An error from a tensor operation, one variant per failure mode.
///
/// Match the variant to tell failures apart; `Display` prints exactly the message TensorFlow
/// prints where TensorFlow has one (`Cannot bitcast from 1 to 18`, `Incompatible shapes: [2,3]
/// vs. [3,2]`, `119 vs. 120`); [`Error::code`] gives TensorFlow's status code, derived from the
/// variant.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    // ---- op arguments -------------------------------------------------------------------
    /// Two shapes that do not broadcast together (TensorFlow's `BCast`).
    #[error("Incompatible shapes: {} vs. {}", dims_string(lhs), dims_string(rhs))]
    IncompatibleShapes {
        /// The op (`Equal`, `BroadcastTo`, ...).
        op: &'static str,
        /// The first shape's dims.
        lhs: Vec<i64>,
        /// The second shape's dims.
        rhs: Vec<i64>,
    },
    /// A dtype that an op's type attribute does not accept.
    #[error(
        "Value for attr '{attr}' of {} is not in the list of allowed values: {}",
        dtype.name(),
        TypeList(allowed)
    )]
    NotInTypeList {
        /// The op (`Bitcast`, `AddV2`, ...).
        op: &'static str,
        /// The attribute (`T`, `type`, ...).
        attr: &'static str,
        /// The dtype given.
        dtype: DataType,
        /// The dtypes the attribute accepts, in TensorFlow's order.
        allowed: &'static [DataType],
    },
    /// An input whose dtype differs from the one the op's signature binds it to.
    #[error(
        "cannot compute {op} as input #{index}(zero-based) was expected to be a {} tensor but is \
         a {} tensor",
        expected.name(),
        actual.name()
    )]
    InputTypeMismatch {
        /// The op.
        op: &'static str,
        /// The input's position, from 0.
        index: usize,
        /// The dtype the signature expects there.
        expected: DataType,
        /// The input's dtype.
        actual: DataType,
    },
    /// `Bitcast` between sizes the shape cannot absorb (TensorFlow prints the dtype numbers).
    #[error("Cannot bitcast from {} to {}", from.number(), to.number())]
    BitcastShape {
        /// The input's dtype.
        from: DataType,
        /// The dtype asked for.
        to: DataType,
    },
    /// `Tensor::bitcast_from` on sizes that do not fit, with TensorFlow's message (`other tensor
    /// has zero-sized data type`, `specified output type is zero-sized`, `input and output
    /// shapes/data type sizes are not compatible`).
    #[error("{message}")]
    BitcastFrom {
        /// TensorFlow's message for the case.
        message: &'static str,
    },
    /// `reinterpret_cast_to` of a scalar between dtypes of different sizes.
    #[error(
        "reinterpret_cast_to cannot keep the rank of a scalar while changing the element size \
         ({} is {} bits, {} is {} bits); reshape it to [1] first",
        from.name(),
        from.size() * 8,
        to.name(),
        to.size() * 8
    )]
    ReinterpretScalar {
        /// The input's dtype.
        from: DataType,
        /// The dtype asked for.
        to: DataType,
    },
    /// `reinterpret_cast_to` to a larger dtype whose size is not a multiple of the input's.
    #[error(
        "reinterpret_cast_to factor {from_bits}/{to_bits} is greater than 1 and not an integer"
    )]
    ReinterpretFactor {
        /// Bits of the input's element.
        from_bits: usize,
        /// Bits of the output's element.
        to_bits: usize,
    },
    /// `reinterpret_cast_to` to a larger dtype when the last dimension's bytes do not divide
    /// (TIK's message).
    #[error("Last dimension can't be divided")]
    ReinterpretLastDimension,
    /// A cast between dtypes that TensorFlow has no `Cast` kernel for.
    #[error("Cast {} to {} is not supported", from.name(), to.name())]
    UnsupportedCast {
        /// The input's dtype.
        from: DataType,
        /// The dtype asked for.
        to: DataType,
    },
    /// `saturate_cast` of a dtype without a minimum and maximum (bool): TensorFlow's Python
    /// text for it.
    #[error(
        "Cannot find minimum value of <dtype: '{0}'> with type <dtype: '{0}'>.",
        dtype.name()
    )]
    NoRange {
        /// The dtype without a range.
        dtype: DataType,
    },
    /// A dtype that an op takes in principle but has no CPU kernel for: TensorFlow's
    /// `NotFoundError`, whose text names the node with its attrs and lists the kernels
    /// registered for the op (as TensorFlow 2.21's `tensorflow-cpu` build registers them).
    #[error(
        "Could not find device for node: {{{{node {op}}}}} = {op}[T={}{}]\nAll kernels registered for op {op}:\n{}",
        dtype.proto_name().unwrap_or_default(),
        match incompatible_shape_error {
            Some(true) => ", incompatible_shape_error=true",
            Some(false) => ", incompatible_shape_error=false",
            None => "",
        },
        registered_kernels(op)
    )]
    NoKernel {
        /// The op.
        op: &'static str,
        /// The dtype.
        dtype: DataType,
        /// The `incompatible_shape_error` attr of `Equal`/`NotEqual` (printed with the node).
        incompatible_shape_error: Option<bool>,
    },
    /// An operation that needs plain bytes met a dtype whose elements are objects (strings,
    /// resources, variants) or have no size.
    #[error("{op} needs a memcpy-able dtype, not {}: its elements are not plain bytes", dtype.name())]
    NotBytes {
        /// The operation (`tensor_data()`, `bit-level view`, `reinterpret_cast_to`, ...).
        op: &'static str,
        /// The dtype.
        dtype: DataType,
    },

    // ---- dtypes and typed views --------------------------------------------------------
    /// `DT_INVALID` (`Type not set`) or a dtype tensorcast cannot hold (`Unexpected type: ...`).
    #[error("{}", invalid_dtype_message(*dtype))]
    InvalidDtype {
        /// The dtype.
        dtype: DataType,
    },
    /// A dtype name no table entry spells.
    #[error("unknown data type '{name}'")]
    UnknownDtypeName {
        /// The name given.
        name: String,
    },
    /// A typed view asked for the wrong element type (TensorFlow's CHECK message).
    #[error("{} expected, got {}", expected.name(), actual.name())]
    TypeMismatch {
        /// The tensor's dtype.
        actual: DataType,
        /// The dtype of the element type asked for.
        expected: DataType,
    },
    /// A bit-level view whose element size does not match the tensor's (`bit_casted_tensor`,
    /// `reinterpret_last_dimension`).
    #[error(
        "{op} needs an element of {expected_bytes} bytes for {}, got {} ({actual_bytes} bytes)",
        dtype.name(),
        element.name()
    )]
    ElementSize {
        /// The accessor.
        op: &'static str,
        /// The tensor's dtype.
        dtype: DataType,
        /// The element type asked for.
        element: DataType,
        /// Bytes the accessor needs per element.
        expected_bytes: usize,
        /// Bytes of the element type asked for.
        actual_bytes: usize,
    },
    /// A typed view's address does not meet the element type's alignment.
    #[error("tensor data at address {address:#x} is not aligned to {required} bytes, as {type_name} needs; use the unaligned_* accessors")]
    Misaligned {
        /// The element type asked for.
        type_name: &'static str,
        /// The data's address.
        address: usize,
        /// The alignment the type needs.
        required: usize,
    },
    /// A `bool` tensor holds a byte other than 0 or 1 (it was bitcast from other bytes).
    #[error(
        "a bool tensor holds a byte other than 0 or 1 (it was bitcast from other bytes); view it \
         as uint8 instead"
    )]
    InvalidBool,

    // ---- shapes ---------------------------------------------------------------------------
    /// More dimensions than [`crate::MAX_DIMENSIONS`].
    #[error("{}", if *in_tensor { "Too many dimensions in tensor" } else { "Too many dimensions" })]
    TooManyDimensions {
        /// `true` when adding a dimension to a shape (TensorFlow's `AddDim` wording).
        in_tensor: bool,
    },
    /// A dimension below the smallest allowed value (0 for shapes, -1 for partial shapes).
    #[error("Dimension {dim} must be >= {min}")]
    NegativeDimension {
        /// The dimension given.
        dim: i64,
        /// The smallest allowed.
        min: i64,
    },
    /// A negative size given to a shape method.
    #[error("Expected a non-negative size, got {size}")]
    NegativeSize {
        /// The size given.
        size: i64,
    },
    /// A shape whose element count exceeds 2**63 - 1.
    #[error("Shape {} would have more than 2**63 - 1 elements", dims_string(dims))]
    TooManyElements {
        /// The shape's dims.
        dims: Vec<i64>,
    },
    /// A product of sizes that overflows `i64` (TensorFlow's `MultiplyWithoutOverflow` check).
    #[error("Encountered overflow when multiplying {lhs} with {rhs}{}", result.map(|r| format!(", result: {r}")).unwrap_or_default())]
    MultiplyOverflow {
        /// The first factor.
        lhs: i64,
        /// The second factor.
        rhs: i64,
        /// The wrapped result, where TensorFlow prints it.
        result: Option<i64>,
    },
    /// A dimension index past a shape's rank.
    #[error("Dimension {dim} out of range for a shape of rank {rank}")]
    DimensionOutOfRange {
        /// The index given.
        dim: i64,
        /// The shape's rank.
        rank: usize,
    },
    /// Merging partial shapes of different ranks.
    #[error("PartialTensorShape: Incompatible ranks during merge: {lhs} vs. {rhs}")]
    MergeRanks {
        /// The first rank.
        lhs: usize,
        /// The second rank.
        rhs: usize,
    },
    /// Merging partial shapes with a known dimension that differs.
    #[error("PartialTensorShape: Incompatible shapes during merge: {lhs} vs. {rhs}")]
    MergeShapes {
        /// The first shape.
        lhs: PartialTensorShape,
        /// The second shape.
        rhs: PartialTensorShape,
    },
    /// A view asked for a different number of elements (or, for bit-level views, bytes) than
    /// the tensor holds (TensorFlow's CHECK text: requested vs. held).
    #[error("{requested} vs. {actual}")]
    ElementCount {
        /// Elements (bytes) asked for.
        requested: i128,
        /// Elements (bytes) the tensor holds.
        actual: i128,
    },
    /// A fixed-rank view of a tensor of another rank.
    #[error("Asking for tensor of {requested} dimensions from a tensor of {actual} dimensions")]
    RankMismatch {
        /// The rank asked for.
        requested: usize,
        /// The tensor's rank.
        actual: usize,
    },
    /// `flat_inner_outer_dims` with `begin + NDIMS <= 0`.
    #[error("flat_inner_outer_dims needs begin + NDIMS > 0, got begin {begin} and NDIMS {ndims}")]
    FlatInnerOuterDims {
        /// The `begin` given.
        begin: i64,
        /// The rank asked for.
        ndims: usize,
    },
    /// A scalar accessor on a tensor that does not hold exactly one element.
    #[error("Must have a one element tensor")]
    NotOneElement {
        /// Elements the tensor holds.
        elements: i64,
    },
    /// Values given for a shape that holds another number of elements.
    #[error("{values} values given for shape {shape} of {} elements", shape.num_elements())]
    ValueCount {
        /// Values given.
        values: usize,
        /// The shape.
        shape: TensorShape,
    },
    /// Bytes given for a tensor that needs another number (TensorFlow's message).
    #[error("Input size was {actual} and expected {expected}")]
    ByteCount {
        /// Bytes given.
        actual: usize,
        /// Bytes the dtype and shape need.
        expected: u128,
    },
    /// A shape operand (of `BroadcastTo`) that is not a vector.
    #[error("shape must be a vector of {{int32,int64}}, got shape {shape}")]
    ShapeOperandNotVector {
        /// The operand's own shape.
        shape: TensorShape,
    },
    /// A shape operand (of `BroadcastTo`) of a dtype other than int32 and int64.
    #[error("shape must be a vector of {{int32,int64}}.")]
    ShapeOperandDtype {
        /// The operand's dtype.
        dtype: DataType,
    },
    /// `BroadcastTo` to a shape of lower rank than the input's.
    #[error("Rank of input ({input}) must be no greater than rank of output shape ({output}).")]
    BroadcastRank {
        /// The input's rank.
        input: usize,
        /// The target's rank.
        output: usize,
    },
    /// `BroadcastTo` to a shape the input does not broadcast to.
    #[error("Unable to broadcast tensor of shape {input} to tensor of shape {output}")]
    BroadcastToShape {
        /// The input's shape.
        input: Box<TensorShape>,
        /// The target shape.
        output: Box<TensorShape>,
    },
    /// `Reshape`'s sizes operand that is not a vector or scalar.
    #[error("sizes input must be 1-D, not {shape}")]
    ReshapeSizesRank {
        /// The operand's shape.
        shape: TensorShape,
    },
    /// `Reshape`'s sizes operand of a dtype other than int32 and int64.
    #[error("sizes input must be int32 or int64, not {}", dtype.name())]
    ReshapeSizesDtype {
        /// The operand's dtype.
        dtype: DataType,
    },
    /// `Reshape` sizes with two `-1`s.
    #[error("Only one input size may be -1, not both {first} and {second}")]
    ReshapeTwoUnknown {
        /// The first `-1`'s position.
        first: usize,
        /// The second's.
        second: usize,
    },
    /// A `Reshape` size below -1.
    #[error("Size {index} must be non-negative, not {size}")]
    ReshapeNegativeSize {
        /// The size's position.
        index: usize,
        /// The size.
        size: i64,
    },
    /// `Reshape` sizes whose product overflows.
    #[error("Reshape would create a tensor with too many elements")]
    ReshapeTooManyElements,
    /// `Reshape` with a `-1` the known sizes do not divide the input into.
    #[error(
        "Input to reshape is a tensor with {elements} values, but the requested shape requires a multiple of {product}"
    )]
    ReshapeNotMultiple {
        /// The input's elements.
        elements: i64,
        /// The product of the known sizes.
        product: i64,
    },
    /// `Reshape` to a shape with another number of elements (the kernel's message).
    #[error(
        "Input to reshape is a tensor with {elements} values, but the requested shape has {requested}"
    )]
    ReshapeSizes {
        /// The input's elements.
        elements: i64,
        /// The requested shape's elements.
        requested: i64,
    },
    /// `Shape` with a 32-bit output and a dim that does not fit.
    #[error("Shape output type is 32-bit but dim {index} is {dim}")]
    ShapeOutput32 {
        /// The dim's position.
        index: usize,
        /// The dim.
        dim: i64,
    },
    /// A reshape to a shape with another number of elements.
    #[error(
        "Cannot reshape a tensor with {elements} elements to shape {shape} ({} elements)",
        shape.num_elements()
    )]
    Reshape {
        /// Elements of the tensor.
        elements: i64,
        /// The shape asked for.
        shape: TensorShape,
    },
    /// `Slice` bounds outside the first dimension.
    #[error(
        "Slice requires 0 <= start <= limit <= dim_size(0), got start {start}, limit {limit}, \
         dim_size(0) {dim0}"
    )]
    SliceOutOfRange {
        /// Start row.
        start: i64,
        /// End row (exclusive).
        limit: i64,
        /// Size of the first dimension.
        dim0: i64,
    },
    /// `SubSlice` index outside the first dimension.
    #[error("SubSlice requires 0 <= index < dim_size(0), got index {index}, dim_size(0) {dim0}")]
    SubSliceOutOfRange {
        /// The index given.
        index: i64,
        /// Size of the first dimension.
        dim0: i64,
    },
    /// An operation on the first (or last) dimension of a scalar.
    #[error("{op} requires a tensor of rank >= 1, got a scalar")]
    ScalarNotAllowed {
        /// The operation.
        op: &'static str,
    },

    // ---- memory and state ------------------------------------------------------------------
    /// Memory could not be allocated.
    #[error(transparent)]
    Alloc(#[from] tensorcast_buffer::AllocError),
    /// A tensor too large for this machine's memory or address space.
    #[error("cannot allocate a {} tensor of {elements} elements", dtype.name())]
    OutOfMemory {
        /// The dtype.
        dtype: DataType,
        /// Elements asked for.
        elements: u64,
    },
    /// A write to a buffer another tensor shares (or a read-only one).
    #[error(
        "the tensor's buffer is shared with another tensor or read-only; call make_unique() \
         (which copies) before writing"
    )]
    SharedBuffer,
    /// Reading the values of a tensor that has no buffer (an unallocated tensor).
    #[error("{}", uninitialized_message(op, *dtype, *elements))]
    Uninitialized {
        /// The operation (`Cast`, or `read` for element access).
        op: &'static str,
        /// The tensor's dtype.
        dtype: DataType,
        /// Elements its shape holds.
        elements: i64,
    },
    /// A broken internal invariant (a bug in tensorcast, reported instead of a panic).
    #[error("{0}")]
    Internal(String),
    /// A `TensorShape` edit got an index outside the shape (`SetDimWithStatus`,
    /// `InsertDimWithStatus`, `RemoveDimRangeWithStatus`), with TensorFlow's message for each:
    /// `Index must be less than 3, got 5`, `The insertion index must be at most 3 got 4`,
    /// `Start index must be less than 2, got 3`...
    #[error("{}", crate::shape_edit::index_message(*edit, *index, *rank))]
    ShapeIndex {
        /// Which edit and which of its indices.
        edit: crate::shape_edit::ShapeEdit,
        /// The index given (after TensorFlow's adjustment of negative ones, where it has one).
        index: i64,
        /// The shape's rank.
        rank: usize,
    },
    /// `InsertDimWithStatus` on a shape that already has the most dimensions allowed.
    #[error("Shape has {rank} dimensions which is the maximum allowed")]
    MaxDimensionsReached {
        /// The shape's rank.
        rank: usize,
    },

    /// An element-wise op's `T` not in its type list, as TensorFlow's eager runtime words it:
    /// the first line of [`Error::NotInTypeList`], then the `NodeDef` and `OpDef` lines it
    /// appends (the conformance vectors record the whole text).
    #[error(
        "Value for attr 'T' of {} is not in the list of allowed values: {}\n\t; NodeDef: \
         {{{{node {op}}}}}; Op<name={op}; signature=x:T, y:T -> z:{output}; \
         attr=T:type,allowed=[{}]{traits}>",
        dtype.name(),
        TypeList(allowed),
        EnumList(allowed)
    )]
    OpNotInTypeList {
        /// The op.
        op: &'static str,
        /// The dtype given.
        dtype: DataType,
        /// The dtypes `T` accepts, in TensorFlow's order.
        allowed: &'static [DataType],
        /// The output's type in the signature: `T`, or `bool` for comparisons.
        output: &'static str,
        /// The op's traits as TensorFlow prints them (`; is_commutative=true`), or nothing.
        traits: &'static str,
    },
    /// An op's argument error whose text is the op's own (`Matrix size-incompatible: In[0]:
    /// [2,3], In[1]: [4,5]`, `Expected begin, end, and strides to be 1D equal size tensors, ...`):
    /// the message TensorFlow prints and the status code it gives. The ops of the kernels crate
    /// report through it, so that adding an op does not add a variant here.
    #[error("{message}")]
    Op {
        /// The op (`MatMul`, `StridedSlice`, ...).
        op: &'static str,
        /// TensorFlow's status code for the failure.
        code: Code,
        /// TensorFlow's message, exactly.
        message: String,
    },
    /// A broadcast that TensorFlow's kernels do not implement: more than 5 dims after merging.
    #[error("Broadcast between {x} and {y} is not supported yet.")]
    BroadcastUnsupported {
        /// The first operand's shape.
        x: Box<TensorShape>,
        /// The second's.
        y: Box<TensorShape>,
    },
}

fn invalid_dtype_message(dtype: DataType) -> String {
    if dtype == DataType::INVALID {
        "Type not set".to_string()
    } else {
        format!(
            "Unexpected type: {}",
            dtype
                .proto_name()
                .unwrap_or_else(|| dtype.number().to_string())
        )
    }
}

fn uninitialized_message(op: &str, dtype: DataType, elements: i64) -> String {
    if op == "Cast" {
        format!(
            "cannot cast an uninitialized {} tensor of {elements} elements",
            dtype.name()
        )
    } else {
        format!(
            "uninitialized Tensor of {elements} elements of type {}",
            dtype.number()
        )
    }
}

impl Error {
    /// An [`Error::Op`] with status `INVALID_ARGUMENT`, the code of almost every op-argument
    /// error TensorFlow reports.
    pub fn invalid_argument(op: &'static str, message: impl Into<String>) -> Error {
        Error::Op {
            op,
            code: Code::InvalidArgument,
            message: message.into(),
        }
    }

    /// Checks that input `index` of `op` (from 0) has the dtype its signature `expected`.
    ///
    /// # Errors
    /// [`Error::InputTypeMismatch`] (`cannot compute AddV2 as input #1(zero-based) was expected
    /// to be a float tensor but is a int32 tensor`) when `actual` differs.
    pub fn check_input_type(
        op: &'static str,
        index: usize,
        expected: DataType,
        actual: DataType,
    ) -> Result<()> {
        if actual == expected {
            Ok(())
        } else {
            Err(Error::InputTypeMismatch {
                op,
                index,
                expected,
                actual,
            })
        }
    }

    /// TensorFlow's status code for this error.
    pub fn code(&self) -> Code {
        match self {
            Error::NoKernel { .. } => Code::NotFound,
            Error::UnsupportedCast { .. } | Error::BroadcastUnsupported { .. } => {
                Code::Unimplemented
            }
            Error::Alloc(_) | Error::OutOfMemory { .. } => Code::ResourceExhausted,
            Error::SharedBuffer => Code::FailedPrecondition,
            Error::Uninitialized { op, .. } if *op != "Cast" => Code::FailedPrecondition,
            Error::Internal(_) | Error::MaxDimensionsReached { .. } => Code::Internal,
            Error::ShapeIndex { edit, .. } => edit.code(),
            Error::Op { code, .. } => *code,
            _ => Code::InvalidArgument,
        }
    }
}

/// The kernels TensorFlow 2.21's CPU build (the `tensorflow-cpu` wheel) registers for `op`, as
/// its "could not find device" error lists them: one line per registration, in its order.
/// Only the ops whose [`Error::NoKernel`] tensorcast reports have a list.
fn registered_kernels(op: &str) -> &'static str {
    // The XLA JIT's one registration line over its types, then one line per type for each
    // `CPU` or `DEFAULT` kernel, all in TensorFlow's order.
    macro_rules! xla {
        ($first:ident $($t:ident)*) => {
            concat!(
                "  device='XLA_CPU_JIT'; T in [DT_",
                stringify!($first),
                $(", DT_", stringify!($t),)*
                "]\n"
            )
        };
    }
    macro_rules! each {
        ($device:literal: $($t:ident)*) => {
            concat!($("  device='", $device, "'; T in [DT_", stringify!($t), "]\n",)*)
        };
    }
    // Equal, NotEqual and Select's XLA types; Equal and NotEqual also register the same CPU
    // kernels, in another order relative to the DEFAULT one.
    macro_rules! xla_all {
        () => {
            xla!(FLOAT DOUBLE INT32 UINT8 INT16 INT8 COMPLEX64 INT64 BOOL QINT8 QUINT8 QINT32
                BFLOAT16 UINT16 COMPLEX128 HALF UINT32 UINT64 FLOAT8_E5M2 FLOAT8_E4M3FN
                FLOAT8_E4M3FNUZ FLOAT8_E4M3B11FNUZ FLOAT8_E5M2FNUZ INT4 UINT4)
        };
    }
    macro_rules! cpu_equal {
        () => {
            each!("CPU": BOOL STRING COMPLEX128 COMPLEX64 INT64 INT32 QINT32 QUINT16 QUINT8
                QINT16 QINT8 UINT64 UINT32 UINT16 BFLOAT16 INT16 INT8 UINT8 DOUBLE HALF FLOAT)
        };
    }
    macro_rules! xla_div {
        () => {
            xla!(FLOAT DOUBLE INT32 UINT8 INT16 INT8 COMPLEX64 INT64 BFLOAT16 UINT16 COMPLEX128
                HALF UINT32 UINT64)
        };
    }
    match op {
        "Equal" => concat!(xla_all!(), cpu_equal!(), each!("DEFAULT": INT32)),
        "NotEqual" => concat!(xla_all!(), each!("DEFAULT": INT32), cpu_equal!()),
        "ClipByValue" => concat!(
            xla!(FLOAT DOUBLE INT32 UINT8 INT16 INT8 COMPLEX64 INT64 QINT8 QUINT8 QINT32
                BFLOAT16 UINT16 COMPLEX128 HALF UINT32 UINT64),
            each!("CPU": COMPLEX128 COMPLEX64 UINT16 UINT8 INT64 INT32 INT16 INT8 BFLOAT16
                DOUBLE FLOAT HALF)
        ),
        "RealDiv" => concat!(
            xla_div!(),
            each!("CPU": COMPLEX128 COMPLEX64 BFLOAT16 DOUBLE HALF FLOAT)
        ),
        "FloorDiv" => concat!(
            xla_div!(),
            each!("DEFAULT": INT32),
            each!("CPU": DOUBLE BFLOAT16 HALF FLOAT INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16
                UINT8)
        ),
        // Select and SelectV2 register the same kernels, in the same order.
        "Select" | "SelectV2" => concat!(
            xla_all!(),
            each!("CPU": VARIANT RESOURCE STRING BOOL COMPLEX128 COMPLEX64 DOUBLE FLOAT BFLOAT16
                HALF INT32 INT8 UINT8 INT16 UINT16 UINT32 INT64 UINT64)
        ),
        _ => "",
    }
}

/// Result with the core [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_prints_tensorflow_words_for_keyed_variants() {
        let e = Error::IncompatibleShapes {
            op: "AddV2",
            lhs: vec![2, 3],
            rhs: vec![3, 2],
        };
        assert_eq!(e.to_string(), "Incompatible shapes: [2,3] vs. [3,2]");
        let e = Error::NotInTypeList {
            op: "Equal",
            attr: "T",
            dtype: DataType::BOOL,
            allowed: &[DataType::FLOAT, DataType::INT32],
        };
        assert_eq!(
            e.to_string(),
            "Value for attr 'T' of bool is not in the list of allowed values: float, int32"
        );
        assert!(Error::check_input_type("AddV2", 1, DataType::FLOAT, DataType::FLOAT).is_ok());
        let e = Error::check_input_type("AddV2", 1, DataType::FLOAT, DataType::INT32).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot compute AddV2 as input #1(zero-based) was expected to be a float tensor but \
             is a int32 tensor"
        );
        assert_eq!(e.code(), Code::InvalidArgument);
        let e = Error::BitcastShape {
            from: DataType::FLOAT,
            to: DataType::COMPLEX128,
        };
        assert_eq!(e.to_string(), "Cannot bitcast from 1 to 18");
    }

    #[test]
    fn op_errors_print_the_op_text_with_their_code() {
        let e = Error::invalid_argument(
            "MatMul",
            "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]",
        );
        assert_eq!(
            e.to_string(),
            "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,5]"
        );
        assert_eq!(e.code(), Code::InvalidArgument);
        let e = Error::Op {
            op: "Range",
            code: Code::ResourceExhausted,
            message: "too big".into(),
        };
        assert_eq!(e.code(), Code::ResourceExhausted);
    }

    #[test]
    fn code_follows_the_variant() {
        assert_eq!(Error::SharedBuffer.code(), Code::FailedPrecondition);
        let cast = Error::Uninitialized {
            op: "Cast",
            dtype: DataType::FLOAT,
            elements: 2,
        };
        assert_eq!(cast.code(), Code::InvalidArgument);
        let read = Error::Uninitialized {
            op: "read",
            dtype: DataType::FLOAT,
            elements: 2,
        };
        assert_eq!(read.code(), Code::FailedPrecondition);
        let unsupported = Error::UnsupportedCast {
            from: DataType::STRING,
            to: DataType::FLOAT,
        };
        assert_eq!(unsupported.code(), Code::Unimplemented);
        let big = Error::OutOfMemory {
            dtype: DataType::FLOAT,
            elements: 1 << 62,
        };
        assert_eq!(big.code(), Code::ResourceExhausted);
    }
}

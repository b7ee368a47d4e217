//! What TensorFlow checks before an element-wise kernel runs, in its order, and the errors it
//! gives (every error of the element-wise ops is built here).

use super::BinaryOp;
use tensorcast_core::dtypes;
use tensorcast_core::Error;
use tensorcast_core::{DataType, TensorShape};

/// The op's `T` type list, in the order of its registration (the order of the message).
pub(crate) const fn allowed(op: BinaryOp) -> Option<&'static [DataType]> {
    use DataType as D;
    const CMP: &[DataType] = crate::type_lists::REAL_NUMBER_TYPES;
    const ADD: &[DataType] = dtypes!(
        "bfloat16, half, float, double, uint8, uint16, uint32, uint64, int8, int16, int32, int64, \
         complex64, complex128"
    );
    const SUB: &[DataType] = dtypes!(
        "bfloat16, half, float, double, uint8, int8, uint16, int16, int32, int64, complex64, \
         complex128, uint32, uint64"
    );
    const MUL: &[DataType] = dtypes!(
        "bfloat16, half, float, double, uint8, int8, uint16, int16, int32, uint32, uint64, int64, \
         complex64, complex128"
    );
    const MAXMIN: &[DataType] = dtypes!(
        "bfloat16, half, float, double, int8, uint8, int16, uint16, int32, uint32, int64, uint64"
    );
    // RealDiv, Div and FloorDiv share one list; CPU kernels exist for some only (`kernel`).
    const DIV: &[DataType] = MUL;
    const FLOOR_MOD: &[DataType] = dtypes!(
        "int8, int16, int32, int64, uint8, uint16, uint32, uint64, bfloat16, half, float, double"
    );
    const POW: &[DataType] =
        dtypes!("bfloat16, float, half, double, int8, int16, int32, int64, complex64, complex128");
    const SQUARED_DIFFERENCE: &[DataType] =
        dtypes!("bfloat16, half, float, double, int32, int64, complex64, complex128");
    const LOGICAL: &[DataType] = &[D::BOOL];
    match op {
        // `Equal` and `NotEqual` take any type (their kernels decide; see `no_kernel`).
        BinaryOp::Equal | BinaryOp::NotEqual => None,
        BinaryOp::Less | BinaryOp::LessEqual | BinaryOp::Greater | BinaryOp::GreaterEqual => {
            Some(CMP)
        }
        BinaryOp::AddV2 => Some(ADD),
        BinaryOp::Sub => Some(SUB),
        BinaryOp::Mul => Some(MUL),
        BinaryOp::Maximum | BinaryOp::Minimum => Some(MAXMIN),
        BinaryOp::RealDiv | BinaryOp::Div | BinaryOp::FloorDiv => Some(DIV),
        BinaryOp::FloorMod => Some(FLOOR_MOD),
        BinaryOp::Pow => Some(POW),
        BinaryOp::SquaredDifference => Some(SQUARED_DIFFERENCE),
        BinaryOp::LogicalAnd | BinaryOp::LogicalOr => Some(LOGICAL),
    }
}

/// A list of dtypes as a set of dtype numbers (bit `n` for dtype number `n`; every type in the
/// lists here numbers below 64), so that a check on every call is one test, not a search.
const fn mask(list: &[DataType]) -> u64 {
    let mut m = 0u64;
    let mut i = 0;
    while i < list.len() {
        m |= 1 << list[i].number();
        i += 1;
    }
    m
}

/// The op's type list as a [`mask`] (0 for `Equal`/`NotEqual`, which have none).
const fn allowed_mask(op: BinaryOp) -> u64 {
    const N: usize = BinaryOp::ALL.len();
    const MASKS: [u64; N] = {
        let mut m = [0u64; N];
        let mut i = 0;
        while i < N {
            if let Some(list) = allowed(BinaryOp::ALL[i]) {
                m[i] = mask(list);
            }
            i += 1;
        }
        m
    };
    MASKS[op as usize]
}

/// True if `dtype` is in the set `mask` (see [`allowed_mask`]).
fn in_mask(mask: u64, dtype: DataType) -> bool {
    u32::try_from(dtype.number()).is_ok_and(|n| n < 64 && mask >> n & 1 == 1)
}

/// The op's traits as its `OpDef` prints them after the attrs.
fn op_traits(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::AddV2 => "; is_commutative=true; is_aggregate=true",
        BinaryOp::Mul | BinaryOp::SquaredDifference => "; is_commutative=true",
        _ => "",
    }
}

/// TensorFlow's checks on the dtypes, in its order: `T` is taken from input 0 and checked
/// against the type list, then input 1 must have the same dtype.
pub(crate) fn dtypes(op: BinaryOp, x: DataType, y: DataType) -> Result<(), Error> {
    // `LogicalAnd`/`LogicalOr` have no type attr: each input must be a `bool` tensor.
    if op.is_logical() {
        for (index, actual) in [(0, x), (1, y)] {
            Error::check_input_type(op.name(), index, DataType::BOOL, actual)?;
        }
        return Ok(());
    }
    if let Some(list) = allowed(op) {
        if !in_mask(allowed_mask(op), x) {
            return Err(not_in_type_list(op, x, list));
        }
    }
    // A dtype of the list without a CPU kernel fails before the second input is looked at.
    if matches!(op, BinaryOp::RealDiv | BinaryOp::FloorDiv) {
        kernel(op, x, true)?;
    }
    Error::check_input_type(op.name(), 1, x, y)
}

/// `Value for attr 'T' of bool is not in the list of allowed values: ...`, with the `NodeDef`
/// and `OpDef` lines TensorFlow's eager runtime appends.
fn not_in_type_list(op: BinaryOp, dtype: DataType, list: &'static [DataType]) -> Error {
    Error::OpNotInTypeList {
        op: op.name(),
        dtype,
        allowed: list,
        output: if op.is_comparison() { "bool" } else { "T" },
        traits: op_traits(op),
    }
}

/// `Incompatible shapes: [2,3] vs. [3,2]`.
pub(crate) fn incompatible(op: BinaryOp, x: &TensorShape, y: &TensorShape) -> Error {
    Error::IncompatibleShapes {
        op: op.name(),
        lhs: x.dim_sizes().to_vec(),
        rhs: y.dim_sizes().to_vec(),
    }
}

/// `Equal`/`NotEqual` take any type, but TensorFlow's CPU build has kernels for these only
/// (and `RealDiv`, `FloorDiv` for part of their type lists);
/// for any other dtype (float8, float4, int4/int2, resource, variant) it fails with its
/// `NotFoundError`, "Could not find device for node", before looking at shapes.
pub(crate) fn kernel(
    op: BinaryOp,
    dtype: DataType,
    incompatible_shape_error: bool,
) -> Result<(), Error> {
    const EQUALITY_KERNELS: u64 = {
        mask(dtypes!(
            "bool, string, complex128, complex64, int64, int32, qint32, quint16, quint8, qint16, \
             qint8, uint64, uint32, uint16, bfloat16, int16, int8, uint8, double, half, float"
        ))
    };
    if matches!(op, BinaryOp::Equal | BinaryOp::NotEqual) && !in_mask(EQUALITY_KERNELS, dtype) {
        return Err(Error::NoKernel {
            op: op.name(),
            dtype,
            incompatible_shape_error: Some(incompatible_shape_error),
        });
    }
    // `RealDiv` has CPU kernels for the floating-point and complex types of its list only,
    // `FloorDiv` for all but the complex ones.
    let missing = match op {
        BinaryOp::RealDiv => !(dtype.is_floating() || dtype.is_complex()),
        BinaryOp::FloorDiv => dtype.is_complex(),
        _ => false,
    };
    if missing {
        return Err(Error::NoKernel {
            op: op.name(),
            dtype,
            incompatible_shape_error: None,
        });
    }
    Ok(())
}

/// TensorFlow's broadcasting kernels exist for up to 5 dims after `BCast` merges neighbouring
/// dims of the same kind; more is its `Unimplemented` error.
pub(crate) fn too_many_dims(x: &TensorShape, y: &TensorShape) -> Error {
    Error::BroadcastUnsupported {
        x: Box::new(x.clone()),
        y: Box::new(y.clone()),
    }
}

/// The number of dims TensorFlow's `BCast` reduces two compatible shapes to: dims where both
/// are 1 are dropped, and a dim joins the previous one when the same operands are 1 there.
pub(crate) fn bcast_dims(x: &[i64], y: &[i64]) -> usize {
    let rank = x.len().max(y.len());
    let at = |s: &[i64], j: usize| -> i64 {
        // j counts from the innermost dim.
        if j < s.len() {
            s[s.len() - 1 - j]
        } else {
            1
        }
    };
    let mut groups = 0usize;
    let mut prev: Option<(bool, bool)> = None;
    for j in 0..rank {
        let (a, b) = (at(x, j), at(y, j));
        if a == 1 && b == 1 {
            continue;
        }
        let cur = (a == 1, b == 1);
        if prev != Some(cur) {
            groups += 1;
        }
        prev = Some(cur);
    }
    groups.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_mask_matches_the_type_lists() {
        for op in BinaryOp::ALL {
            let Some(list) = allowed(op) else { continue };
            for n in -200..400 {
                let d = DataType::from_number(n);
                assert_eq!(
                    in_mask(allowed_mask(op), d),
                    list.contains(&d),
                    "{op:?} {n}"
                );
            }
        }
    }

    #[test]
    fn bcast_dims_merges_runs_of_the_same_kind() {
        assert_eq!(bcast_dims(&[4096, 16384], &[1, 16384]), 2);
        assert_eq!(bcast_dims(&[2, 3, 4], &[2, 3, 4]), 1);
        assert_eq!(bcast_dims(&[2, 1, 2, 1, 2, 1], &[1, 2, 1, 2, 1, 2]), 6);
        assert_eq!(bcast_dims(&[2, 1, 1, 3, 1], &[1, 2, 2, 1, 4]), 4);
        assert_eq!(bcast_dims(&[], &[]), 1);
    }
}

//! TensorFlow's named type lists, as its op registrations use them (`T: numbertype`), in its
//! order (the order its `NotInTypeList` messages print): one definition for every op that
//! registers the same list.

use tensorcast_core::{dtypes, DataType};

/// `numbertype`: `Cumsum`, `BiasAdd`, `ClipByValue`.
pub(crate) const NUMBER_TYPES: &[DataType] = dtypes!(
    "float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, bfloat16, \
     qint16, quint16, uint16, complex128, half, uint32, uint64"
);

/// `realnumbertype`: `TopKV2`, the comparisons.
pub(crate) const REAL_NUMBER_TYPES: &[DataType] = dtypes!(
    "float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64"
);

/// `floatingpointtype`: `AvgPool`, `DepthwiseConv2dNative`.
pub(crate) const FLOATING_POINT_TYPES: &[DataType] = dtypes!("half, bfloat16, float, double");

/// The eight integer types with CPU kernels (TensorFlow's `TF_CALL_INTEGRAL_TYPES`): the
/// reductions' and the integer math ops'.
pub(crate) const INTEGRAL_TYPES: &[DataType] =
    dtypes!("int8, int16, int32, int64, uint8, uint16, uint32, uint64");

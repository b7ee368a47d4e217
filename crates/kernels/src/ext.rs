//! [`TensorOps`]: the ops of this crate as methods on [`Tensor`] (`t.cast(..)`,
//! `t.broadcast_to(..)`, `x.add(&y)`, ...).
//!
//! Why a trait: the tensor lives in `tensorcast-core` and the ops here, and this crate depends
//! on core, never the reverse (core holds what TensorFlow's `Tensor` class holds: dtype, shape,
//! buffer, `BitcastFrom`, slicing, the debug text). An inherent method on `Tensor` would have to
//! be written in core and so call into this crate; an extension trait gives the same call
//! syntax with the dependency pointing one way. Bring it in with
//! `use tensorcast_kernels::TensorOps` (or `tensorcast_kernels::prelude::*`, or the facade's
//! `tensorcast::prelude::*`). Each method is the free function of its module, which stays the
//! reference for the op's rules.
//!
//! ```
//! use tensorcast_core::{DataType, Tensor, TensorShape};
//! use tensorcast_kernels::TensorOps;
//!
//! let x = Tensor::vector(&[1.0f32, 2.0]);
//! let grid = x.broadcast_to(&TensorShape::new(&[2, 2])?)?;
//! let sum = grid.add(&x)?;
//! assert_eq!(sum.cast(DataType::INT32)?.to_vec::<i32>()?, vec![2, 4, 2, 4]);
//! assert_eq!(x.bitcast(DataType::UINT8)?.shape().dim_sizes(), &[2, 4]);
//! # Ok::<(), tensorcast_core::Error>(())
//! ```

use tensorcast_core::{DataType, Result, Tensor, TensorShape};

use crate::broadcast::BroadcastView;
use crate::elementwise::{binary, binary_ops, BinaryOp, Operand};

/// Declares each element-wise op of [`binary_ops`] as a trait method, or defines it.
macro_rules! binary_methods {
    (decl; $($(#[$doc:meta])* $f:ident => $op:ident;)*) => {
        $(
            $(#[$doc])*
            /// (See [`crate::elementwise`]; a [`BroadcastView`] operand is read in place.)
            ///
            /// # Errors
            /// See [`binary`](crate::elementwise::binary).
            fn $f<'a>(&'a self, other: impl Into<Operand<'a>>) -> Result<Tensor>;
        )*
    };
    (body; $($(#[$doc:meta])* $f:ident => $op:ident;)*) => {
        $(
            fn $f<'a>(&'a self, other: impl Into<Operand<'a>>) -> Result<Tensor> {
                binary(BinaryOp::$op, self, other, true)
            }
        )*
    };
}
macro_rules! binary_decls {
    ($($t:tt)*) => { binary_methods!(decl; $($t)*); };
}
macro_rules! binary_bodies {
    ($($t:tt)*) => { binary_methods!(body; $($t)*); };
}

/// The ops of this crate as methods on [`Tensor`] (see the [crate docs](crate) for why this is
/// a trait). Sealed: only `Tensor` implements it.
pub trait TensorOps: sealed::Sealed {
    /// TensorFlow's `Bitcast`: this tensor's bytes as `dtype`, sharing the buffer
    /// ([`crate::bitcast::bitcast`]).
    ///
    /// # Errors
    /// As [`bitcast`](crate::bitcast::bitcast).
    ///
    /// ```
    /// use tensorcast_core::{DataType, Tensor};
    /// use tensorcast_kernels::TensorOps;
    /// let x = Tensor::vector(&[1.0f64, -2.0]);
    /// let y = x.bitcast(DataType::INT64)?;
    /// assert_eq!(y.as_slice::<i64>()?, &[1.0f64.to_bits() as i64, (-2.0f64).to_bits() as i64]);
    /// assert!(y.shares_buffer_with(&x));
    /// # Ok::<(), tensorcast_core::Error>(())
    /// ```
    fn bitcast(&self, dtype: DataType) -> Result<Tensor>;

    /// Ascend TIK's `reinterpret_cast_to`: this tensor's bytes as `dtype`, same rank, last
    /// dimension scaled ([`crate::bitcast::reinterpret::reinterpret_cast_to`]).
    ///
    /// # Errors
    /// As [`reinterpret_cast_to`](crate::bitcast::reinterpret::reinterpret_cast_to).
    ///
    /// ```
    /// use tensorcast_core::{f16, DataType, Tensor};
    /// use tensorcast_kernels::TensorOps;
    /// let a = Tensor::vector(&[f16::from_f32(2.0), f16::from_f32(-2.0)]);
    /// let b = a.reinterpret_cast_to(DataType::UINT16)?;
    /// assert_eq!(b.as_slice::<u16>()?, &[0x4000, 0xc000]);
    /// # Ok::<(), tensorcast_core::Error>(())
    /// ```
    fn reinterpret_cast_to(&self, dtype: DataType) -> Result<Tensor>;

    /// `Cast(self, dtype)` ([`crate::cast::cast`]). The same dtype returns `self` shared.
    ///
    /// # Errors
    /// As [`cast`](crate::cast::cast).
    ///
    /// ```
    /// use tensorcast_core::{DataType, Tensor};
    /// use tensorcast_kernels::TensorOps;
    /// let t = Tensor::vector(&[true, false, true]);
    /// assert_eq!(t.cast(DataType::FLOAT)?.to_vec::<f32>()?, vec![1.0, 0.0, 1.0]);
    /// assert!(t.cast(DataType::BOOL)?.shares_buffer_with(&t));
    /// # Ok::<(), tensorcast_core::Error>(())
    /// ```
    fn cast(&self, dtype: DataType) -> Result<Tensor>;

    /// TensorFlow's `saturate_cast` ([`crate::cast::saturating::cast_saturating`]).
    ///
    /// # Errors
    /// As [`cast_saturating`](crate::cast::saturating::cast_saturating).
    fn cast_saturating(&self, dtype: DataType) -> Result<Tensor>;

    /// A cast whose float-to-integer results saturate
    /// ([`crate::cast::saturating::cast_clamped`]).
    ///
    /// # Errors
    /// As [`cast_clamped`](crate::cast::saturating::cast_clamped).
    fn cast_clamped(&self, dtype: DataType) -> Result<Tensor>;

    /// `BroadcastTo`: this tensor materialised with `shape`
    /// ([`crate::broadcast::broadcast_to`]); itself, shared, when `shape` is its shape.
    ///
    /// # Errors
    /// As [`broadcast_to`](crate::broadcast::broadcast_to).
    ///
    /// ```
    /// use tensorcast_core::{Tensor, TensorShape};
    /// use tensorcast_kernels::TensorOps;
    /// let x = Tensor::vector(&[true, false]);
    /// let y = x.broadcast_to(&TensorShape::new(&[2, 2])?)?;
    /// assert_eq!(y.as_slice::<bool>()?, &[true, false, true, false]);
    /// # Ok::<(), tensorcast_core::Error>(())
    /// ```
    fn broadcast_to(&self, shape: &TensorShape) -> Result<Tensor>;

    /// A lazy broadcast: this tensor read as if broadcast to `shape`, with no allocation and no
    /// copy ([`crate::broadcast::broadcast_view`]).
    ///
    /// # Errors
    /// As [`broadcast_view`](crate::broadcast::broadcast_view).
    ///
    /// ```
    /// use tensorcast_core::{Tensor, TensorShape};
    /// use tensorcast_kernels::TensorOps;
    /// let row = Tensor::vector(&[1.0f32, 2.0, 3.0]);
    /// let v = row.broadcast_view(&TensorShape::new(&[2, 3])?)?;
    /// assert_eq!(v.layout().strides(), &[0, 1]);
    /// assert_eq!(v.add(&row)?.to_vec::<f32>()?, vec![2.0, 4.0, 6.0, 2.0, 4.0, 6.0]);
    /// # Ok::<(), tensorcast_core::Error>(())
    /// ```
    fn broadcast_view(&self, shape: &TensorShape) -> Result<BroadcastView<'_>>;

    binary_ops!(binary_decls);
}

impl TensorOps for Tensor {
    fn bitcast(&self, dtype: DataType) -> Result<Tensor> {
        crate::bitcast::bitcast(self, dtype)
    }

    fn reinterpret_cast_to(&self, dtype: DataType) -> Result<Tensor> {
        crate::bitcast::reinterpret::reinterpret_cast_to(self, dtype)
    }

    fn cast(&self, dtype: DataType) -> Result<Tensor> {
        crate::cast::cast(self, dtype)
    }

    fn cast_saturating(&self, dtype: DataType) -> Result<Tensor> {
        crate::cast::saturating::cast_saturating(self, dtype)
    }

    fn cast_clamped(&self, dtype: DataType) -> Result<Tensor> {
        crate::cast::saturating::cast_clamped(self, dtype)
    }

    fn broadcast_to(&self, shape: &TensorShape) -> Result<Tensor> {
        crate::broadcast::broadcast_to(self, shape)
    }

    fn broadcast_view(&self, shape: &TensorShape) -> Result<BroadcastView<'_>> {
        crate::broadcast::broadcast_view(self, shape)
    }

    binary_ops!(binary_bodies);
}

mod sealed {
    /// Only [`tensorcast_core::Tensor`] implements [`super::TensorOps`].
    pub trait Sealed {}
    impl Sealed for tensorcast_core::Tensor {}
}

//! tensorcast-core: TensorFlow's tensor core in safe Rust.
//!
//! A [`Tensor`] is a dtype, a [`TensorShape`] and a shared, 64-byte-aligned buffer
//! ([`tensorcast_buffer::Buffer`]); this crate gives it TensorFlow's semantics member by member
//! (the `tensorflow::Tensor` class reference), every TensorFlow dtype ([`DataType`], with the
//! Rust [`Element`] type that holds each), typed `ndarray` views, and the debug text TensorFlow
//! prints, to the character.
//!
//! Why it is built this way:
//! - **One table of dtypes** ([`dtype`]) is the single source of truth for numbers, names,
//!   sizes, alignment, category and bitcastability; it generates the [`DataType`] constants,
//!   the [`Element`] impls and [`dispatch!`], which runs generic code on the element type of a
//!   runtime dtype. A `DataType` is the proto number, so refs and unknown values survive as
//!   TensorFlow lets them.
//! - **Views never copy, and never lie**: `flat`, `tensor`, `shaped`, `bit_casted_*` borrow the
//!   buffer as `ndarray` views after checking dtype, element count and the address's alignment
//!   for the element type; `bool` views check every byte is 0 or 1. Misaligned memory is served
//!   by the `unaligned_*` accessors (copying only then).
//! - **Sharing is explicit**: clone, slice, reshape and bitcast share the buffer; writes need a
//!   buffer nobody else shares ([`Tensor::make_unique`] copies when needed).
//! - **No aborts**: where TensorFlow CHECK-fails, this returns an [`Error`] with TensorFlow's
//!   message; allocation failure is an error too.
//! - **The tensor, not the ops**: this crate holds what TensorFlow's C++ `Tensor` class holds
//!   (dtype, shape, buffer, `BitcastFrom`, slicing, the debug text); the ops (`Bitcast`,
//!   `BroadcastTo`, `Cast`, the element-wise and every other op) are in `tensorcast-kernels`,
//!   which depends on this crate and adds them as methods through its `TensorOps` trait.
//! - `#![forbid(unsafe_code)]`: every `unsafe` of the project is in `tensorcast-buffer`.
//!
//! **Adding a dtype.** Add its row to the table in `src/dtype.rs` (constant, proto number,
//! name, size, category, bitcastability, Rust type; a new Rust type goes in `src/types/` as a
//! `#[repr(transparent)]` `bytemuck::Pod` newtype). The row alone makes the `DataType`
//! constant, its `DATA_TYPES` entry (size and alignment included, which the proto decoder
//! reads), its `Element` impl, and an arm in every [`dispatch!`] over its category (printing,
//! object storage, the CLI's statistics); the compiler then points at each trait such a
//! dispatch needs for it (how `SummarizeValue` prints it, for one). An op whose TensorFlow type
//! list cuts across categories names its dtypes in a `dispatch!` brace list where its rules
//! live, in the `tensorcast-kernels` crate, and takes the new dtype when it is added there:
//! `Cast` (`cast/mod.rs`: the `cast_sources!` list, then the compiler asks for its `Castable`,
//! `Src` and `Dst` impls), the element-wise kernels and type lists (`elementwise/`) and
//! `saturate_cast`'s clip kernels (`cast/saturate.rs`). Facts about the dtype outside this
//! crate are written where they apply: its `TensorProto` typed field (`tensorcast-proto`) and
//! its npy/safetensors names
//! (`tensorcast-io`).
//!
//! ```
//! use tensorcast_core::{DataType, Tensor, TensorShape};
//!
//! let x = Tensor::vector(&[0.0f32, 1.0, 1.0]);
//! // Zero-copy: the same bytes as uint8, shape [3] -> [3, 4] (TensorFlow's Bitcast rule).
//! let y = x.bitcast_to(DataType::UINT8, &TensorShape::new(&[3, 4]).unwrap()).unwrap();
//! assert!(y.shares_buffer_with(&x));
//! assert_eq!(y.matrix::<u8>().unwrap().row(1).to_vec(), vec![0, 0, 128, 63]);
//! assert_eq!(
//!     y.debug_string(100),
//!     "Tensor<type: uint8 shape: [3,4] values: [0 0 0...]...>".replace("[0 0 0...]...", "[0 0 0 0][0 0 128 63][0 0 128 63]")
//! );
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(unreachable_pub, missing_debug_implementations)]

pub mod description;
mod dispatch;
pub mod dtype;
mod element;
mod error;
pub mod layout;
pub mod shape;
mod shape_edit;
mod shape_from;
pub mod summarize;
mod tensor;
pub mod types;
pub mod view;
pub mod x86;

pub use description::{AllocationDescription, TensorDescription};
#[doc(hidden)]
pub use dispatch::{ElementOf as __ElementOf, Number as __DtypeNumber};
pub use dtype::DataType;
pub use element::Element;
#[doc(hidden)]
pub use error::{Code, Error, Result};
pub use shape::{PartialTensorShape, TensorShape, MAX_DIMENSIONS};
pub use shape_edit::{shape_list_string, ShapeEdit};
pub use tensor::{Tensor, TSTRING_SIZE};
pub use types::{ResourceHandle, TString, Variant, VariantTensorData};

pub use half::{bf16, f16};
pub use ndarray;
pub use num_complex::{Complex, Complex32, Complex64};
pub use tensorcast_buffer as buffer;

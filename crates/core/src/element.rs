//! The [`Element`] trait: which Rust type holds each dtype, and how tensors store them.
//!
//! How a type is stored (`Storage`, `Objects`) is crate-private: those methods sit on the sealed
//! supertrait `sealed::Sealed`, which no code outside this crate can name, so its signatures
//! cannot leak the private types. `private_interfaces` is allowed here because the lint counts
//! a sealed supertrait as reachable.
#![allow(private_interfaces)]

use std::fmt;
use std::sync::Arc;

use tensorcast_buffer::{Allocator, Buffer, ObjectArray};

use crate::error::{Error, Result};
use crate::types::*;
use crate::DataType;

/// A shared run of objects (strings, handles, variants): an `Arc`'d array and a range, so that
/// slicing a string tensor shares its elements as slicing a numeric one shares its bytes. The
/// array is an adopted `Vec` or a block from an allocator (see [`Objects::new_in`]).
#[derive(Clone)]
pub(crate) struct Objects<T> {
    root: Arc<Root<T>>,
    start: usize,
    len: usize,
}

impl<T> fmt::Debug for Objects<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Objects({} of {})", self.len, std::any::type_name::<T>())
    }
}

/// Where the objects live.
enum Root<T> {
    Vec(Vec<T>),
    Allocated(ObjectArray<T>),
}

impl<T> Root<T> {
    fn as_slice(&self) -> &[T] {
        match self {
            Root::Vec(v) => v,
            Root::Allocated(a) => a.as_slice(),
        }
    }

    fn as_mut_slice(&mut self) -> &mut [T] {
        match self {
            Root::Vec(v) => v,
            Root::Allocated(a) => a.as_mut_slice(),
        }
    }
}

impl<T> Objects<T> {
    pub(crate) fn new(v: Vec<T>) -> Self {
        let len = v.len();
        Self {
            root: Arc::new(Root::Vec(v)),
            start: 0,
            len,
        }
    }

    /// `len` objects in a block from `allocator`, element `i` made by `f(i)`.
    pub(crate) fn new_in<E: From<tensorcast_buffer::AllocError>>(
        allocator: &Arc<dyn Allocator>,
        len: usize,
        f: impl FnMut(usize) -> std::result::Result<T, E>,
    ) -> std::result::Result<Self, E> {
        Ok(Self {
            root: Arc::new(Root::Allocated(ObjectArray::try_new(allocator, len, f)?)),
            start: 0,
            len,
        })
    }

    pub(crate) fn as_slice(&self) -> &[T] {
        &self.root.as_slice()[self.start..self.start + self.len]
    }

    pub(crate) fn as_mut_slice(&mut self) -> Option<&mut [T]> {
        let (start, len) = (self.start, self.len);
        Arc::get_mut(&mut self.root).map(|v| &mut v.as_mut_slice()[start..start + len])
    }

    pub(crate) fn slice(&self, start: usize, len: usize) -> Self {
        Self {
            root: self.root.clone(),
            start: self.start + start,
            len,
        }
    }

    pub(crate) fn shares_root_with(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.root, &other.root)
    }

    pub(crate) fn is_whole_unique(&self) -> bool {
        Arc::strong_count(&self.root) == 1
            && self.start == 0
            && self.len == self.root.as_slice().len()
    }
}

/// Where a tensor's elements live (crate-private, as the [`Element`] methods that use it).
#[derive(Clone, Default)]
pub(crate) enum Storage {
    /// No buffer: an empty tensor, or one whose allocation failed (uninitialised).
    #[default]
    None,
    /// The bytes of a memcpy-able dtype.
    Bytes(Buffer),
    /// `string` elements.
    Strings(Objects<TString>),
    /// `resource` elements.
    Resources(Objects<ResourceHandle>),
    /// `variant` elements.
    Variants(Objects<Variant>),
}

impl fmt::Debug for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Storage::None => f.write_str("None"),
            Storage::Bytes(b) => write!(f, "{b:?}"),
            Storage::Strings(o) => write!(f, "Strings({})", o.len),
            Storage::Resources(o) => write!(f, "Resources({})", o.len),
            Storage::Variants(o) => write!(f, "Variants({})", o.len),
        }
    }
}

pub(crate) fn shared_error() -> Error {
    Error::SharedBuffer
}

/// The storage side of [`Element`], private to this crate (so `Storage` and `Objects` are too).
pub(crate) mod sealed {
    use super::*;

    pub trait Sealed: Sized {
        /// The elements in `storage` (the default serves byte-backed types; the object types
        /// override it).
        fn slice(storage: &Storage) -> Result<&[Self]> {
            match storage {
                Storage::Bytes(b) => Self::from_bytes(b.as_slice()),
                _ => Ok(&[]),
            }
        }
        /// The elements in `storage`, writable (unshared buffers only).
        fn slice_mut(storage: &mut Storage) -> Result<&mut [Self]> {
            match storage {
                Storage::Bytes(b) => {
                    Self::from_bytes_mut(b.as_mut_slice().ok_or_else(shared_error)?)
                }
                _ => Ok(&mut []),
            }
        }
        fn from_bytes(bytes: &[u8]) -> Result<&[Self]>;
        fn from_bytes_mut(bytes: &mut [u8]) -> Result<&mut [Self]>;
        fn into_storage(v: Vec<Self>) -> Storage;
        /// Object dtypes: their storage from a run of objects; `None` for memcpy-able types.
        fn objects_into_storage(_objects: Objects<Self>) -> Option<Storage> {
            None
        }
        fn read_unaligned(bytes: &[u8]) -> Result<Vec<Self>>;
        fn write_unaligned(values: &[Self], bytes: &mut [u8]) -> Result<()>;
    }
}

/// A Rust type that holds one element of a TensorFlow dtype.
///
/// Implemented for every dtype 1..=33: `f32` (float), `f64`, `i8`..`i64`, `u8`..`u64`, `bool`,
/// [`half::f16`] (half), [`half::bf16`] (bfloat16), `Complex<f32>` / `Complex<f64>`
/// (complex64/128), the quantized, float8, float4 and sub-byte types of [`crate::types`],
/// [`TString`], [`ResourceHandle`] and [`Variant`]. Sealed: the set is TensorFlow's.
pub trait Element: sealed::Sealed + Clone + Default + fmt::Debug + Send + Sync + 'static {
    /// The dtype this type holds.
    const DTYPE: DataType;

    /// True if the elements are plain bytes (every dtype but string, resource and variant).
    const IS_POD: bool;
}

fn cast_error<T>(e: bytemuck::PodCastError, addr: usize) -> Error {
    match e {
        bytemuck::PodCastError::TargetAlignmentGreaterAndInputNotAligned => Error::Misaligned {
            type_name: std::any::type_name::<T>(),
            address: addr,
            required: std::mem::align_of::<T>(),
        },
        // Tensor buffers hold exactly `elements * size` bytes: any other failure is a bug.
        other => Error::Internal(format!(
            "cannot view bytes as {}: {other:?}",
            std::any::type_name::<T>()
        )),
    }
}

fn not_bytes<T: Element>() -> Error {
    Error::NotBytes {
        op: "a bit-level view",
        dtype: T::DTYPE,
    }
}

macro_rules! pod_element {
    ($t:ty => $dt:ident) => {
        impl sealed::Sealed for $t {
            fn from_bytes(bytes: &[u8]) -> Result<&[Self]> {
                bytemuck::try_cast_slice(bytes)
                    .map_err(|e| cast_error::<Self>(e, bytes.as_ptr() as usize))
            }
            fn from_bytes_mut(bytes: &mut [u8]) -> Result<&mut [Self]> {
                let addr = bytes.as_ptr() as usize;
                bytemuck::try_cast_slice_mut(bytes).map_err(|e| cast_error::<Self>(e, addr))
            }
            fn into_storage(v: Vec<Self>) -> Storage {
                Storage::Bytes(Buffer::from_vec(v))
            }
            fn read_unaligned(bytes: &[u8]) -> Result<Vec<Self>> {
                Ok(bytes
                    .chunks_exact(std::mem::size_of::<Self>())
                    .map(bytemuck::pod_read_unaligned)
                    .collect())
            }
            fn write_unaligned(values: &[Self], bytes: &mut [u8]) -> Result<()> {
                bytes.copy_from_slice(bytemuck::cast_slice(values));
                Ok(())
            }
        }
        impl Element for $t {
            const DTYPE: DataType = DataType::$dt;
            const IS_POD: bool = true;
        }
    };
}

/// One table row's `Element` impl, by category: plain bytes for the numeric ones, the object
/// storage for string, resource and variant; `bool` has its own impl below (bytes must be 0
/// or 1).
macro_rules! element_for_row {
    ($konst:ident, bool, $ty:ty) => {};
    (STRING, object, $ty:ty) => { object_element!($ty => STRING, Strings); };
    (RESOURCE, object, $ty:ty) => { object_element!($ty => RESOURCE, Resources); };
    (VARIANT, object, $ty:ty) => { object_element!($ty => VARIANT, Variants); };
    ($konst:ident, $cat:ident, $ty:ty) => { pod_element!($ty => $konst); };
}

macro_rules! element_impls {
    (; $( $konst:ident = $num:literal, $name:literal, $size:expr, $cat:ident, $bitcast:literal, $ty:ty; )*) => {
        $( element_for_row!($konst, $cat, $ty); )*
    };
}

fn bad_bool() -> Error {
    Error::InvalidBool
}

/// `bool` is one byte, 0 or 1. A bool tensor made by bit-level reinterpretation can hold other
/// bytes (TensorFlow allows `BitcastFrom` into bool); typed views check every byte and refuse
/// such a tensor rather than create an invalid `bool`.
impl Element for bool {
    const DTYPE: DataType = DataType::BOOL;
    const IS_POD: bool = true;
}

impl sealed::Sealed for bool {
    fn from_bytes(bytes: &[u8]) -> Result<&[Self]> {
        bytemuck::checked::try_cast_slice(bytes).map_err(|_| bad_bool())
    }
    fn from_bytes_mut(bytes: &mut [u8]) -> Result<&mut [Self]> {
        bytemuck::checked::try_cast_slice_mut(bytes).map_err(|_| bad_bool())
    }
    fn into_storage(v: Vec<Self>) -> Storage {
        let bytes: Vec<u8> = v.into_iter().map(u8::from).collect();
        Storage::Bytes(Buffer::from_vec(bytes))
    }
    fn read_unaligned(bytes: &[u8]) -> Result<Vec<Self>> {
        Ok(Self::from_bytes(bytes)?.to_vec())
    }
    fn write_unaligned(values: &[Self], bytes: &mut [u8]) -> Result<()> {
        for (b, v) in bytes.iter_mut().zip(values) {
            *b = u8::from(*v);
        }
        Ok(())
    }
}

macro_rules! object_element {
    ($t:ty => $dt:ident, $variant:ident) => {
        impl sealed::Sealed for $t {
            fn slice(storage: &Storage) -> Result<&[Self]> {
                match storage {
                    Storage::$variant(o) => Ok(o.as_slice()),
                    _ => Ok(&[]),
                }
            }
            fn slice_mut(storage: &mut Storage) -> Result<&mut [Self]> {
                match storage {
                    Storage::$variant(o) => o.as_mut_slice().ok_or_else(shared_error),
                    _ => Ok(&mut []),
                }
            }
            fn from_bytes(_: &[u8]) -> Result<&[Self]> {
                Err(not_bytes::<Self>())
            }
            fn from_bytes_mut(_: &mut [u8]) -> Result<&mut [Self]> {
                Err(not_bytes::<Self>())
            }
            fn into_storage(v: Vec<Self>) -> Storage {
                Storage::$variant(Objects::new(v))
            }
            fn objects_into_storage(objects: Objects<Self>) -> Option<Storage> {
                Some(Storage::$variant(objects))
            }
            fn read_unaligned(_: &[u8]) -> Result<Vec<Self>> {
                Err(not_bytes::<Self>())
            }
            fn write_unaligned(_: &[Self], _: &mut [u8]) -> Result<()> {
                Err(not_bytes::<Self>())
            }
        }
        impl Element for $t {
            const DTYPE: DataType = DataType::$dt;
            const IS_POD: bool = false;
        }
    };
}

crate::__dtype_table!(element_impls);

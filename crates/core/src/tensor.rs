//! [`Tensor`]: TensorFlow's `tensorflow::Tensor`, in Rust.

use std::fmt;
use std::sync::Arc;

use tensorcast_buffer::{cpu_allocator_ref, AllocationAttributes, Allocator, Buffer};

use crate::element::{shared_error, Element, Objects, Storage};
use crate::error::{Error, Result};
use crate::shape_from::to_shape;
use crate::types::{ResourceHandle, TString, Variant};
use crate::{DataType, TensorShape};

/// TensorFlow's `sizeof(tstring)`, which enters `TotalBytes` of string tensors.
pub const TSTRING_SIZE: usize = 24;

/// An n-dimensional array of one dtype: dtype + shape + (maybe) a shared buffer.
///
/// Semantics follow TensorFlow's `tensorflow::Tensor` member by member:
/// - [`Clone`] shares the buffer (O(1)), as TensorFlow's copy constructor does.
/// - [`Tensor::slice`], [`Tensor::sub_slice`], [`Tensor::copy_from`], [`Tensor::bitcast_from`]
///   and reshapes share the buffer too; nothing here copies unless its name says so.
/// - A tensor with no elements has no buffer; a tensor whose allocation failed has none either
///   and reports `is_initialized() == false`.
/// - Writes need `&mut self` *and* a buffer no other tensor shares (TensorFlow lets every
///   sharer see a write; safe Rust cannot, so a write to a shared buffer is refused with
///   [`Error::SharedBuffer`] and [`Tensor::make_unique`] copies first).
///
/// Where TensorFlow CHECK-fails (aborts), tensorcast returns an [`Error`] with TensorFlow's
/// message.
///
/// # Invariants
///
/// Every `Tensor` keeps these; the one gate every constructor with data goes through
/// (`Tensor::assemble`) checks them, so the accessors can rely on them:
/// 1. Its storage is either absent or the kind its dtype calls for: bytes for a memcpy-able
///    dtype, `TString`/`ResourceHandle`/`Variant` objects for string/resource/variant.
/// 2. Bytes hold exactly `num_elements * dtype.size()` bytes, objects exactly `num_elements`
///    objects (the buffer range may start at any address: views check alignment).
/// 3. Absent storage with a nonzero element count means uninitialized (`is_initialized()` is
///    false): nothing reads it, every value accessor returns [`Error::Uninitialized`].
/// 4. The bytes change only through `&mut self` on a buffer no other tensor or buffer handle
///    shares (`Buffer::as_mut_slice`); sharing (clone, slice, bitcast, reshape) never copies.
///
/// ```
/// use tensorcast_core::{DataType, Tensor, TensorShape};
/// let mut t = Tensor::new(DataType::FLOAT, &TensorShape::new(&[2, 3]).unwrap()).unwrap();
/// t.flat_mut::<f32>().unwrap().iter_mut().enumerate().for_each(|(i, x)| *x = i as f32);
/// assert_eq!(t.debug_string(3), "Tensor<type: float shape: [2,3] values: [0 1 2]...>");
/// let row = t.sub_slice(1).unwrap();
/// assert_eq!(row.flat::<f32>().unwrap().to_vec(), vec![3.0, 4.0, 5.0]);
/// assert!(row.shares_buffer_with(&t));
/// ```
#[derive(Clone)]
pub struct Tensor {
    dtype: DataType,
    shape: TensorShape,
    storage: Storage,
}

impl Default for Tensor {
    /// `Tensor()`: a float tensor of shape `[0]` (one dimension, no elements), no buffer.
    fn default() -> Self {
        Self::empty(DataType::FLOAT)
    }
}

fn check_buildable(dtype: DataType) -> Result<()> {
    if dtype == DataType::INVALID || !dtype.is_supported() {
        return Err(Error::InvalidDtype { dtype });
    }
    Ok(())
}

/// `shape` as a [`TensorShape`], checked to hold exactly `count` values.
fn shape_for_values<S>(count: usize, shape: S) -> Result<TensorShape>
where
    S: TryInto<TensorShape>,
    Error: From<S::Error>,
{
    let shape = to_shape(shape)?;
    if count as u64 != shape.num_elements() as u64 {
        return Err(Error::ValueCount {
            values: count,
            shape,
        });
    }
    Ok(shape)
}

/// Byte size of `n` elements of a memcpy-able dtype, or an error if it does not fit in memory.
pub(crate) fn byte_len(dtype: DataType, n: usize) -> Result<usize> {
    // A `match` rather than `ok_or`: the error is built only when it is returned (`ok_or`
    // builds and drops one on every call, a measurable cost on per-call paths).
    match n.checked_mul(dtype.size()) {
        Some(b) if b <= isize::MAX as usize => Ok(b),
        _ => Err(Error::OutOfMemory {
            dtype,
            elements: n as u64,
        }),
    }
}

impl Tensor {
    // ----- construction ------------------------------------------------------------------

    /// `Tensor(dtype)`: shape `[0]`, no elements, no buffer (initialised).
    pub fn empty(dtype: DataType) -> Self {
        let shape = TensorShape::new(&[0]).unwrap_or_default();
        Self::without_data(dtype, shape)
    }

    /// A tensor with no storage: invariants 1-2 hold trivially (see [`Tensor`]).
    fn without_data(dtype: DataType, shape: TensorShape) -> Self {
        Self {
            dtype,
            shape,
            storage: Storage::None,
        }
    }

    /// The gate of every constructor with data: checks the invariants (see [`Tensor`]) that
    /// tie `storage` to `dtype` and `shape`. A failure is a bug in tensorcast, reported as
    /// [`Error::Internal`] rather than a tensor that lies.
    #[inline]
    fn assemble(dtype: DataType, shape: TensorShape, mut storage: Storage) -> Result<Self> {
        canonicalize_sub_byte(dtype, &mut storage);
        let n = shape.num_elements_usize();
        let ok = match &storage {
            Storage::None => true,
            Storage::Bytes(b) => {
                dtype.can_use_memcpy() && n.checked_mul(dtype.size()) == Some(b.len())
            }
            Storage::Strings(o) => dtype == DataType::STRING && o.as_slice().len() == n,
            Storage::Resources(o) => dtype == DataType::RESOURCE && o.as_slice().len() == n,
            Storage::Variants(o) => dtype == DataType::VARIANT && o.as_slice().len() == n,
        };
        if !ok {
            return Err(Error::Internal(format!(
                "tensor invariant broken: {} {shape} over {storage:?}",
                dtype.name()
            )));
        }
        Ok(Self {
            dtype,
            shape,
            storage,
        })
    }

    /// `Tensor(dtype, shape)`: allocates from the default CPU allocator and zero-fills (strings
    /// empty, handles and variants default). Errors for `INVALID` (`Type not set`), refs and
    /// unknown dtypes (`Unexpected type: DT_FLOAT_REF`) and allocation failure.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidDtype`], an invalid shape, or the allocator's failure.
    pub fn new<S>(dtype: DataType, shape: S) -> Result<Self>
    where
        S: TryInto<TensorShape>,
        Error: From<S::Error>,
    {
        Self::new_in(
            cpu_allocator_ref(),
            dtype,
            &to_shape(shape)?,
            &AllocationAttributes::default(),
        )
    }

    /// A tensor of `dtype` and `shape` for a kernel that writes every element: its numbers are
    /// zeros or, in a block the default CPU allocator kept from an earlier buffer, that
    /// buffer's stale values, so no zero fill is paid for a reused block (as TensorFlow's
    /// allocators hand out memory). String, resource and variant elements are default, as in
    /// [`Tensor::new`].
    ///
    /// # Errors
    /// As [`Tensor::new`].
    ///
    /// ```
    /// use tensorcast_core::{DataType, Tensor};
    /// let mut t = Tensor::for_overwrite(DataType::FLOAT, [3i64].as_slice())?;
    /// t.as_mut_slice::<f32>()?.copy_from_slice(&[1.0, 2.0, 3.0]);
    /// assert_eq!(t.to_vec::<f32>()?, [1.0, 2.0, 3.0]);
    /// # Ok::<(), tensorcast_core::Error>(())
    /// ```
    pub fn for_overwrite<S>(dtype: DataType, shape: S) -> Result<Self>
    where
        S: TryInto<TensorShape>,
        Error: From<S::Error>,
    {
        let shape = to_shape(shape)?;
        if !dtype.can_use_memcpy() {
            return Self::new_in(
                cpu_allocator_ref(),
                dtype,
                &shape,
                &AllocationAttributes::default(),
            );
        }
        let n = shape.num_elements_usize();
        Self::from_writer(cpu_allocator_ref(), dtype, &shape, |w| {
            w.put_in_place::<u8, _>(byte_len(dtype, n).unwrap_or(0), |_| ());
        })
    }

    /// `Tensor(allocator, dtype, shape, attrs)`: as [`Tensor::new`] with a given allocator.
    /// String, resource and variant elements are placed in a block from the allocator too (as
    /// TensorFlow places them), so a failing allocator fails for them as for numbers; the bytes
    /// a string owns beyond its inline part come from the Rust heap, as TensorFlow's `tstring`
    /// takes them from `malloc`.
    ///
    /// # Errors
    /// [`Error::InvalidDtype`] for `INVALID`, refs and unknown dtypes; [`Error::OutOfMemory`] when
    /// the byte size cannot exist; [`Error::Alloc`] when the allocator fails.
    pub fn new_in(
        allocator: &Arc<dyn Allocator>,
        dtype: DataType,
        shape: &TensorShape,
        attrs: &AllocationAttributes,
    ) -> Result<Self> {
        check_buildable(dtype)?;
        let n = shape.num_elements_usize();
        let storage = if n == 0 {
            Storage::None
        } else {
            crate::dispatch!(
                dtype,
                [object] T => object_storage::<T, Error>(allocator, n, |_| Ok(T::default()))?,
                _ => Storage::Bytes(Buffer::zeroed_in(allocator, byte_len(dtype, n)?, attrs)?)
            )
        };
        Self::assemble(dtype, shape.clone(), storage)
    }

    /// A string, resource or variant tensor of `shape` whose element `i` is `f(i)`, the
    /// elements placed in a block from `allocator` (how decoders build object tensors, so that
    /// the allocator they are given accounts for, and can refuse, every element).
    ///
    /// # Errors
    /// `f`'s first error; [`Error::Alloc`] (converted into `E`) when the allocator fails;
    /// [`Error::NotBytes`]-style misuse: a memcpy-able `T` is [`Error::TypeMismatch`].
    ///
    /// ```
    /// use tensorcast_core::{buffer::cpu_allocator, Error, TString, Tensor, TensorShape};
    /// let shape = TensorShape::new(&[2])?;
    /// let t = Tensor::from_objects_in(&cpu_allocator(), &shape, |i| {
    ///     Ok::<_, Error>(TString::from(format!("row {i}")))
    /// })?;
    /// assert_eq!(t.as_slice::<TString>()?[1], TString::from("row 1"));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn from_objects_in<T: Element, E: From<Error>>(
        allocator: &Arc<dyn Allocator>,
        shape: &TensorShape,
        f: impl FnMut(usize) -> std::result::Result<T, E>,
    ) -> std::result::Result<Self, E> {
        if T::IS_POD {
            return Err(Error::TypeMismatch {
                actual: T::DTYPE,
                expected: DataType::STRING,
            }
            .into());
        }
        let n = shape.num_elements_usize();
        let storage = if n == 0 {
            Storage::None
        } else {
            object_storage(allocator, n, f)?
        };
        Ok(Self::assemble(T::DTYPE, shape.clone(), storage)?)
    }

    /// A tensor with a shape but no buffer: what TensorFlow's constructor leaves behind when
    /// its allocator fails. `is_initialized()` is false when it has elements, and
    /// `summarize_value` prints `uninitialized Tensor of N elements of type T`.
    pub fn unallocated(dtype: DataType, shape: &TensorShape) -> Self {
        Self::without_data(dtype, shape.clone())
    }

    /// Builds a memcpy-able tensor of `shape` whose bytes are written by `init` (anything it
    /// leaves unwritten is zero). The way kernels produce outputs without a separate zero fill.
    ///
    /// # Errors
    /// [`Error::InvalidDtype`] for `INVALID`, refs and unknown dtypes; [`Error::NotBytes`] for
    /// string, resource and variant; [`Error::OutOfMemory`] when the byte size cannot exist;
    /// [`Error::Alloc`] when the allocator fails.
    pub fn from_writer(
        allocator: &Arc<dyn Allocator>,
        dtype: DataType,
        shape: &TensorShape,
        init: impl FnOnce(&mut tensorcast_buffer::Writer<'_>),
    ) -> Result<Self> {
        check_buildable(dtype)?;
        if !dtype.can_use_memcpy() {
            return Err(Error::NotBytes {
                op: "from_writer",
                dtype,
            });
        }
        let n = shape.num_elements_usize();
        let len = byte_len(dtype, n)?;
        let mut storage = if n == 0 {
            Storage::None
        } else {
            Storage::Bytes(Buffer::new_with(
                allocator,
                len,
                &AllocationAttributes::default(),
                init,
            )?)
        };
        // The invariant `assemble` checks holds by construction here: the buffer has exactly
        // `byte_len(dtype, n)` bytes of a memcpy-able dtype (this is a per-call path of every
        // kernel, small outputs included).
        canonicalize_sub_byte(dtype, &mut storage);
        Ok(Self {
            dtype,
            shape: shape.clone(),
            storage,
        })
    }

    /// `Tensor(dtype, shape, buf)`: a tensor over an existing buffer, without copying. The
    /// buffer must hold exactly `num_elements * size` bytes.
    ///
    /// # Errors
    /// [`Error::InvalidDtype`] for `INVALID`, refs and unknown dtypes; [`Error::NotBytes`] for
    /// string, resource and variant; [`Error::ByteCount`] when the buffer's length is not
    /// `num_elements * size`.
    pub fn from_buffer(dtype: DataType, shape: &TensorShape, buffer: Buffer) -> Result<Self> {
        check_buildable(dtype)?;
        if !dtype.can_use_memcpy() {
            return Err(Error::NotBytes {
                op: "from_buffer",
                dtype,
            });
        }
        let want = byte_len(dtype, shape.num_elements_usize())?;
        if buffer.len() != want {
            return Err(Error::ByteCount {
                actual: buffer.len(),
                expected: want as u128,
            });
        }
        let storage = if want == 0 {
            Storage::None
        } else {
            Storage::Bytes(buffer)
        };
        Self::assemble(dtype, shape.clone(), storage)
    }

    /// A tensor owning `values` (adopted without copying for numeric types) with `shape`.
    ///
    /// # Errors
    ///
    /// An invalid shape, or [`Error::ValueCount`] when the count differs from the shape's.
    pub fn from_vec<T: Element, S>(values: Vec<T>, shape: S) -> Result<Self>
    where
        S: TryInto<TensorShape>,
        Error: From<S::Error>,
    {
        let shape = &shape_for_values(values.len(), shape)?;
        let storage = if values.is_empty() {
            Storage::None
        } else {
            T::into_storage(values)
        };
        Self::assemble(T::DTYPE, shape.clone(), storage)
    }

    /// A tensor holding a copy of `values` with `shape`.
    ///
    /// # Errors
    ///
    /// An invalid shape, [`Error::ValueCount`] when the count differs from the shape's, or
    /// allocation failure.
    pub fn from_slice<T: Element, S>(values: &[T], shape: S) -> Result<Self>
    where
        S: TryInto<TensorShape>,
        Error: From<S::Error>,
    {
        let shape = &shape_for_values(values.len(), shape)?;
        if T::IS_POD && T::DTYPE != DataType::BOOL {
            // Copy into an aligned buffer from the default allocator.
            let mut t = Self::new::<&TensorShape>(T::DTYPE, shape)?;
            if !values.is_empty() {
                t.flat_slice_mut::<T>()?.clone_from_slice(values);
                canonicalize_sub_byte(t.dtype, &mut t.storage);
            }
            return Ok(t);
        }
        Self::from_vec::<T, &TensorShape>(values.to_vec(), shape)
    }

    /// A 1-D tensor holding a copy of `values`.
    ///
    /// Infallible as `slice::to_vec` is: the copy comes from the default allocator, or, if
    /// that fails, from a `Vec`, which aborts the process when memory is exhausted (as `Vec`
    /// does). It never returns an unallocated tensor. [`Tensor::from_slice`] reports
    /// allocation failure as an error instead.
    pub fn vector<T: Element>(values: &[T]) -> Self {
        // A slice never holds more than isize::MAX elements, which is a valid dim.
        let shape = TensorShape::new(&[values.len() as i64]).unwrap_or_default();
        match Self::from_slice(values, &shape) {
            Ok(t) => t,
            Err(_) => {
                let storage = T::into_storage(values.to_vec());
                Self::assemble(T::DTYPE, shape, storage)
                    .expect("a vector's values match its one dimension")
            }
        }
    }

    /// A tensor holding a copy of an `ndarray` array (any layout), with its shape.
    ///
    /// # Errors
    /// As [`TensorShape::from_usizes`] for the array's shape, and [`Error::Alloc`] when the copy
    /// cannot be allocated.
    pub fn from_array<T: Element, D: ndarray::Dimension>(
        a: ndarray::ArrayView<'_, T, D>,
    ) -> Result<Self> {
        let shape = TensorShape::from_usizes(a.shape())?;
        let values: Vec<T> = a.iter().cloned().collect();
        Self::from_vec(values, &shape)
    }

    /// A 0-d tensor holding `value` (TensorFlow's host-scalar constructors).
    pub fn scalar_of<T: Element>(value: T) -> Self {
        let storage = T::into_storage(vec![value]);
        Self::assemble(T::DTYPE, TensorShape::scalar(), storage)
            .expect("one value fills a scalar shape")
    }

    // ----- accessors ---------------------------------------------------------------------

    /// The element type.
    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    /// The shape.
    pub fn shape(&self) -> &TensorShape {
        &self.shape
    }

    /// Number of dimensions (`dims()`).
    pub fn dims(&self) -> usize {
        self.shape.rank()
    }

    /// Size of dimension `d` (`dim_size(d)`), `None` past the rank.
    pub fn dim_size(&self, d: usize) -> Option<i64> {
        self.shape.dim_size(d)
    }

    /// Number of elements.
    pub fn num_elements(&self) -> i64 {
        self.shape.num_elements()
    }

    /// True if both shapes have the same dims.
    pub fn is_same_size(&self, other: &Tensor) -> bool {
        self.shape.is_same_size(&other.shape)
    }

    /// True if the tensor has a buffer or has no elements.
    pub fn is_initialized(&self) -> bool {
        !matches!(self.storage, Storage::None) || self.num_elements() == 0
    }

    /// TensorFlow's `IsAligned`: true for strings, empty tensors, and data at a multiple of 64.
    pub fn is_aligned(&self) -> bool {
        match &self.storage {
            Storage::Bytes(b) => self.num_elements() == 0 || b.is_aligned_to(64),
            _ => true,
        }
    }

    /// True if this tensor is the only holder of its whole buffer (`RefCountIsOne`); false
    /// for tensors with no buffer and for slices.
    pub fn ref_count_is_one(&self) -> bool {
        match &self.storage {
            Storage::None => false,
            Storage::Bytes(b) => b.ref_count_is_one(),
            Storage::Strings(o) => o.is_whole_unique(),
            Storage::Resources(o) => o.is_whole_unique(),
            Storage::Variants(o) => o.is_whole_unique(),
        }
    }

    /// True if both tensors have buffers over the same root allocation (`SharesBufferWith`).
    pub fn shares_buffer_with(&self, other: &Tensor) -> bool {
        match (&self.storage, &other.storage) {
            (Storage::Bytes(a), Storage::Bytes(b)) => a.shares_root_with(b),
            (Storage::Strings(a), Storage::Strings(b)) => a.shares_root_with(b),
            (Storage::Resources(a), Storage::Resources(b)) => a.shares_root_with(b),
            (Storage::Variants(a), Storage::Variants(b)) => a.shares_root_with(b),
            _ => false,
        }
    }

    /// TensorFlow's `TotalBytes`: `size * n`; for strings `24 * n` plus every string's length;
    /// for handles and variants `size_of` the Rust type times `n`. 0 with no elements.
    pub fn total_bytes(&self) -> usize {
        let n = self.shape.num_elements_usize();
        if n == 0 {
            return 0;
        }
        match &self.storage {
            Storage::Strings(o) => {
                n * TSTRING_SIZE + o.as_slice().iter().map(TString::len).sum::<usize>()
            }
            // An unallocated string tensor counts its empty strings.
            _ if self.dtype == DataType::STRING => n * TSTRING_SIZE,
            _ => crate::dispatch!(self.dtype, [object] T => n * std::mem::size_of::<T>(),
                _ => n.saturating_mul(self.dtype.size())),
        }
    }

    /// TensorFlow's `AllocatedBytes`: the allocator's recorded size when it tracks sizes,
    /// otherwise [`Tensor::total_bytes`].
    pub fn allocated_bytes(&self) -> usize {
        match &self.storage {
            Storage::Bytes(b) => b.allocated_bytes().unwrap_or_else(|| self.total_bytes()),
            _ => self.total_bytes(),
        }
    }

    /// The buffer of a memcpy-able tensor, if it has one.
    pub fn buffer(&self) -> Option<&Buffer> {
        match &self.storage {
            Storage::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// `tensor_data()`: the raw bytes (empty without a buffer). Errors for string, resource
    /// and variant tensors, where TensorFlow CHECK-fails.
    ///
    /// # Errors
    /// [`Error::NotBytes`] for string, resource and variant tensors.
    pub fn tensor_data(&self) -> Result<&[u8]> {
        match &self.storage {
            Storage::Bytes(b) => Ok(b.as_slice()),
            Storage::None => Ok(&[]),
            _ => Err(Error::NotBytes {
                op: "tensor_data()",
                dtype: self.dtype,
            }),
        }
    }

    /// The raw bytes, writable (same rules as [`Tensor::flat_mut`]).
    ///
    /// # Errors
    /// [`Error::NotBytes`] for string, resource and variant tensors; [`Error::SharedBuffer`] when
    /// another tensor shares the buffer or it is read-only (see [`Tensor::make_unique`]).
    pub fn tensor_data_mut(&mut self) -> Result<&mut [u8]> {
        match &mut self.storage {
            Storage::Bytes(b) => b.as_mut_slice().ok_or_else(shared_error),
            Storage::None => Ok(&mut []),
            _ => Err(Error::NotBytes {
                op: "tensor_data()",
                dtype: self.dtype,
            }),
        }
    }

    /// `data()`: the address of the first element (null without a buffer).
    pub fn data_ptr(&self) -> *const u8 {
        match &self.storage {
            Storage::Bytes(b) => b.as_ptr(),
            _ => std::ptr::null(),
        }
    }

    pub(crate) fn storage(&self) -> &Storage {
        &self.storage
    }

    /// Copies the buffer if another tensor shares it or it is read-only (adopted memory), so
    /// that writes are possible; a no-op otherwise.
    ///
    /// # Errors
    /// [`Error::Alloc`] when the copy cannot be allocated (the tensor is then unchanged).
    pub fn make_unique(&mut self) -> Result<()> {
        match &mut self.storage {
            Storage::None => {}
            Storage::Bytes(b) => {
                b.make_mut()?;
            }
            Storage::Strings(o) => {
                if o.as_mut_slice().is_none() {
                    *o = Objects::new(o.as_slice().to_vec());
                }
            }
            Storage::Resources(o) => {
                if o.as_mut_slice().is_none() {
                    *o = Objects::new(o.as_slice().to_vec());
                }
            }
            Storage::Variants(o) => {
                if o.as_mut_slice().is_none() {
                    *o = Objects::new(o.as_slice().to_vec());
                }
            }
        }
        Ok(())
    }

    /// A deep copy with its own buffer from the default allocator (TensorFlow's
    /// `tensor::DeepCopy`).
    ///
    /// # Errors
    /// [`Error::Alloc`] when the copy cannot be allocated.
    pub fn deep_copy(&self) -> Result<Tensor> {
        let storage = match &self.storage {
            Storage::None => Storage::None,
            Storage::Bytes(b) => Storage::Bytes(Buffer::copy_from_slice(b.as_slice())?),
            Storage::Strings(o) => Storage::Strings(Objects::new(o.as_slice().to_vec())),
            Storage::Resources(o) => Storage::Resources(Objects::new(o.as_slice().to_vec())),
            Storage::Variants(o) => Storage::Variants(Objects::new(o.as_slice().to_vec())),
        };
        Self::assemble(self.dtype, self.shape.clone(), storage)
    }

    // ----- sharing reshapes --------------------------------------------------------------

    /// `CopyFrom(other, shape)`: this tensor becomes `other`'s dtype with `shape`, sharing its
    /// buffer. Returns false (and changes nothing) if the element counts differ.
    #[must_use]
    pub fn copy_from(&mut self, other: &Tensor, shape: &TensorShape) -> bool {
        if other.num_elements() != shape.num_elements() {
            return false;
        }
        self.dtype = other.dtype;
        self.shape = shape.clone();
        self.storage = other.storage.clone();
        true
    }

    /// A tensor sharing this one's buffer with another shape of the same element count.
    ///
    /// # Errors
    ///
    /// An invalid shape, or [`Error::Reshape`] when the element counts differ.
    pub fn reshape<S>(&self, shape: S) -> Result<Tensor>
    where
        S: TryInto<TensorShape>,
        Error: From<S::Error>,
    {
        let shape = &to_shape(shape)?;
        let mut t = Tensor::empty(self.dtype);
        if t.copy_from(self, shape) {
            Ok(t)
        } else {
            Err(Error::Reshape {
                elements: self.num_elements(),
                shape: shape.clone(),
            })
        }
    }

    /// `BitcastFrom(other, dtype, shape)`: this tensor shares `other`'s buffer as `dtype` with
    /// `shape`. TensorFlow's three checks and messages, in order: `other tensor has
    /// zero-sized data type`, `specified output type is zero-sized`, `input and output
    /// shapes/data type sizes are not compatible`. On error nothing changes. Never copies (the
    /// host is little-endian).
    ///
    /// # Errors
    /// [`Error::BitcastFrom`] with TensorFlow's message for each of the three checks above.
    pub fn bitcast_from(
        &mut self,
        other: &Tensor,
        dtype: DataType,
        shape: &TensorShape,
    ) -> Result<()> {
        let in_size = other.dtype.size();
        let out_size = dtype.size();
        if in_size == 0 {
            return Err(Error::BitcastFrom {
                message: "other tensor has zero-sized data type",
            });
        }
        if out_size == 0 {
            return Err(Error::BitcastFrom {
                message: "specified output type is zero-sized",
            });
        }
        let in_bytes = (other.num_elements() as u128) * in_size as u128;
        let out_bytes = (shape.num_elements() as u128) * out_size as u128;
        if in_bytes != out_bytes {
            return Err(Error::BitcastFrom {
                message: "input and output shapes/data type sizes are not compatible",
            });
        }
        self.dtype = dtype;
        self.shape = shape.clone();
        self.storage = other.storage.clone();
        Ok(())
    }

    /// [`Tensor::bitcast_from`] as a function: a new tensor sharing this one's buffer.
    ///
    /// # Errors
    /// As [`Tensor::bitcast_from`].
    pub fn bitcast_to(&self, dtype: DataType, shape: &TensorShape) -> Result<Tensor> {
        // A placeholder without a buffer: `bitcast_from` replaces everything, nothing is
        // allocated.
        let mut t = Tensor::without_data(dtype, TensorShape::scalar());
        t.bitcast_from(self, dtype, shape)?;
        Ok(t)
    }

    /// `Slice(start, limit)` along dimension 0, sharing the buffer. `start == 0` and
    /// `limit == dim0` return this tensor itself (a clone). The result may be unaligned.
    ///
    /// # Errors
    /// [`Error::ScalarNotAllowed`] for a scalar; [`Error::SliceOutOfRange`] unless
    /// `0 <= start <= limit <= dim_size(0)`.
    pub fn slice(&self, start: i64, limit: i64) -> Result<Tensor> {
        let dim0 = self.dim0("Slice")?;
        if !(0 <= start && start <= limit && limit <= dim0) {
            return Err(Error::SliceOutOfRange { start, limit, dim0 });
        }
        if start == 0 && limit == dim0 {
            return Ok(self.clone());
        }
        let mut shape = self.shape.clone();
        shape.set_dim(0, limit - start)?;
        let inner = self.inner_elements();
        let storage = self.sub_storage(start as usize * inner, (limit - start) as usize * inner);
        Self::assemble(self.dtype, shape, storage)
    }

    /// `SubSlice(index)`: the `index`-th entry along dimension 0, with that dimension dropped,
    /// sharing the buffer. Requires `0 <= index < dim_size(0)`. The result may be unaligned.
    ///
    /// # Errors
    /// [`Error::ScalarNotAllowed`] for a scalar; [`Error::SubSliceOutOfRange`] unless
    /// `0 <= index < dim_size(0)`.
    pub fn sub_slice(&self, index: i64) -> Result<Tensor> {
        let dim0 = self.dim0("SubSlice")?;
        if !(0 <= index && index < dim0) {
            return Err(Error::SubSliceOutOfRange { index, dim0 });
        }
        let shape = TensorShape::new(&self.shape.dim_sizes()[1..])?;
        let inner = self.inner_elements();
        let storage = self.sub_storage(index as usize * inner, inner);
        Self::assemble(self.dtype, shape, storage)
    }

    fn dim0(&self, op: &'static str) -> Result<i64> {
        self.shape.dim_size(0).ok_or(Error::ScalarNotAllowed { op })
    }

    fn inner_elements(&self) -> usize {
        self.shape.dim_sizes()[1..].iter().product::<i64>() as usize
    }

    /// The storage of elements `[start, start + len)`.
    fn sub_storage(&self, start: usize, len: usize) -> Storage {
        match &self.storage {
            Storage::None => Storage::None,
            Storage::Bytes(b) => {
                let size = self.dtype.size();
                match b.slice(start * size..(start + len) * size) {
                    Some(s) if len > 0 => Storage::Bytes(s),
                    _ => Storage::None,
                }
            }
            Storage::Strings(o) => Storage::Strings(o.slice(start, len)),
            Storage::Resources(o) => Storage::Resources(o.slice(start, len)),
            Storage::Variants(o) => Storage::Variants(o.slice(start, len)),
        }
    }

    /// The elements as a slice (shared).
    pub(crate) fn flat_slice<T: Element>(&self) -> Result<&[T]> {
        self.check_dtype::<T>()?;
        self.check_initialized()?;
        T::slice(&self.storage)
    }

    /// The elements as a mutable slice (unshared buffers only).
    pub(crate) fn flat_slice_mut<T: Element>(&mut self) -> Result<&mut [T]> {
        self.check_dtype::<T>()?;
        self.check_initialized()?;
        T::slice_mut(&mut self.storage)
    }

    pub(crate) fn check_dtype<T: Element>(&self) -> Result<()> {
        if T::DTYPE != self.dtype {
            return Err(Error::TypeMismatch {
                actual: self.dtype,
                expected: T::DTYPE,
            });
        }
        Ok(())
    }

    /// `Ok` when the tensor has its data ([`Tensor::is_initialized`]), else the
    /// [`Error::Uninitialized`] every op gives for reading a tensor without data.
    ///
    /// # Errors
    /// [`Error::Uninitialized`] (`FailedPrecondition`).
    pub fn check_initialized(&self) -> Result<()> {
        if !self.is_initialized() {
            return Err(Error::Uninitialized {
                op: "read",
                dtype: self.dtype,
                elements: self.num_elements(),
            });
        }
        Ok(())
    }

    pub(crate) fn bytes_or_empty(&self) -> &[u8] {
        match &self.storage {
            Storage::Bytes(b) => b.as_slice(),
            _ => &[],
        }
    }

    pub(crate) fn bytes_mut(&mut self) -> Result<&mut [u8]> {
        self.check_initialized()?;
        match &mut self.storage {
            Storage::Bytes(b) => b.as_mut_slice().ok_or_else(shared_error),
            Storage::None => Ok(&mut []),
            _ => Err(Error::NotBytes {
                op: "a bit-level view",
                dtype: self.dtype,
            }),
        }
    }
}

/// Sub-byte integers are stored canonically (see [`DataType::sub_byte_mask`]) wherever the
/// bytes are ours to write; shared bytes are a view of someone else's and stay as they are.
fn canonicalize_sub_byte(dtype: DataType, storage: &mut Storage) {
    if let (Some(mask), Storage::Bytes(b)) = (dtype.sub_byte_mask(), storage) {
        if let Some(bytes) = b.as_mut_slice() {
            bytes.iter_mut().for_each(|v| *v &= mask);
        }
    }
}

/// The storage of `n` objects made by `f`, in a block from `allocator`.
fn object_storage<T: Element, E: From<Error>>(
    allocator: &Arc<dyn Allocator>,
    n: usize,
    mut f: impl FnMut(usize) -> std::result::Result<T, E>,
) -> std::result::Result<Storage, E> {
    /// The element's error, or the allocator's.
    enum Fail<E> {
        Alloc(tensorcast_buffer::AllocError),
        Element(E),
    }
    impl<E> From<tensorcast_buffer::AllocError> for Fail<E> {
        fn from(e: tensorcast_buffer::AllocError) -> Self {
            Fail::Alloc(e)
        }
    }
    let objects =
        Objects::new_in(allocator, n, |i| f(i).map_err(Fail::Element)).map_err(|e| match e {
            Fail::Alloc(a) => E::from(Error::Alloc(a)),
            Fail::Element(e) => e,
        })?;
    T::objects_into_storage(objects).ok_or_else(|| {
        E::from(Error::Internal(format!(
            "{} is not an object dtype",
            T::DTYPE
        )))
    })
}

/// Bitwise equality: same dtype, same shape, same bytes (so NaNs with equal bits are equal and
/// `0.0 != -0.0`), and equal objects for strings, handles and variants. Sub-byte integers
/// compare the value bits of each byte only ([`DataType::sub_byte_mask`]), so a zero-copy view
/// with stray upper bits equals its canonical copy.
impl PartialEq for Tensor {
    fn eq(&self, other: &Self) -> bool {
        if self.dtype != other.dtype || self.shape != other.shape {
            return false;
        }
        match (&self.storage, &other.storage) {
            (Storage::Strings(a), Storage::Strings(b)) => a.as_slice() == b.as_slice(),
            (Storage::Resources(a), Storage::Resources(b)) => a.as_slice() == b.as_slice(),
            (Storage::Variants(a), Storage::Variants(b)) => a.as_slice() == b.as_slice(),
            (Storage::None, Storage::None) => true,
            _ => {
                let (a, b) = (self.bytes_or_empty(), other.bytes_or_empty());
                self.is_initialized() == other.is_initialized()
                    && match self.dtype.sub_byte_mask() {
                        // Sub-byte integers: the value bits of each byte only.
                        Some(mask) => {
                            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x ^ y) & mask == 0)
                        }
                        None => a == b,
                    }
            }
        }
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.debug_string(3))
    }
}

/// TensorFlow's `operator<<`: `DebugString(100)`.
impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.debug_string(100))
    }
}

macro_rules! from_scalar {
    ($($t:ty),*) => {$(
        impl From<$t> for Tensor {
            fn from(v: $t) -> Self {
                Tensor::scalar_of(v)
            }
        }
    )*};
}

/// Calls `$callback!` with the Rust types of one numeric, bool or complex element (what a
/// scalar converts into a `Tensor` from, here and in the graph crate's `Input`), so that every
/// such list is this one.
#[doc(hidden)]
#[macro_export]
macro_rules! __with_scalar_types {
    ($callback:ident) => {
        $callback! {
            f32, f64, i32, u32, u16, u8, i16, i8, i64, u64, bool, $crate::f16, $crate::bf16,
            $crate::Complex32, $crate::Complex64
        }
    };
}

crate::__with_scalar_types!(from_scalar);
from_scalar!(
    crate::types::QInt8,
    crate::types::QUInt8,
    crate::types::QInt16,
    crate::types::QUInt16,
    crate::types::QInt32,
    crate::types::Float8E5M2,
    crate::types::Float8E4M3FN,
    crate::types::Float8E4M3FNUZ,
    crate::types::Float8E4M3B11FNUZ,
    crate::types::Float8E5M2FNUZ,
    crate::types::Float4E2M1FN,
    crate::types::Int4,
    crate::types::UInt4,
    crate::types::Int2,
    crate::types::UInt2,
    TString,
    ResourceHandle,
    Variant
);

/// `Tensor("str")`: a string scalar (not a bool, as C++ overloading once made it).
impl From<&str> for Tensor {
    fn from(s: &str) -> Self {
        Tensor::scalar_of(TString::from(s))
    }
}

impl From<String> for Tensor {
    fn from(s: String) -> Self {
        Tensor::scalar_of(TString::from(s))
    }
}

impl From<&[u8]> for Tensor {
    /// A string scalar holding these bytes.
    fn from(s: &[u8]) -> Self {
        Tensor::scalar_of(TString::from(s))
    }
}

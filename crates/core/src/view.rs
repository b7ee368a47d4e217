//! Typed views of a tensor's elements as `ndarray` arrays: TensorFlow's `flat<T>()`,
//! `tensor<T, N>()`, `shaped<T, N>()`, `bit_casted_*`, `reinterpret_last_dimension` and the
//! `unaligned_*` accessors.
//!
//! Every view borrows the tensor; none copies except the `unaligned_*` ones, which copy only
//! when the address does not meet the element type's alignment (and say so in their type,
//! `CowArray`). Views check what TensorFlow CHECKs and return its message as an error:
//! `float expected, got int32`, `Asking for tensor of 2 dimensions from a tensor of 1
//! dimensions`, `119 vs. 120`. TensorFlow additionally requires 64-byte alignment for its typed
//! views; tensorcast requires only the element type's own alignment, which is what soundness
//! needs (a slice of a 64-byte-aligned float buffer stays 4-byte aligned and is still viewable).

use ndarray::{ArrayView, ArrayViewD, ArrayViewMut, ArrayViewMutD, CowArray, Dimension, IxDyn};

use crate::element::Element;
use crate::error::{Error, Result};
use crate::Tensor;

fn to_usize(dims: &[i64]) -> Vec<usize> {
    dims.iter().map(|&d| d as usize).collect()
}

fn count(sizes: &[i64]) -> Result<i64> {
    let mut n: i64 = 1;
    for &d in sizes {
        if d < 0 {
            return Err(Error::NegativeSize { size: d });
        }
        n = n.checked_mul(d).ok_or_else(|| Error::TooManyElements {
            dims: sizes.to_vec(),
        })?;
    }
    Ok(n)
}

fn view<'a, T>(dims: &[i64], data: &'a [T]) -> Result<ArrayViewD<'a, T>> {
    ArrayView::from_shape(IxDyn(&to_usize(dims)), data)
        .map_err(|e| Error::Internal(format!("view of shape {dims:?}: {e}")))
}

fn view_mut<'a, T>(dims: &[i64], data: &'a mut [T]) -> Result<ArrayViewMutD<'a, T>> {
    ArrayViewMut::from_shape(IxDyn(&to_usize(dims)), data)
        .map_err(|e| Error::Internal(format!("view of shape {dims:?}: {e}")))
}

fn fixed<'a, T, D: Dimension>(v: ArrayViewD<'a, T>) -> Result<ArrayView<'a, T, D>> {
    let nd = v.ndim();
    v.into_dimensionality::<D>()
        .map_err(|_| dims_error(D::NDIM.unwrap_or(nd), nd))
}

fn fixed_mut<'a, T, D: Dimension>(v: ArrayViewMutD<'a, T>) -> Result<ArrayViewMut<'a, T, D>> {
    let nd = v.ndim();
    v.into_dimensionality::<D>()
        .map_err(|_| dims_error(D::NDIM.unwrap_or(nd), nd))
}

fn dims_error(want: usize, have: usize) -> Error {
    Error::RankMismatch {
        requested: want,
        actual: have,
    }
}

/// TensorFlow's `ComputeFlatInnerDims`: keep the last `n - 1` dims, fold the rest into the
/// first (padding with leading 1s when the tensor has fewer dims).
pub fn flat_inner_dims_of(dims: &[i64], n: usize) -> Vec<i64> {
    let mut out = vec![1i64; n];
    if n == 0 {
        return out;
    }
    let offset = dims.len() as i64 - n as i64;
    for (out_dim, o) in out.iter_mut().enumerate().rev() {
        let in_dim = out_dim as i64 + offset;
        *o = if in_dim < 0 { 1 } else { dims[in_dim as usize] };
    }
    for &d in dims.iter().take(offset.max(0) as usize) {
        out[0] *= d;
    }
    out
}

/// TensorFlow's `ComputeFlatOuterDims`: keep the first `n - 1` dims, fold the rest into the
/// last (padding with trailing 1s).
pub fn flat_outer_dims_of(dims: &[i64], n: usize) -> Vec<i64> {
    let mut out: Vec<i64> = (0..n).map(|i| dims.get(i).copied().unwrap_or(1)).collect();
    if n == 0 {
        return out;
    }
    for &d in dims.iter().skip(n) {
        out[n - 1] *= d;
    }
    out
}

fn inner_outer_dims(dims: &[i64], begin: i64, n: usize) -> Result<Vec<i64>> {
    let outer = begin + n as i64;
    if outer <= 0 || n == 0 {
        return Err(Error::FlatInnerOuterDims { begin, ndims: n });
    }
    Ok(flat_inner_dims_of(
        &flat_outer_dims_of(dims, outer as usize),
        n,
    ))
}

impl Tensor {
    /// Checks a view's element count against the tensor's (`shaped`'s `new vs. old` message).
    fn check_count(&self, sizes: &[i64]) -> Result<()> {
        let n = count(sizes)?;
        if n != self.num_elements() {
            return Err(Error::ElementCount {
                requested: n.into(),
                actual: self.num_elements().into(),
            });
        }
        Ok(())
    }

    // ----- read views --------------------------------------------------------------------

    /// `flat<T>()`: all elements, 1-D.
    ///
    /// # Errors
    /// [`Error::TypeMismatch`] when `T` does not hold the tensor's dtype (`float expected, got
    /// int32`); [`Error::Uninitialized`] when the tensor has elements but no buffer;
    /// [`Error::Misaligned`] when the data's address is not aligned for `T` (see
    /// [`Tensor::unaligned_flat`]); [`Error::InvalidBool`] for a `bool` tensor holding a byte
    /// other than 0 or 1.
    pub fn flat<T: Element>(&self) -> Result<ArrayView<'_, T, ndarray::Ix1>> {
        Ok(ArrayView::from(self.flat_slice::<T>()?))
    }

    /// The elements as a plain slice.
    ///
    /// # Errors
    /// As [`Tensor::flat`].
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        self.flat_slice::<T>()
    }

    /// The elements copied into a `Vec`.
    ///
    /// # Errors
    /// As [`Tensor::flat`].
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        Ok(self.flat_slice::<T>()?.to_vec())
    }

    /// `tensor<T, NDIMS>()`: the elements with the tensor's own shape; `D` fixes the rank
    /// (`ndarray::Ix2`...) or leaves it dynamic (`ndarray::IxDyn`).
    ///
    /// # Errors
    /// As [`Tensor::flat`]; [`Error::RankMismatch`] when `D` fixes a rank other than the tensor's
    /// (`Asking for tensor of 2 dimensions from a tensor of 1 dimensions`).
    pub fn tensor<T: Element, D: Dimension>(&self) -> Result<ArrayView<'_, T, D>> {
        fixed(view(self.shape().dim_sizes(), self.flat_slice::<T>()?)?)
    }

    /// The elements with the tensor's shape, dynamic rank.
    ///
    /// # Errors
    /// As [`Tensor::flat`].
    pub fn view<T: Element>(&self) -> Result<ArrayViewD<'_, T>> {
        view(self.shape().dim_sizes(), self.flat_slice::<T>()?)
    }

    /// `vec<T>()`: a 1-D tensor's elements.
    ///
    /// # Errors
    /// As [`Tensor::tensor`]: [`Error::RankMismatch`] unless the tensor is 1-D.
    pub fn vec<T: Element>(&self) -> Result<ArrayView<'_, T, ndarray::Ix1>> {
        self.tensor::<T, ndarray::Ix1>()
    }

    /// `matrix<T>()`: a 2-D tensor's elements.
    ///
    /// # Errors
    /// As [`Tensor::tensor`]: [`Error::RankMismatch`] unless the tensor is 2-D.
    pub fn matrix<T: Element>(&self) -> Result<ArrayView<'_, T, ndarray::Ix2>> {
        self.tensor::<T, ndarray::Ix2>()
    }

    /// `scalar<T>()`: the one element of a tensor with exactly one element (any rank, as in
    /// TensorFlow).
    ///
    /// # Errors
    /// As [`Tensor::flat`]; [`Error::NotOneElement`] (`Must have a one element tensor`) when the
    /// tensor does not hold exactly one element.
    pub fn scalar<T: Element>(&self) -> Result<&T> {
        let s = self.flat_slice::<T>()?;
        match s {
            [x] => Ok(x),
            _ => Err(Error::NotOneElement {
                elements: self.num_elements(),
            }),
        }
    }

    /// `shaped<T, N>(sizes)`: the elements viewed with another shape of the same count.
    ///
    /// # Errors
    /// As [`Tensor::flat`]; [`Error::NegativeSize`] for a negative size, [`Error::TooManyElements`]
    /// when the sizes' product overflows `i64`, [`Error::ElementCount`] when it differs from the
    /// tensor's element count (TensorFlow's `6 vs. 8`).
    pub fn shaped<T: Element>(&self, sizes: &[i64]) -> Result<ArrayViewD<'_, T>> {
        self.check_dtype::<T>()?;
        self.check_count(sizes)?;
        view(sizes, self.flat_slice::<T>()?)
    }

    /// `flat_inner_dims<T, N>()`: the last `ndims - 1` dims kept, the others folded into the
    /// first.
    ///
    /// # Errors
    /// As [`Tensor::shaped`].
    pub fn flat_inner_dims<T: Element>(&self, ndims: usize) -> Result<ArrayViewD<'_, T>> {
        self.shaped(&flat_inner_dims_of(self.shape().dim_sizes(), ndims))
    }

    /// `flat_outer_dims<T, N>()`: the first `ndims - 1` dims kept, the others folded into the
    /// last.
    ///
    /// # Errors
    /// As [`Tensor::shaped`].
    pub fn flat_outer_dims<T: Element>(&self, ndims: usize) -> Result<ArrayViewD<'_, T>> {
        self.shaped(&flat_outer_dims_of(self.shape().dim_sizes(), ndims))
    }

    /// `flat_inner_outer_dims<T, N>(begin)`: the dims before `begin` folded into the first,
    /// those from `begin + ndims - 1` on folded into the last (negative `begin` adds leading
    /// 1s, running past the rank adds trailing 1s).
    ///
    /// # Errors
    /// As [`Tensor::shaped`]; [`Error::FlatInnerOuterDims`] when `begin + ndims <= 0` or `ndims`
    /// is 0.
    pub fn flat_inner_outer_dims<T: Element>(
        &self,
        begin: i64,
        ndims: usize,
    ) -> Result<ArrayViewD<'_, T>> {
        self.shaped(&inner_outer_dims(self.shape().dim_sizes(), begin, ndims)?)
    }

    /// `bit_casted_tensor`'s requirement: `T` is plain bytes of the dtype's size.
    fn check_bit_cast_size<T: Element>(&self) -> Result<()> {
        if std::mem::size_of::<T>() != self.dtype().size() || !T::IS_POD {
            return Err(Error::ElementSize {
                op: "bit_casted_tensor",
                dtype: self.dtype(),
                element: T::DTYPE,
                expected_bytes: self.dtype().size(),
                actual_bytes: std::mem::size_of::<T>(),
            });
        }
        Ok(())
    }

    /// `bit_casted_tensor<T, N>()`: the tensor's bytes as `T` with its shape; `T` must have the
    /// dtype's size.
    ///
    /// # Errors
    /// [`Error::ElementSize`] when `T` is not plain bytes of the dtype's size (always so for
    /// string, resource and variant tensors); [`Error::Uninitialized`], [`Error::Misaligned`] and
    /// [`Error::InvalidBool`] as [`Tensor::flat`].
    pub fn bit_casted_tensor<T: Element>(&self) -> Result<ArrayViewD<'_, T>> {
        self.check_initialized()?;
        self.check_bit_cast_size::<T>()?;
        view(
            self.shape().dim_sizes(),
            T::from_bytes(self.bytes_or_empty())?,
        )
    }

    /// `bit_casted_shaped<T, N>(sizes)`: the tensor's bytes as `T` with `sizes`; the byte
    /// counts must match (`4 vs. 480`).
    ///
    /// # Errors
    /// [`Error::ElementCount`] when `sizes` hold another number of bytes than the tensor (`4 vs.
    /// 480`); when `T` or the dtype is string, resource or variant, [`Error::TypeMismatch`] if they
    /// differ and [`Error::NotBytes`] if not. [`Error::NegativeSize`] and
    /// [`Error::TooManyElements`] as [`Tensor::shaped`]; [`Error::Uninitialized`],
    /// [`Error::Misaligned`] and [`Error::InvalidBool`] as [`Tensor::flat`].
    pub fn bit_casted_shaped<T: Element>(&self, sizes: &[i64]) -> Result<ArrayViewD<'_, T>> {
        self.check_bit_cast::<T>(sizes)?;
        view(sizes, T::from_bytes(self.bytes_or_empty())?)
    }

    fn check_bit_cast<T: Element>(&self, sizes: &[i64]) -> Result<()> {
        self.check_initialized()?;
        let n = count(sizes)?;
        if !T::IS_POD || !self.dtype().can_use_memcpy() {
            // TensorFlow compares element counts for non-memcpy types (`9 vs. 10` for strings).
            if T::DTYPE != self.dtype() {
                return Err(Error::TypeMismatch {
                    actual: self.dtype(),
                    expected: T::DTYPE,
                });
            }
            return self.check_count(sizes);
        }
        let want = n as i128 * std::mem::size_of::<T>() as i128;
        let have = self.num_elements() as i128 * self.dtype().size() as i128;
        if want != have {
            return Err(Error::ElementCount {
                requested: want,
                actual: have,
            });
        }
        Ok(())
    }

    /// `reinterpret_last_dimension<T, N>()`: the last dimension's elements read as one larger
    /// element `T` (e.g. `qint8 [.., 4]` as `int32 [..]`); `size_of::<T>()` must equal the last
    /// dimension times the dtype's size.
    ///
    /// # Errors
    /// [`Error::ScalarNotAllowed`] for a scalar; [`Error::ElementSize`] when `T` is not plain bytes
    /// of the last dimension's byte count; [`Error::Uninitialized`], [`Error::Misaligned`] and
    /// [`Error::InvalidBool`] as [`Tensor::flat`].
    pub fn reinterpret_last_dimension<T: Element>(&self) -> Result<ArrayViewD<'_, T>> {
        let dims = self.shape().dim_sizes();
        let Some((&last, outer)) = dims.split_last() else {
            return Err(Error::ScalarNotAllowed {
                op: "reinterpret_last_dimension",
            });
        };
        if !T::IS_POD || std::mem::size_of::<T>() as i64 != last * self.dtype().size() as i64 {
            return Err(Error::ElementSize {
                op: "reinterpret_last_dimension",
                dtype: self.dtype(),
                element: T::DTYPE,
                expected_bytes: (last.max(0) as usize).saturating_mul(self.dtype().size()),
                actual_bytes: std::mem::size_of::<T>(),
            });
        }
        self.check_initialized()?;
        view(outer, T::from_bytes(self.bytes_or_empty())?)
    }

    /// `unaligned_flat<T>()`: all elements, 1-D, whatever the address; borrowed when aligned
    /// for `T`, copied otherwise.
    ///
    /// # Errors
    /// As [`Tensor::unaligned_shaped`].
    pub fn unaligned_flat<T: Element>(&self) -> Result<CowArray<'_, T, ndarray::Ix1>> {
        let n = self.num_elements();
        Ok(self
            .unaligned_shaped::<T>(&[n])?
            .into_dimensionality()
            .unwrap_or_else(|_| {
                // A 1-element shape always converts to Ix1.
                CowArray::from(ndarray::Array1::default(0))
            }))
    }

    /// `unaligned_shaped<T, N>(sizes)`: as [`Tensor::shaped`] for any address; borrowed when
    /// aligned for `T`, copied otherwise.
    ///
    /// # Errors
    /// As [`Tensor::shaped`], except that a misaligned address is copied rather than an error.
    pub fn unaligned_shaped<T: Element>(&self, sizes: &[i64]) -> Result<CowArray<'_, T, IxDyn>> {
        self.check_dtype::<T>()?;
        self.check_count(sizes)?;
        match self.flat_slice::<T>() {
            Ok(s) => Ok(CowArray::from(view(sizes, s)?)),
            Err(Error::Misaligned { .. }) => {
                let v = T::read_unaligned(self.bytes_or_empty())?;
                let a = ndarray::Array::from_shape_vec(IxDyn(&to_usize(sizes)), v)
                    .map_err(|e| Error::Internal(e.to_string()))?;
                Ok(CowArray::from(a))
            }
            Err(e) => Err(e),
        }
    }

    // ----- write views -------------------------------------------------------------------

    /// `flat<T>()`, writable. Needs a buffer no other tensor shares (see
    /// [`Tensor::make_unique`]).
    ///
    /// # Errors
    /// As [`Tensor::flat`]; [`Error::SharedBuffer`] when another tensor shares the buffer or it is
    /// read-only (call [`Tensor::make_unique`] first).
    pub fn flat_mut<T: Element>(&mut self) -> Result<ArrayViewMut<'_, T, ndarray::Ix1>> {
        Ok(ArrayViewMut::from(self.flat_slice_mut::<T>()?))
    }

    /// The elements as a writable slice.
    ///
    /// # Errors
    /// As [`Tensor::flat_mut`].
    pub fn as_mut_slice<T: Element>(&mut self) -> Result<&mut [T]> {
        self.flat_slice_mut::<T>()
    }

    /// `tensor<T, NDIMS>()`, writable.
    ///
    /// # Errors
    /// As [`Tensor::tensor`]; [`Error::SharedBuffer`] as [`Tensor::flat_mut`].
    pub fn tensor_mut<T: Element, D: Dimension>(&mut self) -> Result<ArrayViewMut<'_, T, D>> {
        let dims = self.shape().dim_sizes().to_vec();
        fixed_mut(view_mut(&dims, self.flat_slice_mut::<T>()?)?)
    }

    /// The elements with the tensor's shape, writable, dynamic rank.
    ///
    /// # Errors
    /// As [`Tensor::flat_mut`].
    pub fn view_mut<T: Element>(&mut self) -> Result<ArrayViewMutD<'_, T>> {
        let dims = self.shape().dim_sizes().to_vec();
        view_mut(&dims, self.flat_slice_mut::<T>()?)
    }

    /// TensorFlow's `Slice(0, index)` and `Slice(index, dim0)` of this tensor, both writable at
    /// once: the rows before `index` and the rows from it, as two disjoint views (in the spirit
    /// of `slice::split_at_mut`). Where TensorFlow fills a tensor through slices that alias
    /// their parent, this borrows the tensor mutably for as long as either view lives, so two
    /// threads can each fill one part and no one can read a half-written tensor meanwhile.
    ///
    /// # Errors
    /// A scalar ([`Error::ScalarNotAllowed`]), `index` outside `0..=dim0`
    /// ([`Error::SliceOutOfRange`]), a buffer another tensor shares ([`Error::SharedBuffer`]:
    /// call [`Tensor::make_unique`] first), a dtype other than `T`, or no buffer.
    ///
    /// ```
    /// use tensorcast_core::Tensor;
    /// let mut t = Tensor::new(tensorcast_core::DataType::FLOAT, [4, 2])?;
    /// let (mut top, mut bottom) = t.split_at_mut::<f32>(1)?;
    /// std::thread::scope(|s| {
    ///     s.spawn(|| top.fill(1.0));
    ///     s.spawn(|| bottom.fill(2.0));
    /// });
    /// assert_eq!(t.as_slice::<f32>()?, [1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]);
    /// # Ok::<(), tensorcast_core::Error>(())
    /// ```
    pub fn split_at_mut<T: Element>(
        &mut self,
        index: i64,
    ) -> Result<(ArrayViewMutD<'_, T>, ArrayViewMutD<'_, T>)> {
        let dims = self.shape().dim_sizes().to_vec();
        let Some(&dim0) = dims.first() else {
            return Err(Error::ScalarNotAllowed { op: "Slice" });
        };
        if !(0..=dim0).contains(&index) {
            return Err(Error::SliceOutOfRange {
                start: 0,
                limit: index,
                dim0,
            });
        }
        let inner: usize = to_usize(&dims[1..]).iter().product();
        let data = self.flat_slice_mut::<T>()?;
        let (a, b) = data.split_at_mut(index as usize * inner);
        let mut top = dims.clone();
        top[0] = index;
        let mut bottom = dims;
        bottom[0] = dim0 - index;
        Ok((view_mut(&top, a)?, view_mut(&bottom, b)?))
    }

    /// Every `SubSlice(i)` of this tensor, writable at once: one view per index of dimension
    /// 0, with that dimension dropped, disjoint from each other (so they can be filled in any
    /// order or in parallel). The tensor stays borrowed while any view lives.
    ///
    /// # Errors
    /// As [`Tensor::split_at_mut`] (a scalar is `ScalarNotAllowed { op: "SubSlice" }`).
    ///
    /// ```
    /// use tensorcast_core::{DataType, Tensor};
    /// let mut t = Tensor::new(DataType::INT32, [3, 2])?;
    /// for (i, mut row) in t.sub_slices_mut::<i32>()?.into_iter().enumerate() {
    ///     row.fill(i as i32);
    /// }
    /// assert_eq!(t.as_slice::<i32>()?, [0, 0, 1, 1, 2, 2]);
    /// # Ok::<(), tensorcast_core::Error>(())
    /// ```
    pub fn sub_slices_mut<T: Element>(&mut self) -> Result<Vec<ArrayViewMutD<'_, T>>> {
        let dims = self.shape().dim_sizes().to_vec();
        if dims.is_empty() {
            return Err(Error::ScalarNotAllowed { op: "SubSlice" });
        }
        let inner: usize = to_usize(&dims[1..]).iter().product();
        let data = self.flat_slice_mut::<T>()?;
        if inner == 0 {
            // Rows of no elements: `chunks_mut` cannot make them, but each is still a view.
            return (0..dims[0])
                .map(|_| view_mut(&dims[1..], &mut []))
                .collect();
        }
        data.chunks_mut(inner)
            .map(|row| view_mut(&dims[1..], row))
            .collect()
    }

    /// `vec<T>()`, writable.
    ///
    /// # Errors
    /// As [`Tensor::vec`]; [`Error::SharedBuffer`] as [`Tensor::flat_mut`].
    pub fn vec_mut<T: Element>(&mut self) -> Result<ArrayViewMut<'_, T, ndarray::Ix1>> {
        self.tensor_mut::<T, ndarray::Ix1>()
    }

    /// `matrix<T>()`, writable.
    ///
    /// # Errors
    /// As [`Tensor::matrix`]; [`Error::SharedBuffer`] as [`Tensor::flat_mut`].
    pub fn matrix_mut<T: Element>(&mut self) -> Result<ArrayViewMut<'_, T, ndarray::Ix2>> {
        self.tensor_mut::<T, ndarray::Ix2>()
    }

    /// `scalar<T>()`, writable.
    ///
    /// # Errors
    /// As [`Tensor::scalar`]; [`Error::SharedBuffer`] as [`Tensor::flat_mut`].
    pub fn scalar_mut<T: Element>(&mut self) -> Result<&mut T> {
        let elements = self.num_elements();
        match self.flat_slice_mut::<T>()? {
            [x] => Ok(x),
            _ => Err(Error::NotOneElement { elements }),
        }
    }

    /// `shaped<T, N>(sizes)`, writable.
    ///
    /// # Errors
    /// As [`Tensor::shaped`]; [`Error::SharedBuffer`] as [`Tensor::flat_mut`].
    pub fn shaped_mut<T: Element>(&mut self, sizes: &[i64]) -> Result<ArrayViewMutD<'_, T>> {
        self.check_dtype::<T>()?;
        self.check_count(sizes)?;
        view_mut(sizes, self.flat_slice_mut::<T>()?)
    }

    /// `flat_inner_dims<T, N>()`, writable.
    ///
    /// # Errors
    /// As [`Tensor::shaped_mut`].
    pub fn flat_inner_dims_mut<T: Element>(
        &mut self,
        ndims: usize,
    ) -> Result<ArrayViewMutD<'_, T>> {
        let d = flat_inner_dims_of(self.shape().dim_sizes(), ndims);
        self.shaped_mut(&d)
    }

    /// `flat_outer_dims<T, N>()`, writable.
    ///
    /// # Errors
    /// As [`Tensor::shaped_mut`].
    pub fn flat_outer_dims_mut<T: Element>(
        &mut self,
        ndims: usize,
    ) -> Result<ArrayViewMutD<'_, T>> {
        let d = flat_outer_dims_of(self.shape().dim_sizes(), ndims);
        self.shaped_mut(&d)
    }

    /// `flat_inner_outer_dims<T, N>(begin)`, writable.
    ///
    /// # Errors
    /// As [`Tensor::flat_inner_outer_dims`]; [`Error::SharedBuffer`] as [`Tensor::flat_mut`].
    pub fn flat_inner_outer_dims_mut<T: Element>(
        &mut self,
        begin: i64,
        ndims: usize,
    ) -> Result<ArrayViewMutD<'_, T>> {
        let d = inner_outer_dims(self.shape().dim_sizes(), begin, ndims)?;
        self.shaped_mut(&d)
    }

    /// `bit_casted_shaped<T, N>(sizes)`, writable.
    ///
    /// # Errors
    /// As [`Tensor::bit_casted_shaped`]; [`Error::SharedBuffer`] as [`Tensor::flat_mut`].
    pub fn bit_casted_shaped_mut<T: Element>(
        &mut self,
        sizes: &[i64],
    ) -> Result<ArrayViewMutD<'_, T>> {
        self.check_bit_cast::<T>(sizes)?;
        view_mut(sizes, T::from_bytes_mut(self.bytes_mut()?)?)
    }

    /// `bit_casted_tensor<T, N>()`, writable.
    ///
    /// # Errors
    /// As [`Tensor::bit_casted_tensor`]; [`Error::SharedBuffer`] as [`Tensor::flat_mut`].
    pub fn bit_casted_tensor_mut<T: Element>(&mut self) -> Result<ArrayViewMutD<'_, T>> {
        let dims = self.shape().dim_sizes().to_vec();
        self.check_bit_cast_size::<T>()?;
        view_mut(&dims, T::from_bytes_mut(self.bytes_mut()?)?)
    }

    /// `reinterpret_last_dimension<T, N>()`, writable.
    ///
    /// # Errors
    /// As [`Tensor::reinterpret_last_dimension`]; [`Error::SharedBuffer`] as [`Tensor::flat_mut`].
    pub fn reinterpret_last_dimension_mut<T: Element>(&mut self) -> Result<ArrayViewMutD<'_, T>> {
        // Validate through the read path first (same checks), then borrow mutably.
        let outer: Vec<i64> = {
            let v = self.reinterpret_last_dimension::<T>()?;
            v.shape().iter().map(|&d| d as i64).collect()
        };
        view_mut(&outer, T::from_bytes_mut(self.bytes_mut()?)?)
    }

    /// Runs `f` on the elements as a writable 1-D array whatever the address: in place when
    /// aligned for `T`, otherwise on a copy that is written back afterwards (TensorFlow's
    /// writable `unaligned_flat`).
    ///
    /// # Errors
    /// As [`Tensor::flat_mut`], except that a misaligned address is copied rather than an error
    /// (`f` is not called when it fails).
    pub fn with_unaligned_flat_mut<T: Element, R>(
        &mut self,
        f: impl FnOnce(ArrayViewMut<'_, T, ndarray::Ix1>) -> R,
    ) -> Result<R> {
        self.check_dtype::<T>()?;
        match self.flat_slice_mut::<T>() {
            Ok(s) => return Ok(f(ArrayViewMut::from(s))),
            Err(Error::Misaligned { .. }) => {}
            Err(e) => return Err(e),
        }
        let mut copy = T::read_unaligned(self.bytes_or_empty())?;
        let r = f(ArrayViewMut::from(copy.as_mut_slice()));
        T::write_unaligned(&copy, self.bytes_mut()?)?;
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_inner_and_outer_dims_match_tensorflow() {
        let t = [2, 3, 4, 5];
        let z = [3, 0, 2, 0, 5];
        assert_eq!(flat_inner_dims_of(&t, 2), vec![24, 5]);
        assert_eq!(flat_inner_dims_of(&t, 3), vec![6, 4, 5]);
        assert_eq!(flat_inner_dims_of(&t, 5), vec![1, 2, 3, 4, 5]);
        assert_eq!(flat_inner_dims_of(&z, 2), vec![0, 5]);
        assert_eq!(flat_inner_dims_of(&z, 3), vec![0, 0, 5]);
        assert_eq!(flat_inner_dims_of(&z, 5), vec![3, 0, 2, 0, 5]);
        assert_eq!(flat_outer_dims_of(&t, 2), vec![2, 60]);
        assert_eq!(flat_outer_dims_of(&t, 3), vec![2, 3, 20]);
        assert_eq!(flat_outer_dims_of(&t, 5), vec![2, 3, 4, 5, 1]);
        assert_eq!(flat_outer_dims_of(&z, 2), vec![3, 0]);
        assert_eq!(flat_outer_dims_of(&z, 3), vec![3, 0, 0]);
        assert_eq!(flat_outer_dims_of(&z, 5), vec![3, 0, 2, 0, 5]);
    }

    #[test]
    fn flat_inner_outer_dims_match_tensorflow() {
        let t = [2, 3, 4, 5];
        let cases: &[(i64, usize, &[i64])] = &[
            (0, 4, &[2, 3, 4, 5]),
            (-2, 6, &[1, 1, 2, 3, 4, 5]),
            (0, 6, &[2, 3, 4, 5, 1, 1]),
            (-2, 8, &[1, 1, 2, 3, 4, 5, 1, 1]),
            (1, 3, &[6, 4, 5]),
            (1, 5, &[6, 4, 5, 1, 1]),
            (0, 3, &[2, 3, 20]),
            (-2, 5, &[1, 1, 2, 3, 20]),
            (1, 2, &[6, 20]),
        ];
        for &(begin, n, want) in cases {
            assert_eq!(
                inner_outer_dims(&t, begin, n).unwrap(),
                want,
                "begin {begin} n {n}"
            );
        }
        let z = [3, 0, 2, 0, 5];
        let cases: &[(i64, usize, &[i64])] = &[
            (0, 2, &[3, 0]),
            (0, 3, &[3, 0, 0]),
            (0, 5, &[3, 0, 2, 0, 5]),
            (3, 2, &[0, 5]),
            (2, 3, &[0, 0, 5]),
            (1, 3, &[0, 2, 0]),
        ];
        for &(begin, n, want) in cases {
            assert_eq!(
                inner_outer_dims(&z, begin, n).unwrap(),
                want,
                "begin {begin} n {n}"
            );
        }
    }
}

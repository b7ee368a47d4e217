//! The rest of TensorFlow's `TensorShape` API: edits with their `*WithStatus` checks and
//! messages (`set_dim_checked`, `insert_dim`, `remove_dim_range`, `remove_dim`,
//! `remove_last_dims`, `append_shape`, `clear`), `TensorShapeUtils`' `StartsWith`, `EndsWith` and
//! `ShapeListString`, and `PartialTensorShape::Concatenate` / `IsCompatibleWith`.

use crate::error::{Code, Error, Result};
use crate::shape::{PartialTensorShape, TensorShape, MAX_DIMENSIONS};

/// Which `TensorShape` edit, and which of its indices, an [`Error::ShapeIndex`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ShapeEdit {
    /// `SetDimWithStatus`' index (`InvalidArgument`).
    SetDim,
    /// `InsertDimWithStatus`' insertion index (`Internal`, as TensorFlow reports it).
    InsertDim,
    /// `RemoveDimRangeWithStatus`' start index (`Internal`).
    RemoveStart,
    /// `RemoveDimRangeWithStatus`' end index (`Internal`).
    RemoveEnd,
}

impl ShapeEdit {
    /// TensorFlow's status code for an index error of this edit.
    pub fn code(self) -> Code {
        match self {
            ShapeEdit::SetDim => Code::InvalidArgument,
            _ => Code::Internal,
        }
    }
}

/// TensorFlow's message for an index error of `edit`.
pub(crate) fn index_message(edit: ShapeEdit, index: i64, rank: usize) -> String {
    let negative = index < 0;
    match (edit, negative) {
        (ShapeEdit::SetDim, true) => format!("Index must be non-negative, got {index}"),
        (ShapeEdit::SetDim, false) => format!("Index must be less than {rank}, got {index}"),
        (ShapeEdit::InsertDim, true) => {
            format!("The insertion index must be non-negative, got {index}")
        }
        (ShapeEdit::InsertDim, false) => {
            format!("The insertion index must be at most {rank} got {index}")
        }
        (ShapeEdit::RemoveStart, true) => format!("Start index must be non-negative, got {index}"),
        (ShapeEdit::RemoveStart, false) => {
            format!("Start index must be less than {rank}, got {index}")
        }
        (ShapeEdit::RemoveEnd, true) => format!("End index must be non-negative, got {index}"),
        (ShapeEdit::RemoveEnd, false) => {
            format!("End index must be less than {rank}, got {index}")
        }
    }
}

fn index_error(edit: ShapeEdit, index: i64, rank: usize) -> Error {
    Error::ShapeIndex { edit, index, rank }
}

impl TensorShape {
    /// `SetDimWithStatus`: sets dimension `d` to `size`, with TensorFlow's messages (`Index must
    /// be non-negative, got -1`, `Index must be less than 3, got 5`, `Expected a non-negative
    /// size, got -2`, or the element-count overflow); the shape is unchanged on error.
    ///
    /// # Errors
    /// [`Error::ShapeIndex`] (`InvalidArgument`) for `d` outside `0..rank`, then
    /// [`TensorShape::set_dim`]'s errors.
    ///
    /// ```
    /// use tensorcast_core::TensorShape;
    /// let mut s = TensorShape::new(&[2, 3, 4])?;
    /// assert_eq!(s.set_dim_checked(5, 1).unwrap_err().to_string(), "Index must be less than 3, got 5");
    /// s.set_dim_checked(1, 7)?;
    /// assert_eq!(s.to_string(), "[2,7,4]");
    /// # Ok::<(), tensorcast_core::Error>(())
    /// ```
    pub fn set_dim_checked(&mut self, d: i64, size: i64) -> Result<()> {
        let rank = self.rank();
        if d < 0 || d as u64 >= rank as u64 {
            return Err(index_error(ShapeEdit::SetDim, d, rank));
        }
        self.set_dim(d as usize, size)
    }

    /// `InsertDimWithStatus`: inserts a dimension of `size` before dimension `d` (`d == rank`
    /// appends). Checks in TensorFlow's order: the size, the index, the rank limit, then the
    /// element count; the shape is unchanged on error.
    ///
    /// # Errors
    /// `Expected a non-negative size, got -5` (`InvalidArgument`); `The insertion index must be
    /// non-negative, got -1` / `... must be at most 3 got 4` ([`Error::ShapeIndex`],
    /// `Internal`); `Shape has 254 dimensions which is the maximum allowed`
    /// ([`Error::MaxDimensionsReached`]); the overflow of [`TensorShape::new`].
    ///
    /// ```
    /// use tensorcast_core::TensorShape;
    /// let mut s = TensorShape::new(&[10, 5, 20])?;
    /// s.insert_dim(1, 2)?;
    /// assert_eq!(s.to_string(), "[10,2,5,20]");
    /// assert_eq!(s.insert_dim(9, 1).unwrap_err().to_string(), "The insertion index must be at most 4 got 9");
    /// # Ok::<(), tensorcast_core::Error>(())
    /// ```
    pub fn insert_dim(&mut self, d: i64, size: i64) -> Result<()> {
        if size < 0 {
            return Err(Error::NegativeSize { size });
        }
        let rank = self.rank();
        if d < 0 || d as u64 > rank as u64 {
            return Err(index_error(ShapeEdit::InsertDim, d, rank));
        }
        if rank >= MAX_DIMENSIONS {
            return Err(Error::MaxDimensionsReached { rank });
        }
        let mut dims = self.dim_sizes().to_vec();
        dims.insert(d as usize, size);
        *self = TensorShape::new(&dims)?;
        Ok(())
    }

    /// `RemoveDimRangeWithStatus`: removes dimensions `begin..end`; a negative index counts from
    /// the end as TensorFlow's does (`-1` is `rank`, so `(-2, -1)` removes the last dim). An
    /// empty or reversed range removes nothing.
    ///
    /// # Errors
    /// [`Error::ShapeIndex`] (`Internal`): `Start index must be non-negative, got -1`, `Start
    /// index must be less than 2, got 3`, and the same for `End index`.
    ///
    /// ```
    /// use tensorcast_core::TensorShape;
    /// let mut s = TensorShape::new(&[2, 3, 4, 5])?;
    /// s.remove_dim_range(1, 3)?;
    /// assert_eq!(s.to_string(), "[2,5]");
    /// s.remove_dim_range(-2, -1)?;
    /// assert_eq!(s.to_string(), "[2]");
    /// # Ok::<(), tensorcast_core::Error>(())
    /// ```
    pub fn remove_dim_range(&mut self, begin: i64, end: i64) -> Result<()> {
        let rank = self.rank();
        let r = rank as i64;
        let begin = if begin < 0 { r + begin + 1 } else { begin };
        let end = if end < 0 { r + end + 1 } else { end };
        if begin < 0 || begin > r {
            return Err(index_error(ShapeEdit::RemoveStart, begin, rank));
        }
        if end < 0 || end > r {
            return Err(index_error(ShapeEdit::RemoveEnd, end, rank));
        }
        if begin >= end {
            return Ok(());
        }
        let mut dims = self.dim_sizes().to_vec();
        dims.drain(begin as usize..end as usize);
        *self = TensorShape::new(&dims)?;
        Ok(())
    }

    /// `RemoveDim`: removes dimension `d` (`remove_dim_range(d, d + 1)`).
    ///
    /// # Errors
    /// As [`TensorShape::remove_dim_range`] (TensorFlow's `RemoveDim` `CHECK`-fails instead).
    pub fn remove_dim(&mut self, d: i64) -> Result<()> {
        self.remove_dim_range(d, d.saturating_add(1))
    }

    /// `RemoveLastDims`: removes the last `n` dimensions.
    ///
    /// # Errors
    /// [`Error::ShapeIndex`] when `n` is more than the rank (TensorFlow `CHECK`-fails).
    pub fn remove_last_dims(&mut self, n: usize) -> Result<()> {
        let rank = self.rank();
        if n > rank {
            return Err(index_error(
                ShapeEdit::RemoveStart,
                rank as i64 - n as i64,
                rank,
            ));
        }
        self.remove_dim_range((rank - n) as i64, rank as i64)
    }

    /// `AppendShapeWithStatus`: appends `other`'s dimensions; unchanged on error.
    ///
    /// # Errors
    /// `Too many dimensions in tensor` or the element-count overflow, as
    /// [`TensorShape::add_dim`] reports them.
    pub fn append_shape(&mut self, other: &TensorShape) -> Result<()> {
        let mut out = self.clone();
        for &d in other.dim_sizes() {
            out.add_dim(d)?;
        }
        *self = out;
        Ok(())
    }

    /// `Clear`: the scalar shape (rank 0, one element).
    pub fn clear(&mut self) {
        *self = TensorShape::scalar();
    }

    /// `TensorShapeUtils::StartsWith`: `prefix`'s dims are this shape's first dims.
    pub fn starts_with(&self, prefix: &TensorShape) -> bool {
        self.dim_sizes().starts_with(prefix.dim_sizes())
    }

    /// `TensorShapeUtils::EndsWith`: `suffix`'s dims are this shape's last dims.
    pub fn ends_with(&self, suffix: &TensorShape) -> bool {
        self.dim_sizes().ends_with(suffix.dim_sizes())
    }
}

/// `TensorShapeUtils::ShapeListString`: `[[2,3], [], [4]]`.
///
/// ```
/// use tensorcast_core::{shape_list_string, TensorShape};
/// let shapes = [TensorShape::new(&[2, 3])?, TensorShape::scalar(), TensorShape::new(&[4])?];
/// assert_eq!(shape_list_string(&shapes), "[[2,3], [], [4]]");
/// # Ok::<(), tensorcast_core::Error>(())
/// ```
pub fn shape_list_string(shapes: &[TensorShape]) -> String {
    let parts: Vec<String> = shapes.iter().map(|s| s.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

impl PartialTensorShape {
    /// `ConcatenateWithStatus(shape)`: this shape's dims then `other`'s; unknown rank if either
    /// has an unknown rank.
    ///
    /// # Errors
    /// A rank past the limit, or known dims whose product overflows.
    ///
    /// ```
    /// use tensorcast_core::PartialTensorShape;
    /// let a = PartialTensorShape::new(&[2, -1])?;
    /// assert_eq!(a.concatenate(&PartialTensorShape::new(&[3])?)?.debug_string(), "[2,?,3]");
    /// assert_eq!(a.concatenate(&PartialTensorShape::unknown_rank())?.debug_string(), "<unknown>");
    /// # Ok::<(), tensorcast_core::Error>(())
    /// ```
    pub fn concatenate(&self, other: &PartialTensorShape) -> Result<PartialTensorShape> {
        match (self.dims(), other.dims()) {
            (Some(a), Some(b)) => PartialTensorShape::new(&[a, b].concat()),
            _ => Ok(PartialTensorShape::unknown_rank()),
        }
    }

    /// `ConcatenateWithStatus(size)`: this shape with one more dim (`-1`: unknown).
    ///
    /// # Errors
    /// As [`PartialTensorShape::concatenate`]; a size below -1.
    pub fn concatenate_dim(&self, size: i64) -> Result<PartialTensorShape> {
        match self.dims() {
            Some(a) => PartialTensorShape::new(&[a, &[size]].concat()),
            None => Ok(PartialTensorShape::unknown_rank()),
        }
    }

    /// `IsCompatibleWith`: an unknown rank on either side is compatible; otherwise the ranks
    /// match and every pair of known dims is equal.
    ///
    /// ```
    /// use tensorcast_core::PartialTensorShape;
    /// let a = PartialTensorShape::new(&[2, -1])?;
    /// assert!(a.is_compatible_with(&PartialTensorShape::new(&[2, 5])?));
    /// assert!(!a.is_compatible_with(&PartialTensorShape::new(&[3, 5])?));
    /// assert!(!a.is_compatible_with(&PartialTensorShape::new(&[2])?));
    /// assert!(a.is_compatible_with(&PartialTensorShape::unknown_rank()));
    /// # Ok::<(), tensorcast_core::Error>(())
    /// ```
    pub fn is_compatible_with(&self, other: &PartialTensorShape) -> bool {
        match (self.dims(), other.dims()) {
            (Some(a), Some(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(&x, &y)| x < 0 || y < 0 || x == y)
            }
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(d: &[i64]) -> TensorShape {
        TensorShape::new(d).unwrap()
    }

    #[test]
    fn set_dim_checked_out_of_range_has_tensorflows_message() {
        let mut s = shape(&[2, 3, 4]);
        let e = s.set_dim_checked(3, 1).unwrap_err();
        assert_eq!(e.to_string(), "Index must be less than 3, got 3");
        assert_eq!(e.code(), Code::InvalidArgument);
        assert_eq!(
            s.set_dim_checked(-1, 1).unwrap_err().to_string(),
            "Index must be non-negative, got -1"
        );
        assert_eq!(
            s.set_dim_checked(0, -2).unwrap_err().to_string(),
            "Expected a non-negative size, got -2"
        );
        assert_eq!(s, shape(&[2, 3, 4]));
    }

    #[test]
    fn insert_dim_checks_in_tensorflows_order_with_its_messages() {
        // TensorFlow's InsertDimWithStatusWithInvalidData test, ported.
        let mut s = shape(&[10, 5, 20]);
        let e = s.insert_dim(1, -5).unwrap_err();
        assert!(e.to_string().contains("Expected a non-negative size"));
        assert_eq!(e.code(), Code::InvalidArgument);
        let e = s.insert_dim(-1, 5).unwrap_err();
        assert_eq!(
            e.to_string(),
            "The insertion index must be non-negative, got -1"
        );
        assert_eq!(e.code(), Code::Internal);
        let e = s.insert_dim(4, 5).unwrap_err();
        assert_eq!(e.to_string(), "The insertion index must be at most 3 got 4");
        assert_eq!(s, shape(&[10, 5, 20]));
        // ... WithTooManyDims.
        let mut s = shape(&[10, 20]);
        for _ in 0..MAX_DIMENSIONS - 2 {
            s.insert_dim(1, 1).unwrap();
        }
        let e = s.insert_dim(1, 1).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("Shape has {MAX_DIMENSIONS} dimensions which is the maximum allowed")
        );
        assert_eq!(e.code(), Code::Internal);
    }

    #[test]
    fn remove_dim_range_counts_negative_indices_from_the_end() {
        let mut s = shape(&[2, 3, 4, 5]);
        s.remove_dim_range(-3, -2).unwrap();
        assert_eq!(s, shape(&[2, 3, 5]));
        assert_eq!(s.num_elements(), 30);
        s.remove_dim_range(2, 1).unwrap();
        assert_eq!(s, shape(&[2, 3, 5]));
        assert_eq!(
            s.remove_dim_range(4, 4).unwrap_err().to_string(),
            "Start index must be less than 3, got 4"
        );
        assert_eq!(
            s.remove_dim_range(0, 9).unwrap_err().to_string(),
            "End index must be less than 3, got 9"
        );
        assert_eq!(
            s.remove_dim_range(-9, 1).unwrap_err().to_string(),
            "Start index must be non-negative, got -5"
        );
        s.remove_dim(0).unwrap();
        assert_eq!(s, shape(&[3, 5]));
        s.remove_last_dims(2).unwrap();
        assert_eq!(s, TensorShape::scalar());
        assert!(s.remove_last_dims(1).is_err());
    }

    #[test]
    fn append_shape_clear_starts_with_ends_with() {
        let mut s = shape(&[2]);
        s.append_shape(&shape(&[3, 4])).unwrap();
        assert_eq!(s, shape(&[2, 3, 4]));
        assert!(s.starts_with(&shape(&[2, 3])));
        assert!(!s.starts_with(&shape(&[3])));
        assert!(s.ends_with(&shape(&[4])));
        assert!(s.ends_with(&TensorShape::scalar()));
        assert!(!shape(&[4]).ends_with(&s));
        let mut big = shape(&[1 << 40]);
        assert!(big.append_shape(&shape(&[1 << 40])).is_err());
        assert_eq!(big, shape(&[1 << 40]));
        s.clear();
        assert_eq!(s, TensorShape::scalar());
        assert_eq!(s.num_elements(), 1);
    }
}

//! [`TensorShape`] and [`PartialTensorShape`] with TensorFlow's limits and messages.

use std::fmt;

use crate::error::{Error, Result};

/// TensorFlow's `TensorShape::MaxDimensions()`.
pub const MAX_DIMENSIONS: usize = 254;

/// A fully defined shape: at most 254 non-negative dims whose product fits in an `i64`.
///
/// Every constructor validates, so a `TensorShape` always has a valid element count.
///
/// ```
/// use tensorcast_core::TensorShape;
/// let s = TensorShape::new(&[2, 3]).unwrap();
/// assert_eq!(s.num_elements(), 6);
/// assert_eq!(s.to_string(), "[2,3]");
/// assert_eq!(
///     TensorShape::new(&[2, -1]).unwrap_err().to_string(),
///     "Expected a non-negative size, got -1"
/// );
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct TensorShape {
    dims: Dims,
    num_elements: i64,
}

impl Default for TensorShape {
    /// TensorFlow's default `TensorShape`: the scalar (rank 0, one element).
    ///
    /// ```
    /// use tensorcast_core::TensorShape;
    /// assert_eq!(TensorShape::default(), TensorShape::scalar());
    /// assert_eq!(TensorShape::default().num_elements(), 1);
    /// ```
    fn default() -> Self {
        Self::scalar()
    }
}

/// How many dims a shape holds without a heap allocation. Shapes are created on every
/// zero-copy op (bitcast, reshape, slice), so keeping the common ranks inline makes those ops
/// allocation-free.
const INLINE_DIMS: usize = 6;

/// The dims of a shape: inline up to [`INLINE_DIMS`], on the heap beyond.
#[derive(Clone)]
enum Dims {
    Inline { len: u8, dims: [i64; INLINE_DIMS] },
    Heap(Vec<i64>),
}

impl Default for Dims {
    fn default() -> Self {
        Dims::Inline {
            len: 0,
            dims: [0; INLINE_DIMS],
        }
    }
}

impl Dims {
    fn from_slice(d: &[i64]) -> Self {
        if d.len() <= INLINE_DIMS {
            let mut dims = [0; INLINE_DIMS];
            dims[..d.len()].copy_from_slice(d);
            Dims::Inline {
                len: d.len() as u8,
                dims,
            }
        } else {
            Dims::Heap(d.to_vec())
        }
    }

    fn as_slice(&self) -> &[i64] {
        match self {
            Dims::Inline { len, dims } => &dims[..usize::from(*len)],
            Dims::Heap(v) => v,
        }
    }

    fn as_mut_slice(&mut self) -> &mut [i64] {
        match self {
            Dims::Inline { len, dims } => &mut dims[..usize::from(*len)],
            Dims::Heap(v) => v,
        }
    }

    fn push(&mut self, d: i64) {
        match self {
            Dims::Inline { len, dims } if usize::from(*len) < INLINE_DIMS => {
                dims[usize::from(*len)] = d;
                *len += 1;
            }
            _ => {
                let mut v = self.as_slice().to_vec();
                v.push(d);
                *self = Dims::Heap(v);
            }
        }
    }

    fn pop(&mut self) -> Option<i64> {
        match self {
            Dims::Inline { len, dims } => {
                if *len == 0 {
                    return None;
                }
                *len -= 1;
                Some(dims[usize::from(*len)])
            }
            Dims::Heap(v) => v.pop(),
        }
    }
}

impl PartialEq for Dims {
    fn eq(&self, other: &Self) -> bool {
        // Element by element rather than the slices' `==` (a `memcmp` call): shapes are a few
        // dims, and every element-wise op compares its operands' shapes.
        let (a, b) = (self.as_slice(), other.as_slice());
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
    }
}

impl Eq for Dims {}

impl std::hash::Hash for Dims {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

/// Multiplies two non-negative counts, as TensorFlow's `MultiplyWithoutOverflow`: `-1` if
/// either is negative or the product overflows `i64`.
pub(crate) fn multiply_without_overflow(x: i64, y: i64) -> i64 {
    if x < 0 || y < 0 {
        return -1;
    }
    x.checked_mul(y).unwrap_or(-1)
}

/// `MakeShape`'s overflow error: `Shape [..] would have more than 2**63 - 1 elements`.
fn too_many_elements(dims: &[i64]) -> Error {
    Error::TooManyElements {
        dims: dims.to_vec(),
    }
}

/// Renders dims as TensorFlow's `[a,b,c]` (`-1` shown as `?`).
pub(crate) fn dims_string(dims: &[i64]) -> String {
    let mut s = String::with_capacity(2 + dims.len() * 3);
    s.push('[');
    for (i, d) in dims.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        if *d == -1 {
            s.push('?');
        } else {
            s.push_str(&d.to_string());
        }
    }
    s.push(']');
    s
}

impl TensorShape {
    /// The scalar shape `[]`.
    pub fn scalar() -> Self {
        Self {
            dims: Dims::default(),
            num_elements: 1,
        }
    }

    /// Builds a shape dim by dim as `AddDimWithStatus` does, with its messages:
    /// `Expected a non-negative size, got <n>`, `Too many dimensions in tensor`,
    /// `Encountered overflow when multiplying <a> with <b>, result: -1`.
    ///
    /// # Errors
    /// As [`TensorShape::add_dim`], for the first dim that fails.
    pub fn new(dims: &[i64]) -> Result<Self> {
        let mut s = Self::scalar();
        for &d in dims {
            s.add_dim(d)?;
        }
        Ok(s)
    }

    /// TensorFlow's `TensorShapeUtils::MakeShape` (used for shape tensors), with its messages:
    /// `Too many dimensions`, `Dimension <d> must be >= 0`,
    /// `Shape [..] would have more than 2**63 - 1 elements`.
    ///
    /// # Errors
    /// [`Error::TooManyDimensions`] above 254 dims, [`Error::NegativeDimension`] for a dim below 0,
    /// [`Error::MultiplyOverflow`] when the element count passes `2**63 - 1`.
    pub fn make_shape(dims: &[i64]) -> Result<Self> {
        if dims.len() > MAX_DIMENSIONS {
            return Err(Error::TooManyDimensions { in_tensor: false });
        }
        let mut n: i64 = 1;
        for &d in dims {
            if d < 0 {
                return Err(Error::NegativeDimension { dim: d, min: 0 });
            }
            n = multiply_without_overflow(n, d);
            if n < 0 {
                return Err(too_many_elements(dims));
            }
        }
        Ok(Self {
            dims: Dims::from_slice(dims),
            num_elements: n,
        })
    }

    /// Shape from `usize` dims (as ndarray gives them).
    ///
    /// # Errors
    /// As [`TensorShape::new`] (a dim above `i64::MAX` counts as negative).
    pub fn from_usizes(dims: &[usize]) -> Result<Self> {
        let v: Vec<i64> = dims
            .iter()
            .map(|&d| i64::try_from(d).unwrap_or(-1))
            .collect();
        Self::new(&v)
    }

    /// Appends a dimension (`AddDimWithStatus`).
    ///
    /// # Errors
    /// [`Error::NegativeSize`] for a negative size, [`Error::TooManyDimensions`] past 254 dims,
    /// [`Error::MultiplyOverflow`] when the element count overflows; the shape is then unchanged.
    pub fn add_dim(&mut self, size: i64) -> Result<()> {
        if size < 0 {
            return Err(Error::NegativeSize { size });
        }
        if self.rank() >= MAX_DIMENSIONS {
            return Err(Error::TooManyDimensions { in_tensor: true });
        }
        let n = multiply_without_overflow(self.num_elements, size);
        if n < 0 {
            return Err(Error::MultiplyOverflow {
                lhs: self.num_elements,
                rhs: size,
                result: Some(n),
            });
        }
        self.dims.push(size);
        self.num_elements = n;
        Ok(())
    }

    /// Sets dimension `d` to `size`, rechecking the element count (`set_dim`).
    ///
    /// # Errors
    /// [`Error::DimensionOutOfRange`] for `d >= rank`, and [`TensorShape::add_dim`]'s errors for
    /// the size and the new element count; the shape is then unchanged.
    pub fn set_dim(&mut self, d: usize, size: i64) -> Result<()> {
        if d >= self.rank() {
            return Err(Error::DimensionOutOfRange {
                dim: d as i64,
                rank: self.rank(),
            });
        }
        if size < 0 {
            return Err(Error::NegativeSize { size });
        }
        let mut n: i64 = 1;
        for (i, &x) in self.dim_sizes().iter().enumerate() {
            n = multiply_without_overflow(n, if i == d { size } else { x });
            if n < 0 {
                let mut dims = self.dim_sizes().to_vec();
                dims[d] = size;
                return Err(too_many_elements(&dims));
            }
        }
        self.dims.as_mut_slice()[d] = size;
        self.num_elements = n;
        Ok(())
    }

    /// Removes the last dimension (no-op on a scalar).
    pub fn remove_last_dim(&mut self) {
        if self.dims.pop().is_some() {
            self.num_elements = self.dims.as_slice().iter().product();
        }
    }

    /// The size of every dimension, outermost first (TensorFlow's `dim_sizes()`; the rank is
    /// [`TensorShape::rank`]).
    pub fn dim_sizes(&self) -> &[i64] {
        self.dims.as_slice()
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.dims.as_slice().len()
    }

    /// Size of dimension `d`, or `None` past the rank.
    pub fn dim_size(&self, d: usize) -> Option<i64> {
        self.dims.as_slice().get(d).copied()
    }

    /// Number of elements (1 for a scalar).
    pub fn num_elements(&self) -> i64 {
        self.num_elements
    }

    /// Number of elements as `usize` (always fits: it is at most the bytes of some buffer, or
    /// at most `i64::MAX` on 64-bit hosts).
    pub fn num_elements_usize(&self) -> usize {
        usize::try_from(self.num_elements).unwrap_or(usize::MAX)
    }

    /// The dims as `usize` (for ndarray).
    pub fn dims_usize(&self) -> Vec<usize> {
        self.dims.as_slice().iter().map(|&d| d as usize).collect()
    }

    /// True if the shapes have the same dims (`IsSameSize`).
    pub fn is_same_size(&self, other: &TensorShape) -> bool {
        self.dims == other.dims
    }

    /// TensorFlow's `DebugString`: `[2,3]`, `[]`.
    pub fn debug_string(&self) -> String {
        dims_string(self.dims.as_slice())
    }
}

impl fmt::Display for TensorShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.debug_string())
    }
}

impl fmt::Debug for TensorShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TensorShape{}", self.debug_string())
    }
}

impl TryFrom<&[i64]> for TensorShape {
    type Error = Error;
    fn try_from(d: &[i64]) -> Result<Self> {
        Self::new(d)
    }
}

impl<const N: usize> TryFrom<[i64; N]> for TensorShape {
    type Error = Error;
    fn try_from(d: [i64; N]) -> Result<Self> {
        Self::new(&d)
    }
}

/// A shape that may be partly unknown: unknown rank (`<unknown>`), or unknown dims (`?`, stored
/// as -1). Used by shape inference and by resource handles' dtype-and-shape records.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct PartialTensorShape {
    /// `None` = unknown rank.
    dims: Option<Vec<i64>>,
}

impl PartialTensorShape {
    /// A shape of unknown rank (TensorFlow's default `PartialTensorShape`).
    pub fn unknown_rank() -> Self {
        Self { dims: None }
    }

    /// A shape of known rank; -1 marks an unknown dim. Errors as TensorFlow's partial
    /// `MakeShape`: `Dimension <d> must be >= -1`, `Too many dimensions`.
    ///
    /// # Errors
    /// [`Error::TooManyDimensions`] above 254 dims, [`Error::NegativeDimension`] for a dim below -1.
    pub fn new(dims: &[i64]) -> Result<Self> {
        if dims.len() > MAX_DIMENSIONS {
            return Err(Error::TooManyDimensions { in_tensor: false });
        }
        let mut n: i64 = 1;
        for &d in dims {
            if d < -1 {
                return Err(Error::NegativeDimension { dim: d, min: -1 });
            }
            // As TensorFlow's `AddDimWithStatus` for a partial shape: once a dim is unknown the
            // element count is unknown, and no later dim can overflow it.
            if d == -1 {
                n = -1;
            } else if n >= 0 {
                n = multiply_without_overflow(n, d);
                if n < 0 {
                    return Err(too_many_elements(dims));
                }
            }
        }
        Ok(Self {
            dims: Some(dims.to_vec()),
        })
    }

    /// The rank, if known.
    pub fn rank(&self) -> Option<usize> {
        self.dims.as_ref().map(Vec::len)
    }

    /// The dims (-1 = unknown), if the rank is known.
    pub fn dims(&self) -> Option<&[i64]> {
        self.dims.as_deref()
    }

    /// True if the rank and every dim are known.
    pub fn is_fully_defined(&self) -> bool {
        self.dims
            .as_ref()
            .is_some_and(|d| d.iter().all(|&x| x >= 0))
    }

    /// Number of elements, or -1 if unknown.
    pub fn num_elements(&self) -> i64 {
        match &self.dims {
            Some(d) if d.iter().all(|&x| x >= 0) => d.iter().product(),
            _ => -1,
        }
    }

    /// The fully defined shape, if it is one.
    pub fn to_shape(&self) -> Option<TensorShape> {
        if self.is_fully_defined() {
            TensorShape::new(self.dims.as_deref().unwrap_or(&[])).ok()
        } else {
            None
        }
    }

    /// Merges two compatible shapes (`MergeWith`), with TensorFlow's messages.
    ///
    /// # Errors
    /// [`Error::MergeRanks`] when both ranks are known and differ, [`Error::MergeShapes`] when a
    /// dim known on both sides differs.
    pub fn merge_with(&self, other: &PartialTensorShape) -> Result<PartialTensorShape> {
        let (Some(a), Some(b)) = (&self.dims, &other.dims) else {
            return Ok(if self.dims.is_none() {
                other.clone()
            } else {
                self.clone()
            });
        };
        if a.len() != b.len() {
            return Err(Error::MergeRanks {
                lhs: a.len(),
                rhs: b.len(),
            });
        }
        let mut out = Vec::with_capacity(a.len());
        for (&x, &y) in a.iter().zip(b) {
            if x >= 0 && y >= 0 && x != y {
                return Err(Error::MergeShapes {
                    lhs: self.clone(),
                    rhs: other.clone(),
                });
            }
            out.push(if x >= 0 { x } else { y });
        }
        Ok(Self { dims: Some(out) })
    }

    /// TensorFlow's `DebugString`: `[?,3]`, `<unknown>`.
    pub fn debug_string(&self) -> String {
        match &self.dims {
            None => "<unknown>".to_string(),
            Some(d) => dims_string(d),
        }
    }
}

impl From<&TensorShape> for PartialTensorShape {
    fn from(s: &TensorShape) -> Self {
        Self {
            dims: Some(s.dim_sizes().to_vec()),
        }
    }
}

impl fmt::Display for PartialTensorShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.debug_string())
    }
}

impl fmt::Debug for PartialTensorShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PartialTensorShape{}", self.debug_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_limits_and_messages() {
        assert_eq!(TensorShape::new(&[]).unwrap().num_elements(), 1);
        assert_eq!(TensorShape::new(&[3, 0, 5]).unwrap().num_elements(), 0);
        let too_many = vec![1i64; 255];
        assert_eq!(
            TensorShape::new(&too_many).unwrap_err().to_string(),
            "Too many dimensions in tensor"
        );
        assert!(TensorShape::new(&too_many[..254]).is_ok());
        assert_eq!(
            TensorShape::new(&[1 << 62, 4]).unwrap_err().to_string(),
            format!(
                "Encountered overflow when multiplying {} with 4, result: -1",
                1i64 << 62
            )
        );
        assert_eq!(
            TensorShape::make_shape(&too_many).unwrap_err().to_string(),
            "Too many dimensions"
        );
        assert_eq!(
            TensorShape::make_shape(&[2, -1]).unwrap_err().to_string(),
            "Dimension -1 must be >= 0"
        );
    }

    #[test]
    fn make_shape_overflow_names_the_whole_shape() {
        let d = [110, 53, 104, 147, 157, 123, 5, 24, 188, 40, 5, 2];
        assert_eq!(
            TensorShape::make_shape(&d).unwrap_err().to_string(),
            "Shape [110,53,104,147,157,123,5,24,188,40,5,2] would have more than 2**63 - 1 elements"
        );
    }

    #[test]
    fn partial_shapes_print_and_merge() {
        let p = PartialTensorShape::new(&[-1, 3]).unwrap();
        assert_eq!(p.to_string(), "[?,3]");
        assert_eq!(PartialTensorShape::unknown_rank().to_string(), "<unknown>");
        assert_eq!(p.num_elements(), -1);
        let q = PartialTensorShape::new(&[2, -1]).unwrap();
        assert_eq!(p.merge_with(&q).unwrap().to_string(), "[2,3]");
        let r = PartialTensorShape::new(&[2]).unwrap();
        assert_eq!(
            p.merge_with(&r).unwrap_err().to_string(),
            "PartialTensorShape: Incompatible ranks during merge: 2 vs. 1"
        );
        assert_eq!(
            PartialTensorShape::new(&[-2]).unwrap_err().to_string(),
            "Dimension -2 must be >= -1"
        );
    }
}

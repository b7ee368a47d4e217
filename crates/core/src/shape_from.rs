//! Conversions into [`TensorShape`], so that constructors take dims as written:
//! `Tensor::from_vec(v, [2, 3])?`, `&[2, 3][..]`, `vec![2, 3]` or a `&TensorShape`.

use crate::error::Error;
use crate::TensorShape;

impl TryFrom<&TensorShape> for TensorShape {
    type Error = Error;
    fn try_from(s: &TensorShape) -> Result<Self, Error> {
        Ok(s.clone())
    }
}

impl<const N: usize> TryFrom<&[i64; N]> for TensorShape {
    type Error = Error;
    fn try_from(dims: &[i64; N]) -> Result<Self, Error> {
        TensorShape::new(dims)
    }
}

impl TryFrom<Vec<i64>> for TensorShape {
    type Error = Error;
    fn try_from(dims: Vec<i64>) -> Result<Self, Error> {
        TensorShape::new(&dims)
    }
}

impl From<std::convert::Infallible> for Error {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

/// Converts a constructor's shape argument.
pub(crate) fn to_shape<S>(shape: S) -> Result<TensorShape, Error>
where
    S: TryInto<TensorShape>,
    Error: From<S::Error>,
{
    Ok(shape.try_into()?)
}

#[cfg(test)]
mod tests {
    use crate::{Error, Tensor, TensorShape};

    #[test]
    fn constructors_take_dims_as_written() -> crate::Result<()> {
        let a = Tensor::from_vec(vec![1.0f32; 6], [2, 3])?;
        let shape = TensorShape::new(&[2, 3])?;
        let b = Tensor::from_vec(vec![1.0f32; 6], &shape)?;
        let c = Tensor::from_slice(&[1.0f32; 6], shape.clone())?;
        let d = Tensor::from_slice(&[1.0f32; 6], vec![2, 3])?;
        for t in [&a, &b, &c, &d] {
            assert_eq!(t.shape(), &shape);
        }
        // TensorShape::new's check (AddDim's wording).
        assert!(matches!(
            Tensor::from_vec(vec![1.0f32], [-1]),
            Err(Error::NegativeSize { size: -1 })
        ));
        Ok(())
    }
}

//! [`Input`]: what op constructors accept - an [`Output`] (an edge), or a value (a `Tensor`, a
//! scalar, a slice, a nested array, a string) that becomes an implicit `Const` named as C++ names
//! it: `Const/Const`, `Const_1/Const`, `<scope>/Const/Const`.

use tensorcast_core::{Element, Tensor};

use crate::build::operation::{Operation, Output};
use crate::build::ops::Const;
use crate::build::scope::Scope;
use crate::error::{Error, Result};

#[derive(Debug, Clone)]
enum Inner {
    Output(Output),
    Value(Tensor),
    Invalid(String),
}

/// An op input: an edge from an [`Output`], or a value that becomes an implicit constant.
#[derive(Debug, Clone)]
pub struct Input(Inner);

impl Input {
    /// The value, if this input is one (not an edge).
    pub fn tensor(&self) -> Option<&Tensor> {
        match &self.0 {
            Inner::Value(t) => Some(t),
            _ => None,
        }
    }

    /// The edge, if this input is one.
    pub fn output(&self) -> Option<&Output> {
        match &self.0 {
            Inner::Output(o) => Some(o),
            _ => None,
        }
    }

    /// The construction error, if the value could not become a tensor.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] with the reason.
    pub fn status(&self) -> Result<()> {
        match &self.0 {
            Inner::Invalid(e) => Err(Error::InvalidInput(e.clone())),
            _ => Ok(()),
        }
    }

    /// `AsNodeOut`: the edge, or a new implicit `Const` in `scope.new_sub_scope("Const")`.
    pub(crate) fn to_output(&self, scope: &Scope) -> Result<Output> {
        match &self.0 {
            Inner::Output(o) => {
                if !o.op.graph.same_graph(scope.graph()) {
                    return Err(Error::ForeignOutput(o.name()));
                }
                Ok(o.clone())
            }
            Inner::Value(t) => Ok(Const::new(&scope.new_sub_scope("Const"), t.clone())?.output),
            Inner::Invalid(e) => Err(Error::InvalidInput(e.clone())),
        }
    }

    /// A value input from a tensor-building result.
    fn value(r: tensorcast_core::Result<Tensor>) -> Input {
        match r {
            Ok(t) => Input(Inner::Value(t)),
            Err(e) => Input(Inner::Invalid(e.to_string())),
        }
    }
}

impl From<Output> for Input {
    fn from(o: Output) -> Self {
        Input(Inner::Output(o))
    }
}

impl From<&Output> for Input {
    fn from(o: &Output) -> Self {
        Input(Inner::Output(o.clone()))
    }
}

impl From<Operation> for Input {
    /// Output 0 of the operation.
    fn from(o: Operation) -> Self {
        Input(Inner::Output(Output::from(o)))
    }
}

impl From<Tensor> for Input {
    fn from(t: Tensor) -> Self {
        Input(Inner::Value(t))
    }
}

impl From<&Tensor> for Input {
    fn from(t: &Tensor) -> Self {
        Input(Inner::Value(t.clone()))
    }
}

/// For each element type: a 0-d constant, a vector from an array, a matrix from nested arrays.
macro_rules! element_inputs {
    ($($t:ty),*) => {$(
        impl From<$t> for Input {
            /// A 0-d constant.
            fn from(v: $t) -> Self {
                Input(Inner::Value(Tensor::from(v)))
            }
        }
        impl<const N: usize> From<[$t; N]> for Input {
            /// A vector constant.
            fn from(v: [$t; N]) -> Self {
                Input(Inner::Value(Tensor::vector(&v)))
            }
        }
        impl<const N: usize, const M: usize> From<[[$t; N]; M]> for Input {
            /// A matrix constant of shape `[M, N]` (C++'s nested initializer list).
            fn from(v: [[$t; N]; M]) -> Self {
                let flat: Vec<$t> = v.iter().flat_map(|row| row.iter().cloned()).collect();
                Input::value(
                    Tensor::from_vec(flat, [M as i64, N as i64]),
                )
            }
        }
    )*};
}

tensorcast_core::__with_scalar_types!(element_inputs);

impl From<&str> for Input {
    /// A 0-d string constant.
    fn from(v: &str) -> Self {
        Input(Inner::Value(Tensor::from(v)))
    }
}

impl From<String> for Input {
    /// A 0-d string constant.
    fn from(v: String) -> Self {
        Input(Inner::Value(Tensor::from(v)))
    }
}

impl<T: Element> From<&[T]> for Input {
    /// A vector constant.
    fn from(v: &[T]) -> Self {
        Input(Inner::Value(Tensor::vector(v)))
    }
}

impl<T: Element> From<Vec<T>> for Input {
    /// A vector constant (the vector becomes the tensor's storage, no copy).
    fn from(v: Vec<T>) -> Self {
        let len = v.len() as i64;
        Input::value(Tensor::from_vec(v, [len]))
    }
}

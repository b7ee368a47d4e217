//! Activations and unary math (`Relu`, `Sigmoid`, `Tanh`, `Exp`, `Erf`, ...), `Softmax` and `LogSoftmax`,
//! and the selection ops `Select`/`SelectV2`.

mod select;
pub(crate) mod vector;

pub use select::{select, select_shape, select_v2, select_v2_shape};

//! Activations and unary math (`Relu`, `Sigmoid`, `Tanh`, `Exp`, `Erf`, ...), `Softmax` and `LogSoftmax`.

"""tensorcast: TensorFlow's tensors and files without TensorFlow.

Tensors share memory with numpy (both ways), ml_dtypes (bfloat16, float8, int4...) and any
DLPack consumer (numpy 2, JAX, PyTorch); the functions behave as TensorFlow 2.21's and raise
``tensorcast.errors`` exceptions with TensorFlow's text. ``tensorcast.io`` reads and writes
TFRecords and parses Examples, ``tensorcast.train`` reads and writes checkpoints,
``tensorcast.saved_model`` runs SavedModel signatures, and ``tensorcast.ray`` reads files in
parallel on a Ray cluster. Importing the package imports neither numpy nor TensorFlow.

>>> import numpy as np, tensorcast as tc
>>> x = tc.Tensor(np.array([0.0, 1.0, 1.0], np.float32))
>>> tc.bitcast(x, "uint8")
Tensor<type: uint8 shape: [3,4] values: [0 0 0...]...>
>>> tc.add(x, np.float32(1)).numpy()
array([1., 2., 2.], dtype=float32)
"""

from tensorcast import errors
from tensorcast._native import (
    Tensor,
    Session,
    add,
    bitcast,
    broadcast_to,
    cast,
    equal,
    from_dlpack,
    greater,
    greater_equal,
    less,
    less_equal,
    load,
    maximum,
    minimum,
    multiply,
    not_equal,
    reinterpret_cast_to,
    save,
    subtract,
)
from tensorcast import io, saved_model, train

__version__ = "0.1.0"

__all__ = [
    "Tensor",
    "Session",
    "add",
    "bitcast",
    "broadcast_to",
    "cast",
    "equal",
    "errors",
    "from_dlpack",
    "greater",
    "greater_equal",
    "io",
    "less",
    "less_equal",
    "load",
    "maximum",
    "minimum",
    "multiply",
    "not_equal",
    "reinterpret_cast_to",
    "save",
    "saved_model",
    "subtract",
    "train",
]

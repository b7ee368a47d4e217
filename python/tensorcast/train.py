"""TensorFlow checkpoints, as ``tf.train`` reads them: ``load_checkpoint(prefix)`` gives a reader
with ``get_variable_to_shape_map()``, ``get_variable_to_dtype_map()`` and ``get_tensor(name)``
(numpy), which is also a lazy mapping by key or object path (``ckpt["model/dense/kernel"]``).
``save_checkpoint(prefix, tensors)`` writes a TF2 checkpoint that ``tf.train.Checkpoint`` restores.

>>> import numpy as np, tensorcast as tc, tempfile, os
>>> prefix = os.path.join(tempfile.mkdtemp(), "ckpt-1")
>>> tc.train.save_checkpoint(prefix, {"w": np.arange(3, dtype=np.int64)})
>>> reader = tc.train.load_checkpoint(prefix)
>>> reader.get_variable_to_dtype_map()["w/.ATTRIBUTES/VARIABLE_VALUE"]
'int64'
>>> reader["w"]
array([0, 1, 2])
"""

from tensorcast._native import CheckpointReader, load_checkpoint, save_checkpoint


def list_variables(ckpt_dir_or_file):
    """``tf.train.list_variables``: sorted ``(key, shape)`` pairs."""
    reader = load_checkpoint(ckpt_dir_or_file)
    shapes = reader.get_variable_to_shape_map()
    return [(k, shapes[k]) for k in sorted(shapes)]


def load_variable(ckpt_dir_or_file, name):
    """``tf.train.load_variable``: one tensor as numpy (a key or an object path)."""
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


__all__ = ["CheckpointReader", "list_variables", "load_checkpoint", "load_variable", "save_checkpoint"]

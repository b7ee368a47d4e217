"""SavedModels, as ``tf.saved_model.load`` gives them: ``load(export_dir)`` restores the
model's variables and returns an object whose ``signatures[key](**inputs)`` runs a signature
and returns a dict of numpy arrays, without TensorFlow.

Inputs are bound as TensorFlow's signature functions bind them: keyword arguments only; numpy
arrays converted to the input's dtype (as numpy's ``astype`` does); Python numbers and lists
converted only when their values fit the dtype; tensors (``tensorcast.Tensor``) taken as they
are, so their dtype must be the input's. An input that does not fit raises ``TypeError`` with
TensorFlow's text. The signature runs with the GIL released; a kernel's failure raises the
``tensorcast.errors`` class TensorFlow raises.

>>> import numpy as np, tensorcast as tc
>>> from tensorcast._testing import saved_model_dir
>>> loaded = tc.saved_model.load(saved_model_dir("affine"))   # y = x * [2, -3] + [0.5, 0.25]
>>> list(loaded.signatures)
['serving_default']
>>> f = loaded.signatures["serving_default"]
>>> f.structured_input_signature
((), {'x': TensorSpec(shape=(None, 2), dtype=tf.float32, name='x')})
>>> f(x=np.array([[1.0, 2.0]], np.float32))
{'y': array([[ 2.5 , -5.75]], dtype=float32)}
>>> f(x=[[1, 2, 3]])
Traceback (most recent call last):
...
TypeError: Binding inputs to tf.function failed due to `Can not cast TensorSpec(shape=(1, 3), dtype=tf.float32, name='x') to TensorSpec(shape=(None, 2), dtype=tf.float32, name='x')`. ...
"""

import collections.abc
import os

from tensorcast._native import NativeSavedModel, load_saved_model as _load_native, saved_model_tag_sets as _tag_sets

SERVING = "serve"
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"

_INT_KINDS = "iub"


class TensorSpec(collections.namedtuple("TensorSpec", ["shape", "dtype", "name"])):
    """A signature input's or output's spec, as ``tf.TensorSpec``: ``shape`` a tuple (``None``
    for an unknown dim) or ``None`` for an unknown rank, ``dtype`` TensorFlow's name
    (``"float32"``), ``name`` the key. Printed as TensorFlow prints it.

    >>> TensorSpec((None, 3), "int32", "a")
    TensorSpec(shape=(None, 3), dtype=tf.int32, name='a')
    >>> TensorSpec((None, 3), "int32", "a").is_compatible_with((7, 3))
    True
    """

    def __repr__(self):
        shape = "<unknown>" if self.shape is None else str(tuple(self.shape))
        return f"TensorSpec(shape={shape}, dtype=tf.{self.dtype}, name={self.name!r})"

    def is_compatible_with(self, shape):
        """Whether an array of ``shape`` fits: same rank, and every known dim equal."""
        if self.shape is None:
            return True
        shape = tuple(shape)
        return len(shape) == len(self.shape) and all(w is None or w == d for w, d in zip(self.shape, shape))


def _spec(raw):
    key, dtype, _c_name, shape = raw
    return TensorSpec(None if shape is None else tuple(None if d < 0 else d for d in shape), dtype, key)


class _BindError(Exception):
    pass


def _numpy_dtype(name):
    import numpy as np

    if name == "string":
        return np.dtype(object)
    try:
        return np.dtype(name)
    except TypeError:
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))


class SignatureFunction:
    """One signature of a loaded SavedModel, called as TensorFlow's signature functions are:
    ``f(**inputs)`` returns ``{output key: numpy array}``.

    ``structured_input_signature`` is ``((), {key: TensorSpec})`` and ``structured_outputs``
    ``{key: TensorSpec}``, as TensorFlow's ``ConcreteFunction`` has them.
    """

    def __init__(self, model, key):
        self._model = model
        self.signature_key = key
        inputs, outputs = model.signature(key)
        self._inputs = [(_spec(r), r[2]) for r in inputs]
        self.structured_input_signature = ((), {s.name: s for s, _ in self._inputs})
        self.structured_outputs = {s.name: s for s in map(_spec, outputs)}

    def _signature_text(self):
        ins = ", ".join(f"{s.name}: {s!r}" for s, _ in self._inputs)
        outs = ", ".join(f"[{k!r}, {s!r}]" for k, s in self.structured_outputs.items())
        return f"(*, {ins}) -> Dict[{outs}]"

    def __repr__(self):
        return f"<SignatureFunction {self.signature_key!r} {self._signature_text()}>"

    def _convert(self, spec, c_name, value):
        """The value as an array or tensor of the spec's dtype and a fitting shape."""
        import numpy as np

        from tensorcast import Tensor

        if isinstance(value, Tensor) or (hasattr(value, "numpy") and not isinstance(value, (np.ndarray, np.generic))):
            # A tensor keeps its dtype: one that differs cannot be cast to the spec.
            dtype = value.dtype if isinstance(value.dtype, str) else getattr(value.dtype, "name", str(value.dtype))
            got = TensorSpec(tuple(value.shape), dtype, spec.name)
            if dtype != spec.dtype or not spec.is_compatible_with(got.shape):
                raise _BindError(f"Can not cast {got!r} to {spec!r}")
            return value if isinstance(value, Tensor) else np.asarray(value)
        want = _numpy_dtype(spec.dtype)
        if isinstance(value, (np.ndarray, np.generic)):
            arr = np.asarray(value)
            try:
                if spec.dtype == "string":
                    if arr.dtype.kind not in "SUO":
                        raise ValueError(f"Cannot convert {value!r} to EagerTensor of dtype {c_name}")
                    arr = _strings(arr)
                else:
                    arr = arr.astype(want, copy=False)
            except (ValueError, TypeError) as e:
                raise _BindError(str(e)) from None
        else:
            arr = _from_python(value, spec.dtype, c_name, want)
        if not spec.is_compatible_with(arr.shape):
            raise _BindError(f"Can not cast {TensorSpec(arr.shape, spec.dtype, spec.name)!r} to {spec!r}")
        return arr

    def _bind(self, args, kwargs):
        if args:
            raise _BindError("too many positional arguments")
        for spec, _ in self._inputs:
            if spec.name not in kwargs:
                raise _BindError(f"missing a required argument: {spec.name!r}")
        names = {s.name for s, _ in self._inputs}
        for k in kwargs:
            if k not in names:
                raise _BindError(f"got an unexpected keyword argument {k!r}")
        return [(spec.name, self._convert(spec, c_name, kwargs[spec.name])) for spec, c_name in self._inputs]

    def __call__(self, *args, **kwargs):
        try:
            feeds = self._bind(args, kwargs)
        except _BindError as e:
            raise TypeError(
                f"Binding inputs to tf.function failed due to `{e}`. Received args: {args!r} and "
                f"kwargs: {kwargs!r} for signature: {self._signature_text()}."
            ) from None
        return {k: t.numpy() for k, t in self._model.run(self.signature_key, feeds)}


def _strings(arr):
    """A numpy array of strings as an ``object`` array of ``bytes`` (text encoded as UTF-8)."""
    import numpy as np

    if arr.dtype.kind == "S":
        return arr.astype(object)
    out = np.empty(arr.shape, object)
    flat = out.reshape(-1)
    for i, s in enumerate(arr.reshape(-1).tolist()):
        flat[i] = s.encode() if isinstance(s, str) else s
    return out


def _from_python(value, dtype, c_name, want):
    """Python numbers and (nested) lists: converted only when every value fits the dtype, as
    ``tf.constant(value, dtype)`` converts them."""
    import numpy as np

    try:
        arr = np.array(value)
    except ValueError:
        raise _BindError("Can't convert non-rectangular Python sequence to Tensor.") from None
    if arr.dtype == object:
        raise _BindError("Can't convert non-rectangular Python sequence to Tensor.")
    fits = True
    if dtype == "string":
        fits = arr.dtype.kind in "SU" or arr.size == 0
        if fits:
            return _strings(arr)
    elif arr.dtype.kind in "SUO":
        fits = False
    elif want.kind in _INT_KINDS and arr.dtype.kind == "f":
        fits = arr.size == 0
    elif want.kind in "iu" and arr.size:
        info = np.iinfo(want)
        fits = info.min <= arr.min() and arr.max() <= info.max
    elif want.kind == "b" and arr.dtype.kind != "b":
        fits = arr.size == 0
    if not fits:
        raise _BindError(f"Cannot convert {value!r} to EagerTensor of dtype {c_name}")
    return arr.astype(want)


class _SignatureMap(collections.abc.Mapping):
    """The signatures of a loaded SavedModel by key, as ``loaded.signatures``."""

    def __init__(self, model):
        self._functions = {k: SignatureFunction(model, k) for k in model.signature_keys()}

    def __getitem__(self, key):
        return self._functions[key]

    def __iter__(self):
        return iter(self._functions)

    def __len__(self):
        return len(self._functions)

    def __repr__(self):
        return f"_SignatureMap({self._functions!r})"


class LoadedSavedModel:
    """What ``load`` returns: ``signatures`` (a mapping of ``SignatureFunction``), ``tags``
    and ``export_dir``."""

    def __init__(self, native):
        self._native = native
        self.signatures = _SignatureMap(native)

    @property
    def tags(self):
        """The tags of the meta graph loaded."""
        return list(self._native.tags)

    @property
    def export_dir(self):
        """The SavedModel's folder."""
        return os.fspath(self._native.export_dir)


def contains_saved_model(export_dir):
    """``tf.saved_model.contains_saved_model``: whether the folder holds a SavedModel."""
    export_dir = os.fspath(export_dir)
    return any(os.path.isfile(os.path.join(export_dir, f)) for f in ("saved_model.pb", "saved_model.pbtxt"))


def load(export_dir, tags=None, options=None):
    """``tf.saved_model.load(export_dir, tags=None)``: the SavedModel in ``export_dir`` with
    its variables restored. ``tags`` (a list, or one string) picks the meta graph; ``None``
    takes the only one. The load reads files with the GIL released."""
    del options
    export_dir = os.fspath(export_dir)
    if not contains_saved_model(export_dir):
        raise OSError(f"SavedModel file does not exist at: {export_dir}{os.sep}{{saved_model.pbtxt|saved_model.pb}}")
    tag_sets = _tag_sets(export_dir)
    if isinstance(tags, str):
        tags = [tags]
    if tags is None:
        if len(tag_sets) != 1:
            raise ValueError(
                "Importing a SavedModel with `tf.saved_model.load` requires a `tags=` argument if there is "
                f"more than one MetaGraph. Got `tags=None`, but there are {len(tag_sets)} MetaGraphs in the "
                f"SavedModel with tag sets: {tag_sets}. Pass a `tags=` argument to load this SavedModel."
            )
        tags = tag_sets[0]
    tags = [str(t) for t in tags]
    if not any(set(tags) == set(s) for s in tag_sets):
        if len(tag_sets) == 1:
            raise ValueError(
                f"Got an incompatible argument to `tags`: {tags}. The SavedModel at {export_dir} has one "
                f"MetaGraph with tags {tag_sets[0]}. You may omit the argument, pass 'None', or pass matching tags."
            )
        raise ValueError(
            f"Got an incompatible argument to `tags`: {tags}. The SavedModel at {export_dir} has "
            f"{len(tag_sets)} MetaGraphs with tag sets {tag_sets}. Pass a `tags=` argument matching one of them."
        )
    return LoadedSavedModel(_load_native(export_dir, tags))


__all__ = [
    "DEFAULT_SERVING_SIGNATURE_DEF_KEY",
    "LoadedSavedModel",
    "NativeSavedModel",
    "SERVING",
    "SignatureFunction",
    "TensorSpec",
    "contains_saved_model",
    "load",
]

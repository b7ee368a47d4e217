"""TensorFlow's exception classes (``tf.errors``), raised by tensorcast with TensorFlow's text.

>>> import numpy as np, tensorcast as tc
>>> try:
...     tc.bitcast(np.zeros(3, np.uint8), "float32")
... except tc.errors.InvalidArgumentError as e:
...     print(e.message)
Cannot bitcast from 4 to 1
"""

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """The base of every error tensorcast raises for a failed operation (``tf.errors.OpError``)."""

    error_code = UNKNOWN

    def __init__(self, node_def, op, message, *args):
        super().__init__(message, *args)
        self._node_def = node_def
        self._op = op
        self._message = message

    @property
    def message(self):
        """TensorFlow's message."""
        return self._message

    @property
    def op(self):
        """The operation that failed (None: tensorcast runs no graph op objects here)."""
        return self._op

    @property
    def node_def(self):
        """The failing node's NodeDef (None)."""
        return self._node_def

    def __str__(self):
        return self._message

    def __reduce__(self):
        return (type(self), (self._node_def, self._op, self._message))


def _make(name, code, doc):
    cls = type(name, (OpError,), {"__doc__": doc, "error_code": code, "__module__": __name__})
    globals()[name] = cls
    return cls


CancelledError = _make("CancelledError", CANCELLED, "An operation was cancelled.")
UnknownError = _make("UnknownError", UNKNOWN, "An unknown error (an operating-system failure).")
InvalidArgumentError = _make("InvalidArgumentError", INVALID_ARGUMENT, "An argument was invalid.")
DeadlineExceededError = _make("DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline expired.")
NotFoundError = _make("NotFoundError", NOT_FOUND, "A file or key was not found.")
AlreadyExistsError = _make("AlreadyExistsError", ALREADY_EXISTS, "An entity already exists.")
PermissionDeniedError = _make("PermissionDeniedError", PERMISSION_DENIED, "Permission denied.")
UnauthenticatedError = _make("UnauthenticatedError", UNAUTHENTICATED, "No valid credentials.")
ResourceExhaustedError = _make("ResourceExhaustedError", RESOURCE_EXHAUSTED, "A limit was reached.")
FailedPreconditionError = _make("FailedPreconditionError", FAILED_PRECONDITION, "A precondition failed.")
AbortedError = _make("AbortedError", ABORTED, "An operation was aborted.")
OutOfRangeError = _make("OutOfRangeError", OUT_OF_RANGE, "Past the valid range.")
UnimplementedError = _make("UnimplementedError", UNIMPLEMENTED, "Not implemented.")
InternalError = _make("InternalError", INTERNAL, "An internal error.")
UnavailableError = _make("UnavailableError", UNAVAILABLE, "Unavailable.")
DataLossError = _make("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")

__all__ = [n for n in dir() if n.endswith("Error")] + ["OpError"]

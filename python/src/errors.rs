//! Errors of the library crates as Python exceptions named as TensorFlow names them
//! (`tensorcast.errors.InvalidArgumentError`, `DataLossError`, ...), carrying TensorFlow's text.

use pyo3::prelude::*;
use pyo3::types::PyString;

/// The Python class name in `tensorcast.errors` for a TensorFlow status code name.
fn class_for(code: &str) -> &'static str {
    match code {
        "CANCELLED" => "CancelledError",
        "INVALID_ARGUMENT" => "InvalidArgumentError",
        "DEADLINE_EXCEEDED" => "DeadlineExceededError",
        "NOT_FOUND" => "NotFoundError",
        "ALREADY_EXISTS" => "AlreadyExistsError",
        "PERMISSION_DENIED" => "PermissionDeniedError",
        "RESOURCE_EXHAUSTED" => "ResourceExhaustedError",
        "FAILED_PRECONDITION" => "FailedPreconditionError",
        "ABORTED" => "AbortedError",
        "OUT_OF_RANGE" => "OutOfRangeError",
        "UNIMPLEMENTED" => "UnimplementedError",
        "INTERNAL" => "InternalError",
        "UNAVAILABLE" => "UnavailableError",
        "DATA_LOSS" => "DataLossError",
        "UNAUTHENTICATED" => "UnauthenticatedError",
        _ => "UnknownError",
    }
}

/// A `tensorcast.errors` exception of the class TensorFlow uses for `code` (`"DATA_LOSS"`...).
pub(crate) fn op_error(code: &str, message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::attach(|py| {
        let made = (|| -> PyResult<PyErr> {
            let module = py.import("tensorcast.errors")?;
            let class = module.getattr(class_for(code))?;
            let none = py.None();
            let value = class.call1((none.clone_ref(py), none, PyString::new(py, &message)))?;
            Ok(PyErr::from_value(value))
        })();
        made.unwrap_or_else(|e| e)
    })
}

/// The operating system's error kind in a chain of causes, if there is one.
fn io_kind(mut e: Option<&(dyn std::error::Error + 'static)>) -> Option<std::io::ErrorKind> {
    while let Some(err) = e {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        e = err.source();
    }
    None
}

/// The status name of an operating-system failure, as TensorFlow's file system reports it.
fn os_code(kind: Option<std::io::ErrorKind>) -> &'static str {
    match kind {
        Some(std::io::ErrorKind::NotFound) => "NOT_FOUND",
        Some(std::io::ErrorKind::PermissionDenied) => "PERMISSION_DENIED",
        Some(std::io::ErrorKind::AlreadyExists) => "ALREADY_EXISTS",
        _ => "UNKNOWN",
    }
}

/// Converts a library error into the matching Python exception.
pub(crate) trait IntoPyErr {
    /// The exception.
    fn into_py_err(self) -> PyErr;
}

impl IntoPyErr for tensorcast_core::Error {
    fn into_py_err(self) -> PyErr {
        op_error(self.code().as_str(), self.to_string())
    }
}

impl IntoPyErr for tensorcast_proto::ProtoError {
    fn into_py_err(self) -> PyErr {
        op_error(self.code().as_str(), self.to_string())
    }
}

impl IntoPyErr for tensorcast_io::IoError {
    fn into_py_err(self) -> PyErr {
        use tensorcast_io::ErrorKind;
        let code = match self.kind() {
            ErrorKind::Io => os_code(io_kind(std::error::Error::source(&self))),
            // A damaged checkpoint or file: TensorFlow's readers report these as DATA_LOSS.
            ErrorKind::BadMagic | ErrorKind::Corrupt | ErrorKind::Truncated => "DATA_LOSS",
            _ => self.code().as_str(),
        };
        op_error(code, self.to_string())
    }
}

impl IntoPyErr for tensorcast_records::RecordsError {
    fn into_py_err(self) -> PyErr {
        let code = match self.code() {
            tensorcast_records::Code::Unknown => os_code(io_kind(std::error::Error::source(&self))),
            c => c.as_str(),
        };
        op_error(code, self.to_string())
    }
}

impl IntoPyErr for tensorcast_graph::Error {
    fn into_py_err(self) -> PyErr {
        op_error(self.code().as_str(), self.full_message())
    }
}

/// `result.map_err(IntoPyErr::into_py_err)`.
pub(crate) trait ResultExt<T> {
    /// The value, or the error as a Python exception.
    fn py(self) -> PyResult<T>;
}

impl<T, E: IntoPyErr> ResultExt<T> for Result<T, E> {
    fn py(self) -> PyResult<T> {
        self.map_err(IntoPyErr::into_py_err)
    }
}

/// `tensorcast.errors.InvalidArgumentError(message)`.
pub(crate) fn invalid(message: impl Into<String>) -> PyErr {
    op_error("INVALID_ARGUMENT", message)
}

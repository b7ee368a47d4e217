//! The crate's error.

/// What can go wrong between tensors and Arrow.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The data cannot be represented (a dtype Arrow lacks, a column tensors cannot hold).
    #[error("{0}")]
    Unsupported(String),
    /// The input is not valid (inconsistent shapes, bad extension metadata, a corrupt file).
    #[error("{0}")]
    Invalid(String),
    /// Writing or reading a file failed.
    #[error(transparent)]
    Io(#[from] tensorcast_io::IoError),
}

impl From<arrow_schema::ArrowError> for Error {
    fn from(e: arrow_schema::ArrowError) -> Self {
        Error::Invalid(e.to_string())
    }
}

impl From<parquet::errors::ParquetError> for Error {
    fn from(e: parquet::errors::ParquetError) -> Self {
        Error::Invalid(e.to_string())
    }
}

impl From<tensorcast_core::Error> for Error {
    fn from(e: tensorcast_core::Error) -> Self {
        Error::Invalid(e.to_string())
    }
}

/// The crate's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

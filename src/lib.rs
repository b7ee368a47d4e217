//! tensorcast: TensorFlow's tensor core in pure Rust.
//!
//! This umbrella crate re-exports [`tensorcast_core`] (tensors, dtypes, shapes, views, ops,
//! debug text), with the wire format as [`proto`] and tensor files as [`io`]. Depending on it
//! compiles no command-line crates: the `tensorcast` tool is the `tensorcast-cli` package.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// Tensors and parsed Examples to and from Arrow, Arrow IPC and Parquet (the optional `arrow`
/// feature).
#[cfg(feature = "arrow")]
pub use tensorcast_arrow as arrow;
pub use tensorcast_buffer as buffer;
pub use tensorcast_core::*;
pub use tensorcast_graph as graph;
pub use tensorcast_io as io;
pub use tensorcast_proto as proto;

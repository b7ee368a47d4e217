//! tensorcast-arrow's integration tests: files written and read back (`files`), and the peers
//! (pyarrow, DuckDB, Polars) reading what we write and writing what we read (`peers`).

mod files;
mod peers;

//! Test support shared by tensorcast's crates (not published): the bodies of the fuzz targets
//! in `fuzz/`, so that their corpora also replay as ordinary tests; the readers of the
//! TensorFlow-recorded vectors; the proptest strategies the property tests share; and the
//! Python peers' interpreter the interop tests run.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(unreachable_pub, missing_debug_implementations)]

pub mod files;
pub mod fuzz;
pub mod graph_defs;
pub mod graphs;
pub mod peers;
pub mod records;
pub mod reference;
pub mod strategies;

//! Test support shared by tensorcast's crates (not published): the bodies of the fuzz targets
//! in `fuzz/`, so that their corpora also replay as ordinary tests; the readers of the
//! TensorFlow-recorded vectors; and the proptest strategies the property tests share.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(unreachable_pub, missing_debug_implementations)]

pub mod fuzz;
pub mod graphs;
pub mod records;
pub mod reference;
pub mod strategies;

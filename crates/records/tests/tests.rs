//! Integration tests of tensorcast-records: one binary, a module per concern.

mod events;
mod parse;
mod tf_observed;
mod tfrecord;
mod writer;

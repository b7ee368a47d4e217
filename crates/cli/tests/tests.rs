//! Integration tests of the `tensorcast` binary (one test binary, a module per concern).

mod arrow;
mod checkpoint;
mod cli;
mod common;
mod graph_hostile;
mod graph_saved_model;
mod hostile;
mod outputs;
mod readers;
mod readme;
mod saved_model;
mod tfrecord;

//! Integration tests of tensorcast-graph (one binary, a module per concern).

mod control_flow;
mod fold;
mod functions;
mod hostile;
mod import;
mod naming;
mod parallel;
mod props;
mod registry;
mod session;
mod status;

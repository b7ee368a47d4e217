//! Fuzz target body (not written yet: accepts every input without exercising anything).

/// Runs the target on one input.
pub fn run(_data: &[u8]) {}

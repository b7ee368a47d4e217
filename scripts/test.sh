#!/usr/bin/env bash
# The project's test command (the README's second command; CI runs it through .ci/run):
# formatting and lints, every test of the workspace in release mode (unit, integration,
# doc tests, property tests, the TensorFlow conformance vectors, fuzz-corpus replays, and the
# TensorFlow interop test where TensorFlow is installed), then Miri over the buffer crate
# where a nightly toolchain with Miri is present.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --quiet -- -D warnings
echo "== cargo doc -D warnings"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
echo "== cargo test --release"
cargo test --release --workspace
echo "== miri (tensorcast-buffer)"
./scripts/miri.sh

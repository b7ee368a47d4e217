#!/usr/bin/env bash
# The project's test command (the README's second command; CI runs it through .ci/run):
# formatting and lints, every test of the workspace in release mode (unit, integration,
# doc tests, property tests, the TensorFlow conformance vectors, fuzz-corpus replays, and the
# interop tests against numpy, safetensors and TensorFlow, whose pinned Python packages this
# script installs into .venv - see scripts/peers.sh; with CI=true a missing peer fails the run),
# the core tests and conformance vectors again at each lower SIMD level,
# then Miri over the buffer crate where a nightly toolchain with Miri is present.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
echo "== python peers"
# shellcheck source=scripts/peers.sh
. ./scripts/peers.sh
peers_setup
echo "   ($((SECONDS - started)) s so far)"
echo "== graphviz (the graph dot tests render through dot itself)"
if ! command -v dot >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz) >/dev/null \
      || echo "graphviz: apt-get install failed"
  fi
fi
command -v dot >/dev/null 2>&1 && dot -V 2>&1 | head -n 1
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --quiet -- -D warnings
echo "== cargo doc -D warnings"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
echo "== real models (tests/models/gen_models.py: Keras models TensorFlow freezes and saves)"
# Generated once per version of the generator and of the pinned peers, into target/tf_models;
# tests/real_models.rs runs them (with CI=true a missing folder fails that test).
models="target/tf_models"
stamp="$(cat tests/models/gen_models.py scripts/python-peers.txt | sha256sum | cut -c1-16)"
if [ -n "${TENSORCAST_PYTHON:-}" ] && [ "$(cat "$models/.stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$models"
  if TF_CPP_MIN_LOG_LEVEL=3 "$TENSORCAST_PYTHON" tests/models/gen_models.py "$models" >/dev/null 2>&1; then
    echo "$stamp" > "$models/.stamp"
  else
    peers_fail "tests/models/gen_models.py failed"
  fi
fi
export TENSORCAST_MODELS_DIR="$PWD/$models"
echo "   ($((SECONDS - started)) s so far)"
echo "== cargo test --release"
cargo test --release --workspace
echo "   ($((SECONDS - started)) s so far)"
# The element-wise loops run compiled for the best vector instructions the CPU has (AVX-512,
# AVX2, SSE2); the buffer, core and kernels crates' tests and the conformance vectors of the
# ops that take those paths (bitcast, broadcast, cast, the element-wise and binary ops, unary
# math, reductions, and graph runs of them) run again at each lower level, so that every path
# is checked on one machine (tensorcast_buffer::simd::level).
simd_files="bitcast,broadcast,cast,elementwise,ops_binary,ops_math,ops_reduce,graph_shape_inference,graph_run_errors,graph_def"
# The reruns use the test binaries `cargo test --release --workspace` just built: `cargo test -p`
# on a few crates would build them again under another feature set (minutes in a fresh tree).
simd_crates="crates/buffer crates/core crates/kernels"
mapfile -t simd_bins < <(cargo test --release --workspace --no-run --message-format=json 2>/dev/null \
  | SIMD_CRATES="$simd_crates" python3 -c '
import json, os, sys
crates = [os.path.join(os.getcwd(), c, "Cargo.toml") for c in os.environ["SIMD_CRATES"].split()]
root = os.path.join(os.getcwd(), "Cargo.toml")
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") != "compiler-artifact" or not m.get("executable") or not m["profile"]["test"]:
        continue
    if m["manifest_path"] in crates or (m["manifest_path"] == root and m["target"]["name"] == "conformance"):
        print(m["target"]["name"], m["executable"])
')
if [ "${#simd_bins[@]}" -lt 2 ]; then
  echo "SIMD reruns: the test binaries of $simd_crates and the conformance runner were not found" >&2
  exit 1
fi
for simd in avx2 baseline; do
  echo "== $simd_crates tests and conformance with TENSORCAST_SIMD=$simd"
  for entry in "${simd_bins[@]}"; do
    name="${entry%% *}"
    exe="${entry#* }"
    if [ "$name" = conformance ]; then
      TENSORCAST_SIMD=$simd TENSORCAST_CONFORMANCE_FILES="$simd_files" "$exe"
    else
      TENSORCAST_SIMD=$simd "$exe" -q
    fi
  done
done
# ---- the Python package (python/, issue 19): build with maturin, install into the peers'
# venv, pytest (doctests included) against the pinned peers. See python/ci.sh.
echo "== python package (build, install, pytest)"
if [ -n "${TENSORCAST_PYTHON:-}" ] && "$TENSORCAST_PYTHON" -c "import maturin, pytest, ray, jax, pyarrow, pandas" 2>/dev/null; then
  ./python/ci.sh "$TENSORCAST_PYTHON"
else
  peers_fail "the Python package's peers (maturin, pytest, ray, jax, pyarrow, pandas) are missing; its tests skip"
fi
echo "   ($((SECONDS - started)) s so far)"
# ---- end of the Python package's section
echo "== miri (tensorcast-buffer)"
./scripts/miri.sh
echo "== done in $((SECONDS - started)) s"

#!/usr/bin/env bash
# Runs Miri over tensorcast-buffer, the only crate with `unsafe`, where a nightly toolchain with
# the miri component is present; says so and exits 0 where it is not.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo +nightly miri --version >/dev/null 2>&1; then
  if cargo +nightly --version >/dev/null 2>&1 && [ "${TENSORCAST_INSTALL_MIRI:-1}" = 1 ]; then
    rustup component add --toolchain nightly miri rust-src >/dev/null 2>&1 || true
  fi
fi
if ! cargo +nightly miri --version >/dev/null 2>&1; then
  echo "miri: skipped (no nightly toolchain with the miri component on this machine)"
  exit 0
fi
# Strict provenance: every pointer the crate makes keeps its provenance (no integer-to-pointer
# casts). Writer::par_chunks runs its pieces one after another under Miri (see writer.rs), so
# rayon's thread pool, whose internals Miri's checks do not accept, is not entered.
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-strict-provenance}"
# A separate target dir keeps Miri's build from invalidating the normal one.
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/miri" cargo +nightly miri test -p tensorcast-buffer "$@"

#!/usr/bin/env bash
# Sourced by scripts/test.sh: makes the Python peers of the interop tests (numpy, ml_dtypes,
# safetensors, TensorFlow; pinned in scripts/python-peers.txt) importable from a virtual
# environment in the repository (.venv, git-ignored, reused between runs: the install runs
# again only when the pins change) and exports TENSORCAST_PYTHON, the interpreter the interop
# tests run. With CI=true a peer that cannot be installed or imported fails the run; elsewhere
# it is reported and the interop tests skip, saying so.
# TENSORCAST_VENV overrides the environment's location; TENSORCAST_PYTHON set beforehand is
# used as it is (nothing installed).
peers_fail() {
  echo "python peers: $*" >&2
  if [ "${CI:-}" = true ]; then
    echo "python peers: CI=true, so this fails the run" >&2
    return 1
  fi
  echo "python peers: the interop tests will skip" >&2
  return 0
}

peers_setup() {
  local req="scripts/python-peers.txt"
  local venv="${TENSORCAST_VENV:-.venv}"
  if [ -n "${TENSORCAST_PYTHON:-}" ]; then
    echo "python peers: using TENSORCAST_PYTHON=$TENSORCAST_PYTHON"
  else
    local base="${TENSORCAST_BASE_PYTHON:-python3}"
    if [ ! -x "$venv/bin/python" ]; then
      "$base" -m venv "$venv" || { peers_fail "cannot create $venv with $base"; return; }
    fi
    if ! cmp -s "$req" "$venv/.tensorcast-peers"; then
      echo "python peers: installing $(grep -v '^#' "$req" | tr '\n' ' ')into $venv"
      "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" \
        || { peers_fail "pip install -r $req failed"; return; }
      cp "$req" "$venv/.tensorcast-peers"
    fi
    TENSORCAST_PYTHON="$(cd "$venv/bin" && pwd)/python"
    export TENSORCAST_PYTHON
  fi
  local probe="import numpy, ml_dtypes, safetensors, tensorflow; print('numpy', numpy.__version__, 'ml_dtypes', ml_dtypes.__version__, 'safetensors', safetensors.__version__, 'tensorflow', tensorflow.__version__)"
  local versions
  if versions="$(TF_CPP_MIN_LOG_LEVEL=3 "$TENSORCAST_PYTHON" -c "$probe" 2>/dev/null)"; then
    echo "python peers: $versions"
  else
    peers_fail "$TENSORCAST_PYTHON cannot import numpy, ml_dtypes, safetensors and tensorflow"
  fi
}

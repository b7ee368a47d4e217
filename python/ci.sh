#!/usr/bin/env bash
# The Python package's step of scripts/test.sh: builds the package with maturin (through pip,
# as `pip install ./python` does), installs it into the peers' virtual environment, and runs its
# pytest suite (doctests included) against the pinned peers (numpy, ml_dtypes, JAX, TensorFlow,
# pyarrow, pandas, Ray). The build time is printed: CI must stay under 20 minutes.
# With CI=true any failure, and any skipped test, fails the run.
# Usage: python/ci.sh PYTHON   (the interpreter of the peers' virtual environment)
set -euo pipefail
cd "$(dirname "$0")/.."
py="${1:?usage: python/ci.sh PYTHON}"
bin="$(dirname "$py")"
started=$SECONDS
# maturin (pinned with the peers) is found on PATH; without build isolation pip uses it
# instead of downloading a build environment.
PATH="$bin:$PATH" "$py" -m pip install --quiet --disable-pip-version-check --no-build-isolation \
  --no-deps --force-reinstall ./python
echo "python package: built and installed in $((SECONDS - started)) s"
# Run from outside the source tree, so that the installed package is the one imported.
report="$(mktemp)"
trap 'rm -f "$report"' EXIT
status=0
(cd /tmp && TF_CPP_MIN_LOG_LEVEL=3 JAX_PLATFORMS=cpu "$py" -m pytest -q -rs -p no:cacheprovider \
  --rootdir "$OLDPWD/python" -c "$OLDPWD/python/pyproject.toml" "$OLDPWD/python/tests") \
  | tee "$report" || status=$?
if [ "$status" != 0 ]; then
  echo "python package: pytest failed (exit $status)" >&2
  exit "$status"
fi
if [ "${CI:-}" = true ] && grep -q "skipped" "$report"; then
  echo "python package: tests skipped in CI (a peer is missing?)" >&2
  exit 1
fi
echo "python package: done in $((SECONDS - started)) s"

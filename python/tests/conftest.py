"""Shared fixtures of the tensorcast Python tests.

Every peer (numpy, ml_dtypes, JAX, TensorFlow, pyarrow, Ray) is required: the test script
installs them pinned, and a missing one fails the run instead of skipping.
"""

import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
# Where tensorcast._testing.saved_model_dir finds the recorded SavedModels (docstring examples).
os.environ.setdefault("TENSORCAST_TEST_DATA", str(REPO / "tests" / "tf_observed"))


@pytest.fixture(scope="session")
def repo():
    return REPO


@pytest.fixture(scope="session")
def tf():
    import tensorflow as tf

    return tf

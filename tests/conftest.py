"""Fixtures shared by the test modules."""

import os
from pathlib import Path

import pytest

# jax's persistent compilation cache (on by default, see gluonjax/_compile.py) goes to a
# directory of the checkout, not the user's ~/.mxnet; test workers share it
os.environ.setdefault(
    "GLUONJAX_CACHE_DIR", str(Path(__file__).resolve().parents[1] / ".cache" / "jax")
)

from gluonjax import autograd  # noqa: E402


@pytest.fixture
def eager_tape():
    """Run the body with deferral switched off (the reference behaviour)."""

    def run(fn):
        old = autograd.set_deferral(False)
        try:
            return fn()
        finally:
            autograd.set_deferral(old)

    return run

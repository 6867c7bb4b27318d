"""Fixtures shared by the test modules."""

import pytest

from gluonjax import autograd


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

"""Fixtures shared by the test modules."""

import pytest

from gluonjax import _lazy


@pytest.fixture
def eager_tape():
    """Run the body with deferral switched off (the reference behaviour)."""

    def run(fn):
        _lazy.ENABLED[0] = False
        try:
            return fn()
        finally:
            _lazy.ENABLED[0] = True

    return run

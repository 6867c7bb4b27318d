"""``mx.np.random`` samplers keep NumPy's signatures: an unknown keyword (``shape=`` for
``size=``) is a TypeError, as in NumPy and MXNet 1.9.1, never silently ignored."""

from __future__ import annotations

import numpy as onp
import pytest

import gluonjax as mx

OPS = ["uniform", "normal", "randint", "choice", "lognormal", "logistic", "exponential"]


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("kwargs", [{"shape": ()}, {"shape": None}, {"sizes": 3}])
def test_unknown_keyword_is_a_type_error_as_in_numpy(name, kwargs):
    with pytest.raises(TypeError):
        getattr(onp.random, name)(**kwargs)  # NumPy's behaviour, the reference
    with pytest.raises(TypeError):
        getattr(mx.np.random, name)(**kwargs)


def test_known_keywords_still_work():
    assert mx.np.random.uniform(low=1.0, high=2.0, size=(2, 3)).shape == (2, 3)
    assert mx.np.random.normal(loc=0.0, scale=2.0, size=4).shape == (4,)
    assert mx.np.random.gamma(shape=2.0, scale=1.0, size=(3,)).shape == (3,)
    with pytest.raises(TypeError, match="size="):
        mx.np.random.normal(0.0, 1.0, shape=(2,))

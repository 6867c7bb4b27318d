"""``mx.random``: the global random state: ``mx.random.seed(n)`` makes every random op reproducible.

Random operators draw ``fold_in(seed_key, counter)`` inside their compiled kernel,
so taking a fresh key costs no extra dispatch. As in MXNet, ``mx.random`` also
holds the sampling functions of ``mx.nd.random`` (``uniform``, ``normal``,
``randint``, ``multinomial``, ``shuffle``...).

Each device context has its own generator: ``seed(n)`` (``ctx='all'``) resets
every one of them to ``n``; ``seed(n, ctx=c)`` resets only the generator of
``c``. A random op draws from the generator of the context it runs on (the
``ctx`` argument of a sampling function, else ``mx.current_context()``). The
same seed gives the same numbers on every context, as MXNet's per-device seeding
does. The streams are jax's (threefry), not bit-identical to MXNet's.

Examples
--------
>>> import gluonjax as mx
>>> mx.random.seed(3)
>>> a = mx.random.uniform(shape=(2,)).asnumpy()
>>> mx.random.seed(3, ctx=mx.cpu(0))
>>> bool((mx.random.uniform(shape=(2,)).asnumpy() == a).all())
True
"""

from __future__ import annotations

from ._rng import seed
from .ndarray.random import (
    exponential,
    gamma,
    generalized_negative_binomial,
    multinomial,
    negative_binomial,
    normal,
    poisson,
    randint,
    randn,
    shuffle,
    uniform,
)

__all__ = [
    "seed",
    "uniform",
    "normal",
    "randn",
    "randint",
    "poisson",
    "exponential",
    "gamma",
    "negative_binomial",
    "generalized_negative_binomial",
    "multinomial",
    "shuffle",
]

"""The random draws of the host image ops (flips, color jitter, lighting).

MXNet draws these inside its C++ operators from the generator ``mx.random.seed``
resets; here they come from one numpy generator that ``mx.random.seed`` reseeds
too (and each data-loader worker seeds from the seed its parent draws). Python's
``random`` module stays in charge of what MXNet draws with it (``RandomResizedCrop``,
``RandomApply``, the ``mx.image`` augmenters), so the same ``random.seed`` gives the
same crops as MXNet.
"""

from __future__ import annotations

import numpy as np

_GEN = [np.random.default_rng()]


def seed(value):
    """Reseed the generator of the host image ops."""
    _GEN[0] = np.random.default_rng(int(value) & 0xFFFFFFFFFFFFFFFF)


def uniform(low, high):
    """One float drawn uniformly from ``[low, high)``."""
    return float(_GEN[0].uniform(low, high))


def coin():
    """True or False with probability 1/2."""
    return bool(_GEN[0].integers(0, 2))


def normal(std, size):
    """``size`` float32 draws of N(0, std**2)."""
    return _GEN[0].normal(0.0, std, size=size).astype(np.float32)


def permutation(n):
    """A random order of ``range(n)``."""
    return [int(i) for i in _GEN[0].permutation(n)]

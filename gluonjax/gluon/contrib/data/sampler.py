"""``gluon.contrib.data.sampler``: MXNet 1.x's home of :class:`IntervalSampler`.

The class lives in :mod:`gluonjax.gluon.data.sampler`; this module re-exports it
under MXNet's contrib path.

Examples
--------
>>> from gluonjax.gluon.contrib.data.sampler import IntervalSampler
>>> list(IntervalSampler(7, 3, rollover=False))
[0, 3, 6]
"""

from ...data.sampler import IntervalSampler

__all__ = ["IntervalSampler"]

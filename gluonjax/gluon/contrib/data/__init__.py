"""``gluon.contrib.data``: MXNet 1.x's contributed data utilities.

``IntervalSampler`` (also in ``gluon.data``) and the ``text`` language-model data
sets (``WikiText2``, ``WikiText103``).

Examples
--------
>>> from gluonjax.gluon import contrib
>>> list(contrib.data.IntervalSampler(5, 2))
[0, 2, 4, 1, 3]
"""

from . import text
from .sampler import IntervalSampler

__all__ = ["IntervalSampler", "text"]

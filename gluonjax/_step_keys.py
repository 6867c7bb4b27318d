"""Per-step random keys inside a ``lax.scan`` body (loops of ``F.contrib`` control flow,
the ``_foreach``/``_while_loop`` ops and the recurrent layers' scans).

A random op traced in a scan body runs once for all steps; :class:`step_keys` makes it
draw a different key at every step.
"""

from __future__ import annotations

import itertools

import jax

from . import _rng as _random

__all__ = ["step_keys"]


class _StepKeys:
    """Installed as the traced random state inside a scan body: random ops draw
    ``fold_in(fold_in(outer key, reserved draw), step)``; the outer draw is
    reserved only if the body uses randomness."""

    def __init__(self, outer, step):
        self.outer, self.step = outer, step
        self.counter = itertools.count()
        self._key = None
        self._used = False

    @property
    def used(self):
        return self._used

    @used.setter
    def used(self, value):
        self._used = value
        if value and self.outer is not None:
            self.outer[2].used = True

    def _base(self):
        local = _random._local
        mine = local.traced
        local.traced = self.outer
        try:
            key, counter = _random.key_and_counter()
        finally:
            local.traced = mine
        return jax.random.fold_in(key, counter)

    def __getitem__(self, i):
        if i == 0:
            if self._key is None:
                if self.outer is not None and self.outer[0] is None:
                    return None  # a keyless trace: key_and_counter raises NeedsKey
                self._key = jax.random.fold_in(self._base(), self.step)
            return self._key
        if i == 1:
            return self.counter
        return self


class step_keys:
    """Inside a scan body traced for step ``step`` (a traced int): random ops draw
    per-step keys (see :class:`_StepKeys`)."""

    def __init__(self, step):
        self.step = step

    def __enter__(self):
        local = _random._local
        self.old = getattr(local, "traced", None)
        local.traced = _StepKeys(self.old, self.step)

    def __exit__(self, *exc):
        _random._local.traced = self.old

"""``F.contrib.cond`` / ``while_loop`` / ``foreach`` for NDArrays and traced Symbols.

Eagerly (``F`` is ``mx.nd``) they run as Python control flow, so autograd records
each step as usual. Inside a hybridized block (``F`` is ``mx.sym`` and symbols
carry jax tracers) they become ``jax.lax.cond`` / ``lax.scan``, so value-dependent
control flow compiles. On purely declarative symbols (no values) they raise.

This module sits below ``nd`` and ``sym``: each of them hands itself in
(:func:`install`, called by ``contrib.namespace``), and the functions here build
results with the ``F`` of their inputs' kind.
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp

from . import _rng as _random
from .base import MXNetError

__all__ = ["cond", "while_loop", "foreach", "step_keys", "install"]


def _flat(x):
    return (list(x), True) if isinstance(x, (list, tuple)) else ([x], False)


def _unflat(items, was_list):
    return list(items) if was_list else items[0]


class _Kind:
    """How to go between user values (NDArray / Symbol) and jax arrays, with their ``F``."""

    def __init__(self, symbolic, F):  # noqa: N803  (MXNet's name for nd / sym)
        self.symbolic, self.F = symbolic, F

    def raw(self, x):
        if self.symbolic:
            v = getattr(x, "_value", None)
            if v is None:
                raise MXNetError(
                    f"F.contrib control flow on the declarative symbol {x!r}: it needs values. "
                    f"Call the block on NDArrays (hybridized or not); building a symbol graph "
                    f"with control flow for JSON export is not supported."
                )
            return v
        return x._data

    def wrap(self, v):
        F = self.F  # noqa: N806
        if self.symbolic:
            return F.Symbol(F.var("_cf")._outputs, value=v)
        return F.NDArray(v)


_KINDS = {}  # symbolic (bool) -> _Kind, filled by install()


def install(F, symbolic):  # noqa: N803
    """Hand in ``F`` (``gluonjax.ndarray`` or ``gluonjax.symbol``) for its kind of values."""
    _KINDS[bool(symbolic)] = _Kind(bool(symbolic), F)


def _kind_of(*xs):
    for x in xs:
        for v in x if isinstance(x, (list, tuple)) else [x]:
            if hasattr(v, "_outputs"):
                return _KINDS[True]
    return _KINDS[False]


def cond(pred, then_func, else_func, inputs=None):
    """``then_func()`` if ``pred`` is non-zero, else ``else_func()``.

    Parameters
    ----------
    pred : NDArray or Symbol
        A one-element condition.
    then_func, else_func : callable
        No-argument functions (or functions of ``inputs``) returning an array or a
        list of arrays with the same shapes in both branches.

    Examples
    --------
    >>> import gluonjax as mx
    >>> x = mx.nd.array([2.0])
    >>> mx.nd.contrib.cond(x > 1, lambda: x * 10, lambda: x).item()
    20.0
    """
    kind = _kind_of(pred)
    args = () if inputs is None else (inputs if isinstance(inputs, (list, tuple)) else (inputs,))
    if not kind.symbolic:
        return then_func(*args) if bool(pred.asnumpy().reshape(-1)[0]) else else_func(*args)
    shape_of = {}

    def branch(fn):
        def run(_):
            out, was_list = _flat(fn(*args))
            shape_of["list"] = was_list
            return [kind.raw(o) for o in out]

        return run

    p = kind.raw(pred).reshape(-1)[0] != 0
    res = jax.lax.cond(p, branch(then_func), branch(else_func), None)
    return _unflat([kind.wrap(r) for r in res], shape_of["list"])


def foreach(body, data, init_states):
    """Scan ``body(data[i], states) -> (out, states)`` over the first axis of ``data``.

    Returns ``(outputs stacked along axis 0, final states)``, as MXNet does.
    """
    kind = _kind_of(data, init_states)
    datas, data_list = _flat(data)
    states, state_list = _flat(init_states)
    if not kind.symbolic:
        outs = []
        for i in range(datas[0].shape[0]):
            out, states_new = body(
                _unflat([d[i] for d in datas], data_list), _unflat(states, state_list)
            )
            states = _flat(states_new)[0]
            outs.append(_flat(out))
        stacked = [kind.F.stack(*[o[0][k] for o in outs], axis=0) for k in range(len(outs[0][0]))]
        return _unflat(stacked, outs[0][1]), _unflat(states, state_list)
    meta = {}

    def step(carry, xs):
        carry, t = carry
        with step_keys(t):  # random ops in the body draw fresh numbers at every step
            out, new = body(
                _unflat([kind.wrap(x) for x in xs], data_list),
                _unflat([kind.wrap(c) for c in carry], state_list),
            )
        out, meta["out_list"] = _flat(out)
        return ([kind.raw(s) for s in _flat(new)[0]], t + 1), [kind.raw(o) for o in out]

    init = ([kind.raw(s) for s in states], jnp.asarray(0, jnp.int32))
    (carry, _), ys = jax.lax.scan(step, init, [kind.raw(d) for d in datas])
    return (
        _unflat([kind.wrap(y) for y in ys], meta["out_list"]),
        _unflat([kind.wrap(c) for c in carry], state_list),
    )


def while_loop(cond, func, loop_vars, max_iterations=None):
    """Run ``func(*vars) -> (out, new_vars)`` while ``cond(*vars)``, at most ``max_iterations``.

    Returns ``(outputs stacked to max_iterations rows (zeros after the loop ends),
    final loop vars)``, as MXNet does.
    """
    if max_iterations is None:
        raise MXNetError("while_loop needs max_iterations (the outputs are stacked to it)")
    kind = _kind_of(loop_vars)
    lvars, var_list = _flat(loop_vars)
    if not kind.symbolic:
        outs, steps = [], 0
        while steps < max_iterations and bool(cond(*lvars).asnumpy().reshape(-1)[0]):
            out, new = func(*lvars)
            lvars = _flat(new)[0]
            outs.append(_flat(out)[0])
            steps += 1
        F = kind.F  # noqa: N806
        if not outs:
            return [], _unflat(lvars, var_list)
        stacked = []
        for k in range(len(outs[0])):
            rows = [o[k].expand_dims(0) for o in outs]
            pad = max_iterations - steps
            if pad:
                rows.append(F.zeros((pad,) + outs[0][k].shape, dtype=outs[0][k].dtype))
            stacked.append(F.concat(*rows, dim=0))
        return stacked, _unflat(lvars, var_list)

    def step(carry, _):
        vals, done = carry
        syms = [kind.wrap(v) for v in vals]
        go = jnp.logical_and(~done, kind.raw(cond(*syms)).reshape(-1)[0] != 0)
        out, new = func(*syms)
        new_vals = [jnp.where(go, kind.raw(n), v) for n, v in zip(_flat(new)[0], vals)]
        outs = [jnp.where(go, kind.raw(o), jnp.zeros_like(kind.raw(o))) for o in _flat(out)[0]]
        return (new_vals, ~go), outs

    (final, _), ys = jax.lax.scan(
        step, ([kind.raw(v) for v in lvars], jnp.asarray(False)), None, length=max_iterations
    )
    return [kind.wrap(y) for y in ys], _unflat([kind.wrap(v) for v in final], var_list)


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

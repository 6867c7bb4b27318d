"""Control flow on Symbols that carry values (a hybridized block's trace): ``lax``.

``foreach`` is a ``lax.scan``; ``while_loop`` a ``lax.scan`` of ``max_iterations``
steps whose steps after ``cond`` turns false keep the loop variables and write zero
outputs (so it is differentiable, unlike ``lax.while_loop``); ``cond`` a ``lax.cond``.
Inside the body, symbols hold tracers; free symbols of the enclosing trace are
closed over. Results keep MXNet's symbolic formats (``sym.contrib``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .._step_keys import step_keys
from ..base import ControlFlowError
from . import _step_result, flatten, regroup

__all__ = ["foreach", "while_loop", "cond"]


def _wrap(F, v):  # noqa: N803
    return F.Symbol(F.var("_cf")._outputs, value=v)


def _raw(x):
    return x._value


def _pred(value, what):
    if value.size != 1:
        raise ControlFlowError(f"{what} must have one element, got shape {tuple(value.shape)}")
    return value.reshape(-1)[0] != 0


def _check_states(fmt, init_fmt, what):
    if fmt != init_fmt:
        raise ControlFlowError(
            f"{what}: the body returned states in the format {fmt}, but the initial states "
            f"have the format {init_fmt} (0 is one array, a list a list of them)"
        )


def _keep(new, old, what):
    if tuple(new.shape) != tuple(old.shape):
        raise ControlFlowError(
            f"{what} changes shape from {tuple(old.shape)} to {tuple(new.shape)} in the "
            f"loop body; a loop state keeps its shape"
        )
    return new.astype(old.dtype)


def foreach(F, body, data, init_states):  # noqa: N803
    """``sym.contrib.foreach`` on traced symbols (see module docstring)."""
    flat_data, data_fmt = flatten(data, "foreach data")
    flat_states, state_fmt = flatten(init_states, "foreach init_states")
    meta = {}

    def step(carry, xs):
        carry, t = carry
        with step_keys(t):  # random ops in the body draw fresh numbers at every step
            out, new = body(
                regroup([_wrap(F, x) for x in xs], data_fmt),
                regroup([_wrap(F, c) for c in carry], state_fmt),
            )
        flat_out, meta["out"] = flatten(out, "foreach output")
        flat_new, new_fmt = flatten(new, "foreach states")
        _check_states(new_fmt, state_fmt, "foreach")
        new_vals = [_keep(_raw(n), c, f"foreach state {k}") for k, (n, c) in
                    enumerate(zip(flat_new, carry))]  # fmt: skip
        return (new_vals, t + 1), [_raw(o) for o in flat_out]

    init = ([_raw(s) for s in flat_states], jnp.asarray(0, jnp.int32))
    (carry, _), ys = jax.lax.scan(step, init, [_raw(d) for d in flat_data])
    return (
        regroup([_wrap(F, y) for y in ys], meta["out"]),
        regroup([_wrap(F, c) for c in carry], state_fmt),
    )


def while_loop(F, cond, func, loop_vars, max_iterations):  # noqa: N803
    """``sym.contrib.while_loop`` on traced symbols (see module docstring)."""
    flat_vars, var_fmt = flatten(loop_vars, "while_loop loop_vars")
    meta = {}

    def args_of(vals):
        grouped = regroup([_wrap(F, v) for v in vals], var_fmt)
        return [grouped] if var_fmt == 0 else grouped

    def step(carry, _):
        vals, done, t = carry
        with step_keys(t):
            c = cond(*args_of(vals))
            if not hasattr(c, "_value"):
                raise ControlFlowError(f"while_loop: cond must return a Symbol, got {c!r}")
            go = jnp.logical_and(~done, _pred(_raw(c), "while_loop: the return value of cond"))
            out, new = _step_result(func, args_of(vals), "while_loop")
        flat_out, meta["out"] = flatten(out, "while_loop output")
        flat_new, _ = flatten(new, "while_loop loop_vars")
        if len(flat_new) != len(vals):
            raise ControlFlowError(
                f"while_loop: func returned {len(flat_new)} loop variables for {len(vals)}"
            )
        new_vals = [
            jnp.where(go, _keep(_raw(n), v, f"while_loop loop variable {k}"), v)
            for k, (n, v) in enumerate(zip(flat_new, vals))
        ]
        outs = [jnp.where(go, _raw(o), jnp.zeros_like(_raw(o))) for o in flat_out]
        return (new_vals, ~go, t + 1), outs

    init = ([_raw(v) for v in flat_vars], jnp.asarray(False), jnp.asarray(0, jnp.int32))
    (final, _, _), ys = jax.lax.scan(step, init, None, length=max_iterations)
    return (
        regroup([_wrap(F, y) for y in ys], meta["out"]),
        regroup([_wrap(F, v) for v in final], var_fmt),
    )


def cond(F, pred, then_func, else_func):  # noqa: N803
    """``sym.contrib.cond`` on traced symbols (see module docstring)."""
    meta = {}

    def branch(fn, key):
        def run(_):
            out, meta[key] = flatten(fn(), f"cond {key} output")
            return [_raw(o) for o in out]

        return run

    p = _pred(_raw(pred), "cond: pred")
    try:
        res = jax.lax.cond(p, branch(then_func, "then"), branch(else_func, "else"), None)
    except TypeError as err:
        raise ControlFlowError(
            f"cond: then_func and else_func must return the same number of arrays with the "
            f"same shapes and dtypes ({str(err).splitlines()[0]})"
        ) from None
    return regroup([_wrap(F, r) for r in res], meta["then"])

"""contrib.hawkesll: the log likelihood of marked Hawkes processes with exponential
decay, one ``lax.scan`` over the (left-aligned, ragged) event sequences."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..registry import register

_INPUTS = ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")


def _check(*arrays):
    shapes = {n: tuple(a.shape) for n, a in zip(_INPUTS, arrays)}
    lda, lags = arrays[0], arrays[4]
    if lags.ndim != 2 or lda.ndim != 2:
        raise ValueError(f"hawkesll needs lda (N, K) and lags (N, T), got {shapes}")
    (n, t), k = lags.shape, lda.shape[1]
    want = {"lda": (n, k), "alpha": (k,), "beta": (k,), "state": (n, k), "lags": (n, t),
            "marks": (n, t), "valid_length": (n,), "max_time": (n,)}  # fmt: skip
    bad = [f"{name} {shapes[name]} (expected {w})" for name, w in want.items() if shapes[name] != w]
    if bad:
        raise ValueError("hawkesll: inconsistent input shapes: " + ", ".join(bad))


@register("_contrib_hawkesll", inputs=_INPUTS, num_outputs=2, output_names=("output", "out_state"))
def hawkesll(lda, alpha, beta, state, lags, marks, valid_length, max_time):
    """Log likelihood of ``N`` sequences of a ``K``-variate Hawkes process.

    Mark ``k``'s conditional intensity is ``lda[n, k] + alpha[k] * beta[k] * s_k(t)``
    with ``s_k(t) = sum over its earlier events of exp(-beta[k] (t - t_i))`` (plus the
    carried-in ``state[n, k]`` decayed from time 0). ``lags`` are inter-arrival times and
    ``marks`` (int32) the process of each event; only the first ``valid_length[n]``
    events count; the sequence is observed on ``(0, max_time[n]]``.

    Returns ``(log likelihood (N,), state at max_time (N, K))``. As in MXNet, gradients
    flow to ``lda``, ``alpha`` and ``beta`` from the log likelihood only: the returned
    state and the other inputs (the observations and the carried state) take none.

    Examples
    --------
    >>> import gluonjax as mx
    >>> ll, st = mx.nd.contrib.hawkesll(
    ...     mx.nd.array([[1.5]]), mx.nd.array([0.2]), mx.nd.array([1.0]), mx.nd.zeros((1, 1)),
    ...     mx.nd.array([[6, 7, 8, 3, 2, 1, 7]]), mx.nd.zeros((1, 7)).astype("int32"),
    ...     mx.nd.array([7]), mx.nd.array([100.]))
    >>> f"{float(ll.asscalar()):.2f}"
    '-148.48'
    """
    _check(lda, alpha, beta, state, lags, marks, valid_length, max_time)
    stop = jax.lax.stop_gradient
    dt = lda.dtype
    state, lags, valid_length, max_time = (stop(a).astype(dt) for a in
                                           (state, lags, valid_length, max_time))  # fmt: skip
    n, k = lda.shape
    marks = stop(marks).astype(jnp.int32)
    rows = jnp.arange(n)

    def step(carry, xs):
        t, last, s, ll = carry
        lag, mark, j = xs
        valid = j < valid_length
        t = jnp.where(valid, t + lag, t)
        d = t - last[rows, mark]
        b, a = beta[mark], alpha[mark]
        ed = jnp.exp(-b * d)
        s_m = s[rows, mark]
        mu = lda[rows, mark]
        intensity = mu + a * b * s_m * ed
        comp = mu * d + a * s_m * (1 - ed)
        safe = jnp.where(valid, intensity, jnp.ones((), dt))
        ll = ll + jnp.where(valid, jnp.log(safe) - comp, jnp.zeros((), dt))
        hit = (jax.nn.one_hot(mark, k, dtype=dt) > 0) & valid[:, None]
        s = jnp.where(hit, (1 + s_m * ed)[:, None], s)
        last = jnp.where(hit, t[:, None], last)
        return (t, last, s, ll), None

    steps = jnp.arange(lags.shape[1], dtype=dt)
    init = (jnp.zeros((n,), dt), jnp.zeros((n, k), dt), state, jnp.zeros((n,), dt))
    (_, last, s, ll), _ = jax.lax.scan(step, init, (lags.T, marks.T, steps))
    d = max_time[:, None] - last
    ed = jnp.exp(-beta[None, :] * d)
    rest = lda * d + alpha[None, :] * s * (1 - ed)
    return ll - rest.sum(axis=1), stop(ed * s)

"""The recurrence of the fused ``RNN`` op: one ``lax.scan`` per layer and direction.

MXNet packs every weight of a fused RNN into one flat ``parameters`` vector
(:func:`unpack` reads it back); this module runs the layers on ``(T, N, C)``
data. Each direction first projects the whole sequence at once
(``x @ W_i2h.T + biases``, one large matrix product hoisted out of the loop),
then scans the time axis with only the recurrent product inside the loop.

Gate orders and formulas are MXNet's (and cuDNN's):

* ``rnn_relu`` / ``rnn_tanh``: ``h' = act(W_i x + b_i + W_h h + b_h)``;
* ``lstm``: gates ``i, f, g, o``; ``c' = f c + i g``, ``h' = o tanh(c')``, with an
  optional projection ``r' = W_r h'`` (``projection_size``) that becomes the
  recurrent state and the output, and optional clipping of ``c'``;
* ``gru``: gates ``r, z, n``; ``n = tanh(W_in x + b_in + r (W_hn h + b_hn))``,
  ``h' = (1 - z) n + z h``.

With sequence lengths a step at or past a sequence's length leaves the state
unchanged and outputs zeros; the reverse direction starts at each sequence's
last valid step (as cuDNN's padded layout does).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
MODES = tuple(GATES)


def param_size(mode, num_layers, input_size, state_size, bidirectional, projection_size=None):
    """Length of MXNet's packed parameter vector (``GetRnnParamSize``)."""
    g, h, d = GATES[mode], state_size, 2 if bidirectional else 1
    p = projection_size or 0
    rec = p or h
    total = 0
    for layer in range(num_layers):
        ni = input_size if layer == 0 else rec * d
        per = g * h * ni + g * h * rec + 2 * g * h + (p * h if p else 0)
        total += per * d
    return total


def layer_shapes(mode, num_layers, input_size, state_size, bidirectional, projection_size=None):
    """``[(name, shape)]`` in packed order: every weight, then every bias.

    Names are the fused Gluon layer's (``l0_i2h_weight``, ``r1_h2h_bias``...).
    """
    g, h = GATES[mode], state_size
    p = projection_size or 0
    rec = p or h
    dirs = ("l", "r") if bidirectional else ("l",)
    weights, biases = [], []
    for layer in range(num_layers):
        ni = input_size if layer == 0 else rec * len(dirs)
        for d in dirs:
            weights.append((f"{d}{layer}_i2h_weight", (g * h, ni)))
            weights.append((f"{d}{layer}_h2h_weight", (g * h, rec)))
            if p:
                weights.append((f"{d}{layer}_h2r_weight", (p, h)))
            biases.append((f"{d}{layer}_i2h_bias", (g * h,)))
            biases.append((f"{d}{layer}_h2h_bias", (g * h,)))
    return weights + biases


def unpack(parameters, mode, num_layers, input_size, state_size, bidirectional, projection_size):
    """``{name: array}`` views of the packed vector (static slices)."""
    shapes = layer_shapes(mode, num_layers, input_size, state_size, bidirectional, projection_size)
    need = sum(_prod(s) for _, s in shapes)
    if parameters.ndim != 1 or parameters.shape[0] != need:
        raise ValueError(
            f"parameters has shape {parameters.shape}; mode={mode}, num_layers={num_layers}, "
            f"input size {input_size}, state_size={state_size}, bidirectional={bidirectional}, "
            f"projection_size={projection_size} need a vector of {need}"
        )
    out, off = {}, 0
    for name, shape in shapes:
        n = _prod(shape)
        out[name] = lax.slice(parameters, (off,), (off + n,)).reshape(shape)
        off += n
    return out


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _dot_t(x, w):
    """``x @ w.T`` on the last axis of ``x``."""
    return lax.dot_general(x, w, (((x.ndim - 1,), (1,)), ((), ())))


def _cell(mode, w, clip):
    """``step(carry, xw_t) -> (carry, output)`` of one direction (``xw_t``: projected input)."""
    wh, wr = w["h2h_weight"], w.get("h2r_weight")
    if mode in ("rnn_relu", "rnn_tanh"):
        act = jax.nn.relu if mode == "rnn_relu" else jnp.tanh

        def step(carry, xw):
            (h,) = carry
            h = act(xw + _dot_t(h, wh))
            return (h,), h

        return step
    if mode == "lstm":

        def step(carry, xw):
            h, c = carry
            gates = xw + _dot_t(h, wh)
            i, f, g, o = jnp.split(gates, 4, axis=-1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            if clip is not None:
                c = _clip(c, *clip)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            if wr is not None:
                h = _dot_t(h, wr)
            return (h, c), h

        return step
    bhn = w["h2h_bias_n"]

    def step(carry, xw):
        (h,) = carry
        hh = _dot_t(h, wh)
        xr, xz, xn = jnp.split(xw, 3, axis=-1)
        hr, hz, hn = jnp.split(hh, 3, axis=-1)
        r = jax.nn.sigmoid(xr + hr)
        z = jax.nn.sigmoid(xz + hz)
        n = jnp.tanh(xn + r * (hn + bhn))
        h = (1 - z) * n + z * h
        return (h,), h

    return step


def _clip(c, lo, hi, nan):
    out = jnp.clip(c, lo, hi)
    if nan:  # cuDNN's CUDNN_NOT_PROPAGATE_NAN: a NaN state becomes the lower bound
        out = jnp.where(jnp.isnan(c), jnp.asarray(lo, c.dtype), out)
    return out


def _input_projection(mode, x, w):
    """``x @ W_i2h.T`` plus every bias that does not multiply a gate, for all steps."""
    xw = _dot_t(x, w["i2h_weight"]) + w["i2h_bias"]
    if mode == "gru":  # the new gate's recurrent bias sits inside r * (...)
        n = w["h2h_bias"].shape[0] // 3
        bh = w["h2h_bias"]
        xw = xw + jnp.concatenate([bh[: 2 * n], jnp.zeros((n,), bh.dtype)])
        w = dict(w, h2h_bias_n=bh[2 * n :])
    else:
        xw = xw + w["h2h_bias"]
    return xw, w


def run_direction(mode, x, w, carry0, reverse, valid=None, clip=None, unroll=1):
    """Scan one direction of one layer.

    Parameters
    ----------
    x : (T, N, C) array
    w : dict with ``i2h_weight``, ``h2h_weight``, ``i2h_bias``, ``h2h_bias`` (and
        ``h2r_weight`` with a projection)
    carry0 : tuple of (N, ·) initial states (``(h,)`` or ``(h, c)``)
    reverse : bool
        Scan from the last step to the first.
    valid : (T, N, 1) bool array or None
        Steps inside each sequence's length.

    Returns
    -------
    (outputs (T, N, H or P), final carry)
    """
    xw, w = _input_projection(mode, x, w)
    step = _cell(mode, w, clip)
    if valid is None:
        carry, ys = lax.scan(step, carry0, xw, reverse=reverse, unroll=unroll)
        return ys, carry

    def masked(carry, inp):
        xw_t, ok = inp
        new, y = step(carry, xw_t)
        new = tuple(jnp.where(ok, n, o) for n, o in zip(new, carry))
        return new, jnp.where(ok, y, jnp.zeros((), y.dtype))

    carry, ys = lax.scan(masked, carry0, (xw, valid), reverse=reverse, unroll=unroll)
    return ys, carry


def run_layers(
    data,
    weights,
    states,
    *,
    mode,
    num_layers,
    bidirectional,
    lengths=None,
    dropout=0.0,
    key=None,
    clip=None,
    unroll=1,
):
    """Every layer of a fused RNN on ``(T, N, C)`` data.

    ``weights`` maps the layer names of :func:`layer_shapes` to arrays;
    ``states`` is ``(h0,)`` or ``(h0, c0)`` shaped ``(L*D, N, ·)``. Dropout (rate
    ``dropout``, keyed by ``key``) applies to the outputs of every layer but the
    last. Returns ``(output, final states tuple)``.
    """
    dirs = ("l", "r") if bidirectional else ("l",)
    valid = None
    if lengths is not None:
        t = jnp.arange(data.shape[0], dtype=jnp.int32)[:, None, None]
        valid = t < lengths.astype(jnp.int32)[None, :, None]
    x = data
    finals = [[] for _ in states]
    for layer in range(num_layers):
        outs = []
        for k, d in enumerate(dirs):
            idx = layer * len(dirs) + k
            w = {n.split("_", 1)[1]: v for n, v in weights.items() if n.startswith(f"{d}{layer}_")}
            carry0 = tuple(s[idx] for s in states)
            ys, carry = run_direction(mode, x, w, carry0, d == "r", valid, clip, unroll)
            outs.append(ys)
            for f, c in zip(finals, carry):
                f.append(c)
        x = outs[0] if len(outs) == 1 else jnp.concatenate(outs, axis=-1)
        if dropout > 0 and layer < num_layers - 1 and key is not None:
            kl = jax.random.fold_in(key, layer)
            keep = jax.random.bernoulli(kl, jnp.float32(1.0 - dropout), x.shape)
            x = jnp.where(keep, x / (1.0 - dropout), jnp.zeros((), x.dtype)).astype(x.dtype)
    return x, tuple(jnp.stack(f, axis=0) for f in finals)

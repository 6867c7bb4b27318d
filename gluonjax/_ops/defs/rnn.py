"""The fused recurrent op ``RNN`` (modes ``rnn_relu``, ``rnn_tanh``, ``lstm``, ``gru``)
and ``_rnn_param_concat``, which packs a fused layer's weights into its vector.

``RNN`` takes MXNet's inputs ``data`` (T, N, C), ``parameters`` (the packed
vector, see :func:`.rnn_scan.layer_shapes` for its order), ``state`` (L*D, N, H
or P), ``state_cell`` (LSTM only) and ``sequence_length`` (N,) when
``use_sequence_length``. It returns ``output`` and, with ``state_outputs``, the
final ``state_output`` (and ``statecell_output``). The recurrence is in
:mod:`.rnn_scan`. Beyond MXNet's CPU kernels (which refuse them), projection,
state clipping and ``use_sequence_length`` work on every device, with cuDNN's
semantics.
"""

from __future__ import annotations

import jax.numpy as jnp

from ..registry import Attr, register
from .rnn_scan import MODES, param_size, run_layers, unpack
from .shape import concat


def _inputs(attrs):
    names = ["data", "parameters", "state"]
    if attrs["mode"] == "lstm":
        names.append("state_cell")
    if attrs["use_sequence_length"]:
        names.append("sequence_length")
    return tuple(names)


def _n_out(attrs):
    if not attrs["state_outputs"]:
        return 1
    return 3 if attrs["mode"] == "lstm" else 2


def _infer(attrs, shapes):
    t, n, c = shapes["data"]
    d = 2 if attrs["bidirectional"] else 1
    h, p, layers = attrs["state_size"], attrs["projection_size"], attrs["num_layers"]
    out = {
        "parameters": (param_size(attrs["mode"], layers, c, h, attrs["bidirectional"], p),),
        "state": (layers * d, n, p or h),
    }
    if attrs["mode"] == "lstm":
        out["state_cell"] = (layers * d, n, h)
    if attrs["use_sequence_length"]:
        out["sequence_length"] = (n,)
    return out


_ATTRS = {
    "state_size": Attr("int"),
    "num_layers": Attr("int"),
    "bidirectional": Attr("bool", False),
    "mode": Attr("str", choices=MODES),
    "p": Attr("float", 0.0),
    "state_outputs": Attr("bool", False),
    "projection_size": Attr("int?", None),
    "lstm_state_clip_min": Attr("float?", None),
    "lstm_state_clip_max": Attr("float?", None),
    "lstm_state_clip_nan": Attr("bool", False),
    "use_sequence_length": Attr("bool", False),
}


def _check(data, state, cell, attrs):
    mode, h, p = attrs["mode"], attrs["state_size"], attrs["projection_size"]
    if data.ndim != 3:
        raise ValueError(f"data must be (sequence length, batch, input size), got {data.shape}")
    if p is not None and mode != "lstm":
        raise ValueError(f"projection_size is only supported for mode='lstm', not {mode!r}")
    if p is not None and not 0 < p <= h:
        raise ValueError(f"projection_size={p} must be in 1..state_size={h}")
    lo, hi = attrs["lstm_state_clip_min"], attrs["lstm_state_clip_max"]
    if (lo is None) != (hi is None):
        raise ValueError("lstm_state_clip_min and lstm_state_clip_max must be given together")
    if lo is not None and mode != "lstm":
        raise ValueError(f"state clipping is only supported for mode='lstm', not {mode!r}")
    if lo is not None and hi < lo:
        raise ValueError(f"lstm_state_clip_max={hi} is below lstm_state_clip_min={lo}")
    layers = attrs["num_layers"] * (2 if attrs["bidirectional"] else 1)
    want = (layers, data.shape[1], p or h)
    if tuple(state.shape) != want:
        raise ValueError(f"state has shape {tuple(state.shape)}, expected {want}")
    if cell is not None and tuple(cell.shape) != (layers, data.shape[1], h):
        raise ValueError(
            f"state_cell has shape {tuple(cell.shape)}, expected {(layers, data.shape[1], h)}"
        )


@register(
    "RNN",
    inputs=_inputs,
    attrs=_ATTRS,
    num_outputs=_n_out,
    output_names=("output", "state_output", "statecell_output"),
    mode=True,
    random=True,
    infer_args=_infer,
)
def rnn(_key, data, parameters, state, *rest, _train=False, **attrs):
    """Fused multi-layer RNN / LSTM / GRU over ``data`` shaped (T, N, C).

    Inputs: ``data``, ``parameters`` (MXNet's packed vector: every layer's and
    direction's ``i2h``, ``h2h`` (and ``h2r``) weights, then every ``i2h``/``h2h``
    bias), ``state`` (L*D, N, H), ``state_cell`` (LSTM), ``sequence_length`` (N,).
    Outputs: ``output`` (T, N, D*H) and, with ``state_outputs``, the final states.
    ``p`` is the dropout rate between layers (training only).

    Examples
    --------
    >>> import gluonjax as mx
    >>> x = mx.nd.ones((5, 2, 3)); h = mx.nd.zeros((1, 2, 4))
    >>> w = mx.nd.ones((4 * 3 + 4 * 4 + 2 * 4,)) * 0.1
    >>> out, hn = mx.nd.RNN(x, w, h, state_size=4, num_layers=1, mode='rnn_tanh',
    ...                     state_outputs=True)
    >>> out.shape, hn.shape
    ((5, 2, 4), (1, 2, 4))
    """
    mode = attrs["mode"]
    rest = list(rest)
    cell = rest.pop(0) if mode == "lstm" else None
    lengths = rest.pop(0) if attrs["use_sequence_length"] else None
    if attrs["use_sequence_length"] and lengths is None:
        raise ValueError("use_sequence_length=True needs the sequence_length input")
    _check(data, state, cell, attrs)
    weights = unpack(
        parameters.astype(data.dtype),
        mode,
        attrs["num_layers"],
        data.shape[2],
        attrs["state_size"],
        attrs["bidirectional"],
        attrs["projection_size"],
    )
    lo = attrs["lstm_state_clip_min"]
    clip = None if lo is None else (lo, attrs["lstm_state_clip_max"], attrs["lstm_state_clip_nan"])
    states = (state,) if cell is None else (state, cell)
    if lengths is not None:
        lengths = jnp.clip(lengths.astype(jnp.int32), 0, data.shape[0])
    out, finals = run_layers(
        data,
        weights,
        states,
        mode=mode,
        num_layers=attrs["num_layers"],
        bidirectional=attrs["bidirectional"],
        lengths=lengths,
        dropout=attrs["p"] if _train else 0.0,
        key=_key,
        clip=clip,
    )
    if not attrs["state_outputs"]:
        return out
    return (out, *finals)


@register(
    "_rnn_param_concat",
    variadic=True,
    attrs={"num_args": Attr("int"), "dim": Attr("int", 1)},
)
def rnn_param_concat(*args, num_args, dim):
    """Join a fused RNN layer's flattened weights into its packed ``parameters`` vector
    (``Concat`` whose inputs MXNet's shape inference may fill from the output)."""
    return concat(*args, num_args=num_args, dim=dim)

"""Connectionist Temporal Classification loss: MXNet's ``CTCLoss`` (``ctc_loss``).

The forward recursion is optax's ``ctc_loss`` (the ecosystem's implementation),
mapped onto MXNet's conventions here: ``data`` is ``(seq, batch, alphabet)`` of
unnormalized activations (softmax inside), ``label`` is ``(batch, max_label)``
padded with ``0`` (``blank_label='first'``) or ``-1`` (``'last'``) unless
``label_lengths`` are given, the blank is class ``0`` or ``alphabet - 1``.

As in MXNet, the gradient with respect to ``data`` is computed together with the
loss (it is the op's hidden second output) and the backward pass scales it by the
head gradient. A sequence too short for its label (``label length + repeats >
data length``) has loss 0 and gradient 0, as in MXNet; steps past a sequence's
``data_lengths`` get gradient 0.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ...base import IndexOutOfRangeError, InvalidArgumentError
from ..bounds import is_concrete
from ..registry import Attr, register


def _inputs(a):
    names = ["data", "label"]
    if a["use_data_lengths"]:
        names.append("data_lengths")
    if a["use_label_lengths"]:
        names.append("label_lengths")
    return tuple(names)


def _lengths(label, label_lengths, pad):
    """Per-example label lengths: given, or the position of the first ``pad``."""
    if label_lengths is not None:
        return label_lengths.astype(jnp.int32)
    hit = jnp.concatenate([label == pad, jnp.ones((label.shape[0], 1), bool)], axis=1)
    return jnp.argmax(hit, axis=1).astype(jnp.int32)


def _check(a, arrays):
    """Eager-mode value checks: lengths within the arrays, labels within the alphabet."""
    data, label = arrays[0], arrays[1]
    if not all(is_concrete(x) for x in arrays) or np.size(label) == 0:
        return
    steps, _, alphabet = data.shape
    blank = 0 if a["blank_label"] == "first" else alphabet - 1
    lab = np.trunc(np.asarray(label)).astype(np.int64)
    k = 2
    if a["use_data_lengths"]:
        dl = np.trunc(np.asarray(arrays[k])).astype(np.int64)
        k += 1
        if dl.min() < 1 or dl.max() > steps:
            raise InvalidArgumentError(
                f"CTCLoss: data_lengths {dl.tolist()} must be in 1..{steps} "
                f"(the sequence axis of data {tuple(data.shape)})"
            )
    if a["use_label_lengths"]:
        ll = np.trunc(np.asarray(arrays[k])).astype(np.int64)
        if ll.min() < 0 or ll.max() > lab.shape[1]:
            raise InvalidArgumentError(
                f"CTCLoss: label_lengths {ll.tolist()} must be in 0..{lab.shape[1]} "
                f"(the width of label {lab.shape})"
            )
    else:
        pad = 0 if a["blank_label"] == "first" else -1
        hit = np.concatenate([lab == pad, np.ones((lab.shape[0], 1), bool)], axis=1)
        ll = np.argmax(hit, axis=1)
    used = np.arange(lab.shape[1])[None, :] < ll[:, None]
    bad = used & ((lab < 0) | (lab >= alphabet) | (lab == blank))
    if bad.any():
        b, n = (int(i) for i in np.argwhere(bad)[0])
        valid = f"1..{alphabet - 1}" if blank == 0 else f"0..{alphabet - 2}"
        raise IndexOutOfRangeError(
            f"CTCLoss: label[{b}, {n}] = {lab[b, n]} is not a class of the alphabet of "
            f"size {alphabet} without the blank {blank} (blank_label="
            f"'{a['blank_label']}'); valid labels are {valid}"
        )


def _nll_and_grad(logits, logit_pad, labels, label_pad, blank):
    """Per-example loss (B,) and its gradient with respect to ``logits`` (B, T, K)."""

    def total(x):
        loss = optax.ctc_loss(x, logit_pad, labels, label_pad, blank_id=blank)
        return jnp.sum(loss), loss

    grad, loss = jax.grad(total, has_aux=True)(logits)
    return loss, grad


@partial(jax.custom_vjp, nondiff_argnums=(0,))
def _ctc(blank, data, live, labels, label_pad, keep):
    """(loss (B,), grad (T, B, K)) in ``data``'s dtype, for the blank class ``blank``."""
    return _ctc_fwd(blank, data, live, labels, label_pad, keep)[0]


def _ctc_fwd(blank, data, live, labels, label_pad, keep):
    work = jnp.float32 if data.dtype == jnp.float16 else data.dtype
    x = jnp.where(live[:, :, None], data.astype(work), jnp.zeros((), work))  # NaN-safe padding
    logits = jnp.transpose(x, (1, 0, 2))
    logit_pad = jnp.transpose(~live).astype(work)
    loss, grad = _nll_and_grad(logits, logit_pad, labels, label_pad.astype(work), blank)
    grad = jnp.transpose(grad, (1, 0, 2))
    grad = jnp.where(live[:, :, None] & keep[None, :, None], grad, jnp.zeros((), work))
    loss = jnp.where(keep, loss, jnp.zeros((), work))
    out = (loss.astype(data.dtype), grad.astype(data.dtype))
    return out, out[1]


def _ctc_bwd(blank, grad, cts):
    return (cts[0][None, :, None] * grad, None, None, None, None)


_ctc.defvjp(_ctc_fwd, _ctc_bwd)


@register(
    "CTCLoss",
    inputs=_inputs,
    attrs={
        "use_data_lengths": Attr("bool", False),
        "use_label_lengths": Attr("bool", False),
        "blank_label": Attr("str", "first", choices=("first", "last")),
    },
    aliases=("ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"),
    num_outputs=2,
    visible_outputs=1,
    output_names=("output0", "output1"),
    check=_check,
)
def ctc_loss(data, label, *lengths, use_data_lengths, use_label_lengths, blank_label):
    """Connectionist Temporal Classification loss of every sequence: output ``(batch,)``.

    Inputs: ``data (seq, batch, alphabet)`` unnormalized activations, ``label (batch,
    max_label)`` class ids, ``data_lengths (batch,)`` with ``use_data_lengths``,
    ``label_lengths (batch,)`` with ``use_label_lengths``. ``blank_label='first'``
    reserves class 0 for the blank and pads labels with 0; ``'last'`` reserves class
    ``alphabet - 1`` and pads with -1. The hidden second output is the gradient of the
    loss with respect to ``data``.

    Examples
    --------
    >>> import gluonjax as mx
    >>> x = mx.nd.zeros((2, 1, 3))
    >>> loss = mx.nd.ctc_loss(x, mx.nd.array([[1, 0]]))  # 3 of 9 paths spell [1]
    >>> f"{float(loss.asnumpy()[0]):.4f}"  # log(3)
    '1.0986'
    """
    if data.ndim != 3 or label.ndim != 2:
        raise ValueError(
            f"data must be 3-D (seq, batch, alphabet) and label 2-D (batch, max_label), "
            f"got {tuple(data.shape)} and {tuple(label.shape)}"
        )
    steps, batch, _ = data.shape
    if label.shape[0] != batch:
        raise ValueError(f"label's batch {label.shape[0]} differs from data's {batch}")
    if label.shape[1] > steps:
        raise ValueError(
            f"labels of width {label.shape[1]} cannot be longer than the {steps} steps of data"
        )
    lengths = list(lengths)
    names = _inputs({"use_data_lengths": use_data_lengths, "use_label_lengths": use_label_lengths})
    for name, x in zip(names[2:], lengths, strict=True):
        if x.shape != (batch,):
            raise ValueError(f"{name} must have shape ({batch},), got {tuple(x.shape)}")
    data_len = lengths.pop(0).astype(jnp.int32) if use_data_lengths else None
    label_len = lengths.pop(0) if use_label_lengths else None
    lab = jax.lax.stop_gradient(label)
    lab = (jnp.trunc(lab) if jnp.issubdtype(lab.dtype, jnp.floating) else lab).astype(jnp.int32)
    n_lab = _lengths(lab, label_len, 0 if blank_label == "first" else -1)
    used = jnp.arange(lab.shape[1])[None, :] < n_lab[:, None]
    lab = jnp.where(used, lab, -1)  # padding never repeats a label
    t = jnp.arange(steps)[:, None]
    n_steps = jnp.full((batch,), steps, jnp.int32) if data_len is None else data_len
    live = t < n_steps[None, :]
    repeats = jnp.sum(used[:, 1:] & (lab[:, 1:] == lab[:, :-1]), axis=1)
    keep = n_lab + repeats <= n_steps
    blank = 0 if blank_label == "first" else data.shape[2] - 1
    return _ctc(blank, data, live, lab, (~used).astype(jnp.float32), keep)

"""The Connectionist Temporal Classification recursion (``gluon.loss.CTCLoss``), ``F`` ops only.

The CTC forward recursion (log space) is unrolled over the time axis in Python:
the time length must be known when the loss is traced, which holds eagerly and
hybridized (not for a purely declarative ``mx.sym`` graph).
"""

from __future__ import annotations

__all__ = ["ctc_nll"]

_NEG = -1e30  # log(0) that keeps gradients finite


def _lse3(F, a, b, c):
    m = F.broadcast_maximum(F.broadcast_maximum(a, b), c)
    return m + F.log(F.exp(a - m) + F.exp(b - m) + F.exp(c - m))


def _shift(F, x, k, fill):
    """``x`` shifted right by ``k`` along axis 1, the first ``k`` columns ``fill``."""
    head = F.zeros_like(F.slice_axis(x, axis=1, begin=0, end=k)) + fill
    return F.concat(head, F.slice_axis(x, axis=1, begin=0, end=-k), dim=1)


def ctc_nll(F, pred, label, pred_lengths, label_lengths):
    """Negative log likelihood of ``label`` under per-step class activations.

    Parameters
    ----------
    pred : (T, N, C) unnormalized activations; class ``C - 1`` is the blank.
    label : (N, L) class ids; without ``label_lengths`` a label ends at its first -1.
    pred_lengths, label_lengths : (N,) or None
    Outputs: (N,)
    """
    num_steps, num_classes = pred.shape[0], pred.shape[2]
    max_label = label.shape[1]
    blank = num_classes - 1
    logp = F.log_softmax(pred, axis=2)
    if label_lengths is None:  # first -1 (or L): argmax finds the first maximum
        ends = F.concat(
            label == -1, F.ones_like(F.slice_axis(label, axis=1, begin=0, end=1)), dim=1
        )
        label_lengths = F.argmax(ends, axis=1)
    # extended label: blank, l1, blank, l2, ..., lL, blank  -> (N, S)
    blanks = F.ones_like(label) * blank
    ext = F.reshape(F.stack(blanks, label, axis=2), shape=(0, -1))
    ext = F.concat(ext, F.slice_axis(blanks, axis=1, begin=0, end=1), dim=1)
    size = 2 * max_label + 1
    # skip transition s-2 -> s allowed for a non-blank differing from ext[s-2]
    skip = (ext != blank) * (ext != _shift(F, ext, 2, -2.0))
    skip_pen = (1 - skip) * _NEG
    onehot = F.one_hot(ext, depth=num_classes)  # (N, S, C); -1 padding -> zeros
    emit = F.batch_dot(F.swapaxes(logp, dim1=0, dim2=1), onehot, transpose_b=True)  # (N, T, S)
    first = F.concat(
        F.ones_like(F.slice_axis(ext, axis=1, begin=0, end=2)),
        F.zeros_like(F.slice_axis(ext, axis=1, begin=2, end=size)),
        dim=1,
    )
    if num_steps == 1:
        steps = [F.reshape(emit, shape=(0, -1))]
    else:  # one op for all steps (eager kernels are cached per attribute set)
        steps = F.split(emit, num_outputs=num_steps, axis=1, squeeze_axis=True)
    alpha = steps[0] + (1 - first) * _NEG
    if pred_lengths is not None:
        pred_lengths = F.reshape(pred_lengths, shape=(-1, 1))
    for t in range(1, num_steps):
        new = _lse3(F, alpha, _shift(F, alpha, 1, _NEG), _shift(F, alpha, 2, _NEG) + skip_pen)
        new = new + steps[t]
        if pred_lengths is None:
            alpha = new
        else:
            live = pred_lengths > t
            alpha = F.broadcast_mul(live, new) + F.broadcast_mul(1 - live, alpha)
    # read alpha at s = 2 len and 2 len - 1 (the latter absent for an empty label)
    positions = F.reshape(F.arange_like(ext, axis=1), shape=(1, -1))
    last = F.reshape(label_lengths, shape=(-1, 1)) * 2
    at_last = F.broadcast_equal(positions, last)
    at_prev = F.broadcast_equal(positions, last - 1)
    a = F.sum(alpha * at_last, axis=1)
    b = F.sum(alpha * at_prev, axis=1) + (1 - F.sum(at_prev, axis=1)) * _NEG
    m = F.broadcast_maximum(a, b)
    return -(m + F.log(F.exp(a - m) + F.exp(b - m)))

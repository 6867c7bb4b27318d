"""Box helpers shared by the detection ops: overlaps, format conversion and the
greedy non-maximum suppression loop.

Boxes are arrays whose last axis holds 4 coordinates: ``corner`` boxes are
``[xmin, ymin, xmax, ymax]``, ``center`` boxes ``[x, y, width, height]``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

__all__ = ["iou", "to_corner", "to_center", "greedy_keep", "greedy_pairs"]


def _edges(b, fmt):
    """(left, top, right, bottom) of boxes in ``fmt``."""
    if fmt == "corner":
        return b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    hw, hh = b[..., 2] / 2, b[..., 3] / 2
    return b[..., 0] - hw, b[..., 1] - hh, b[..., 0] + hw, b[..., 1] + hh


def _area(b, fmt):
    """Box area, 0 for a box with a negative width or height (MXNet's BoxArea)."""
    if fmt == "corner":
        w, h = b[..., 2] - b[..., 0], b[..., 3] - b[..., 1]
    else:
        w, h = b[..., 2], b[..., 3]
    return jnp.where((w < 0) | (h < 0), jnp.zeros((), b.dtype), w * h)


def iou(a, b, fmt="corner", zero_if_disjoint=False):
    """Intersection over union of ``a`` and ``b`` (broadcasting over leading axes).

    ``zero_if_disjoint`` returns 0 where the boxes do not intersect (box_iou);
    otherwise that is ``0 / union`` (NaN for two empty boxes), as in box_nms.
    """
    al, at, ar, ab = _edges(a, fmt)
    bl, bt, br, bb = _edges(b, fmt)
    zero = jnp.zeros((), a.dtype)
    w = jnp.maximum(jnp.minimum(ar, br) - jnp.maximum(al, bl), zero)
    h = jnp.maximum(jnp.minimum(ab, bb) - jnp.maximum(at, bt), zero)
    inter = w * h
    out = inter / (_area(a, fmt) + _area(b, fmt) - inter)
    return jnp.where(inter <= 0, zero, out) if zero_if_disjoint else out


def to_center(b):
    """corner -> center boxes."""
    return jnp.stack(
        [(b[..., 0] + b[..., 2]) / 2, (b[..., 1] + b[..., 3]) / 2, b[..., 2] - b[..., 0],
         b[..., 3] - b[..., 1]],
        axis=-1,
    )  # fmt: skip


def to_corner(b):
    """center -> corner boxes."""
    hw, hh = b[..., 2] / 2, b[..., 3] / 2
    return jnp.stack([b[..., 0] - hw, b[..., 1] - hh, b[..., 0] + hw, b[..., 1] + hh], axis=-1)


# Up to this many candidates per image, NMS builds the whole suppression matrix and
# solves the greedy recurrence in a few parallel sweeps; beyond it, it loops once
# per kept box (memory linear in the candidates).
MATRIX_LIMIT = 4096


def greedy_keep(boxes, cand, suppresses, classes=None, max_keep=None):
    """Greedy NMS over candidates already sorted by priority.

    Parameters
    ----------
    boxes : (B, K, 4) array, in the order of priority.
    cand : (B, K) bool, the boxes that take part.
    suppresses : fn(ref (..., 4), boxes (..., 4)) -> bool array (broadcasting), whether
        ``ref`` suppresses each box.
    classes : (B, K) int array or None; a box only suppresses boxes of its class.
    max_keep : int or None; keep at most this many boxes per batch (the first ones).

    Returns
    -------
    (B, K) bool: the kept boxes, ``keep[j] = cand[j] and no kept i < j suppresses j``.

    With K <= ``MATRIX_LIMIT`` the recurrence is solved by sweeping it over the whole
    (K, K) suppression matrix until nothing changes (each sweep fixes at least the
    next box; chains of suppression are short, so a few sweeps do); otherwise a loop
    runs once per kept box, each step one vectorised overlap against all boxes.
    """
    k = cand.shape[1]
    if k > MATRIX_LIMIT:
        return _keep_by_loop(boxes, cand, suppresses, classes, max_keep)
    keep = _keep_by_matrix(boxes, cand, suppresses, classes)
    if max_keep is not None:
        keep = keep & (jnp.cumsum(keep, axis=1) <= max_keep)
    return keep


def _keep_by_matrix(boxes, cand, suppresses, classes):
    k = cand.shape[1]
    hits = suppresses(boxes[:, :, None, :], boxes[:, None, :, :])  # (B, K, K): i hits j
    hits = hits & jnp.triu(jnp.ones((k, k), bool), 1)[None]
    if classes is not None:
        hits = hits & (classes[:, :, None] == classes[:, None, :])
    hits = hits & cand[:, :, None]

    def sweep(state):
        keep, _ = state
        new = cand & ~jnp.any(keep[:, :, None] & hits, axis=1)
        return new, jnp.any(new != keep)

    return jax.lax.while_loop(lambda s: s[1], sweep, (cand, jnp.asarray(True)))[0]


def _keep_by_loop(boxes, cand, suppresses, classes, max_keep):
    k = cand.shape[1]
    ar = jnp.arange(k)
    limit = k if max_keep is None else max_keep

    def body(state):
        cand, keep = state
        has = cand.any(axis=1)
        i = jnp.argmax(cand, axis=1)
        ref = jnp.take_along_axis(boxes, i[:, None, None], axis=1)
        hit = suppresses(ref, boxes)
        if classes is not None:
            hit = hit & (classes == jnp.take_along_axis(classes, i[:, None], axis=1))
        is_i = ar[None, :] == i[:, None]
        keep = keep | (is_i & has[:, None])
        more = (keep.sum(axis=1) < limit)[:, None]
        return cand & ~hit & ~is_i & more, keep

    return jax.lax.while_loop(lambda s: s[0].any(), body, (cand, jnp.zeros_like(cand)))[1]


def greedy_pairs(score, valid_cols, steps, accept):
    """Greedy one-to-one matching of rows to columns by descending score.

    Parameters
    ----------
    score : (B, R, C) array.
    valid_cols : (B, C) bool, the columns that may be matched.
    steps : int, the most matches per batch.
    accept : fn(best (B,)) -> (B,) bool; matching stops at the first best pair it
        rejects (scores only fall from one step to the next).

    Returns
    -------
    (row_match (B, R), col_match (B, C)): the matched column of each row and row of
    each column (int32, -1 if unmatched). Each step takes the best remaining pair of a
    free row and a free column; ties go to the first in row-major order.

    Every column keeps its best free row; a step recomputes them (one pass over the
    scores) only when it took a row that was some other column's best.
    """
    nb, nr, nc = score.shape
    neg = jnp.asarray(-jnp.inf, score.dtype)
    rows, cols = jnp.arange(nr, dtype=jnp.int32), jnp.arange(nc, dtype=jnp.int32)

    def column_best(free_rows):
        v = jnp.where(free_rows[:, :, None], score, neg)
        best = v.max(axis=1)
        first = jnp.where(v == best[:, None, :], rows[None, :, None], nr).min(axis=1)
        return best, first

    def body(_, state):
        free_rows, free_cols, row_match, col_match, best, first = state
        cand = jnp.where(free_cols, best, neg)
        top = cand.max(axis=1)
        key = jnp.where(free_cols & (cand == top[:, None]), first * nc + cols, nr * nc)
        g = jnp.argmin(key, axis=1).astype(jnp.int32)
        r = jnp.take_along_axis(first, g[:, None], axis=1)[:, 0]
        take = free_cols.any(axis=1) & accept(top)
        hit_r = take[:, None] & (rows[None] == r[:, None])
        hit_c = take[:, None] & (cols[None] == g[:, None])
        row_match = jnp.where(hit_r, g[:, None], row_match)
        col_match = jnp.where(hit_c, r[:, None], col_match)
        free_rows, free_cols = free_rows & ~hit_r, free_cols & ~hit_c
        stale = (free_cols & (first == r[:, None]) & take[:, None]).any()
        best, first = jax.lax.cond(stale, column_best, lambda _: (best, first), free_rows)
        return free_rows, free_cols, row_match, col_match, best, first

    free_rows = jnp.ones((nb, nr), bool)
    init = (
        free_rows,
        valid_cols,
        jnp.full((nb, nr), -1, jnp.int32),
        jnp.full((nb, nc), -1, jnp.int32),
        *column_best(free_rows),
    )
    out = jax.lax.fori_loop(0, steps, body, init)
    return out[2], out[3]


def stable_partition(mask):
    """(B, N) indices putting the True entries of ``mask`` first, then the False ones,
    each group in its original order (a stable partition without a sort)."""
    nb, n = mask.shape
    first = jnp.cumsum(mask, axis=1) - 1
    second = mask.sum(axis=1, keepdims=True) + jnp.cumsum(~mask, axis=1) - 1
    dest = jnp.where(mask, first, second).astype(jnp.int32)
    src = jnp.broadcast_to(jnp.arange(n, dtype=jnp.int32), mask.shape)
    return jnp.zeros_like(dest).at[jnp.arange(nb)[:, None], dest].set(src)


def top_order(score, valid, k):
    """Indices of the ``k`` best valid entries of each row of ``score (B, N)``, by
    descending score, ties in index order (invalid entries come last)."""
    key = jnp.where(valid, score, jnp.asarray(-jnp.inf, score.dtype))
    return jax.lax.top_k(key, k)[1]

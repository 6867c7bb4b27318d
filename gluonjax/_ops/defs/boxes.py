"""Bounding-box ops: contrib.box_nms, box_iou, bipartite_matching, box_encode,
box_decode.

Every output has a fixed shape (suppressed or unmatched entries are -1), so the
ops hybridize: no value ever travels to the host. As in MXNet, box_iou,
bipartite_matching, box_encode and box_decode pass no gradient (zeros); box_nms
routes the gradient of each output row to the input row it was copied from.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ..registry import Attr, register
from . import _boxutil

_FORMATS = ("corner", "center")


def _box_nms_check(width, coord_start, score_index, id_index):
    need = 6 if id_index >= 0 else 5
    if width < need:
        raise ValueError(
            f"each box needs at least {need} values (score, 4 coordinates), got {width}"
        )
    if not (0 <= coord_start and coord_start + 3 < width):
        raise ValueError(f"coordinates [{coord_start}, {coord_start + 3}] exceed width {width}")
    for name, i in (("score_index", score_index), ("id_index", id_index)):
        if name == "id_index" and i < 0:
            continue
        if not 0 <= i < width or coord_start <= i <= coord_start + 3:
            raise ValueError(
                f"{name}={i} is out of range or overlaps the coordinates "
                f"[{coord_start}, {coord_start + 3}] of width {width}"
            )
    if id_index >= 0 and id_index == score_index:
        raise ValueError(f"id_index and score_index are both {id_index}")


@register(
    "_contrib_box_nms",
    aliases=("_contrib_box_non_maximum_suppression",),
    attrs={
        "overlap_thresh": Attr("float", 0.5),
        "valid_thresh": Attr("float", 0.0),
        "topk": Attr("int", -1),
        "coord_start": Attr("int", 2),
        "score_index": Attr("int", 1),
        "id_index": Attr("int", -1),
        "background_id": Attr("int", -1),
        "force_suppress": Attr("bool", False),
        "in_format": Attr("str", "corner", choices=_FORMATS),
        "out_format": Attr("str", "corner", choices=_FORMATS),
    },
    num_outputs=2,
    visible_outputs=1,
    output_names=("output", "temp"),
)
def box_nms(
    data,
    *,
    overlap_thresh,
    valid_thresh,
    topk,
    coord_start,
    score_index,
    id_index,
    background_id,
    force_suppress,
    in_format,
    out_format,
):
    """Non-maximum suppression of boxes ``(..., n, width)``; leading axes are batches.

    Boxes with score ``> valid_thresh`` (and, with ``id_index >= 0``, class !=
    ``background_id``) are sorted by descending score (ties keep their order); the
    first ``topk`` (all for -1) go through greedy NMS: a box is dropped when its IoU
    with a kept, higher-scored box (of the same class unless ``force_suppress`` or
    ``id_index < 0``) is ``> overlap_thresh``. The kept rows come first, in score
    order, copied whole; the remaining rows are -1. ``out_format`` re-encodes the
    coordinates of kept rows (those whose first coordinate is >= 0). ``topk=0``
    returns the input unchanged.

    The gradient of an output row goes to the input row it came from. MXNet 1.9.1
    passes it unchanged through an in/out format conversion; gluonjax applies the
    conversion's derivative.

    Examples
    --------
    >>> import gluonjax as mx
    >>> x = mx.nd.array([[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2],
    ...                  [0, 0.3, 0.5, 0.5, 0.7, 0.8]])
    >>> mx.nd.contrib.box_nms(x, overlap_thresh=0.5)[:, 1].asnumpy()
    array([ 0.5,  0.3, -1. ], dtype=float32)
    """
    if data.ndim < 2:
        raise ValueError(f"data must have at least 2 dimensions (n, width), got {data.shape}")
    n, width = data.shape[-2], data.shape[-1]
    _box_nms_check(width, coord_start, score_index, id_index)
    x = data.reshape(-1, n, width)
    nb = x.shape[0]
    k = n if topk < 0 else min(n, topk)
    if k < 1:
        record = jnp.arange(nb * n, dtype=data.dtype).reshape(data.shape[:-1] + (1,))
        return data, record
    xs = jax.lax.stop_gradient(x)
    score = xs[..., score_index]
    valid = score > valid_thresh
    if id_index >= 0:
        valid = valid & (xs[..., id_index] != background_id)
    order = _boxutil.top_order(score, valid, k)  # (B, k): by descending score, stable
    cand = jnp.take_along_axis(valid, order, axis=1)
    boxes = jnp.take_along_axis(xs[..., coord_start : coord_start + 4], order[..., None], axis=1)
    classes = None
    if id_index >= 0 and not force_suppress:
        classes = jnp.take_along_axis(xs[..., id_index], order, axis=1).astype(jnp.int32)

    def suppresses(ref, others):
        return _boxutil.iou(ref, others, in_format) > overlap_thresh

    keep = _boxutil.greedy_keep(boxes, cand, suppresses, classes)
    # kept candidates first (stable), then pad the row index list to n
    src = jnp.take_along_axis(order, _boxutil.stable_partition(keep), axis=1)
    n_keep = keep.sum(axis=1, keepdims=True)
    src = jnp.pad(src, ((0, 0), (0, n - k)))
    row = jnp.arange(n)[None, :]
    live = row < n_keep
    out = jnp.take_along_axis(x, src[..., None], axis=1)
    out = jnp.where(live[..., None], out, jnp.asarray(-1, data.dtype))
    if in_format != out_format:
        coords = out[..., coord_start : coord_start + 4]
        conv = _boxutil.to_center if out_format == "center" else _boxutil.to_corner
        todo = (live & (coords[..., 0] >= 0))[..., None]
        coords = jnp.where(todo, conv(coords), coords)
        out = jnp.concatenate(
            [out[..., :coord_start], coords, out[..., coord_start + 4 :]], axis=-1
        )
    flat = src + (jnp.arange(nb, dtype=src.dtype) * n)[:, None]
    record = jnp.where(live, flat, -1).astype(data.dtype)
    return out.reshape(data.shape), record.reshape(data.shape[:-1] + (1,))


@register(
    "_contrib_box_iou",
    inputs=("lhs", "rhs"),
    attrs={"format": Attr("str", "corner", choices=_FORMATS)},
)
def box_iou(lhs, rhs, *, format):
    """Pairwise IoU of boxes ``lhs (..., 4)`` and ``rhs (..., 4)``: output shape
    ``lhs.shape[:-1] + rhs.shape[:-1]`` (0 for disjoint boxes). No gradient (zeros, as
    MXNet).

    Examples
    --------
    >>> import gluonjax as mx
    >>> a = mx.nd.array([[0, 0, 2, 2]])
    >>> b = mx.nd.array([[1, 1, 3, 3], [4, 4, 5, 5]])
    >>> mx.nd.contrib.box_iou(a, b).asnumpy().round(4)
    array([[0.1429, 0.    ]], dtype=float32)
    """
    for name, a in (("lhs", lhs), ("rhs", rhs)):
        if a.ndim < 2 or a.shape[-1] != 4:
            raise ValueError(f"{name} must have shape (..., 4) with ndim >= 2, got {a.shape}")
    a = jax.lax.stop_gradient(lhs).reshape(-1, 1, 4)
    b = jax.lax.stop_gradient(rhs).reshape(1, -1, 4)
    out = _boxutil.iou(a, b, format, zero_if_disjoint=True)
    return out.reshape(lhs.shape[:-1] + rhs.shape[:-1])


@register(
    "_contrib_bipartite_matching",
    attrs={
        "is_ascend": Attr("bool", False),
        "threshold": Attr("float"),
        "topk": Attr("int", -1),
    },
    num_outputs=2,
    output_names=("output0", "output1"),
)
def bipartite_matching(data, *, is_ascend, threshold, topk):
    """Greedy bipartite matching of a score matrix ``(..., rows, cols)``.

    Repeatedly takes the best remaining score (largest; smallest with
    ``is_ascend``; ties: the first in row-major order) whose row and column are
    both unmatched, while it is ``> threshold`` (``< threshold``). Returns
    ``(row_match (..., rows), col_match (..., cols))``: the matched column of each
    row and row of each column, -1 if unmatched. ``topk > 0`` stops after
    ``topk + 1`` matches (MXNet 1.9.1 checks the limit after recording a match).
    No gradient (zeros).

    Examples
    --------
    >>> import gluonjax as mx
    >>> s = mx.nd.array([[0.5, 0.6], [0.1, 0.9], [0.4, 0.2]])
    >>> rows, cols = mx.nd.contrib.bipartite_matching(s, threshold=0.3)
    >>> rows.asnumpy(), cols.asnumpy()
    (array([ 0.,  1., -1.], dtype=float32), array([0., 1.], dtype=float32))
    """
    if data.ndim < 2:
        raise ValueError(f"the score matrix needs at least 2 dimensions, got {data.shape}")
    nr, nc = data.shape[-2:]
    s = jax.lax.stop_gradient(data).reshape(-1, nr, nc)
    steps = min(nr, nc) if topk <= 0 else min(nr, nc, topk + 1)

    def accept(best):
        return -best < threshold if is_ascend else best > threshold

    rows, cols = _boxutil.greedy_pairs(
        -s if is_ascend else s, jnp.ones((s.shape[0], nc), bool), steps, accept
    )
    return (
        rows.astype(data.dtype).reshape(data.shape[:-1]),
        cols.astype(data.dtype).reshape(data.shape[:-2] + (nc,)),
    )


@register(
    "_contrib_box_encode",
    inputs=("samples", "matches", "anchors", "refs", "means", "stds"),
    num_outputs=2,
    output_names=("output0", "output1"),
)
def box_encode(samples, matches, anchors, refs, means, stds):
    """Regression targets of corner ``anchors (B, N, 4)`` towards their matched
    corner boxes ``refs[b, matches[b, i]]`` (``refs (B, M, 4)``): ``((ref_x - a_x) /
    a_w - means[0]) / stds[0]``, likewise y, and ``(log(ref_w / a_w) - means[2]) /
    stds[2]``, likewise h. Rows whose ``samples`` value is not ``> 0.5`` get 0.
    Returns ``(targets, masks)``, masks 1 where a target is set. No gradient.
    """
    if anchors.ndim != 3 or anchors.shape[-1] != 4 or refs.ndim != 3 or refs.shape[-1] != 4:
        raise ValueError(f"anchors and refs must be (B, N, 4), got {anchors.shape}, {refs.shape}")
    sg = jax.lax.stop_gradient
    b, n = anchors.shape[:2]
    samples, matches = sg(samples).reshape(b, n), sg(matches).reshape(b, n)
    anchors, refs, means, stds = sg(anchors), sg(refs), sg(means), sg(stds)
    match = jnp.clip(matches.astype(jnp.int32), 0, refs.shape[1] - 1)
    ref = jnp.take_along_axis(refs, match[..., None], axis=1)
    rw, rh = ref[..., 2] - ref[..., 0], ref[..., 3] - ref[..., 1]
    aw, ah = anchors[..., 2] - anchors[..., 0], anchors[..., 3] - anchors[..., 1]
    rx, ry = ref[..., 0] + rw * 0.5, ref[..., 1] + rh * 0.5
    ax, ay = anchors[..., 0] + aw * 0.5, anchors[..., 1] + ah * 0.5
    t = jnp.stack([(rx - ax) / aw, (ry - ay) / ah, jnp.log(rw / aw), jnp.log(rh / ah)], axis=-1)
    t = (t - means.reshape(4)) / stds.reshape(4)
    valid = (samples > 0.5)[..., None]
    zero = jnp.zeros((), anchors.dtype)
    masks = jnp.broadcast_to(valid, anchors.shape).astype(anchors.dtype)
    return jnp.where(valid, t, zero), masks


@register(
    "_contrib_box_decode",
    inputs=("data", "anchors"),
    attrs={
        "std0": Attr("float", 1.0),
        "std1": Attr("float", 1.0),
        "std2": Attr("float", 1.0),
        "std3": Attr("float", 1.0),
        "clip": Attr("float", -1.0),
        "format": Attr("str", "center", choices=_FORMATS),
    },
)
def box_decode(data, anchors, *, std0, std1, std2, std3, clip, format):
    """Decode regression outputs ``data (B, N, 4)`` against ``anchors (1, N, 4)``
    (``format`` of the anchors: ``center`` [x, y, w, h] or ``corner``) into corner
    boxes: ``x = d0*std0*a_w + a_x``, ``w = exp(d2*std2) * a_w`` (``d2*std2`` capped at
    ``clip`` when ``clip > 0``), likewise y and h. No gradient (zeros, as MXNet).
    """
    if data.ndim != 3 or data.shape[-1] != 4:
        raise ValueError(f"data must be (B, N, 4), got {data.shape}")
    if anchors.ndim < 3 or anchors.shape[-1] != 4:
        raise ValueError(f"anchors must be (1, N, 4), got {anchors.shape}")
    x = jax.lax.stop_gradient(data)
    a = jax.lax.stop_gradient(anchors).reshape(-1, 4)[: data.shape[1]][None]
    if format == "corner":
        a = _boxutil.to_center(a)
    ax, ay, aw, ah = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    ox = x[..., 0] * std0 * aw + ax
    oy = x[..., 1] * std1 * ah + ay
    dw, dh = x[..., 2] * std2, x[..., 3] * std3
    if clip > 0:
        dw, dh = jnp.minimum(dw, clip), jnp.minimum(dh, clip)
    ow, oh = jnp.exp(dw) * aw * 0.5, jnp.exp(dh) * ah * 0.5
    return jnp.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1)

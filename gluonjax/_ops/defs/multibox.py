"""SSD's multibox ops: contrib.MultiBoxPrior (anchors), MultiBoxTarget (training
targets) and MultiBoxDetection (decoding + NMS).

Boxes are corner boxes ``[xmin, ymin, xmax, ymax]`` in [0, 1] image coordinates.
Outputs have fixed shapes (-1 marks empty rows), so the ops hybridize. None of
them passes a gradient (zeros, as in MXNet).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..registry import Attr, register
from . import _boxutil

_VARIANCES = Attr("floats", (0.1, 0.1, 0.2, 0.2))


def prior_boxes(height, width, sizes, ratios, steps, offsets, clip):
    """(height * width * (len(sizes) + len(ratios) - 1), 4) anchors, float32, computed
    in MXNet's order of float32 operations."""
    f = np.float32
    if steps[0] <= 0 or steps[1] <= 0:
        steps = (f(1) / f(height), f(1) / f(width))
    cy = (np.arange(height, dtype=f) + f(offsets[0])) * f(steps[0])
    cx = (np.arange(width, dtype=f) + f(offsets[1])) * f(steps[1])
    shapes = [(f(s), f(np.sqrt(f(ratios[0])))) for s in sizes]
    shapes += [(f(sizes[0]), f(np.sqrt(f(r)))) for r in ratios[1:]]
    half = np.array(
        [[s * f(height) / f(width) * r / f(2), s / r / f(2)] for s, r in shapes], dtype=f
    )  # (anchors, [w/2, h/2])
    cyx = np.stack(np.meshgrid(cy, cx, indexing="ij"), -1).reshape(-1, 1, 2)  # (HW, 1, [y, x])
    out = np.concatenate(
        [cyx[..., 1:] - half[None, :, :1], cyx[..., :1] - half[None, :, 1:],
         cyx[..., 1:] + half[None, :, :1], cyx[..., :1] + half[None, :, 1:]],
        axis=-1,
    ).reshape(-1, 4)  # fmt: skip
    return np.clip(out, 0, 1) if clip else out


@register(
    "_contrib_MultiBoxPrior",
    attrs={
        "sizes": Attr("floats", (1.0,)),
        "ratios": Attr("floats", (1.0,)),
        "clip": Attr("bool", False),
        "steps": Attr("floats", (-1.0, -1.0)),
        "offsets": Attr("floats", (0.5, 0.5)),
    },
)
def multibox_prior(data, *, sizes, ratios, clip, steps, offsets):
    """Anchor boxes for every position of the feature map ``data (B, C, H, W)``:
    output ``(1, H * W * (len(sizes) + len(ratios) - 1), 4)``.

    At each position (centre ``((x + offsets[1]) * steps[1], (y + offsets[0]) *
    steps[0])``; steps ``(-1, -1)``: ``(1/H, 1/W)``) come first one box per size with
    ``ratios[0]``, then one per further ratio with ``sizes[0]``; a box of size ``s`` and
    ratio ``r`` has width ``s * H / W * sqrt(r)`` and height ``s / sqrt(r)``. ``clip``
    clips into [0, 1].

    Examples
    --------
    >>> import gluonjax as mx
    >>> mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 1, 2, 2)), sizes=(0.5,)).asnumpy()[0, 0]
    array([0. , 0. , 0.5, 0.5], dtype=float32)
    """
    if data.ndim != 4:
        raise ValueError(f"data must be 4-D (B, C, H, W), got {tuple(data.shape)}")
    if not sizes or not ratios or len(steps) != 2 or len(offsets) != 2:
        raise ValueError("sizes and ratios must be non-empty, steps and offsets have 2 values")
    boxes = prior_boxes(data.shape[2], data.shape[3], sizes, ratios, steps, offsets, clip)
    return jnp.asarray(boxes[None], data.dtype)


def _overlaps(anchors, gt):
    """(A, 4), (B, L, 4) -> (B, A, L) IoU; 0 where the union is 0."""
    a, g = anchors[None, :, None], gt[:, None]
    zero = jnp.zeros((), anchors.dtype)
    w = jnp.maximum(jnp.minimum(a[..., 2], g[..., 2]) - jnp.maximum(a[..., 0], g[..., 0]), zero)
    h = jnp.maximum(jnp.minimum(a[..., 3], g[..., 3]) - jnp.maximum(a[..., 1], g[..., 1]), zero)
    inter = w * h
    union = ((a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
             + (g[..., 2] - g[..., 0]) * (g[..., 3] - g[..., 1]) - inter)  # fmt: skip
    return jnp.where(union == 0, zero, inter / jnp.where(union == 0, 1, union))


def _match(iou, valid_gt, overlap_threshold):
    """Anchor -> ground truth matches: greedy best pairs first, then (threshold > 0)
    every anchor whose best overlap exceeds the threshold. Returns (pos, gt_index,
    best_iou), each (B, A)."""
    neg = jnp.asarray(-jnp.inf, iou.dtype)
    match, _ = _boxutil.greedy_pairs(iou, valid_gt, iou.shape[2], lambda best: best > 1e-6)
    pos = match >= 0
    masked = jnp.where(valid_gt[:, None, :], iou, neg)
    best_gt = jnp.argmax(masked, axis=2).astype(jnp.int32)
    best = jnp.max(masked, axis=2)
    if overlap_threshold > 0:
        extra = ~pos & (best > overlap_threshold)
        pos = pos | extra
        match = jnp.where(extra, best_gt, match)
    return pos, match, best


@register(
    "_contrib_MultiBoxTarget",
    inputs=("anchor", "label", "cls_pred"),
    attrs={
        "overlap_threshold": Attr("float", 0.5),
        "ignore_label": Attr("float", -1.0),
        "negative_mining_ratio": Attr("float", -1.0),
        "negative_mining_thresh": Attr("float", 0.5),
        "minimum_negative_samples": Attr("int", 0),
        "variances": _VARIANCES,
    },
    num_outputs=3,
    output_names=("loc_target", "loc_mask", "cls_target"),
)
def multibox_target(
    anchor,
    label,
    cls_pred,
    *,
    overlap_threshold,
    ignore_label,
    negative_mining_ratio,
    negative_mining_thresh,
    minimum_negative_samples,
    variances,
):
    """SSD training targets. ``anchor (1, A, 4)``, ``label (B, L, >=5)`` rows
    ``[class, xmin, ymin, xmax, ymax]`` (a row with class -1 ends the list),
    ``cls_pred (B, classes, A)``. Returns ``[loc_target (B, A*4), loc_mask (B, A*4),
    cls_target (B, A)]``.

    Matching: repeatedly the best remaining (anchor, box) pair with IoU > 1e-6, then
    every other anchor whose best IoU is ``> overlap_threshold``. Matched anchors get
    class ``label + 1`` and box offsets ``((gx - ax) / aw / v0, (gy - ay) / ah / v1,
    log(gw / aw) / v2, log(gh / ah) / v3)``. With ``negative_mining_ratio > 0`` the
    ``ratio * positives`` unmatched anchors with best IoU below
    ``negative_mining_thresh`` and the lowest background probability (softmax of
    ``cls_pred``) become negatives (class 0); otherwise every unmatched anchor is. The
    rest get ``ignore_label``. An image without boxes is all ``ignore_label``.
    ``minimum_negative_samples`` is accepted and unused, as in MXNet's CPU kernel.
    """
    if anchor.ndim != 3 or anchor.shape[-1] != 4 or label.ndim != 3 or label.shape[2] < 5:
        raise ValueError(
            f"anchor must be (1, A, 4) and label (B, L, >=5), got {anchor.shape}, {label.shape}"
        )
    if cls_pred.ndim != 3 or cls_pred.shape[2] != anchor.shape[1] or len(variances) != 4:
        raise ValueError(
            f"cls_pred must be (B, classes, {anchor.shape[1]}), got {cls_pred.shape}; "
            f"variances must have 4 values"
        )
    sg = jax.lax.stop_gradient
    a = sg(anchor).reshape(-1, 4)
    lab, pred = sg(label), sg(cls_pred)
    nb, na = lab.shape[0], a.shape[0]
    ends = lab[..., 0] == -1
    n_gt = jnp.where(ends.any(axis=1), jnp.argmax(ends, axis=1), lab.shape[1])
    valid_gt = jnp.arange(lab.shape[1])[None] < n_gt[:, None]
    pos, match, best = _match(_overlaps(a, lab[..., 1:5]), valid_gt, overlap_threshold)
    if negative_mining_ratio > 0:
        n_pos = pos.sum(axis=1)
        n_neg = (n_pos.astype(jnp.float32) * np.float32(negative_mining_ratio)).astype(jnp.int32)
        n_neg = jnp.minimum(n_neg, na - n_pos)
        cand = ~pos & (best < negative_mining_thresh)
        bg = jax.nn.softmax(pred, axis=1)[:, 0]  # (B, A)
        key = jnp.where(cand, bg, jnp.inf)
        order = jnp.argsort(key, axis=1, stable=True)  # hardest negatives first
        ranks = jnp.broadcast_to(jnp.arange(na, dtype=jnp.int32), key.shape)
        rank = jnp.zeros_like(ranks).at[jnp.arange(nb)[:, None], order].set(ranks)
        negative = cand & (rank < n_neg[:, None])
    else:
        negative = ~pos
    has_gt = (n_gt > 0)[:, None]
    pos, negative = pos & has_gt, negative & has_gt
    g = jnp.take_along_axis(lab, jnp.maximum(match, 0)[..., None], axis=1)  # (B, A, W)
    gw, gh = g[..., 3] - g[..., 1], g[..., 4] - g[..., 2]
    gx, gy = (g[..., 1] + g[..., 3]) * 0.5, (g[..., 2] + g[..., 4]) * 0.5
    aw, ah = a[:, 2] - a[:, 0], a[:, 3] - a[:, 1]
    ax, ay = (a[:, 0] + a[:, 2]) * 0.5, (a[:, 1] + a[:, 3]) * 0.5
    v = variances
    loc = jnp.stack(
        [(gx - ax) / aw / v[0], (gy - ay) / ah / v[1], jnp.log(gw / aw) / v[2],
         jnp.log(gh / ah) / v[3]],
        axis=-1,
    )  # fmt: skip
    zero = jnp.zeros((), anchor.dtype)
    loc = jnp.where(pos[..., None], loc, zero).reshape(nb, na * 4)
    mask = jnp.broadcast_to(pos[..., None], (nb, na, 4)).astype(anchor.dtype).reshape(nb, -1)
    cls = jnp.where(pos, g[..., 0] + 1, jnp.where(negative, zero, ignore_label))
    return loc, mask, cls.astype(anchor.dtype)


@register(
    "_contrib_MultiBoxDetection",
    inputs=("cls_prob", "loc_pred", "anchor"),
    attrs={
        "clip": Attr("bool", True),
        "threshold": Attr("float", 0.01),
        "background_id": Attr("int", 0),
        "nms_threshold": Attr("float", 0.5),
        "force_suppress": Attr("bool", False),
        "variances": _VARIANCES,
        "nms_topk": Attr("int", -1),
    },
)
def multibox_detection(
    cls_prob, loc_pred, anchor, *, clip, threshold, background_id, nms_threshold,
    force_suppress, variances, nms_topk
):  # fmt: skip
    """Detections ``(B, A, 6)`` rows ``[class, score, xmin, ymin, xmax, ymax]`` from
    ``cls_prob (B, classes, A)``, ``loc_pred (B, A*4)`` and ``anchor (1, A, 4)``.

    Each anchor takes its best non-background class (class 0 is the background;
    ``background_id`` is accepted and unused, as in MXNet) if its probability is
    ``>= threshold``; its box is decoded with ``variances`` (and clipped to [0, 1]
    with ``clip``). Detections are sorted by score; the first ``nms_topk`` (all for
    -1) go through NMS (IoU ``>= nms_threshold``, same class unless
    ``force_suppress``; skipped when ``nms_threshold`` is not in (0, 1]). Suppressed
    and beyond-topk rows get class -1; rows after the detections are all -1.
    """
    nb, ncls, na = cls_prob.shape
    if loc_pred.shape != (nb, na * 4) or anchor.shape[-2:] != (na, 4) or len(variances) != 4:
        raise ValueError(
            f"expected loc_pred {(nb, na * 4)} and anchor (1, {na}, 4) for cls_prob "
            f"{cls_prob.shape}, got {loc_pred.shape} and {anchor.shape}"
        )
    sg = jax.lax.stop_gradient
    prob, loc, a = sg(cls_prob), sg(loc_pred).reshape(nb, na, 4), sg(anchor).reshape(na, 4)
    fg = prob[:, 1:]
    best = jnp.max(fg, axis=1) if ncls > 1 else jnp.full((nb, na), -1, prob.dtype)
    cid = (jnp.argmax(fg, axis=1) + 1) if ncls > 1 else jnp.zeros((nb, na), jnp.int32)
    score = jnp.where(best > -1, best, -1)
    cid = jnp.where((best > -1) & (score >= threshold), cid, 0)
    aw, ah = a[:, 2] - a[:, 0], a[:, 3] - a[:, 1]
    ax, ay = (a[:, 0] + a[:, 2]) / 2, (a[:, 1] + a[:, 3]) / 2
    ox, oy = loc[..., 0] * variances[0] * aw + ax, loc[..., 1] * variances[1] * ah + ay
    ow = jnp.exp(loc[..., 2] * variances[2]) * aw / 2
    oh = jnp.exp(loc[..., 3] * variances[3]) * ah / 2
    box = jnp.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1)
    if clip:
        box = jnp.clip(box, 0, 1)
    rows = jnp.concatenate([(cid - 1).astype(prob.dtype)[..., None], score[..., None], box], -1)
    valid = cid > 0
    n_valid = valid.sum(axis=1, keepdims=True)
    pos = jnp.arange(na)[None]
    minus1 = jnp.asarray(-1, prob.dtype)
    comp = _boxutil.stable_partition(valid)
    compact = jnp.take_along_axis(rows, comp[..., None], axis=1)
    if not 0 < nms_threshold <= 1:
        return jnp.where((pos < n_valid)[..., None], compact, minus1)
    n_keep = n_valid if nms_topk <= 0 else jnp.minimum(n_valid, nms_topk)
    k = na if nms_topk <= 0 else min(nms_topk, na)
    order = _boxutil.top_order(score, valid, k)
    ranked = jnp.take_along_axis(rows, order[..., None], axis=1)

    def suppresses(ref, others):
        return _boxutil.iou(ref, others, "corner", zero_if_disjoint=True) >= nms_threshold

    classes = None if force_suppress else ranked[..., 0].astype(jnp.int32)
    keep = _boxutil.greedy_keep(ranked[..., 2:], (pos[:, :k] < n_keep), suppresses, classes)
    ranked = ranked.at[..., 0].set(jnp.where(keep, ranked[..., 0], minus1))
    ranked = jnp.pad(ranked, ((0, 0), (0, na - k), (0, 0)), constant_values=-1)
    tail = compact.at[..., 0].set(minus1)
    out = jnp.where((pos < n_keep)[..., None], ranked, tail)
    return jnp.where((pos < n_valid)[..., None], out, minus1)

"""Region proposals of Faster R-CNN's RPN: contrib.Proposal (one image) and
contrib.MultiProposal (a batch).

Anchors are laid on the feature map, moved by the predicted deltas, clipped to
the image, filtered, sorted by objectness and thinned by NMS: all with array ops,
NMS as a loop over kept boxes only. The output always has
``rpn_post_nms_top_n`` rows per image (the kept boxes repeat cyclically when
fewer survive, as in MXNet), so the ops hybridize. No gradient (zeros).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..registry import Attr, register
from . import _boxutil


def base_anchors(stride, ratios, scales):
    """(len(ratios) * len(scales), 4) anchors centred on the first cell (ratios outer),
    in MXNet's float32 arithmetic."""
    f = np.float32
    w = h = f(stride)
    cx = cy = f(0.5 * (w - 1.0))
    out = []
    for ratio in ratios:
        for scale in scales:
            size_ratios = np.floor(w * h / f(ratio))
            nw = f(np.floor(np.sqrt(size_ratios) + f(0.5)) * f(scale))
            nh = f(np.floor(nw / f(scale) * f(ratio) + f(0.5)) * f(scale))
            out.append([cx - f(0.5) * (nw - 1), cy - f(0.5) * (nh - 1),
                        cx + f(0.5) * (nw - 1), cy + f(0.5) * (nh - 1)])  # fmt: skip
    return np.asarray(out, f)


def _overlap_plus_one(ref, others):
    """IoU in the pixel-inclusive (+1) convention of the RPN."""
    one = jnp.ones((), ref.dtype)
    zero = jnp.zeros((), ref.dtype)
    w = jnp.maximum(
        jnp.minimum(ref[..., 2], others[..., 2]) - jnp.maximum(ref[..., 0], others[..., 0]) + one,
        zero,
    )
    h = jnp.maximum(
        jnp.minimum(ref[..., 3], others[..., 3]) - jnp.maximum(ref[..., 1], others[..., 1]) + one,
        zero,
    )
    inter = w * h

    def area(b):
        return (b[..., 2] - b[..., 0] + one) * (b[..., 3] - b[..., 1] + one)

    return inter / (area(ref) + area(others) - inter)


def _proposals(cls_prob, bbox_pred, im_info, p):
    """(B, post, 5) rois with their batch index and (B, post) scores."""
    nb, c2, fh, fw = cls_prob.shape
    na = c2 // 2
    anchors = base_anchors(p["feature_stride"], p["ratios"], p["scales"])
    if na != len(anchors) or bbox_pred.shape != (nb, 4 * na, fh, fw) or im_info.shape != (nb, 3):
        raise ValueError(
            f"cls_prob {cls_prob.shape} needs 2 * {len(anchors)} channels (ratios x scales), "
            f"bbox_pred {(nb, 4 * len(anchors), fh, fw)} and im_info {(nb, 3)}; got "
            f"{bbox_pred.shape} and {im_info.shape}"
        )
    sg = jax.lax.stop_gradient
    prob, delta, info = sg(cls_prob), sg(bbox_pred), sg(im_info)
    stride = p["feature_stride"]
    shift = np.stack(np.meshgrid(np.arange(fw), np.arange(fh)), -1).astype(np.float32) * stride
    shift = np.concatenate([shift, shift], -1)  # (H, W, 4): x, y, x, y
    boxes = jnp.asarray((shift[:, :, None] + anchors[None, None]).reshape(-1, 4))  # (H*W*A, 4)
    score = prob[:, na:].transpose(0, 2, 3, 1).reshape(nb, -1)
    d = delta.reshape(nb, na, 4, fh, fw).transpose(0, 3, 4, 1, 2).reshape(nb, -1, 4)
    im_h, im_w, im_scale = info[:, 0:1], info[:, 1:2], info[:, 2:3]
    if p["iou_loss"]:
        x1, y1 = boxes[:, 0] + d[..., 0], boxes[:, 1] + d[..., 1]
        x2, y2 = boxes[:, 2] + d[..., 2], boxes[:, 3] + d[..., 3]
    else:
        w = boxes[:, 2] - boxes[:, 0] + 1.0
        h = boxes[:, 3] - boxes[:, 1] + 1.0
        cx, cy = boxes[:, 0] + 0.5 * (w - 1.0), boxes[:, 1] + 0.5 * (h - 1.0)
        pcx, pcy = d[..., 0] * w + cx, d[..., 1] * h + cy
        pw, ph = jnp.exp(d[..., 2]) * w, jnp.exp(d[..., 3]) * h
        x1, y1 = pcx - 0.5 * (pw - 1.0), pcy - 0.5 * (ph - 1.0)
        x2, y2 = pcx + 0.5 * (pw - 1.0), pcy + 0.5 * (ph - 1.0)
    zero = jnp.zeros((), prob.dtype)
    x1, x2 = (jnp.clip(v, zero, im_w - 1.0) for v in (x1, x2))
    y1, y2 = (jnp.clip(v, zero, im_h - 1.0) for v in (y1, y2))
    real_h = jnp.floor(im_h / stride).astype(jnp.int32)
    real_w = jnp.floor(im_w / stride).astype(jnp.int32)
    row = jnp.asarray(np.repeat(np.arange(fh), fw * na))[None]
    col = jnp.asarray(np.tile(np.repeat(np.arange(fw), na), fh))[None]
    score = jnp.where((row >= real_h) | (col >= real_w), -1.0, score)
    min_size = p["rpn_min_size"] * im_scale
    small = (x2 - x1 + 1.0 < min_size) | (y2 - y1 + 1.0 < min_size)
    grow = jnp.where(small, min_size / 2, zero)
    dets = jnp.stack([x1 - grow, y1 - grow, x2 + grow, y2 + grow], -1)
    score = jnp.where(small, -1.0, score)
    count = score.shape[1]
    pre = p["rpn_pre_nms_top_n"]
    k = min(pre if pre > 0 else count, count)
    order = jax.lax.top_k(score, k)[1]  # descending, ties in index order
    dets = jnp.take_along_axis(dets, order[..., None], axis=1)
    score = jnp.take_along_axis(score, order, axis=1)
    post = p["rpn_post_nms_top_n"]
    thresh = p["threshold"]

    def suppresses(ref, others):
        return _overlap_plus_one(ref, others) > thresh

    keep = _boxutil.greedy_keep(dets, jnp.ones(score.shape, bool), suppresses,
                                max_keep=min(post, k))  # fmt: skip
    kept = _boxutil.stable_partition(keep)
    n_kept = jnp.maximum(keep.sum(axis=1, keepdims=True), 1)
    src = jnp.take_along_axis(kept, jnp.arange(post)[None] % n_kept, axis=1)
    rois = jnp.take_along_axis(dets, src[..., None], axis=1)
    batch = jnp.broadcast_to(jnp.arange(nb, dtype=rois.dtype)[:, None, None], (nb, post, 1))
    return jnp.concatenate([batch, rois], -1), jnp.take_along_axis(score, src, axis=1)


_ATTRS = {
    "rpn_pre_nms_top_n": Attr("int", 6000),
    "rpn_post_nms_top_n": Attr("int", 300),
    "threshold": Attr("float", 0.7),
    "rpn_min_size": Attr("int", 16),
    "scales": Attr("floats", (4.0, 8.0, 16.0, 32.0)),
    "ratios": Attr("floats", (0.5, 1.0, 2.0)),
    "feature_stride": Attr("int", 16),
    "output_score": Attr("bool", False),
    "iou_loss": Attr("bool", False),
}
_DOC = """Region proposals from RPN outputs ``cls_prob (B, 2A, H, W)`` (background
    scores, then object scores, per anchor), ``bbox_pred (B, 4A, H, W)`` and
    ``im_info (B, 3)`` rows ``[height, width, scale]``; ``A = len(ratios) *
    len(scales)`` anchors of ``feature_stride``.

    Boxes decoded from the deltas (or, with ``iou_loss``, shifted by them) are clipped
    to the image; those on padded cells (beyond ``im_info``'s size) or smaller than
    ``rpn_min_size * scale`` get score -1 (the small ones also grow by half that
    size). The ``rpn_pre_nms_top_n`` best go through NMS (overlap ``> threshold``, in
    the +1 pixel convention) until ``rpn_post_nms_top_n`` are kept; the output has
    ``rpn_post_nms_top_n`` rows ``[batch_index, x1, y1, x2, y2]`` per image, the kept
    boxes repeated cyclically if fewer survive. ``output_score`` adds their scores
    ``(rows, 1)`` as a second output.
"""


def _register(name, batched):
    def impl(cls_prob, bbox_pred, im_info, **p):
        if cls_prob.ndim != 4 or cls_prob.shape[1] % 2:
            raise ValueError(f"cls_prob must be (B, 2 * anchors, H, W), got {cls_prob.shape}")
        if not batched and cls_prob.shape[0] != 1:
            raise ValueError(
                f"Proposal handles one image (got a batch of {cls_prob.shape[0]}); "
                f"use contrib.MultiProposal for batches"
            )
        rois, score = _proposals(cls_prob, bbox_pred, im_info, p)
        return rois.reshape(-1, 5), score.reshape(-1, 1)

    impl.__name__ = name
    impl.__doc__ = _DOC + ("    One image (B = 1).\n" if not batched else "")
    register(
        f"_contrib_{name}",
        inputs=("cls_prob", "bbox_pred", "im_info"),
        attrs=_ATTRS,
        num_outputs=2,
        visible_outputs=lambda a: 2 if a["output_score"] else 1,
        output_names=("output", "score"),
    )(impl)


_register("Proposal", batched=False)
_register("MultiProposal", batched=True)

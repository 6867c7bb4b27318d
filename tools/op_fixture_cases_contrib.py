"""Contrib and detection op cases (resizing, boxes, regions, attention, indexing).

Imported after the other case modules so their random inputs do not move. Box
inputs are built so that IoUs and scores stay clear of the thresholds (float
rounding cannot flip a decision), except where a case names a tie on purpose.
"""

from __future__ import annotations

import numpy as np
from op_fixture_cases import ND, RNG, case, group, idx, ints, r, u


def corners(n, lo=0.0, hi=1.0, min_size=0.05):
    """``n`` random [xmin, ymin, xmax, ymax] boxes inside [lo, hi]."""
    lo_hi = np.sort(RNG.uniform(lo, hi, (n, 2, 2)), axis=2)  # (box, x/y, min/max)
    lo_hi[:, :, 1] = np.maximum(lo_hi[:, :, 1], lo_hi[:, :, 0] + min_size)
    return lo_hi.transpose(0, 2, 1).reshape(n, 4).astype(np.float32)


def nms_rows(n, ids=3, score_lo=0.05):
    """(n, 6) rows [id, score, xmin, ymin, xmax, ymax] with distinct scores and some
    heavily overlapping boxes (copies of a few base boxes, slightly moved)."""
    base = corners(3, 0.1, 0.9, min_size=0.2)
    pick = RNG.randint(0, 3, n)
    boxes = base[pick] + RNG.uniform(-0.02, 0.02, (n, 4)).astype(np.float32)
    far = RNG.rand(n) < 0.3
    boxes[far] = corners(int(far.sum()), 1.0, 2.0, min_size=0.1)
    scores = RNG.permutation(np.linspace(score_lo, 0.95, n)).astype(np.float32)
    cls = RNG.randint(0, ids, n).astype(np.float32)
    return np.concatenate([cls[:, None], scores[:, None], boxes], axis=1).astype(np.float32)


def to_center(rows, start=2):
    out = rows.copy()
    b = rows[..., start : start + 4]
    out[..., start] = (b[..., 0] + b[..., 2]) / 2
    out[..., start + 1] = (b[..., 1] + b[..., 3]) / 2
    out[..., start + 2] = b[..., 2] - b[..., 0]
    out[..., start + 3] = b[..., 3] - b[..., 1]
    return out


def rois(batch_ids, lo, hi, min_size=1.0):
    b = corners(len(batch_ids), lo, hi, min_size)
    return np.concatenate([np.asarray(batch_ids, np.float32)[:, None], b], axis=1)


def probs(*shape, axis=1):
    e = np.exp(2 * RNG.randn(*shape))
    return (e / e.sum(axis=axis, keepdims=True)).astype(np.float32)


# fmt: off
# ----------------------------------------------------------------------------- resize, pooling
group("contrib")
R2 = "_contrib_BilinearResize2D"
case("bilinear-up", R2, [r(1, 2, 3, 4)], height=5, width=7)
case("bilinear-down", R2, [r(1, 1, 6, 5)], height=3, width=2)
case("bilinear-up-noalign", R2, [r(1, 2, 3, 4)], height=6, width=8, align_corners=False)
case("bilinear-down-noalign", R2, [r(2, 1, 5, 7)], height=3, width=4, align_corners="False")
case("bilinear-to-one", R2, [r(1, 1, 4, 3)], height=1, width=2)
case("bilinear-scale", R2, [r(1, 1, 4, 6)], scale_height=1.5, scale_width=0.5)
case("bilinear-odd-scale", R2, [r(1, 1, 5, 4)], mode="odd_scale", scale_height=2.0,
     scale_width=0.5)
case("bilinear-like", R2, [r(1, 2, 3, 3), r(1, 5, 6, 4)], mode="like")
case("bilinear-even-down", R2, [r(1, 1, 5, 4)], mode="to_even_down")
case("bilinear-even-up", R2, [r(1, 1, 5, 4)], mode="to_even_up")
case("bilinear-odd-down", R2, [r(1, 1, 5, 4)], mode="to_odd_down")
case("bilinear-odd-up", R2, [r(1, 1, 4, 5)], mode="to_odd_up")
case("bilinear-same", R2, [r(1, 2, 3, 4)], height="3", width="4")
AP = "_contrib_AdaptiveAvgPooling2D"
case("adaptive-avg-3", AP, [r(1, 2, 5, 7)], output_size=3)
case("adaptive-avg-2x3", AP, [r(2, 1, 6, 6)], output_size=(2, 3))
case("adaptive-avg-global", AP, [r(2, 3, 4, 5)])
case("adaptive-avg-up", AP, [r(1, 1, 3, 3)], output_size="(5, 4)")

# ----------------------------------------------------------------------------- boxes
group("boxes")
case("box_iou-corner", "_contrib_box_iou", [corners(3), corners(2)])
case("box_iou-center", "_contrib_box_iou", [to_center(corners(3)[None], 0)[0],
                                            to_center(corners(4)[None], 0)[0]], format="center")
case("box_iou-batch", "_contrib_box_iou", [corners(6).reshape(2, 3, 4), corners(4)])
NMS = "_contrib_box_nms"
case("box_nms-default", NMS, [nms_rows(10)])
case("box_nms-valid-topk", NMS, [nms_rows(10)], overlap_thresh=0.3, valid_thresh=0.3, topk=5)
case("box_nms-class", NMS, [nms_rows(12)], id_index=0, overlap_thresh=0.4)
case("box_nms-class-force", NMS, [nms_rows(12)], id_index=0, force_suppress=True)
case("box_nms-background", NMS, [nms_rows(10)], id_index=0, background_id=0, valid_thresh=0.1)
case("box_nms-batch", NMS, [np.stack([nms_rows(8) for _ in range(6)]).reshape(2, 3, 8, 6)],
     overlap_thresh=0.45, topk=6)
case("box_nms-layout", NMS, [nms_rows(9)[:, [2, 3, 4, 5, 1, 0]]], coord_start=0,
     score_index=4, id_index=5)
case("box_nms-center-in", NMS, [to_center(nms_rows(10))], in_format="center",
     out_format="center")
case("box_nms-center-to-corner", NMS, [to_center(nms_rows(10))], in_format="center")
case("box_nms-corner-to-center", NMS, [nms_rows(10)], out_format="center", overlap_thresh=0.6)
case("box_nms-none-valid", NMS, [nms_rows(6)], valid_thresh=0.99)
case("box_nms-topk0", NMS, [nms_rows(6)], topk=0)
case("box_nms-strings", NMS, [nms_rows(8)], overlap_thresh="0.5", topk="4", id_index="0",
     force_suppress="False")
case("box_nms-score-ties", NMS, [np.concatenate([nms_rows(4)[:, :1], np.full((4, 1), 0.5),
                                                 corners(4, 0.0, 3.0, 0.1)], 1).astype(np.float32)])
BM = "_contrib_bipartite_matching"
case("bipartite-desc", BM, [u(0, 1, 2, 5, 3)], threshold=0.1)
case("bipartite-asc", BM, [u(0, 1, 2, 4, 4)], threshold=0.8, is_ascend=True)
case("bipartite-topk", BM, [u(0, 1, 1, 5, 4)], threshold=0.05, topk=1)
case("bipartite-thresh", BM, [u(0, 1, 6, 3)], threshold="0.6")
case("bipartite-ties", BM, [np.asarray([[0.5, 0.5, 0.2], [0.5, 0.9, 0.5], [0.1, 0.5, 0.5]],
                                       np.float32)], threshold=0.0)
_anc = corners(8).reshape(2, 4, 4)
_ref = corners(6).reshape(2, 3, 4)
case("box_encode", "_contrib_box_encode", [idx([[1, 0, -1, 1], [1, 1, 0, 0]]),
                                           idx([[0, 2, 1, 1], [2, 0, 1, 0]]), _anc, _ref,
                                           np.zeros(4, np.float32),
                                           np.asarray([0.1, 0.1, 0.2, 0.2], np.float32)])
case("box_encode-means", "_contrib_box_encode", [idx([[1, 1, 0, 1]]), idx([[1, 0, 2, 2]]),
                                                 corners(4)[None], corners(3)[None],
                                                 u(-0.1, 0.1, 4), u(0.5, 1.0, 4)])
case("box_decode-center", "_contrib_box_decode", [r(2, 4, 4) * 0.5,
                                                  to_center(corners(4)[None], 0)])
case("box_decode-corner-std", "_contrib_box_decode", [r(1, 5, 4) * 0.5, corners(5)[None]],
     format="corner", std0=0.1, std1=0.1, std2=0.2, std3="0.2")
case("box_decode-clip", "_contrib_box_decode", [r(2, 3, 4) * 2.0, corners(3)[None]],
     format="corner", clip=0.5)

# ----------------------------------------------------------------------------- regions
group("regions")
RA = "_contrib_ROIAlign"
_feat = r(2, 3, 8, 8)
case("roialign", RA, [_feat, ND(rois([0, 1, 1, 0], 0.0, 14.0, 3.0))], pooled_size=(2, 2),
     spatial_scale=0.5, sample_ratio=2)
case("roialign-adaptive", RA, [r(1, 2, 7, 9), ND(rois([0, 0, 0], 0.0, 16.0, 2.0))],
     pooled_size=(3, 2), spatial_scale=0.5)
case("roialign-outside", RA, [r(1, 2, 6, 6), ND(np.asarray([[0, -3, -2, 4, 5], [0, 3, 2, 9, 8],
                                                            [0, 2.2, 2.4, 2.5, 2.6]],
                                                           np.float32))],
     pooled_size=(2, 3), spatial_scale=1.0, sample_ratio=2)
case("roialign-aligned", RA, [r(1, 2, 6, 7), ND(rois([0, 0], 0.0, 12.0, 2.0))],
     pooled_size=(2, 2), spatial_scale=0.5, sample_ratio=3, aligned=True)
case("roialign-ps", RA, [r(1, 8, 6, 6), ND(rois([0, 0], 0.0, 6.0, 2.0))], pooled_size=(2, 2),
     spatial_scale=1.0, sample_ratio=2, position_sensitive=True)
case("roialign-strings", RA, [r(1, 1, 5, 5), ND(rois([0], 0.0, 5.0, 2.0))],
     pooled_size="(2, 2)", spatial_scale="1.0", sample_ratio="1")
RP = "ROIPooling"
case("roipool", RP, [r(2, 2, 6, 8), ND(rois([0, 1, 1], 0.0, 15.0, 3.0))], pooled_size=(2, 3),
     spatial_scale=0.5)
case("roipool-ties", RP, [ints(0, 3, 1, 1, 5, 5).a, ND(np.asarray(
    [[0, 0, 0, 4, 4], [0, 1, 1, 3, 2], [0, -2, -2, 2, 1], [0, 3, 3, 9, 9]], np.float32))],
     pooled_size=(2, 2), spatial_scale=1.0)
case("roipool-strings", RP, [r(1, 1, 4, 4), ND(rois([0], 0.0, 4.0, 1.0))], pooled_size="(3, 3)",
     spatial_scale="1")
MP = "_contrib_MultiBoxPrior"
case("mbox-prior", MP, [r(1, 2, 3, 4)], sizes=(0.5, 0.25), ratios=(1, 2, 0.5))
case("mbox-prior-clip-steps", MP, [r(2, 1, 4, 5)], sizes="(0.7,)", ratios="[1, 3]", clip=True,
     steps=(0.2, 0.25), offsets=(0.5, 0.4))
case("mbox-prior-default", MP, [r(1, 1, 2, 2)])
_anchors = np.clip(np.concatenate([corners(12, 0.0, 1.0, 0.1)]), 0, 1)[None]
_lab = np.full((2, 3, 5), -1, np.float32)
_lab[0, :2] = np.concatenate([[[0.0], [2.0]], _anchors[0, [1, 7]] + 0.03], 1)
_lab[1, :3] = np.concatenate([[[1.0], [0.0], [1.0]], corners(3, 0.0, 1.0, 0.2)], 1)
MT = "_contrib_MultiBoxTarget"
case("mbox-target", MT, [ND(_anchors), ND(_lab), r(2, 3, 12)])
case("mbox-target-mining", MT, [ND(_anchors), ND(_lab), r(2, 3, 12)], negative_mining_ratio=2.0,
     negative_mining_thresh=0.4, overlap_threshold=0.3)
case("mbox-target-nogt", MT, [ND(_anchors), ND(np.full((1, 2, 5), -1, np.float32)),
                              r(1, 3, 12)], variances=(0.2, 0.2, 0.1, 0.1))
case("mbox-target-nothresh", MT, [ND(_anchors), ND(_lab), r(2, 4, 12)], overlap_threshold=0.0,
     negative_mining_ratio="1.5", ignore_label="-2")
MD = "_contrib_MultiBoxDetection"
_danc = np.concatenate([corners(10, 0.1, 0.5, 0.2)[:5], corners(5, 0.0, 1.0, 0.1)])[None]
case("mbox-det", MD, [probs(2, 4, 10), r(2, 40) * 0.2, _danc])
case("mbox-det-force-topk", MD, [probs(2, 3, 10), r(2, 40) * 0.2, _danc], force_suppress=True,
     nms_topk=4, threshold=0.05)
case("mbox-det-noclip", MD, [probs(1, 3, 10), r(1, 40) * 0.5, _danc], clip=False,
     nms_threshold=0.3, variances=(0.2, 0.2, 0.3, 0.3))
case("mbox-det-nonms", MD, [probs(1, 3, 10), r(1, 40) * 0.2, _danc], nms_threshold=0.0)
case("mbox-det-high-thresh", MD, [probs(1, 3, 10), r(1, 40) * 0.2, _danc], threshold=0.6)


def _rpn(b, a, h, w):
    return [probs(b, 2 * a, h, w), r(b, 4 * a, h, w) * 0.3]


_PROP = dict(rpn_pre_nms_top_n=30, rpn_post_nms_top_n=8, threshold=0.6, rpn_min_size=4,
             scales=(2, 4), ratios=(0.5, 1, 2), feature_stride=8)
case("proposal", "_contrib_Proposal", [*_rpn(1, 6, 4, 5), idx([[30, 37, 1.0]])], **_PROP)
case("proposal-score-repeat", "_contrib_Proposal",
     [*_rpn(1, 6, 3, 3), idx([[24, 24, 1.5]])], output_score=True,
     **{**_PROP, "threshold": 0.2, "rpn_post_nms_top_n": 40, "rpn_pre_nms_top_n": -1})
case("proposal-iou", "_contrib_Proposal", [*_rpn(1, 6, 4, 4), idx([[32, 32, 1.0]])],
     iou_loss=True, **_PROP)
case("multiproposal", "_contrib_MultiProposal",
     [*_rpn(2, 6, 4, 5), idx([[30, 37, 1.0], [32, 26, 0.5]])], output_score=True, **_PROP)

# ----------------------------------------------------------------------------- attention, misc
group("contrib_misc")
case("div_sqrt_dim", "_contrib_div_sqrt_dim", [r(2, 3, 4)])
case("selfatt_qk", "_contrib_interleaved_matmul_selfatt_qk", [r(3, 2, 12)], heads=2)
case("selfatt_valatt", "_contrib_interleaved_matmul_selfatt_valatt", [r(3, 2, 12), r(4, 3, 3)],
     heads=2)
case("encdec_qk", "_contrib_interleaved_matmul_encdec_qk", [r(3, 2, 4), r(5, 2, 8)], heads=2)
case("encdec_valatt", "_contrib_interleaved_matmul_encdec_valatt", [r(5, 2, 8), r(4, 3, 5)],
     heads="2")
DC = "_contrib_DeformableConvolution"
case("deformconv", DC, [r(1, 4, 5, 5), r(1, 18, 5, 5), r(3, 4, 3, 3), r(3)], kernel=(3, 3),
     num_filter=3, pad=(1, 1))
case("deformconv-groups", DC, [r(2, 4, 6, 6), 0.7 * r(2, 36, 3, 3), r(4, 2, 3, 3)],
     kernel=(3, 3), num_filter=4, stride=(2, 2), pad=(1, 1), num_group=2,
     num_deformable_group=2, no_bias=True)
case("deformconv-dilate", DC, [r(1, 2, 7, 7), 1.5 * r(1, 8, 7, 7), r(2, 2, 2, 2), r(2)],
     kernel="(2, 2)", num_filter="2", dilate=(2, 2), pad=(1, 1))
case("hard_sigmoid", "hard_sigmoid", [2 * r(3, 4)])
case("hard_sigmoid-params", "hard_sigmoid", [r(3, 4)], alpha=0.5, beta="0.3")
case("cumsum-flat", "cumsum", [r(2, 3)])
case("cumsum-axis", "cumsum", [r(2, 3, 4)], axis=1)
case("cumsum-axis0-dtype", "cumsum", [r(3, 4)], axis=0, dtype="float32")
case("index_array", "_contrib_index_array", [ND(r(3, 2))])
case("index_array-axes", "_contrib_index_array", [ND(r(3, 2, 2))], axes=(1, 0))
case("index_array-neg", "_contrib_index_array", [ND(r(2, 3))], axes="(-1,)")
case("index_copy", "_contrib_index_copy", [r(5, 3), idx([0, 4, 2]), r(3, 3)])
case("index_copy-3d", "_contrib_index_copy", [r(4, 2, 2), idx([3, 1]), r(2, 2, 2)])
case("arange_like", "_contrib_arange_like", [ND(r(2, 3))])
case("arange_like-args", "_contrib_arange_like", [ND(r(2, 5))], start=1.0, step=0.5, repeat=2)
case("arange_like-axis", "_contrib_arange_like", [ND(r(2, 5))], axis=1, start="2")
case("slice_like-axes", "slice_like", [r(3, 4, 5), r(2, 9, 3)], axes=(0, 2))
case("slice_like-all", "slice_like", [r(3, 4), r(2, 2)])
case("slice_like-neg", "slice_like", [r(3, 4, 5), r(1, 2, 2)], axes=(-1,))
case("broadcast_like-axes", "broadcast_like", [r(1, 3, 1), r(4, 2)], lhs_axes=(0, 2),
     rhs_axes=(0, 1))
case("reshape_like-begin-end", "reshape_like", [r(30, 7), r(15, 2, 4)], lhs_begin=0, lhs_end=1,
     rhs_begin=0, rhs_end=2)
case("reshape_like-neg", "reshape_like", [r(2, 3, 4), r(6,)], lhs_begin=-3, lhs_end=-1)
case("reshape_like-rhs", "reshape_like", [r(2, 3, 4), r(1, 12)], lhs_begin=1, rhs_begin=1)
case("shape_array", "shape_array", [ND(r(2, 3, 4))])
case("size_array", "size_array", [ND(r(2, 3))])
case("gather_nd-2d", "gather_nd", [r(3, 4), idx([[0, 2, 1, 2], [1, 3, 0, 1]])])
case("gather_nd-3d", "gather_nd", [r(2, 3, 4), idx([[1, 0], [2, 1]])])
case("scatter_nd", "scatter_nd", [r(3), idx([[0, 2, 1], [1, 3, 0]])], shape=(3, 4))
case("scatter_nd-rows", "scatter_nd", [r(2, 4), idx([[2, 0]])], shape=(3, 4))
# fmt: on

# ----------------------------------------------------------------------------- amp
# gluoncv's box coders call amp_multicast; CenterNet divides int64 index rows by a (1,) array
group("amp")
# fmt: off
case("amp_cast", "amp_cast", [r(2, 3)], dtype="float16")
case("amp_cast-int", "amp_cast", [ND(np.arange(6, dtype=np.int32).reshape(2, 3))],
     dtype="float16")
case("amp_multicast", "amp_multicast", [r(2, 3).astype(np.float16), r(3)], num_outputs=2)
case("amp_multicast-first", "amp_multicast", [r(2).astype(np.float16), r(2).astype(np.float16)],
     num_outputs=2)
case("amp_multicast-narrow", "amp_multicast", [r(2, 3), r(3).astype(np.float16)], num_outputs=2,
     cast_narrow=True)
case("amp_multicast-int", "amp_multicast",
     [r(2).astype(np.float16), r(2), ND(np.arange(3, dtype=np.int32))], num_outputs=3)
case("broadcast_div-int-ndim", "broadcast_div",
     [ND(np.array([[7, -7, 9, 40]], dtype=np.int32)), ND(np.array([3], dtype=np.int32))])
case("broadcast_mod-int-ndim", "broadcast_mod",
     [ND(np.array([[7, 8, 9, 40]], dtype=np.int32)), ND(np.array([3], dtype=np.int32))])
# fmt: on

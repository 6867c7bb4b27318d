"""The detection converters (box_nms, box_decode, ROIAlign) against ONNX Runtime: gluonjax's
eager op is the reference, at opsets 12, 13 and the newest onnx knows.

box_nms's cases include MXNet 1.9.1's own ONNX test data
(tests/python-pytest/onnx/test_operators.py, ``test_onnx_export_contrib_box_nms``: every
topk / valid_thresh / overlap_thresh it tries), per-class suppression, background_id,
center boxes, ties, boxes MXNet gives zero area, and batches of any rank.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from onnx_common import OPSETS, Lambda, check_case, export_op, run_ort

import gluonjax as mx

R = np.random.RandomState(7)

# MXNet's test_onnx_export_contrib_box_nms data: [score, x1, y1, x2, y2] (corner) and
# [score, x, y, w, h] (center), with leading batch axes
_MX_CORNER = [
    [0.5, 0.1, 0.1, 0.2, 0.2],
    [0.4, 0.1, 0.1, 0.2, 0.2],
    [0.7, 0.5, 0.5, 0.9, 0.9],
    [0.8, 0.1, 0.9, 0.11, 0.91],
    [0.001, 0.01, 0.01, 0.02, 0.02],
]
_MX_CORNER_2 = [[0.4, *_MX_CORNER[0][1:]], [0.3, *_MX_CORNER[1][1:]], *_MX_CORNER[2:]]
MX_A = mx.nd.array(np.array([_MX_CORNER, _MX_CORNER, _MX_CORNER_2]).reshape(1, 3, 1, 1, 5, 5))
_MX_CENTER = [
    [[0.7, 0.5, 0.5, 0.2, 0.2], [0.6, 0.48, 0.48, 0.2, 0.2], [0.8, 0.76, 0.76, 0.2, 0.2],
     [0.9, 0.7, 0.7, 0.2, 0.2], [0.001, 0.5, 0.1, 0.02, 0.02]],
    [[0.5, 0.2, 0.2, 0.2, 0.2], [0.6, 0.4, 0.4, 0.21, 0.21], [0.7, 0.5, 0.5, 0.9, 0.9],
     [0.8, 0.1, 0.9, 0.01, 0.01], [0.001, 0.6, 0.1, 0.02, 0.02]],
]  # fmt: skip
MX_B = mx.nd.array(np.array(_MX_CENTER).reshape(2, 1, 1, 5, 5))
MX_GRID = list(itertools.product([-1, 2, 3, 4], [0.3, 0.4, 0.8], [0.4, 0.7, 1.0]))


def _mx_grid(fmt):
    def fn(F, x):
        return [
            F.contrib.box_nms(
                x, coord_start=1, force_suppress=True, overlap_thresh=ot, valid_thresh=vt,
                score_index=0, topk=topk, in_format=fmt, out_format=fmt,
            )
            for topk, vt, ot in MX_GRID
        ]  # fmt: skip

    return fn


def _dets(batch, n, classes=3, fmt="corner", ties=False):
    """[id, score, 4 coordinates] rows: distinct scores unless ``ties``; a few boxes
    with a negative width or height (MXNet gives them zero area)."""
    ids = R.randint(0, classes, size=(batch, n, 1))
    if ties:
        score = R.randint(1, 6, size=(batch, n, 1)) / 5.0
    else:
        score = R.permutation(batch * n).reshape(batch, n, 1) / (batch * n)
    xy = R.uniform(0, 10, size=(batch, n, 2))
    wh = R.uniform(1, 5, size=(batch, n, 2))
    wh[:, ::7, 0] *= -1  # a negative width every 7th box
    coords = np.concatenate([xy, xy + wh] if fmt == "corner" else [xy, wh], axis=-1)
    return mx.nd.array(np.concatenate([ids, score, coords], axis=-1))


DETS = _dets(2, 40)
DETS_CENTER = _dets(3, 24, fmt="center")
DETS_TIES = _dets(2, 30, classes=2, ties=True)

CASES = {
    "box_nms_mxnet_corner": (_mx_grid("corner"), [MX_A]),
    "box_nms_mxnet_center": (_mx_grid("center"), [MX_B]),
    "box_nms_classes": (
        lambda F, x: [
            F.contrib.box_nms(x, overlap_thresh=0.3),
            F.contrib.box_nms(x, overlap_thresh=0.3, id_index=0),
            F.contrib.box_nms(x, overlap_thresh=0.3, id_index=0, force_suppress=True),
            F.contrib.box_nms(x, overlap_thresh=0.2, id_index=0, topk=10, valid_thresh=0.2),
            F.contrib.box_nms(x, overlap_thresh=0.2, id_index=0, background_id=1),
            F.contrib.box_nms(x, overlap_thresh=0.0, id_index=0, out_format="center"),
            F.contrib.box_nms(x, topk=0),
            F.contrib.box_nms(x, overlap_thresh=1.5, valid_thresh=2.0),
            F.contrib.box_nms(F.reshape(x, (2, 2, 20, 6)), id_index=0, topk=7),
        ],
        [DETS],
    ),
    "box_nms_center_layout": (
        lambda F, x: [
            F.contrib.box_nms(x, overlap_thresh=0.1, in_format="center"),
            F.contrib.box_nms(x, overlap_thresh=0.3, in_format="center", out_format="corner"),
            F.contrib.box_nms(
                F.concat(
                    F.slice_axis(x, axis=2, begin=2, end=6),
                    F.slice_axis(x, axis=2, begin=0, end=2),
                    dim=2,
                ),
                coord_start=0,
                score_index=5,
                id_index=4,
                in_format="center",
                topk=12,
            ),
        ],  # fmt: skip
        [DETS_CENTER],
    ),
    "box_nms_ties": (
        lambda F, x: [
            F.contrib.box_nms(x, overlap_thresh=0.3),
            F.contrib.box_nms(x, overlap_thresh=0.3, id_index=0, topk=9),
        ],
        [DETS_TIES],
    ),
    "box_decode": (
        lambda F, d, a: [
            F.contrib.box_decode(d, a, format=fmt, clip=clip, **std)
            for fmt in ("corner", "center")
            for clip in (-1.0, 0.5)
            for std in ({}, {"std0": 0.3, "std1": 1.4, "std2": 0.5, "std3": 1.6})
        ],
        [
            mx.nd.array(R.uniform(0, 1, (2, 3, 4)) * [-1, -1, 1, 1]),
            mx.nd.array(R.uniform(0, 1, (1, 5, 4)) * [-1, -1, 1, 1]),  # the first 3 are used
        ],
    ),
    # MXNet's test_onnx_export_contrib_ROIAlign regions on a smaller map: a negative batch
    # index (zeros), a region with x2 < x1, regions reaching past the map
    "ROIAlign": (
        lambda F, data, rois: [
            F.contrib.ROIAlign(data, rois, pooled_size=ps, spatial_scale=ss, sample_ratio=sr)
            for ps, ss, sr in [
                ((1, 1), 1.0, 1),
                ((3, 3), 0.5, 2),
                ((5, 7), 0.0625, 3),
                ((2, 2), 0.25, -1),
                ((4, 3), 0.5, 5),
            ]
        ],
        [
            mx.nd.array(R.uniform(0, 1, (5, 2, 40, 48))),
            mx.nd.array(
                [
                    [-1, 0, 0, 0, 0],
                    [0, 0, 0, 63, 63],
                    [1, 34, 52, 25, 85],
                    [2, 50, 50, 100, 100],
                    [3, 0, 0, 127, 127],
                    [4, 12, 84, 22, 94],
                    [0, 0, 0, 1, 1],
                    [5, 3, 3, 9, 9],
                ]
            ),  # fmt: skip
        ],
    ),
}


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_detection_op_matches_onnxruntime(case, opset, tmp_path):
    fn, inputs = CASES[case]
    check_case(tmp_path, fn, inputs, opset, case)


def test_roi_align_aligned_and_4_column_rois(tmp_path):
    """``aligned`` is RoiAlign's half_pixel mode (opset 16); (R, 4) regions read image 0."""
    data = mx.nd.array(R.uniform(0, 1, (2, 3, 12, 10)))
    rois = mx.nd.array([[0, 1.5, 2.0, 7.0, 9.5], [1, 0.2, 0.4, 0.9, 1.1], [1, 3, 3, 30, 30]])

    def fn(F, x, r):
        return [
            F.contrib.ROIAlign(x, r, pooled_size=(3, 2), spatial_scale=1.0, aligned=True),
            F.contrib.ROIAlign(
                x, F.slice_axis(r, axis=1, begin=1, end=5), pooled_size=(2, 2),
                spatial_scale=0.5, sample_ratio=2,
            ),
        ]  # fmt: skip

    _, got = export_op(tmp_path, fn, [data, rois], opset=OPSETS[-1])
    for g, w in zip(got, fn(mx.nd, data, rois)):
        np.testing.assert_allclose(g, w.asnumpy(), rtol=1e-5, atol=1e-5)


def test_box_nms_with_a_symbolic_batch_axis(tmp_path):
    def fn(F, x):
        return F.contrib.box_nms(x, overlap_thresh=0.3, id_index=0, topk=15)

    block = Lambda(fn)
    block.initialize()
    block.hybridize()
    small = mx.nd.array(DETS.asnumpy()[:1])
    path = mx.onnx.export_block(block, small, str(tmp_path / "nms.onnx"), dynamic=True)
    (got,) = run_ort(path, [DETS.asnumpy()])  # batch 2 through a model exported with batch 1
    np.testing.assert_array_equal(got, fn(mx.nd, DETS).asnumpy())


@pytest.mark.parametrize(
    "fn, inputs, opset, says",
    [
        (
            lambda F, x: F.contrib.box_nms(x, overlap_thresh=-0.1),
            [DETS],
            13,
            "overlap_thresh=-0.1",
        ),
        (
            lambda F, x: F.contrib.box_nms(F.Cast(x, dtype="float16")),
            [DETS],
            13,
            "float16 boxes",
        ),
        (
            lambda F, x: F.contrib.box_nms(x, id_index=0),
            [mx.nd.zeros((1, 5000, 6))],
            None,
            "give topk <= 4096",
        ),
        (
            lambda F, x, r: F.contrib.ROIAlign(
                x, r, pooled_size=(2, 2), spatial_scale=1.0, aligned=True
            ),
            [mx.nd.ones((1, 1, 4, 4)), mx.nd.array([[0, 0, 0, 2, 2]])],
            13,
            "aligned=True before opset 16",
        ),  # fmt: skip
        (
            lambda F, x, r: F.contrib.ROIAlign(
                x, r, pooled_size=(2, 2), spatial_scale=1.0, position_sensitive=True
            ),
            [mx.nd.ones((1, 4, 4, 4)), mx.nd.array([[0, 0, 0, 2, 2]])],
            None,
            "position_sensitive=True",
        ),  # fmt: skip
    ],
    ids=[
        "nms_negative_overlap",
        "nms_float16",
        "nms_class_axis_too_big",
        "roialign_aligned_opset13",
        "roialign_psroi",
    ],
)
def test_detection_export_refusals_name_node_and_opset(fn, inputs, opset, says, tmp_path):
    with pytest.raises(mx.onnx.ONNXUnsupportedOpError) as err:
        export_op(tmp_path, fn, inputs, opset=opset)
    msg = str(err.value)
    assert says in msg and "opset" in msg and "(op _contrib_" in msg, msg

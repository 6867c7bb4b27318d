"""Converters of the detection ops: box_nms (ONNX NonMaxSuppression), box_decode, ROIAlign.

box_nms keeps the registry op's fixed output shape (the input's): the kept rows first,
in score order, the other rows -1, so detection models export with static shapes.
"""

from __future__ import annotations

import numpy as np

from ._table import converter

#: the most candidates (``topk``, or the boxes per batch) box_nms exports with per-class
#: suppression: ONNX NonMaxSuppression's class axis is then (B, K, K) scores
CLASS_AXIS_LIMIT = 4096


def _col(cx, x, index):
    """Column ``index`` of the last axis of a (B, N, W) tensor: (B, N)."""
    return cx.add("Gather", [x, cx.const(np.int64(index), hint="col")], axis=2)


def _last(cx, x, start, stop):
    """``x[..., start:stop]`` of a rank-3 tensor."""
    return cx.add(
        "Slice", [x, cx.ints([start], "starts"), cx.ints([stop], "ends"), cx.ints([2], "axes")]
    )


def _rows(cx, x, idx):
    """``x[b, idx[b, k], :]``: rows of (B, N, W) picked by (B, K) int64 indices."""
    return cx.add("GatherND", [x, cx.unsqueeze(idx, [2])], batch_dims=1)


def _corners(cx, boxes, in_format):
    """(l, t, r, b) of (B, K, 4) boxes as MXNet's box_nms computes them, and the boxes
    MXNet gives zero area (a negative width or height)."""
    c = [_last(cx, boxes, i, i + 1) for i in range(4)]
    if in_format == "corner":
        left, top, right, bottom = c
        w, h = cx.add("Sub", [right, left]), cx.add("Sub", [bottom, top])
    else:
        two = cx.const(np.float32(2), hint="two")
        w, h = c[2], c[3]
        hw, hh = cx.add("Div", [w, two]), cx.add("Div", [h, two])
        left, right = cx.add("Sub", [c[0], hw]), cx.add("Add", [c[0], hw])
        top, bottom = cx.add("Sub", [c[1], hh]), cx.add("Add", [c[1], hh])
    zero = cx.const(np.float32(0), hint="zero")
    bad = cx.add("Or", [cx.add("Less", [w, zero]), cx.add("Less", [h, zero])])
    return left, top, right, bottom, bad


def _nms_boxes(cx, boxes, in_format):
    """Corner boxes for ONNX NonMaxSuppression that overlap exactly as MXNet's do.

    ONNX reads ``[y1, x1, y2, x2]`` as any two opposite corners, so a box with a negative
    width would overlap as its mirror image; MXNet gives it zero area and no overlap. It
    becomes the point ``(l, t, l, t)``, which overlaps nothing in either. (ONNX Runtime
    reads x and y swapped, which changes no IoU.)
    """
    left, top, right, bottom, bad = _corners(cx, boxes, in_format)
    corners = cx.add("Concat", [left, top, right, bottom], axis=2)
    point = cx.add("Concat", [left, top, left, top], axis=2)
    return cx.add("Where", [bad, point, corners])


def _class_scores(cx, ids, rank, cand, k):
    """(B, K, K) scores: row ``g`` holds the ranks of the candidates of the class whose
    first candidate is ``g`` (0 elsewhere), so per-class NonMaxSuppression suppresses
    only within a class. Classes compare as MXNet's: ids truncated to int32."""
    cls = cx.add("Cast", [ids], to=cx.onnx.TensorProto.INT32)
    same = cx.add("Equal", [cx.unsqueeze(cls, [2]), cx.unsqueeze(cls, [1])])  # (B, i, j)
    first = cx.add(
        "ArgMax", [cx.add("Cast", [same], to=cx.onnx.TensorProto.INT32)], axis=1, keepdims=0
    )  # (B, K): the first candidate of each candidate's class
    is_first = cx.add("Equal", [first, cx.const(np.arange(k, dtype=np.int64), hint="pos")])
    mask = cx.add(
        "And", [same, cx.add("And", [cx.unsqueeze(is_first, [2]), cx.unsqueeze(cand, [1])])]
    )
    return cx.add("Where", [mask, cx.unsqueeze(rank, [1]), cx.const(np.float32(0), hint="zero")])


@converter("_contrib_box_nms")
def box_nms(cx, node):
    """ONNX NonMaxSuppression on candidates sorted and cut to ``topk`` beforehand.

    As the registry op: rows of score ``> valid_thresh`` (and class ``!= background_id``)
    are ordered by descending score (ties by index, as ONNX TopK), the first ``topk`` go
    through greedy suppression at IoU ``> overlap_thresh``; NonMaxSuppression sees each
    candidate's rank as its score, so its order is this one whatever the ties. Without
    ``force_suppress`` and with ``id_index``, each class is its own row of
    NonMaxSuppression's class axis (exact: no coordinate is shifted). The kept rows are
    gathered in rank order, the rest filled with -1, and the result padded to the input's
    shape. ``center`` boxes overlap from their edges ``x -+ w/2``: their areas are
    ``(r - l) * (b - t)`` where MXNet multiplies ``w * h`` (a rounding apart).
    """
    a = node.attrs
    shape, dtype = node.in_shapes[0], np.dtype(node.in_dtypes[0])
    x = node.inputs[0]
    n, width = shape[-2], shape[-1]
    if not n or not width:
        raise cx.unsupported(f"a dynamic box count or width (input shape {shape})")
    if dtype != np.float32:
        raise cx.unsupported(f"{dtype} boxes (ONNX NonMaxSuppression takes float32 only)")
    k = n if a["topk"] < 0 else min(n, a["topk"])
    if k < 1:  # topk=0: the input unchanged
        cx.add("Identity", [x], node.outputs[:1])
        return
    if a["overlap_thresh"] < 0:
        raise cx.unsupported(
            f"overlap_thresh={a['overlap_thresh']} < 0 (ONNX NonMaxSuppression's "
            "iou_threshold lies in [0, 1])"
        )
    classes = a["id_index"] >= 0 and not a["force_suppress"]
    if classes and k > CLASS_AXIS_LIMIT:
        raise cx.unsupported(
            f"per-class suppression (force_suppress=False, id_index={a['id_index']}) of "
            f"{k} candidates: the class axis holds K x K scores, at most "
            f"{CLASS_AXIS_LIMIT} candidates; give topk <= {CLASS_AXIS_LIMIT}"
        )
    x3 = cx.add("Reshape", [x, cx.ints([-1, n, width], "shape")])
    score = _col(cx, x3, a["score_index"])
    valid = cx.add("Greater", [score, cx.const(np.float32(a["valid_thresh"]), hint="valid")])
    if a["id_index"] >= 0:
        ids = _col(cx, x3, a["id_index"])
        bg = cx.const(np.float32(a["background_id"]), hint="background")
        valid = cx.add("And", [valid, cx.add("Not", [cx.add("Equal", [ids, bg])])])
    key = cx.add("Where", [valid, score, cx.const(np.float32(-np.inf), hint="neg_inf")])
    _, order = cx.add("TopK", [key, cx.ints([k], "k")], n_out=2, axis=1, largest=1, sorted=1)
    cand = cx.add("GatherElements", [valid, order], axis=1)  # (B, K)
    cs = a["coord_start"]
    boxes = _rows(cx, _last(cx, x3, cs, cs + 4), order)  # (B, K, 4)
    rank = cx.const((k - np.arange(k)).astype(np.float32), hint="rank")  # distinct, falling
    if classes:
        ids_k = cx.add("GatherElements", [ids, order], axis=1)
        scores = _class_scores(cx, ids_k, rank, cand, k)
    else:
        zero = cx.const(np.float32(0), hint="zero")
        scores = cx.unsqueeze(cx.add("Where", [cand, rank, zero]), [1])
    selected = cx.add(
        "NonMaxSuppression",
        [
            _nms_boxes(cx, boxes, a["in_format"]),
            scores,
            cx.const(np.array([k], np.int64), hint="max_out"),
            cx.const(np.array([min(a["overlap_thresh"], 1.0)], np.float32), hint="iou"),
            cx.const(np.array([0.5], np.float32), hint="score_thresh"),
        ],
        center_point_box=0,
    )  # (M, 3): batch, class, candidate
    where = cx.add("Gather", [selected, cx.ints([0, 2], "cols")], axis=1)
    ones = cx.fill_like(_first_col(cx, selected), 1.0, np.float32)
    zeros = cx.fill_like(order, 0.0, np.float32)
    keep = cx.add("ScatterND", [zeros, where, ones])  # (B, K): 1 where kept
    # kept candidates first, in rank order
    _, perm = cx.add(
        "TopK", [cx.add("Mul", [keep, rank]), cx.ints([k], "k")], n_out=2, axis=1, largest=1
    )
    src = cx.add("GatherElements", [order, perm], axis=1)
    n_keep = cx.reduce("ReduceSum", keep, [1], True)
    live = cx.add("Less", [cx.const(np.arange(k, dtype=np.float32), hint="pos"), n_keep])
    minus = cx.const(np.float32(-1), hint="minus_one")
    out = cx.add("Where", [cx.unsqueeze(live, [2]), _rows(cx, x3, src), minus])
    if a["in_format"] != a["out_format"]:
        out = _reformat(cx, out, live, cs, width, a["out_format"])
    if k < n:
        pads = cx.ints([0, 0, 0, 0, n - k, 0], "pads")
        out = cx.add("Pad", [out, pads, minus], mode="constant")
    cx.add("Reshape", [out, cx.add("Shape", [x])], node.outputs[:1])


def _first_col(cx, sel):
    return cx.add("Gather", [sel, cx.const(np.int64(0), hint="col")], axis=1)


def _reformat(cx, out, live, cs, width, out_format):
    """Re-encode the coordinates of live rows whose first coordinate is >= 0 (MXNet's
    test for a kept row) in ``out_format``."""
    c = [_last(cx, out, cs + i, cs + i + 1) for i in range(4)]
    two = cx.const(np.float32(2), hint="two")
    if out_format == "center":  # corner -> center
        conv = [
            cx.add("Div", [cx.add("Add", [c[0], c[2]]), two]),
            cx.add("Div", [cx.add("Add", [c[1], c[3]]), two]),
            cx.add("Sub", [c[2], c[0]]),
            cx.add("Sub", [c[3], c[1]]),
        ]
    else:  # center -> corner
        hw, hh = cx.add("Div", [c[2], two]), cx.add("Div", [c[3], two])
        conv = [
            cx.add("Sub", [c[0], hw]),
            cx.add("Sub", [c[1], hh]),
            cx.add("Add", [c[0], hw]),
            cx.add("Add", [c[1], hh]),
        ]
    zero = cx.const(np.float32(0), hint="zero")
    todo = cx.add("And", [cx.unsqueeze(live, [2]), cx.add("GreaterOrEqual", [c[0], zero])])
    coords = cx.add("Where", [todo, cx.add("Concat", conv, axis=2), _last(cx, out, cs, cs + 4)])
    parts = [coords]
    if cs > 0:
        parts.insert(0, _last(cx, out, 0, cs))
    if cs + 4 < width:
        parts.append(_last(cx, out, cs + 4, width))
    return cx.add("Concat", parts, axis=2)


@converter("_contrib_box_decode")
def box_decode(cx, node):
    """The registry op's arithmetic on (x, y) and (w, h) pairs: ``xy * std * a_wh + a_xy``,
    ``exp(min(wh * std, clip)) * a_wh * 0.5`` each side; anchors are the first N rows
    of ``anchors`` (``corner`` ones re-encoded as centers first)."""
    a = node.attrs
    data, anchors = node.inputs[:2]
    n = node.in_shapes[0][1]
    if not n:
        raise cx.unsupported(f"a dynamic box count (data shape {node.in_shapes[0]})")
    dtype = np.dtype(node.in_dtypes[0])
    anc = cx.add("Reshape", [anchors, cx.ints([-1, 4], "shape")])
    anc = cx.add("Slice", [anc, cx.ints([0], "starts"), cx.ints([n], "ends"), cx.ints([0], "axes")])
    anc = cx.unsqueeze(anc, [0])  # (1, N, 4)
    half = cx.const(np.asarray(0.5, dtype), hint="half")
    if a["format"] == "corner":
        lt, rb = _last(cx, anc, 0, 2), _last(cx, anc, 2, 4)
        two = cx.const(np.asarray(2, dtype), hint="two")
        a_xy = cx.add("Div", [cx.add("Add", [lt, rb]), two])
        a_wh = cx.add("Sub", [rb, lt])
    else:
        a_xy, a_wh = _last(cx, anc, 0, 2), _last(cx, anc, 2, 4)
    std_xy = cx.const(np.asarray([a["std0"], a["std1"]], dtype), hint="std_xy")
    std_wh = cx.const(np.asarray([a["std2"], a["std3"]], dtype), hint="std_wh")
    xy = cx.add("Mul", [cx.add("Mul", [_last(cx, data, 0, 2), std_xy]), a_wh])
    xy = cx.add("Add", [xy, a_xy])
    d_wh = cx.add("Mul", [_last(cx, data, 2, 4), std_wh])
    if a["clip"] > 0:
        d_wh = cx.add("Min", [d_wh, cx.const(np.asarray(a["clip"], dtype), hint="clip")])
    wh = cx.add("Mul", [cx.add("Mul", [cx.add("Exp", [d_wh]), a_wh]), half])
    cx.add("Concat", [cx.add("Sub", [xy, wh]), cx.add("Add", [xy, wh])], node.outputs, axis=2)


@converter("_contrib_ROIAlign")
def roi_align(cx, node):
    """ONNX RoiAlign, average mode: MXNet's sampling (``sample_ratio <= 0`` is ONNX's
    adaptive 0); ``aligned`` is the -0.5 pixel shift of opset 16's ``half_pixel``
    (``output_half_pixel`` otherwise, RoiAlign-10's only mode). Regions whose batch index
    is outside the batch give zeros, as MXNet."""
    a = node.attrs
    if a["position_sensitive"]:
        raise cx.unsupported("position_sensitive=True (ONNX RoiAlign has no such mode)")
    if a["aligned"] and cx.opset < 16:
        raise cx.unsupported("aligned=True before opset 16 (RoiAlign's half_pixel mode)")
    data, rois = node.inputs[:2]
    ph, pw = a["pooled_size"]
    rshape = node.in_shapes[1]
    if len(rshape) != 2 or rshape[1] not in (4, 5):
        raise cx.fail(f"rois must be (R, 5) [batch, x1, y1, x2, y2], got {rshape}")
    i64 = cx.onnx.TensorProto.INT64
    if rshape[1] == 5:
        batch = cx.add("Cast", [_col2(cx, rois, 0, 1)], to=i64)  # truncated, as MXNet
        boxes = _col2(cx, rois, 1, 5)
    else:
        batch, boxes = None, rois
    if batch is None:  # (R, 4): every region reads image 0
        first = cx.add("Gather", [rois, cx.const(np.int64(0), hint="col")], axis=1)
        safe, inside = cx.fill_like(first, 0, np.int64), None
    else:
        batch = cx.squeeze(batch, [1])
        n_batch = cx.add("Gather", [cx.add("Shape", [data]), cx.ints([0], "axis")])
        zero = cx.const(np.int64(0), hint="zero")
        inside = cx.add(
            "And", [cx.add("GreaterOrEqual", [batch, zero]), cx.add("Less", [batch, n_batch])]
        )
        safe = cx.add("Where", [inside, batch, zero])
    attrs = {
        "mode": "avg",
        "output_height": int(ph),
        "output_width": int(pw),
        "sampling_ratio": max(int(a["sample_ratio"]), 0),
        "spatial_scale": float(a["spatial_scale"]),
    }
    if cx.opset >= 16:
        attrs["coordinate_transformation_mode"] = (
            "half_pixel" if a["aligned"] else "output_half_pixel"
        )
    dtype = np.dtype(node.in_dtypes[0])
    if np.dtype(node.in_dtypes[1]) != dtype:
        boxes = cx.add("Cast", [boxes], to=cx.onnx.helper.np_dtype_to_tensor_dtype(dtype))
    pooled = cx.add("RoiAlign", [data, boxes, safe], **attrs)
    if inside is None:
        cx.add("Identity", [pooled], node.outputs[:1])
        return
    mask = cx.unsqueeze(inside, [1, 2, 3])
    cx.add("Where", [mask, pooled, cx.const(np.zeros((), dtype), hint="zero")], node.outputs[:1])


def _col2(cx, x, start, stop):
    """``x[:, start:stop]`` of a rank-2 tensor."""
    return cx.add(
        "Slice", [x, cx.ints([start], "starts"), cx.ints([stop], "ends"), cx.ints([1], "axes")]
    )

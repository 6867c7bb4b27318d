"""Converters of contrib ops: resizing, adaptive pooling, interleaved attention matmuls."""

from __future__ import annotations

import numpy as np

from ._table import converter


def _static_hw(cx, node, what):
    shape = node.in_shapes[0]
    if len(shape) != 4 or 0 in shape[2:]:
        raise cx.unsupported(f"{what} of a dynamic height or width (input shape {shape})")
    return shape[2], shape[3]


def _resize_sizes(cx, x, oh, ow):
    """The ``sizes`` input of Resize: x's batch and channels, then ``(oh, ow)``."""
    nc = cx.add("Slice", [cx.add("Shape", [x]), cx.ints([0], "starts"), cx.ints([2], "ends")])
    return cx.add("Concat", [nc, cx.ints([oh, ow], "hw")], axis=0)


@converter("_contrib_BilinearResize2D")
def bilinear_resize(cx, node):
    """ONNX Resize, linear; ``align_corners`` is its coordinate mode of that name, and
    MXNet's other mode ``(dst + 0.5) * in / out - 0.5`` clamped at 0 is ``half_pixel``."""
    oh, ow = node.out_shapes[0][2:]
    if not oh or not ow:
        raise cx.unsupported("an output height or width known only at run time")
    x = node.inputs[0]
    if tuple(node.in_shapes[0][2:]) == (oh, ow):
        cx.add("Identity", [x], node.outputs[:1])
        return
    empty = cx.const(np.zeros(0, np.float32), hint="empty")
    roi, scales = (empty, empty) if cx.opset < 13 else ("", "")
    mode = "align_corners" if node.attrs["align_corners"] else "half_pixel"
    cx.add(
        "Resize",
        [x, roi, scales, _resize_sizes(cx, x, oh, ow)],
        node.outputs[:1],
        mode="linear",
        coordinate_transformation_mode=mode,
    )


@converter("_contrib_AdaptiveAvgPooling2D")
def adaptive_avg_pooling(cx, node):
    """GlobalAveragePool for 1x1; AveragePool when the output divides the input; else
    the op's own averaging matrices as two MatMuls (exact for every size)."""
    from .._ops.defs.resize import _avg_matrix

    oh, ow = node.out_shapes[0][2:]
    x, out = node.inputs[0], node.outputs[:1]
    if (oh, ow) == (1, 1):
        cx.add("GlobalAveragePool", [x], out)
        return
    h, w = _static_hw(cx, node, "adaptive pooling to more than 1x1")
    if h % oh == 0 and w % ow == 0:
        kernel = [h // oh, w // ow]
        cx.add("AveragePool", [x], out, kernel_shape=kernel, strides=kernel)
        return
    dtype = node.in_dtypes[0]
    mh = cx.const(_avg_matrix(h, oh).astype(dtype), hint="rows")
    mwt = cx.const(_avg_matrix(w, ow).T.astype(dtype), hint="cols")
    cx.add("MatMul", [cx.add("MatMul", [mh, x]), mwt], out)


def _heads(cx, x, shape, heads, parts):
    """``(seq, batch, heads * parts * d)`` -> ``(parts, batch * heads, seq, d)``."""
    dim = shape[-1]
    if not dim or dim % (heads * parts):
        raise cx.unsupported(f"last axis {dim} that is not a multiple of heads * {parts}")
    d = dim // (heads * parts)
    split = cx.add("Reshape", [x, cx.ints([0, -1, parts, d], "shape")])
    return cx.add("Transpose", [split], perm=[2, 1, 0, 3]), d


def _part(cx, t, k):
    return cx.add("Gather", [t, cx.const(np.int64(k), hint="part")], axis=0)


def _scaled_scores(cx, node, q, k, d):
    from .._ops.defs.attention import _scale

    dtype = node.in_dtypes[0]
    kt = cx.add("Transpose", [k], perm=[0, 2, 1])
    scale = cx.const(np.asarray(_scale(d, np.float32), dtype), hint="scale")
    cx.add("Mul", [cx.add("MatMul", [q, kt]), scale], node.outputs[:1])


def _weighted_values(cx, node, att, v, heads, d):
    """``(b*h, sq, sk) @ (b*h, sk, d)`` -> ``(sq, b, h * d)``."""
    y = cx.add("Transpose", [cx.add("MatMul", [att, v])], perm=[1, 0, 2])
    cx.add("Reshape", [y, cx.ints([0, -1, heads * d], "shape")], node.outputs[:1])


@converter("_contrib_interleaved_matmul_selfatt_qk")
def selfatt_qk(cx, node):
    heads = node.attrs["heads"]
    t, d = _heads(cx, node.inputs[0], node.in_shapes[0], heads, 3)
    _scaled_scores(cx, node, _part(cx, t, 0), _part(cx, t, 1), d)


@converter("_contrib_interleaved_matmul_selfatt_valatt")
def selfatt_valatt(cx, node):
    heads = node.attrs["heads"]
    t, d = _heads(cx, node.inputs[0], node.in_shapes[0], heads, 3)
    _weighted_values(cx, node, node.inputs[1], _part(cx, t, 2), heads, d)


@converter("_contrib_interleaved_matmul_encdec_qk")
def encdec_qk(cx, node):
    heads = node.attrs["heads"]
    tq, d = _heads(cx, node.inputs[0], node.in_shapes[0], heads, 1)
    tkv, _ = _heads(cx, node.inputs[1], node.in_shapes[1], heads, 2)
    _scaled_scores(cx, node, _part(cx, tq, 0), _part(cx, tkv, 0), d)


@converter("_contrib_interleaved_matmul_encdec_valatt")
def encdec_valatt(cx, node):
    heads = node.attrs["heads"]
    t, d = _heads(cx, node.inputs[0], node.in_shapes[0], heads, 2)
    _weighted_values(cx, node, node.inputs[1], _part(cx, t, 1), heads, d)


@converter("Crop")
def crop(cx, node):
    from .._ops.defs.resize import crop_window

    a = node.attrs
    like = node.in_shapes[1] if len(node.in_shapes) > 1 else None
    if 0 in node.in_shapes[0][2:] or (like is not None and 0 in like[2:]):
        raise cx.unsupported("Crop of a dynamic height or width")
    top, left, h, w = crop_window(
        node.in_shapes[0], like, offset=a["offset"], h_w=a["h_w"], center_crop=a["center_crop"]
    )
    cx.add(
        "Slice",
        [
            node.inputs[0],
            cx.ints([top, left], "starts"),
            cx.ints([top + h, left + w], "ends"),
            cx.ints([2, 3], "axes"),
        ],
        node.outputs[:1],
    )


# -- random draws: ONNX Runtime's generator, not MXNet's; the distributions and shapes agree


def _random_shape(cx, node):
    shape = [int(d) for d in node.out_shapes[0]]
    if 0 in shape:
        raise cx.unsupported(f"a random draw of a shape known only at run time ({shape})")
    return shape


def _onnx_type(cx, dtype):
    from ._export import onnx_dtype

    return onnx_dtype(cx.onnx, dtype)


@converter("_random_uniform")
def random_uniform(cx, node):
    a = node.attrs
    cx.add(
        "RandomUniform",
        [],
        node.outputs[:1],
        low=float(a["low"]),
        high=float(a["high"]),
        shape=_random_shape(cx, node),
        dtype=_onnx_type(cx, node.out_dtypes[0]),
    )


@converter("_random_normal")
def random_normal(cx, node):
    a = node.attrs
    cx.add(
        "RandomNormal",
        [],
        node.outputs[:1],
        mean=float(a["loc"]),
        scale=float(a["scale"]),
        shape=_random_shape(cx, node),
        dtype=_onnx_type(cx, node.out_dtypes[0]),
    )


@converter("_random_uniform_like", "_random_normal_like")
def random_like(cx, node):
    a = node.attrs
    if node.op.name == "_random_uniform_like":
        op_type, extra = "RandomUniformLike", dict(low=float(a["low"]), high=float(a["high"]))
    else:
        op_type, extra = "RandomNormalLike", dict(mean=float(a["loc"]), scale=float(a["scale"]))
    cx.add(
        op_type,
        node.inputs[:1],
        node.outputs[:1],
        dtype=_onnx_type(cx, node.out_dtypes[0]),
        **extra,
    )


@converter("_sample_multinomial")
def sample_multinomial(cx, node):
    """ONNX Multinomial draws from the rows of 2-d log-probabilities."""
    a = node.attrs
    if a["get_prob"]:
        raise cx.unsupported("get_prob=True (ONNX Multinomial gives no log-likelihoods)")
    shape, sample = node.in_shapes[0], tuple(a["shape"])
    if len(shape) != 2 or len(sample) > 1:
        raise cx.unsupported(
            f"data of shape {shape} with sample shape {sample} (ONNX Multinomial draws "
            "one axis of samples from 2-d probabilities)"
        )
    n = sample[0] if sample else 1
    probs = node.inputs[0]
    if node.in_dtypes[0] != np.float32:
        probs = cx.add("Cast", [probs], to=cx.onnx.TensorProto.FLOAT)
    out_dtype = np.dtype(node.out_dtypes[0])
    drawn = out_dtype if out_dtype in (np.int32, np.int64) else np.dtype(np.int32)
    draws = cx.add(
        "Multinomial",
        [cx.add("Log", [probs])],
        sample_size=int(n),
        dtype=_onnx_type(cx, drawn),
    )
    if not sample:  # MXNet's empty sample shape: one draw per row, no sample axis
        draws = cx.squeeze(draws, [1])
    if drawn == out_dtype:
        cx.add("Identity", [draws], node.outputs[:1])
    else:
        cx.add("Cast", [draws], node.outputs[:1], to=_onnx_type(cx, out_dtype))


@converter("ROIPooling")
def roi_pooling(cx, node):
    """ONNX MaxRoiPool: Caffe's max pooling of regions, the form MXNet's op computes
    (rounded region corners, bins floor/ceil, empty bins 0)."""
    a = node.attrs
    cx.add(
        "MaxRoiPool",
        node.inputs[:2],
        node.outputs[:1],
        pooled_shape=[int(v) for v in a["pooled_size"]],
        spatial_scale=float(a["spatial_scale"]),
    )

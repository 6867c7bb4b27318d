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

"""Converters of the neural-network layer ops (convolution, pooling, normalization,
activations, softmax)."""

from __future__ import annotations

import numpy as np

from ._table import IGNORED_INPUTS, converter

_ACT = {
    "relu": "Relu",
    "sigmoid": "Sigmoid",
    "tanh": "Tanh",
    "softrelu": "Softplus",
    "softsign": "Softsign",
}


def _spatial(node, key, default):
    n = len(node.attrs["kernel"]) if node.attrs.get("kernel") else len(node.in_shapes[0]) - 2
    value = tuple(node.attrs.get(key) or ())
    return list(value) if value else [default] * n


def _check_layout(cx, node):
    layout = node.attrs.get("layout")
    if layout not in (None, "NCW", "NCHW", "NCDHW"):
        raise cx.unsupported(f"layout {layout!r} (ONNX convolutions and pools are channel-first)")


@converter("Convolution")
def convolution(cx, node):
    _check_layout(cx, node)
    a = node.attrs
    pad = _spatial(node, "pad", 0)
    cx.add(
        "Conv",
        node.inputs[:2] if a["no_bias"] else node.inputs[:3],
        node.outputs,
        kernel_shape=list(a["kernel"]),
        strides=_spatial(node, "stride", 1),
        dilations=_spatial(node, "dilate", 1),
        pads=pad + pad,
        group=a["num_group"],
    )


@converter("Deconvolution")
def deconvolution(cx, node):
    from .._ops.defs.conv import deconv_geometry

    _check_layout(cx, node)
    a = node.attrs
    stride, dilate = _spatial(node, "stride", 1), _spatial(node, "dilate", 1)
    pad, adj = _spatial(node, "pad", 0), _spatial(node, "adj", 0)
    target = tuple(a.get("target_shape") or ())
    if target and any(target):
        in_spatial = node.in_shapes[0][2:]
        if any(d == 0 for d in in_spatial):
            raise cx.unsupported("target_shape with a dynamic spatial axis")
        pad, adj, _ = deconv_geometry(in_spatial, a["kernel"], stride, dilate, pad, adj, target)
        pad, adj = list(pad), list(adj)
    cx.add(
        "ConvTranspose",
        node.inputs[:2] if a["no_bias"] else node.inputs[:3],
        node.outputs,
        kernel_shape=list(a["kernel"]),
        strides=stride,
        dilations=dilate,
        pads=pad + pad,
        output_padding=adj,
        group=a["num_group"],
    )


@converter("FullyConnected")
def fully_connected(cx, node):
    a = node.attrs
    x, w = node.inputs[0], node.inputs[1]
    bias = None if a["no_bias"] else node.inputs[2]
    if a["flatten"]:
        if len(node.in_shapes[0]) != 2:
            x = cx.add("Flatten", [x], axis=1)
        cx.add("Gemm", [x, w] + ([bias] if bias else []), node.outputs, transB=1)
        return
    wt = cx.add("Transpose", [w], perm=[1, 0])
    if bias is None:
        cx.add("MatMul", [x, wt], node.outputs)
    else:
        cx.add("Add", [cx.add("MatMul", [x, wt]), bias], node.outputs)


@converter("Activation")
def activation(cx, node):
    act = node.attrs["act_type"]
    x = node.inputs[0]
    if act in _ACT:
        cx.add(_ACT[act], [x], node.outputs)
    elif act == "log_sigmoid":
        cx.add("Log", [cx.add("Sigmoid", [x])], node.outputs)
    elif act == "mish":
        cx.add("Mul", [x, cx.add("Tanh", [cx.add("Softplus", [x])])], node.outputs)
    else:
        raise cx.unsupported(f"act_type {act!r}")


@converter("relu", "sigmoid", "tanh", "softsign")
def unary_activation(cx, node):
    name = node.op.name
    cx.add(
        {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "softsign": "Softsign"}[name],
        node.inputs[:1],
        node.outputs,
    )


@converter("LeakyReLU")
def leaky_relu(cx, node):
    from .._ops.defs.nn import _prelu_gamma_shape

    a = node.attrs
    act, x, out = a["act_type"], node.inputs[0], node.outputs[:1]
    dtype = node.in_dtypes[0]
    if act == "leaky":
        cx.add("LeakyRelu", [x], out, alpha=float(a["slope"]))
    elif act == "rrelu":
        slope = (a["lower_bound"] + a["upper_bound"]) / 2
        cx.add("LeakyRelu", [x], out, alpha=float(slope))
        if len(node.outputs) > 1:  # the mask output: the slope everywhere
            cx.fill_like(x, slope, dtype, node.outputs[1])
    elif act == "elu":
        cx.add("Elu", [x], out, alpha=float(a["slope"]))
    elif act == "selu":
        cx.add("Selu", [x], out, alpha=1.6732632423543772, gamma=1.0507009873554805)
    elif act == "gelu":
        if cx.opset >= 20:
            cx.add("Gelu", [x], out)
        else:
            half = cx.add("Mul", [x, cx.const(0.5, dtype)])
            erf = cx.add("Erf", [cx.add("Div", [x, cx.const(np.sqrt(2.0), dtype)])])
            cx.add("Mul", [half, cx.add("Add", [erf, cx.const(1.0, dtype)])], out)
    elif act == "prelu":
        shape = _prelu_gamma_shape(
            np.zeros(node.in_shapes[1]), np.zeros([max(d, 1) for d in node.in_shapes[0]])
        )
        gamma = cx.add("Reshape", [node.inputs[1], cx.ints(shape, "shape")])
        cx.add("PRelu", [x, gamma], out)
    else:
        raise cx.unsupported(f"act_type {act!r}")


@converter("BatchNorm")
def batch_norm(cx, node):
    a = node.attrs
    if a["axis"] not in (1, -len(node.in_shapes[0]) + 1):
        raise cx.unsupported(f"axis={a['axis']} (ONNX normalizes axis 1)")
    if a["output_mean_var"]:
        raise cx.unsupported("output_mean_var=True")
    x, gamma, beta, mean, var = node.inputs[:5]
    if a["fix_gamma"]:  # gamma is taken as ones, whatever it holds
        gamma = cx.const(np.ones(node.in_shapes[1], node.in_dtypes[1]), hint="gamma")
    cx.add(
        "BatchNormalization",
        [x, gamma, beta, mean, var],
        node.outputs[:1],
        epsilon=float(a["eps"]),
        momentum=float(a["momentum"]),
    )


@converter("Pooling")
def pooling(cx, node):
    _check_layout(cx, node)
    a = node.attrs
    kind, x, out = a["pool_type"], node.inputs[0], node.outputs
    if kind not in ("max", "avg", "lp", "sum"):
        raise cx.unsupported(f"pool_type {kind!r}")
    if a["global_pool"]:
        if kind == "sum":
            axes = list(range(2, len(node.in_shapes[0])))
            cx.reduce("ReduceSum", x, axes, True, out[0])
        elif kind == "lp":
            cx.add("GlobalLpPool", [x], out, p=int(a["p_value"] or 2))
        else:
            cx.add({"max": "GlobalMaxPool", "avg": "GlobalAveragePool"}[kind], [x], out)
        return
    conv = a["pooling_convention"]
    if conv not in ("valid", "full"):
        raise cx.unsupported(f"pooling_convention {conv!r} (ONNX has 'valid' and 'full')")
    pad = _spatial(node, "pad", 0)
    common = dict(
        kernel_shape=list(a["kernel"]), strides=_spatial(node, "stride", 1), pads=pad + pad
    )
    if kind == "lp":
        cx.add("LpPool", [x], out, p=int(a["p_value"] or 2), **common)
        return
    if kind == "sum":  # the windows' sums, zero padding and overflow adding nothing
        _avg_full_padded(cx, node, x, list(a["kernel"]), common["strides"], pad, divide=False)
        return
    common["ceil_mode"] = int(conv == "full")
    if kind == "max":
        cx.add("MaxPool", [x], out, **common)
        return
        return
    include = a["count_include_pad"] is None or a["count_include_pad"]
    if include and conv == "full":
        if any(pad):  # MXNet counts the padding but not what a last window runs past
            _avg_full_padded(cx, node, x, list(a["kernel"]), common["strides"], pad)
            return
        include = False  # nothing but the overflow to exclude
    cx.add("AveragePool", [x], out, count_include_pad=int(include), **common)


def _avg_full_padded(cx, node, x, kernel, stride, pad, divide=True):
    """MXNet's average pool, 'full' convention, padding counted: a sum by a depthwise
    convolution with ones over the padded input, divided by MXNet's window sizes (ONNX's
    ceil_mode counts the overflow of a last window too; ONNX Runtime 1.20 fuses an explicit
    Pad into AveragePool whatever its count_include_pad)."""
    in_shape = node.in_shapes[0]
    spatial, channels = list(in_shape[2:]), in_shape[1]
    if channels == 0 or 0 in spatial:
        raise cx.unsupported("sum pooling or 'full' padded average pooling of dynamic axes")
    outs = list(node.out_shapes[0][2:])
    extra = [
        (o - 1) * s + k - (n + 2 * p) for o, s, k, n, p in zip(outs, stride, kernel, spatial, pad)
    ]
    extra = [max(e, 0) for e in extra]
    zero = [0, 0]
    padded = cx.add(
        "Pad",
        [x, cx.ints(zero + pad + zero + [p + e for p, e in zip(pad, extra)], "pads")],
        mode="constant",
    )
    dtype = node.in_dtypes[0]
    ones = cx.const(np.ones([channels, 1] + kernel, dtype), hint="ones")
    if not divide:
        cx.add(
            "Conv",
            [padded, ones],
            node.outputs,
            kernel_shape=kernel,
            strides=stride,
            group=channels,
        )
        return
    total = cx.add("Conv", [padded, ones], kernel_shape=kernel, strides=stride, group=channels)
    counts = np.ones(outs, dtype)
    for axis, (o, s, k, n, p) in enumerate(zip(outs, stride, kernel, spatial, pad)):
        start = np.arange(o) * s - p
        size = np.minimum(start + k, n + p) - start
        counts = counts * size.reshape([-1 if i == axis else 1 for i in range(len(outs))])
    cx.add("Div", [total, cx.const(counts, dtype, hint="counts")], node.outputs)


@converter("Dropout", "BlockGrad", "_copy")
def identity(cx, node):
    cx.add("Identity", node.inputs[:1], node.outputs[:1])
    if len(node.outputs) > 1:  # Dropout's mask at inference: ones
        cx.fill_like(node.inputs[0], 1, node.in_dtypes[0], node.outputs[1])


def _softmax(cx, node, op_type):
    a = node.attrs
    x = node.inputs[0]
    dtype = node.in_dtypes[0]
    if a.get("temperature") not in (None, 1.0):
        x = cx.add("Div", [x, cx.const(a["temperature"], dtype)])
    rank = len(node.in_shapes[0])
    axis = a["axis"] % rank if rank else 0
    out = node.outputs[:1]
    keep = None
    if a.get("use_length"):  # positions at or past the length: excluded, and 0 out
        size = node.in_shapes[0][axis]
        if size == 0:
            raise cx.unsupported("use_length along a dynamic axis")
        steps = np.arange(size, dtype=np.int64).reshape(
            [size if i == axis else 1 for i in range(rank)]
        )
        length = cx.add("Cast", [node.inputs[1]], to=cx.onnx.TensorProto.INT64)
        keep = cx.add("Less", [cx.const(steps, hint="steps"), cx.unsqueeze(length, [axis])])
        x = cx.add("Where", [keep, x, cx.const(-np.inf, dtype, hint="minus_inf")])
        out = [cx.fresh("unmasked")]
    if a.get("dtype") is not None and np.dtype(a["dtype"]) != np.dtype(dtype):
        out = [cx.fresh("pre_cast")]
    if cx.opset >= 13 or axis == rank - 1:
        cx.add(op_type, [x], out, axis=axis)
    else:  # opset 12's Softmax flattens to 2-D at axis: move the axis last
        perm = [i for i in range(rank) if i != axis] + [axis]
        back = [perm.index(i) for i in range(rank)]
        y = cx.add(op_type, [cx.add("Transpose", [x], perm=perm)], axis=rank - 1)
        cx.add("Transpose", [y], out, perm=back)
    if keep is not None:
        zero = cx.const(0, dtype)
        final = node.outputs[0] if a.get("dtype") is None else cx.fresh("masked")
        masked = cx.add("Where", [keep, out[0], zero], final)
        out = [masked]
    if out != node.outputs[:1]:
        cast(cx, out[0], a["dtype"], node.outputs[0])


def cast(cx, x, dtype, out=None):
    from ._export import onnx_dtype

    return cx.add("Cast", [x], out, to=onnx_dtype(cx.onnx, dtype))


@converter("softmax")
def softmax(cx, node):
    _softmax(cx, node, "Softmax")


@converter("log_softmax")
def log_softmax(cx, node):
    _softmax(cx, node, "LogSoftmax")


IGNORED_INPUTS["SoftmaxOutput"] = (1,)  # the label is no input of the inference graph


@converter("SoftmaxOutput")
def softmax_output(cx, node):
    a = node.attrs
    x, shape = node.inputs[0], node.in_shapes[0]
    if a["multi_output"]:
        axis = 1
    elif a["preserve_shape"] or len(shape) <= 2:
        axis = len(shape) - 1
    else:  # softmax over everything but the batch axis, in the input's shape
        flat = cx.add("Softmax", [cx.add("Flatten", [x], axis=1)], axis=1)
        cx.add("Reshape", [flat, cx.add("Shape", [x])], node.outputs[:1])
        return
    node.attrs = {"axis": axis}
    _softmax(cx, node, "Softmax")


@converter("LRN")
def lrn(cx, node):
    a = node.attrs
    cx.add(
        "LRN",
        node.inputs[:1],
        node.outputs,
        size=int(a["nsize"]),
        alpha=float(a["alpha"]),
        beta=float(a["beta"]),
        bias=float(a["knorm"]),
    )

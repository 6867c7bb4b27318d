"""The ONNX op importers: each ONNX op in terms of registry ops."""

from __future__ import annotations

from ... import symbol as S
from ._import import importer


def _name(node):
    return (node.name or node.output[0]).replace("/", "_")


def _pads(g, attrs, n):
    if attrs.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise g.fail(f"auto_pad={attrs['auto_pad']!r} (write explicit pads)")
    pads = list(attrs.get("pads", [0] * (2 * n)))
    if pads[:n] != pads[n:]:
        raise g.fail(f"asymmetric pads {pads}")
    return tuple(pads[:n])


def _spatial(g, node, attrs):
    kernel = tuple(attrs["kernel_shape"])
    n = len(kernel)
    return dict(
        kernel=kernel,
        stride=tuple(attrs.get("strides", [1] * n)),
        pad=_pads(g, attrs, n),
    ), n


@importer("Conv")
def conv(g, node):
    a = g.attrs(node)
    w = g.need_shape(node.input[1], "the weight")
    if "kernel_shape" not in a:
        a["kernel_shape"] = list(w[2:])
    kw, n = _spatial(g, node, a)
    has_bias = len(node.input) > 2 and node.input[2]
    return S.Convolution(
        g.sym(node.input[0]),
        g.sym(node.input[1]),
        g.sym(node.input[2]) if has_bias else None,
        dilate=tuple(a.get("dilations", [1] * n)),
        num_filter=int(w[0]),
        num_group=int(a.get("group", 1)),
        no_bias=not has_bias,
        name=_name(node),
        **kw,
    )


@importer("ConvTranspose")
def conv_transpose(g, node):
    a = g.attrs(node)
    w = g.need_shape(node.input[1], "the weight")
    if "kernel_shape" not in a:
        a["kernel_shape"] = list(w[2:])
    if "output_shape" in a:
        raise g.fail("output_shape (give pads and output_padding)")
    kw, n = _spatial(g, node, a)
    group = int(a.get("group", 1))
    has_bias = len(node.input) > 2 and node.input[2]
    return S.Deconvolution(
        g.sym(node.input[0]),
        g.sym(node.input[1]),
        g.sym(node.input[2]) if has_bias else None,
        dilate=tuple(a.get("dilations", [1] * n)),
        adj=tuple(a.get("output_padding", [0] * n)),
        num_filter=int(w[1]) * group,
        num_group=group,
        no_bias=not has_bias,
        name=_name(node),
        **kw,
    )


@importer("Gemm")
def gemm(g, node):
    a = g.attrs(node)
    if a.get("transA", 0) or a.get("alpha", 1.0) != 1.0 or a.get("beta", 1.0) != 1.0:
        raise g.fail("Gemm with transA, alpha or beta other than 0, 1, 1")
    x, w = g.sym(node.input[0]), g.sym(node.input[1])
    has_bias = len(node.input) > 2 and node.input[2]
    wshape = g.need_shape(node.input[1], "the weight")
    if not a.get("transB", 0):
        w = S.transpose(w)
        hidden = wshape[1]
    else:
        hidden = wshape[0]
    bias = g.sym(node.input[2]) if has_bias else None
    bv = g.const(node.input[2]) if has_bias else None
    if bv is not None and bv.shape != (hidden,):
        raise g.fail(f"a bias of shape {bv.shape} (FullyConnected takes ({hidden},))")
    return S.FullyConnected(
        x, w, bias, num_hidden=int(hidden), no_bias=not has_bias, flatten=True, name=_name(node)
    )


@importer("MatMul")
def matmul(g, node):
    ra, rb = g.rank(node.input[0]), g.rank(node.input[1])
    a, b = g.sym(node.input[0]), g.sym(node.input[1])
    if ra == 2 and rb == 2:
        return S.dot(a, b, name=_name(node))
    if ra == rb == 3:
        return S.batch_dot(a, b, name=_name(node))
    if rb == 2:  # (..., k) x (k, n)
        return S.FullyConnected(
            a,
            S.transpose(b),
            num_hidden=_cols(g, node),
            no_bias=True,
            flatten=False,
            name=_name(node),
        )
    # any other ranks: NumPy's matmul, broadcasting the leading axes
    return S._internal._npi_matmul(a, b, name=_name(node))


def _cols(g, node):
    return int(g.need_shape(node.input[1], "the right operand")[1])


@importer("BatchNormalization")
def batch_norm(g, node):
    a = g.attrs(node)
    if a.get("training_mode", 0):
        raise g.fail("training_mode=1")
    ins = [g.sym(n) for n in node.input[:5]]
    return S.BatchNorm(
        *ins,
        eps=float(a.get("epsilon", 1e-5)),
        momentum=float(a.get("momentum", 0.9)),
        fix_gamma=False,
        use_global_stats=True,
        name=_name(node),
    )


_ACT = {
    "Relu": "relu",
    "Sigmoid": "sigmoid",
    "Tanh": "tanh",
    "Softplus": "softrelu",
    "Softsign": "softsign",
}


@importer(*_ACT)
def activation(g, node):
    return S.Activation(g.sym(node.input[0]), act_type=_ACT[node.op_type], name=_name(node))


@importer("Gelu")
def gelu(g, node):
    if g.attrs(node).get("approximate", b"none") not in (b"none", "none"):
        raise g.fail("approximate='tanh' (MXNet's gelu is the erf form)")
    return S.LeakyReLU(g.sym(node.input[0]), act_type="gelu", name=_name(node))


@importer("LeakyRelu", "Elu", "Selu")
def leaky(g, node):
    a = g.attrs(node)
    x = g.sym(node.input[0])
    if node.op_type == "LeakyRelu":
        return S.LeakyReLU(x, act_type="leaky", slope=float(a.get("alpha", 0.01)), name=_name(node))
    if node.op_type == "Elu":
        return S.LeakyReLU(x, act_type="elu", slope=float(a.get("alpha", 1.0)), name=_name(node))
    return S.LeakyReLU(x, act_type="selu", name=_name(node))


@importer("PRelu")
def prelu(g, node):
    slope = g.need_shape(node.input[1], "the slope")
    gamma = S.reshape(g.sym(node.input[1]), shape=(-1,))
    if sum(d != 1 for d in slope) > 1:
        raise g.fail(f"a slope of shape {slope} (one per channel)")
    return S.LeakyReLU(g.sym(node.input[0]), gamma, act_type="prelu", name=_name(node))


@importer("MaxPool", "AveragePool")
def pool(g, node):
    a = g.attrs(node)
    if node.op_type == "MaxPool" and (
        len(node.output) > 1 or a.get("dilations", [1]) != [1] * len(a.get("dilations", [1]))
    ):
        raise g.fail("MaxPool with indices or dilations")
    kw, _ = _spatial(g, node, a)
    extra = {}
    if node.op_type == "AveragePool":
        extra["count_include_pad"] = bool(a.get("count_include_pad", 0))
    return S.Pooling(
        g.sym(node.input[0]),
        pool_type="max" if node.op_type == "MaxPool" else "avg",
        pooling_convention="full" if a.get("ceil_mode", 0) else "valid",
        name=_name(node),
        **kw,
        **extra,
    )


@importer("GlobalMaxPool", "GlobalAveragePool")
def global_pool(g, node):
    kind = "max" if node.op_type == "GlobalMaxPool" else "avg"
    return S.Pooling(
        g.sym(node.input[0]), pool_type=kind, global_pool=True, kernel=(1, 1), name=_name(node)
    )


@importer("MaxRoiPool")
def max_roi_pool(g, node):
    a = g.attrs(node)
    return S.ROIPooling(
        g.sym(node.input[0]),
        g.sym(node.input[1]),
        pooled_size=tuple(int(v) for v in a["pooled_shape"]),
        spatial_scale=float(a.get("spatial_scale", 1.0)),
        name=_name(node),
    )


@importer("LpPool", "GlobalLpPool")
def lp_pool(g, node):
    a = g.attrs(node)
    p = int(a.get("p", 2))
    x = g.sym(node.input[0])
    if node.op_type == "GlobalLpPool":
        return S.Pooling(
            x, pool_type="lp", p_value=p, global_pool=True, kernel=(1, 1), name=_name(node)
        )
    if a.get("ceil_mode", 0) or a.get("dilations", [1]) != [1] * len(a.get("dilations", [1])):
        raise g.fail("LpPool with ceil_mode or dilations")
    kw, _ = _spatial(g, node, a)
    return S.Pooling(x, pool_type="lp", p_value=p, name=_name(node), **kw)

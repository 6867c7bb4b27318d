"""gluon.nn convolution, pooling and padding layers.

Shapes, deferred in_channels, parameter names, eager vs hybridized, NumPy references,
and agreement with real MXNet 1.9.1 (fixtures from ``tools/make_layer_fixtures.py``).
"""

import layer_fixtures as lf
import numpy as np
import pytest
from layer_refs import np_conv, np_deconv, np_pool

import gluonjax as mx
from gluonjax.base import MXNetError
from gluonjax.gluon import nn

RNG = np.random.default_rng(0)
FAMILIES = {"conv.npz", "deconv.npz", "pool.npz", "pad.npz"}


def rand(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


def to_last(a):
    return np.moveaxis(a, 1, -1)


def to_first(a):
    return np.moveaxis(a, -1, 1)


def run(layer, x, hybridize=False):
    layer.initialize()
    if hybridize:
        layer.hybridize()
    return layer(mx.nd.array(x)).asnumpy()


# ----------------------------------------------------------------------------- vs MXNet 1.9.1
@pytest.mark.parametrize("record", lf.cases(FAMILIES), ids=lambda r: r["id"])
def test_repr_and_params_vs_mxnet(record):
    lf.check_repr_and_params(record)


@pytest.mark.parametrize("hybridize", [False, True], ids=["eager", "hybrid"])
@pytest.mark.parametrize("record", lf.cases(FAMILIES), ids=lambda r: r["id"])
def test_values_and_grads_vs_mxnet(record, hybridize):
    lf.check_values(record, hybridize)


def test_sequential_names_and_repr_vs_mxnet():
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(
            nn.Conv2D(4, 3, activation="relu"),
            nn.MaxPool2D(),
            nn.Conv2DTranspose(2, 3, use_bias=False),
            nn.PReLU(in_channels=2),
            nn.GlobalAvgPool2D(),
            nn.Conv1D(3, 1),
            nn.ELU(),
        )
    # names, shapes and repr as printed by MXNet 1.9.1 for the same net
    assert list(net.collect_params().keys()) == [
        "net_conv0_weight",
        "net_conv0_bias",
        "net_conv1_weight",
        "net_prelu0_alpha",
        "net_conv2_weight",
        "net_conv2_bias",
    ]
    assert {k: v.shape for k, v in net._collect_params_with_prefix().items()} == {
        "0.weight": (4, 0, 3, 3),
        "0.bias": (4,),
        "2.weight": (0, 2, 3, 3),
        "3.alpha": (2,),
        "5.weight": (3, 0, 1),
        "5.bias": (3,),
    }
    assert net[0].act.prefix == "net_conv0_relu_"
    assert repr(net) == (
        "HybridSequential(\n"
        "  (0): Conv2D(None -> 4, kernel_size=(3, 3), stride=(1, 1), Activation(relu))\n"
        "  (1): MaxPool2D(size=(2, 2), stride=(2, 2), padding=(0, 0), ceil_mode=False, "
        "global_pool=False, pool_type=max, layout=NCHW)\n"
        "  (2): Conv2DTranspose(2 -> 0, kernel_size=(3, 3), stride=(1, 1), bias=False)\n"
        "  (3): PReLU(\n  \n  )\n"
        "  (4): GlobalAvgPool2D(size=(1, 1), stride=(1, 1), padding=(0, 0), ceil_mode=True, "
        "global_pool=True, pool_type=avg, layout=NCHW)\n"
        "  (5): Conv1D(None -> 3, kernel_size=(1,), stride=(1,))\n"
        "  (6): ELU(\n  \n  )\n)"
    )
    net.initialize()
    x = rand(1, 3, 8, 8)
    eager = net[:5](mx.nd.array(x)).asnumpy()
    assert eager.shape == (1, 2, 1, 1)
    assert net[0].weight.shape == (4, 3, 3, 3) and net[2].weight.shape == (4, 2, 3, 3)
    net.hybridize()
    np.testing.assert_allclose(net[:5](mx.nd.array(x)).asnumpy(), eager, rtol=1e-5, atol=1e-6)


def test_symbol_graph_names_vs_mxnet():
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(
            nn.ReflectionPad2D(1),
            nn.Conv2D(4, 3, activation="relu"),
            nn.MaxPool2D(),
            nn.Conv2DTranspose(2, 3, use_bias=False),
            nn.PReLU(in_channels=2),
            nn.GlobalAvgPool2D(),
            nn.Swish(),
            nn.ELU(),
            nn.SELU(),
            nn.GELU(),
            nn.LeakyReLU(0.1),
        )
    y = net(mx.sym.var("data"))
    assert y.infer_shape(data=(1, 3, 8, 8))[1] == [(1, 2, 1, 1)]
    # node names as listed by MXNet 1.9.1 for the same net
    assert y.get_internals().list_outputs() == [
        "data",
        "net_reflectionpad2d0_pad0_output",
        "net_conv0_weight",
        "net_conv0_bias",
        "net_conv0_fwd_output",
        "net_conv0_relu_fwd_output",
        "net_pool0_fwd_output",
        "net_conv1_weight",
        "net_conv1_fwd_output",
        "net_prelu0_alpha",
        "net_prelu0_fwd_output",
        "net_pool1_fwd_output",
        "net_swish0__mulscalar0_output",
        "net_swish0_fwd_output",
        "net_swish0__mul0_output",
        "net_elu0_leakyrelu0_output",
        "net_selu0_fwd_output",
        "net_gelu0_fwd_output",
        "net_leakyrelu0_fwd_output",
    ]


# ----------------------------------------------------------------------------- NumPy references
CONV_CASES = [  # (nd, kwargs, input spatial)
    (1, dict(channels=4, kernel_size=3, strides=2, padding=1, dilation=2), (9,)),
    (2, dict(channels=4, kernel_size=(3, 2), strides=(1, 2), padding=(1, 0), groups=2), (6, 7)),
    (2, dict(channels=2, kernel_size=1, use_bias=False), (3, 4)),
    (3, dict(channels=2, kernel_size=2, dilation=(1, 2, 1), padding=1), (3, 5, 4)),
]


def _conv_args(nd, kw):
    def tup(v):
        return (v,) * nd if isinstance(v, int) else tuple(v)

    return (
        tup(kw.get("strides", 1)),
        tup(kw.get("padding", 0)),
        tup(kw.get("dilation", 1)),
        kw.get("groups", 1),
    )


def _layouts(cases):
    """(case..., channels_last) combinations; 1-D layers only have NCW (as MXNet)."""
    return [
        pytest.param(*c, last, id=f"{i}-{'NxC' if last else 'NC'}")
        for i, c in enumerate(cases)
        for last in (False, True)
        if not (last and c[0] == 1)
    ]


@pytest.mark.parametrize("nd,kw,spatial,channels_last", _layouts(CONV_CASES))
def test_conv_vs_numpy(nd, kw, spatial, channels_last):
    cls = getattr(nn, f"Conv{nd}D")
    layout = {2: "NHWC", 3: "NDHWC"}[nd] if channels_last else None
    layer = cls(**kw, **({"layout": layout} if layout else {}), bias_initializer="ones")
    x = rand(2, 4, *spatial)
    y = run(layer, to_last(x) if channels_last else x)
    w = layer.weight.data().asnumpy()
    w = to_first(w) if channels_last else w
    b = layer.bias.data().asnumpy() if layer.bias is not None else None
    ref = np_conv(x, w, b, *_conv_args(nd, kw))
    np.testing.assert_allclose(to_first(y) if channels_last else y, ref, rtol=1e-4, atol=1e-5)


DECONV_CASES = [  # (nd, kwargs, input spatial)
    (1, dict(channels=3, kernel_size=3, strides=2, padding=1, output_padding=1), (5,)),
    (
        2,
        dict(
            channels=4,
            kernel_size=(3, 2),
            strides=(2, 3),
            padding=(1, 0),
            output_padding=(1, 2),
            dilation=(2, 1),
            groups=2,
        ),
        (3, 4),
    ),
    (3, dict(channels=2, kernel_size=2, strides=2, use_bias=False), (2, 3, 2)),
]


@pytest.mark.parametrize("nd,kw,spatial,channels_last", _layouts(DECONV_CASES))
def test_deconv_vs_numpy(nd, kw, spatial, channels_last):
    cls = getattr(nn, f"Conv{nd}DTranspose")
    layout = {2: "NHWC", 3: "NDHWC"}[nd] if channels_last else None
    layer = cls(**kw, **({"layout": layout} if layout else {}), bias_initializer="ones")
    x = rand(2, 4, *spatial)
    y = run(layer, to_last(x) if channels_last else x)
    w = layer.weight.data().asnumpy()
    w = to_first(w) if channels_last else w
    b = layer.bias.data().asnumpy() if layer.bias is not None else None
    stride, pad, dilate, groups = _conv_args(nd, kw)
    adj = _conv_args(nd, {"padding": kw.get("output_padding", 0)})[1]
    ref = np_deconv(x, w, b, stride, pad, dilate, adj, groups)
    np.testing.assert_allclose(to_first(y) if channels_last else y, ref, rtol=1e-4, atol=1e-5)


POOL_CASES = [  # (nd, kwargs, input spatial)
    (1, dict(pool_size=3, strides=2, padding=1), (8,)),
    (1, dict(pool_size=2, ceil_mode=True), (7,)),
    (2, dict(), (6, 5)),
    (2, dict(pool_size=(3, 2), strides=(2, 1), padding=(1, 1), ceil_mode=True), (7, 6)),
    (3, dict(pool_size=3, strides=2, padding=1), (5, 6, 5)),
]


@pytest.mark.parametrize("kind", ["Max", "Avg", "AvgNoPad"])
@pytest.mark.parametrize("channels_last", [False, True], ids=["NC", "NxC"])
@pytest.mark.parametrize("nd,kw,spatial", POOL_CASES)
def test_pool_vs_numpy(nd, kw, spatial, channels_last, kind):
    extra = {"count_include_pad": False} if kind == "AvgNoPad" else {}
    if channels_last:
        extra["layout"] = {1: "NWC", 2: "NHWC", 3: "NDHWC"}[nd]
    layer = getattr(nn, f"{kind[:3]}Pool{nd}D")(**kw, **extra)
    x = rand(2, 3, *spatial)
    y = run(layer, to_last(x) if channels_last else x)
    k = kw.get("pool_size", 2)
    k = (k,) * nd if isinstance(k, int) else k
    s = kw.get("strides", k)
    s = (s,) * nd if isinstance(s, int) else s
    p = kw.get("padding", 0)
    p = (p,) * nd if isinstance(p, int) else p
    ref = np_pool(x, k, s, p, kind[:3].lower(), kw.get("ceil_mode", False), kind != "AvgNoPad")
    np.testing.assert_allclose(to_first(y) if channels_last else y, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("channels_last", [False, True], ids=["NC", "NxC"])
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("kind", ["Max", "Avg"])
def test_global_pool_vs_numpy(kind, nd, channels_last):
    layout = {1: "NWC", 2: "NHWC", 3: "NDHWC"}[nd] if channels_last else None
    layer = getattr(nn, f"Global{kind}Pool{nd}D")(**({"layout": layout} if layout else {}))
    x = rand(2, 3, *(4, 3, 5)[:nd])
    y = run(layer, to_last(x) if channels_last else x)
    axes = tuple(range(2, 2 + nd))
    ref = x.max(axes, keepdims=True) if kind == "Max" else x.mean(axes, keepdims=True)
    np.testing.assert_allclose(to_first(y) if channels_last else y, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "padding,widths",
    [
        (1, [(0, 0), (0, 0), (1, 1), (1, 1)]),
        (2, [(0, 0), (0, 0), (2, 2), (2, 2)]),
        ((0, 0, 0, 0, 1, 2, 3, 0), [(0, 0), (0, 0), (1, 2), (3, 0)]),
    ],
)
def test_reflection_pad_vs_numpy(padding, widths):
    x = rand(2, 3, 4, 5)
    layer = nn.ReflectionPad2D(padding)
    ref = np.pad(x, widths, mode="reflect")
    np.testing.assert_array_equal(run(layer, x), ref)
    layer.hybridize()
    np.testing.assert_array_equal(layer(mx.nd.array(x)).asnumpy(), ref)


# ----------------------------------------------------------------------------- shapes / init
def _conv_size(x, k, s, p, d):
    return (x + 2 * p - d * (k - 1) - 1) // s + 1


def _deconv_size(x, k, s, p, d, a):
    return (x - 1) * s - 2 * p + d * (k - 1) + a + 1


SHAPE_CASES = [
    (lambda: nn.Conv1D(5, 3), (2, 3, 10), (2, 5, _conv_size(10, 3, 1, 0, 1))),
    (lambda: nn.Conv1D(6, 4, 3, 2, 2, groups=3), (1, 3, 11), (1, 6, _conv_size(11, 4, 3, 2, 2))),
    (
        lambda: nn.Conv2D(2, (3, 1), (2, 1), (0, 1)),
        (2, 3, 9, 4),
        (2, 2, _conv_size(9, 3, 2, 0, 1), _conv_size(4, 1, 1, 1, 1)),
    ),
    (lambda: nn.Conv2D(2, 3, layout="NHWC"), (1, 6, 7, 3), (1, 4, 5, 2)),
    (lambda: nn.Conv3D(2, 2, 2), (1, 1, 5, 6, 7), (1, 2, 2, 3, 3)),
    (lambda: nn.Conv1DTranspose(3, 4, 3, 1, 2), (2, 2, 5), (2, 3, _deconv_size(5, 4, 3, 1, 1, 2))),
    (
        lambda: nn.Conv2DTranspose(2, 3, 2, 1, 1),
        (1, 4, 3, 5),
        (1, 2, _deconv_size(3, 3, 2, 1, 1, 1), _deconv_size(5, 3, 2, 1, 1, 1)),
    ),
    (lambda: nn.Conv3DTranspose(2, 2, 2, layout="NDHWC"), (1, 2, 3, 4, 3), (1, 4, 6, 8, 2)),
    (lambda: nn.MaxPool1D(3, 2, ceil_mode=True), (1, 2, 8), (1, 2, 4)),
    (lambda: nn.MaxPool2D(3, 2, 1), (1, 2, 7, 8), (1, 2, 4, 4)),
    (lambda: nn.AvgPool2D(2, layout="NHWC"), (1, 7, 6, 3), (1, 3, 3, 3)),
    (lambda: nn.AvgPool3D(3, 2, ceil_mode=True), (1, 1, 6, 7, 8), (1, 1, 3, 3, 4)),
    (lambda: nn.MaxPool3D(), (1, 1, 4, 5, 6), (1, 1, 2, 2, 3)),
    (lambda: nn.GlobalMaxPool1D(), (2, 3, 7), (2, 3, 1)),
    (lambda: nn.GlobalAvgPool3D(layout="NDHWC"), (2, 3, 4, 5, 6), (2, 1, 1, 1, 6)),
    (lambda: nn.ReflectionPad2D(2), (1, 2, 3, 4), (1, 2, 7, 8)),
]


@pytest.mark.parametrize("make,shape,expected", SHAPE_CASES)
def test_output_shapes(make, shape, expected):
    assert run(make(), rand(*shape)).shape == expected


@pytest.mark.parametrize(
    "make,xshape,before,after",
    [
        (lambda: nn.Conv2D(4, 3), (1, 6, 5, 5), (4, 0, 3, 3), (4, 6, 3, 3)),
        (lambda: nn.Conv2D(4, 3, groups=2), (1, 6, 5, 5), (4, 0, 3, 3), (4, 3, 3, 3)),
        (lambda: nn.Conv2D(4, 3, layout="NHWC"), (1, 5, 5, 6), (4, 3, 3, 0), (4, 3, 3, 6)),
        (lambda: nn.Conv1DTranspose(4, 3), (1, 6, 5), (0, 4, 3), (6, 4, 3)),
        (lambda: nn.Conv2DTranspose(4, 3, groups=2), (1, 6, 5, 5), (0, 2, 3, 3), (6, 2, 3, 3)),
        (
            lambda: nn.Conv3D(2, 1, layout="NDHWC"),
            (1, 2, 2, 2, 5),
            (2, 1, 1, 1, 0),
            (2, 1, 1, 1, 5),
        ),
    ],
)
def test_deferred_in_channels(make, xshape, before, after):
    layer = make()
    assert layer.weight.shape == before
    layer.initialize()
    with pytest.raises(MXNetError):
        layer.weight.data()  # deferred until the first forward
    layer(mx.nd.array(rand(*xshape)))
    assert layer.weight.shape == after and layer.weight.data().shape == after
    assert layer.bias.shape == (layer._channels,)


def test_explicit_in_channels():
    layer = nn.Conv2D(4, 3, in_channels=6, groups=2)
    assert layer.weight.shape == (4, 3, 3, 3)
    layer.initialize()
    assert layer.weight.data().shape == (4, 3, 3, 3)  # no forward needed
    with pytest.raises(MXNetError):
        layer(mx.nd.array(rand(1, 5, 5, 5)))  # 5 input channels, 6 declared
    t = nn.Conv2DTranspose(4, 3, in_channels=6, layout="NHWC")
    assert t.weight.shape == (6, 3, 3, 4)


@pytest.mark.parametrize(
    "make",
    [
        lambda: nn.Conv1D(2, (3, 3)),
        lambda: nn.Conv1D(2, 3, layout="NWC"),
        lambda: nn.Conv2D(2, 3, layout="NCW"),
        lambda: nn.Conv3D(2, 3, strides=(1, 1)),
        lambda: nn.Conv2DTranspose(2, 3, strides=2, output_padding=2),
        lambda: nn.MaxPool2D((2, 2, 2)),
        lambda: nn.MaxPool1D(layout="NCHW"),
        lambda: nn.AvgPool3D(layout="NHWC"),
        lambda: nn.GlobalAvgPool2D(layout="NWC"),
        lambda: nn.ReflectionPad2D((1, 2, 3, 4)),
    ],
)
def test_bad_arguments(make):
    with pytest.raises(MXNetError):
        make()

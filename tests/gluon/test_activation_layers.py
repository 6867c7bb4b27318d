"""gluon.nn activation layers: NumPy references (values and gradients), PReLU parameters,
eager vs hybridized, and agreement with real MXNet 1.9.1 (``tools/make_layer_fixtures.py``).
"""

import math

import layer_fixtures as lf
import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import MXNetError
from gluonjax.gluon import nn

RNG = np.random.default_rng(1)
LAM, ALPHA = 1.0507009873554805, 1.6732632423543772
_erf = np.vectorize(math.erf)


def rand(*shape):
    return RNG.uniform(-3, 3, shape).astype(np.float32)


def _sig(z):
    return 1 / (1 + np.exp(-z))


# (factory, numpy forward, numpy derivative) on float64 inputs
REFS = {
    "leaky0.1": (
        lambda: nn.LeakyReLU(0.1),
        lambda x: np.where(x > 0, x, 0.1 * x),
        lambda x: np.where(x > 0, 1.0, 0.1),
    ),
    "leaky0": (
        lambda: nn.LeakyReLU(0),
        lambda x: np.maximum(x, 0),
        lambda x: (x > 0).astype(float),
    ),
    "elu": (
        lambda: nn.ELU(),
        lambda x: np.where(x > 0, x, np.expm1(x)),
        lambda x: np.where(x > 0, 1.0, np.exp(x)),
    ),
    "elu0.5": (
        lambda: nn.ELU(0.5),
        lambda x: np.where(x > 0, x, 0.5 * np.expm1(x)),
        lambda x: np.where(x > 0, 1.0, 0.5 * np.exp(x)),
    ),
    "selu": (
        lambda: nn.SELU(),
        lambda x: LAM * np.where(x > 0, x, ALPHA * np.expm1(x)),
        lambda x: LAM * np.where(x > 0, 1.0, ALPHA * np.exp(x)),
    ),
    "gelu": (
        lambda: nn.GELU(),
        lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))),
        lambda x: (
            0.5 * (1 + _erf(x / math.sqrt(2))) + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
        ),
    ),
    "swish": (
        lambda: nn.Swish(),
        lambda x: x * _sig(x),
        lambda x: _sig(x) + x * _sig(x) * (1 - _sig(x)),
    ),
    "swish2": (
        lambda: nn.Swish(2.0),
        lambda x: x * _sig(2 * x),
        lambda x: _sig(2 * x) + 2 * x * _sig(2 * x) * (1 - _sig(2 * x)),
    ),
}


@pytest.mark.parametrize("shape", [(7,), (2, 3, 4)])
@pytest.mark.parametrize("name", list(REFS))
def test_forward_and_grad_vs_numpy(name, shape):
    make, fwd, dfwd = REFS[name]
    layer = make()
    layer.initialize()
    x64 = rand(*shape).astype(np.float64)
    head = RNG.uniform(-1, 1, shape)
    x = mx.nd.array(x64)
    x.attach_grad()
    with mx.autograd.record():
        y = layer(x)
    y.backward(mx.nd.array(head))
    np.testing.assert_allclose(y.asnumpy(), fwd(x64), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), head * dfwd(x64), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", list(REFS))
def test_eager_equals_hybridized(name):
    layer = REFS[name][0]()
    layer.initialize()
    x = mx.nd.array(rand(3, 5))
    eager = layer(x).asnumpy()
    layer.hybridize()
    np.testing.assert_allclose(layer(x).asnumpy(), eager, rtol=1e-6, atol=1e-7)
    net = nn.HybridSequential()
    net.add(REFS[name][0]())
    net.initialize()
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), eager, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("in_channels,shape", [(1, (2, 3)), (3, (2, 3)), (3, (2, 3, 4, 2))])
@pytest.mark.parametrize("hybridize", [False, True])
def test_prelu_vs_numpy(in_channels, shape, hybridize):
    layer = nn.PReLU(in_channels=in_channels)
    layer.initialize()
    np.testing.assert_array_equal(layer.alpha.data().asnumpy(), np.full(in_channels, 0.25))
    alpha = RNG.uniform(0, 1, in_channels)
    layer.alpha.set_data(mx.nd.array(alpha))
    if hybridize:
        layer.hybridize()
    x64, head = rand(*shape).astype(np.float64), RNG.uniform(-1, 1, shape)
    a = alpha.reshape((1, -1) + (1,) * (len(shape) - 2)) if in_channels > 1 else alpha
    x = mx.nd.array(x64)
    x.attach_grad()
    with mx.autograd.record():
        y = layer(x)
    y.backward(mx.nd.array(head))
    np.testing.assert_allclose(y.asnumpy(), np.where(x64 > 0, x64, a * x64), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        x.grad.asnumpy(), head * np.where(x64 > 0, 1, a), rtol=1e-5, atol=1e-6
    )
    galpha = head * np.where(x64 > 0, 0, x64)
    axes = tuple(i for i in range(len(shape)) if i != 1 or in_channels == 1)
    np.testing.assert_allclose(
        layer.alpha.grad().asnumpy(), galpha.sum(axes).reshape(-1), rtol=1e-4, atol=1e-5
    )


def test_prelu_parameters():
    p = nn.PReLU(in_channels=4)
    assert list(p._collect_params_with_prefix()) == ["alpha"]
    assert p.alpha.shape == (4,) and p.alpha.name == p.prefix + "alpha"
    assert p.prefix.startswith("prelu")
    # the layer's own Constant(0.25) wins over the initializer given to initialize() (MXNet)
    p.initialize(mx.init.One())
    np.testing.assert_array_equal(p.alpha.data().asnumpy(), np.full(4, 0.25))
    q = nn.PReLU(alpha_initializer=mx.init.Constant(0.1), in_channels=2)
    q.initialize()
    np.testing.assert_allclose(q.alpha.data().asnumpy(), [0.1, 0.1], rtol=1e-7)
    r = nn.PReLU(alpha_initializer=None)  # no own initializer: the global one applies
    r.initialize(mx.init.One())
    np.testing.assert_array_equal(r.alpha.data().asnumpy(), [1.0])


def test_leaky_relu_rejects_negative_slope():
    with pytest.raises(MXNetError):
        nn.LeakyReLU(-0.1)


def test_reprs_and_prefixes():
    # strings printed by MXNet 1.9.1
    assert repr(nn.LeakyReLU(0.1)) == "LeakyReLU(0.1)"
    assert repr(nn.LeakyReLU(0)) == "LeakyReLU(0)"
    for cls in (nn.PReLU, nn.ELU, nn.SELU, nn.GELU, nn.Swish):
        layer = cls()
        assert repr(layer) == f"{cls.__name__}(\n\n)"
        assert layer.prefix.startswith(cls.__name__.lower())


# ----------------------------------------------------------------------------- vs MXNet 1.9.1
RECORDS = lf.cases({"act.npz"})


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r["id"])
def test_repr_and_params_vs_mxnet(record):
    lf.check_repr_and_params(record)


@pytest.mark.parametrize("hybridize", [False, True], ids=["eager", "hybrid"])
@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r["id"])
def test_values_and_grads_vs_mxnet(record, hybridize):
    # MXNet 1.9.1's SELU backward is wrong for x < 0 (it disagrees with its own finite
    # differences); gluonjax follows the analytic gradient, checked in the NumPy test above.
    lf.check_values(record, hybridize, xgrad=record["cls"] != "SELU")

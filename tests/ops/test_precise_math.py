"""float32 expm1 (and the ELU/SELU built on it) as accurate as the C library MXNet uses.

XLA's CPU expm1 is ``exp(x) - 1`` away from 0 and loses up to 5 ulp near |x| ~ 0.1;
MXNet 1.9.1's test_activations compares SELU with ``scale * alpha * expm1(x)`` for
exact equality, which holds with an accurate expm1.
"""

import numpy as np

import gluonjax as mx
from gluonjax import nd


def _ulps(got, want64):
    want = want64.astype(np.float32)
    return np.abs(got.astype(np.float64) - want64) / np.spacing(np.abs(want)).astype(np.float64)


def test_expm1_within_two_ulp_of_the_exact_value():
    x = np.concatenate(
        [np.linspace(-3, 3, 20001), np.geomspace(1e-8, 1, 2000), -np.geomspace(1e-8, 1, 2000)]
    ).astype(np.float32)
    got = nd.expm1(mx.nd.array(x)).asnumpy()
    assert _ulps(got, np.expm1(x.astype(np.float64))).max() <= 2.0


def test_expm1_gradient_is_exp():
    x = mx.nd.array([-2.0, -0.1, 0.0, 0.3, 1.5])
    x.attach_grad()
    with mx.autograd.record():
        y = nd.expm1(x)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.exp(x.asnumpy()), rtol=1e-6)


def test_selu_and_elu_match_mxnet_bit_for_bit():
    # MXNet 1.9.1's CPU kernels (MXNET_MKLDNN_ENABLED=0) on [-0.1, 0.1]
    x = mx.nd.array([-0.1, 0.1])
    want = {
        "selu": [-0.16730527579784393, 0.10507010668516159],
        "elu": [-0.023790646344423294, 0.10000000149011612],  # default slope 0.25
        "gelu": [-0.04601721838116646, 0.05398278310894966],
    }
    for act, values in want.items():
        assert nd.LeakyReLU(x, act_type=act).asnumpy().tolist() == values
    assert nd.LeakyReLU(x, act_type="elu", slope=1.0).asnumpy().tolist()[0] == -0.09516258537769318
    assert nd.expm1(x).asnumpy().tolist()[0] == -0.09516258537769318


def test_selu_layer_equals_mxnet_test_formula():
    """MXNet's test_activations: ``selu(x) == scale * alpha * expm1(x)`` exactly for x < 0."""
    scale, alpha = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
    x = mx.nd.array([-0.1, 0.1] * 3)
    for layer in (mx.gluon.nn.SELU(), mx.gluon.nn.SELU()):
        out = layer(x).asnumpy()
        for xi, oi in zip(x.asnumpy(), out):
            xi = mx.nd.array([xi])
            ref = scale * xi if xi.asscalar() >= 0 else scale * alpha * nd.expm1(xi)
            assert ref.asnumpy()[0] == oi
        layer.hybridize()

"""``HybridBlock.export`` after ``net.forward(x)`` on a hybridized net (MXNet exports
after any call); the reloaded model gives the same output."""

import numpy as np
import pytest

import gluonjax as mx


def _net():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(5, activation="relu"), mx.gluon.nn.Dense(2))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    return net


def test_export_after_forward(tmp_path):
    net = _net()
    x = mx.nd.array(np.random.RandomState(0).randn(3, 4))
    y = net.forward(x).asnumpy()
    prefix = str(tmp_path / "m")
    net.export(prefix)
    sb = mx.gluon.SymbolBlock.imports(f"{prefix}-symbol.json", ["data"], f"{prefix}-0000.params")
    np.testing.assert_allclose(sb(x).asnumpy(), y, rtol=1e-6, atol=1e-7)


def test_export_before_any_call_still_explains(tmp_path):
    with pytest.raises(mx.base.MXNetError, match="has not been run yet"):
        _net().export(str(tmp_path / "m"))

"""``mx.contrib.svrg_optimization``: SVRGModule training and its optimizers, against
MXNet 1.9.1 (``tools/make_contrib_module_fixtures.py``) and NumPy."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import ArgumentTypeError, InvalidArgumentError
from gluonjax.contrib.svrg_optimization import SVRGModule
from gluonjax.contrib.svrg_optimization.svrg_optimizer import SVRGKeyError, _SVRGOptimizer

REF = np.load(Path(__file__).parents[1] / "fixtures" / "contrib_modules" / "ref.npz")


def _net():
    return mx.sym.LinearRegressionOutput(
        mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=1, name="fc1"),
        mx.sym.Variable("lin_reg_label"),
        name="lro",
    )


def _iter():
    x, y = REF["svrg.x"], REF["svrg.y"]
    return mx.io.NDArrayIter(x, y, batch_size=8, shuffle=False, label_name="lin_reg_label")


def test_svrg_fit_matches_mxnet():
    logging.getLogger().setLevel(logging.ERROR)
    mod = SVRGModule(_net(), data_names=["data"], label_names=["lin_reg_label"], update_freq=2)
    mod.fit(
        _iter(),
        eval_metric="mse",
        optimizer="sgd",
        optimizer_params=(("learning_rate", 0.01),),
        initializer=mx.init.One(),
        num_epoch=2,
        kvstore="local",
    )
    args, _ = mod.get_params()
    np.testing.assert_allclose(args["fc1_weight"].asnumpy(), REF["svrg.fit.w"], rtol=1e-4)
    np.testing.assert_allclose(args["fc1_bias"].asnumpy(), REF["svrg.fit.b"], rtol=1e-4)
    full = mod._param_dict[0]["fc1_weight"].asnumpy()
    np.testing.assert_allclose(full, REF["svrg.fit.full_w"], rtol=1e-4)


def test_update_full_grads_is_the_mean_batch_gradient():
    """mu = mean over batches of the summed-over-batch gradient (NumPy reference), the
    same on every call. MXNet 1.9.1 is wrong on the second call: it adds the batch sums to
    the previous mu before dividing (its ``_param_dict`` is never reset), so from the
    second full-gradient pass on its SVRG direction is biased; gluonjax recomputes it."""
    mod = SVRGModule(_net(), data_names=["data"], label_names=["lin_reg_label"], update_freq=1)
    it = _iter()
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(mx.init.One())
    mod.init_optimizer(optimizer_params={"learning_rate": 0.0})
    mod.update_full_grads(it)
    mod.update_full_grads(it)  # the same weights: the same mu
    x, y = REF["svrg.x"], REF["svrg.y"]
    resid = x.sum(axis=1) - y  # w = 1; init.One leaves biases 0, as MXNet
    np.testing.assert_allclose(
        mod._param_dict[0]["fc1_weight"].asnumpy(), (resid @ x / 5)[None], rtol=1e-5
    )
    np.testing.assert_allclose(mod._param_dict[0]["fc1_bias"].asnumpy(), [resid.sum() / 5])


def test_svrg_optimizer_routes_full_keys_through_a_kvstore():
    opt = _SVRGOptimizer("sgd", param_idx2name={0: "w", 1: "w_full"}, learning_rate=1.0)
    assert opt.default_opt.lr == 1.0 and isinstance(opt.default_opt, mx.optimizer.SGD)
    kv = mx.kv.create("local")
    kv.set_optimizer(opt)
    w, full = mx.nd.zeros((3,)), mx.nd.ones((3,))
    kv.init(0, w)
    kv.init(1, full)
    kv.push(0, mx.nd.ones((3,)))
    kv.push(1, mx.nd.array([2, 3, 4]))
    kv.pull(0, w)
    kv.pull(1, full)
    np.testing.assert_array_equal(w.asnumpy(), [-1, -1, -1])
    np.testing.assert_array_equal(full.asnumpy(), [2, 3, 4])
    with pytest.raises(SVRGKeyError, match="index 7"):
        opt.create_state(7, w)


def test_svrg_module_checks_update_freq():
    with pytest.raises(ArgumentTypeError, match="update_freq"):
        SVRGModule(_net(), label_names=["lin_reg_label"])
    with pytest.raises(InvalidArgumentError, match="positive"):
        SVRGModule(_net(), label_names=["lin_reg_label"], update_freq=0)

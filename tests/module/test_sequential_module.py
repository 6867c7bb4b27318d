"""SequentialModule against the single Module of the composed symbol (same weights) and
against MXNet 1.9.1's SequentialModule (tools/make_sequential_module_fixtures.py)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import DuplicateParameterError, InvalidArgumentError, MXNetError

FIX = np.load(Path(__file__).resolve().parents[1] / "fixtures" / "module" / "sequential.npz")
OPT = {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3}
LOG = logging.getLogger("test_sequential_module")


def _part1(data):
    net = mx.sym.FullyConnected(data, num_hidden=6, name="fc1")
    net = mx.sym.BatchNorm(net, fix_gamma=False, name="bn1")
    return mx.sym.Activation(net, act_type="relu", name="relu1")


def _part2(data):
    net = mx.sym.FullyConnected(data, num_hidden=4, name="fc2")
    net = mx.sym.Activation(net, act_type="relu", name="relu2")
    net = mx.sym.FullyConnected(net, num_hidden=3, name="fc3")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def _seq():
    mod1 = mx.mod.Module(_part1(mx.sym.var("data")), label_names=[], logger=LOG)
    mod2 = mx.mod.Module(_part2(mx.sym.var("data")), logger=LOG)
    seq = mx.mod.SequentialModule(logger=LOG)
    return seq.add(mod1).add(mod2, take_labels=True, auto_wiring=True), mod1, mod2


def _single():
    return mx.mod.Module(_part2(_part1(mx.sym.var("data"))), logger=LOG)


def _init():
    arg, aux = {}, {}
    for key in FIX.files:
        if key.startswith("init."):
            name = key[5:]
            (aux if "moving" in name else arg)[name] = mx.nd.array(FIX[key])
    return arg, aux


def _batch(k):
    sl = slice(4 * k, 4 * k + 4)
    return mx.io.DataBatch([mx.nd.array(FIX["x"][sl])], [mx.nd.array(FIX["y"][sl])])


def _bound(mod):
    mod.bind(
        data_shapes=[("data", (4, 5))],
        label_shapes=[("softmax_label", (4,))],
        inputs_need_grad=True,
    )
    arg, aux = _init()
    mod.init_params(arg_params=arg, aux_params=aux)
    mod.init_optimizer(optimizer="sgd", optimizer_params=OPT)
    return mod


def _grads(*mods):
    out = {}
    for mod in mods:
        ex = mod._exec_group.execs[0]
        out.update({n: g.asnumpy() for n, g in ex.grad_dict.items() if n in mod._param_names})
    return out


def _params(mod):
    arg, aux = mod.get_params()
    return {n: v.asnumpy() for n, v in {**arg, **aux}.items()}


def test_steps_match_single_module_and_mxnet():
    seq, mod1, mod2 = _seq()
    _bound(seq)
    one = _bound(_single())
    assert seq.data_names == ["data"] and seq.output_names == ["softmax_output"]
    assert seq.output_shapes == [("softmax_output", (4, 3))]
    assert [tuple(d) for d in seq.data_shapes] == [("data", (4, 5))]
    assert [tuple(d) for d in seq.label_shapes] == [("softmax_label", (4,))]
    for k in range(3):
        for mod in (seq, one):
            mod.forward(_batch(k), is_train=True)
            mod.backward()
        out = seq.get_outputs()[0].asnumpy()
        np.testing.assert_allclose(out, one.get_outputs()[0].asnumpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out, FIX[f"step{k}.out"], rtol=1e-4, atol=1e-6)
        dx = seq.get_input_grads()[0].asnumpy()
        np.testing.assert_allclose(dx, one.get_input_grads()[0].asnumpy(), rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(dx, FIX[f"step{k}.dx"], rtol=1e-4, atol=1e-6)
        grads, ref = _grads(mod1, mod2), _grads(one)
        assert sorted(grads) == sorted(ref)
        for name, g in grads.items():
            np.testing.assert_allclose(g, ref[name], rtol=1e-4, atol=1e-6, err_msg=name)
            np.testing.assert_allclose(g, FIX[f"step{k}.g.{name}"], rtol=1e-4, atol=1e-5)
        seq.update()
        one.update()
        got, ref = _params(seq), _params(one)
        assert sorted(got) == sorted(ref)
        for name, v in got.items():
            np.testing.assert_allclose(v, ref[name], rtol=1e-4, atol=1e-6, err_msg=name)
            np.testing.assert_allclose(v, FIX[f"step{k}.p.{name}"], rtol=1e-4, atol=1e-5)


def test_fit_score_predict_match_single_module_and_mxnet():
    x, y = FIX["x"], FIX["y"]
    results = []
    for mod in (_seq()[0], _single()):
        it = mx.io.NDArrayIter(x, y, batch_size=4, shuffle=False)
        arg, aux = _init()
        mod.fit(it, num_epoch=2, optimizer_params=OPT, arg_params=arg, aux_params=aux)
        acc = dict(mod.score(it, "acc"))["accuracy"]
        pred = mod.predict(mx.io.NDArrayIter(x, y, batch_size=4)).asnumpy()
        results.append((_params(mod), acc, pred))
    (got, acc, pred), (ref, ref_acc, ref_pred) = results
    assert sorted(got) == sorted(ref)
    for name, v in got.items():
        np.testing.assert_allclose(v, ref[name], rtol=1e-4, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(v, FIX[f"fit.{name}"], rtol=1e-4, atol=1e-5, err_msg=name)
    assert acc == ref_acc == pytest.approx(float(FIX["fit.acc"]))
    np.testing.assert_allclose(pred, ref_pred, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(pred, FIX["fit.pred"], rtol=1e-4, atol=1e-6)


def test_set_params_reaches_every_module_and_round_trips(tmp_path):
    seq, mod1, mod2 = _seq()
    seq.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))])
    seq.init_params()
    arg, aux = _init()
    seq.set_params(arg, aux)
    got = _params(seq)
    for name, v in {**arg, **aux}.items():
        np.testing.assert_array_equal(got[name], v.asnumpy())
    assert set(mod1.get_params()[0]) == {"fc1_weight", "fc1_bias", "bn1_gamma", "bn1_beta"}
    assert set(mod2.get_params()[0]) == {"fc2_weight", "fc2_bias", "fc3_weight", "fc3_bias"}
    seq.save_params(str(tmp_path / "seq.params"))
    other = _seq()[0]
    other.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))])
    other.init_params()
    other.load_params(str(tmp_path / "seq.params"))
    for name, v in _params(other).items():
        np.testing.assert_array_equal(v, got[name])


def test_forward_with_a_smaller_batch_rebinds_each_module():
    seq = _seq()[0]
    seq.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))])
    seq.init_params(arg_params=_init()[0], aux_params=_init()[1])
    one = _single()
    one.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))])
    one.init_params(arg_params=_init()[0], aux_params=_init()[1])
    x, y = FIX["x"][:3], FIX["y"][:3]
    desc = [mx.io.DataDesc("data", (3, 5))]
    for mod in (seq, one):
        batch = mx.io.DataBatch(
            [mx.nd.array(x)],
            [mx.nd.array(y)],
            provide_data=desc,
            provide_label=[mx.io.DataDesc("softmax_label", (3,))],
        )
        mod.forward(batch, is_train=False)
    out = seq.get_outputs()[0].asnumpy()
    assert out.shape == (3, 3)
    np.testing.assert_allclose(out, one.get_outputs()[0].asnumpy(), rtol=1e-5, atol=1e-6)


def test_metric_comes_from_the_modules_that_take_labels():
    seq = _seq()[0]
    _bound(seq)
    seq.forward(_batch(0), is_train=False)
    metric = mx.metric.create("acc")
    seq.update_metric(metric, _batch(0).label)
    expect = (FIX["step0.out"].argmax(1) == FIX["y"][:4]).mean()
    assert metric.get()[1] == pytest.approx(expect)


def test_misuse_raises_mxnet_errors():
    with pytest.raises(InvalidArgumentError, match="take_lables"):
        mx.mod.SequentialModule().add(_single(), take_lables=True)
    with pytest.raises(MXNetError, match="empty"):
        mx.mod.SequentialModule().bind(data_shapes=[("data", (4, 5))])
    seq = _seq()[0]
    with pytest.raises(MXNetError, match="bind"):
        seq.forward(_batch(0))
    seq.bind(data_shapes=[("data", (4, 5))], label_shapes=[("softmax_label", (4,))])
    seq.init_params()
    with pytest.raises(MXNetError, match="inputs_need_grad"):
        seq.get_input_grads()
    with pytest.raises(MXNetError, match="init_optimizer"):
        seq.update()
    # the same symbol twice: its parameter names clash
    dup = mx.mod.SequentialModule()
    sym = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=5, name="fc")
    dup.add(mx.mod.Module(sym, label_names=[]))
    dup.add(mx.mod.Module(sym, label_names=[]), auto_wiring=True)
    dup.bind(data_shapes=[("data", (2, 5))])
    with pytest.raises(DuplicateParameterError, match="fc_weight") as info:
        dup.init_params()
    assert isinstance(info.value, AssertionError)
    # auto_wiring with a different number of inputs
    two = mx.sym.var("a") + mx.sym.var("b")
    bad = mx.mod.SequentialModule().add(mx.mod.Module(sym, label_names=[]))
    bad.add(mx.mod.Module(two, data_names=["a", "b"], label_names=[]), auto_wiring=True)
    with pytest.raises(MXNetError, match="2 data inputs"):
        bad.bind(data_shapes=[("data", (2, 5))])


def test_add_resets_the_state_and_is_exported():
    assert mx.mod.SequentialModule is mx.module.SequentialModule
    seq = _seq()[0]
    _bound(seq)
    assert seq.binded and seq.params_initialized and seq.optimizer_initialized
    seq.add(_single())
    assert not (seq.binded or seq.params_initialized or seq.optimizer_initialized)

"""Module API: fit/score/predict against NumPy forward passes, checkpoints, and a
checkpoint written by MXNet 1.9.1's Module (tools/make_module_fixtures.py)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "module"


def mlp(hidden=16, classes=2):
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=hidden, name="fc1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.FullyConnected(net, num_hidden=classes, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def np_mlp(x, p):
    h = np.maximum(x @ p["fc1_weight"].T + p["fc1_bias"], 0)
    z = h @ p["fc2_weight"].T + p["fc2_bias"]
    e = np.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def dataset(n=256, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 4).astype(np.float32)
    y = (x[:, 0] - 0.5 * x[:, 2] > 0).astype(np.float32)
    x[:, 0] += np.where(y > 0, 0.5, -0.5)  # a margin: linearly separable
    return x, y


def trained_module(num_epoch=6, **fit_kwargs):
    mx.random.seed(0)
    x, y = dataset()
    mod = mx.mod.Module(mlp(), logger=logging.getLogger("test_module"))
    mod.fit(
        mx.io.NDArrayIter(x, y, batch_size=32, shuffle=False),
        num_epoch=num_epoch,
        optimizer_params={"learning_rate": 0.5},
        initializer=mx.init.Xavier(),
        **fit_kwargs,
    )
    return mod


def params_np(mod):
    arg, aux = mod.get_params()
    return {k: v.asnumpy().astype(np.float64) for k, v in {**arg, **aux}.items()}


def test_fit_learns_separable_data_and_logs_like_mxnet(caplog):
    x, y = dataset()
    xv, yv = dataset(128, seed=1)
    with caplog.at_level(logging.INFO, logger="test_module"):
        mod = trained_module(eval_data=mx.io.NDArrayIter(xv, yv, batch_size=32))
    msgs = [r.getMessage() for r in caplog.records if r.name == "test_module"]
    for e in range(6):
        assert any(m.startswith(f"Epoch[{e}] Train-accuracy=") for m in msgs)
        assert any(m.startswith(f"Epoch[{e}] Time cost=") for m in msgs)
        assert any(m.startswith(f"Epoch[{e}] Validation-accuracy=") for m in msgs)
    ((name, acc),) = mod.score(mx.io.NDArrayIter(xv, yv, batch_size=32), "acc")
    assert name == "accuracy"
    # independent check: NumPy forward with the learned parameters
    pred = np_mlp(xv.astype(np.float64), params_np(mod)).argmax(1)
    assert np.mean(pred == yv) > 0.95
    assert acc == pytest.approx(np.mean(pred == yv))


def test_fit_logging_can_be_silenced(caplog):
    logging.getLogger("test_module").setLevel(logging.WARNING)
    try:
        with caplog.at_level(logging.WARNING):
            trained_module(num_epoch=1)
        assert not [r for r in caplog.records if "Epoch[" in r.getMessage()]
    finally:
        logging.getLogger("test_module").setLevel(logging.NOTSET)


def test_predict_removes_padding_and_matches_numpy():
    mod = trained_module(num_epoch=1)
    p = params_np(mod)
    x, _ = dataset(50, seed=2)
    ref = np_mlp(x.astype(np.float64), p)
    out = mod.predict(mx.io.NDArrayIter(x, batch_size=32))  # last batch padded by 14
    assert out.shape == (50, 2)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-4, atol=1e-5)
    per_batch = mod.predict(mx.io.NDArrayIter(x, batch_size=32), merge_batches=False)
    assert [b[0].shape for b in per_batch] == [(32, 2), (18, 2)]
    lst = mod.predict(mx.io.NDArrayIter(x, batch_size=32), always_output_list=True)
    assert isinstance(lst, list) and lst[0].shape == (50, 2)
    one = mod.predict(mx.io.NDArrayIter(x, batch_size=32), num_batch=1)
    assert one.shape == (32, 2)
    # an array of a new batch size: the module rebinds (reshape) and keeps its parameters
    np.testing.assert_allclose(mod.predict(x[:7]).asnumpy(), ref[:7], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(
        mod.predict(mx.nd.array(x[:32])).asnumpy(), ref[:32], rtol=1e-4, atol=1e-5
    )


def test_score_and_update_metric():
    mod = trained_module(num_epoch=1)
    x, y = dataset(40, seed=3)
    probs = np_mlp(x.astype(np.float64), params_np(mod))
    res = dict(mod.score(mx.io.NDArrayIter(x, y, batch_size=40), ["acc", "ce"]))
    assert res["accuracy"] == pytest.approx(np.mean(probs.argmax(1) == y))
    ce = -np.mean(np.log(probs[np.arange(40), y.astype(int)] + 1e-12))
    assert res["cross-entropy"] == pytest.approx(ce, rel=1e-4)
    assert mod.output_shapes == [("softmax_output", (40, 2))]
    assert mod.data_shapes[0].shape == (40, 4) and mod.label_shapes[0].name == "softmax_label"
    assert mod.data_names == ["data"] and mod.output_names == ["softmax_output"]
    assert isinstance(mod.get_outputs(merge_multi_context=False)[0], list)


def test_checkpoint_round_trip_gives_identical_outputs(tmp_path):
    mod = trained_module(num_epoch=1)
    x, y = dataset(32, seed=4)
    it = mx.io.NDArrayIter(x, y, batch_size=32)
    before = mod.predict(it).asnumpy()
    prefix = str(tmp_path / "mlp")
    mod.save_checkpoint(prefix, 3)
    assert (tmp_path / "mlp-symbol.json").exists() and (tmp_path / "mlp-0003.params").exists()
    loaded = mx.mod.Module.load(prefix, 3)
    loaded.bind(data_shapes=it.provide_data, label_shapes=it.provide_label, for_training=False)
    np.testing.assert_array_equal(loaded.predict(it).asnumpy(), before)
    sym, args, aux = mx.model.load_checkpoint(prefix, 3)
    assert sorted(args) == ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight"] and aux == {}
    np.testing.assert_allclose(
        np_mlp(x.astype(np.float64), {k: v.asnumpy() for k, v in args.items()}), before, rtol=1e-5
    )
    # save_params / load_params into a fresh module
    mod.save_params(str(tmp_path / "p.params"))
    other = mx.mod.Module(mlp())
    other.bind(data_shapes=it.provide_data, for_training=False)
    other.init_params()
    other.load_params(str(tmp_path / "p.params"))
    np.testing.assert_array_equal(other.predict(it).asnumpy(), before)


def test_optimizer_states_round_trip(tmp_path):
    x, y = dataset(64)
    batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])

    def fresh():
        m = mx.mod.Module(mlp())
        m.bind(data_shapes=[("data", x.shape)], label_shapes=[("softmax_label", y.shape)])
        m.init_params(mx.init.Constant(0.1))
        m.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
        return m

    a = fresh()
    for _ in range(2):
        a.forward_backward(batch)
        a.update()
    a.save_checkpoint(str(tmp_path / "ck"), 2, save_optimizer_states=True)
    b = mx.mod.Module.load(str(tmp_path / "ck"), 2, load_optimizer_states=True)
    b.bind(data_shapes=[("data", x.shape)], label_shapes=[("softmax_label", y.shape)])
    b.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    for m in (a, b):
        m.forward_backward(batch)
        m.update()
    pa, pb = params_np(a), params_np(b)
    for k in pa:
        np.testing.assert_allclose(pb[k], pa[k], rtol=1e-6, atol=1e-7)


def test_sgd_update_matches_numpy_rule():
    x, y = dataset(8)
    mod = mx.mod.Module(mlp(hidden=3))
    mod.bind(data_shapes=[("data", x.shape)], label_shapes=[("softmax_label", y.shape)])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer_params={"learning_rate": 0.2, "wd": 0.01})
    p0 = params_np(mod)
    mod.forward_backward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]))
    grads = {k: v.asnumpy() for k, v in mod._exec.grad_dict.items() if v is not None}
    mod.update()
    p1 = params_np(mod)
    for k in p0:
        wd = 0.01 if k.endswith("_weight") else 0.0  # MXNet: no wd on biases by name
        ref = p0[k] - 0.2 * (grads[k] / 8 + wd * p0[k])  # rescale_grad = 1 / batch_size
        np.testing.assert_allclose(p1[k], ref, rtol=1e-5, atol=1e-6)


def test_input_grads_and_fixed_params():
    x, y = dataset(6)
    mod = mx.mod.Module(mlp(hidden=5), fixed_param_names=["fc1_weight"])
    mod.bind(
        data_shapes=[("data", x.shape)],
        label_shapes=[("softmax_label", y.shape)],
        inputs_need_grad=True,
    )
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    p = params_np(mod)
    mod.forward_backward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]))
    # analytic: dz = softmax - onehot; back through fc2, relu, fc1
    h_pre = x @ p["fc1_weight"].T + p["fc1_bias"]
    dz = np_mlp(x.astype(np.float64), p) - np.eye(2)[y.astype(int)]
    dh = (dz @ p["fc2_weight"]) * (h_pre > 0)
    np.testing.assert_allclose(
        mod.get_input_grads()[0].asnumpy(), dh @ p["fc1_weight"], rtol=1e-4, atol=1e-5
    )
    mod.update()
    p1 = params_np(mod)
    np.testing.assert_array_equal(p1["fc1_weight"], p["fc1_weight"])
    assert not np.allclose(p1["fc2_weight"], p["fc2_weight"])


def test_errors():
    with pytest.raises(ValueError, match="not found"):
        mx.mod.Module(mlp(), data_names=["x"])
    mod = mx.mod.Module(mlp())
    with pytest.raises(mx.MXNetError):
        mod.predict(mx.nd.ones((2, 4)))
    mod.bind(data_shapes=[("data", (2, 4))], for_training=False)
    with pytest.raises(RuntimeError, match="fc1_bias is not presented"):
        mod.init_params(arg_params={"fc1_weight": mx.nd.ones((16, 4))})
    mod.init_params(arg_params={"fc1_weight": mx.nd.ones((16, 4))}, allow_missing=True)
    np.testing.assert_array_equal(mod.get_params()[0]["fc1_weight"].asnumpy(), np.ones((16, 4)))
    with pytest.raises(ValueError):
        mod.bind(data_shapes=[("x", (2, 4))], force_rebind=True)


# ---------------------------------------------------------------- MXNet-written checkpoint
def np_bn_mlp(x, p):
    h = x @ p["fc1_weight"].T + p["fc1_bias"]
    h = (h - p["bn1_moving_mean"]) / np.sqrt(p["bn1_moving_var"] + 1e-3) * p["bn1_gamma"] + p[
        "bn1_beta"
    ]
    return np_mlp(
        np.maximum(h, 0),
        {
            "fc1_weight": np.eye(6),
            "fc1_bias": np.zeros(6),
            "fc2_weight": p["fc2_weight"],
            "fc2_bias": p["fc2_bias"],
        },
    )


def test_mxnet_checkpoint_loads_and_reproduces_mxnet_outputs():
    ref = np.load(FIX / "mlp-io.npz")
    mod = mx.mod.Module.load(str(FIX / "mlp"), 1)
    assert mod.symbol.list_auxiliary_states() == ["bn1_moving_mean", "bn1_moving_var"]
    mod.bind(data_shapes=[("data", ref["x"].shape)], for_training=False)
    out = mod.predict(mx.nd.array(ref["x"])).asnumpy()
    np.testing.assert_allclose(out, ref["out"], rtol=1e-5, atol=1e-6)
    # and the NumPy reference agrees with both
    np.testing.assert_allclose(
        np_bn_mlp(ref["x"].astype(np.float64), params_np(mod)), ref["out"], rtol=1e-5, atol=1e-6
    )


def test_training_steps_match_mxnet_module():
    ref = np.load(FIX / "mlp-io.npz")
    mod = mx.mod.Module.load(str(FIX / "mlp"), 1)
    mod.bind(
        data_shapes=[("data", ref["x"].shape)], label_shapes=[("softmax_label", ref["y"].shape)]
    )
    mod.init_optimizer(
        optimizer="sgd", optimizer_params={"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3}
    )
    batch = mx.io.DataBatch([mx.nd.array(ref["x"])], [mx.nd.array(ref["y"])])
    for _ in range(2):
        mod.forward_backward(batch)
        mod.update()
    got = params_np(mod)
    for key in ref.files:
        if key.startswith("trained_"):
            name = key.split(":", 1)[1]
            np.testing.assert_allclose(got[name], ref[key], rtol=1e-4, atol=1e-5, err_msg=name)


def test_forward_accepts_any_batch_object_and_rebinds_for_new_sizes():
    from collections import namedtuple

    mod = trained_module(num_epoch=1)
    p = params_np(mod)
    Batch = namedtuple("Batch", ["data"])  # no label / pad / provide_data (seed flow)
    x, _ = dataset(9, seed=5)
    for n in (9, 32, 3):
        mod.forward(Batch([mx.nd.array(x[:n] if n <= 9 else np.resize(x, (n, 4)))]))
        out = mod.get_outputs()[0]
        src = x[:n] if n <= 9 else np.resize(x, (n, 4))
        assert out.shape == (n, 2)
        np.testing.assert_allclose(
            out.asnumpy(), np_mlp(src.astype(np.float64), p), rtol=1e-4, atol=1e-5
        )
    assert mod.data_shapes[0].shape == (3, 4)
    # the parameters are still shared with the originally bound executor
    assert mod._exec.arg_dict["fc1_weight"] is mod._default_exec.arg_dict["fc1_weight"]

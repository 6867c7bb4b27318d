"""``gluon.contrib.estimator.Estimator``: fit/evaluate against MXNet 1.9.1 (fixtures),
the fused compiled step against the plain loop, and the errors of misuse."""

from __future__ import annotations

import warnings

import estimator_common as ec
import numpy as np
import pytest

import gluonjax as mx
from gluonjax import autograd, gluon
from gluonjax.base import EstimatorSetupError, MXNetError
from gluonjax.gluon.contrib import estimator as est_mod
from gluonjax.gluon.contrib.estimator import (
    BatchProcessor,
    CheckpointHandler,
    EarlyStoppingHandler,
    Estimator,
    LoggingHandler,
    MetricHandler,
    TrainBegin,
)


class _Noop(TrainBegin):
    """A user handler: the estimator cannot know it reads no gradient (plain loop)."""


def _fit_case(case, hybridize, tmp_path, extra=()):
    net = ec.make_net(hybridize)
    if case == "adam_cls":
        trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
        est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer)
        kw = dict(train_data=ec.loader(), val_data=ec.loader(), epochs=3)
    elif case == "sgd_reg_batches":
        trainer = gluon.Trainer(
            net.collect_params(), "sgd", {"learning_rate": 0.05, "momentum": 0.9}
        )
        est = Estimator(net, gluon.loss.L2Loss(), train_metrics=mx.metric.MAE(), trainer=trainer)
        ckpt = CheckpointHandler(
            str(tmp_path), model_prefix="reg", epoch_period=None, batch_period=3, max_checkpoints=2
        )
        kw = dict(train_data=ec.loader("y_reg"), batches=11, event_handlers=[ckpt])
    else:
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 2.0})
        est = Estimator(net, gluon.loss.L2Loss(), trainer=trainer)
        stop = EarlyStoppingHandler(monitor=est.train_metrics[0], patience=2, mode="max")
        kw = dict(train_data=ec.loader("y_reg"), epochs=8, event_handlers=[stop])
    kw["event_handlers"] = list(kw.get("event_handlers", [])) + list(extra)
    buf = ec.capture(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(**kw)
    return est, net, buf.getvalue().splitlines()


@pytest.mark.parametrize("case", ["adam_cls", "sgd_reg_batches", "early_stop"])
@pytest.mark.parametrize("hybridize", [False, True], ids=["eager", "hybridized"])
def test_fit_matches_mxnet(case, hybridize, tmp_path):
    """Parameters, log lines (metric values, epochs) and checkpoint files as MXNet's."""
    est, net, lines = _fit_case(case, hybridize, tmp_path)
    ref = ec.CASES[case]
    for got, i in zip(ec.params(net), range(4)):
        np.testing.assert_allclose(got, ec.ARRAYS[f"{case}.p{i}"], rtol=1e-5, atol=1e-6)
    assert est.training_path == ("fused" if hybridize else "plain")
    assert lines[0].startswith("Training path: " + ("fused" if hybridize else "plain loop"))
    # gluonjax spells the early-stopping handler's name right (MXNet 1.9.1: 'Hanlder')
    expected = [s.replace("Hanlder", "Handler") for s in ec.normalized(ref["log"])]
    got = ec.normalized(lines[1:], str(tmp_path))
    files = sorted(p.name for p in tmp_path.iterdir())
    if case == "sgd_reg_batches" and hybridize:  # MXNet's run was not hybridized
        expected = [s for s in expected if not s.startswith("Model architecture")]
        assert "reg-symbol.json" in files
        files.remove("reg-symbol.json")
    assert got == expected
    assert files == ref["files"]


def test_fused_plain_and_hand_loop_give_identical_parameters():
    """The fused step, the plain loop (hybridized and eager) and the three-line loop."""
    results = {}
    for name, hyb, extra in [
        ("fused", True, ()),
        ("plain_hybridized", True, (_Noop(),)),
        ("plain_eager", False, ()),
    ]:
        est, net, lines = _fit_case("adam_cls", hyb, None, extra)
        assert est.training_path == name.split("_")[0]
        results[name] = ec.params(net)
        if extra:
            assert "custom event handler(s) _Noop" in lines[0]
    net = ec.make_net()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for _ in range(3):
        for x, y in ec.loader():
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(x.shape[0])
    results["loop"] = ec.params(net)
    for name in ("plain_hybridized", "plain_eager", "loop"):
        for a, b in zip(results["fused"], results[name]):
            np.testing.assert_array_equal(a, b, err_msg=name)


def test_fused_step_falls_back_when_the_net_needs_host_values():
    class Masked(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.fc = gluon.nn.Dense(3, in_units=5)

        def hybrid_forward(self, F, x):
            return F.contrib.boolean_mask(self.fc(x), F.ones_like(x).sum(axis=1))

    net = Masked()
    net.initialize()
    net.fc.weight.set_data(mx.nd.array(ec.WEIGHTS[2][:, :5]))
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    est = Estimator(net, gluon.loss.L2Loss(), trainer=trainer)
    buf = ec.capture(est)
    est.fit(ec.loader("y_reg"), epochs=2)
    assert est.training_path == "plain"
    assert "cannot trace the net" in buf.getvalue()
    # the same updates as the three-line loop (boolean_mask keeps every row here)
    ref = gluon.nn.Dense(3, in_units=5)
    ref.initialize()
    ref.weight.set_data(mx.nd.array(ec.WEIGHTS[2][:, :5]))
    tr = gluon.Trainer(ref.collect_params(), "sgd", {"learning_rate": 0.1})
    for _ in range(2):
        for x, y in ec.loader("y_reg"):
            with autograd.record():
                loss = gluon.loss.L2Loss()(ref(x), y)
            loss.backward()
            tr.step(x.shape[0])
    np.testing.assert_allclose(net.fc.weight.data().asnumpy(), ref.weight.data().asnumpy(), 1e-6)


def test_evaluate_matches_numpy():
    net = ec.make_net()
    est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer=_trainer(net))
    ec.capture(est)
    est.evaluate(ec.loader())
    w0, b0, w1, b1 = ec.WEIGHTS
    x, y = ec.ARRAYS["x"], ec.ARRAYS["y_cls"].astype(int)
    logits = np.maximum(x @ w0.T + b0, 0) @ w1.T + b1
    logp = logits - logits.max(1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(1, keepdims=True))
    values = dict(m.get() for m in est.val_metrics)
    np.testing.assert_allclose(values["validation accuracy"], (logits.argmax(1) == y).mean())
    np.testing.assert_allclose(
        values["validation softmaxcrossentropyloss"], -logp[np.arange(40), y].mean(), rtol=1e-5
    )


def _trainer(net):
    return gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})


def test_metric_names_and_defaults():
    net = ec.make_net()
    est = Estimator(net, gluon.loss.L2Loss(), train_metrics=mx.metric.MAE(), trainer=_trainer(net))
    assert [m.name for m in est.train_metrics] == ["training mae"]
    assert [m.name for m in est.val_metrics] == ["validation mae"]
    assert est.val_metrics[0] is not est.train_metrics[0]
    est = Estimator(net, gluon.loss.L2Loss(), trainer=_trainer(net))
    assert [m.name for m in est.train_metrics] == ["training l2loss"]
    assert isinstance(est.train_metrics[0], mx.metric.Loss)
    comp = mx.metric.CompositeEvalMetric([mx.metric.MAE(), mx.metric.MSE()])
    est = Estimator(net, gluon.loss.L2Loss(), train_metrics=comp, trainer=_trainer(net))
    assert [m.name for m in est.train_metrics] == ["training mae", "training mse"]


def test_default_handlers_and_order():
    net = ec.make_net()
    est = Estimator(net, gluon.loss.L2Loss(), trainer=_trainer(net))
    stop = EarlyStoppingHandler(monitor=est.val_metrics[0], mode="min")
    handlers = est._prepare_default_handlers(val_data=ec.loader(), event_handlers=[stop])
    names = [type(h).__name__ for h in handlers]
    assert names == [
        "GradientUpdateHandler",
        "MetricHandler",
        "ValidationHandler",
        "EarlyStoppingHandler",
        "StoppingHandler",
        "LoggingHandler",
    ]


def test_warnings_of_mxnet():
    net = ec.make_net()
    with pytest.warns(UserWarning, match="No trainer specified"):
        est = Estimator(net, gluon.loss.L2Loss())
    assert est.trainer.learning_rate == 0.001
    with pytest.warns(UserWarning, match="Network already fully initialized"):
        Estimator(net, gluon.loss.L2Loss(), initializer=mx.init.One(), trainer=_trainer(net))
    fresh = gluon.nn.Dense(2, in_units=3)
    Estimator(fresh, gluon.loss.L2Loss(), initializer=mx.init.One(), trainer=_trainer(fresh))
    np.testing.assert_array_equal(fresh.weight.data().asnumpy(), np.ones((2, 3)))


def _errors_est():
    net = ec.make_net()
    est = Estimator(net, gluon.loss.L2Loss(), trainer=_trainer(net))
    ec.capture(est)
    return net, est


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda e: e.fit(mx.io.NDArrayIter(ec.ARRAYS["x"], batch_size=8), epochs=1), "NDArrayIter"),
        (lambda e: e.fit([mx.nd.ones((10, 3))], epochs=1), "DataLoader"),
        (lambda e: e.fit(ec.loader(), val_data=[1], epochs=1), "val_data"),
        (lambda e: e.evaluate(ec.ARRAYS["x"]), "val_data"),
        (lambda e: e.fit(ec.loader()), "one and only one"),
        (lambda e: e.fit(ec.loader(), epochs=1, batches=2), "one and only one"),
        (lambda e: e.fit(ec.loader(), epochs=-1), "positive integer"),
        (lambda e: e.fit(ec.loader(), epochs=1.5), "positive integer"),
        (lambda e: e.fit(ec.loader(), epochs=1, event_handlers=["log"]), "EventHandler"),
        (
            lambda e: e.fit(
                ec.loader(), epochs=1, event_handlers=[LoggingHandler(metrics=[mx.metric.MAE()])]
            ),
            "outside of the known",
        ),
    ],
)
def test_fit_misuse_is_a_value_error(call, needle):
    net, est = _errors_est()
    before = ec.params(net)
    with pytest.raises(ValueError, match=needle) as info:
        call(est)
    assert isinstance(info.value, MXNetError)
    for a, b in zip(before, ec.params(net)):
        np.testing.assert_array_equal(a, b)


def test_empty_train_data_with_batches_raises():
    _, est = _errors_est()
    x, y = ec.ARRAYS["x"][:0], ec.ARRAYS["y_reg"][:0]
    empty = gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), batch_size=8)
    with pytest.raises(ValueError, match="no batch"):
        est.fit(empty, batches=3)


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        (dict(loss="mse"), "loss must be a Loss"),
        (dict(trainer="sgd"), "Trainer must be"),
        (dict(context="cpu"), "context must be"),
        (dict(train_metrics="acc"), "metrics must be"),
        (dict(val_metrics=[mx.metric.MAE(), "mae"]), "metrics must be"),
        (dict(batch_processor=object()), "fit_batch"),
    ],
)
def test_constructor_misuse_is_a_value_error(kwargs, needle):
    net = ec.make_net()
    args = dict(net=net, loss=gluon.loss.L2Loss(), trainer=_trainer(net))
    args.update(kwargs)
    with pytest.raises(ValueError, match=needle) as info:
        Estimator(**args)
    assert isinstance(info.value, MXNetError)


def test_unavailable_context_is_an_assertion_error():
    net = ec.make_net()
    with pytest.raises(AssertionError, match=r"gpu\(100\) is not available") as info:
        Estimator(net, gluon.loss.L2Loss(), trainer=_trainer(net), context=[mx.gpu(100)])
    assert isinstance(info.value, EstimatorSetupError)


def test_custom_batch_processor_is_used_and_takes_the_plain_loop():
    calls = []

    class Counting(BatchProcessor):
        def fit_batch(self, estimator, train_batch, batch_axis=0):
            calls.append(train_batch[0].shape)
            return super().fit_batch(estimator, train_batch, batch_axis)

    net = ec.make_net(hybridize=True)
    est = Estimator(net, gluon.loss.L2Loss(), trainer=_trainer(net), batch_processor=Counting())
    buf = ec.capture(est)
    est.fit(ec.loader("y_reg"), batches=3)
    assert calls == [(8, 5)] * 3
    assert "custom batch processor (Counting)" in buf.getvalue()


def test_star_import_matches_mxnet_names():
    names = {}
    exec("from gluonjax.gluon.contrib.estimator import *", names)
    expected = {
        "Estimator", "BatchProcessor", "TrainBegin", "TrainEnd", "EpochBegin", "EpochEnd",
        "BatchBegin", "BatchEnd", "StoppingHandler", "MetricHandler", "ValidationHandler",
        "LoggingHandler", "CheckpointHandler", "EarlyStoppingHandler", "GradientUpdateHandler",
        "estimator", "event_handler", "batch_processor",
    }  # fmt: skip
    assert expected <= set(names)
    assert est_mod.event_handler.MetricHandler is MetricHandler

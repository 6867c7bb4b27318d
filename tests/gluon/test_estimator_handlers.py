"""The Estimator's event handlers: early stopping (MXNet 1.9.1's decisions on scripted
metric values), checkpoints (files, rotation, best, resume), logging and the progress
bar, validation periods."""

from __future__ import annotations

import io
import re
import warnings

import estimator_common as ec
import numpy as np
import pytest

import gluonjax as mx
from gluonjax import gluon
from gluonjax.base import EstimatorSetupError, MXNetError
from gluonjax.gluon.contrib.estimator import (
    BatchEnd,
    CheckpointHandler,
    EarlyStoppingHandler,
    EpochEnd,
    Estimator,
    LoggingHandler,
    ValidationHandler,
)

# the fixture script's cases (tools/make_estimator_fixtures.py, EARLY)
EARLY = [
    ("min_patience2", "loss", [5, 4, 4.5, 3, 3.2, 3.1, 3.05, 2, 2, 2],
     dict(patience=2, mode="min")),
    ("max_patience0", "score", [0.1, 0.2, 0.2, 0.5, 0.6, 0.7], dict(patience=0, mode="max")),
    ("min_delta", "loss", [5, 4.8, 4.0, 3.8, 3.7, 3.6],
     dict(patience=1, mode="min", min_delta=0.5)),
    ("baseline", "score", [0.3, 0.4, 0.6, 0.6, 0.65, 0.9],
     dict(patience=1, mode="max", baseline=0.5)),
    ("auto_accuracy", "accuracy", [0.5, 0.4, 0.3, 0.2, 0.1], dict(patience=1, mode="auto")),
]  # fmt: skip


def _est(net=None, loss=None, **kw):
    net = net or ec.make_net()
    kw.setdefault("trainer", gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01}))
    est = Estimator(net, loss or gluon.loss.L2Loss(), **kw)
    return est, ec.capture(est)


@pytest.mark.parametrize("hybridize", [False, True], ids=["eager", "hybridized"])
@pytest.mark.parametrize("case, name, values, kwargs", EARLY, ids=[c[0] for c in EARLY])
def test_early_stopping_stops_where_mxnet_does(case, name, values, kwargs, hybridize):
    metric = ec.Scripted(name, values)
    est, buf = _est(ec.make_net(hybridize), train_metrics=metric)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stop = EarlyStoppingHandler(monitor=metric, **kwargs)
    est.fit(ec.loader("y_reg"), epochs=10, event_handlers=[stop])
    ref = ec.CASES["early_stopping"][case]
    assert (stop.stopped_epoch, stop.current_epoch) == (ref["stopped_epoch"], ref["current_epoch"])
    assert f"with {ref['current_epoch']} epochs" in buf.getvalue()


def test_early_stopping_auto_mode_for_a_loss_is_min():
    """MXNet 1.9.1 documents 'min' for metrics other than accuracy/F1 in 'auto' mode
    (its code always picks 'max': ``'acc' or ...`` is always true); gluonjax does what
    it documents."""
    est, _ = _est()
    with pytest.warns(UserWarning, match="`less` operator"):
        stop = EarlyStoppingHandler(monitor=est.train_metrics[0])
    assert stop.monitor_op is np.less
    with pytest.warns(RuntimeWarning, match="unknown"), pytest.warns(UserWarning, match="less"):
        EarlyStoppingHandler(monitor=est.train_metrics[0], mode="lowest")


def test_early_stopping_misuse():
    with pytest.raises(ValueError, match="monitor") as info:
        EarlyStoppingHandler(monitor="accuracy")
    assert isinstance(info.value, MXNetError)
    comp = mx.metric.CompositeEvalMetric([mx.metric.MAE()])
    with pytest.raises(ValueError, match="CompositeEvalMetric"):
        EarlyStoppingHandler(monitor=comp)


def test_checkpoint_best_and_verbose(tmp_path):
    metric = ec.Scripted("loss", [3.0, 2.0, 2.5, 1.0])
    est, buf = _est(train_metrics=metric)
    ckpt = CheckpointHandler(
        str(tmp_path), monitor=metric, save_best=True, mode="min", verbose=1, max_checkpoints=2
    )
    est.fit(ec.loader("y_reg"), epochs=4, event_handlers=[ckpt])
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == [
        "model-best.params",
        "model-best.states",
        "model-epoch2batch15.params",
        "model-epoch2batch15.states",
        "model-epoch3batch20.params",
        "model-epoch3batch20.states",
    ]
    log = buf.getvalue()
    assert "improved from 2.00000 to 1.00000" in log
    assert log.count("updating best model at") == 3  # epochs 0, 1 and 3 improve
    assert "did not improve from 2.00000" in log
    assert ckpt.best == 1.0
    best = ec.make_net()
    best.load_parameters(str(tmp_path / "model-best.params"))
    for a, b in zip(ec.params(best), ec.params(est.net)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="monitor"):
        CheckpointHandler(str(tmp_path), save_best=True)


def test_checkpoint_symbol_of_a_hybridized_net(tmp_path):
    est, _ = _est(ec.make_net(hybridize=True))
    est.fit(ec.loader("y_reg"), batches=2, event_handlers=[CheckpointHandler(str(tmp_path))])
    sym = mx.sym.load(str(tmp_path / "model-symbol.json"))
    assert len(sym.list_arguments()) == 5  # data and the four parameters


def test_resume_continues_to_mxnets_result(tmp_path):
    """1 epoch, then a resumed fit for 3 epochs from a fresh net: MXNet's 3-epoch Adam."""

    def est_for(weights):
        net = ec.make_net(weights=weights)
        trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01})
        est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer)
        return est, ec.capture(est)

    est, _ = est_for(ec.WEIGHTS)
    est.fit(ec.loader(), epochs=1, event_handlers=[CheckpointHandler(str(tmp_path))])
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "model-epoch0batch5.params",
        "model-epoch0batch5.states",
    ]
    est, buf = est_for([w * 0 for w in ec.WEIGHTS])
    ckpt = CheckpointHandler(str(tmp_path), resume_from_checkpoint=True, max_checkpoints=1)
    est.fit(ec.loader(), epochs=3, event_handlers=[ckpt])
    assert est.max_epoch == 2
    assert "Checkpoint resumed from epoch 0 batch 5, continue to train for 2 epochs" in (
        buf.getvalue()
    )
    for i, got in enumerate(ec.params(est.net)):
        np.testing.assert_allclose(got, ec.ARRAYS[f"adam_cls.p{i}"], rtol=1e-5, atol=1e-6)
    # numbering goes on from the checkpoint; rotation counts the checkpoints found
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "model-epoch2batch15.params",
        "model-epoch2batch15.states",
    ]
    with pytest.raises(ValueError, match="maximum number of epoch 3 reached"):
        again = CheckpointHandler(str(tmp_path), resume_from_checkpoint=True)
        est.fit(ec.loader(), epochs=3, event_handlers=[again])
    bad = CheckpointHandler(str(tmp_path), resume_from_checkpoint=True, batch_period=2)
    with pytest.raises(AssertionError, match="epoch_period=N, batch_period=None") as info:
        est.fit(ec.loader(), epochs=5, event_handlers=[bad])
    assert isinstance(info.value, EstimatorSetupError)


def test_resume_without_checkpoints_trains_from_scratch(tmp_path):
    est, buf = _est()
    ckpt = CheckpointHandler(str(tmp_path), resume_from_checkpoint=True)
    est.fit(ec.loader("y_reg"), epochs=2, event_handlers=[ckpt])
    assert "No checkpoint found, training from scratch for 2 epochs" in buf.getvalue()
    assert (tmp_path / "model-epoch1batch10.params").is_file()


@pytest.mark.parametrize("interval", [1, 2])
def test_logging_interval_lines(interval):
    est, buf = _est(train_metrics=mx.metric.MAE())
    logging = LoggingHandler(log_interval=interval, metrics=est.train_metrics)
    est.fit(ec.loader("y_reg", batch_size=6), epochs=1, event_handlers=[logging])
    pattern = re.compile(
        r"\[Epoch 0\]\[Batch (\d+)\]\[Samples (\d+)\] time/interval: \d+\.\d+s training mae: "
        r"\d+\.\d{4}$"
    )
    found = [pattern.match(s) for s in buf.getvalue().splitlines()]
    got = [(int(m.group(1)), int(m.group(2))) for m in found if m]
    samples = np.minimum(np.arange(1, 8) * 6, 40)  # 7 batches of 6, the last of 4
    assert got == [(b, int(samples[b])) for b in range(0, 7, interval)]
    with pytest.raises(ValueError, match="log_interval"):
        LoggingHandler(log_interval="batch")


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("stream_cls, option, drawn", [
    (_Terminal, "auto", True), (io.StringIO, "auto", False),
    (_Terminal, False, False), (io.StringIO, True, True),
])  # fmt: skip
def test_progress_bar(stream_cls, option, drawn):
    est, _ = _est(ec.make_net(hybridize=True), train_metrics=mx.metric.MAE())
    stream = stream_cls()
    est.logger.handlers[0].stream = stream
    logging = LoggingHandler(metrics=est.train_metrics, progress_bar=option)
    est.fit(ec.loader("y_reg"), epochs=2, event_handlers=[logging])
    text = stream.getvalue()
    assert ("samples/s" in text) == drawn
    assert ("[Epoch 1] [" in text) == drawn
    # every log line is whole: the bar is erased before a line is written
    lines = [seg.split("\r")[-1] for seg in text.split("\n") if seg.strip()]
    assert sum(s.startswith("[Epoch 1] Finished in") for s in lines) == 1
    assert lines[-1].startswith("Train finished using total")
    assert all("samples/s" not in s for s in lines)


def test_validation_handler_periods():
    calls = []

    def eval_fn(val_data, batch_axis, event_handlers):
        calls.append((val_data, batch_axis, event_handlers))

    est, _ = _est()
    val = ValidationHandler(ec.loader(), eval_fn, epoch_period=2, batch_period=4)
    est.fit(ec.loader("y_reg"), epochs=3, event_handlers=[val])
    # 15 batches: at batches 4, 8, 12; epochs: at the end of epoch 2 (the second)
    assert len(calls) == 4
    with pytest.raises(ValueError, match="eval_fn"):
        ValidationHandler(ec.loader(), "evaluate")


def test_custom_stop_and_batch_size_of_the_update():
    seen = []

    class Stop(BatchEnd, EpochEnd):
        """As MXNet's: a batch end's True ends the epoch, an epoch end's the training."""

        def batch_end(self, estimator, *args, **kwargs):
            seen.append(sum(lo.shape[0] for lo in kwargs["loss"]))
            return len(seen) == 7

        def epoch_end(self, estimator, *args, **kwargs):
            return len(seen) >= 7

    est, _ = _est()
    est.fit(ec.loader("y_reg"), epochs=5, event_handlers=[Stop()])
    assert seen == [8] * 7  # stopped in epoch 1, after 7 batches
    assert est.trainer.optimizer.num_update == 7

    class BatchOnly(BatchEnd):
        def batch_end(self, estimator, *args, **kwargs):
            seen.append(1)
            return len(seen) == 2

    seen.clear()
    est.fit(ec.loader("y_reg"), epochs=2, event_handlers=[BatchOnly()])
    assert len(seen) == 2 + 5  # the first epoch ended after 2 batches, the second ran

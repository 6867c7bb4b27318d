"""gluonjax.callback and gluonjax.model: log formats as MXNet 1.9.1 prints them
(expected lines below were produced by MXNet's callbacks on the same inputs)."""

import logging
import re

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.model import BatchEndParam


def _metric():
    m = mx.metric.Accuracy()
    m.update([mx.nd.array([0, 1])], [mx.nd.array([[1, 0], [1, 0]])])
    return m


def _messages(caplog):
    return [r.getMessage() for r in caplog.records]


def test_speedometer_auto_reset(caplog):
    m = _metric()
    s = mx.callback.Speedometer(4, frequent=2)
    with caplog.at_level(logging.INFO):
        for i in range(5):
            s(BatchEndParam(epoch=0, nbatch=i, eval_metric=m, locals=None))
    msgs = _messages(caplog)
    # MXNet 1.9.1: 'Epoch[0] Batch [0-2]\tSpeed: 1342177.28 samples/sec\taccuracy=0.500000'
    #              'Epoch[0] Batch [2-4]\tSpeed: 1242756.74 samples/sec\taccuracy=nan'
    assert len(msgs) == 2
    assert re.fullmatch(
        r"Epoch\[0\] Batch \[0-2\]\tSpeed: \d+\.\d\d samples/sec\t"
        r"accuracy=0\.500000",
        msgs[0],
    )
    assert re.fullmatch(
        r"Epoch\[0\] Batch \[2-4\]\tSpeed: \d+\.\d\d samples/sec\taccuracy=nan", msgs[1]
    )


def test_speedometer_without_reset_and_without_metric(caplog):
    m = _metric()
    s = mx.callback.Speedometer(4, frequent=2, auto_reset=False)
    s2 = mx.callback.Speedometer(4, frequent=2)
    with caplog.at_level(logging.INFO):
        for i in range(5):
            s(BatchEndParam(epoch=1, nbatch=i, eval_metric=m, locals=None))
        for i in range(3):
            s2(BatchEndParam(epoch=1, nbatch=i, eval_metric=None, locals=None))
    msgs = _messages(caplog)
    assert re.fullmatch(
        r"Epoch\[1\] Batch \[0-2\]\tSpeed: \S+ samples/sec\taccuracy=0\.500000", msgs[0]
    )
    assert re.fullmatch(
        r"Epoch\[1\] Batch \[0-4\]\tSpeed: \S+ samples/sec\taccuracy=0\.500000", msgs[1]
    )
    assert re.fullmatch(r"Iter\[1\] Batch \[2\]\tSpeed: \d+\.\d\d samples/sec", msgs[2])


def test_speedometer_composite_metric_and_new_epoch(caplog):
    cm = mx.metric.create(["acc", "mse"])
    cm.update([mx.nd.array([0, 1])], [mx.nd.array([[1, 0], [1, 0]])])
    s = mx.callback.Speedometer(4, frequent=1)
    with caplog.at_level(logging.INFO):
        for i in range(2):
            s(BatchEndParam(epoch=2, nbatch=i, eval_metric=cm, locals=None))
        s(BatchEndParam(epoch=3, nbatch=0, eval_metric=cm, locals=None))  # restarts
    msgs = _messages(caplog)
    assert len(msgs) == 1
    assert re.fullmatch(
        r"Epoch\[2\] Batch \[0-1\]\tSpeed: \S+ samples/sec\t"
        r"accuracy=0\.500000\tmse=0\.500000",
        msgs[0],
    )


def test_log_train_metric_progress_bar_validation(caplog):
    m = _metric()
    with caplog.at_level(logging.INFO):
        mx.callback.log_train_metric(2)(BatchEndParam(0, 4, m, None))
        mx.callback.log_train_metric(3)(BatchEndParam(0, 4, m, None))  # not a multiple
        mx.callback.ProgressBar(10, length=10)(BatchEndParam(0, 3, m, None))
        mx.callback.LogValidationMetricsCallback()(BatchEndParam(0, 3, m, None))
    assert _messages(caplog) == [
        "Iter[0] Batch[4] Train-accuracy=0.500000",
        "[===-------] 30%\r",
        "Epoch[0] Validation-accuracy=0.500000",
    ]
    assert (
        repr(BatchEndParam(1, 2, 3, 4))
        == "BatchEndParams(epoch=1, nbatch=2, eval_metric=3, locals=4)"
    )


def test_do_checkpoint_and_load_checkpoint(tmp_path, caplog):
    data = mx.sym.var("data")
    sym = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    args = {"fc_weight": mx.nd.array(w), "fc_bias": mx.nd.array([1, 2])}
    prefix = str(tmp_path / "net")
    cb = mx.callback.do_checkpoint(prefix, period=2)
    with caplog.at_level(logging.INFO):
        for epoch in range(4):
            cb(epoch, sym, args, {})
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["net-0002.params", "net-0004.params", "net-symbol.json"]
    assert f'Saved checkpoint to "{prefix}-0002.params"' in _messages(caplog)
    sym2, arg2, aux2 = mx.model.load_checkpoint(prefix, 4)
    assert sym2.list_arguments() == ["data", "fc_weight", "fc_bias"] and aux2 == {}
    np.testing.assert_array_equal(arg2["fc_weight"].asnumpy(), w)
    saved = mx.nd.load(f"{prefix}-0004.params")
    assert sorted(saved) == ["arg:fc_bias", "arg:fc_weight"]
    out = sym2.eval(data=mx.nd.array([[1, 1, 1]]), **arg2)[0].asnumpy()
    np.testing.assert_allclose(out, [[w[0].sum() + 1, w[1].sum() + 2]])
    with pytest.raises(FileNotFoundError):
        mx.model.load_checkpoint(prefix, 1)


def test_module_checkpoint_callback(tmp_path):
    data = mx.sym.var("data")
    sym = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=2, name="fc"), name="softmax")
    mod = mx.mod.Module(sym)
    mod.bind(data_shapes=[("data", (2, 3))], label_shapes=[("softmax_label", (2,))])
    mod.init_params()
    mod.init_optimizer()
    cb = mx.callback.module_checkpoint(mod, str(tmp_path / "m"), save_optimizer_states=True)
    cb(0)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "m-0001.params",
        "m-0001.states",
        "m-symbol.json",
    ]

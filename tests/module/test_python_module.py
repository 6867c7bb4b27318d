"""mx.mod.PythonModule / PythonLossModule: MXNet's example/module/python_loss.py (an MLP
Module and a Python multiclass-hinge loss in a SequentialModule), run by gluonjax and
by MXNet 1.9.1 on the same data and initial weights."""

from __future__ import annotations

import json

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.module.python_module import PythonModuleError
from tests.mxnet_ref import needs_mxnet, run_mxnet

SCRIPT = """
import json
import numpy as np


def mc_hinge_grad(scores, labels):
    scores = scores.asnumpy()
    labels = labels.asnumpy().astype(int)
    grad = np.zeros_like(scores)
    for i in range(scores.shape[0]):
        score = 1 + scores[i] - scores[i, labels[i]]
        score[labels[i]] = 0
        j = score.argmax()
        grad[i, labels[i]] -= 1
        grad[i, j] += 1
    return grad


rng = np.random.RandomState(0)
X = rng.randn(60, 8).astype(np.float32)
Y = rng.randint(0, 4, 60).astype(np.float32)
data = mx.symbol.Variable("data")
fc1 = mx.symbol.FullyConnected(data, name="fc1", num_hidden=16)
act1 = mx.symbol.Activation(fc1, name="relu1", act_type="relu")
fc2 = mx.symbol.FullyConnected(act1, name="fc2", num_hidden=4)
mlp = mx.mod.Module(fc2, context=mx.cpu())
loss = mx.mod.PythonLossModule(grad_func=mc_hinge_grad)
mod = mx.mod.SequentialModule().add(mlp).add(loss, take_labels=True, auto_wiring=True)
it = mx.io.NDArrayIter(X, Y, batch_size=20)
init = {"fc1_weight": rng.randn(16, 8) * 0.3, "fc1_bias": np.zeros(16),
        "fc2_weight": rng.randn(4, 16) * 0.3, "fc2_bias": np.zeros(4)}
mod.bind(it.provide_data, it.provide_label)
mod.init_params(arg_params={k: mx.nd.array(v) for k, v in init.items()})
mod.fit(it, num_epoch=3, optimizer_params={"learning_rate": 0.05, "momentum": 0.9},
        eval_metric="acc")
arg, _ = mod.get_params()
score = mod.score(mx.io.NDArrayIter(X, Y, batch_size=20), "acc")
RESULT = {"params": {k: v.asnumpy().tolist() for k, v in sorted(arg.items())},
          "score": score, "out": [[n, list(s)] for n, s in mod.output_shapes]}
"""


def _ours():
    ns = {"mx": mx}
    exec(compile(SCRIPT, "python_loss", "exec"), ns)
    return ns["RESULT"]


@needs_mxnet
def test_python_loss_example_trains_as_mxnet():
    ref = json.loads(
        run_mxnet("import mxnet as mx\n" + SCRIPT + "\nprint(json.dumps(RESULT))").splitlines()[-1]
    )
    got = _ours()
    assert got["out"] == ref["out"] == [["pyloss_output", [20, 4]]]
    assert [list(s) for s in got["score"]] == ref["score"]
    assert sorted(got["params"]) == sorted(ref["params"])
    for k, v in ref["params"].items():
        np.testing.assert_allclose(got["params"][k], v, rtol=1e-5, atol=1e-6, err_msg=k)


def test_python_loss_module_alone():
    loss = mx.mod.PythonLossModule(grad_func=lambda scores, labels: scores.asnumpy() - 1.0)
    loss.bind([("data", (2, 3))], [("softmax_label", (2,))])
    assert loss.output_shapes == [("pyloss_output", (2, 3))]
    assert loss.get_params() == ({}, {})
    batch = mx.io.DataBatch([mx.nd.ones((2, 3)) * 3], [mx.nd.zeros((2,))])
    loss.forward(batch)
    assert loss.get_outputs()[0].asnumpy().tolist() == [[3.0] * 3] * 2
    loss.backward()
    np.testing.assert_array_equal(loss.get_input_grads()[0].asnumpy(), np.full((2, 3), 2.0))


def test_python_module_misuse():
    with pytest.raises(PythonModuleError, match="one data and one label"):
        mx.mod.PythonLossModule(data_names=("a", "b"))
    loss = mx.mod.PythonLossModule()
    with pytest.raises(PythonModuleError, match="data_names"):
        loss.bind([("x", (2, 3))], [("softmax_label", (2,))])
    with pytest.raises(PythonModuleError, match="'write'"):
        loss.bind([("data", (2, 3))], grad_req="add")
    loss.bind([("data", (2, 3))], [("softmax_label", (2,))])
    loss.forward(mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.zeros((2,))]))
    with pytest.raises(PythonModuleError, match="out_grads"):
        loss.backward(out_grads=[mx.nd.ones((2, 3))])
    with pytest.raises(NotImplementedError, match="grad_func"):
        loss.backward()

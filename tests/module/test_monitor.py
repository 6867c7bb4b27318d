"""mx.mon.Monitor on a Module: the same names and statistics as MXNet 1.9.1."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import gluonjax as mx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mxnet_ref import needs_mxnet, run_mxnet  # noqa: E402

SCRIPT = """
data = mx.nd.array([[0.05, .10]])
label = mx.nd.array([[.01, 0.99]])
it = mx.io.NDArrayIter(data, label, batch_size=1)
x = mx.sym.Variable('data')
x = mx.sym.FullyConnected(name='fc_0', data=x, num_hidden=2)
x = mx.sym.Activation(name='act_0', data=x, act_type='sigmoid')
x = mx.sym.FullyConnected(name='fc_1', data=x, num_hidden=2)
x = mx.sym.Activation(name='act_1', data=x, act_type='sigmoid')
x = mx.sym.LinearRegressionOutput(data=x, name='softmax', grad_scale=2)
def mean_abs(v):
    return mx.nd.sum(mx.nd.abs(v)) / v.size
mon = mx.mon.Monitor(1, stat_func=mean_abs, pattern='.*', sort=True)
mod = mx.mod.Module(x, context=[mx.cpu()])
mod.bind(it.provide_data, label_shapes=it.provide_label, for_training=True)
mod.install_monitor(mon)
mod.init_params(arg_params={
    'fc_0_weight': mx.nd.array([[.15, .20], [.25, .30]]), 'fc_0_bias': mx.nd.array([.35, .35]),
    'fc_1_weight': mx.nd.array([[.40, .45], [.50, .55]]), 'fc_1_bias': mx.nd.array([.60, .60])})
mon.tic()
mod.forward_backward(next(iter(it)))
RESULT = [(k, float(v.split()[0])) for _, k, v in mon.toc()]
"""

# gradients MXNet does not compute here (the data has grad_req 'null', a label has none):
# its monitor shows whatever memory the backward operator wrote them into
MXNET_UNDEFINED = {"fc_0_backward_output0", "softmax_backward_output1"}


def _gluonjax_result():
    scope = {"mx": mx}
    exec(SCRIPT, scope)  # noqa: S102  (the test's own script, shared with MXNet)
    return scope["RESULT"]


def test_monitor_reports_forward_outputs_backward_gradients_and_arguments():
    res = _gluonjax_result()
    names = [k for k, _ in res]
    assert names == sorted(names) and len(res) == 21
    for node, n in (("fc_0", 6), ("fc_1", 6), ("act_0", 2), ("act_1", 2), ("softmax", 4)):
        assert sum(k.startswith(node) for k in names) == n
    assert {"fc_1_backward_output0", "act_1_backward_output", "data"} <= set(names)


@needs_mxnet
def test_monitor_values_match_mxnet():
    out = run_mxnet("import mxnet as mx\n" + SCRIPT + "\nprint(repr(RESULT))")
    ref = dict(eval(out.strip().splitlines()[-1]))  # noqa: S307  (MXNet's printed list)
    mine = dict(_gluonjax_result())
    assert set(mine) == set(ref)
    for name, value in ref.items():
        if name not in MXNET_UNDEFINED:
            assert mine[name] == pytest.approx(value, rel=1e-5), name

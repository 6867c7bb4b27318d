"""Convolutional recurrent cells with unknown input channels (``input_shape=(0, ...)``):
the first input gives ``i2h_weight`` its shape, eager and hybridized, with MXNet
1.9.1's values (run in ``.venv-mxnet``)."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

sys.path.insert(0, __file__.rsplit("/", 2)[0])
from mxnet_ref import needs_mxnet, run_mxnet  # noqa: E402

import gluonjax as mx  # noqa: E402
from gluonjax.gluon import contrib  # noqa: E402

X = {
    "Conv1DLSTMCell": np.random.RandomState(0).uniform(-1, 1, (2, 3, 5, 7)).astype(np.float32),
    "Conv2DGRUCell": np.random.RandomState(1).uniform(-1, 1, (2, 3, 4, 6, 6)).astype(np.float32),
}
MAKE = {
    "Conv1DLSTMCell": "contrib.rnn.Conv1DLSTMCell((0, 7), 10, (3,), (3,))",
    "Conv2DGRUCell": "contrib.rnn.Conv2DGRUCell((0, 6, 6), 4, (3, 3), (3, 3))",
}


def run(mod, contrib_mod, name, hybridize):
    cell = eval(MAKE[name], {"contrib": contrib_mod})  # noqa: S307 - our own literals
    if hybridize:
        cell.hybridize()
    cell.initialize(mod.init.Constant(0.05))
    out, states = cell.unroll(3, mod.nd.array(X[name]), layout="NTC", merge_outputs=True)
    return cell, out.asnumpy(), [s.asnumpy() for s in states]


@pytest.fixture(scope="module")
def mxnet_out(tmp_path_factory):
    d = tmp_path_factory.mktemp("convrnn")
    for name, x in X.items():
        np.save(d / f"{name}.npy", x)
    script = f"""
import json, numpy as np, mxnet as mx
from mxnet.gluon import contrib
out = {{}}
for name, make in {MAKE!r}.items():
    cell = eval(make)
    cell.hybridize()
    cell.initialize(mx.init.Constant(0.05))
    o, s = cell.unroll(3, mx.nd.array(np.load(name + ".npy")), layout="NTC", merge_outputs=True)
    out[name] = [cell.i2h_weight.shape, o.asnumpy().tolist(), [t.asnumpy().tolist() for t in s]]
print(json.dumps(out))
"""
    return json.loads(run_mxnet(script, cwd=d))


@needs_mxnet
@pytest.mark.parametrize("hybridize", [True, False])
@pytest.mark.parametrize("name", sorted(X))
def test_input_channels_inferred_as_mxnet(mxnet_out, name, hybridize):
    shape, ref_out, ref_states = mxnet_out[name]
    cell, out, states = run(mx, contrib, name, hybridize)
    assert cell.i2h_weight.shape == tuple(shape)
    np.testing.assert_allclose(out, np.array(ref_out, np.float32), rtol=1e-5, atol=1e-5)
    for got, ref in zip(states, ref_states):
        np.testing.assert_allclose(got, np.array(ref, np.float32), rtol=1e-5, atol=1e-5)


def test_conv_fill_shape():
    # MXNet 1.9.1's test_gluon_contrib.py::test_conv_fill_shape: 5 input channels
    cell = contrib.rnn.Conv1DLSTMCell((0, 7), 10, (3,), (3,))
    cell.hybridize()
    cell.initialize()
    out, _ = cell.unroll(3, mx.nd.ones((8, 3, 5, 7)), layout="NTC", merge_outputs=True)
    assert cell.i2h_weight.shape == (40, 5, 3) and out.shape == (8, 3, 10, 5)

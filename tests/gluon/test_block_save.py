"""Block.save / Block.load (MXNet 1.9.1's model files), also across frameworks."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import FileFormatError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mxnet_ref import needs_mxnet, run_mxnet  # noqa: E402

# The model of MXNet's test_gluon_save.py: children keyed by their (changing) names,
# so only restoring the saved names lets a rebuilt model find its parameters.
MODEL = """
class MyBlock(mx.gluon.nn.Block):
    def add(self, block):
        self._children[block.name + str(len(self._children))] = block

    def forward(self, x):
        for block in self._children.values():
            x = block(x)
        return x


def create_net():
    inside = MyBlock()
    inside.add(mx.gluon.nn.Dense(6, activation="tanh"))
    net = MyBlock()
    net.add(inside)
    net.add(mx.gluon.nn.Dense(3))
    return net
"""


def _model():
    scope = {"mx": mx}
    exec(MODEL, scope)  # noqa: S102  (the test's own model code, shared with MXNet)
    return scope["create_net"]


X = np.linspace(-1, 1, 20, dtype=np.float32).reshape(2, 10)


def test_a_rebuilt_model_loads_what_save_wrote(tmp_path):
    create_net = _model()
    net1 = create_net()
    net1.initialize(mx.init.Uniform(0.5))
    net1.hybridize()
    out1 = net1(mx.nd.array(X)).asnumpy()
    net1.save(str(tmp_path / "m"))
    structure = json.loads((tmp_path / "m-model.json").read_text())
    (top,) = structure.values()
    assert top["orig_name"] == net1.name and len(top["children"]) == 2
    net2 = create_net()  # new names: its children keys differ from net1's
    assert list(net2._children) != list(net1._children)
    net2.load(str(tmp_path / "m"))
    assert list(net2._children) == list(net1._children)
    np.testing.assert_allclose(net2(mx.nd.array(X)).asnumpy(), out1, rtol=1e-6)
    dense = net2._children[list(net2._children)[1]]
    assert dense._active


def test_a_model_file_of_another_tree_is_rejected(tmp_path):
    create_net = _model()
    net = create_net()
    net.initialize()
    net(mx.nd.array(X))
    net.save(str(tmp_path / "m"))
    other = mx.gluon.nn.HybridSequential()
    other.add(mx.gluon.nn.Dense(2))
    with pytest.raises(FileFormatError, match="no entry"):
        other.load(str(tmp_path / "m"))


@needs_mxnet
def test_files_move_between_mxnet_and_gluonjax(tmp_path):
    x_text = np.array2string(X, separator=",", precision=9, max_line_width=10_000)
    script = f"""
import mxnet as mx, numpy as np
{MODEL}
x = mx.nd.array(np.array({x_text}, dtype=np.float32))
net = create_net()
net.initialize(mx.init.Uniform(0.5))
net.hybridize()
np.save("mx_out.npy", net(x).asnumpy())
net.save("from_mx")
back = create_net()
back.load("from_gj")
np.save("mx_reads_gj.npy", back(x).asnumpy())
"""
    create_net = _model()
    net = create_net()
    net.initialize(mx.init.Uniform(0.5))
    gj_out = net(mx.nd.array(X)).asnumpy()
    net.save(str(tmp_path / "from_gj"))
    run_mxnet(script, cwd=tmp_path)
    # atol: an output near zero differs in its last bits with the summation order
    np.testing.assert_allclose(np.load(tmp_path / "mx_reads_gj.npy"), gj_out, rtol=1e-5, atol=1e-6)
    mine = create_net()
    mine.load(str(tmp_path / "from_mx"))
    np.testing.assert_allclose(
        mine(mx.nd.array(X)).asnumpy(), np.load(tmp_path / "mx_out.npy"), rtol=1e-5, atol=1e-6
    )

"""Recurrent cells (``gluon.rnn`` and ``gluon.contrib.rnn``) against MXNet 1.9.1.

Every cell case of ``tools/make_rnn_fixtures.py`` runs eagerly (MXNet's loop of
steps) and inside a hybridized block, where ``unroll`` is one ``lax.scan``; the
outputs, final states and all gradients must match MXNet's.
"""

import json
import sys
from pathlib import Path

import jax
import numpy as np
import pytest
import rnn_fixtures as rf

import gluonjax as mx
from gluonjax import autograd, gluon, nd
from gluonjax.base import MXNetError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mxnet_ref import needs_mxnet, run_mxnet  # noqa: E402

CELLS = rf.records()["cells"]


class Unroll(gluon.HybridBlock):
    """``cell.unroll`` inside a hybrid block (hybridized: a scan)."""

    def __init__(self, cell, length, layout, merge, n_states, with_len):
        super().__init__()
        self.cell = cell
        self._args = (length, layout, merge, n_states, with_len)

    def hybrid_forward(self, F, x, *args):
        length, layout, merge, n, with_len = self._args
        out, st = self.cell.unroll(
            length,
            x,
            begin_state=list(args[:n]) or None,
            layout=layout,
            merge_outputs=merge,
            valid_length=args[n] if with_len else None,
        )
        if not merge:
            out = F.stack(*out, axis=layout.find("T"))
        return out, st


def _case(record):
    a = rf.arrays(record, "cells")
    cell = rf.build_cell(record["kind"], record["kwargs"])
    cell.initialize()
    layout = record["layout"]
    length = a["x"].shape[layout.find("T")]
    with autograd.pause():
        cell.unroll(length, nd.array(a["x"]), layout=layout, merge_outputs=True)
    rf.set_params(cell, a)
    return a, cell, layout, length


# each case runs one path (compiles dominate the test time): MXNet's eager loop for these,
# the scanned hybridized unroll for the others
EAGER = {"rnn_relu_tnc", "gru", "stack_len", "dropout_stack", "zoneout", "lstm_len_tnc"}
EAGER_CASES = [r for r in CELLS if r["id"] in EAGER]


@pytest.mark.parametrize("record", EAGER_CASES, ids=[r["id"] for r in EAGER_CASES])
def test_cell_eager_matches_mxnet(record):
    a, cell, layout, length = _case(record)
    assert repr(cell) == record["repr"]
    assert {k: list(p.shape) for k, p in cell._collect_params_with_prefix().items()} == record[
        "params"
    ]
    merge = record["merge"]

    def fn(x, states, lengths):
        out, st = cell.unroll(
            length, x, begin_state=states, layout=layout, merge_outputs=merge, valid_length=lengths
        )
        if not merge:
            assert isinstance(out, list) and len(out) == length
            out = nd.stack(*out, axis=layout.find("T"))
        return out, st

    n = len(cell.state_info())
    rf.check(rf.run_and_grad(fn, cell, a, n, record["train"]), a, record["id"])


SCANNED = [r for r in CELLS if r["id"] not in EAGER or r["id"] in ("dropout_stack", "zoneout")]


@pytest.mark.parametrize("record", SCANNED, ids=[r["id"] for r in SCANNED])
def test_cell_hybridized_unroll_matches_mxnet(record):
    a, cell, layout, length = _case(record)
    n = len(cell.state_info())
    block = Unroll(cell, length, layout, record["merge"], n, "len" in a)
    block.hybridize()

    def fn(x, states, lengths):
        return block(x, *states, *([lengths] if lengths is not None else []))

    rf.check(rf.run_and_grad(fn, cell, a, n, record["train"]), a, record["id"] + " scanned")


def _count(jaxpr, name):
    n = 0
    for e in jaxpr.eqns:
        n += e.primitive.name == name
        for sub in jax.core.jaxprs_in_params(e.params):
            n += _count(sub, name)
    return n


def _traced(block, *inputs):
    block(*inputs)
    cached = block._cached
    key = jax.random.PRNGKey(0)
    return jax.make_jaxpr(lambda p, *v: cached._pure(p, list(v), key, np.uint32(0), False)[0])(
        [p.data()._data for p in cached.params], *[x._data for x in inputs]
    ).jaxpr


def test_hybridized_unroll_is_a_scan_not_a_loop():
    sizes = []
    for length in (3, 12):
        cell = gluon.rnn.LSTMCell(4)
        block = Unroll(cell, length, "NTC", True, 2, False)
        block.initialize()
        block.hybridize()
        jaxpr = _traced(block, nd.ones((2, length, 3)), nd.zeros((2, 4)), nd.zeros((2, 4)))
        assert _count(jaxpr, "scan") == 1
        sizes.append(len(jaxpr.eqns))
    assert sizes[0] == sizes[1]  # the program does not grow with the length


def test_scanned_steps_draw_fresh_dropout_masks():
    stack = gluon.rnn.HybridSequentialRNNCell()
    stack.add(gluon.rnn.DropoutCell(0.5))
    block = Unroll(stack, 8, "TNC", True, 0, False)
    block.hybridize()
    with autograd.train_mode():
        out, _ = block(nd.ones((8, 1, 64)))
    kept = out.asnumpy()[:, 0, :] != 0
    assert 0.3 < kept.mean() < 0.7
    assert len({row.tobytes() for row in kept}) == 8  # every step its own mask
    np.testing.assert_allclose(out.asnumpy()[out.asnumpy() != 0], 2.0)


def test_variational_masks_are_shared_over_steps_when_scanned():
    base = gluon.rnn.RNNCell(16, activation="relu", input_size=16)
    cell = gluon.contrib.rnn.VariationalDropoutCell(base, drop_states=0.5, drop_outputs=0.5)
    cell.initialize()
    base.i2h_weight.set_data(nd.array(np.eye(16)))
    base.h2h_weight.set_data(nd.zeros((16, 16)))
    block = Unroll(cell, 6, "NTC", True, 1, False)
    block.hybridize()
    with autograd.train_mode():
        out, _ = block(nd.ones((2, 6, 16)), nd.zeros((2, 16)))
    out = out.asnumpy()
    for t in range(1, 6):
        np.testing.assert_array_equal(out[:, t], out[:, 0])  # one output mask per sequence
    assert 0 < (out == 0).mean() < 1


def test_zoneout_scanned_in_training_runs_and_predict_equals_eager():
    cell = gluon.rnn.ZoneoutCell(gluon.rnn.GRUCell(3), zoneout_outputs=0.5, zoneout_states=0.5)
    block = Unroll(cell, 5, "NTC", True, 1, False)
    block.initialize()
    x, h = nd.ones((2, 5, 3)), nd.zeros((2, 3))
    eager = block(x, h)[0].asnumpy()
    block.hybridize()
    np.testing.assert_allclose(block(x, h)[0].asnumpy(), eager, rtol=1e-6)
    with autograd.record():
        out, states = block(x, h)
    out.backward()
    assert out.shape == (2, 5, 3) and states[0].shape == (2, 3)


def test_symbolic_unroll_names_and_shapes():
    cell = gluon.rnn.BidirectionalCell(
        gluon.rnn.LSTMCell(4, prefix="rnn_l0_"),
        gluon.rnn.GRUCell(4, prefix="rnn_r0_"),
        output_prefix="rnn_bi_",
    )
    inputs = [mx.sym.Variable(f"rnn_t{i}_data") for i in range(3)]
    outputs, states = cell.unroll(3, inputs)
    group = mx.sym.Group(outputs)
    assert group.list_outputs() == ["rnn_bi_t0_output", "rnn_bi_t1_output", "rnn_bi_t2_output"]
    _, outs, _ = group.infer_shape(**{f"rnn_t{i}_data": (5, 2) for i in range(3)})
    assert outs == [(5, 8)] * 3
    assert len(states) == 3


def test_cell_api():
    cell = gluon.rnn.LSTMCell(4, prefix="c_")
    assert cell.state_info(2) == [{"shape": (2, 4), "__layout__": "NC"}] * 2
    states = cell.begin_state(batch_size=2, func=nd.ones)
    assert [s.shape for s in states] == [(2, 4), (2, 4)]
    syms = cell.begin_state(func=mx.sym.var)
    assert syms[0].name == "c_begin_state_2"  # the counter counts every state made
    cell.reset()
    assert cell.begin_state(func=mx.sym.var)[0].name == "c_begin_state_0"
    cell.initialize()
    out, new = cell(nd.ones((2, 3)), states)
    assert out.shape == (2, 4) and len(new) == 2
    zone = gluon.rnn.ZoneoutCell(cell)
    with pytest.raises(MXNetError, match="modifier"):
        cell.begin_state(batch_size=2)
    with pytest.raises(MXNetError, match="already modified"):
        gluon.rnn.ResidualCell(cell)
    assert len(zone.begin_state(batch_size=2, func=nd.zeros)) == 2
    bi = gluon.rnn.BidirectionalCell(gluon.rnn.RNNCell(2), gluon.rnn.RNNCell(2))
    with pytest.raises(NotImplementedError):
        bi(nd.ones((1, 2)), bi.begin_state(batch_size=1))


def test_foreach_and_dynamic_unroll_over_a_cell():
    cell = gluon.rnn.GRUCell(3, input_size=2)
    cell.initialize()
    x = nd.array(np.random.default_rng(3).standard_normal((5, 2, 2)))
    begin = cell.begin_state(batch_size=2)
    ref, ref_states = cell.unroll(5, x, begin_state=begin, layout="TNC", merge_outputs=True)
    out, states = nd.contrib.foreach(lambda xt, s: cell(xt, s), x, begin)
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-5, atol=1e-6)
    lengths = nd.array([5, 3])
    ref, ref_states = cell.unroll(
        5, x, begin_state=begin, layout="TNC", merge_outputs=True, valid_length=lengths
    )
    out, states = gluon.contrib.rnn.dynamic_unroll(cell, x, begin, valid_length=lengths)
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(states[0].asnumpy(), ref_states[0].asnumpy(), rtol=1e-5, atol=1e-6)


def _exported_unroll(tmp_path):
    cell = gluon.rnn.LSTMCell(3)
    block = Unroll(cell, 4, "NTC", True, 0, False)  # zero begin states made in the graph
    block.initialize()
    block.hybridize()
    x = nd.array(np.random.default_rng(4).standard_normal((2, 4, 5)))
    y = block(x)[0].asnumpy()
    block.export(str(tmp_path / "u"), stablehlo=False)
    return x, y


def test_exported_unroll_is_an_unrolled_graph(tmp_path):
    x, y = _exported_unroll(tmp_path)
    graph = json.loads((tmp_path / "u-symbol.json").read_text())
    ops = [n["op"] for n in graph["nodes"]]
    assert ops.count("FullyConnected") == 8 and not any(o.startswith("jax.") for o in ops)
    back = gluon.SymbolBlock.imports(
        str(tmp_path / "u-symbol.json"), ["data"], str(tmp_path / "u-0000.params")
    )
    np.testing.assert_allclose(back(x)[0].asnumpy(), y, rtol=1e-5, atol=1e-6)


@needs_mxnet
def test_mxnet_runs_the_exported_unroll(tmp_path):
    x, y = _exported_unroll(tmp_path)
    np.save(tmp_path / "x.npy", x.asnumpy())
    script = f"""
import mxnet as mx, numpy as np
net = mx.gluon.SymbolBlock.imports({str(tmp_path / "u-symbol.json")!r}, ['data'],
                                   {str(tmp_path / "u-0000.params")!r})
print(list(net(mx.nd.array(np.load({str(tmp_path / "x.npy")!r})))[0].asnumpy().ravel()))
"""
    got = np.array(eval(run_mxnet(script).strip().splitlines()[-1]), np.float32)  # noqa: S307
    np.testing.assert_allclose(got.reshape(y.shape), y, rtol=1e-5, atol=1e-6)


def test_hybridized_foreach_steps_draw_fresh_dropout_masks():
    class Net(gluon.HybridBlock):
        def hybrid_forward(self, F, x, s):
            out, _ = F.contrib.foreach(lambda xt, st: (F.Dropout(xt, p=0.5), st), x, [s])
            return out

    net = Net()
    net.hybridize()
    with autograd.train_mode():
        out = net(nd.ones((6, 64)), nd.zeros((1,))).asnumpy()
    kept = out != 0
    assert 0.3 < kept.mean() < 0.7 and len({row.tobytes() for row in kept}) == 6

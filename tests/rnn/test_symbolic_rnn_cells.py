"""``mx.rnn``'s residual, bidirectional, zoneout, dropout, fused and convolutional cells
against real MXNet 1.9.1 (``tests/fixtures/sym_rnn``, made by
``tools/make_sym_rnn_fixtures.py`` from the graphs in ``tools/sym_rnn_cases.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.rnn.rnn_cell import RNNCellError, RNNCellStepError

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import sym_rnn_cases as cases  # noqa: E402

FIX = ROOT / "tests" / "fixtures" / "sym_rnn"
RTOL, ATOL = 1e-4, 1e-5


def _load(run):
    meta = json.loads((FIX / f"{run}.json").read_text())
    with np.load(FIX / f"{run}.npz") as z:
        return meta, {k: z[k] for k in z.files}


META, ARRAYS = {}, {}
for _run in ("plain", "fused"):
    _m, _a = _load(_run)
    META.update(_m["cases"])
    ARRAYS.update(_a)


def _args(case):
    prefix = f"{case}.arg."
    return {k[len(prefix) :]: v for k, v in ARRAYS.items() if k.startswith(prefix)}


@pytest.mark.parametrize("case", sorted(cases.CASES))
def test_graph_and_forward_match_mxnet(case):
    ref = META[case]
    with mx.name.NameManager():  # automatic names counted per case, as in the fixtures
        sym, shapes = cases.CASES[case](mx)
    assert sym.list_arguments() == ref["arguments"]
    assert sym.list_outputs() == ref["outputs"]
    _, out_shapes, _ = sym.infer_shape(**shapes)
    assert [list(s) for s in out_shapes] == ref["out_shapes"]
    args = {k: mx.nd.array(v) for k, v in _args(case).items()}
    outs = sym.bind(mx.cpu(), args).forward(is_train=False)
    assert len(outs) == len(ref["outputs"])
    for i, out in enumerate(outs):
        np.testing.assert_allclose(out.asnumpy(), ARRAYS[f"{case}.out{i}"], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("case", cases.FUSED)
def test_fused_unpack_and_pack_match_mxnet(case):
    cell = cases._fused(mx, case)
    pname = cell._parameter.name
    packed = _args(case)[pname]
    unpacked = cell.unpack_weights({pname: mx.nd.array(packed), "other": mx.nd.ones((1,))})
    prefix = f"{case}.unpacked."
    want = {k[len(prefix) :]: v for k, v in ARRAYS.items() if k.startswith(prefix)}
    assert sorted(unpacked) == sorted([*want, "other"])
    for name, value in want.items():
        np.testing.assert_array_equal(unpacked[name].asnumpy(), value)
    repacked = cell.pack_weights(unpacked)
    assert sorted(repacked) == sorted([pname, "other"])
    np.testing.assert_array_equal(repacked[pname].asnumpy(), ARRAYS[f"{case}.repacked"])
    np.testing.assert_array_equal(repacked[pname].asnumpy(), packed)


@pytest.mark.parametrize("case", ["unfused_lstm_2bi", "unfused_gru"])
def test_unfused_stack_packs_gates_as_mxnet(case):
    """SequentialRNNCell / BidirectionalCell.pack_weights of the fused cell's unpacked gates
    give the arguments MXNet fed to the unfused graph."""
    fused = case[2:]
    prefix = f"{fused}.unpacked."
    unpacked = {k[len(prefix) :]: mx.nd.array(v) for k, v in ARRAYS.items() if k.startswith(prefix)}
    packed = cases._fused(mx, fused).unfuse().pack_weights(unpacked)
    want = {k: v for k, v in _args(case).items() if k != "data"}
    assert sorted(packed) == sorted(want)
    for name, value in want.items():
        np.testing.assert_array_equal(packed[name].asnumpy(), value)


@pytest.mark.parametrize("case", sorted(cases.FUSED_INIT))
def test_fused_rnn_initializer_matches_mxnet(case):
    want = ARRAYS[f"init.{case}"]
    init, global_init = cases.fused_init(mx, case)
    direct = mx.nd.zeros(want.shape)
    init._init_weight(mx.init.InitDesc("parameters", global_init=global_init), direct)
    np.testing.assert_array_equal(direct.asnumpy(), want)
    # through the variable's __init__ attribute (MXNet 1.9.1 fails to re-create a FusedRNN
    # with an inner initializer from its dumps(), gluonjax does not)
    routed = mx.nd.zeros(want.shape)
    global_init(mx.init.InitDesc("parameters", attrs={"__init__": init.dumps()}), routed)
    np.testing.assert_array_equal(routed.asnumpy(), want)


def test_zoneout_in_training_keeps_new_or_previous_output():
    """With zoneout on outputs only, each output element is the base cell's new output or the
    previous (zoned-out) output, 0 before the first step; both choices occur."""
    base = mx.rnn.RNNCell(8, prefix="rnn_")
    zoned = mx.rnn.ZoneoutCell(base, zoneout_outputs=0.5)
    steps = [mx.sym.Variable(f"x{i}") for i in range(4)]
    outs, _ = zoned.unroll(4, steps)
    rng = np.random.default_rng(0)
    args = {"rnn_i2h_weight": (8, 5), "rnn_i2h_bias": (8,), "rnn_h2h_weight": (8, 8)}
    args = {k: rng.uniform(-1, 1, s).astype(np.float32) for k, s in args.items()}
    args["rnn_h2h_bias"] = np.zeros(8, np.float32)
    xs = [rng.uniform(-1, 1, (16, 5)).astype(np.float32) for _ in range(4)]
    feed = {k: mx.nd.array(v) for k, v in args.items()}
    feed.update({f"x{i}": mx.nd.array(x) for i, x in enumerate(xs)})
    got = [o.asnumpy() for o in mx.sym.Group(outs).bind(mx.cpu(), feed).forward(is_train=True)]
    h, prev, kept = np.zeros((16, 8), np.float32), np.zeros((16, 8), np.float32), []
    for x, out in zip(xs, got, strict=True):
        h = np.tanh(
            x @ args["rnn_i2h_weight"].T + args["rnn_i2h_bias"] + h @ args["rnn_h2h_weight"].T
        )
        new = np.isclose(out, h, rtol=1e-5, atol=1e-6)
        old = np.isclose(out, prev, rtol=1e-5, atol=1e-6)
        assert np.all(new | old)
        kept.append(new.mean())
        prev = out
    assert 0.2 < np.mean(kept) < 0.8


def test_lstm_unpack_pack_weights_split_gates():
    cell = mx.rnn.LSTMCell(3, prefix="l_")
    rng = np.random.default_rng(1)
    w, b = rng.standard_normal((12, 5)), rng.standard_normal(12)
    args = {"l_i2h_weight": w, "l_i2h_bias": b, "l_h2h_weight": w[:, :3], "l_h2h_bias": -b}
    unpacked = cell.unpack_weights({k: mx.nd.array(v) for k, v in args.items()})
    for j, gate in enumerate("ifco"):
        np.testing.assert_allclose(
            unpacked[f"l_i2h_{gate}_weight"].asnumpy(), w[3 * j : 3 * j + 3], rtol=1e-6
        )
        np.testing.assert_allclose(
            unpacked[f"l_h2h_{gate}_bias"].asnumpy(), -b[3 * j : 3 * j + 3], rtol=1e-6
        )
    repacked = cell.pack_weights(unpacked)
    assert sorted(repacked) == sorted(args)
    for k, v in args.items():
        np.testing.assert_allclose(repacked[k].asnumpy(), v, rtol=1e-6)


def test_module_initializes_fused_cell_forget_bias():
    """Module.init_params fills the packed vector through init.FusedRNN: every LSTM
    forget-gate bias is forget_bias, the other biases 0 (as MXNet's test_lstm_forget_bias)."""
    cell = mx.rnn.FusedRNNCell(5, num_layers=2, mode="lstm", forget_bias=2.5, prefix="f_")
    out, _ = cell.unroll(2, mx.sym.Variable("data"), layout="TNC", merge_outputs=True)
    mod = mx.mod.Module(out, label_names=None, context=mx.cpu(0))
    mod.bind(data_shapes=[("data", (2, 3, 4))], label_shapes=None)
    mod.init_params(mx.init.Uniform(0.1))
    unpacked = cell.unpack_weights(mod.get_params()[0])
    for layer in range(2):
        for group in ("i2h", "h2h"):
            for gate in "ifco":
                bias = unpacked[f"f_l{layer}_{group}_{gate}_bias"].asnumpy()
                np.testing.assert_array_equal(bias, np.full(5, 2.5 if gate == "f" else 0.0))
        weight = unpacked[f"f_l{layer}_i2h_c_weight"].asnumpy()
        assert np.all(np.abs(weight) <= 0.1) and np.any(weight != 0)


def test_errors():
    bi = mx.rnn.BidirectionalCell(mx.rnn.GRUCell(2, prefix="a_"), mx.rnn.GRUCell(2, prefix="b_"))
    x = mx.sym.Variable("x")
    with pytest.raises(RNNCellStepError, match="unroll") as info:
        bi(x, bi.begin_state())
    assert isinstance(info.value, NotImplementedError)
    fused = mx.rnn.FusedRNNCell(2, mode="gru")
    with pytest.raises(NotImplementedError, match="FusedRNNCell"):
        fused(x, [])
    with pytest.raises(RNNCellError, match="FusedRNNCell"):
        mx.rnn.ZoneoutCell(fused, zoneout_outputs=0.5)
    stack = mx.rnn.SequentialRNNCell()
    stack.add(bi)
    with pytest.raises(RNNCellError, match="bidirectional"):
        mx.rnn.ZoneoutCell(stack, zoneout_states=0.5)
    with pytest.raises(RNNCellError, match=r"h2h_kernel.*\(2, 3\)"):
        mx.rnn.ConvGRUCell((1, 3, 4, 4), 2, h2h_kernel=(2, 3))
    with pytest.raises(ValueError, match="number"):
        mx.rnn.DropoutCell("0.5")
    with pytest.raises(ValueError, match="mode 'lstmx'"):
        mx.rnn.FusedRNNCell(2, mode="lstmx")
    cell = mx.rnn.FusedRNNCell(2, mode="rnn_tanh", prefix="t_")
    parts = cell.unpack_weights({"t_parameters": mx.nd.zeros((2 * (3 + 2 + 2),))})
    parts["t_l0_h2h_weight"] = mx.nd.zeros((2, 3))
    with pytest.raises(RNNCellError, match=r"t_l0_h2h_weight has shape \(2, 3\).*\(2, 2\)"):
        cell.pack_weights(parts)
    with pytest.raises(RNNCellError, match="t_parameters"):
        cell.unpack_weights({"t_parameters": mx.nd.zeros((13,))})


def test_zoneout_of_a_stack_with_variable_begin_states():
    """begin_state(func=sym.Variable) reaches every cell through the modifier and the stack
    (MXNet 1.9.1 raises a TypeError there); outside training zoneout passes values through."""
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.RNNCell(3, prefix="a_"))
    stack.add(mx.rnn.ResidualCell(mx.rnn.RNNCell(3, prefix="b_")))
    zoned = mx.rnn.ZoneoutCell(stack, zoneout_outputs=0.3, zoneout_states=0.3)
    begin = zoned.begin_state(func=mx.sym.Variable)
    assert [s.name for s in begin] == ["a_begin_state_0", "b_begin_state_0"]
    outs, states = zoned.unroll(2, [mx.sym.Variable("x0"), mx.sym.Variable("x1")], begin)
    rng = np.random.default_rng(2)
    feed = {n: rng.uniform(-1, 1, (2, 3)).astype(np.float32) for n in ("x0", "x1")}
    feed.update({s.name: rng.uniform(-1, 1, (2, 3)).astype(np.float32) for s in begin})
    for p in "ab":
        feed[f"{p}_i2h_weight"] = rng.uniform(-1, 1, (3, 3)).astype(np.float32)
        feed[f"{p}_h2h_weight"] = rng.uniform(-1, 1, (3, 3)).astype(np.float32)
        feed[f"{p}_i2h_bias"] = feed[f"{p}_h2h_bias"] = np.zeros(3, np.float32)
    exe = mx.sym.Group(outs + states).bind(mx.cpu(), {k: mx.nd.array(v) for k, v in feed.items()})
    got = [o.asnumpy() for o in exe.forward(is_train=False)]

    def step(p, x, h):
        return np.tanh(x @ feed[f"{p}_i2h_weight"].T + h @ feed[f"{p}_h2h_weight"].T)

    ha, hb = feed["a_begin_state_0"], feed["b_begin_state_0"]
    want = []
    for x in (feed["x0"], feed["x1"]):
        ha = step("a", x, ha)
        hb = step("b", ha, hb)
        want.append(hb + ha)
    for g, w in zip(got, [*want, ha, hb], strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)

"""Block: naming, repr, children, hooks, apply, cast, summary, ParameterDict.

Expected names and reprs were produced by running NAMES_SCRIPT under MXNet 1.9.1;
``test_names_and_reprs_match_live_mxnet`` re-runs it there when available.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd
from gluonjax.gluon import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mxnet_ref import needs_mxnet, run_mxnet  # noqa: E402

NAMES_SCRIPT = r"""
import json
nn = mx.gluon.nn
out = {}
with mx.name.NameManager():
    d0 = nn.Dense(2)
    d1 = nn.Dense(2, in_units=4)
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(3, activation="relu"), nn.Dense(2), nn.BatchNorm(), nn.Dropout(0.5),
                nn.Embedding(10, 4), nn.Activation("tanh"), nn.Flatten())

    class Model(nn.Block):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.enc = nn.HybridSequential()
                with self.enc.name_scope():
                    self.enc.add(nn.Dense(4), nn.Dense(4))
                self.head = nn.Dense(1)
                self.scale = self.params.get("scale", shape=(1,))

    class NoScope(nn.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            self.hidden = nn.Dense(10)

    m = Model()
    m2 = Model(prefix="mymodel_")
    ns = NoScope()
    after = nn.Dense(5)
    seq = nn.Sequential()
    seq.add(nn.Dense(2), nn.Dense(3, in_units=2))
    blocks = {"d0": d0, "d1": d1, "net": net, "net0": net[0], "net0act": net[0].act, "net5": net[5],
              "m": m, "m.enc": m.enc, "m.enc1": m.enc[1], "m.head": m.head, "m2": m2,
              "m2.head": m2.head, "ns": ns, "ns.hidden": ns.hidden, "after": after, "seq": seq}
    for k, b in blocks.items():
        out[k] = [b.prefix, b.name, list(b.collect_params().keys())]
    out["m.structural"] = list(m._collect_params_with_prefix().keys())
    out["net.structural"] = list(net._collect_params_with_prefix().keys())
    out["reprs"] = {k: repr(b) for k, b in [
        ("net", net), ("seq", seq), ("d0", d0), ("d1", d1), ("m", m),
        ("bn", nn.BatchNorm(in_channels=3, momentum=0.8, scale=False, axis=-1)),
        ("drop", nn.Dropout(0.3, axes=(1,))), ("emb", nn.Embedding(5, 2, dtype="float16")),
        ("dense_sig", nn.Dense(4, in_units=2, activation="sigmoid", use_bias=False)),
        ("act", nn.Activation("softrelu")),
        ("ln", nn.LayerNorm()), ("inorm", nn.InstanceNorm()), ("gn", nn.GroupNorm(2)),
        ("lam", nn.Lambda("tanh")), ("hlam", nn.HybridLambda("tanh")),
    ]}
print(json.dumps(out))
"""


def _run_here():
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(NAMES_SCRIPT, {"mx": mx, "__name__": "names_script"})
    return json.loads(buf.getvalue())


@pytest.fixture(scope="module")
def names():
    return _run_here()


# Recorded from MXNet 1.9.1 (prefix, name, collect_params keys).
EXPECTED_NAMES = {
    "d0": ["dense0_", "dense0", ["dense0_weight", "dense0_bias"]],
    "d1": ["dense1_", "dense1", ["dense1_weight", "dense1_bias"]],
    "net": [
        "hybridsequential0_",
        "hybridsequential0",
        [
            "hybridsequential0_dense0_weight",
            "hybridsequential0_dense0_bias",
            "hybridsequential0_dense1_weight",
            "hybridsequential0_dense1_bias",
            "hybridsequential0_batchnorm0_gamma",
            "hybridsequential0_batchnorm0_beta",
            "hybridsequential0_batchnorm0_running_mean",
            "hybridsequential0_batchnorm0_running_var",
            "hybridsequential0_embedding0_weight",
        ],
    ],
    "net0": [
        "hybridsequential0_dense0_",
        "hybridsequential0_dense0",
        ["hybridsequential0_dense0_weight", "hybridsequential0_dense0_bias"],
    ],
    "net0act": ["hybridsequential0_dense0_relu_", "hybridsequential0_dense0_relu", []],
    "net5": ["hybridsequential0_tanh0_", "hybridsequential0_tanh0", []],
    "m": [
        "model0_",
        "model0",
        [
            "model0_scale",
            "model0_hybridsequential0_dense0_weight",
            "model0_hybridsequential0_dense0_bias",
            "model0_hybridsequential0_dense1_weight",
            "model0_hybridsequential0_dense1_bias",
            "model0_dense0_weight",
            "model0_dense0_bias",
        ],
    ],
    "m.enc1": [
        "model0_hybridsequential0_dense1_",
        "model0_hybridsequential0_dense1",
        ["model0_hybridsequential0_dense1_weight", "model0_hybridsequential0_dense1_bias"],
    ],
    "m.head": ["model0_dense0_", "model0_dense0", ["model0_dense0_weight", "model0_dense0_bias"]],
    "m2.head": [
        "mymodel_dense0_",
        "mymodel_dense0",
        ["mymodel_dense0_weight", "mymodel_dense0_bias"],
    ],
    "ns": ["noscope0_", "noscope0", ["dense2_weight", "dense2_bias"]],
    "ns.hidden": ["dense2_", "dense2", ["dense2_weight", "dense2_bias"]],
    "after": ["dense3_", "dense3", ["dense3_weight", "dense3_bias"]],
    "seq": [
        "sequential0_",
        "sequential0",
        ["dense4_weight", "dense4_bias", "dense5_weight", "dense5_bias"],
    ],
    "m.structural": [
        "scale",
        "enc.0.weight",
        "enc.0.bias",
        "enc.1.weight",
        "enc.1.bias",
        "head.weight",
        "head.bias",
    ],
    "net.structural": [
        "0.weight",
        "0.bias",
        "1.weight",
        "1.bias",
        "2.gamma",
        "2.beta",
        "2.running_mean",
        "2.running_var",
        "4.weight",
    ],
}

EXPECTED_REPRS = {
    "net": "HybridSequential(\n"
    "  (0): Dense(None -> 3, Activation(relu))\n"
    "  (1): Dense(None -> 2, linear)\n"
    "  (2): BatchNorm(axis=1, eps=1e-05, momentum=0.9, fix_gamma=False, "
    "use_global_stats=False, in_channels=None)\n"
    "  (3): Dropout(p = 0.5, axes=())\n"
    "  (4): Embedding(10 -> 4, float32)\n"
    "  (5): Activation(tanh)\n"
    "  (6): Flatten\n"
    ")",
    "seq": "Sequential(\n  (0): Dense(None -> 2, linear)\n  (1): Dense(2 -> 3, linear)\n)",
    "m": "Model(\n  (enc): HybridSequential(\n    (0): Dense(None -> 4, linear)\n"
    "    (1): Dense(None -> 4, linear)\n  )\n  (head): Dense(None -> 1, linear)\n)",
    "d0": "Dense(None -> 2, linear)",
    "d1": "Dense(4 -> 2, linear)",
    "bn": "BatchNorm(axis=-1, eps=1e-05, momentum=0.8, fix_gamma=True, use_global_stats=False, "
    "in_channels=3)",
    "drop": "Dropout(p = 0.3, axes=(1,))",
    "emb": "Embedding(5 -> 2, float16)",
    "dense_sig": "Dense(2 -> 4, Activation(sigmoid))",
    "act": "Activation(softrelu)",
    "lam": "Lambda(tanh)",
    "hlam": "HybridLambda(tanh)",
    "ln": "LayerNorm(eps=1e-05, axis=-1, center=True, scale=True, in_channels=0)",
    "inorm": "InstanceNorm(eps=1e-05, axis=1, center=True, scale=False, in_channels=0)",
    "gn": "GroupNorm(eps=1e-05, num_groups=2, center=True, scale=True)",
}


@pytest.mark.parametrize("key", sorted(EXPECTED_NAMES))
def test_names_like_mxnet(names, key):
    assert names[key] == EXPECTED_NAMES[key]


@pytest.mark.parametrize("key", sorted(EXPECTED_REPRS))
def test_repr_like_mxnet(names, key):
    assert names["reprs"][key] == EXPECTED_REPRS[key]


@needs_mxnet
@pytest.mark.mxnet
def test_names_and_reprs_match_live_mxnet(names):
    ref = json.loads(run_mxnet("import mxnet as mx\n" + NAMES_SCRIPT).strip().splitlines()[-1])
    assert names == ref


def test_name_scope_symbols_get_prefix():
    blk = nn.Dense(2, prefix="blk_")
    with blk.name_scope():
        s = mx.sym.relu(mx.sym.var("x"))
    assert s.name == "blk_relu0"


# ---------------------------------------------------------------- children
class _Two(nn.Block):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.a = nn.Dense(3, in_units=2)
            self.b = nn.Dense(1, in_units=3)

    def forward(self, x):
        return self.b(self.a(x))


def test_children_by_attribute_and_register_child():
    net = _Two()
    assert list(net._children) == ["a", "b"]
    blk = nn.Block()
    blk.register_child(nn.Dense(1))
    blk.register_child(nn.Dense(1), "foo")
    blk.register_child(nn.Dense(1))
    assert list(blk._children) == ["0", "foo", "2"]  # as MXNet 1.9.1


def test_params_vs_collect_params():
    net = _Two(prefix="two_")
    assert list(net.params.keys()) == []  # children's parameters are not own params
    assert list(net.collect_params().keys()) == [
        "two_dense0_weight",
        "two_dense0_bias",
        "two_dense1_weight",
        "two_dense1_bias",
    ]


def test_apply_order():
    net = nn.HybridSequential(prefix="s_")
    with net.name_scope():
        net.add(nn.Dense(2, activation="relu"), nn.Dense(1))
    order = []
    net.apply(lambda b: order.append(b.name))
    # MXNet 1.9.1: children first, then the block itself
    assert order == ["s_dense0_relu", "s_dense0", "s_dense1", "s"]


def test_apply_initializes():
    net = _Two()
    net.initialize()
    net.apply(lambda b: [p.set_data(nd.ones(p.shape)) for p in b.params.values()])
    assert all(np.all(p.data().asnumpy() == 1) for p in net.collect_params().values())


@pytest.mark.parametrize("hybrid", [False, True])
def test_forward_hooks_and_detach(hybrid):
    calls = []
    d = nn.Dense(2, in_units=2)
    d.initialize()
    if hybrid:
        d.hybridize()
    h1 = d.register_forward_pre_hook(lambda blk, inp: calls.append(("pre", blk is d, len(inp))))
    h2 = d.register_forward_hook(lambda blk, inp, out: calls.append(("post", out.shape)))
    d(nd.ones((1, 2)))
    h1.detach()
    d(nd.ones((1, 2)))
    h2.detach()
    d(nd.ones((1, 2)))
    assert calls == [("pre", True, 1), ("post", (1, 2)), ("post", (1, 2))]


def test_cast_keeps_batchnorm_float32():
    net = nn.HybridSequential()
    net.add(nn.Dense(2, in_units=3), nn.BatchNorm(in_channels=2))
    net.initialize()
    net.cast("float16")
    # MXNet 1.9.1: Dense params become float16, BatchNorm keeps float32
    assert [np.dtype(p.dtype).name for p in net.collect_params().values()] == [
        "float16",
        "float16",
        "float32",
        "float32",
        "float32",
        "float32",
    ]
    assert net[0].weight.data().dtype == np.float16


@pytest.mark.parametrize("deferred", [False, True])
def test_summary_totals(capsys, deferred):
    net = nn.HybridSequential()
    if deferred:
        net.add(nn.Dense(4, activation="relu"), nn.BatchNorm(), nn.Dense(2))
    else:
        net.add(
            nn.Dense(4, activation="relu", in_units=5),
            nn.BatchNorm(in_channels=4),
            nn.Dense(2, in_units=4),
        )
    net.initialize()
    net.summary(nd.ones((3, 5)))
    text = capsys.readouterr().out
    dense1, bn, dense2 = 5 * 4 + 4, 4 * 4, 4 * 2 + 2
    total = dense1 + bn + dense2
    assert f"Total params: {total}" in text
    assert f"Trainable params: {total - 8}" in text  # running mean/var are not trainable
    assert "Non-trainable params: 8" in text
    assert f"Unique parameters in model: {total}" in text
    rows = [ln.split() for ln in text.splitlines()]
    found = {(r[0].split("-")[0], " ".join(r[1:-1]), r[-1]) for r in rows if r and "-" in r[0]}
    assert ("Dense", "(3, 4)", str(dense1)) in found
    assert ("BatchNorm", "(3, 4)", str(bn)) in found
    assert ("Dense", "(3, 2)", str(dense2)) in found


def test_summary_shared_params(capsys):
    class Sh(nn.Block):
        def __init__(self):
            super().__init__()
            self.a = nn.Dense(3, in_units=3)

        def forward(self, x):
            return self.a(self.a(x))

    s = Sh()
    s.initialize()
    s.summary(nd.ones((2, 3)))
    text = capsys.readouterr().out
    assert "Total params: 24" in text  # 12 weights used twice
    assert "Shared params in forward computation graph: 12" in text
    assert "Unique parameters in model: 12" in text


def test_gluon_block_module_exports_hybrid_and_symbol_block():
    # MXNet defines them in gluon/block.py; libraries import them from there
    from gluonjax.gluon.block import Block, HybridBlock, SymbolBlock

    assert HybridBlock is mx.gluon.HybridBlock and SymbolBlock is mx.gluon.SymbolBlock
    assert issubclass(HybridBlock, Block)


def test_summary_of_a_deferred_rnn_layer_with_begin_state(capsys):
    """MXNet's test_summary: an LSTM whose input size is deferred, called with its begin
    state; the counts are the LSTM's (4*30*(5+30) weights, 2*4*30 biases)."""
    net = mx.gluon.rnn.LSTM(30)
    net.initialize()
    net.summary(mx.nd.ones((80, 32, 5)), net.begin_state(32))
    text = capsys.readouterr().out
    assert "LSTM-1" in text and "(80, 32, 30)" in text
    assert f"Total params: {4 * 30 * (5 + 30) + 2 * 4 * 30}" in text


def test_constant_from_a_numpy_array_is_float32_as_mxnet():
    """MXNet 1.9.1: ``gluon.Constant('c', np.arange(4)).dtype`` is float32 (nd.array's
    default for non-NDArray sources); an NDArray keeps its dtype. gluoncv's YOLOv3 adds
    its int64-built offsets Constant to float32 predictions."""
    assert mx.gluon.Constant("c", np.arange(4)).dtype == np.float32
    assert mx.gluon.Constant("c", np.ones(2, dtype=np.float64)).dtype == np.float32
    assert mx.gluon.Constant("c", mx.nd.array([1, 2], dtype="int32")).dtype == np.int32

"""Generated training programs, run three ways: deferral on, deferral off, and plain jax.

Each program is drawn by hypothesis from the pieces users combine: eager registry
ops, built-in layers, user ``Block``s, ``HybridBlock``s with ``hybrid_forward`` or
Gluon-2 ``forward`` (hybridized or not), a two-input block (a DAG), a custom
``autograd.Function``, BatchNorm and Dropout, ``attach_grad`` inputs, one or two
heads with or without head gradients, ``grad_req='add'``, ``retain_graph``, reading
a pending value while recording, several Trainer steps, and parameters written
between steps. Gradients, updated parameters and losses must agree between the
two gluonjax runs, and with the same program written as a pure function of its
parameters and differentiated with ``jax.vjp`` (no gluonjax in the reference),
and no run may raise.

``make test`` runs ``GLUONJAX_PROGRAMS`` programs (default 200); the ``slow``
test runs ``GLUONJAX_PROGRAMS_SLOW`` (default 3000) when ``GLUONJAX_SLOW=1``.
"""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gluonjax as mx
from gluonjax import autograd, gluon, nd
from gluonjax.gluon import nn

B, F = 4, 6  # batch and width of every layer: any piece can follow any other
LR, MOM = 0.1, 0.9


# ---------------------------------------------------------------- the pieces
class HF(gluon.HybridBlock):
    """``hybrid_forward`` style: a child layer, an F op, scalars, the input again."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.fc = nn.Dense(F, in_units=F)

    def hybrid_forward(self, F_, x):
        return F_.tanh(self.fc(x)) * 0.5 + x


class G2(gluon.HybridBlock):
    """Gluon-2 ``forward`` style with its own parameter."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.w = self.params.get("w", shape=(F,), init=mx.init.Uniform(0.5))

    def forward(self, x):
        return nd.sigmoid(x * self.w.data()) - 0.25 * x


class Py(gluon.Block):
    """A d2l-style user Block: eager ops around a built-in layer."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.fc = nn.Dense(F, in_units=F)

    def forward(self, x):
        return nd.tanh(self.fc(x)) + nd.sigmoid(x) * 0.1


class Comb(gluon.HybridBlock):
    """Two inputs, one output."""

    def hybrid_forward(self, F_, a, b):
        return a * 0.5 + F_.tanh(b)


class Square(autograd.Function):
    """A custom Function: ``x * x / 2`` with its hand-written backward."""

    def forward(self, x):
        self.save_for_backward(x)
        return x * x * 0.5

    def backward(self, dy):
        (x,) = self.saved_tensors
        return x * dy


def _dense(p, x, act=None):
    y = x @ p[0].T + p[1]
    return jnp.tanh(y) if act == "tanh" else y


def _bn(p, x):
    mean = x.mean(axis=0)
    var = ((x - mean) ** 2).mean(axis=0)
    return (x - mean) / jnp.sqrt(var + 1e-5) * p[0] + p[1]


class Pool:
    """Block instances shared by all programs (their compiled calls are reused);
    each program resets their parameters. ``ref[name](params, x)`` is the same
    computation in plain jax."""

    def __init__(self):
        mx.random.seed(0)
        hseq = nn.HybridSequential()
        hseq.add(nn.Dense(F, activation="tanh", in_units=F), nn.Dense(F, in_units=F))
        self.blocks = {
            "dense": nn.Dense(F, in_units=F),
            "dense_tanh": nn.Dense(F, activation="tanh", in_units=F),
            "hseq": hseq,
            "hf_h": HF(),
            "hf_e": HF(),
            "g2_h": G2(),
            "g2_e": G2(),
            "py": Py(),
            "bn": nn.BatchNorm(in_channels=F),
            "drop": nn.Dropout(0.3),
            "comb_h": Comb(),
            "comb_e": Comb(),
        }
        for name, b in self.blocks.items():
            b.initialize(mx.init.Xavier())
            if name in ("hseq", "hf_h", "g2_h", "comb_h"):
                b.hybridize()
        self.params = {
            name: [p for p in b.collect_params().values() if p.grad_req != "null"]
            for name, b in self.blocks.items()
        }
        self.aux = [p for p in self.blocks["bn"].collect_params().values() if p.grad_req == "null"]
        self.ref = {
            "dense": _dense,
            "dense_tanh": lambda p, x: _dense(p, x, "tanh"),
            "hseq": lambda p, x: _dense(p[2:], _dense(p[:2], x, "tanh")),
            "hf_h": lambda p, x: jnp.tanh(_dense(p, x)) * 0.5 + x,
            "hf_e": lambda p, x: jnp.tanh(_dense(p, x)) * 0.5 + x,
            "g2_h": lambda p, x: jax.nn.sigmoid(x * p[0]) - 0.25 * x,
            "g2_e": lambda p, x: jax.nn.sigmoid(x * p[0]) - 0.25 * x,
            "py": lambda p, x: jnp.tanh(_dense(p, x)) + jax.nn.sigmoid(x) * 0.1,
            "bn": _bn,
        }


OPS = {  # eager registry ops on the running value, and their plain-jax twins
    "tanh": (nd.tanh, jnp.tanh),
    "sigmoid": (nd.sigmoid, jax.nn.sigmoid),
    "scale": (lambda h: h * 1.5, lambda h: h * 1.5),
    "shift": (lambda h: h + 0.3, lambda h: h + 0.3),
    "mul_self": (lambda h: h * h * 0.2, lambda h: h * h * 0.2),
    "softrelu": (lambda h: nd.Activation(h, act_type="softrelu"), jax.nn.softplus),
}
BLOCKS = ["dense", "dense_tanh", "hseq", "hf_h", "hf_e", "g2_h", "g2_e", "py", "bn", "drop"]
HEADS = ["sce", "l2", "sum"]


@st.composite
def programs(draw):
    n = draw(st.integers(1, 5))
    layers = []
    for i in range(n):
        kind = draw(st.sampled_from(["op", "block", "block", "comb", "func"]))
        if kind == "op":
            layers.append(("op", draw(st.sampled_from(sorted(OPS)))))
        elif kind == "block":
            layers.append(("block", draw(st.sampled_from(BLOCKS))))
        elif kind == "comb":
            layers.append(
                ("comb", draw(st.sampled_from(["comb_h", "comb_e"])), draw(st.integers(0, i)))
            )
        else:
            layers.append(("func",))
    # the first head reads the last value, so every layer (and parameter) is on its path
    heads = [(draw(st.sampled_from(HEADS)), n)]
    with_params = [i + 1 for i, ly in enumerate(layers) if ly[0] == "block" and ly[1] != "drop"]
    x_grad = draw(st.booleans()) or not with_params  # something needs a gradient
    if draw(st.booleans()):  # a second head, on a value that needs a gradient
        first = 1 if x_grad else with_params[0]
        heads.append((draw(st.sampled_from(HEADS)), draw(st.integers(first, n))))
    steps = draw(st.integers(1, 3))
    return {
        "layers": layers,
        "heads": heads,
        "head_grads": draw(st.booleans()),
        "x_grad": x_grad,
        "add_req": draw(st.booleans()),
        "retain": draw(st.booleans()),
        "trainer": draw(st.booleans()),
        "steps": steps,
        "write_between": draw(st.booleans()),
        "read_mid": draw(st.sampled_from([None, *range(n)])),
        "seed": draw(st.integers(0, 2**16)),
    }


def _used(spec):
    names = []
    for layer in spec["layers"]:
        if layer[0] in ("block", "comb") and layer[1] not in names:
            names.append(layer[1])
    return names


def _inputs(spec, pool):
    """Initial parameter values, data, labels, targets and head gradients of a program."""
    rng = np.random.RandomState(spec["seed"])
    init = {
        id(p): (rng.randn(*p.shape) * 0.5).astype(np.float32)
        for name in _used(spec)
        for p in pool.params[name]
    }
    x = rng.randn(B, F).astype(np.float32)
    labels = rng.randint(0, F, B).astype(np.float32)
    targets = rng.randn(B, F).astype(np.float32)
    hgs = [rng.uniform(0.5, 1.5, B).astype(np.float32) for _ in spec["heads"]]
    return init, x, labels, targets, hgs


def _reqs(spec):
    """grad_req per used block: 'add' for the first one when the program asks."""
    used = _used(spec)
    return {name: ("add" if spec["add_req"] and k == 0 else "write") for k, name in enumerate(used)}


def run_gluon(spec, pool, defer):
    """The program on gluonjax: ``{name: numpy array}`` of everything it produced."""
    init, X, labels, targets, hgs = _inputs(spec, pool)
    reqs = _reqs(spec)
    used = _used(spec)
    for name in used:
        for p in pool.params[name]:
            p.grad_req = reqs[name]
            p.set_data(nd.array(init[id(p)]))
            p.zero_grad()
    for p in pool.aux:
        p.set_data(nd.zeros(p.shape) if p.name.endswith("mean") else nd.ones(p.shape))
    params = [p for name in used for p in pool.params[name]]
    trainer = None
    if spec["trainer"] and params:
        trainer = gluon.Trainer(params, "sgd", {"learning_rate": LR, "momentum": MOM})
    x = nd.array(X)
    if spec["x_grad"]:
        x.attach_grad(grad_req="add" if spec["add_req"] else "write")
    sce, l2 = gluon.loss.SoftmaxCrossEntropyLoss(), gluon.loss.L2Loss()
    y, t = nd.array(labels), nd.array(targets)
    old = autograd.set_deferral(defer)
    mx.random.seed(spec["seed"])
    out = {}
    try:
        for step in range(spec["steps"]):
            with autograd.record():
                hist = [x]
                for i, layer in enumerate(spec["layers"]):
                    h = hist[-1]
                    if layer[0] == "op":
                        h = OPS[layer[1]][0](h)
                    elif layer[0] == "block":
                        h = pool.blocks[layer[1]](h)
                    elif layer[0] == "comb":
                        h = pool.blocks[layer[1]](h, hist[layer[2]])
                    else:
                        h = Square()(h)
                    hist.append(h)
                    if spec["read_mid"] == i:
                        out[f"mid{step}"] = h.asnumpy()
                heads = []
                for kind, k in spec["heads"]:
                    v = hist[k]
                    heads.append(
                        sce(v, y) if kind == "sce" else l2(v, t) if kind == "l2" else v.sum()
                    )
            head_grads = [
                nd.array(g) if spec["head_grads"] and h.shape == (B,) else None
                for h, g in zip(heads, hgs)
            ]
            for rep in range(2 if spec["retain"] else 1):
                autograd.backward(heads, head_grads, retain_graph=spec["retain"] and rep == 0)
            if trainer is not None:
                trainer.step(B)
            for j, hd in enumerate(heads):
                out[f"head{step}_{j}"] = hd.asnumpy()
            for name in used:
                for k, p in enumerate(pool.params[name]):
                    out[f"grad{step}_{name}_{k}"] = p.grad().asnumpy()
                    out[f"param{step}_{name}_{k}"] = p.data().asnumpy()
            if spec["x_grad"]:
                out[f"xgrad{step}"] = x.grad.asnumpy()
            if "bn" in used:
                out[f"bnstat{step}"] = np.concatenate([p.data().asnumpy() for p in pool.aux])
            if spec["write_between"] and step == 0 and params:
                params[0].set_data(params[0].data() * 0.5)
    finally:
        autograd.set_deferral(old)
    return out


def run_reference(spec, pool):
    """The same program as a pure function of its parameters, under ``jax.vjp``."""
    init, X, labels, targets, hgs = _inputs(spec, pool)
    reqs = _reqs(spec)
    used = _used(spec)
    values = {name: [jnp.asarray(init[id(p)]) for p in pool.params[name]] for name in used}
    acc = {name: [jnp.zeros_like(v) for v in values[name]] for name in used}
    mom = {name: [jnp.zeros_like(v) for v in values[name]] for name in used}
    xacc = jnp.zeros((B, F), jnp.float32)
    lab = jnp.asarray(labels, jnp.int32)

    def forward(pv, x):
        hist = [x]
        for layer in spec["layers"]:
            h = hist[-1]
            if layer[0] == "op":
                h = OPS[layer[1]][1](h)
            elif layer[0] == "block":
                h = pool.ref[layer[1]](pv[layer[1]], h)
            elif layer[0] == "comb":
                h = h * 0.5 + jnp.tanh(hist[layer[2]])
            else:
                h = h * h * 0.5
            hist.append(h)
        heads = []
        for kind, k in spec["heads"]:
            v = hist[k]
            if kind == "sce":
                heads.append(-jnp.take_along_axis(jax.nn.log_softmax(v), lab[:, None], 1)[:, 0])
            elif kind == "l2":
                heads.append(0.5 * ((v - targets) ** 2).mean(axis=1))
            else:
                heads.append(v.sum())
        return heads

    out = {}
    nback = 2 if spec["retain"] else 1
    for step in range(spec["steps"]):
        heads, vjp = jax.vjp(forward, values, jnp.asarray(X))
        cts = [
            jnp.asarray(g) if spec["head_grads"] and h.shape == (B,) else jnp.ones_like(h)
            for h, g in zip(heads, hgs)
        ]
        gp, gx = vjp(cts)
        for name in used:
            for k in range(len(values[name])):
                g = gp[name][k]
                acc[name][k] = acc[name][k] + nback * g if reqs[name] == "add" else g
        xacc = xacc + nback * gx if spec["add_req"] else gx
        if spec["trainer"] and used:
            for name in used:
                for k in range(len(values[name])):
                    m = MOM * mom[name][k] - LR * acc[name][k] / B
                    mom[name][k], values[name][k] = m, values[name][k] + m
        for j, hd in enumerate(heads):
            out[f"head{step}_{j}"] = np.asarray(hd)
        for name in used:
            for k in range(len(values[name])):
                out[f"grad{step}_{name}_{k}"] = np.asarray(acc[name][k])
                out[f"param{step}_{name}_{k}"] = np.asarray(values[name][k])
        if spec["x_grad"]:
            out[f"xgrad{step}"] = np.asarray(xacc)
        first = [name for name in used if values[name]]
        if spec["write_between"] and step == 0 and first:  # the first parameter, as run_gluon
            values[first[0]][0] = values[first[0]][0] * 0.5
    return out


def _compare(want, got, rtol, atol, what):
    assert sorted(want) == sorted(got), what
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=rtol, atol=atol, err_msg=f"{what}: {k}")


@pytest.fixture(scope="module")
def pool():
    return Pool()


def check_program(spec, pool):
    on = run_gluon(spec, pool, True)
    off = run_gluon(spec, pool, False)
    _compare(off, on, 1e-5, 1e-6, "deferral on vs off")
    if not any(layer[0] == "block" and layer[1] == "drop" for layer in spec["layers"]):
        ref = run_reference(spec, pool)
        keys = {k for k in on if not k.startswith(("mid", "bnstat"))}
        _compare(ref, {k: on[k] for k in keys}, 1e-4, 1e-5, "gluonjax vs jax.vjp")


_SETTINGS = dict(
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)


@pytest.mark.timeout(1200)  # 200 programs, each run three ways: minutes on 2 loaded cores
@settings(max_examples=int(os.environ.get("GLUONJAX_PROGRAMS", "200")), **_SETTINGS)
@given(spec=programs())
def test_generated_programs(pool, spec):
    check_program(spec, pool)


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("GLUONJAX_SLOW") != "1", reason="set GLUONJAX_SLOW=1")
@settings(max_examples=int(os.environ.get("GLUONJAX_PROGRAMS_SLOW", "3000")), **_SETTINGS)
@given(spec=programs())
def test_generated_programs_many(pool, spec):
    check_program(spec, pool)

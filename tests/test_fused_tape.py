"""Reused backward plans (gluonjax._fused_tape.reuse_plan): same results as the eager tape."""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import _fused_tape, _lazy, autograd, gluon, nd
from gluonjax.gluon import nn

STEPS = 4
KINDS = ["chain", "shared", "twice", "two_heads", "two_heads_grads"]


@pytest.fixture
def reuse_hits(monkeypatch):
    """Whether each ``reuse_plan`` call made by ``backward`` found a stored plan."""
    hits = []
    orig = _fused_tape.reuse_plan

    def spy(heads, head_grads):
        call = orig(heads, head_grads)
        hits.append(call is not None)
        return call

    monkeypatch.setattr(_fused_tape, "reuse_plan", spy)
    return hits


class _Comb(gluon.HybridBlock):
    """Two inputs, one output: makes a DAG of deferred nodes."""

    def hybrid_forward(self, F, a, b):
        return a * 0.5 + F.tanh(b)


class _Model:
    """A net, a two-input block and a Trainer, compiled once for the module.

    ``reset`` restarts training: the initial parameters, every grad_req 'write',
    and the Trainer's initial (empty) states through ``load_states``.
    """

    def __init__(self, states_file):
        mx.random.seed(7)
        self.net = nn.HybridSequential()
        self.net.add(nn.Dense(16, activation="relu", in_units=5), nn.Dense(3, in_units=16))
        self.net.initialize(mx.init.Xavier())
        self.net.hybridize()
        self.comb = _Comb()
        self.comb.hybridize()
        self.params = list(self.net.collect_params().values())
        self.init = [p.data().asnumpy() for p in self.params]
        opts = {"learning_rate": 0.1, "momentum": 0.9}
        self.trainer = gluon.Trainer(self.params, "sgd", opts)
        self.states_file = states_file
        self.trainer.save_states(states_file)
        for kind in KINDS:  # trace every signature: later recordings are deferred
            heads, grads, _ = _record(kind, self.net, self.comb)
            _backward(heads, grads)

    def reset(self):
        for p, v in zip(self.params, self.init):
            p.grad_req = "write"
            p.set_data(nd.array(v))
        self.trainer.load_states(self.states_file)
        return self.net, self.comb, self.trainer


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return _Model(str(tmp_path_factory.mktemp("fused_tape") / "trainer.states"))


@pytest.fixture(autouse=True)
def _no_stored_plans():
    """Each test starts without stored plans (compiled programs stay cached)."""
    _fused_tape._REUSE.clear()


def _data():
    rng = np.random.RandomState(0)
    y = rng.randint(0, 3, 8)
    onehot = np.eye(3, dtype=np.float32)[y]
    return nd.array(rng.randn(8, 5)), nd.array(y), nd.array(onehot)


_SCE = gluon.loss.SoftmaxCrossEntropyLoss()
_L2 = gluon.loss.L2Loss()


def _record(kind, net, comb):
    """Record one forward of ``kind``: ``(heads, head_grads or None, net output)``."""
    x, y, onehot = _data()
    with autograd.record():
        out = net(x)
        if kind == "chain":
            heads = [_SCE(out, y)]
        elif kind == "shared":  # one deferred output feeds both inputs of a node
            heads = [_SCE(comb(out, out), y)]
        elif kind == "twice":  # two deferred calls of the net feed one node
            heads = [_SCE(comb(out, net(x)), y)]
        else:  # one deferred output feeds two losses, two heads
            heads = [_SCE(out, y), _L2(out, onehot)]
    grads = None
    if kind == "two_heads_grads":
        grads = [nd.array(np.linspace(0.5, 2.0, 8)), nd.array(np.linspace(-1.0, 1.0, 8))]
    return heads, grads, out


def _backward(heads, grads):
    if len(heads) == 1 and grads is None:
        heads[0].backward()
    else:
        autograd.backward(heads, grads)


def _params(net):
    return [p.data().asnumpy() for p in net.collect_params().values()]


def _grads(net):
    return [p.grad().asnumpy() for p in net.collect_params().values()]


def _assert_same(want, got):
    assert len(want) == len(got)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _leaf_ids(call):
    return {id(leaf) for leaf in call.leaves}


def _data_ids(net, skip=()):
    return {id(p._data) for p in net.collect_params().values() if p not in skip}


@pytest.mark.parametrize("kind", KINDS)
def test_reused_plan_matches_the_eager_tape(kind, model, eager_tape, reuse_hits):
    def run():
        net, comb, tr = model.reset()
        got = []
        for _ in range(STEPS):
            heads, grads, _ = _record(kind, net, comb)
            _backward(heads, grads)
            tr.step(8)
            got += [*_grads(net), *[h.asnumpy() for h in heads]]
        return got + _params(net)

    want = eager_tape(run)
    assert not any(reuse_hits)  # the eager tape has no deferred nodes: nothing to reuse
    del reuse_hits[:]
    got = run()
    # the first deferred backward plans the tape (and stores the plan), the others reuse it
    assert reuse_hits == [False] + [True] * (STEPS - 1)
    _assert_same(want, got)


@pytest.mark.parametrize("kind", KINDS)
def test_reuse_plan_found_for_a_fresh_tape(kind, model):
    net, comb, tr = model.reset()
    for step in range(2):
        heads, grads, _ = _record(kind, net, comb)
        found = _fused_tape.reuse_plan(heads, grads or [None] * len(heads))
        assert (found is not None) == (step > 0)  # the first backward stores the plan
        _backward(heads, grads)
        tr.step(8)
    heads, grads, _ = _record(kind, net, comb)
    call = _fused_tape.reuse_plan(heads, grads or [None] * len(heads))
    assert type(call) is _fused_tape.FusedCall
    # the leaves found at the noted positions are exactly the net's parameters
    assert _leaf_ids(call) == _data_ids(net)
    assert len(call.leaves) == len(net.collect_params())
    assert all(type(h) is _lazy.Pending for h in heads)  # planning forced nothing


def _perturbed_steps(model, perturb, check):
    """Two steps, a third one perturbed between recording and backward, and two more.

    ``check`` (deferral on): the fresh tape has a reusable plan before ``perturb``
    and none after it. Returns the parameters and the loss after every step, and
    the first layer's weight before/after the perturbed step.
    """
    net, comb, tr = model.reset()
    got, frozen = [], None
    for step in range(5):
        heads, grads, out = _record("chain", net, comb)
        if step == 2:
            if check:
                assert _fused_tape.reuse_plan(heads, [None]) is not None
            before = net[0].weight.data().asnumpy()
            perturb(net, heads, out)
            if check:
                assert _fused_tape.reuse_plan(heads, [None]) is None  # falls back
        _backward(heads, grads)
        tr.step(8)
        if step == 2:
            frozen = (before, net[0].weight.data().asnumpy())
        got += [*_params(net), heads[0].asnumpy()]
    return got, frozen


def _null_weight(net, heads, out):
    net[0].weight.grad_req = "null"


def test_fallback_when_grad_req_becomes_null_after_recording(model, eager_tape):
    want, (w0, w1) = eager_tape(lambda: _perturbed_steps(model, _null_weight, False))
    np.testing.assert_array_equal(w1, w0)  # no gradient: the update skipped it
    got, (g0, g1) = _perturbed_steps(model, _null_weight, True)
    np.testing.assert_array_equal(g1, g0)
    _assert_same(want, got)


@pytest.mark.parametrize("which", ["out", "loss"])
def test_fallback_when_a_pending_output_is_read(which, model, eager_tape):
    def read(net, heads, out):
        arr = out if which == "out" else heads[0]
        assert type(arr) is (_lazy.Pending if _lazy.ENABLED[0] else nd.NDArray)
        arr.asnumpy()  # forces its node (and the nodes it needs) on its own
        assert type(arr) is nd.NDArray

    want, _ = eager_tape(lambda: _perturbed_steps(model, read, False))
    got, _ = _perturbed_steps(model, read, True)
    _assert_same(want, got)


def test_reuse_resumes_after_a_fallback(model, reuse_hits):
    net, comb, tr = model.reset()
    for step in range(5):
        heads, grads, out = _record("chain", net, comb)
        if step == 2:
            out.asnumpy()
        _backward(heads, grads)
        tr.step(8)
    # step 0 plans; step 2 was forced, planned in full (nothing stored); 3 and 4 reuse
    assert reuse_hits == [False, True, False, True, True]


def test_grad_req_null_between_steps_freezes_that_parameter(model, eager_tape):
    def run(check):
        net, comb, tr = model.reset()
        frozen = net[1].weight
        history, calls = [], []
        for step in range(7):
            if step == 3:
                frozen.grad_req = "null"
            heads, grads, _ = _record("chain", net, comb)
            if check:
                calls.append(_fused_tape.reuse_plan(heads, [None]))
            _backward(heads, grads)
            tr.step(8)
            history.append(_params(net))
        return history, calls, net, frozen

    want, _, _, _ = eager_tape(lambda: run(False))
    got, calls, net, frozen = run(True)
    names = list(net.collect_params().keys())
    k = names.index(frozen.name)
    for step in range(3, 7):  # frozen from the step where its grad_req became null
        np.testing.assert_array_equal(got[step][k], got[2][k])
        np.testing.assert_array_equal(want[step][k], want[2][k])
    for j in range(len(names)):
        if j != k:  # the others keep training
            assert not np.array_equal(got[6][j], got[2][j])
    for w, g in zip(want, got):
        _assert_same(w, g)
    # each parameter mask: its first deferred backward plans, the later ones reuse
    assert [c is not None for c in calls] == [False, True, True, False, True, True, True]
    assert _leaf_ids(calls[-1]) == _data_ids(net, skip=(frozen,))

"""The compiled optimizer update (``optimizer._fused_update``) and compile_step's arguments."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gluonjax as mx
import gluonjax._rng as _random
from gluonjax import autograd, gluon, nd
from gluonjax.autograd import _deferred as _lazy
from gluonjax.base import MXNetError
from gluonjax.gluon import nn
from gluonjax.optimizer import _fused_update as _update

NAMES = [
    "sgd", "nag", "signum", "adam", "adamw", "adamax", "nadam", "lamb", "ftml",
    "adagrad", "adadelta", "rmsprop", "ftrl", "lars", "sgld", "dcasgd",
]  # fmt: skip
# non-default settings: momentum states, bias correction switched off
VARIANTS = [
    ("sgd", {"momentum": 0.9}),
    ("nag", {"momentum": 0.9}),
    ("lars", {"momentum": 0.9}),
    ("dcasgd", {"momentum": 0.9}),
    ("adamw", {"correct_bias": False}),
    ("lamb", {"bias_correction": False}),
]
# MXNet's rules that read the update count t (bias corrections, Nadam's schedule)
READS_T = {"adam", "adamw", "adamax", "nadam", "lamb", "ftml"}


def _inputs(o, ts, key):
    """``update``'s arguments for one weight; only the counts ``ts`` vary."""
    rng = np.random.RandomState(0)
    w = jnp.asarray(rng.randn(4, 3).astype(np.float32))
    g = jnp.asarray(rng.randn(4, 3).astype(np.float32))
    lrs, wds = jnp.array([0.1], jnp.float32), jnp.array([0.01], jnp.float32)
    ts = None if ts is None else np.array(ts, np.int32)
    return [w], [g], [o.create_state(0, w)], (lrs, wds, ts, np.float32(0.5), key)


def _leaves(update, args):
    ws, gs, states, ins = args
    return [np.asarray(v) for v in jax.tree_util.tree_leaves(update(ws, gs, states, *ins))]


CASES = [(n, {}) for n in NAMES] + VARIANTS


@pytest.mark.parametrize(
    "name, kwargs",
    CASES,
    ids=["-".join([n, *[f"{k}={v}" for k, v in kw.items()]]) for n, kw in CASES],
)
def test_update_counts_reach_the_program_only_when_the_rule_reads_them(name, kwargs):
    """The counts are always passed; a rule that does not read them leaves the argument
    unused, and the compiled update has no such input (jit prunes it)."""
    try:
        o = mx.optimizer.create(name, learning_rate=0.1, wd=0.01, **kwargs)
    except MXNetError:
        pytest.skip(f"no optimizer {name!r}")
    update = _update.make_update(o, 1)
    key = jax.random.PRNGKey(0) if o.needs_key() else None  # a fixed key: the same noise
    at1 = _leaves(update, _inputs(o, [1], key))
    at7 = _leaves(update, _inputs(o, [7], key))
    differ = any(not np.array_equal(a, b) for a, b in zip(at1, at7))
    # the rules as MXNet writes them
    bias_off = kwargs.get("correct_bias") is False or kwargs.get("bias_correction") is False
    assert differ == (name in READS_T and not bias_off)
    ws, gs, states, ins = _inputs(o, [1], key)
    text = jax.jit(update).lower(ws, gs, states, *ins).compile().as_text()
    entry = next(line for line in text.splitlines() if line.startswith("ENTRY"))
    assert ("s32[1]" in entry) == differ, entry


# ------------------------------------------------------------ compile_step vs the loop

OPTS = {
    "sgd": ("sgd", {"learning_rate": 0.1, "momentum": 0.9}),
    "adam": ("adam", {"learning_rate": 0.01}),
    "sgld": ("sgld", {"learning_rate": 0.01}),
}


def _mlp(dropout):
    mx.random.seed(7)
    net = nn.HybridSequential()
    net.add(nn.Dense(16, activation="relu", in_units=5))
    if dropout:
        net.add(nn.Dropout(0.5))
    net.add(nn.Dense(3, in_units=16))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    return net


def _batch():
    rng = np.random.RandomState(0)
    return nd.array(rng.randn(8, 5)), nd.array(rng.randint(0, 3, 8))


@functools.cache
def _train(mode, opt, dropout, steps=4):
    """Params before and after ``steps`` of the three-line loop or compile_step; the
    random counter before and after each step; the FusedStep's ``keyed``."""
    net, (x, y) = _mlp(dropout), _batch()
    init = [p.data().asnumpy() for p in net.collect_params().values()]
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    name, params = OPTS[opt]
    tr = gluon.Trainer(net.collect_params(), name, dict(params))
    fused = tr.compile_step(net, loss_fn) if mode == "fused" else None
    mx.random.seed(3)
    counters = [_random._state["counter"]]
    for _ in range(steps):
        if fused is not None:
            fused(x, y)
        else:
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            tr.step(8)
        counters.append(_random._state["counter"])
    flags = None if fused is None else fused.keyed
    trained = [p.data().asnumpy() for p in net.collect_params().values()]
    return (init, trained), counters, flags


@pytest.mark.parametrize(
    "opt, dropout",
    [("sgd", False), ("sgd", True), ("adam", True), ("sgld", False), ("sgld", True)],
    ids=["sgd", "sgd-dropout", "adam-dropout", "sgld", "sgld-dropout"],
)
def test_compile_step_matches_the_three_line_loop(opt, dropout):
    (init, want), _, _ = _train("loop", opt, dropout)
    (init2, got), _, keyed = _train("fused", opt, dropout)
    for a, b, w, g in zip(init, init2, want, got):
        np.testing.assert_array_equal(b, a)  # the same start
        assert not np.allclose(w, a)  # it trained
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert keyed is dropout  # a key is passed only when the forward draws random numbers


@pytest.mark.parametrize("dropout", [False, True], ids=["mlp", "dropout"])
def test_random_counter_moves_only_when_a_key_is_used(dropout):
    _, loop, _ = _train("loop", "sgd", dropout)
    _, fused, _ = _train("fused", "sgd", dropout)
    assert fused == loop
    if dropout:  # one Dropout draw per step
        assert np.diff(loop).tolist() == [1] * 4
    else:
        assert len(set(loop)) == 1


def test_sgld_key_comes_from_the_optimizer_not_the_forward():
    _, _, keyed = _train("fused", "sgld", False)
    assert keyed is False  # no forward key: the update draws its own


@pytest.mark.parametrize("dropout", [False, True], ids=["mlp", "dropout"])
def test_sgld_counter_moves_as_in_the_loop(dropout):
    _, loop, _ = _train("loop", "sgld", dropout)
    _, fused, _ = _train("fused", "sgld", dropout)
    assert fused == loop
    # the loop's Trainer.step draws one key per step, and Dropout one more
    assert np.diff(fused).tolist() == [2 if dropout else 1] * 4


class _Dot(gluon.HybridBlock):
    """``x @ w`` for one Parameter ``w`` of shape (3,)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.w = self.params.get("w", shape=(3,), init=mx.init.Constant(1.0))

    def hybrid_forward(self, F, x, w):
        return F.dot(x, w)


class _Weighted(gluon.HybridBlock):
    """A loss per sample: ``pred * label``."""

    def hybrid_forward(self, F, pred, label):
        return pred * label


def test_sgld_noise_changes_between_compiled_steps():
    mx.random.seed(0)
    net = _Dot()
    net.initialize()
    net.hybridize()
    tr = gluon.Trainer(net.collect_params(), "sgld", {"learning_rate": 0.01})
    step = tr.compile_step(net, _Weighted())
    x, y = nd.ones((2, 3)), nd.zeros((2,))  # zero gradient: each update is pure noise
    ws = [net.w.data().asnumpy()]
    for _ in range(3):
        step(x, y)
        ws.append(net.w.data().asnumpy())
    inc = np.diff(np.array(ws), axis=0)
    assert not np.allclose(inc[0], inc[1]) and not np.allclose(inc[1], inc[2])


@pytest.mark.parametrize("mode", ["deferred", "fused"])
def test_lr_mult_and_wd_mult_changes_seen_by_the_next_step(mode):
    net, loss_fn = _Dot(), _Weighted()
    net.initialize()
    net.hybridize()
    loss_fn.hybridize()
    p = net.w
    lr, wd, momentum = 0.1, 0.05, 0.5
    tr = gluon.Trainer([p], "sgd", {"learning_rate": lr, "wd": wd, "momentum": momentum})
    fused = tr.compile_step(net, loss_fn) if mode == "fused" else None
    X = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], np.float32)
    Y = np.array([1.0, 2.0], np.float32)
    x, y = nd.array(X), nd.array(Y)
    w, mom = np.ones(3, np.float64), np.zeros(3, np.float64)
    lr_mult, wd_mult = 1.0, 1.0
    for step in range(6):
        if step == 2:
            p.lr_mult = lr_mult = 3.0
        if step == 4:
            p.wd_mult = wd_mult = 4.0
        if fused is not None:
            fused(x, y)
        else:
            with autograd.record():
                out = net(x)
                loss = loss_fn(out, y)
            if step > 0:  # the signatures ran once: the forward is deferred
                assert type(out) is _lazy.Pending and type(loss) is _lazy.Pending
            loss.backward()
            tr.step(2)
        g = Y @ X / 2 + wd * wd_mult * w  # d/dw sum(y * (x @ w)), rescaled by 1/batch
        mom = momentum * mom - lr * lr_mult * g
        w = w + mom
        np.testing.assert_allclose(p.data().asnumpy(), w, rtol=1e-5, atol=1e-6)

"""Deferred values under autograd.record() (gluonjax._lazy): same results as running at once."""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import autograd, gluon, nd
from gluonjax.autograd import _deferred as _lazy
from gluonjax.base import MXNetError
from gluonjax.gluon import nn


def _net(kind="mlp"):
    mx.random.seed(7)
    net = nn.HybridSequential()
    if kind == "mlp":
        net.add(nn.Dense(16, activation="relu"), nn.Dense(3))
    elif kind == "dropout":
        net.add(nn.Dense(16, activation="relu"), nn.Dropout(0.5), nn.Dense(3))
    else:
        net.add(nn.Dense(16), nn.BatchNorm(), nn.Activation("relu"), nn.Dense(3))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    return net


def _data():
    rng = np.random.RandomState(0)
    return nd.array(rng.randn(8, 5)), nd.array(rng.randint(0, 3, 8))


def _train(kind, steps=4, keep=None):
    net, (x, y) = _net(kind), _data()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    mx.random.seed(3)
    for _ in range(steps):
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        tr.step(8)
        if keep is not None:
            keep.append(loss)
    return [p.data().asnumpy() for p in net.collect_params().values()]


@pytest.mark.parametrize("kind", ["mlp", "dropout", "batchnorm"])
def test_loop_matches_the_eager_tape(kind, eager_tape):
    want = eager_tape(lambda: _train(kind))
    got = _train(kind)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_losses_kept_across_steps_keep_their_values(eager_tape):
    want, got = [], []
    eager_tape(lambda: _train("mlp", keep=want))
    _train("mlp", keep=got)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g.asnumpy(), w.asnumpy(), rtol=1e-5)


def test_forward_is_deferred_and_shape_does_not_force():
    net, (x, _y) = _net(), _data()
    with autograd.record():
        net(x)  # first call of this signature runs at once
        out = net(x)
    assert type(out) is _lazy.Pending
    assert out.shape == (8, 3) and out.dtype == np.float32 and out.ndim == 2 and out.size == 24
    assert type(out) is _lazy.Pending
    with autograd.pause():
        want = net(x).asnumpy()
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6)
    assert type(out) is nd.NDArray


def _grads(net):
    return [p.grad().asnumpy() for p in net.collect_params().values()]


def _assert_same(eager_tape, run):
    """``run()`` gives the same arrays with deferral as with the eager tape."""
    want, got = eager_tape(run), run()
    assert len(want) == len(got)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("read_first", [False, True])
def test_grads_read_after_backward(read_first, eager_tape):
    def run():
        net, (x, y) = _net(), _data()
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        for _ in range(2):  # the second round is deferred
            with autograd.record():
                out = net(x)
                loss = loss_fn(out, y)
            if read_first:
                out.asnumpy()  # forces the net's node on its own
            loss.backward()
        return [*_grads(net), loss.asnumpy()]

    _assert_same(eager_tape, run)


def test_eager_ops_on_a_pending_output(eager_tape):
    def run():
        net, (x, _) = _net(), _data()
        for _ in range(2):
            with autograd.record():
                loss = (net(x) ** 2).sum()  # eager ops read the pending value
            loss.backward()
        return _grads(net)

    for w, g in zip(eager_tape(run), run()):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_parameter_written_between_forward_and_backward(eager_tape):
    def run():
        net, (x, _y) = _net(), _data()
        loss_fn = gluon.loss.L2Loss()
        w = net[0].weight
        for _ in range(2):
            with autograd.record():
                loss = loss_fn(net(x), nd.ones((8, 3)))
            w.set_data(w.data() * 0.5)  # the recorded forward used the old value
            loss.backward()
        return [*_grads(net), loss.asnumpy()]

    _assert_same(eager_tape, run)


def _two_rounds(net, backward):
    """Record the loss twice (the second round is deferred); maybe backward each."""
    (x, y), loss_fn = _data(), gluon.loss.SoftmaxCrossEntropyLoss()
    for _ in range(2):
        with autograd.record():
            loss = loss_fn(net(x), y)
        if backward:
            loss.backward()
    return loss


def test_backward_twice_needs_retain_graph():
    loss = _two_rounds(_net(), backward=False)
    loss.backward()
    with pytest.raises(MXNetError, match="retain_graph"):
        loss.backward()


def test_retain_graph_and_grad_req_add_accumulate(eager_tape):
    def run():
        net, (x, y) = _net(), _data()
        net.collect_params().setattr("grad_req", "add")
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        net(x)
        for _ in range(2):
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward(retain_graph=True)
            loss.backward()
        return _grads(net)

    for w, g in zip(eager_tape(run), run()):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_zero_grad_after_backward_wins():
    net = _net()
    loss = _two_rounds(net, backward=True)
    net.collect_params().zero_grad()
    for g in _grads(net):
        assert not g.any()
    assert np.isfinite(loss.asnumpy()).all()


def test_autograd_grad_and_input_gradients(eager_tape):
    def run():
        net, (x, _) = _net(), _data()
        x.attach_grad()
        for _ in range(2):
            with autograd.record():
                y = net(x).sum()
            (gx,) = autograd.grad(y, [x], retain_graph=True)
            y.backward()
        return gx.asnumpy(), x.grad.asnumpy()

    (a1, a2), (b1, b2) = eager_tape(run), run()
    np.testing.assert_allclose(b1, a1, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(b2, a2, rtol=1e-5, atol=1e-7)


def test_custom_function_after_a_deferred_block(eager_tape):
    class Twice(autograd.Function):
        def forward(self, x):
            return x * 2

        def backward(self, dy):
            return dy * 2

    def run():
        net, (x, _) = _net(), _data()
        for _ in range(2):
            with autograd.record():
                loss = Twice()(net(x)).sum()
            loss.backward()
        return _grads(net)

    for w, g in zip(eager_tape(run), run()):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_trainer_step_fuses_backward_and_update():
    from gluonjax.optimizer import _fused_update as _update

    net, (x, y) = _net(), _data()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    calls = []
    orig = _update.consume

    def spy(*a, **k):
        calls.append(a[-1] if len(a) > 7 else k.get("pending"))  # the pending backward
        return orig(*a, **k)

    _update.consume = spy
    try:
        for _ in range(3):
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            tr.step(8)
    finally:
        _update.consume = orig
    # every step: one compiled call for backward + update (a pending backward handed in)
    assert len(calls) == 3 and all(p is not None for p in calls)
    # the gradients are outputs of that call: nothing of the step stays pending
    assert type(net[0].weight.grad()) is not _lazy.Pending
    assert np.isfinite(loss.asnumpy()).all()


def test_grads_read_after_the_fused_step(eager_tape):
    def run():
        net, (x, y) = _net(), _data()
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
        for _ in range(3):
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            tr.step(8)
        return _grads(net) + [p.data().asnumpy() for p in net.collect_params().values()]

    for w, g in zip(eager_tape(run), run()):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7)


def test_stale_gradient_error_still_raised():
    net, (x, y) = _net(), _data()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for _ in range(2):
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        tr.step(8)
    with pytest.raises(MXNetError, match="has not been updated by backward"):
        tr.step(8)

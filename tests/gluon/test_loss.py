"""gluon.loss against real MXNet 1.9.1 (fixture) and NumPy references.

``tests/fixtures/losses.npz`` is written by ``tools/make_loss_fixtures.py`` with
the MXNet interpreter: inputs, outputs, head gradients and input gradients of
every case. Each case runs eagerly and hybridized, under ``autograd.record()``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "losses.npz"
_DATA = np.load(FIXTURE)
CASES = json.loads(str(_DATA["__cases__"]))
RTOL, ATOL = 1e-4, 1e-5


def _run(case, hybridize):
    block = getattr(mx.gluon.loss, case["cls"])(**case["kwargs"])
    if hybridize:
        block.hybridize()
    cid = case["id"]
    ins = [
        None if shape is None else mx.nd.array(_DATA[f"{cid}.in{i}"])
        for i, shape in enumerate(case["inputs"])
    ]
    for i in case["grads"]:
        ins[i].attach_grad()
    with mx.autograd.record():
        out = block(*ins)
    if case["grads"]:
        out.backward(mx.nd.array(_DATA[f"{cid}.head"]))
    return out, ins


@pytest.mark.parametrize("hybridize", [False, True], ids=["eager", "hybrid"])
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_loss_matches_mxnet(case, hybridize):
    out, ins = _run(case, hybridize)
    cid = case["id"]
    want = _DATA[f"{cid}.out"]
    assert out.shape == want.shape
    np.testing.assert_allclose(out.asnumpy(), want, rtol=RTOL, atol=ATOL)
    for i in case["grads"]:
        np.testing.assert_allclose(
            ins[i].grad.asnumpy(),
            _DATA[f"{cid}.grad{i}"],
            rtol=RTOL,
            atol=ATOL,
            err_msg=f"gradient of input {i}",
        )


# ----------------------------------------------------------------------------- NumPy references
def _softmax_np(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("shape,batch_axis", [((3, 4), 0), ((2, 3, 4), 0), ((2, 3, 4), 1)])
def test_l1_l2_numpy(shape, batch_axis):
    r = np.random.RandomState(1)
    p, lab = r.randn(*shape).astype(np.float32), r.randn(*shape).astype(np.float32)
    axes = tuple(a for a in range(len(shape)) if a != batch_axis)
    got2 = mx.gluon.loss.L2Loss(batch_axis=batch_axis)(mx.nd.array(p), mx.nd.array(lab))
    got1 = mx.gluon.loss.L1Loss(batch_axis=batch_axis)(mx.nd.array(p), mx.nd.array(lab))
    np.testing.assert_allclose(got2.asnumpy(), (0.5 * (lab - p) ** 2).mean(axes), rtol=1e-5)
    np.testing.assert_allclose(got1.asnumpy(), np.abs(lab - p).mean(axes), rtol=1e-5)


@pytest.mark.parametrize("hybridize", [False, True])
def test_softmax_ce_numpy_and_grad(hybridize):
    r = np.random.RandomState(2)
    x = r.randn(5, 4)
    y = r.randint(0, 4, 5)
    loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    if hybridize:
        loss.hybridize()
    xn = mx.nd.array(x)
    xn.attach_grad()
    with mx.autograd.record():
        out = loss(xn, mx.nd.array(y))
    out.backward()
    sm = _softmax_np(x, 1)
    np.testing.assert_allclose(out.asnumpy(), -np.log(sm[np.arange(5), y]), rtol=1e-5)
    np.testing.assert_allclose(xn.grad.asnumpy(), sm - np.eye(4)[y], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("rho", [0.5, 1.0, 2.0])
def test_huber_numpy(rho):
    d = np.linspace(-3, 3, 12).reshape(3, 4).astype(np.float32) + 0.01
    out = mx.gluon.loss.HuberLoss(rho=rho)(mx.nd.array(d), mx.nd.zeros((3, 4)))
    a = np.abs(d)
    ref = np.where(a > rho, a - 0.5 * rho, 0.5 / rho * a * a).mean(1)
    np.testing.assert_allclose(out.asnumpy(), ref, rtol=1e-5)


def _ctc_numpy(logits, label):
    """Brute-force CTC: sum over every alignment path (blank = last class)."""
    import itertools

    t_len, n_cls = logits.shape
    probs = _softmax_np(logits.astype(np.float64), 1)
    total = 0.0
    for path in itertools.product(range(n_cls), repeat=t_len):
        collapsed, prev = [], None
        for c in path:
            if c != prev and c != n_cls - 1:
                collapsed.append(c)
            prev = c
        if collapsed == list(label):
            total += np.prod(probs[np.arange(t_len), path])
    return -np.log(total)


@pytest.mark.parametrize("label", [[0], [1, 1], [0, 1], []])
def test_ctc_bruteforce(label):
    r = np.random.RandomState(3)
    logits = r.randn(4, 3).astype(np.float32)
    padded = np.full((1, 2), -1.0, np.float32)
    padded[0, : len(label)] = label
    out = mx.gluon.loss.CTCLoss()(mx.nd.array(logits[None]), mx.nd.array(padded))
    np.testing.assert_allclose(out.asnumpy(), [_ctc_numpy(logits, label)], rtol=1e-4)


def test_poisson_full_grad_fd():
    """compute_full (MXNet cannot record it): gradient vs central differences."""
    r = np.random.RandomState(4)
    p = r.randn(3, 2) * 0.5
    t = r.randint(1, 5, (3, 2)).astype(np.float64)

    def ref(pv):
        st = np.where(t > 1, t * np.log(t) - t + 0.5 * np.log(2 * np.pi * t), 0)
        return np.mean(np.exp(pv) - t * pv + st)

    pn = mx.nd.array(p)
    pn.attach_grad()
    with mx.autograd.record():
        out = mx.gluon.loss.PoissonNLLLoss(compute_full=True)(pn, mx.nd.array(t))
    out.backward()
    np.testing.assert_allclose(out.asnumpy(), [ref(p)], rtol=1e-5)
    eps, fd = 1e-6, np.zeros_like(p)
    for idx in np.ndindex(p.shape):
        d = np.zeros_like(p)
        d[idx] = eps
        fd[idx] = (ref(p + d) - ref(p - d)) / (2 * eps)
    np.testing.assert_allclose(pn.grad.asnumpy(), fd, rtol=1e-4, atol=1e-6)


def test_sample_weight_broadcast_and_weight_errors():
    p, lab = mx.nd.ones((2, 3)), mx.nd.zeros((2, 3))
    out = mx.gluon.loss.L1Loss(weight=2.0)(p, lab, mx.nd.array([[1.0], [3.0]]))
    np.testing.assert_allclose(out.asnumpy(), [2.0, 6.0])
    with pytest.raises(ValueError):
        mx.gluon.loss.L1Loss(weight="x")(p, lab)
    with pytest.raises(ValueError):
        mx.gluon.loss.LogisticLoss(label_format="bad")
    with pytest.raises(ValueError):
        mx.gluon.loss.CTCLoss(layout="NCT")


def test_repr_and_none_patterns_hybridized():
    loss = mx.gluon.loss.SigmoidBCELoss()
    assert repr(loss) == "SigmoidBinaryCrossEntropyLoss(batch_axis=0, w=None)"
    loss.hybridize()
    p, lab = mx.nd.array([[0.5, -1.0]]), mx.nd.array([[1.0, 0.0]])
    base = loss(p, lab).asnumpy()
    np.testing.assert_allclose(loss(p, lab, None, None).asnumpy(), base)
    np.testing.assert_allclose(loss(p, lab, None, mx.nd.ones((1, 2))).asnumpy(), base, rtol=1e-6)
    np.testing.assert_allclose(loss(p, lab, mx.nd.array([[2.0]])).asnumpy(), 2 * base, rtol=1e-6)

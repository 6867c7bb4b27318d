"""BatchNorm, LayerNorm, InstanceNorm, GroupNorm, L2Normalization and LRN vs NumPy."""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import nd
from gluonjax._ops import registry
from gluonjax.base import MXNetError

RNG = np.random.default_rng(2)


def run_with_grads(fn, arrays, head, train_mode=True):
    xs = [nd.array(a) for a in arrays]
    for v in xs:
        v.attach_grad()
    with mx.autograd.record(train_mode=train_mode):
        y = fn(*xs)
    y.backward(nd.array(head))
    return y.asnumpy(), [v.grad.asnumpy() for v in xs]


def check_fd(ref, arrays, head, grads, eps=1e-4, n_dir=2, tol=2e-3):
    """Directional central finite differences of sum(ref(*arrays) * head) in float64."""
    arrays = [np.asarray(a, np.float64) for a in arrays]
    for i, a in enumerate(arrays):
        for _ in range(n_dir):
            v = RNG.standard_normal(a.shape)
            plus, minus = list(arrays), list(arrays)
            plus[i], minus[i] = a + eps * v, a - eps * v
            fd = (np.sum(ref(*plus) * head) - np.sum(ref(*minus) * head)) / (2 * eps)
            got = np.sum(grads[i] * v)
            assert abs(got - fd) <= tol * (1 + abs(fd)), (i, got, fd)


def bcast(v, ndim, axis):
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


def np_bn(x, g, b, mean, var, eps, axis):
    ax = axis % x.ndim
    return (x - bcast(mean, x.ndim, ax)) / np.sqrt(bcast(var, x.ndim, ax) + eps) * bcast(
        g, x.ndim, ax
    ) + bcast(b, x.ndim, ax)


BN_CASES = [((4, 3), 1), ((2, 3, 4, 2), 1), ((2, 4, 3), -1), ((3, 2, 2, 3), 2)]


def bn_params(c):
    return (
        RNG.uniform(0.5, 1.5, c).astype(np.float32),
        RNG.standard_normal(c).astype(np.float32),
        RNG.standard_normal(c).astype(np.float32),
        RNG.uniform(0.5, 2, c).astype(np.float32),
    )


@pytest.mark.parametrize("fix_gamma", [True, False])
@pytest.mark.parametrize("shape,axis", BN_CASES)
def test_batchnorm_inference(shape, axis, fix_gamma):
    x = RNG.standard_normal(shape).astype(np.float32)
    g, b, mm, mv = bn_params(shape[axis])
    aux = [nd.array(mm), nd.array(mv)]
    out = nd.BatchNorm(
        nd.array(x), nd.array(g), nd.array(b), *aux, axis=axis, eps=1e-3, fix_gamma=fix_gamma
    )
    gg = np.ones_like(g) if fix_gamma else g
    np.testing.assert_allclose(
        out.asnumpy(), np_bn(x, gg, b, mm, mv, 1e-3, axis), rtol=1e-5, atol=1e-5
    )
    np.testing.assert_array_equal(aux[0].asnumpy(), mm)
    np.testing.assert_array_equal(aux[1].asnumpy(), mv)


@pytest.mark.parametrize("momentum", [0.9, 0.5])
@pytest.mark.parametrize("fix_gamma", [True, False])
@pytest.mark.parametrize("shape,axis", BN_CASES)
def test_batchnorm_training(shape, axis, fix_gamma, momentum):
    x = RNG.standard_normal(shape).astype(np.float32) * 2 + 1
    g, b, mm, mv = bn_params(shape[axis])
    ax = axis % len(shape)
    red = tuple(i for i in range(len(shape)) if i != ax)
    eps = 1e-3

    def ref(x, g, b):
        gg = np.ones_like(g) if fix_gamma else g
        return np_bn(x, gg, b, x.mean(red), x.var(red), eps, axis)

    head = RNG.standard_normal(shape)
    aux = [nd.array(mm), nd.array(mv)]
    xs = [nd.array(v) for v in (x, g, b)]
    for v in xs:
        v.attach_grad()
    with mx.autograd.record():
        y = nd.BatchNorm(*xs, *aux, axis=axis, eps=eps, momentum=momentum, fix_gamma=fix_gamma)
    y.backward(nd.array(head))
    np.testing.assert_allclose(y.asnumpy(), ref(x, g, b), rtol=1e-4, atol=1e-4)
    # moving stats: momentum * old + (1 - momentum) * batch (biased variance)
    np.testing.assert_allclose(
        aux[0].asnumpy(), mm * momentum + x.mean(red) * (1 - momentum), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(
        aux[1].asnumpy(), mv * momentum + x.var(red) * (1 - momentum), rtol=1e-5, atol=1e-6
    )
    grads = [v.grad.asnumpy() for v in xs]
    if fix_gamma:
        np.testing.assert_array_equal(grads[1], 0)
    check_fd(ref, [x, g, b], head, grads)


def test_batchnorm_use_global_stats_and_train_mode_false():
    x = RNG.standard_normal((4, 3, 2)).astype(np.float32)
    g, b, mm, mv = bn_params(3)
    for kw, train in (({"use_global_stats": True}, True), ({}, False)):
        aux = [nd.array(mm), nd.array(mv)]
        with mx.autograd.record(train_mode=train):
            y = nd.BatchNorm(nd.array(x), nd.array(g), nd.array(b), *aux, fix_gamma=False, **kw)
        np.testing.assert_allclose(
            y.asnumpy(), np_bn(x, g, b, mm, mv, 1e-3, 1), rtol=1e-5, atol=1e-5
        )
        np.testing.assert_array_equal(aux[0].asnumpy(), mm)
        np.testing.assert_array_equal(aux[1].asnumpy(), mv)


def test_batchnorm_output_mean_var_and_infer_args():
    x = RNG.standard_normal((5, 3, 2)).astype(np.float32)
    g, b, mm, mv = bn_params(3)
    with mx.autograd.record():
        outs = nd.BatchNorm(
            nd.array(x),
            nd.array(g),
            nd.array(b),
            nd.array(mm),
            nd.array(mv),
            output_mean_var=True,
            eps=1e-3,
        )
    assert isinstance(outs, list) and len(outs) == 3
    np.testing.assert_allclose(outs[1].asnumpy(), x.mean((0, 2)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs[2].asnumpy(), 1 / np.sqrt(x.var((0, 2)) + 1e-3), rtol=1e-5)
    outs = nd.BatchNorm(
        nd.array(x), nd.array(g), nd.array(b), nd.array(mm), nd.array(mv), output_mean_var="True"
    )
    np.testing.assert_allclose(outs[1].asnumpy(), mm)
    np.testing.assert_allclose(outs[2].asnumpy(), 1 / np.sqrt(mv + 1e-3), rtol=1e-5)
    op = registry.get("BatchNorm")
    attrs = op.attr_dict(op.parse_attrs({"axis": -1})[0])
    assert op.infer_args(attrs, {"data": (2, 5, 7)}) == {
        k: (7,) for k in ("gamma", "beta", "moving_mean", "moving_var")
    }
    with pytest.raises(MXNetError, match="BatchNorm"):
        nd.BatchNorm(nd.array(x), nd.ones((4,)), nd.zeros((3,)), nd.zeros((3,)), nd.ones((3,)))


@pytest.mark.parametrize("output_mean_var", [False, True])
@pytest.mark.parametrize("shape,axis", [((3, 5), -1), ((2, 3, 4), 1), ((2, 3, 4), 0)])
def test_layernorm(shape, axis, output_mean_var):
    x = RNG.standard_normal(shape).astype(np.float32)
    c = shape[axis]
    g, b = RNG.uniform(0.5, 1.5, c).astype(np.float32), RNG.standard_normal(c).astype(np.float32)

    def stats(x):
        return x.mean(axis, keepdims=True), np.sqrt(x.var(axis, keepdims=True) + 1e-5)

    def ref(x, g, b):
        m, s = stats(x)
        return (x - m) / s * bcast(g, x.ndim, axis % x.ndim) + bcast(b, x.ndim, axis % x.ndim)

    head = RNG.standard_normal(shape)
    kw = dict(axis=axis, output_mean_var=output_mean_var)
    fn = (
        (lambda *a: nd.LayerNorm(*a, **kw)[0])
        if output_mean_var
        else (lambda *a: nd.LayerNorm(*a, **kw))
    )
    out, grads = run_with_grads(fn, [x, g, b], head)
    np.testing.assert_allclose(out, ref(x, g, b), rtol=1e-4, atol=1e-5)
    check_fd(ref, [x, g, b], head, grads)
    if output_mean_var:
        outs = nd.LayerNorm(nd.array(x), nd.array(g), nd.array(b), **kw)
        for got, want in zip(outs[1:], stats(x), strict=True):
            np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 2, 3, 3), (1, 2, 2, 2, 3)])
def test_instancenorm(shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    g, b = RNG.uniform(0.5, 1.5, shape[1]), RNG.standard_normal(shape[1])
    g, b = g.astype(np.float32), b.astype(np.float32)
    axes = tuple(range(2, len(shape)))

    def ref(x, g, b):
        m, v = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
        return (x - m) / np.sqrt(v + 1e-3) * bcast(g, x.ndim, 1) + bcast(b, x.ndim, 1)

    head = RNG.standard_normal(shape)
    out, grads = run_with_grads(nd.InstanceNorm, [x, g, b], head)
    np.testing.assert_allclose(out, ref(x, g, b), rtol=1e-4, atol=1e-5)
    check_fd(ref, [x, g, b], head, grads)


@pytest.mark.parametrize("num_groups", [1, 2, 4])
@pytest.mark.parametrize("shape", [(2, 4, 3), (2, 4, 2, 3)])
def test_groupnorm(shape, num_groups):
    x = RNG.standard_normal(shape).astype(np.float32)
    g = RNG.uniform(0.5, 1.5, num_groups).astype(np.float32)  # per group in MXNet 1.9.1
    b = RNG.standard_normal(num_groups).astype(np.float32)

    def ref(x, g, b, stats=False):
        xg = x.reshape(shape[0], num_groups, -1)
        m, s = xg.mean(-1, keepdims=True), np.sqrt(xg.var(-1, keepdims=True) + 1e-5)
        if stats:
            return m[..., 0], s[..., 0]
        return ((xg - m) / s * g.reshape(1, -1, 1) + b.reshape(1, -1, 1)).reshape(shape)

    head = RNG.standard_normal(shape)
    out, grads = run_with_grads(lambda *a: nd.GroupNorm(*a, num_groups=num_groups), [x, g, b], head)
    np.testing.assert_allclose(out, ref(x, g, b), rtol=1e-4, atol=1e-5)
    check_fd(ref, [x, g, b], head, grads)
    outs = nd.GroupNorm(
        nd.array(x), nd.array(g), nd.array(b), num_groups=num_groups, output_mean_var=True
    )
    for got, want in zip(outs[1:], ref(x, g, b, stats=True), strict=True):
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5, atol=1e-6)
    op = registry.get("GroupNorm")
    attrs = op.attr_dict(op.parse_attrs({"num_groups": num_groups})[0])
    assert op.infer_args(attrs, {"data": shape}) == {"gamma": (num_groups,), "beta": (num_groups,)}


def test_groupnorm_errors():
    with pytest.raises(MXNetError, match="GroupNorm"):
        nd.GroupNorm(nd.ones((2, 4, 3)), nd.ones((3,)), nd.zeros((3,)), num_groups=3)
    with pytest.raises(MXNetError, match="gamma"):
        nd.GroupNorm(nd.ones((2, 4, 3)), nd.ones((4,)), nd.zeros((2,)), num_groups=2)


@pytest.mark.parametrize("mode", ["instance", "channel", "spatial"])
@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 2, 2)])
def test_l2_normalization(shape, mode):
    x = RNG.standard_normal(shape).astype(np.float32)
    axes = {
        "instance": tuple(range(1, len(shape))),
        "channel": (1,),
        "spatial": tuple(range(2, len(shape))),
    }[mode]

    def ref(x):
        return x / np.sqrt((x**2).sum(axes, keepdims=True) + 1e-10)

    head = RNG.standard_normal(shape)
    out, grads = run_with_grads(lambda v: nd.L2Normalization(v, mode=mode), [x], head)
    np.testing.assert_allclose(out, ref(x), rtol=1e-5, atol=1e-6)
    check_fd(ref, [x], head, grads)


def test_l2_normalization_2d():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    out = nd.L2Normalization(nd.array(x))
    np.testing.assert_allclose(
        out.asnumpy(), x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-5
    )
    with pytest.raises(MXNetError, match="L2Normalization"):
        nd.L2Normalization(nd.array(x), mode="channel")


@pytest.mark.parametrize("nsize", [1, 3, 4, 5])
@pytest.mark.parametrize("shape", [(2, 6, 3), (1, 5, 2, 2)])
def test_lrn(shape, nsize):
    x = RNG.standard_normal(shape).astype(np.float32)
    alpha, beta, knorm = 0.3, 0.75, 2.0
    half = (nsize - 1) // 2  # MXNet 1.9.1: symmetric window (checked with even nsize)

    def ref(x):
        sq = np.zeros_like(x)
        for c in range(shape[1]):
            sq[:, c] = (x[:, max(0, c - half) : c + half + 1] ** 2).sum(1)
        return x / (knorm + alpha / nsize * sq) ** beta

    head = RNG.standard_normal(shape)
    out, grads = run_with_grads(
        lambda v: nd.LRN(v, nsize=nsize, alpha=alpha, beta=beta, knorm=knorm), [x], head
    )
    np.testing.assert_allclose(out, ref(x), rtol=1e-5, atol=1e-6)
    check_fd(ref, [x], head, grads)

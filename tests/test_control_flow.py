"""F.contrib.cond / while_loop / foreach: eager (Python) and hybridized (lax) agree."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gluonjax as mx
from gluonjax import autograd, nd
from gluonjax.base import ControlFlowError


class _Cond(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return F.contrib.cond(x.sum() > 0, lambda: x * 2, lambda: x - 1)


class _While(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        def body(i, s):
            return s * 1, (i + 1, s + x)

        outs, (i, s) = F.contrib.while_loop(
            lambda i, s: i < 3, body, [x.zeros_like()[0:1], x], max_iterations=5
        )
        return outs, s  # one step output: an array (MXNet regroups it), not a list


class _Foreach(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        out, state = F.contrib.foreach(lambda d, s: (d * s, s + d), x, x[0] * 0 + 1)
        return out, state


@pytest.mark.parametrize("hybrid", [False, True])
def test_cond_both_branches(hybrid):
    b = _Cond()
    if hybrid:
        b.hybridize()
    np.testing.assert_allclose(b(nd.array([1.0, 2.0])).asnumpy(), [2.0, 4.0])
    np.testing.assert_allclose(b(nd.array([-1.0, -2.0])).asnumpy(), [-2.0, -3.0])


@pytest.mark.parametrize("hybrid", [False, True])
def test_while_loop_matches_python(hybrid):
    b = _While()
    if hybrid:
        b.hybridize()
    xv = np.array([1.0, 2.0], np.float32)
    outs, s = b(nd.array(xv))
    expect = np.zeros((5, 2), np.float32)
    acc = xv.copy()
    for i in range(3):
        expect[i] = acc
        acc = acc + xv
    np.testing.assert_allclose(outs.asnumpy(), expect)
    np.testing.assert_allclose(s.asnumpy(), acc)


@pytest.mark.parametrize("hybrid", [False, True])
def test_foreach_and_gradient(hybrid):
    b = _Foreach()
    if hybrid:
        b.hybridize()
    xv = np.array([[1.0, 2.0], [3.0, 4.0], [0.5, 1.0]], np.float32)
    x = nd.array(xv)
    x.attach_grad()
    with autograd.record():
        out, state = b(x)
        loss = out.sum()
    loss.backward()
    s = np.ones(2, np.float32)
    ref = []
    for row in xv:
        ref.append(row * s)
        s = s + row
    np.testing.assert_allclose(out.asnumpy(), np.stack(ref))
    np.testing.assert_allclose(state.asnumpy(), s)
    # d/dx of sum_i x_i * (1 + sum_{j<i} x_j): x_k appears with (1 + prefix) and in later terms
    g = np.zeros_like(xv)
    for k in range(3):
        g[k] = (1 + xv[:k].sum(0)) + xv[k + 1 :].sum(0)
    np.testing.assert_allclose(x.grad.asnumpy(), g, rtol=1e-6)


def _step_ref(x, s, w):
    """One step of the loop the tests below run, in plain jax: nested states (h, [c])."""
    h, (c,) = s
    h2 = jnp.tanh(x * w + h)
    return [h2, h2 + c], (h2, [c + 1.0])


def _unrolled(xs, h, c, w):
    outs, state = [], (h, [c])
    for x in xs:
        o, state = _step_ref(x, state, w)
        outs.append(o)
    return [jnp.stack([o[0] for o in outs]), jnp.stack([o[1] for o in outs])], state


def _args():
    rng = np.random.RandomState(0)
    return {k: rng.uniform(-1, 1, s).astype(np.float32)
            for k, s in (("x", (4, 3)), ("h", (3,)), ("c", (3,)), ("w", (3,)))}  # fmt: skip


def _loss_ref(a):
    (o0, o1), (h, (c,)) = _unrolled(a["x"], a["h"], a["c"], a["w"])
    return (o0 * 2).sum() + (o1 * 3).sum() + (h * 5).sum() + (c * 7).sum()


def _body_for(F, w):  # noqa: N803
    def body(x, s):
        h, (c,) = s
        h2 = F.tanh(x * w + h)
        return [h2, h2 + c], (h2, [c + 1.0])

    return body


def test_declarative_foreach_nested_states_free_variable_and_gradient():
    a = _args()
    x, h, c, w = (mx.sym.var(n) for n in ("x", "h", "c", "w"))
    (o0, o1), (hf, (cf,)) = mx.sym.contrib.foreach(_body_for(mx.sym, w), x, (h, [c]))
    assert isinstance(o0, mx.sym.Symbol) and isinstance(cf, mx.sym.Symbol)
    g = mx.sym.Group([o0, o1, hf, cf])
    assert sorted(g.list_arguments()) == ["c", "h", "w", "x"]
    g = mx.sym.load_json(g.tojson())  # the subgraph survives JSON
    grads = {k: nd.zeros(v.shape) for k, v in a.items()}
    ex = g.bind(mx.cpu(), {k: nd.array(v) for k, v in a.items()}, args_grad=grads)
    outs = ex.forward(is_train=True)
    (r0, r1), (rh, (rc,)) = _unrolled(a["x"], a["h"], a["c"], a["w"])
    for got, want in zip(outs, (r0, r1, rh, rc)):
        np.testing.assert_allclose(got.asnumpy(), np.asarray(want), rtol=1e-5, atol=1e-6)
    heads = [nd.ones(o.shape) * k for o, k in zip(outs, (2, 3, 5, 7))]
    ex.backward(heads)
    ref = jax.grad(_loss_ref)({k: jnp.asarray(v) for k, v in a.items()})
    for k in a:
        np.testing.assert_allclose(grads[k].asnumpy(), np.asarray(ref[k]), rtol=1e-5, atol=1e-6)


class _NestedForeach(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x, states, w):  # noqa: N803
        (o0, o1), (hf, (cf,)) = F.contrib.foreach(_body_for(F, w), x, states)
        return (o0 * 2).sum() + (o1 * 3).sum() + (hf * 5).sum() + (cf * 7).sum()


@pytest.mark.parametrize("hybrid", [False, True])
def test_foreach_nested_inputs_gradient_eager_and_hybridized(hybrid):
    a = _args()
    block = _NestedForeach()
    if hybrid:
        block.hybridize()
    arrs = {k: nd.array(v) for k, v in a.items()}
    for v in arrs.values():
        v.attach_grad()
    with autograd.record():
        loss = block(arrs["x"], [arrs["h"], [arrs["c"]]], arrs["w"])
    loss.backward()
    jargs = {k: jnp.asarray(v) for k, v in a.items()}
    np.testing.assert_allclose(loss.asnumpy(), np.asarray(_loss_ref(jargs)), rtol=1e-5)
    ref = jax.grad(_loss_ref)(jargs)
    for k in a:
        np.testing.assert_allclose(arrs[k].grad.asnumpy(), np.asarray(ref[k]), rtol=1e-5, atol=1e-6)


def test_declarative_while_loop_outputs_padded_and_gradient():
    xv = np.array([0.5, -1.0], np.float32)
    i, s, x = mx.sym.var("i"), mx.sym.var("s"), mx.sym.var("x")
    outs, (i_f, s_f) = mx.sym.contrib.while_loop(
        lambda i, s: i < 3, lambda i, s: ([s * x], [i + 1, s * x + 1]), [i, s], max_iterations=5
    )
    g = mx.sym.Group(outs + [i_f, s_f])
    grad_x = nd.zeros((2,))
    args = {"i": nd.array([0.0]), "s": nd.ones((2,)), "x": nd.array(xv)}
    ex = g.bind(mx.cpu(), args, args_grad={"x": grad_x})
    stacked, i_out, s_out = ex.forward(is_train=True)

    def ref(xj):
        s, rows = jnp.ones(2), []
        for _ in range(3):
            rows.append(s * xj)
            s = s * xj + 1
        return jnp.concatenate([jnp.stack(rows), jnp.zeros((2, 2))]), s

    want_rows, want_s = ref(jnp.asarray(xv))
    np.testing.assert_allclose(stacked.asnumpy(), np.asarray(want_rows), rtol=1e-6)
    np.testing.assert_allclose(i_out.asnumpy(), [3.0])
    np.testing.assert_allclose(s_out.asnumpy(), np.asarray(want_s), rtol=1e-6)
    ex.backward([nd.ones((5, 2)), nd.ones((1,)), nd.ones((2,))])
    want = jax.grad(lambda xj: ref(xj)[0].sum() + ref(xj)[1].sum())(jnp.asarray(xv))
    np.testing.assert_allclose(grad_x.asnumpy(), np.asarray(want), rtol=1e-5)


@pytest.mark.parametrize("flip", [False, True])
def test_declarative_cond_free_variables_and_gradient(flip):
    av, bv = np.array([1.0, 2.0], np.float32), np.array([3.0, -1.0], np.float32)
    a, b = mx.sym.var("a"), mx.sym.var("b")
    pred = (a.sum() < 10) if not flip else (a.sum() > 10)
    (out,) = mx.sym.contrib.cond(pred, lambda: [a * b], lambda: [a + b * 2])
    grads = {"a": nd.zeros((2,)), "b": nd.zeros((2,))}
    ex = out.bind(mx.cpu(), {"a": nd.array(av), "b": nd.array(bv)}, args_grad=grads)
    got = ex.forward(is_train=True)[0].asnumpy()
    ex.backward([nd.ones((2,))])
    np.testing.assert_allclose(got, av * bv if not flip else av + bv * 2)
    np.testing.assert_allclose(grads["a"].asnumpy(), bv if not flip else np.ones(2))
    np.testing.assert_allclose(grads["b"].asnumpy(), av if not flip else np.full(2, 2.0))


def test_while_loop_eager_formats_follow_mxnet():
    outs, final = nd.contrib.while_loop(
        lambda i: i < 2, lambda i: (None, i + 1), nd.array([0.0]), max_iterations=4
    )
    assert outs == [] and isinstance(final, nd.NDArray) and final.asscalar() == 2.0
    outs, final = nd.contrib.while_loop(
        lambda i: i < 0, lambda i: (i, [i + 1]), [nd.array([0.0])], max_iterations=4
    )
    assert outs == [] and final[0].asscalar() == 0.0  # no step ran: no outputs


def test_foreach_unused_state_raises():
    with pytest.raises(ControlFlowError, match="not used"):
        mx.sym.contrib.foreach(lambda x, s: (x, [x]), mx.sym.var("x"), [mx.sym.var("s")])
    with pytest.raises(AssertionError):  # as in MXNet 1.9.1
        mx.sym.contrib.foreach(lambda x, s: (x, [x]), mx.sym.var("x"), [mx.sym.var("s")])


def test_while_loop_needs_max_iterations():
    with pytest.raises(mx.MXNetError, match="max_iterations"):
        nd.contrib.while_loop(lambda i: i < 2, lambda i: (i, i + 1), [nd.zeros((1,))])

"""F.contrib.cond / while_loop / foreach: eager (Python) and hybridized (lax) agree."""

import numpy as np
import pytest

import gluonjax as mx
from gluonjax import autograd, nd


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
        return outs[0], s


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


def test_control_flow_on_declarative_symbol_is_clear_error():
    with pytest.raises(mx.MXNetError, match="declarative"):
        mx.sym.contrib.cond(mx.sym.var("p"), lambda: mx.sym.var("a"), lambda: mx.sym.var("b"))


def test_while_loop_needs_max_iterations():
    with pytest.raises(mx.MXNetError, match="max_iterations"):
        nd.contrib.while_loop(lambda i: i < 2, lambda i: (i, i + 1), [nd.zeros((1,))])

"""``mx.optimizer.contrib.GroupAdaGrad`` and the contrib AdamW ops, against MXNet 1.9.1
(``tools/make_contrib_module_fixtures.py``) and NumPy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import InvalidArgumentError

REF = np.load(Path(__file__).parent / "fixtures" / "contrib_modules" / "ref.npz")


def _grad(k, sparse):
    g = REF["gag.grads"][k].copy()
    if not sparse:
        return mx.nd.array(g)
    g[k % 4] = 0
    nz = [r for r in range(4) if r != k % 4]
    return mx.nd.sparse.row_sparse_array((g[nz], nz), shape=g.shape)


@pytest.mark.parametrize(
    "case, kw, sparse",
    [
        ("dense", dict(learning_rate=0.1, eps=1e-6), False),
        ("clip", dict(learning_rate=0.2, rescale_grad=0.5, clip_gradient=0.3), False),
        ("sparse", dict(learning_rate=0.1), True),
    ],
)
def test_group_adagrad_update_matches_mxnet(case, kw, sparse):
    opt = mx.optimizer.create("groupadagrad", **kw)
    assert isinstance(opt, mx.optimizer.contrib.GroupAdaGrad)
    w = mx.nd.array(REF["gag.w0"])
    state = opt.create_state(0, w)
    for k in range(3):
        opt.update(0, w, _grad(k, sparse), state)
    np.testing.assert_allclose(w.asnumpy(), REF[f"gag.{case}.w"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(state.asnumpy(), REF[f"gag.{case}.h"], rtol=1e-5, atol=1e-6)


def test_group_adagrad_in_trainer_matches_eager_rule():
    """The Trainer's compiled update applies the same rule (reference: NumPy)."""
    w0, g = REF["gag.w0"], REF["gag.grads"][0]
    p = mx.gluon.Parameter("w", shape=w0.shape, init=mx.init.Constant(0))
    p.initialize()
    p.set_data(mx.nd.array(w0))
    tr = mx.gluon.Trainer([p], "groupadagrad", {"learning_rate": 0.1})
    with mx.autograd.record():
        loss = (p.data() * mx.nd.array(g)).sum()
    loss.backward()
    tr.step(1)
    h = (g * g).mean(axis=1, keepdims=True)
    np.testing.assert_allclose(p.data().asnumpy(), w0 - 0.1 * g / np.sqrt(h + 1e-5), rtol=1e-5)


def test_group_adagrad_refuses_weight_decay_and_non_2d():
    opt = mx.optimizer.contrib.GroupAdaGrad(wd=0.1)
    with pytest.raises(InvalidArgumentError, match="weight decay"):
        opt.create_state(0, mx.nd.ones((2, 2)))
    with pytest.raises(ValueError, match="2-D"):
        mx.optimizer.contrib.GroupAdaGrad().create_state(0, mx.nd.ones((2, 2, 2)))


def test_multi_adamw_update_matches_mxnet():
    arrs = {n: [mx.nd.array(REF[f"adamw.{n}{i}"]) for i in range(2)] for n in "wgmv"}
    kw = dict(lrs=[0.1, 0.05], wds=[0.01, 0.0], etas=[1.0, 0.5], clip_gradient=0.5)
    mx.nd.contrib.multi_adamw_update(
        arrs["w"], arrs["g"], arrs["m"], arrs["v"], 2.0, out=arrs["w"], **kw
    )
    for n in "wmv":
        for i in range(2):
            np.testing.assert_allclose(
                arrs[n][i].asnumpy(), REF[f"adamw.out.{n}{i}"], rtol=1e-5, atol=1e-7
            )


@pytest.mark.parametrize("scale", [0.0, float("nan"), float("inf")])
def test_adamw_skips_the_step_for_zero_or_non_finite_rescale(scale):
    """MXNet's AdamW kernels leave everything unchanged (AMP's loss scaler)."""
    w, g, m, v = (mx.nd.array(REF[f"adamw.{n}0"]) for n in "wgmv")
    mx.nd.contrib.adamw_update(w, g, m, v, scale, out=w, lr=0.1, eta=1.0, wd=0.1)
    np.testing.assert_array_equal(w.asnumpy(), REF["adamw.w0"])
    np.testing.assert_array_equal(m.asnumpy(), REF["adamw.m0"])
    ws = [mx.nd.array(REF["adamw.w0"])]
    mx.nd.contrib.multi_adamw_update(
        ws, [g], [m], [v], scale, out=ws, lrs=[0.1], wds=[0.0], etas=[1.0]
    )
    np.testing.assert_array_equal(ws[0].asnumpy(), REF["adamw.w0"])


def test_group_adagrad_update_op_matches_numpy():
    """The registry op ``_contrib_group_adagrad_update`` (reference: NumPy)."""
    rs = np.random.RandomState(3)
    w, g = rs.randn(4, 3).astype(np.float32), rs.randn(4, 3).astype(np.float32)
    h = np.abs(rs.randn(4, 1)).astype(np.float32)
    wn, gn, hn = mx.nd.array(w), mx.nd.array(g), mx.nd.array(h)
    mx.nd.contrib.group_adagrad_update(
        wn, gn, hn, out=wn, lr=0.1, rescale_grad=0.5, clip_gradient=0.3, epsilon=1e-5
    )
    gc = np.clip(0.5 * g, -0.3, 0.3)
    h2 = h + (gc * gc).mean(axis=1, keepdims=True)
    np.testing.assert_allclose(hn.asnumpy(), h2, rtol=1e-6)
    np.testing.assert_allclose(wn.asnumpy(), w - 0.1 * gc / np.sqrt(h2 + 1e-5), rtol=1e-5)


def test_multi_mp_adamw_update_keeps_float32_masters():
    """``_multi_mp_adamw_update``: float16 weights, float32 master copies updated by
    MXNet's AdamW rule (reference: NumPy in float32)."""
    rs = np.random.RandomState(4)
    lrs, wds, etas = [0.1, 0.05], [0.01, 0.0], [1.0, 0.5]
    ws, gs, ms, vs, w32s, refs = [], [], [], [], [], []
    for i in range(2):
        w32 = rs.randn(3, 2).astype(np.float32)
        g = rs.randn(3, 2).astype(np.float16)
        m, v = rs.randn(3, 2).astype(np.float32) * 0.1, np.abs(rs.randn(3, 2)).astype(np.float32)
        gg = np.clip(2.0 * g.astype(np.float32), -0.5, 0.5)
        m2 = 0.9 * m + 0.1 * gg
        v2 = 0.999 * v + 0.001 * gg * gg
        w2 = w32 - etas[i] * (lrs[i] * m2 / (np.sqrt(v2) + 1e-8) + wds[i] * w32)
        refs.append((w2, m2, v2))
        ws.append(mx.nd.array(w32.astype(np.float16), dtype="float16"))
        gs.append(mx.nd.array(g, dtype="float16"))
        ms.append(mx.nd.array(m))
        vs.append(mx.nd.array(v))
        w32s.append(mx.nd.array(w32))
    mx.nd.contrib.multi_mp_adamw_update(
        ws, gs, ms, vs, w32s, 2.0, out=ws, lrs=lrs, wds=wds, etas=etas, clip_gradient=0.5
    )
    for i, (w2, m2, v2) in enumerate(refs):
        np.testing.assert_allclose(w32s[i].asnumpy(), w2, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ms[i].asnumpy(), m2, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(vs[i].asnumpy(), v2, rtol=1e-5, atol=1e-7)
        assert ws[i].dtype == np.float16
        np.testing.assert_allclose(ws[i].asnumpy(), w2.astype(np.float16), rtol=1e-3)

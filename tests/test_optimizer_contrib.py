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

"""64-bit types: float64/int64 are honoured (jax's x64 mode is on), MXNet's 32-bit defaults
stay, and a float32 model's compiled training programs hold no 64-bit arithmetic."""

import contextlib
import glob
import io
import json
import os
import re

import jax
import numpy as np
import pytest

import gluonjax as mx
from gluonjax import autograd, gluon, nd
from gluonjax.gluon import nn
from tests.mxnet_ref import needs_mxnet, run_mxnet

# ----------------------------------------------------------------------------- dtypes
# Expressions evaluated by gluonjax and by real MXNet 1.9.1 (``mx``, ``np`` in scope).
EXPRS = [
    "mx.nd.array([1, 2])",
    "mx.nd.array(np.zeros(2))",
    "mx.nd.array(np.zeros(2, dtype=np.int64))",
    "mx.nd.array(np.zeros(2), dtype='float64')",
    "mx.nd.array([3, 4], dtype='int64')",
    "mx.nd.zeros((2,))",
    "mx.nd.ones((2,), dtype='float64')",
    "mx.nd.arange(3)",
    "mx.nd.arange(3, dtype='int64')",
    "mx.nd.random.uniform(shape=(2,))",
    "mx.nd.random.uniform(shape=(2,), dtype='float64')",
    "mx.nd.random.normal(shape=(2,), dtype='float64')",
    "mx.nd.shape_array(mx.nd.ones((2, 3)))",
    "mx.nd.size_array(mx.nd.ones((2, 3)))",
    "mx.nd.ones((2,)).astype('float64') * 2",
    "mx.nd.ones((2,), dtype='int64') + 1",
    "mx.nd.ones((2, 2), dtype='float64').sum()",
    "mx.nd.argmax(mx.nd.ones((2, 2), dtype='float64'), axis=0)",
    "mx.nd.topk(mx.nd.ones((3,), dtype='float64'), k=2)",
    "mx.nd.argsort(mx.nd.ones((3,), dtype='float64'))",
    "mx.nd.softmax(mx.nd.ones((2, 3), dtype='float64'))",
    "mx.nd.dot(mx.nd.ones((2, 3), dtype='float64'), mx.nd.ones((3, 2), dtype='float64'))",
    "mx.nd.cast(mx.nd.ones((2,)), dtype='int64')",
    "mx.nd.one_hot(mx.nd.array([1, 0]), 3)",
    # float64 values (would round in float32)
    "mx.nd.array([1.0], dtype='float64') + 1e-10",
    "mx.nd.array([1.0 / 3.0, 2.0 / 3.0], dtype='float64').sum()",
    "mx.nd.array([2**40 + 1, 3], dtype='int64') * 2",
    "mx.nd.sqrt(mx.nd.array([2.0], dtype='float64'))",
    "mx.nd.exp(mx.nd.array([0.1], dtype='float64'))",
]


@pytest.fixture(scope="module")
def mxnet_dtypes():
    script = (
        "import json, numpy as np, mxnet as mx\n"
        f"exprs = {EXPRS!r}\n"
        "out = []\n"
        "for e in exprs:\n"
        "    a = eval(e)\n"
        "    out.append([np.dtype(a.dtype).name, a.asnumpy().astype(np.float64).tolist()])\n"
        "print(json.dumps(out))\n"
    )
    return json.loads(run_mxnet(script).strip().splitlines()[-1])


@needs_mxnet
@pytest.mark.parametrize("k", range(len(EXPRS)))
def test_dtypes_and_values_match_mxnet(k, mxnet_dtypes):
    want_dtype, want = mxnet_dtypes[k]
    got = eval(EXPRS[k], {"mx": mx, "np": np})
    assert np.dtype(got.dtype).name == want_dtype, EXPRS[k]
    if not EXPRS[k].startswith("mx.nd.random"):
        np.testing.assert_array_equal(got.asnumpy().astype(np.float64), want)


def test_float64_save_load_keeps_dtype(tmp_path):
    """MXNet's file format keeps float64/int64 records, and so does loading them."""
    f64 = np.array([1.0 + 1e-12, 1.0 / 3.0])
    i64 = np.array([2**40 + 1, -5], dtype=np.int64)
    path = str(tmp_path / "x.nd")
    nd.save(path, {"f": nd.array(f64, dtype="float64"), "i": nd.array(i64, dtype="int64")})
    back = nd.load(path)
    assert back["f"].dtype == np.float64 and back["i"].dtype == np.int64
    np.testing.assert_array_equal(back["f"].asnumpy(), f64)
    np.testing.assert_array_equal(back["i"].asnumpy(), i64)


# ----------------------------------------------------------------------------- float64 model
def _mlp(hybrid):
    net = nn.HybridSequential()
    net.add(nn.Dense(5, activation="tanh", in_units=4), nn.Dense(3, in_units=5))
    net.initialize(mx.init.Xavier())
    net.cast("float64")
    if hybrid:
        net.hybridize()
    return net


def _numpy_grads(x, y, w1, b1, w2, b2):
    """Softmax cross-entropy of Dense(tanh) -> Dense, summed over the batch, in float64."""
    h = np.tanh(x @ w1.T + b1)
    z = h @ w2.T + b2
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    dz = p.copy()
    dz[np.arange(len(y)), y.astype(int)] -= 1.0
    dw2, db2 = dz.T @ h, dz.sum(0)
    dh = (dz @ w2) * (1.0 - h * h)
    dw1, db1 = dh.T @ x, dh.sum(0)
    loss = -np.log(p[np.arange(len(y)), y.astype(int)])
    return loss, [dw1, db1, dw2, db2]


@pytest.mark.parametrize("hybrid", [False, True])
def test_float64_model_gradients_match_numpy(hybrid):
    rng = np.random.RandomState(0)
    x = rng.randn(6, 4)
    y = rng.randint(0, 3, 6).astype(np.float64)
    net = _mlp(hybrid)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    with autograd.record():
        loss = loss_fn(net(nd.array(x, dtype="float64")), nd.array(y, dtype="float64"))
    loss.backward()
    params = list(net.collect_params().values())
    assert all(p.data().dtype == np.float64 and p.grad().dtype == np.float64 for p in params)
    assert loss.dtype == np.float64
    want_loss, want = _numpy_grads(x, y, *[p.data().asnumpy() for p in params])
    np.testing.assert_allclose(loss.asnumpy(), want_loss, rtol=1e-12, atol=1e-12)
    for p, g in zip(params, want):
        np.testing.assert_allclose(p.grad().asnumpy(), g, rtol=1e-12, atol=1e-12)


def test_float64_model_trains_in_float64():
    """A Trainer step keeps float64 weights float64 and applies SGD in float64. As MXNet's
    ``sgd_update`` (its ``lr`` and ``rescale_grad`` attributes are C ``float``), the learning
    rate and the rescale factor are float32 values (checked against MXNet 1.9.1)."""
    rng = np.random.RandomState(1)
    x, y = rng.randn(6, 4), rng.randint(0, 3, 6).astype(np.float64)
    net = _mlp(True)
    params = list(net.collect_params().values())
    before = [p.data().asnumpy() for p in params]
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    step = tr.compile_step(net, gluon.loss.SoftmaxCrossEntropyLoss())
    step(nd.array(x, dtype="float64"), nd.array(y, dtype="float64"))
    _, grads = _numpy_grads(x, y, *before)
    for p, w, g in zip(params, before, grads):
        assert p.data().dtype == np.float64
        want = w - np.float64(np.float32(0.1)) * (np.float64(np.float32(1 / 6)) * g)
        np.testing.assert_allclose(p.data().asnumpy(), want, rtol=1e-12, atol=1e-13)


# Float64 weights updated by MXNet 1.9.1's optimizers, run by gluonjax and by MXNet. The
# kernels' hyperparameters are C floats: a float64 weight is updated with float32(0.9),
# float32(0.05)... in float64 arithmetic (``lr*wd`` is a float64 product of the two float32
# values). The values are chosen to round in float32; a Python double anywhere is 3e-8 off.
_OPT64 = r"""
import json
import numpy as np
rs = np.random.RandomState(5)
w0, g0, g1, s0, s1 = rs.randn(5, 7)
def arr(a):
    return mx.nd.array(a, dtype="float64")
res = {}
hyper = dict(lr=0.05, wd=1e-4, rescale_grad=1 / 3.0, clip_gradient=0.7)
for name, op, kw, nstate in [
    ("sgd_update", mx.nd.sgd_update, {}, 0),
    ("sgd_mom_update", mx.nd.sgd_mom_update, dict(momentum=0.9), 1),
    ("nag_mom_update", mx.nd.nag_mom_update, dict(momentum=0.9), 1),
    ("signum_update", mx.nd.signum_update, dict(momentum=0.9, wd_lh=0.01), 1),
    ("adam_update", mx.nd.adam_update, dict(beta1=0.9, beta2=0.99, epsilon=1e-7), 2),
    ("rmsprop_update", mx.nd.rmsprop_update, dict(gamma1=0.95, epsilon=1e-7), 1),
]:
    w, states = arr(w0), [arr(np.abs(s)) for s in (s0, s1)[:nstate]]
    # no out=weight: MXNet's nag_mom_update would read the weight it just wrote back
    new = op(w, arr(g0 * 3), *states, **hyper, **kw)
    res[name] = new.asnumpy().tolist() + [x for s in states for x in s.asnumpy().tolist()]
for opt, kw in [
    ("sgd", dict(learning_rate=0.05, momentum=0.9, wd=1e-4)),
    ("nag", dict(learning_rate=0.05, momentum=0.9, wd=1e-4)),
    ("sgd", dict(learning_rate=0.05, wd=1e-4, clip_gradient=0.7)),
]:
    key = opt + str(sorted(kw))
    # a Trainer (gluonjax: the fused update) and an Updater (the eager one)
    p = mx.gluon.Parameter("p", shape=(7,), dtype="float64")
    p.initialize(mx.init.Constant(0))
    p.set_data(arr(w0))
    tr = mx.gluon.Trainer([p], opt, dict(kw))
    upd = mx.optimizer.get_updater(mx.optimizer.create(opt, rescale_grad=1 / 3.0, **kw))
    w = arr(w0)
    for g in (g0, g1):
        with mx.autograd.record():
            loss = (p.data() * arr(g)).sum()
        loss.backward()
        tr.step(3)
        upd(0, arr(g), w)
    res["trainer " + key] = p.data().asnumpy().tolist()
    res["updater " + key] = w.asnumpy().tolist()
print(json.dumps(res))
"""


@needs_mxnet
def test_float64_optimizers_use_float32_hyperparameters_as_mxnet():
    want = json.loads(run_mxnet("import mxnet as mx\n" + _OPT64).strip().splitlines()[-1])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(_OPT64, {"mx": mx})
    got = json.loads(out.getvalue())
    assert set(got) == set(want)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-14, atol=1e-15, err_msg=k)


@pytest.mark.parametrize("hybrid", [False, True])
def test_float64_sgd_momentum_is_a_float32_value(hybrid):
    """Two momentum steps on one float64 weight (w = 1, gradient 1): MXNet 1.9.1's Trainer
    gives 0.8549857490566951 (momentum float32(0.9), lr float32(0.05), wd float32(1e-4), in
    float64 arithmetic); with a float64 momentum of 0.9 the result is 1.2e-9 away."""
    f = lambda v: float(np.float32(v))  # noqa: E731
    w, mom = 1.0, 0.0
    for _ in range(2):
        mom = f(0.9) * mom - f(0.05) * f(1e-4) * w - f(0.05) * 1.0
        w += mom
    assert w == 0.8549857490566951
    net = nn.Dense(1, in_units=1, use_bias=False)
    net.initialize(mx.init.One())
    net.cast("float64")
    if hybrid:
        net.hybridize()
    tr = gluon.Trainer(
        net.collect_params(), "sgd", {"learning_rate": 0.05, "momentum": 0.9, "wd": 1e-4}
    )
    x = nd.ones((1, 1), dtype="float64")
    for _ in range(2):
        with autograd.record():
            loss = net(x).sum()
        loss.backward()
        tr.step(1)
    np.testing.assert_allclose(net.weight.data().asnumpy(), [[w]], rtol=1e-15)


def test_float64_export_and_import(tmp_path):
    rng = np.random.RandomState(2)
    x = rng.randn(3, 4)
    net = _mlp(True)
    out = net(nd.array(x, dtype="float64"))
    prefix = str(tmp_path / "mlp64")
    net.export(prefix)
    back = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    got = back(nd.array(x, dtype="float64"))
    assert got.dtype == np.float64
    w1, b1, w2, b2 = [p.data().asnumpy() for p in net.collect_params().values()]
    want = np.tanh(x @ w1.T + b1) @ w2.T + b2
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-13)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-13)


# ----------------------------------------------------------------------------- float32 hot path
_WIDE = re.compile(r"tensor<([0-9x]*)(f64|i64|complex<f64>)>")
# rank-0 float64 values may only be constants turned into the model's dtype (a Python float
# passed to a kernel); rank-0 int64 are index constants and jax's own loop counters
_SCALAR_OK = re.compile(r"stablehlo\.constant|stablehlo\.convert|\bcall\b|func\.func|return")


def _wide_ops(text):
    bad = []
    for line in text.splitlines():
        for m in _WIDE.finditer(line):
            dims, kind = m.groups()
            if dims:  # an array of 64-bit elements
                bad.append(line.strip()[:160])
            elif kind != "i64" and not _SCALAR_OK.search(line):  # float64 arithmetic
                bad.append(line.strip()[:160])
    return bad


def _convnet():
    net = nn.HybridSequential()
    net.add(
        nn.Conv2D(4, 3, padding=1),
        nn.BatchNorm(),
        nn.Activation("relu"),
        nn.Dropout(0.5),
        nn.Flatten(),
        nn.Dense(10),
    )
    net.initialize(mx.init.Xavier())
    return net


def _run(mode, opt):
    rng = np.random.RandomState(0)
    x = nd.array(rng.rand(5, 3, 7, 7))  # shapes no other test compiles
    y = nd.array(rng.randint(0, 10, 5))
    net = _convnet()
    if mode != "eager":
        net.hybridize()
    args = {"learning_rate": 0.1, "momentum": 0.9} if opt == "sgd" else {"learning_rate": 0.01}
    tr = gluon.Trainer(net.collect_params(), opt, args)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    if mode == "compile_step":
        step = tr.compile_step(net, loss_fn)
        for _ in range(2):
            loss = step(x, y)
    else:
        for _ in range(2):
            with autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            tr.step(5)
    loss.wait_to_read()
    return net, tr, loss


@pytest.mark.parametrize("opt", ["sgd", "adam"])
@pytest.mark.parametrize("mode", ["compile_step", "hybridized", "eager"])
def test_float32_training_programs_have_no_64bit_ops(mode, opt, tmp_path):
    mx.clear_caches()  # every program of the step is lowered (and dumped) afresh
    jax.config.update("jax_dump_ir_to", str(tmp_path))
    try:
        net, tr, loss = _run(mode, opt)
    finally:
        jax.config.update("jax_dump_ir_to", "")
    dumps = glob.glob(os.path.join(tmp_path, "*.mlir"))
    assert dumps, "no program was lowered: the check would be vacuous"
    for f in dumps:
        with open(f) as fh:
            bad = _wide_ops(fh.read())
        assert not bad, f"{os.path.basename(f)} computes in 64 bits:\n" + "\n".join(bad[:10])
    arrays = [loss] + [p.data() for p in net.collect_params().values()]
    arrays += [p.grad() for p in net.collect_params().values() if p.grad_req != "null"]
    assert {a.dtype for a in arrays} == {np.dtype(np.float32)}
    states = jax.tree_util.tree_leaves(
        [getattr(s, "_data", s) for s in jax.tree_util.tree_leaves(tr._states)]
    )
    assert states and all(s.dtype in (np.float32, np.int32) for s in states), {
        s.dtype for s in states
    }

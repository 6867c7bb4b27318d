"""GridGenerator, BilinearSampler, SpatialTransformer, Correlation, BatchNorm_v1, _hypot
and SequenceReverse against results recorded from real MXNet 1.9.1
(``tools/make_vision_fixtures.py`` -> ``tests/fixtures/vision_ops``), plus their
symbolic interface (argument/output names, shape inference, JSON attributes) and errors.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import AttrError, MXNetError, ShapeError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mxnet_ref import REPO_ROOT, needs_mxnet, run_mxnet  # noqa: E402

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "vision_ops"
RTOL, ATOL = 1e-4, 1e-5
with open(FIXTURES / "cases.json") as _f:
    CASES = json.load(_f)
with np.load(FIXTURES / "vision.npz") as _z:
    DATA = {k: _z[k] for k in _z.files}


def _attrs(case):
    return {
        k: tuple(v["__tuple__"]) if isinstance(v, dict) else v for k, v in case["attrs"].items()
    }


def _close(actual, expected, what):
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL, err_msg=what)


def _inputs(case):
    cid = case["id"]
    return [DATA[f"{cid}.in{i}"] for i in range(len(case["inputs"]))]


def _replay_nd(case):
    cid, kinds = case["id"], case["inputs"]
    xs = [mx.nd.array(a, dtype=a.dtype) for a in _inputs(case)]
    for x, kind in zip(xs, kinds, strict=True):
        if kind == "diff":
            x.attach_grad()
    fn = getattr(mx.nd, case["op"], None) or getattr(mx.nd._internal, case["op"])
    with mx.autograd.record(train_mode=case["train"]):
        res = fn(*xs, **_attrs(case))
    outs = list(res) if isinstance(res, (list, tuple)) else [res]
    heads = case["heads"]
    if case["grads"]:
        mx.autograd.backward(
            [outs[i] for i in heads], [mx.nd.array(DATA[f"{cid}.head{i}"]) for i in heads]
        )
    grads = {i: x.grad.asnumpy() for i, x in enumerate(xs) if kinds[i] == "diff"}
    return [o.asnumpy() for o in outs], grads, {}


def _replay_symbolic(case):
    """Bind ``mx.sym.<op>`` as the tool did: arguments in order, auxiliary states after."""
    cid, kinds = case["id"], case["inputs"]
    arrays = _inputs(case)
    args = [mx.sym.var(f"in{i}") for i, k in enumerate(kinds) if k != "aux"]
    s = getattr(mx.sym, case["op"])(*args, name="op", **_attrs(case))
    arg_nd = [mx.nd.array(a) for a, k in zip(arrays, kinds, strict=True) if k != "aux"]
    aux_nd = [mx.nd.array(a) for a, k in zip(arrays, kinds, strict=True) if k == "aux"]
    grads = [mx.nd.zeros(x.shape) for x in arg_nd]
    reqs = ["write" if k == "diff" else "null" for k in kinds if k != "aux"]
    exe = s.bind(mx.cpu(), args=arg_nd, args_grad=grads, grad_req=reqs, aux_states=aux_nd)
    outs = [o.asnumpy() for o in exe.forward(is_train=case["train"])]
    if case["heads"]:
        exe.backward([mx.nd.array(DATA[f"{cid}.head{i}"]) for i in case["heads"]])
    arg_idx = [i for i, k in enumerate(kinds) if k != "aux"]
    got = {i: g.asnumpy() for i, g in zip(arg_idx, grads, strict=True) if kinds[i] == "diff"}
    aux_idx = [i for i, k in enumerate(kinds) if k == "aux"]
    aux = {i: a.asnumpy() for i, a in zip(aux_idx, exe.aux_arrays, strict=True)}
    return outs, got, aux


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_op_matches_mxnet(case):
    cid = case["id"]
    replay = _replay_symbolic if case.get("symbolic") else _replay_nd
    outs, grads, aux = replay(case)
    assert len(outs) == case["n_out"]
    for i, out in enumerate(outs):
        _close(out, DATA[f"{cid}.out{i}"], f"{cid}: output {i}")
    if case["grads"]:
        for i, g in grads.items():
            _close(g, DATA[f"{cid}.grad{i}"], f"{cid}: gradient of input {i}")
    for i, a in aux.items():
        _close(a, DATA[f"{cid}.aux{i}"], f"{cid}: auxiliary state {i}")


def test_batchnorm_v1_inference_gradient():
    """In inference BatchNorm_v1 is affine in x: d/d(x, gamma, beta) of
    gamma * (x - mean) / sqrt(var + eps) + beta with the moving statistics. (Not
    recorded from MXNet: its nd.BatchNorm_v1 cannot take the auxiliary states, and its
    executor's backward after an inference forward applies the training formula.)"""
    rng = np.random.RandomState(3)
    x, head = rng.randn(4, 3, 2, 2), rng.randn(4, 3, 2, 2)
    gamma, beta, mean, var = rng.rand(3) + 0.5, rng.randn(3), rng.randn(3), rng.rand(3) + 0.5
    xs = [mx.nd.array(a) for a in (x, gamma, beta)]
    for a in xs:
        a.attach_grad()
    with mx.autograd.record(train_mode=False):
        out = mx.nd.BatchNorm_v1(*xs, mx.nd.array(mean), mx.nd.array(var), fix_gamma=False)
    out.backward(mx.nd.array(head))
    b = (1, 3, 1, 1)
    inv = 1.0 / np.sqrt(var + 1e-3)
    xhat = (x - mean.reshape(b)) * inv.reshape(b)
    np.testing.assert_allclose(
        out.asnumpy(), xhat * gamma.reshape(b) + beta.reshape(b), rtol=1e-5, atol=1e-6
    )
    want = [head * (gamma * inv).reshape(b), (head * xhat).sum((0, 2, 3)), head.sum((0, 2, 3))]
    for a, w in zip(xs, want, strict=True):
        np.testing.assert_allclose(a.grad.asnumpy(), w, rtol=1e-5, atol=1e-5)


def test_symbolic_interface():
    data, loc = mx.sym.var("data"), mx.sym.var("loc")
    stn = mx.sym.SpatialTransformer(
        data, loc, target_shape=(3, 4), transform_type="affine", sampler_type="bilinear"
    )
    assert stn.list_arguments() == ["data", "loc"]
    assert len(stn.list_outputs()) == 1
    _, out, _ = stn.infer_shape(data=(2, 3, 7, 9), loc=(2, 6))
    assert out == [(2, 3, 3, 4)]
    grid = mx.sym.GridGenerator(data, transform_type="warp")
    assert grid.infer_shape(data=(1, 2, 5, 6))[1] == [(1, 2, 5, 6)]
    samp = mx.sym.BilinearSampler(data, mx.sym.var("grid"))
    assert samp.infer_shape(data=(2, 3, 5, 5), grid=(2, 2, 4, 6))[1] == [(2, 3, 4, 6)]
    corr = mx.sym.Correlation(
        data1=data, data2=loc, kernel_size=3, max_displacement=2, stride1=2, stride2=2, pad_size=2
    )
    assert corr.list_arguments() == ["data", "loc"]
    # ceil((7 + 4 - 2 * 3) / 2) = 3 rows, ceil((8 + 4 - 6) / 2) = 3 columns, 3 * 3 channels
    assert corr.infer_shape(data=(1, 4, 7, 8), loc=(1, 4, 7, 8))[1] == [(1, 9, 3, 3)]
    bn = mx.sym.BatchNorm_v1(data, name="bn")
    assert bn.list_arguments() == ["data", "bn_gamma", "bn_beta"]
    assert bn.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    args, outs, auxs = bn.infer_shape(data=(4, 5, 2, 2))
    assert args[1:] == [(5,), (5,)] and auxs == [(5,), (5,)] and outs == [(4, 5, 2, 2)]


def test_json_attributes_are_mxnet_strings():
    g = mx.sym.GridGenerator(mx.sym.var("d"), transform_type="affine", target_shape=(2, 2))
    node = json.loads(g.tojson())["nodes"][1]
    assert node["op"] == "GridGenerator"
    assert node["attrs"] == {"target_shape": "(2, 2)", "transform_type": "affine"}
    back = mx.sym.load_json(g.tojson())
    assert back.infer_shape(d=(3, 6))[1] == [(3, 2, 2, 2)]


def test_sequence_reverse_none_length_is_left_out():
    """MXNet's symbol functions drop inputs passed as None."""
    rev = mx.sym.SequenceReverse(data=mx.sym.var("seq"), sequence_length=None)
    assert rev.list_arguments() == ["seq"]
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    out = rev.eval(seq=mx.nd.array(x))[0].asnumpy()
    np.testing.assert_array_equal(out, x[::-1])
    fc = mx.sym.FullyConnected(mx.sym.var("x"), bias=None, no_bias=True, num_hidden=2, name="fc")
    assert fc.list_arguments() == ["x", "fc_weight"]
    with pytest.raises(MXNetError, match="unknown input"):  # not an input of any signature
        mx.sym.FullyConnected(mx.sym.var("x"), foo=None, num_hidden=2)


def test_legacy_hypot_symbol_gradient():
    a, b = np.array([[3.0, 0.5]], np.float32), np.array([[4.0, 1.2]], np.float32)
    s = mx.sym.hypot(mx.sym.var("a"), mx.sym.var("b"))
    ga, gb = mx.nd.zeros((1, 2)), mx.nd.zeros((1, 2))
    exe = s.bind(mx.cpu(), args=[mx.nd.array(a), mx.nd.array(b)], args_grad=[ga, gb])
    out = exe.forward(is_train=True)[0].asnumpy()
    exe.backward(mx.nd.ones((1, 2)))
    h = np.hypot(a, b)
    np.testing.assert_allclose(out, h, rtol=1e-6)
    np.testing.assert_allclose(ga.asnumpy(), a / h, rtol=1e-6)
    np.testing.assert_allclose(gb.asnumpy(), b / h, rtol=1e-6)


@pytest.mark.parametrize(
    "call, exc, words",
    [
        (
            lambda: mx.nd.GridGenerator(
                mx.nd.ones((2, 4)), transform_type="affine", target_shape=(2, 2)
            ),
            ShapeError,
            "(batch, 6)",
        ),
        (
            lambda: mx.nd.GridGenerator(mx.nd.ones((2, 6)), transform_type="affine"),
            ShapeError,
            "target_shape",
        ),
        (
            lambda: mx.nd.GridGenerator(mx.nd.ones((2, 6)), transform_type="shear"),
            AttrError,
            "transform_type",
        ),
        (
            lambda: mx.nd.SpatialTransformer(
                mx.nd.ones((1, 1, 4, 4)), mx.nd.ones((1, 6)), target_shape=(2, 2)
            ),
            AttrError,
            "transform_type",
        ),
        (
            lambda: mx.nd.BilinearSampler(mx.nd.ones((1, 1, 4, 4)), mx.nd.ones((2, 2, 3, 3))),
            ShapeError,
            "batch size",
        ),
        (
            lambda: mx.nd.Correlation(
                mx.nd.ones((1, 1, 4, 4)), mx.nd.ones((1, 1, 4, 4)), kernel_size=2
            ),
            ShapeError,
            "odd",
        ),
        (
            lambda: mx.nd.Correlation(
                mx.nd.ones((1, 1, 4, 4)), mx.nd.ones((1, 1, 4, 4)), max_displacement=3
            ),
            ShapeError,
            "do not fit",
        ),
        (
            lambda: mx.nd.Correlation(mx.nd.ones((1, 1, 4, 4)), mx.nd.ones((1, 1, 4, 5))),
            ShapeError,
            "same shape",
        ),
    ],
)
def test_errors_name_the_problem(call, exc, words):
    with pytest.raises(exc) as info:
        call()
    assert isinstance(info.value, MXNetError) and words in str(info.value)


@pytest.mark.mxnet
@needs_mxnet
def test_fixtures_regenerate(tmp_path):
    """The tool runs under MXNet and produces the committed cases (data not compared)."""
    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(REPO_ROOT / 'tools')!r})\n"
        "import make_vision_fixtures\n"
        f"sys.exit(make_vision_fixtures.main(['--out', {str(tmp_path)!r}]))\n"
    )
    run_mxnet(script, cwd=REPO_ROOT)
    with open(tmp_path / "cases.json") as f:
        assert [c["id"] for c in json.load(f)] == [c["id"] for c in CASES]
    with np.load(tmp_path / "vision.npz") as z:
        assert sorted(z.files) == sorted(DATA)

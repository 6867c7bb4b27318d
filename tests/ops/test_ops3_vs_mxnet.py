"""histogram, moments, ravel_multi_index / unravel_index, im2col / col2im,
contrib.RROIAlign and split_v2 against real MXNet 1.9.1.

Fixtures are written by ``tools/make_ops3_fixtures.py`` into ``tests/fixtures/ops3``:
values and gradients of eager calls, the symbols' arguments, outputs, attributes and
inferred shapes, and the calls MXNet rejects. RROIAlign has no backward in MXNet
1.9.1; its gradient (gluonjax gives one) is checked against finite differences.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import MXNetError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mxnet_ref import REPO_ROOT  # noqa: E402

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "ops3"
with open(FIXTURES / "cases.json") as _f:
    RECORDS = json.load(_f)
_DATA = dict(np.load(FIXTURES / "ops3.npz", allow_pickle=False))
CALLS = [r for r in RECORDS if r["kind"] == "call"]
SYMS = [r for r in RECORDS if r["kind"] == "sym"]
ERRORS = [r for r in RECORDS if r["kind"] == "error"]
# MXNet's 64-bit types are 32-bit in gluonjax (jax runs with 64-bit types off)
_NARROW = {np.dtype(np.float64): np.dtype(np.float32), np.dtype(np.int64): np.dtype(np.int32)}


def _decode(v):
    if isinstance(v, dict) and set(v) == {"__tuple__"}:
        return tuple(_decode(x) for x in v["__tuple__"])
    return v


def _resolve(root, path):
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _close(actual, expected, what):
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    want = _NARROW.get(expected.dtype, expected.dtype)
    assert actual.dtype == want, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5, err_msg=what)


@pytest.mark.parametrize("case", CALLS, ids=[c["id"] for c in CALLS])
def test_call_matches_mxnet(case):
    cid = case["id"]
    arrays = [_DATA[f"{cid}.in{i}"] for i in range(case["n_in"])]
    xs = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
    for x, d in zip(xs, case["diff"], strict=True):
        if d:
            x.attach_grad()
    kwargs = {k: _decode(v) for k, v in case["kwargs"].items()}
    with mx.autograd.record():
        res = _resolve(mx, case["path"])(*xs, **kwargs)
    outs = list(res) if isinstance(res, (list, tuple)) else [res]
    assert len(outs) == case["n_out"]
    for i, out in enumerate(outs):
        _close(out.asnumpy(), _DATA[f"{cid}.out{i}"], f"{cid} output {i}")
    if not case["heads"]:
        return
    heads = [mx.nd.array(_DATA[f"{cid}.head{i}"]) for i in case["heads"]]
    mx.autograd.backward([outs[i] for i in case["heads"]], heads)
    for i, (x, d) in enumerate(zip(xs, case["diff"], strict=True)):
        if d:
            _close(x.grad.asnumpy(), _DATA[f"{cid}.grad{i}"], f"{cid} gradient of input {i}")


def _literal(text):
    try:
        v = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return tuple(v) if isinstance(v, list) else v


@pytest.mark.parametrize("case", SYMS, ids=[c["id"] for c in SYMS])
def test_symbol_matches_mxnet(case):
    vs = [mx.sym.var(a) for a in case["args"]]
    kwargs = {k: _decode(v) for k, v in case["kwargs"].items()}
    s = _resolve(mx.sym, case["path"])(*vs, **kwargs)
    assert s.list_arguments() == case["list_arguments"]
    # output names: the node name counters differ with the tests run before; compare
    # the part after the node name
    want_out = [n.rsplit("_", 1)[-1] for n in case["list_outputs"]]
    assert [n.rsplit("_", 1)[-1] for n in s.list_outputs()] == want_out
    node = [n for n in json.loads(s.tojson())["nodes"] if n["op"] != "null"][0]
    assert node["op"] == case["op"]
    got = {k: _literal(v) for k, v in node.get("attrs", {}).items()}
    assert got == {k: _literal(v) for k, v in case["attrs"].items()}
    _, out_shapes, _ = s.infer_shape(**{k: tuple(v) for k, v in case["shapes"].items()})
    assert [list(o) for o in out_shapes] == case["out_shapes"]


@pytest.mark.parametrize("case", ERRORS, ids=[c["id"] for c in ERRORS])
def test_error_like_mxnet(case):
    if case["path"].startswith("sym."):
        xs = [mx.sym.var(a) for a in case["inputs"]]
    else:
        xs = [mx.nd.array(np.array(a, d)) for a, d in zip(case["inputs"], case["dtypes"])]
    kwargs = {k: _decode(v) for k, v in case["kwargs"].items()}
    builtin = {"ValueError": ValueError, "TypeError": TypeError, "IndexError": IndexError}
    expected = tuple(builtin[b] for b in case["builtins"] if b in builtin) or (MXNetError,)
    with pytest.raises(MXNetError) as info:
        out = _resolve(mx, case["path"])(*xs, **kwargs)
        for o in out if isinstance(out, (list, tuple)) else [out]:
            o.asnumpy()
    assert isinstance(info.value, expected), f"{type(info.value)} is not a {expected}"


# ----------------------------------------------------------------------------- beyond MXNet
def test_rroi_align_gradient_matches_finite_differences():
    rng = np.random.RandomState(0)
    data = rng.randn(2, 2, 6, 7).astype(np.float32)
    rois = np.array([[0, 3.0, 2.5, 4.0, 3.0, 30.0], [1, 2.0, 3.0, 3.0, 5.0, -100.0]], np.float32)
    head = rng.randn(2, 2, 2, 3).astype(np.float32)
    x = mx.nd.array(data)
    x.attach_grad()
    kw = {"pooled_size": (2, 3), "spatial_scale": 1.0}
    with mx.autograd.record():
        out = mx.nd.contrib.RROIAlign(x, mx.nd.array(rois), **kw)
    out.backward(mx.nd.array(head))
    # the op is linear in data: the gradient is the sum over unit inputs of head . out
    flat = np.zeros(data.size, np.float32)
    for i in range(data.size):
        e = np.zeros(data.size, np.float32)
        e[i] = 1.0
        y = mx.nd.contrib.RROIAlign(mx.nd.array(e.reshape(data.shape)), mx.nd.array(rois), **kw)
        flat[i] = float((y.asnumpy() * head).sum())
    np.testing.assert_allclose(x.grad.asnumpy(), flat.reshape(data.shape), rtol=1e-5, atol=1e-5)


def test_rroi_align_batch_index_out_of_range_raises():
    rois = mx.nd.array([[2, 1, 1, 2, 2, 0]])
    with pytest.raises(IndexError):
        mx.nd.contrib.RROIAlign(mx.nd.ones((2, 1, 4, 4)), rois, pooled_size=(1, 1),
                                spatial_scale=1.0)  # fmt: skip


def test_im2col_hybridized_matches_numpy():
    x = np.arange(2 * 3 * 5 * 4, dtype=np.float32).reshape(2, 3, 5, 4)
    f = mx.sym.im2col(mx.sym.var("data"), kernel=(2, 3), stride=(2, 1), pad=(1, 1))
    got = f.eval(data=mx.nd.array(x))[0].asnumpy()
    xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
    cols = [xp[:, :, i : i + 5 : 2, j : j + 4] for i in range(2) for j in range(3)]
    want = np.stack(cols, axis=2).reshape(2, 3 * 6, -1)
    np.testing.assert_array_equal(got, want)

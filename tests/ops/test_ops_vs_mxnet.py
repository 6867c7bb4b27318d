"""gluonjax ops against results recorded from real MXNet 1.9.1.

The fixtures in ``tests/fixtures/ops`` and ``tests/fixtures/ops_nd`` were written by
``tools/make_op_fixtures.py`` (``--set ops`` / ``--set ops_nd``) running under MXNet
1.9.1: for each case, the inputs, the attributes (some in MXNet's string forms), the
outputs, the head gradients, the input gradients and
(BatchNorm) the auxiliary states after the call. Each test replays the case with
``gluonjax`` (``mx.nd.<op>`` under ``mx.autograd.record``) and compares. These
tests only read the committed fixtures; only ``test_fixtures_regenerate`` needs
``.venv-mxnet``.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mxnet_ref import REPO_ROOT, needs_mxnet, run_mxnet  # noqa: E402

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "ops"
SETS = {"ops": FIXTURES, "ops_nd": REPO_ROOT / "tests" / "fixtures" / "ops_nd"}
TOOL_DIR = REPO_ROOT / "tools"
RTOL, ATOL = 1e-4, 1e-5

# Looser tolerances per case-id prefix, each with its reason: none is needed so far
# (float32 on both sides; the float16 Cast rounds identically).
LOOSE: dict[str, tuple[float, float]] = {}


def _selu_grad(attrs, inputs, head):
    lam, alpha = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
    x = inputs[0].astype(np.float64)
    return [head * np.where(x > 0, lam, lam * alpha * np.exp(x))]


def _bn_inference_grad(attrs, inputs, head):
    """d/d(data, gamma, beta) of gamma * (x - moving_mean) / sqrt(moving_var + eps) + beta."""
    x, gamma, _, mean, var = (a.astype(np.float64) for a in inputs)
    axis = int(attrs.get("axis", 1)) % x.ndim
    eps = float(attrs.get("eps", 1e-3))
    fix_gamma = str(attrs.get("fix_gamma", True)) in ("True", "true", "1")
    shape = [1] * x.ndim
    shape[axis] = -1
    others = tuple(a for a in range(x.ndim) if a != axis)
    g = np.ones_like(gamma) if fix_gamma else gamma
    inv = 1.0 / np.sqrt(var + eps)
    xhat = (x - mean.reshape(shape)) * inv.reshape(shape)
    dgamma = np.zeros_like(gamma) if fix_gamma else (head * xhat).sum(others)
    return [head * (g * inv).reshape(shape), dgamma, head.sum(others)]


# Cases whose MXNet 1.9.1 gradient is wrong: gluonjax's gradient is checked against the
# analytic derivative (float64 numpy) instead; the outputs are still compared with MXNet.
MXNET_GRAD_BUGS = {
    # MXNet's selu backward uses lambda * (y + alpha) for x < 0 (y = selu(x)); the
    # derivative is lambda * alpha * exp(x) = y + lambda * alpha.
    "leaky-selu": _selu_grad,
    # In inference mode (use_global_stats=False) MXNet's BatchNorm backward applies the
    # training formula (subtracting the mean of dy and of dy * xhat) with the moving
    # statistics, although its forward is affine in x: dx should be dy * gamma / sqrt(var+eps).
    "bn-infer": _bn_inference_grad,
    "bn-infer-fixgamma": _bn_inference_grad,
}


def _mp_lamb2_master(attrs, inputs):
    """weight32 - lr * r1/r2 * g: the updated master weight (see MXNET_AUX_BUGS)."""
    _, g, r1, r2, w32 = (a.astype(np.float64) for a in inputs)
    return (w32 - float(attrs["lr"]) * r1[0] / r2[0] * g).astype(np.float32)


# Cases whose MXNet 1.9.1 auxiliary state after the call is wrong: gluonjax's value is
# checked against the formula instead (input index -> function of attrs and inputs).
MXNET_AUX_BUGS = {
    # mp_lamb_update_phase2 declares weight32 a mutable input but never writes it, so
    # MXNet's multi-precision LAMB never moves its master weights.
    "mp-lamb2": {4: _mp_lamb2_master},
}


def _load_cases(folder=FIXTURES):
    with open(folder / "cases.json") as f:
        return json.load(f)


CASES = [dict(c, _set=name) for name, folder in SETS.items() for c in _load_cases(folder)]


@functools.cache
def _npz(folder, name):
    with np.load(Path(folder) / name, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def decode_attr(v):
    """Inverse of the tool's ``encode_attr``: ``{"__tuple__": [...]}`` -> tuple."""
    if isinstance(v, dict) and set(v) == {"__tuple__"}:
        return tuple(decode_attr(x) for x in v["__tuple__"])
    return v


def op_function(name):
    """``mx.nd.<name>`` (MXNet keeps ``_plus_scalar`` and friends in ``nd._internal``,
    ``_linalg_<x>`` in ``nd.linalg``)."""
    fn = getattr(mx.nd, name, None)
    if fn is None and name.startswith("_linalg_"):
        fn = getattr(mx.nd.linalg, name[len("_linalg_") :], None)
    if fn is None and hasattr(mx.nd, "_internal"):
        fn = getattr(mx.nd._internal, name, None)
    if fn is None:
        raise AttributeError(f"gluonjax.nd has no operator {name!r}")
    return fn


def _tol(case_id):
    for prefix, tol in LOOSE.items():
        if case_id.startswith(prefix):
            return tol
    return RTOL, ATOL


def _close(actual, expected, what, rtol, atol):
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    a64, e64 = actual.astype(np.float64), expected.astype(np.float64)
    err = np.max(np.abs(a64 - e64)) if a64.size else 0.0
    np.testing.assert_allclose(
        a64, e64, rtol=rtol, atol=atol, err_msg=f"{what}: max abs error {err:.3g}"
    )


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_op_matches_mxnet(case):
    cid = case["id"]
    data = _npz(str(SETS[case["_set"]]), case["file"])
    kinds = case["inputs"]
    attrs = {k: decode_attr(v) for k, v in case["attrs"].items()}
    arrays = [data[f"{cid}.in{i}"] for i in range(len(kinds))]
    xs = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
    for x, kind in zip(xs, kinds, strict=True):
        if kind == "diff":
            x.attach_grad()
    fn = op_function(case["op"])
    out_idx = attrs.pop("_out", None)  # update ops MXNet runs with out=[weights]
    if out_idx is not None:
        attrs["out"] = [xs[i] for i in out_idx]
    with mx.autograd.record(train_mode=case["train"]):
        res = fn(*xs, **attrs)
    outs = list(res) if isinstance(res, (list, tuple)) else [res]
    assert len(outs) == case["n_out"], f"{len(outs)} visible outputs, MXNet has {case['n_out']}"
    rtol, atol = _tol(cid)
    for i, out in enumerate(outs):
        _close(out.asnumpy(), data[f"{cid}.out{i}"], f"output {i}", rtol, atol)

    if case["grads"]:
        heads = case["heads"]
        head_grads = [
            mx.nd.array(data[f"{cid}.head{i}"], dtype=data[f"{cid}.head{i}"].dtype) for i in heads
        ]
        mx.autograd.backward([outs[i] for i in heads], head_grads)
        expected = [data.get(f"{cid}.grad{i}") for i in range(len(kinds))]
        if cid in MXNET_GRAD_BUGS:
            fixed = MXNET_GRAD_BUGS[cid](attrs, arrays, data[f"{cid}.head0"])
            expected = [np.asarray(g, dtype=arrays[i].dtype) for i, g in enumerate(fixed)]
        for i, (x, kind) in enumerate(zip(xs, kinds, strict=True)):
            if kind == "diff":
                _close(x.grad.asnumpy(), expected[i], f"gradient of input {i}", rtol, atol)
    for i, kind in enumerate(kinds):
        if kind == "aux":
            want = data[f"{cid}.aux{i}"]
            fix = MXNET_AUX_BUGS.get(cid, {}).get(i)
            if fix is not None:
                want = fix(attrs, arrays)
            _close(xs[i].asnumpy(), want, f"aux state (input {i})", rtol, atol)


def test_fixtures_are_small_and_complete():
    for folder in SETS.values():
        files = sorted(folder.glob("*.npz"))
        assert sum(f.stat().st_size for f in files) + (folder / "cases.json").stat().st_size < 1e6
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids))
    for c in CASES:
        keys = _npz(str(SETS[c["_set"]]), c["file"])
        assert all(f"{c['id']}.out{i}" in keys for i in range(c["n_out"]))


@pytest.mark.mxnet
@needs_mxnet
@pytest.mark.parametrize("fixture_set", list(SETS))
def test_fixtures_regenerate(tmp_path, fixture_set):
    """The tool runs under MXNet and produces the committed cases (data not compared)."""
    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(TOOL_DIR)!r})\n"
        "import make_op_fixtures\n"
        f"sys.exit(make_op_fixtures.main(['--set', {fixture_set!r}, '--out', {str(tmp_path)!r}]))\n"
    )
    run_mxnet(script, cwd=REPO_ROOT)
    fresh = _load_cases(tmp_path)
    cases = [c for c in CASES if c["_set"] == fixture_set]
    assert [c["id"] for c in fresh] == [c["id"] for c in cases]
    for name in {c["file"] for c in cases}:
        new, old = _npz(str(tmp_path), name), _npz(str(SETS[fixture_set]), name)
        assert sorted(new) == sorted(old), name
        assert all(new[k].shape == old[k].shape for k in old), name

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


def _selu_grad(attrs, inputs, head, **_):
    lam, alpha = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
    x = inputs[0].astype(np.float64)
    return [head * np.where(x > 0, lam, lam * alpha * np.exp(x))]


def _bn_inference_grad(attrs, inputs, head, **_):
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


def _hypot_grad(attrs, inputs, head, **_):
    """d hypot(a, b) = (a, b) / hypot(a, b), and 0 at the origin (the smallest
    subgradient; MXNet divides 0 by 0)."""
    a = inputs[0].astype(np.float64)
    b = inputs[1].astype(np.float64) if len(inputs) > 1 else float(attrs["scalar"])
    h = np.hypot(a, b)
    safe = np.where(h > 0, h, 1.0)
    grads = [head * np.where(h > 0, a / safe, 0.0)]
    if len(inputs) > 1:
        grads.append(head * np.where(h > 0, b / safe, 0.0))
    return grads


def _power_grad(attrs, inputs, head, **_):
    """d a**b: b * a**(b-1) and a**b * log(a); the latter is 0 at a = 0 (its limit for
    b > 0), where MXNet computes 0 * log(0) = NaN."""
    a, b = (x.astype(np.float64) for x in inputs)
    with np.errstate(divide="ignore", invalid="ignore"):
        rgrad = np.where(a == 0, 0.0, a**b * np.log(np.where(a == 0, 1.0, a)))
        lgrad = np.where(b == 0, 0.0, b * a ** (b - 1))
    return [head * lgrad, head * rgrad]


def _nms_format_grad(attrs, inputs, head, outputs):
    """box_nms with in_format != out_format: each kept output row is its input row with
    the 4 coordinates re-encoded, so the input row's gradient is J^T head (J the
    corner<->center conversion), not the head row itself. Rows are matched by their
    (distinct) scores."""
    data, out = inputs[0].astype(np.float64), outputs[0]
    si, cs = int(attrs.get("score_index", 1)), int(attrs.get("coord_start", 2))
    to_center = attrs.get("out_format", "corner") == "center"
    grad = np.zeros_like(data)
    for i in np.flatnonzero(out[:, si] != -1):
        src = int(np.flatnonzero(data[:, si] == out[i, si])[0])
        g = head[i].astype(np.float64).copy()
        a, b, c, d = g[cs : cs + 4]
        if to_center:  # (l, t, r, b) -> ((l + r) / 2, (t + b) / 2, r - l, b - t)
            g[cs : cs + 4] = [a / 2 - c, b / 2 - d, a / 2 + c, b / 2 + d]
        else:  # (x, y, w, h) -> (x - w / 2, y - h / 2, x + w / 2, y + h / 2)
            g[cs : cs + 4] = [a + c, b + d, (c - a) / 2, (d - b) / 2]
        grad[src] = g
    return [grad]


# Cases whose MXNet 1.9.1 gradient is wrong: gluonjax's gradient is checked against the
# analytic derivative (float64 numpy) instead; the outputs are still compared with MXNet.
MXNET_GRAD_BUGS = {
    # MXNet's selu backward uses lambda * (y + alpha) for x < 0 (y = selu(x)); the
    # derivative is lambda * alpha * exp(x) = y + lambda * alpha.
    "leaky-selu": _selu_grad,
    "kink-selu": _selu_grad,
    # hypot's gradient at the origin is 0/0 in MXNet; gluonjax gives 0 (like abs'(0)).
    "kink-hypot-origin": _hypot_grad,
    "kink-hypot_scalar-origin": _hypot_grad,
    # d(a**b)/db = a**b * log(a) is NaN at a = 0 in MXNet; its limit (b > 0) is 0.
    "kink-power-zero-base": _power_grad,
    # MXNet's box_nms backward copies each output row's gradient to its input row even
    # when the output re-encoded the coordinates (corner <-> center).
    "box_nms-center-to-corner": _nms_format_grad,
    "box_nms-corner-to-center": _nms_format_grad,
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
    ``_linalg_<x>`` in ``nd.linalg``); ``_contrib_X`` is called as users do, through
    ``mx.nd.contrib.X``."""
    if name.startswith("_contrib_"):
        return getattr(mx.nd.contrib, name[len("_contrib_") :])
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
            fixed = MXNET_GRAD_BUGS[cid](
                attrs,
                arrays,
                data[f"{cid}.head0"],
                outputs=[data[f"{cid}.out{i}"] for i in range(case["n_out"])],
            )
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

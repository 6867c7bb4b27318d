"""relu's gradient is the incoming gradient times MXNet's mask (1 where x > 0, 0 where
x <= 0, NaN where x is NaN), compared with real MXNet 1.9.1 in a subprocess, including
infinite and NaN incoming gradients (inf * 0 is NaN there, as in MXNet's kernel)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mxnet_ref import needs_mxnet, run_mxnet  # noqa: E402

NAN, INF = float("nan"), float("inf")
X = [-1.0, 0.0, 2.0, NAN, -0.0, INF, -INF, 3.0]
HEADS = {
    "inf": [INF] * 8,
    "neg-inf": [-INF] * 8,
    "nan": [NAN] * 8,
    "mixed": [1.0, INF, -2.0, 0.5, NAN, 0.25, 3.0, -INF],
}
CALLS = {
    "relu": "lambda F, x: F.relu(x)",
    "Activation": "lambda F, x: F.Activation(x, act_type='relu')",
}

_SCRIPT = """
import json, numpy as np, mxnet as mx
x_vals, heads, calls = json.loads({args!r})
out = {{}}
for name, src in calls.items():
    f = eval(src)
    for hname, h in heads.items():
        x = mx.nd.array(np.array(x_vals, np.float32)); x.attach_grad()
        with mx.autograd.record():
            y = f(mx.nd, x)
        y.backward(mx.nd.array(np.array(h, np.float32)))
        out[name + '/' + hname] = [y.asnumpy().tolist(), x.grad.asnumpy().tolist()]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def reference():
    args = json.dumps([X, HEADS, CALLS])
    text = run_mxnet(_SCRIPT.format(args=args))
    return json.loads(text.strip().splitlines()[-1])


def _run(call, head, hybrid):
    f = eval(CALLS[call])
    x = mx.nd.array(np.array(X, np.float32))
    x.attach_grad()
    block = None
    if hybrid:
        block = mx.gluon.nn.HybridLambda(lambda F, v: f(F, v))
        block.hybridize()
    with mx.autograd.record():
        y = block(x) if hybrid else f(mx.nd, x)
    y.backward(mx.nd.array(np.array(HEADS[head], np.float32)))
    return y.asnumpy(), x.grad.asnumpy()


@needs_mxnet
@pytest.mark.parametrize("hybrid", [False, True], ids=["eager", "hybrid"])
@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("head", sorted(HEADS))
def test_relu_gradient_matches_mxnet(reference, call, head, hybrid):
    want_y, want_g = (np.array(v, np.float32) for v in reference[f"{call}/{head}"])
    y, g = _run(call, head, hybrid)
    # MXNet's Activation maps a NaN input to 0 (gradient 0); gluonjax keeps the NaN
    # there, as MXNet's relu does (docs/ndarray.md): compared at the other inputs
    keep = ~np.isnan(np.array(X)) if call == "Activation" else np.ones(len(X), bool)
    np.testing.assert_array_equal(y[keep], want_y[keep])
    np.testing.assert_array_equal(g[keep], want_g[keep])
    if call == "Activation":  # at the NaN input: what MXNet's relu gives
        rel_y, rel_g = (np.array(v, np.float32) for v in reference[f"relu/{head}"])
        np.testing.assert_array_equal(y[~keep], rel_y[~keep])
        np.testing.assert_array_equal(g[~keep], rel_g[~keep])

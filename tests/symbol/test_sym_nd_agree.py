"""mx.sym and mx.nd agree: every MXNet op fixture case, run as a symbol graph.

Each case of ``tests/fixtures/ops`` (recorded from real MXNet 1.9.1) is built with
``mx.sym`` (variables for the inputs, the same attributes), run through the graph
evaluator (``Symbol.eval``), and compared with MXNet's outputs; the gradients of the
bound executor are checked against ``jax.vjp`` of the same registry op.
"""

from __future__ import annotations

import sys
from pathlib import Path

import jax
import numpy as np
import pytest

import gluonjax as mx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))
from test_ops_vs_mxnet import CASES, SETS, _npz, decode_attr  # noqa: E402

# random ops and training-mode stochastic cases have no deterministic symbol replay;
# boolean_mask's output shape depends on the mask's values, so a compiled symbol graph
# refuses it with HostOnlyError (its eager and hybridized-fallback values are checked in
# tests/ops/test_contrib_math_ops.py)
_SKIP_OPS = {"Dropout", "_contrib_boolean_mask"}


def _case_inputs(case):
    data = _npz(str(SETS[case["_set"]]), case["file"])
    arrays = [data[f"{case['id']}.in{i}"] for i in range(len(case["inputs"]))]
    return data, arrays


def _sym_fn(name):
    fn = getattr(mx.sym, name, None)
    if fn is None:
        pytest.fail(f"mx.sym has no operator {name!r} although mx.nd has")
    return fn


@pytest.mark.parametrize(
    "case", [c for c in CASES if c["op"] not in _SKIP_OPS], ids=lambda c: c["id"]
)
def test_symbol_eval_matches_mxnet(case):
    data, arrays = _case_inputs(case)
    attrs = {k: decode_attr(v) for k, v in case["attrs"].items() if k != "_out"}
    names = [f"in{i}" for i in range(len(arrays))]
    with mx.name.NameManager():
        sym = _sym_fn(case["op"])(*[mx.sym.var(n) for n in names], **attrs)
    feed = {n: mx.nd.array(a, dtype=a.dtype) for n, a in zip(names, arrays, strict=True)}
    # inference-mode evaluation; training-mode BatchNorm/aux cases compare outputs only
    with mx.autograd.train_mode() if case["train"] else mx.autograd.predict_mode():
        outs = sym.eval(**feed) if sym.list_auxiliary_states() == [] else None
    if outs is None:  # aux states: bind them explicitly
        args = {n: feed[n] for n in sym.list_arguments()}
        aux = {n: feed[n] for n in sym.list_auxiliary_states()}
        ex = sym.bind(mx.cpu(), args, aux_states=aux)
        outs = ex.forward(is_train=case["train"])
    for i, out in enumerate(outs[: case["n_out"]]):
        np.testing.assert_allclose(
            out.asnumpy().astype(np.float64),
            data[f"{case['id']}.out{i}"].astype(np.float64),
            rtol=1e-4,
            atol=1e-5,
            err_msg=f"{case['id']} output {i}",
        )


def test_executor_gradient_matches_jax_vjp():
    """Executor backward == jax.vjp of the composed registry kernels."""
    rng = np.random.RandomState(0)
    x, w, b = rng.randn(4, 5), rng.randn(3, 5), rng.randn(3)
    data = mx.sym.var("data")
    out = mx.sym.tanh(mx.sym.FullyConnected(data, num_hidden=3, name="fc"))
    args = {"data": x, "fc_weight": w, "fc_bias": b}
    ex = out.bind(
        mx.cpu(),
        {k: mx.nd.array(v) for k, v in args.items()},
        args_grad={k: mx.nd.zeros(np.shape(v)) for k, v in args.items()},
    )
    ex.forward(is_train=True)
    head = rng.randn(4, 3).astype(np.float32)
    ex.backward(mx.nd.array(head))

    def f(x, w, b):
        return jax.numpy.tanh(x @ w.T + b)

    _, vjp = jax.vjp(f, *(np.float32(v) for v in (x, w, b)))
    for name, g in zip(("data", "fc_weight", "fc_bias"), vjp(head), strict=True):
        np.testing.assert_allclose(ex.grad_dict[name].asnumpy(), g, rtol=1e-5, atol=1e-6)

"""Helpers of the ONNX tests: export, check with onnx.checker, run in ONNX Runtime.

The reference of every comparison is independent of the exporter: gluonjax's own op
(run eagerly, or the hybridized block) against ONNX Runtime's kernels, or real MXNet
1.9.1's outputs stored in tests/fixtures/zoo.
"""

from __future__ import annotations

import numpy as np
import pytest


def _real(name):
    """The installed module ``name``, or a skip (this folder, tests/onnx, is on sys.path
    under pytest and would import as an empty namespace package called onnx)."""
    mod = pytest.importorskip(name, reason=f"mx.onnx tests need {name} (gluonjax[onnx])")
    if getattr(mod, "__file__", None) is None:
        pytest.skip(
            f"mx.onnx tests need {name} (pip install 'gluonjax[onnx]')", allow_module_level=True
        )
    return mod


onnx = _real("onnx")
ort = _real("onnxruntime")

import gluonjax as mx  # noqa: E402
from gluonjax.gluon import HybridBlock  # noqa: E402

OPSETS = (12, 13, onnx.defs.onnx_opset_version())


def run_ort(path, inputs):
    """ONNX Runtime's outputs of the model at ``path`` for ``inputs``: numpy arrays in the
    model's input order, or a dict by input name (inputs the model lacks are left out)."""
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    if isinstance(inputs, dict):
        names = {i.name for i in sess.get_inputs()}
        feed = {k: np.asarray(v) for k, v in inputs.items() if k in names}
    else:
        feed = {i.name: np.asarray(x) for i, x in zip(sess.get_inputs(), inputs)}
    return sess.run(None, feed)


class Lambda(HybridBlock):
    """A block calling ``fn(F, *inputs)``."""

    def __init__(self, fn):
        super().__init__()
        self._fn = fn

    def hybrid_forward(self, F, *inputs):
        return self._fn(F, *inputs)


def export_op(tmp_path, fn, inputs, opset=None, name="op"):
    """Export ``fn`` as MXNet's tests do (HybridBlock.export, then export_model on the
    files); returns (the hybridized block's outputs, ORT's outputs)."""
    block = Lambda(fn)
    block.initialize()
    block.hybridize()
    out = block(*inputs)
    outs = out if isinstance(out, (list, tuple)) else [out]
    prefix = str(tmp_path / name)
    block.export(prefix, 0, stablehlo=False)
    path = mx.onnx.export_model(
        prefix + "-symbol.json",
        prefix + "-0000.params",
        [x.shape for x in inputs],
        [x.dtype for x in inputs],
        str(tmp_path / f"{name}.onnx"),
        opset_version=opset,
    )
    names = [f"data{i}" for i in range(len(inputs))] if len(inputs) > 1 else ["data"]
    feed = {n: x.asnumpy() for n, x in zip(names, inputs)}
    return [o.asnumpy() for o in outs], run_ort(path, feed)


def check_case(tmp_path, fn, inputs, opset, name):
    """``fn``'s export against ONNX Runtime: every output's dtype, shape and values equal
    gluonjax's eager op (the registry op, ONNX Runtime's kernels being independent)."""
    _, got = export_op(tmp_path, fn, inputs, opset=opset, name=name)
    want = fn(mx.nd, *inputs)
    want = want if isinstance(want, (list, tuple)) else [want]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        w = w.asnumpy()
        assert g.dtype == w.dtype, (name, i)
        assert g.shape == w.shape, (name, i, g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"{name} output {i}")

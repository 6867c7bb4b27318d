"""Partial shape and type inference against MXNet 1.9.1's answers.

The graphs are built by the case functions of tools/make_infer_fixtures.py, which
wrote MXNet's ``infer_shape_partial``/``infer_shape``/``infer_type_partial`` results
to tests/fixtures/symbol/infer_partial.json.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import make_infer_fixtures as cases  # noqa: E402

FIX = json.loads(
    (Path(__file__).resolve().parents[1] / "fixtures" / "symbol" / "infer_partial.json").read_text()
)

# Where gluonjax's partial answer says more than MXNet's (and agrees with it where MXNet
# knows a dimension):
# - pooling_flatten: MXNet's Pooling needs a fully known input; gluonjax keeps the
#   dimensions that do not depend on the unknown batch size;
# - conv_strided: MXNet re-reads a variable's partial ``__shape__`` attribute on every
#   pass and so forgets the batch size it learned from the convolution's output.
MORE_THAN_MXNET = {
    "pooling_flatten": [[[0, 3, 8, 8]], [[0, 48]], []],
    "conv_strided": [[[2, 3, 0, 0], [4, 3, 3, 3], [4], [2, 4, 5, 5]], [[2, 4, 5, 5]], []],
}


def _lists(result):
    return [[None if s is None else list(s) for s in lst] for lst in result]


def _check(sym, ref, shapes):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if ref["raises"]:
            with pytest.raises(mx.base.MXNetError):
                sym.infer_shape(**shapes)
            return None, None
        part = sym.infer_shape_partial(**shapes)
        full = sym.infer_shape(**shapes)
    return _lists(part), (None if full[0] is None else _lists(full))


@pytest.mark.parametrize("name", sorted(FIX["shape"]))
def test_partial_shapes_match_mxnet(name):
    ref = FIX["shape"][name]
    sym, shapes = cases.SHAPE_CASES[name](mx)
    assert {k: list(v) for k, v in shapes.items()} == ref["given"]
    part, full = _check(sym, ref, shapes)
    if ref["raises"]:
        return
    assert part == MORE_THAN_MXNET.get(name, ref["partial"])
    if name not in MORE_THAN_MXNET:
        assert full == ref["full"]


@pytest.mark.parametrize("name", sorted(FIX["np_shape"]))
def test_partial_shapes_under_np_shape_match_mxnet(name):
    ref = FIX["np_shape"][name]
    with mx.util.np_shape(True):
        sym, shapes = cases.SHAPE_CASES[name](mx)
        shapes = cases._np_mode_shapes(shapes)
        part, full = _check(sym, ref, shapes)
    assert part == ref["partial"]
    assert full == ref["full"]


@pytest.mark.parametrize("name", sorted(FIX["type"]))
def test_partial_types_match_mxnet(name):
    ref = FIX["type"][name]
    sym, types = cases.TYPE_CASES[name](mx)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        part = sym.infer_type_partial(**types)
        full = sym.infer_type(**types)
    assert [cases._type_names(x) for x in part] == ref["partial"]
    assert (None if full[0] is None else [cases._type_names(x) for x in full]) == ref["full"]


def test_incomplete_infer_shape_warns_and_returns_nones():
    sym, shapes = cases.two_branches(mx)
    with pytest.warns(UserWarning, match="prev"):
        assert sym.infer_shape(**shapes) == (None, None, None)


def test_conflicting_shapes_name_the_operator():
    sym, shapes = cases.mlp_conflict(mx)
    with pytest.raises(mx.base.MXNetError, match="fc1"):
        sym.infer_shape(**shapes)


def test_positional_and_keyword_shapes_cannot_mix():
    sym, _ = cases.dot(mx)
    with pytest.raises(ValueError, match="either by position or by keyword"):
        sym.infer_shape((2, 3), y=(3, 4))
    assert sym.infer_shape((2, 3), (3, 4))[1] == [(2, 4)]


def test_simple_bind_resolves_shapes_found_in_a_later_pass():
    """A weight's shape found through its FullyConnected is used by another branch."""
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=1, no_bias=True, name="fc")
    net = mx.sym.sum(mx.sym.abs(fc.get_internals()["fc_weight"])) + mx.sym.sum(fc)
    exe = net.simple_bind(mx.cpu(), data=(5, 13))
    assert exe.arg_dict["fc_weight"].shape == (1, 13)
    w = np.arange(13, dtype=np.float32).reshape(1, 13) - 6
    x = np.ones((5, 13), np.float32)
    out = exe.forward(data=x, fc_weight=w)[0].asnumpy()
    np.testing.assert_allclose(out, np.abs(w).sum() + (x @ w.T).sum(), rtol=1e-6)


def test_legacy_json_shape_attrs_become_unknown_under_np_shape(tmp_path):
    """A file written without np_shape marks unknown dims with 0; under np_shape they
    load as -1 (MXNet's conversion of pre-1.6 files)."""
    data = mx.sym.var("data")
    weight = mx.sym.var("weight", shape=(8, 0))
    text = mx.sym.FullyConnected(data, weight, num_hidden=8).tojson()
    assert "is_np_shape" not in json.loads(text)["attrs"]
    with mx.util.np_shape(True):
        assert "is_np_shape" in json.loads(mx.sym.var("x").tojson())["attrs"]
        arg, out, _ = mx.sym.load_json(text).infer_shape(data=(2, 5))
    assert arg == [(2, 5), (8, 5), (8,)] and out == [(2, 8)]

"""Partial shape/type inference results of the real MXNet 1.9.1 (run with .venv-mxnet).

Each case below builds a graph with the framework module it is given (MXNet here,
gluonjax in tests/symbol/test_infer_partial.py) and names the known input shapes
(or dtypes). This writes MXNet's answers to tests/fixtures/symbol/infer_partial.json:
``infer_shape_partial`` and ``infer_shape`` (None when incomplete) per case, under
legacy shapes (0 = unknown dimension) or ``np_shape`` (-1), or the fact that
MXNet raised; and ``infer_type_partial``/``infer_type`` for the type cases.

Usage: ``.venv-mxnet/bin/python tools/make_infer_fixtures.py``
"""

from __future__ import annotations

import json
import os
import warnings

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "symbol")


def elemwise(mx):
    a = mx.sym.var("a", shape=(0, 10))
    b = mx.sym.var("b", shape=(12, 0))
    return a + b, {}


def mlp(mx):
    a = mx.sym.var("a", shape=(0, 10))
    b = mx.sym.FullyConnected(a, num_hidden=21, name="fc")
    return b + mx.sym.var("c", shape=(5, 0)), {}


def slice_squeeze(mx):
    a = mx.sym.var("a", shape=(0, 10))
    b = mx.sym.SliceChannel(a, num_outputs=10, axis=1, squeeze_axis=True, name="sl")
    return b[1] + mx.sym.var("c", shape=(5,)), {}


def slice_keep(mx):
    a = mx.sym.var("a", shape=(0, 15, 0))
    b = mx.sym.SliceChannel(a, num_outputs=3, name="sl")
    return b[1] + mx.sym.var("c", shape=(3, 5, 2)), {}


def conv_back(mx):
    a = mx.sym.var("a", shape=(0, 10, 0, 0))
    b = mx.sym.Convolution(a, num_filter=21, kernel=(3, 3), pad=(1, 1), name="conv")
    return b + mx.sym.var("c", shape=(5, 21, 32, 32)), {}


def conv_strided(mx):
    a = mx.sym.var("a", shape=(0, 3, 0, 0))
    b = mx.sym.Convolution(a, num_filter=4, kernel=(3, 3), stride=(2, 2), name="conv")
    return b + mx.sym.var("c", shape=(2, 4, 5, 5)), {}


def concat(mx):
    a = mx.sym.var("a", shape=(0, 10))
    b = mx.sym.var("b", shape=(0, 5))
    c = mx.sym.Concat(a, b, num_args=2, dim=1, name="cat")
    return mx.sym.var("d", shape=(2, 0)) + c, {}


def dot(mx):
    return mx.sym.dot(mx.sym.var("x"), mx.sym.var("y")), {"x": (0, 3, 4), "y": (4, 5)}


def batch_dot(mx):
    return mx.sym.batch_dot(mx.sym.var("x"), mx.sym.var("y")), {"x": (0, 3, 4), "y": (0, 4, 5)}


def batch_dot_unknown(mx):
    return mx.sym.batch_dot(mx.sym.var("x"), mx.sym.var("y")), {"x": (0, 3, 4), "y": (0, 0, 5)}


def embedding(mx):
    y = mx.sym.Embedding(mx.sym.var("x"), mx.sym.var("w"), input_dim=100, output_dim=10)
    return y, {"x": (0, 5), "w": (100, 10)}


def transpose(mx):
    return mx.sym.transpose(mx.sym.var("x"), axes=(0, 3, 2, 1)), {"x": (0, 3, 8, 8)}


def pick(mx):
    y = mx.sym.pick(mx.sym.var("x"), mx.sym.var("index"), axis=1)
    return y, {"x": (0, 3, 3), "index": (0, 3)}


def where_partial(mx):
    w = mx.sym.where(mx.sym.var("cond"), mx.sym.var("x"), mx.sym.var("y"))
    return w, {"cond": (0, 2), "x": (0, 2), "y": (0, 2)}


def where_cond_unknown(mx):
    w = mx.sym.where(mx.sym.var("cond"), mx.sym.var("x"), mx.sym.var("y"))
    return w, {"cond": (0,), "x": (2, 2), "y": (2, 2)}


def unknown(mx):
    return mx.sym.sin(mx.sym.var("data")), {}


def two_branches(mx):
    x2h = mx.sym.FullyConnected(mx.sym.var("data"), name="x2h", num_hidden=8)
    h2h = mx.sym.FullyConnected(mx.sym.var("prev"), name="h2h", num_hidden=8)
    return mx.sym.Activation(mx.sym.elemwise_add(x2h, h2h), act_type="relu"), {"data": (3, 4)}


def conv_weight(mx):
    data = mx.sym.cast(mx.sym.var("data", shape=(1, 0, 0, 0)), dtype="float16")
    weight = mx.sym.cast(mx.sym.var("weight"), dtype="float16")
    conv = mx.sym.Convolution(
        data, weight, pad=(3, 3), num_filter=6, stride=(2, 2), no_bias=True, kernel=(7, 7)
    )
    return conv, {}


def batchnorm(mx):
    bn = mx.sym.BatchNorm(mx.sym.var("data"), name="bn")
    return mx.sym.Activation(bn, act_type="relu"), {"data": (0, 3, 0, 0)}


def softmax_label(mx):
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=4, name="fc")
    return mx.sym.SoftmaxOutput(fc, name="softmax"), {"data": (0, 6)}


def pooling_flatten(mx):
    p = mx.sym.Pooling(mx.sym.var("data"), kernel=(2, 2), stride=(2, 2), pool_type="max")
    return mx.sym.Flatten(p), {"data": (0, 3, 8, 8)}


def broadcast(mx):
    return mx.sym.broadcast_add(mx.sym.var("a"), mx.sym.var("b")), {"a": (0, 4), "b": (1, 4)}


def mlp_conflict(mx):
    fc1 = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=16, name="fc1")
    fc2 = mx.sym.FullyConnected(mx.sym.Activation(fc1, act_type="relu"), num_hidden=3)
    return fc2, {"data": (5, 7), "fc1_weight": (1, 7)}


def add_mismatch(mx):
    v = mx.sym.var("V")
    return mx.sym.transpose(v) + (mx.sym.var("x") + v), {"x": (2, 3)}


SHAPE_CASES = {
    f.__name__: f
    for f in (
        elemwise,
        mlp,
        slice_squeeze,
        slice_keep,
        conv_back,
        conv_strided,
        concat,
        dot,
        batch_dot,
        batch_dot_unknown,
        embedding,
        transpose,
        pick,
        where_partial,
        where_cond_unknown,
        unknown,
        two_branches,
        conv_weight,
        batchnorm,
        softmax_label,
        pooling_flatten,
        broadcast,
        mlp_conflict,
        add_mismatch,
    )
}
# cases also run under np_shape (unknown dims given as -1)
NP_CASES = (
    "dot",
    "batch_dot",
    "batch_dot_unknown",
    "embedding",
    "transpose",
    "pick",
    "where_partial",
    "where_cond_unknown",
    "unknown",
    "two_branches",
)


def cast_mlp(mx):
    f32 = mx.sym.Cast(mx.sym.var("data"), dtype="float32")
    fc = mx.sym.FullyConnected(f32, name="fc1", num_hidden=8)
    return mx.sym.SoftmaxOutput(fc, name="softmax"), {}


def cast_mlp_f16(mx):
    sym, _ = cast_mlp(mx)
    return sym, {"data": "float16"}


def bn_f16(mx):
    return mx.sym.BatchNorm(mx.sym.var("data"), name="bn"), {"data": "float16"}


def embed_types(mx):
    e = mx.sym.Embedding(mx.sym.var("x"), input_dim=5, output_dim=3, dtype="float64")
    return e, {"x": "int32"}


TYPE_CASES = {f.__name__: f for f in (cast_mlp, cast_mlp_f16, bn_f16, embed_types)}


def _np_mode_shapes(shapes):
    return {k: tuple(-1 if d == 0 else d for d in v) for k, v in shapes.items()}


def _shape_result(mx, sym, shapes):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            part = sym.infer_shape_partial(**shapes)
            full = sym.infer_shape(**shapes)
    except mx.base.MXNetError:
        return {"raises": True}

    def conv(lst):
        return None if lst is None else [None if s is None else list(s) for s in lst]

    return {
        "raises": False,
        "partial": [conv(x) for x in part],
        "full": None if full[0] is None else [conv(x) for x in full],
    }


def _type_names(lst):
    import numpy as np

    return [None if t is None else np.dtype(t).name for t in lst]


def main():
    import mxnet as mx

    out = {"shape": {}, "np_shape": {}, "type": {}}
    for name, build in SHAPE_CASES.items():
        sym, shapes = build(mx)
        out["shape"][name] = {"given": shapes, **_shape_result(mx, sym, shapes)}
    for name in NP_CASES:
        with mx.util.np_shape(True):
            sym, shapes = SHAPE_CASES[name](mx)
            shapes = _np_mode_shapes(shapes)
            out["np_shape"][name] = {"given": shapes, **_shape_result(mx, sym, shapes)}
    for name, build in TYPE_CASES.items():
        sym, types = build(mx)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            part = sym.infer_type_partial(**types)
            full = sym.infer_type(**types)
        out["type"][name] = {
            "given": types,
            "partial": [_type_names(x) for x in part],
            "full": None if full[0] is None else [_type_names(x) for x in full],
        }
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "infer_partial.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    counts = {k: len(v) for k, v in out.items()}
    print("wrote", counts)


if __name__ == "__main__":
    main()

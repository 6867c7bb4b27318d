"""Record MXNet 1.9.1's behaviour for ``tests/ops/test_operator_details.py``: the
errors, shape inference and op details of test_operator.py batch 4 (gather_nd bounds,
depth_to_space/space_to_depth/tile checks, zeros/ones without np_shape, take
mode='raise' in an executor, Pooling 'same', partial shapes through slice/transpose,
Dropout p=1, Cast gradients, softmax with length, index_array of a 0-d input).

Run with the reference interpreter::

    MXNET_MKLDNN_ENABLED=0 .venv-mxnet/bin/python tools/make_operator_details_fixtures.py

It writes ``tests/fixtures/operator_details.json``. An error is recorded as
``["IndexError" or "", exception class name]``; no error as ``null``.
"""

from __future__ import annotations

import json
from pathlib import Path

import mxnet as mx
import numpy as np

R = {}


def raises(fn):
    try:
        out = fn()
        if isinstance(out, mx.nd.NDArray):
            out.asnumpy()
        return None
    except Exception as e:  # noqa
        return ["IndexError" if isinstance(e, IndexError) else "", type(e).__name__]


data = mx.nd.array([[0, 1, 2], [3, 4, 5]])
R["gather_nd_raise"] = [
    raises(lambda i=i: mx.nd.gather_nd(data, mx.nd.array(i)))
    for i in ([[0, 1, 0], [0, 1, 3]], [[0, 1, 0], [0, 1, -5]])
]
R["gather_nd_neg"] = mx.nd.gather_nd(data, mx.nd.array([[0, 1, -1], [0, 1, -2]])).asnumpy().tolist()
R["d2s"] = [
    raises(lambda s=s, b=b: mx.nd.depth_to_space(mx.nd.ones(s), b))
    for s, b in [((1, 1, 2, 3), 2), ((1, 4, 0, 3), 2), ((1, 8, 2, 3), 0), ((1, 8, 2, 3), 2)]
]
R["s2d"] = [
    raises(lambda s=s, b=b: mx.nd.space_to_depth(mx.nd.ones(s), b))
    for s, b in [((1, 2, 1, 4), 2), ((1, 0, 2, 4), 2), ((0, 1, 2, 4), 2), ((1, 2, 2, 4), 2)]
]
R["tile"] = [
    raises(lambda r=r: mx.nd.tile(mx.nd.ones((4, 4)), r)) for r in [(1, 2, -3), (1, 0, 3), (2, 1)]
]
with mx.np_shape():
    R["tile_np_shape"] = list(mx.nd.tile(mx.nd.ones((4, 4)), (1, 0, 3)).shape)
R["create"] = [
    raises(lambda f=f, s=s: f(s))
    for f in (mx.nd.zeros, mx.nd.ones)
    for s in [(), (0, 1, 3, 0), (2, 3)]
]
with mx.np_shape():
    R["create_np_shape"] = [list(mx.nd.ones(()).shape), list(mx.nd.zeros((0, 1, 0, 4)).shape)]
R["empty"] = [list(mx.nd.empty(s).shape) for s in [(), (0, 3)]]

# take(mode='raise') in a bound executor: raises when the output is read
exe = mx.sym.take(mx.sym.var("a"), mx.sym.BlockGrad(mx.sym.var("i")), mode="raise").simple_bind(
    mx.cpu(), a=(3, 4), i=(2,)
)
exe.arg_dict["a"][:] = 1
exe.arg_dict["i"][:] = mx.nd.array([0, 5])
exe.forward(is_train=True)
R["take_exec"] = raises(lambda: exe.outputs[0])
exe.arg_dict["i"][:] = mx.nd.array([2, 1])
exe.forward(is_train=True)
R["take_exec_ok"] = exe.outputs[0].asnumpy().tolist()

x = np.arange(10, dtype=np.float32)[::-1].reshape(1, 1, 10)
R["pool_same"] = {
    f"{pt}-{k}-{s}": mx.nd.Pooling(
        mx.nd.array(x),
        kernel=k,
        stride=s,
        pad=(0, 0, 0),
        pool_type=pt,
        pooling_convention="same",
    )
    .asnumpy()
    .tolist()
    for pt in ("max", "avg", "sum")
    for k, s in [(3, 2), (4, 3), (2, 2)]
}
R["pool_same_raise"] = [
    raises(
        lambda: mx.nd.Pooling(
            mx.nd.ones((1, 1, 5, 6)),
            kernel=(2, 2),
            stride=(2, 2),
            pad=(0, 0, 0),
            pooling_convention="same",
        )
    ),
    raises(
        lambda: mx.nd.Pooling(
            mx.nd.ones((1, 1, 10)), kernel=2, stride=2, pad=(2, 2, 2), pooling_convention="same"
        )
    ),
]

v = mx.sym.var("data", shape=(0, 20))
R["slice_partial"] = [
    list(mx.sym.slice(v, begin=b, end=e, step=s).infer_shape_partial()[1][0])
    for b, e, s in [
        ((None, None), (None, 10), ()),
        ((None, 3), (5, 10), ()),
        ((2, 3), (None, 10), (3, 3)),
        ((-3, 3), (None, 10), (None, 2)),
    ]
]
v = mx.sym.var("data", shape=(10, 0))
R["slice_axis_partial"] = [
    list(mx.sym.slice_axis(v, axis=a, begin=0, end=5).infer_shape_partial()[1][0]) for a in (0, 1)
]
R["transpose_back"] = []
for s1, s2 in [((2, 3), (-1, -1)), ((2, -1), (3, -1))]:
    b = mx.sym.ones(shape=s1) + mx.sym.transpose(mx.sym.ones(shape=s2))
    R["transpose_back"].append(list(b.bind(mx.cpu(), args={}).forward()[0].shape))
t = mx.sym.transpose(mx.sym.var("x", shape=(0, 0, 0)), axes=(1, 2, 0))
r = mx.sym.broadcast_add(t, mx.sym.var("y", shape=(2, 3, 4)))
R["transpose_partial"] = [list(s) for s in r.infer_shape_partial()[0]]
t = mx.sym.transpose(mx.sym.var("x", shape=(0, 0, 0)), axes=(1, 2, 0))
r = t + mx.sym.var("y", shape=(2, 3, 4))
R["transpose_partial_elemwise"] = [list(s) for s in r.infer_shape_partial()[0]]

xd = mx.nd.ones((2, 3))
xd.attach_grad()
with mx.autograd.record():
    yd = mx.nd.Dropout(xd, p=1.0)
yd.backward()
R["dropout_p1"] = [np.isnan(yd.asnumpy()).all().item(), np.isnan(xd.grad.asnumpy()).all().item()]

X = np.array([[-3.7, 2.2, 9.9], [-0.5, 0.5, -8.1]])
R["cast"] = {}
for src in ("int32", "float32", "float16"):
    for dst in ("float32", "int32", "float16"):
        e = mx.sym.Cast(mx.sym.var("x", dtype=src), dtype=dst).simple_bind(mx.cpu(), x=(2, 3))
        e.arg_arrays[0][:] = X
        e.forward(is_train=True)
        e.backward(mx.nd.array(X, dtype=dst))
        R["cast"][f"{src}-{dst}"] = [
            e.outputs[0].asnumpy().tolist(),
            e.grad_arrays[0].asnumpy().tolist(),
            str(e.grad_arrays[0].dtype),
        ]

d = np.random.RandomState(0).rand(2, 4, 3)
ln = np.array([[1, 4, 2], [3, 2, 4]], dtype=np.int32)
e = mx.sym.softmax(mx.sym.var("d"), length=mx.sym.var("l"), use_length=True, axis=1).bind(
    mx.cpu(),
    {"d": mx.nd.array(d), "l": mx.nd.array(ln, dtype="int32")},
    args_grad={"d": mx.nd.ones((2, 4, 3)) * 7, "l": mx.nd.ones((2, 3), dtype="int32") * 7},
)
e.forward(is_train=True)
e.backward(mx.nd.array(np.arange(24).reshape(2, 4, 3)))
R["softmax_len"] = [
    e.outputs[0].asnumpy().tolist(),
    e.grad_dict["d"].asnumpy().tolist(),
    e.grad_dict["l"].asnumpy().tolist(),
]

with mx.np_shape():
    R["index_array_0d"] = list(mx.nd.contrib.index_array(mx.nd.ones(())).shape)
# integer mod has no gradient (eager and bound); casts pass gradients on
R["int_mod_eager"] = []


def _int_mod(name, a, b):
    if name == "mod":
        return a % b
    if name == "broadcast_mod":
        return mx.nd.broadcast_mod(a, b)
    return a % 3 if name == "mod_scalar" else 7 % a


for name in ("mod", "broadcast_mod", "mod_scalar", "rmod_scalar"):
    a = mx.nd.array([5, 7, 9], dtype="int32")
    b = mx.nd.array([2, 3, 4], dtype="int32")
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        y = _int_mod(name, a, b)
    y.backward(mx.nd.ones(3, dtype="int32"))
    R["int_mod_eager"].append([a.grad.asnumpy().tolist(), b.grad.asnumpy().tolist()])
R["cast_chain_exec"] = {}
va, vb = mx.sym.var("a"), mx.sym.var("b")
for name, sym in [
    ("mod", mx.sym.cast(va, dtype="int32") % mx.sym.cast(vb, dtype="int32")),
    ("mul", mx.sym.cast(va, dtype="int32") * mx.sym.cast(vb, dtype="int32")),
]:
    e = sym.simple_bind(mx.cpu(), a=(3,), b=(3,))
    e.arg_dict["a"][:] = mx.nd.array([5.5, 7.2, -9.7])
    e.arg_dict["b"][:] = mx.nd.array([2.1, 3.9, 4.2])
    e.forward(is_train=True)
    e.backward(mx.nd.array([1, 2, 3], dtype="int32"))
    R["cast_chain_exec"][name] = [
        e.outputs[0].asnumpy().tolist(),
        e.grad_dict["a"].asnumpy().tolist(),
        e.grad_dict["b"].asnumpy().tolist(),
    ]

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "operator_details.json"
OUT.write_text(json.dumps(R, indent=1, sort_keys=True) + "\n")
print(f"wrote {OUT}")

"""Record real MXNet 1.9.1 results of histogram, moments, ravel_multi_index /
unravel_index, im2col / col2im, contrib.RROIAlign and split_v2.

Run with the reference interpreter (``make mxnet-ref`` installs it)::

    MXNET_MKLDNN_ENABLED=0 .venv-mxnet/bin/python tools/make_ops3_fixtures.py

Writes ``tests/fixtures/ops3/cases.json`` and ``ops3.npz``, replayed by
``tests/ops/test_ops3_vs_mxnet.py``. Three kinds of records:

* ``call``: ``mx.<path>(*inputs, **kwargs)`` under ``autograd.record``; with ``grads``
  every floating-point input is differentiated against a random head gradient on each
  floating-point output. Inputs, outputs, heads and gradients go to the ``.npz``.
* ``sym``: a symbol built by ``mx.sym.<path>``: its arguments, outputs, the op node's
  attributes (as written in JSON) and the inferred output shapes.
* ``error``: a call MXNet rejects, with the Python class of its exception.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "ops3"
RNG = np.random.RandomState(20240711)
CALLS, SYMS, ERRORS = [], [], []


class ND:
    """An input that is not differentiated (index arrays, edges, regions)."""

    def __init__(self, a):
        self.a = np.asarray(a)


def call(cid, path, inputs, grads=True, **kwargs):
    CALLS.append((cid, path, inputs, kwargs, grads))


def sym(cid, path, args, shapes, **kwargs):
    SYMS.append((cid, path, args, shapes, kwargs))


def error(cid, path, inputs, **kwargs):
    ERRORS.append((cid, path, inputs, kwargs))


def r(*s):
    return RNG.randn(*s).astype(np.float32)


def f32(v):
    return np.asarray(v, np.float32)


# fmt: off
# ----------------------------------------------------------------------------- histogram
call("hist-uniform", "nd.histogram", [ND(r(3, 4, 5))], bins=7, range=(-2.5, 2.5))
call("hist-uniform-on-edges", "nd.histogram",
     [ND(f32([0, 0.25, 0.5, 0.75, 1.0, -0.1, 1.1, 0.3, 0.999]))], bins=4, range=(0.0, 1.0))
call("hist-equal-range", "nd.histogram", [ND(f32([1.0, 0.6, 1.4, 0.4, 1.6, 1.2]))],
     bins=4, range=(1.0, 1.0))
# 0.1 and 0.7 are not float32 numbers: the range is compared in float64
call("hist-inexact-range", "nd._internal._histogram",
     [ND(f32([0.1, np.nextafter(f32(0.1), f32(0)), 0.7, np.nextafter(f32(0.7), f32(1)),
              0.3, 0.5, 0.45]))], bin_cnt=3, range=(0.1, 0.7))
call("hist-edges", "nd.histogram",
     [ND(f32([[-1, 0.5, 2], [4.5, 50, 51], [-2, 0.4, 3.3]])),
      ND(f32([-1.0, 0.5, 2.0, 4.5, 50.0]))])
call("hist-edges-internal", "nd._internal._histogram",
     [ND(r(20)), ND(f32([-1.5, -0.2, 0.0, 0.1, 2.0]))])
# ----------------------------------------------------------------------------- moments
call("moments-02", "nd.moments", [r(3, 4, 5)], axes=(0, 2))
call("moments-1-keep", "nd.moments", [r(3, 4, 5)], axes=(1,), keepdims=True)
call("moments-all", "nd.moments", [r(2, 3)], axes=(0, 1))
call("moments-all-keep", "nd.moments", [r(2, 3)], axes=(0, 1), keepdims=True)
call("moments-neg", "nd.moments", [r(2, 3, 4)], axes=(-1,))
# ----------------------------------------------------------------------------- ravel
call("ravel-3d", "nd.ravel_multi_index",
     [f32(np.stack([RNG.randint(0, n, 6) for n in (4, 5, 6)]))], shape=(4, 5, 6))
call("ravel-lead-unknown", "nd.ravel_multi_index",
     [f32([[7, 0, 3.9], [2, 1, 0]])], shape=(-1, 3))
call("ravel-int32", "nd.ravel_multi_index",
     [np.array([[1, 2, 0], [3, 0, 4]], np.int32)], shape=(3, 5))
call("unravel-2d", "nd.unravel_index", [f32([22, 41, 37, 0, 11.9])], shape=(7, 6))
call("unravel-lead-unknown", "nd.unravel_index", [f32([22, 41, 37, 95])], shape=(-1, 6))
call("unravel-3d-int32", "nd.unravel_index", [np.array([0, 7, 59, 33], np.int32)],
     shape=(3, 4, 5))
# ----------------------------------------------------------------------------- im2col
call("im2col-3x3", "nd.im2col", [r(2, 3, 6, 5)], kernel=(3, 3))
call("im2col-all", "nd.im2col", [r(2, 2, 9, 8)], kernel=(3, 2), stride=(2, 1),
     dilate=(1, 2), pad=(1, 2))
call("col2im-3x3", "nd.col2im", [r(2, 27, 12)], output_size=(6, 5), kernel=(3, 3))
call("col2im-all", "nd.col2im", [r(2, 12, 5 * 10)], output_size=(9, 8), kernel=(3, 2),
     stride=(2, 1), dilate=(1, 2), pad=(1, 2))
# ----------------------------------------------------------------------------- RROIAlign
# MXNet 1.9.1 has no backward for RROIAlign: values only
rois = f32([[0, 20.0, 24.0, 30.0, 12.0, 30.0], [1, 40.0, 8.0, 16.0, 40.0, 135.0],
            [1, 2.0, 60.0, 50.0, 20.0, -60.0], [0, 30.0, 30.0, 0.5, 0.2, 0.0],
            [0, 80.0, 90.0, 60.0, 60.0, 200.0]])
rdata = r(2, 3, 16, 16)
call("rroi-adaptive", "nd.contrib.RROIAlign", [ND(rdata), ND(rois)], grads=False,
     pooled_size=(3, 4), spatial_scale=0.25)
call("rroi-ratio2", "nd.contrib.RROIAlign", [ND(rdata), ND(rois)], grads=False,
     pooled_size=(2, 2), spatial_scale=0.25, sampling_ratio=2)
call("rroi-scale1", "nd.contrib.RROIAlign", [ND(r(1, 2, 7, 9)), ND(rois[:4] / 4)], grads=False,
     pooled_size=(2, 3), spatial_scale=1.0)
# ----------------------------------------------------------------------------- split_v2
call("split-v2-indices", "nd.split_v2", [r(2, 3, 7)], indices_or_sections=(1, 3), axis=-1)
call("split-v2-sections", "nd.split_v2", [r(6, 2)], indices_or_sections=3)
call("split-v2-squeeze", "nd.split_v2", [r(2, 3)], indices_or_sections=3, axis=1,
     squeeze_axis=True)
call("split-v2-uneven", "nd._internal._split_v2", [r(2, 7)], indices=(0,), sections=3,
     axis=1)

# ----------------------------------------------------------------------------- symbols
sym("sym-hist-cnt", "histogram", ["data"], {"data": (3, 4)}, bins=5, range=(0, 5))
sym("sym-hist-edges", "histogram", ["data", "bins"], {"data": (3, 4), "bins": (6,)})
sym("sym-moments", "moments", ["data"], {"data": (2, 3, 4)}, axes=(0, 2))
sym("sym-moments-keep", "moments", ["data"], {"data": (2, 3, 4)}, axes=(1,), keepdims=True)
sym("sym-im2col", "im2col", ["data"], {"data": (2, 3, 7, 6)}, kernel=(3, 3), stride=(2, 2),
    pad=(1, 1))
sym("sym-col2im", "col2im", ["data"], {"data": (2, 27, 12)}, output_size=(7, 6),
    kernel=(3, 3), stride=(2, 2), pad=(1, 1))
sym("sym-ravel", "ravel_multi_index", ["data"], {"data": (2, 5)}, shape=(-1, 3))
sym("sym-unravel", "unravel_index", ["data"], {"data": (5,)}, shape=(2, 3))
sym("sym-rroi", "contrib.RROIAlign", ["data", "rois"], {"data": (1, 2, 8, 8), "rois": (3, 6)},
    pooled_size=(2, 2), spatial_scale=0.5)
sym("sym-split-v2", "split_v2", ["data"], {"data": (2, 5)}, indices_or_sections=(2, 3),
    axis=1)
sym("sym-split-v2-sections", "split_v2", ["data"], {"data": (7, 2)}, indices_or_sections=3)

# ----------------------------------------------------------------------------- errors
error("err-moments-no-axes", "nd.moments", [r(2, 3)])
error("err-hist-list-bins", "nd.histogram", [r(5)], bins=[0.0, 1.0])
error("err-sym-hist-no-range", "sym.histogram", ["data"], bins=4)
error("err-ravel-rows", "nd.ravel_multi_index", [f32([[1, 2], [0, 1]])], shape=(3, 4, 5))
error("err-ravel-no-shape", "nd.ravel_multi_index", [f32([[1, 2], [0, 1]])])
error("err-im2col-big-kernel", "nd.im2col", [r(1, 1, 3, 3)], kernel=(4, 4))
error("err-col2im-cols", "nd.col2im", [r(1, 9, 5)], output_size=(4, 4), kernel=(3, 3))
error("err-rroi-5-cols", "nd.contrib.RROIAlign", [r(1, 1, 4, 4), f32([[0, 1, 1, 2, 2]])],
      pooled_size=(2, 2), spatial_scale=1.0)
error("err-split-v2-uneven", "nd.split_v2", [r(5, 2)], indices_or_sections=2)
error("err-split-v2-past-end", "nd.split_v2", [r(5, 2)], indices_or_sections=(2, 9))
error("err-split-v2-decreasing", "nd.split_v2", [r(5, 2)], indices_or_sections=(3, 1))
error("err-split-v2-list", "nd.split_v2", [r(5, 2)], indices_or_sections=[2])
# fmt: on


def encode(v):
    """JSON form of an attribute value (tuples kept apart from lists)."""
    if isinstance(v, tuple):
        return {"__tuple__": [encode(x) for x in v]}
    return v


def _resolve(mx, path):
    obj = mx
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def run_call(mx, cid, path, inputs, kwargs, grads, rng):
    arrays = [x.a if isinstance(x, ND) else np.asarray(x) for x in inputs]
    diff = [
        grads and not isinstance(x, ND) and np.issubdtype(a.dtype, np.floating)
        for x, a in zip(inputs, arrays)
    ]
    xs = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
    for x, d in zip(xs, diff):
        if d:
            x.attach_grad()
    with mx.autograd.record():
        res = _resolve(mx, path)(*xs, **kwargs)
    outs = list(res) if isinstance(res, (list, tuple)) else [res]
    data = {f"in{i}": a for i, a in enumerate(arrays)}
    data.update({f"out{i}": o.asnumpy() for i, o in enumerate(outs)})
    heads = [i for i, o in enumerate(outs) if np.issubdtype(o.dtype, np.floating)]
    if any(diff) and heads:
        hg = [rng.randn(*outs[i].shape).astype(outs[i].dtype) for i in heads]
        mx.autograd.backward([outs[i] for i in heads], [mx.nd.array(h, dtype=h.dtype) for h in hg])
        data.update({f"head{i}": h for i, h in zip(heads, hg)})
        for i, (x, d) in enumerate(zip(xs, diff)):
            if d:
                data[f"grad{i}"] = x.grad.asnumpy()
    else:
        heads = []
    rec = {"id": cid, "kind": "call", "path": path, "kwargs": {k: encode(v) for k, v in
           kwargs.items()}, "diff": diff, "n_in": len(arrays), "n_out": len(outs),
           "heads": heads}  # fmt: skip
    return rec, {f"{cid}.{k}": v for k, v in data.items()}


def run_sym(mx, cid, path, args, shapes, kwargs):
    vs = [mx.sym.var(a) for a in args]
    s = _resolve(mx.sym, path)(*vs, **kwargs)
    nodes = [n for n in json.loads(s.tojson())["nodes"] if n["op"] != "null"]
    _, out_shapes, _ = s.infer_shape(**shapes)
    return {
        "id": cid, "kind": "sym", "path": path, "args": args,
        "shapes": {k: list(v) for k, v in shapes.items()},
        "kwargs": {k: encode(v) for k, v in kwargs.items()},
        "op": nodes[0]["op"], "attrs": nodes[0].get("attrs", {}),
        "list_arguments": s.list_arguments(), "list_outputs": s.list_outputs(),
        "out_shapes": [list(o) for o in out_shapes],
    }  # fmt: skip


def run_error(mx, cid, path, inputs, kwargs):
    try:
        if path.startswith("sym."):
            xs = [mx.sym.var(a) for a in inputs]
        else:
            xs = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
        out = _resolve(mx, path)(*xs, **kwargs)
        for o in out if isinstance(out, (list, tuple)) else [out]:
            if hasattr(o, "asnumpy"):
                o.asnumpy()
    except Exception as err:  # the class MXNet raises is what we record
        builtin = [c.__name__ for c in type(err).__mro__ if c.__module__ == "builtins"]
        return {
            "id": cid, "kind": "error", "path": path,
            "inputs": [np.asarray(a).tolist() if not isinstance(a, str) else a for a in inputs],
            "dtypes": [str(np.asarray(a).dtype) if not isinstance(a, str) else "" for a in inputs],
            "kwargs": {k: encode(v) for k, v in kwargs.items()},
            "error": type(err).__name__, "builtins": builtin,
        }  # fmt: skip
    raise SystemExit(f"{cid}: MXNet accepted the call; it is not an error case")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=OUT, help="output folder")
    args = ap.parse_args(argv)
    os.environ.setdefault("MXNET_ENGINE_TYPE", "NaiveEngine")
    os.environ.setdefault("MXNET_MKLDNN_ENABLED", "0")
    import mxnet as mx

    mx.random.seed(0)
    rng = np.random.RandomState(7)
    records, arrays = [], {}
    for cid, path, inputs, kwargs, grads in CALLS:
        rec, data = run_call(mx, cid, path, inputs, kwargs, grads, rng)
        records.append(rec)
        arrays.update(data)
    records += [run_sym(mx, *s) for s in SYMS]
    records += [run_error(mx, *e) for e in ERRORS]
    args.out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out / "ops3.npz", **arrays)
    with open(args.out / "cases.json", "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n")
    print(f"wrote {len(records)} records to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Record MXNet 1.9.1's BatchNorm (training mode), LayerNorm, InstanceNorm and GroupNorm with
their gradients, for ``tests/ops/test_batchnorm_fast.py`` and ``tests/ops/test_norm_vs_mxnet.py``.

Run with the reference interpreter (``make mxnet-ref`` installs it)::

    .venv-mxnet/bin/python tools/make_norm_fixtures.py [--out DIR]

Every case calls ``mx.nd.<op>`` under ``mx.autograd.record(train_mode=True)`` with data,
gamma and beta attached and back-propagates a random head gradient from EVERY visible output
(with ``output_mean_var``, the mean and std outputs too: MXNet drops those) and stores the
inputs, outputs, heads, input gradients and (BatchNorm) the moving statistics after the
call. BatchNorm cases cover ``fix_gamma`` on and off, a middle and a last channel axis,
float32 and float16 data (with float32 parameters, as MXNet requires) and data far from
zero (``1e4 + randn``); the other ops' float16 cases have float16 parameters (MXNet's CPU
InstanceNorm has no float16 kernel). MXNet's oneDNN kernels are switched off
(``MXNET_MKLDNN_ENABLED=0``): the reference is MXNet's own CPU kernel.

Layout of DIR (default ``tests/fixtures/norm``): ``cases.json`` (per case: ``id``, ``op``,
``dtype``, ``attrs``, ``n_out``: the number of visible outputs, all with a head gradient)
and ``norm.npz``: ``<id>.x``, ``<id>.gamma``, ``<id>.beta`` (and for BatchNorm
``<id>.moving_mean``, ``<id>.moving_var``: the inputs), ``<id>.out<i>``, ``<id>.head<i>``,
``<id>.grad_x``, ``<id>.grad_gamma``, ``<id>.grad_beta`` (and ``<id>.new_moving_mean``,
``<id>.new_moving_var``).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ["MXNET_MKLDNN_ENABLED"] = "0"  # before mxnet is imported

import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "norm"

BN = "BatchNorm"
F32, F16 = "float32", "float16"
# (id, op, shape, data dtype, offset of the data, attributes)
CASES = [
    ("bn-nchw", BN, (6, 4, 5, 3), F32, 0.0, {"fix_gamma": False}),
    ("bn-nchw-fixgamma", BN, (6, 4, 5, 3), F32, 0.0, {"fix_gamma": True}),
    ("bn-nhwc", BN, (5, 3, 4, 6), F32, 0.0, {"fix_gamma": False, "axis": -1, "momentum": 0.8}),
    ("bn-nhwc-fixgamma", BN, (5, 3, 4, 6), F32, 0.0, {"fix_gamma": True, "axis": -1}),
    ("bn-axis2", BN, (3, 4, 5, 2), F32, 0.5, {"fix_gamma": False, "axis": 2, "eps": 1e-5}),
    ("bn-dense", BN, (16, 5), F32, -2.0, {"fix_gamma": False, "momentum": 0.5}),
    ("bn-offset-nchw", BN, (8, 4, 6, 6), F32, 1e4, {"fix_gamma": False}),
    ("bn-offset-nhwc-fixgamma", BN, (8, 4, 4, 6), F32, 1e4, {"fix_gamma": True, "axis": -1}),
    ("bn-f16-nchw", BN, (6, 4, 5, 3), F16, 0.0, {"fix_gamma": False}),
    ("bn-f16-nchw-fixgamma", BN, (6, 4, 5, 3), F16, 0.0, {"fix_gamma": True}),
    ("bn-f16-nhwc", BN, (5, 3, 4, 6), F16, 1.0, {"fix_gamma": False, "axis": -1}),
    ("bn-f16-offset", BN, (8, 3, 6, 6), F16, 100.0, {"fix_gamma": False}),
    ("bn-mean-var-heads", BN, (6, 4, 5), F32, 3.0, {"fix_gamma": False, "output_mean_var": True}),
    ("ln-last", "LayerNorm", (3, 4, 6), F32, 1.0, {"output_mean_var": True}),
    ("ln-axis1", "LayerNorm", (3, 5, 4), F32, 0.0, {"axis": 1, "eps": 1e-3}),
    ("ln-f16", "LayerNorm", (4, 8), F16, 0.5, {"output_mean_var": True}),
    ("in-3d", "InstanceNorm", (2, 3, 7), F32, 2.0, {}),
    ("in-4d", "InstanceNorm", (2, 3, 4, 5), F32, 0.0, {"eps": 1e-5}),
    ("gn-2g", "GroupNorm", (2, 6, 4, 3), F32, 0.0, {"num_groups": 2, "output_mean_var": True}),
    ("gn-1g", "GroupNorm", (3, 4, 5), F32, 1.0, {"num_groups": 1}),
    ("gn-f16", "GroupNorm", (2, 4, 6), F16, 0.0, {"num_groups": 4, "output_mean_var": True}),
]


def _param_size(op, shape, attrs):
    if op in (BN, "LayerNorm"):
        return shape[attrs.get("axis", 1 if op == BN else -1) % len(shape)]
    return attrs["num_groups"] if op == "GroupNorm" else shape[1]


def run_case(rng, cid, op, shape, dtype, offset, attrs, io):
    c = _param_size(op, shape, attrs)
    pdtype = np.float32 if op == BN else dtype
    x = (offset + rng.standard_normal(shape)).astype(dtype)
    params = {
        "gamma": rng.uniform(0.5, 1.5, c).astype(pdtype),
        "beta": rng.standard_normal(c).astype(pdtype),
    }
    if op == BN:
        params["moving_mean"] = rng.standard_normal(c).astype(np.float32)
        params["moving_var"] = rng.uniform(0.5, 1.5, c).astype(np.float32)
    arrays = {k: mx.nd.array(v, dtype=v.dtype) for k, v in params.items()}
    xs = mx.nd.array(x, dtype=dtype)
    diff = (xs, arrays["gamma"], arrays["beta"])
    for v in diff:
        v.attach_grad()
    with mx.autograd.record(train_mode=True):
        res = getattr(mx.nd, op)(xs, *arrays.values(), **attrs)
    outs = list(res) if isinstance(res, (list, tuple)) else [res]
    hg = [rng.standard_normal(o.shape).astype(o.dtype) for o in outs]
    mx.autograd.backward(outs, [mx.nd.array(h, dtype=h.dtype) for h in hg])
    io[f"{cid}.x"] = x
    io.update({f"{cid}.{k}": v for k, v in params.items()})
    for i, (o, h) in enumerate(zip(outs, hg, strict=True)):
        io[f"{cid}.out{i}"] = o.asnumpy()
        io[f"{cid}.head{i}"] = h
    for name, v in zip(("x", "gamma", "beta"), diff, strict=True):
        io[f"{cid}.grad_{name}"] = v.grad.asnumpy()
    if op == BN:
        io[f"{cid}.new_moving_mean"] = arrays["moving_mean"].asnumpy()
        io[f"{cid}.new_moving_var"] = arrays["moving_var"].asnumpy()
    return {"id": cid, "op": op, "dtype": dtype, "attrs": attrs, "n_out": len(outs)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.RandomState(5)
    io, cases = {}, []
    for case in CASES:
        cases.append(run_case(rng, *case, io))
    (args.out / "cases.json").write_text(json.dumps(cases, indent=1) + "\n")
    np.savez_compressed(args.out / "norm.npz", **io)
    for f in sorted(args.out.iterdir()):
        print(f"{f.name:16s} {f.stat().st_size:9d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

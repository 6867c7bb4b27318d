"""Record real MXNet 1.9.1 results of the vision and legacy ops for
``tests/ops/test_vision_ops.py``: GridGenerator, BilinearSampler, SpatialTransformer,
Correlation, BatchNorm_v1, _hypot and SequenceReverse with lengths.

Run with the reference interpreter::

    MXNET_MKLDNN_ENABLED=0 .venv-mxnet/bin/python tools/make_vision_fixtures.py [--out DIR]

The cases run through ``make_op_fixtures.run_case`` (``mx.nd.<op>`` under
``autograd.record``, a random head gradient on every visible floating output) and are
written in that tool's layout (``cases.json`` and ``vision.npz``) to
``tests/fixtures/vision_ops``. Their inputs come from their own random stream, so the
cases of ``make_op_fixtures.py`` never move them. Sampling grids keep every point
away from the pixel grid (the bilinear weights have kinks there).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from make_op_fixtures import _kind, encode_attr, run_case  # noqa: E402
from op_fixture_cases import ND, Aux, Case  # noqa: E402

OUT = HERE.parent / "tests" / "fixtures" / "vision_ops"
RNG = np.random.RandomState(20250128)
CASES: list[Case] = []


SYMBOLIC = set()  # case ids run through a bound symbol (MXNet's nd.BatchNorm_v1 is unusable)


def case(cid, op, inputs, train=False, symbolic=False, **attrs):
    CASES.append(Case(cid, op, list(inputs), attrs, train, "vision"))
    if symbolic:
        SYMBOLIC.add(cid)


def run_symbolic(mx, c, rng):
    """Run one case as ``mx.sym.<op>`` bound to its inputs (arguments in order, auxiliary
    states after); the record says ``"symbolic": true``."""
    kinds, arrays = zip(*(_kind(x) for x in c.inputs), strict=True)
    args = [mx.sym.var(f"in{i}") for i, k in enumerate(kinds) if k != "aux"]
    s = getattr(mx.sym, c.op)(*args, name="op", **c.attrs)
    nds = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
    arg_nd = [x for x, k in zip(nds, kinds, strict=True) if k != "aux"]
    aux_nd = [x for x, k in zip(nds, kinds, strict=True) if k == "aux"]
    grads = [mx.nd.zeros(x.shape, dtype=x.dtype) for x in arg_nd]
    reqs = ["write" if k == "diff" else "null" for k in kinds if k != "aux"]
    exe = s.bind(mx.cpu(), args=arg_nd, args_grad=grads, grad_req=reqs, aux_states=aux_nd)
    outs = exe.forward(is_train=c.train)
    data = {f"in{i}": a for i, a in enumerate(arrays)}
    data.update({f"out{i}": o.asnumpy() for i, o in enumerate(outs)})
    heads = list(range(len(outs))) if c.train else []  # see test_vision_ops.py
    if heads:
        hg = [rng.randn(*o.shape).astype(o.dtype) for o in outs]
        exe.backward([mx.nd.array(h, dtype=h.dtype) for h in hg])
        data.update({f"head{i}": h for i, h in enumerate(hg)})
        gi = iter(grads)
        for i, k in enumerate(kinds):
            if k != "aux":
                g = next(gi)
                if k == "diff":
                    data[f"grad{i}"] = g.asnumpy()
    for i, k in enumerate(kinds):
        if k == "aux":
            data[f"aux{i}"] = nds[i].asnumpy()
    rec = {
        "id": c.id,
        "op": c.op,
        "file": "vision.npz",
        "attrs": {k: encode_attr(v) for k, v in c.attrs.items()},
        "train": c.train,
        "inputs": list(kinds),
        "n_out": len(outs),
        "heads": heads,
        "grads": bool(heads),
        "symbolic": True,
    }
    return rec, data


def r(*s):
    return RNG.randn(*s).astype(np.float32)


def u(lo, hi, *s):
    return RNG.uniform(lo, hi, s).astype(np.float32)


def off_grid(n, h, w, size_h, size_w):
    """A (n, 2, h, w) grid of normalized points at least 0.1 pixel off the pixel grid
    of a size_h x size_w input, some of them outside it."""
    px = RNG.randint(-1, size_w, (n, h, w)) + u(0.1, 0.9, n, h, w)
    py = RNG.randint(-1, size_h, (n, h, w)) + u(0.1, 0.9, n, h, w)
    gx = px * 2.0 / (size_w - 1) - 1
    gy = py * 2.0 / (size_h - 1) - 1
    return np.stack([gx, gy], axis=1).astype(np.float32)


# fmt: off
_theta = np.array([[0.9, 0.1, 0.05, -0.12, 1.1, -0.03], [0.5, -0.2, 0.3, 0.25, 0.6, 0.1]],
                  np.float32)
case("gridgen-affine", "GridGenerator", [_theta], transform_type="affine", target_shape=(3, 4))
case("gridgen-affine-str", "GridGenerator", [_theta[:1]], transform_type="affine",
     target_shape="(5, 2)")
case("gridgen-warp", "GridGenerator", [u(-2, 2, 2, 2, 3, 5)], transform_type="warp")
case("bilinear", "BilinearSampler", [r(2, 3, 4, 5), off_grid(2, 3, 6, 4, 5)])
case("bilinear-up", "BilinearSampler", [r(1, 2, 3, 3), off_grid(1, 5, 4, 3, 3)])
_loc = np.array([[0.8, 0.1, 0.07, -0.1, 0.9, 0.04], [1.05, 0.0, -0.11, 0.02, 0.7, 0.13]],
                np.float32)
case("stn", "SpatialTransformer", [r(2, 2, 5, 6), _loc], target_shape=(4, 3),
     transform_type="affine", sampler_type="bilinear")
case("stn-str", "SpatialTransformer", [r(1, 1, 6, 6), _loc[1:]], target_shape="(5, 5)",
     transform_type="affine", sampler_type="bilinear")
case("corr-mul", "Correlation", [r(2, 3, 6, 7), r(2, 3, 6, 7)], max_displacement=2, pad_size=2)
case("corr-abs-k3", "Correlation", [r(1, 2, 5, 6), r(1, 2, 5, 6)], kernel_size=3,
     max_displacement=1, stride1=2, pad_size=2, is_multiply=False)
case("corr-stride2", "Correlation", [r(1, 2, 7, 7), r(1, 2, 7, 7)], max_displacement=4,
     stride2=2, pad_size=3, is_multiply="True")
case("corr-default", "Correlation", [r(1, 2, 4, 5), r(1, 2, 4, 5)])
_x = u(-1, 1, 4, 3, 2, 2)
_g, _b = u(0.5, 1.5, 3), r(3)
case("bnv1-train", "BatchNorm_v1", [_x, _g, _b, Aux(r(3)), Aux(u(0.5, 1.5, 3))], train=True,
     fix_gamma=False, symbolic=True)
case("bnv1-train-fixgamma", "BatchNorm_v1", [_x, _g, _b, Aux(r(3)), Aux(u(0.5, 1.5, 3))],
     train=True, momentum=0.8, eps=1e-4, symbolic=True)
case("bnv1-train-2d", "BatchNorm_v1", [u(-1, 1, 5, 4), u(0.5, 1.5, 4), r(4), Aux(r(4)),
                                        Aux(u(0.5, 1.5, 4))], train=True, fix_gamma="False",
     output_mean_var=True, symbolic=True)
case("bnv1-global", "BatchNorm_v1", [_x, _g, _b, Aux(r(3)), Aux(u(0.5, 1.5, 3))], train=True,
     fix_gamma=False, use_global_stats=True, output_mean_var=True, symbolic=True)
case("bnv1-infer", "BatchNorm_v1", [_x, _g, _b, Aux(r(3)), Aux(u(0.5, 1.5, 3))],
     fix_gamma=False, output_mean_var=True, symbolic=True)
case("hypot", "_hypot", [r(3, 4), r(3, 4)])
_seq = r(4, 3, 2)
case("seqrev-lengths", "SequenceReverse", [_seq, ND(np.array([4, 1, 2], np.float32))],
     use_sequence_length=True)
case("seqrev-plain", "SequenceReverse", [r(3, 4, 2)])
# fmt: on


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
    for c in CASES:
        rec, data = (run_symbolic if c.id in SYMBOLIC else run_case)(mx, c, rng)
        records.append(rec)
        arrays.update({f"{c.id}.{k}": v for k, v in data.items()})
    args.out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out / "vision.npz", **arrays)
    with open(args.out / "cases.json", "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n")
    print(f"wrote {len(records)} cases to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Record real MXNet 1.9.1 results of CTCLoss, quantize/dequantize and PSROIPooling.

Run with the reference interpreter (``make mxnet-ref`` installs it)::

    MXNET_MKLDNN_ENABLED=0 .venv-mxnet/bin/python tools/make_ctc_quant_psroi_fixtures.py

The cases are replayed by ``tests/ops/test_ctc_quant_psroi.py``. Each case is run
like ``make_op_fixtures.py`` runs its own (same layout: ``cases.json`` plus one
``.npz``, into ``tests/fixtures/ops_ctc_quant_psroi``): ``mx.nd.<op>`` under
``autograd.record`` with every floating-point input (not wrapped in ``ND``)
differentiated and a random head gradient on every floating-point output.
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

from make_op_fixtures import encode_attr, run_case  # noqa: E402
from op_fixture_cases import ND, Case  # noqa: E402

OUT = HERE.parent / "tests" / "fixtures" / "ops_ctc_quant_psroi"
GROUP = "ctc_quant_psroi"
RNG = np.random.RandomState(20240628)
CASES: list[Case] = []


def case(cid, op, inputs, **attrs):
    CASES.append(Case(cid, op, list(inputs), attrs, False, GROUP))


def r(*s):
    return RNG.randn(*s).astype(np.float32)


def lab(rows, dtype=np.float32):
    return ND(np.asarray(rows, dtype=dtype))


# fmt: off
# ----------------------------------------------------------------------------- CTCLoss
# labels padded with 0 (blank 'first') or -1 (blank 'last'); one label with a repeat
case("ctc-first", "CTCLoss", [r(6, 3, 5), lab([[1, 2, 0], [3, 3, 4], [4, 0, 0]])])
case("ctc-last", "ctc_loss", [r(6, 3, 5), lab([[0, 2, -1], [1, 1, 3], [3, -1, -1]])],
     blank_label="last")
case("ctc-int-labels", "CTCLoss", [r(5, 2, 4), lab([[1, 2, 1], [3, 0, 0]], np.int32)])
case("ctc-contrib", "_contrib_ctc_loss", [r(4, 2, 6), lab([[5, 1], [2, 0]])])
case("ctc-contrib-CTCLoss", "_contrib_CTCLoss", [r(4, 2, 6), lab([[5, 1], [2, 0]])],
     blank_label="first")
# lengths: steps past data_lengths get no gradient; labels past label_lengths are ignored
case("ctc-lengths", "CTCLoss",
     [r(7, 3, 5), lab([[1, 2, 3, 0], [2, 2, 1, 3], [0, 1, 2, 2]]),
      ND(np.array([7, 5, 4], np.float32)), ND(np.array([4, 2, 1], np.float32))],
     use_data_lengths=True, use_label_lengths=True, blank_label="last")
case("ctc-data-lengths", "CTCLoss",
     [r(6, 2, 4), lab([[1, 2, 0], [3, 0, 0]]), ND(np.array([3, 6], np.float32))],
     use_data_lengths=True)
case("ctc-label-lengths", "CTCLoss",
     [r(5, 2, 4), lab([[1, 2, 3], [3, 3, 1]]), ND(np.array([2, 3], np.float32))],
     use_label_lengths=True)
# example 0 is too short for its label (length + repeats > steps): loss 0; MXNet leaves
# its gradient unwritten (uninitialized memory), the test expects zeros there
case("ctc-infeasible", "CTCLoss",
     [r(3, 2, 4), lab([[1, 1, 2], [2, 3, 0]]), ND(np.array([3, 3], np.float32))],
     use_data_lengths=True)

# ----------------------------------------------------------------------------- quantization
# The pip build of MXNet 1.9.1 runs quantize, quantize_v2 and dequantize through MKLDNN
# on CPU whatever MXNET_MKLDNN_ENABLED says; that path differs from MXNet's own kernels
# (the documented formulas, also used on GPU): uint8 ignores min_range, int8 saturates
# to -128, quantize_v2 and dequantize scale by 255.5 / 127.5. gluonjax follows MXNet's
# own kernels, so only cases where both paths agree (in-range values, no rounding ties,
# uint8 with min_range 0) are recorded here; the test checks the others against a
# NumPy transcription of MXNet's kernels.
q_in = np.array([[0.1392, 0.5928, 0.0], [0.6027, 0.8579, 1.0]], np.float32)
q_sym = RNG.uniform(-2.0, 2.0, (3, 4)).astype(np.float32)
one = lambda v: ND(np.array([v], np.float32))  # noqa: E731
case("quantize-int8", "_contrib_quantize", [ND(q_in), one(0.0), one(1.0)], out_type="int8")
case("quantize-uint8", "_contrib_quantize", [ND(q_in), one(0.0), one(1.0)])
case("quantize-int8-sym", "_contrib_quantize", [ND(q_sym), one(-2.5), one(1.5)],
     out_type="int8")
# ----------------------------------------------------------------------------- PSROIPooling
ps_rois = np.array([[0, 10, 22, 161, 173], [0, 20, 15, 154, 160]], np.float32)
case("psroi-plain", "_contrib_PSROIPooling",
     [RNG.rand(1, 18, 14, 14).astype(np.float32), ND(ps_rois)],
     spatial_scale=0.0625, output_dim=2, pooled_size=3)
case("psroi-group", "_contrib_PSROIPooling",
     [RNG.rand(2, 12, 9, 11).astype(np.float32),
      ND(np.array([[1, 3.5, 2.4, 40.2, 30.7], [0, -8, -5, 20, 12], [1, 60, 50, 90, 70],
                   [0, 12, 9, 12.4, 9.2]], np.float32))],
     spatial_scale=0.25, output_dim=3, pooled_size=3, group_size=2)
case("psroi-float64", "_contrib_PSROIPooling",
     [RNG.rand(1, 8, 6, 7), ND(np.array([[0, 1.5, 2, 10, 11], [0, 0, 0, 27, 23]]))],
     spatial_scale=0.25, output_dim=2, pooled_size=2)
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
        rec, data = run_case(mx, c, rng)
        rec["attrs"] = {k: encode_attr(v) for k, v in c.attrs.items()}
        records.append(rec)
        arrays.update({f"{c.id}.{k}": v for k, v in data.items()})
    args.out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out / f"{GROUP}.npz", **arrays)
    with open(args.out / "cases.json", "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n")
    print(f"wrote {len(records)} cases to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

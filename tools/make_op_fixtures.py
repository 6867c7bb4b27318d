"""Record reference results of real MXNet 1.9.1 ops for ``tests/ops/test_ops_vs_mxnet.py``.

Run with the reference interpreter (``make mxnet-ref`` installs it)::

    .venv-mxnet/bin/python tools/make_op_fixtures.py [--set ops|ops_nd] [--out DIR]

Two sets: ``ops`` (``op_fixture_cases.py`` and ``op_fixture_cases_tensor.py``, into
``tests/fixtures/ops``) and ``ops_nd`` (``op_fixture_cases_nd.py``: optimizer updates,
linear algebra, densities, assorted NDArray ops, into ``tests/fixtures/ops_nd``).
For every case of the set it calls ``mx.nd.<op>`` under
``mx.autograd.record(train_mode=...)`` with every differentiable input attached,
back-propagates a random head gradient from every floating-point visible output
and stores inputs, outputs, head gradients, input gradients and (BatchNorm) the
auxiliary states after the call.

Layout of DIR (default ``tests/fixtures/ops``):

* ``cases.json``: one record per case: ``id``, ``op``, ``file`` (npz name),
  ``attrs`` (tuples written as ``{"__tuple__": [...]}``), ``train``, ``inputs``
  (``"diff"``, ``"nodiff"`` or ``"aux"`` per input), ``n_out``, ``heads`` (output
  indices with a head gradient) and ``grads`` (whether input gradients exist).
* ``<group>.npz``: arrays named ``<id>.in<i>``, ``<id>.out<i>``, ``<id>.head<i>``,
  ``<id>.grad<i>`` (differentiated inputs) and ``<id>.aux<i>``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import op_fixture_cases  # noqa: E402
from op_fixture_cases import ND, Aux  # noqa: E402

# The case modules register their cases on import, drawing from one shared random
# stream: they are imported in this fixed order (not the alphabetical one) so that
# adding a module never changes the inputs of the cases before it.
CASE_MODULES = (
    "op_fixture_cases_tensor",
    "op_fixture_cases_kinks",
    "op_fixture_cases_contrib",
    "op_fixture_cases_contrib_ops",
)
for _name in CASE_MODULES:
    importlib.import_module(_name)

FIXTURES = HERE.parent / "tests" / "fixtures"
DEFAULT_OUT = FIXTURES / "ops"
HEAD_SEED = 7


def _cases(name):
    """The cases of fixture set ``name``."""
    if name == "ops":
        return op_fixture_cases.CASES
    import op_fixture_cases_nd

    return op_fixture_cases_nd.CASES


SETS = ("ops", "ops_nd")


def encode_attr(v):
    """JSON form of an attribute value (tuples are kept apart from lists)."""
    if isinstance(v, tuple):
        return {"__tuple__": [encode_attr(x) for x in v]}
    return v


def _kind(x):
    if isinstance(x, Aux):
        return "aux", x.a
    if isinstance(x, ND):
        return "nodiff", x.a
    if not np.issubdtype(x.dtype, np.floating):
        return "nodiff", x
    return "diff", x


def op_function(mx, name):
    """``mx.nd.<name>``; ``_plus_scalar`` and friends live in ``mx.nd._internal``,
    ``_linalg_<x>`` in ``mx.nd.linalg``, ``_contrib_X`` ops in ``mx.nd.contrib.X``."""
    if name.startswith("_contrib_"):
        return getattr(mx.nd.contrib, name[len("_contrib_") :])
    fn = getattr(mx.nd, name, None)
    if fn is None and name.startswith("_linalg_"):
        fn = getattr(mx.nd.linalg, name[len("_linalg_") :], None)
    return fn if fn is not None else getattr(mx.nd._internal, name)


def run_case(mx, c, rng):
    """Run one case in MXNet; returns (record, {suffix: array})."""
    kinds, arrays = zip(*(_kind(x) for x in c.inputs), strict=True)
    xs = [mx.nd.array(a, dtype=a.dtype) for a in arrays]
    for x, k in zip(xs, kinds, strict=True):
        if k == "diff":
            x.attach_grad()
    attrs = dict(c.attrs)
    out_idx = attrs.pop("_out", None)
    if out_idx is not None:
        attrs["out"] = [xs[i] for i in out_idx]
    with mx.autograd.record(train_mode=c.train):
        res = op_function(mx, c.op)(*xs, **attrs)
    outs = list(res) if isinstance(res, (list, tuple)) else [res]
    data = {f"in{i}": a for i, a in enumerate(arrays)}
    data.update({f"out{i}": o.asnumpy() for i, o in enumerate(outs)})
    heads = [i for i, o in enumerate(outs) if np.issubdtype(o.dtype, np.floating)]
    if c.op == "BatchNorm" and c.attrs.get("output_mean_var"):
        heads = [0]  # MXNet's BatchNorm ignores the gradients of its mean/var outputs
    grads = bool(heads) and "diff" in kinds
    if grads:
        hg = [rng.randn(*outs[i].shape).astype(outs[i].dtype) for i in heads]
        mx.autograd.backward([outs[i] for i in heads], [mx.nd.array(h, dtype=h.dtype) for h in hg])
        data.update({f"head{i}": h for i, h in zip(heads, hg, strict=True)})
        for i, (x, k) in enumerate(zip(xs, kinds, strict=True)):
            if k == "diff":
                data[f"grad{i}"] = x.grad.asnumpy()
    else:
        heads = []
    for i, (x, k) in enumerate(zip(xs, kinds, strict=True)):
        if k == "aux":
            data[f"aux{i}"] = x.asnumpy()
    rec = {
        "id": c.id,
        "op": c.op,
        "file": f"{c.group}.npz",
        "attrs": {k: encode_attr(v) for k, v in c.attrs.items()},
        "train": c.train,
        "inputs": list(kinds),
        "n_out": len(outs),
        "heads": heads,
        "grads": grads,
    }
    return rec, data


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", choices=SETS, default="ops", help="which fixture set")
    ap.add_argument("--out", type=Path, default=None, help="output folder")
    ap.add_argument("--only", default=None, help="comma-separated case ids (for debugging)")
    ap.add_argument(
        "--groups",
        default=None,
        help="comma-separated groups whose .npz files are (re)written; cases.json always "
        "lists every case. Keeps the committed files of other groups byte-identical.",
    )
    args = ap.parse_args(argv)

    os.environ.setdefault("MXNET_ENGINE_TYPE", "NaiveEngine")
    # MKLDNN's max-pooling backward differs from MXNet's own kernels (see the Pooling
    # note in op_fixture_cases.py); the reference is MXNet's native CPU operators.
    os.environ.setdefault("MXNET_MKLDNN_ENABLED", "0")
    import mxnet as mx

    mx.random.seed(0)
    rng = np.random.RandomState(HEAD_SEED)
    cases = _cases(args.set)
    if args.out is None:
        args.out = FIXTURES / args.set
    if args.only:
        keep = set(args.only.split(","))
        cases = [c for c in cases if c.id in keep]
    records, files = [], {}
    for c in cases:
        try:
            rec, data = run_case(mx, c, rng)
        except Exception as err:  # report every broken case, then fail
            print(f"FAILED {c.id} ({c.op}): {str(err).splitlines()[0]}", file=sys.stderr)
            records.append(None)
            continue
        records.append(rec)
        files.setdefault(rec["file"], {}).update({f"{c.id}.{k}": v for k, v in data.items()})
    if any(r is None for r in records):
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    keep = None if args.groups is None else {f"{g}.npz" for g in args.groups.split(",")}
    for name, arrays in files.items():
        if keep is None or name in keep:
            np.savez_compressed(args.out / name, **arrays)
    with open(args.out / "cases.json", "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n")
    names = [n for n in [*files, "cases.json"] if (args.out / n).exists()]
    total = sum((args.out / n).stat().st_size for n in names)
    print(f"wrote {len(records)} cases to {args.out} ({total / 1024:.0f} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

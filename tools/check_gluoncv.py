"""gluoncv 0.10.5's model zoo on gluonjax (``mxnet`` aliased) against real MXNet 1.9.1.

Run with gluonjax's interpreter::

    python tools/check_gluoncv.py                    # every model in MODELS, a table
    python tools/check_gluoncv.py --models resnet18_v1b,fcn_resnet50_voc
    python tools/check_gluoncv.py --fixtures --json  # the committed fixtures (the test)
    python tools/check_gluoncv.py --train            # two SGD steps, every TRAIN_MODELS model

Without ``--fixtures`` it runs ``tools/make_gluoncv_fixtures.py --params TMP`` in the MXNet
interpreter (``.venv-mxnet``, or ``--mxnet-python``), which saves each model's weights with
MXNet's ``save_parameters`` and its eager and hybridized outputs; then it loads those weights
into the same gluoncv model on gluonjax and compares eager, hybridized and export +
``SymbolBlock.imports`` outputs. The error of an output is max |gluonjax - MXNet| divided by
max(1, max |MXNet|). With ``--fixtures`` the weights are ``set_weights``'s seeded ones and the
reference outputs come from ``tests/fixtures/gluoncv/outputs.npz``.

``--train``: two SGD steps (``train_steps``: batch of 8 normalized images, BatchNorm in training
mode, momentum and weight decay) from the same weights in MXNet float32, MXNet float64 and
gluonjax float32, eager and hybridized. The error of a run is max over parameters of
max |a - b| / max |b|. MXNet float32 against float64 is the float32 noise of the problem
(BatchNorm's backward subtracts its means, so weight gradients are differences of nearly equal
sums, and the noise is far above float32's epsilon); gluonjax passes when its distance to MXNet
float64 is within ``NOISE_FACTOR`` times that noise. The same steps then run in gluonjax
float64 (a child process with ``JAX_ENABLE_X64=1``) against MXNet float64: with rounding out of
the way, this compares the semantics themselves (``X64_TOL``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
from gluoncv_common import (  # noqa: E402
    FIXTURE_MODELS,
    MODELS,
    TRAIN_FIXTURE_MODELS,
    TRAIN_MODELS,
    flat,
    get_model,
    set_weights,
    setup_gluonjax,
    train_input,
    train_sample,
    train_steps,
)

FIXTURES = HERE.parent / "tests" / "fixtures" / "gluoncv" / "outputs.npz"
TRAIN_FIXTURES = FIXTURES.parent / "train.npz"


def _param_err(got, ref):
    """(max over parameters of max |got - ref| / max |ref|, the worst parameter's name)."""
    if set(got) != set(ref):
        return float("inf"), f"parameters differ: {sorted(set(got) ^ set(ref))[:4]}"
    worst, where = 0.0, ""
    for k, b in ref.items():
        scale = max(float(np.abs(b).max()), 1e-6)
        e = float(np.abs(got[k].astype(np.float64) - b).max()) / scale
        if e > worst:
            worst, where = e, k
    return worst, where


# gluonjax float32 passes two training steps when its distance to MXNet float64 is within this
# multiple of MXNet float32's own distance to MXNet float64 (the float32 noise)
NOISE_FACTOR = 10


# gluonjax float64 (jax x64) against MXNet float64: with rounding out of the way this isolates
# the semantics (gradients, BatchNorm's running update, SGD); float64 noise is far below this
X64_TOL = 1e-6


def check_train(name, ref32, ref64, sample, hybridize, x64=False):
    """Two SGD steps on gluonjax against MXNet, beside MXNet's float32 noise.

    float32 (default): gluonjax float32 against MXNet float32 and float64, and MXNet float32
    against float64 (the noise); it passes when |gj32 - mx64| <= NOISE_FACTOR * |mx32 - mx64|.
    ``x64``: gluonjax float64 against MXNet float64 (the process needs JAX_ENABLE_X64=1).
    """
    import mxnet as mx

    row = {"model": name, "hybridized": hybridize}
    t0 = time.time()
    try:
        net, _ = get_model(name)
        net.initialize()
        x = mx.nd.array(train_input(name))
        net(x)
        set_weights(net, model=name)
        if x64:
            net.cast("float64")
            x = x.astype("float64")
            if x.dtype != np.float64:
                raise RuntimeError("float64 needs jax x64: set JAX_ENABLE_X64=1")
        if hybridize:
            net.hybridize()
        after = train_steps(net, x)
        got = train_sample(after) if sample else after
        if x64:
            row["gj64_vs_mx64"], row["x64_worst"] = _param_err(got, ref64)
            row["status"] = "ok" if row["gj64_vs_mx64"] <= X64_TOL else "float64 differs"
        else:
            row["train_err"], row["train_worst"] = _param_err(got, ref32)
            row["train_err_vs_f64"], _ = _param_err(got, ref64)
            row["mxnet_f32_vs_f64"], row["noise_worst"] = _param_err(ref32, ref64)
            bound = NOISE_FACTOR * max(row["mxnet_f32_vs_f64"], 1e-7)
            row["status"] = "ok" if row["train_err_vs_f64"] <= bound else "drift beyond noise"
    except Exception as e:  # a row of the table
        tb = traceback.extract_tb(e.__traceback__)[-1]
        row["status"] = f"{type(e).__name__}: {str(e)[:200]} ({tb.filename}:{tb.lineno})"
    row["seconds"] = round(time.time() - t0, 1)
    return row


def _train_rows(args, names):
    """The training rows: float32 here, float64 in a child process with jax x64 on."""
    rows = []
    modes = (True,) if args.hybrid_only else (False, True)
    with tempfile.TemporaryDirectory() as tmp:
        ref_dir = args.ref_dir or tmp
        if args.fixtures:
            ref = dict(np.load(TRAIN_FIXTURES))
        elif not args.ref_dir:
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            cmd = [args.mxnet_python, str(HERE / "make_gluoncv_fixtures.py"), "--train"]
            cmd += ["--params", tmp, "--models", ",".join(names)]
            subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
        for name in names:
            if args.fixtures:
                ref32, ref64 = _split(ref, name)
            else:
                ref32, ref64 = (
                    dict(np.load(os.path.join(ref_dir, f"{name}.train.{d}.npz")))
                    for d in ("float32", "float64")
                )
            for hyb in modes:
                rows.append(check_train(name, ref32, ref64, args.fixtures, hyb, args.x64))
                if args.json:
                    print(json.dumps(rows[-1]), flush=True)
        if args.x64 or args.fixtures or args.no_x64:
            return rows
        cmd = [sys.executable, __file__, "--train", "--x64", "--json", "--ref-dir", ref_dir]
        cmd += ["--models", ",".join(names)] + (["--hybrid-only"] if args.hybrid_only else [])
        proc = subprocess.run(
            cmd, capture_output=True, text=True, env=dict(os.environ, JAX_ENABLE_X64="1")
        )
        by_key = {(r["model"], r["hybridized"]): r for r in rows}
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                row = by_key[(r["model"], r["hybridized"])]
                row["gj64_vs_mx64"] = r.get("gj64_vs_mx64", float("nan"))
                if r["status"] != "ok":
                    row["status"] = f"float64: {r['status']}"
    return rows


def _split(ref, name):
    out = {}
    for dtype in ("float32", "float64"):
        pre = f"{name}.{dtype}."
        out[dtype] = {k[len(pre) :]: v for k, v in ref.items() if k.startswith(pre)}
    return out["float32"], out["float64"]


def _err(got, ref):
    """max |got - ref| / max(1, max |ref|) over the finite entries; inf when the shapes or the
    non-finite entries (inf, -inf, nan) differ."""
    if len(got) != len(ref):
        return float("inf")
    worst = 0.0
    for a, b in zip(got, ref):
        if a.shape != b.shape:
            return float("inf")
        a, b = a.astype(np.float64), b.astype(np.float64)
        fin = np.isfinite(b)
        same = np.where(np.isnan(b), np.isnan(a), a == b)
        if not np.array_equal(fin, np.isfinite(a)) or not same[~fin].all():
            return float("inf")
        if fin.any():
            scale = max(1.0, float(np.abs(b[fin]).max()))
            worst = max(worst, float(np.abs(a[fin] - b[fin]).max()) / scale)
    return worst


def check(name, ref, params=None, export_dir=None):
    """One row: errors of eager / hybridized / exported outputs against ``ref``."""
    import mxnet as mx

    row = {"model": name}
    stage = "get_model"
    t0 = time.time()
    try:
        net, _ = get_model(name)
        x = mx.nd.array(ref[f"{name}.x"])
        stage = "load weights"
        if params is not None:
            net.load_parameters(params)
        else:
            net.initialize()
            net(x)
            set_weights(net, model=name)
        n_out = len([k for k in ref if k.startswith(f"{name}.eager.")])
        want_e = [ref[f"{name}.eager.{i}"] for i in range(n_out)]
        want_h = [ref[f"{name}.hybrid.{i}"] for i in range(n_out)]
        stage = "eager forward"
        row["eager"] = _err(flat(net(x)), want_e)
        stage = "hybridized forward"
        net.hybridize()
        row["hybrid"] = _err(flat(net(x)), want_h)
        if export_dir is not None:
            stage = "export + SymbolBlock.imports"
            prefix = os.path.join(export_dir, name)
            net.export(prefix)
            with_names = ["data"]
            back = mx.gluon.SymbolBlock.imports(
                f"{prefix}-symbol.json", with_names, f"{prefix}-0000.params"
            )
            row["export"] = _err(flat(back(x)), want_h)
        row["status"] = "ok"
    except Exception as e:  # a row of the table, not a crash of the tool
        tb = traceback.extract_tb(e.__traceback__)[-1]
        row["status"] = f"{stage}: {type(e).__name__}: {str(e)[:200]} ({tb.filename}:{tb.lineno})"
    row["seconds"] = round(time.time() - t0, 1)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", help="comma-separated names from tools/gluoncv_common.py")
    ap.add_argument("--fixtures", action="store_true", help="compare with the committed npz")
    ap.add_argument("--json", action="store_true", help="one JSON object per line")
    ap.add_argument("--no-export", action="store_true", help="skip the export round trip")
    ap.add_argument("--train", action="store_true", help="two SGD steps against MXNet's")
    ap.add_argument("--x64", action="store_true", help="--train in float64 (JAX_ENABLE_X64=1)")
    ap.add_argument("--no-x64", action="store_true", help="--train without the float64 rows")
    ap.add_argument("--hybrid-only", action="store_true", help="--train: hybridized rows only")
    ap.add_argument("--ref-dir", help="--train: MXNet's <model>.train.<dtype>.npz already here")
    ap.add_argument("--mxnet-python", default=str(HERE.parent / ".venv-mxnet" / "bin" / "python"))
    args = ap.parse_args()
    setup_gluonjax()
    rows = []
    if args.train:
        default = TRAIN_FIXTURE_MODELS if args.fixtures else TRAIN_MODELS
        names = args.models.split(",") if args.models else list(default)
        rows = _train_rows(args, names)
        if not args.json:
            print(
                "| model | hybridized | gj32 vs mx32 | gj32 vs mx64 | mx32 vs mx64 (noise) "
                "| gj64 vs mx64 | worst parameter | status |"
            )
            print("| --- | --- | --- | --- | --- | --- | --- | --- |")
            for r in rows:
                cells = " | ".join(
                    f"{r.get(k, float('nan')):.1e}"
                    for k in ("train_err", "train_err_vs_f64", "mxnet_f32_vs_f64", "gj64_vs_mx64")
                )
                where = r.get("train_worst", "")
                print(f"| {r['model']} | {r['hybridized']} | {cells} | {where} | {r['status']} |")
        return
    with tempfile.TemporaryDirectory() as tmp:
        export_dir = None if args.no_export else tmp
        if args.fixtures:
            names = args.models.split(",") if args.models else list(FIXTURE_MODELS)
            ref = dict(np.load(FIXTURES))
            rows = [check(n, ref, export_dir=export_dir) for n in names]
        else:
            names = args.models.split(",") if args.models else list(MODELS)
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            cmd = [args.mxnet_python, str(HERE / "make_gluoncv_fixtures.py"), "--params", tmp]
            proc = subprocess.run(
                [*cmd, "--models", ",".join(names)], capture_output=True, text=True, env=env
            )
            for name in names:
                path = os.path.join(tmp, f"{name}.npz")
                if not os.path.exists(path):
                    line = [s for s in proc.stdout.splitlines() if s.startswith(name + " ")]
                    rows.append({"model": name, "status": f"MXNet failed: {line or proc.stderr}"})
                    continue
                ref = dict(np.load(path))
                rows.append(check(name, ref, os.path.join(tmp, f"{name}.params"), export_dir))
                if args.json:
                    print(json.dumps(rows[-1]), flush=True)
        if args.fixtures and args.json:
            for r in rows:
                print(json.dumps(r), flush=True)
    if not args.json:
        print("| model | eager | hybridized | export+imports | status | s |")
        print("| --- | --- | --- | --- | --- | --- |")
        for r in rows:
            cells = [f"{r[k]:.1e}" if k in r else "-" for k in ("eager", "hybrid", "export")]
            print(f"| {r['model']} | {' | '.join(cells)} | {r['status']} | {r.get('seconds')} |")


if __name__ == "__main__":
    main()

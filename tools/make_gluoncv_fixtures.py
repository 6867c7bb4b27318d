"""gluoncv 0.10.5 model-zoo outputs from real MXNet 1.9.1, for ``tests/test_gluoncv_zoo.py``.

Run with the reference interpreter (gluoncv installed there with ``pip install --no-deps
gluoncv==0.10.5 tqdm portalocker Pillow 'scipy<1.11'``)::

    .venv-mxnet/bin/python tools/make_gluoncv_fixtures.py            # the committed fixtures
    .venv-mxnet/bin/python tools/make_gluoncv_fixtures.py --params DIR --models a,b

Default: for each of ``FIXTURE_MODELS`` (tools/gluoncv_common.py), seeded weights
(``set_weights``), a predict-mode forward eager and hybridized; writes
``tests/fixtures/gluoncv/outputs.npz`` with ``<model>.x`` and ``<model>.eager.<i>`` /
``<model>.hybrid.<i>``. With ``--params DIR``: also ``DIR/<model>.params`` written by MXNet's
``save_parameters`` and ``DIR/<model>.npz`` (used by ``tools/check_gluoncv.py``, not committed).
With ``--train``: two SGD steps of each of ``TRAIN_FIXTURE_MODELS`` (``--models``: any of
``TRAIN_MODELS``) from the seeded weights (``train_input``, ``train_steps``), in float32
and float64 (the float32 noise); ``tests/fixtures/gluoncv/train.npz`` holds a seeded sample of
every parameter afterwards (``train_sample``); with ``--params`` every parameter goes to
``DIR/<model>.train.<dtype>.npz``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("MXNET_MKLDNN_ENABLED", "0")
os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402
from gluoncv_common import (  # noqa: E402
    FIXTURE_MODELS,
    TRAIN_FIXTURE_MODELS,
    flat,
    get_model,
    make_input,
    set_weights,
    train_input,
    train_sample,
    train_steps,
)

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "gluoncv" / "outputs.npz"
TRAIN_OUT = OUT.parent / "train.npz"


def train(name, params_dir=None):
    """Two SGD steps in float32 and in float64 (the float32 noise) from the same weights."""
    res = {}
    for dtype in ("float32", "float64"):
        net, _ = get_model(name)
        net.initialize()
        x = train_input(name)
        net(mx.nd.array(x))
        set_weights(net, model=name)
        net.cast(dtype)
        after = train_steps(net, mx.nd.array(x, dtype=dtype))
        if params_dir is not None:
            np.savez(os.path.join(params_dir, f"{name}.train.{dtype}.npz"), **after)
        res.update({f"{name}.{dtype}.{k}": v for k, v in train_sample(after).items()})
    return res


def run(name, params_dir=None):
    net, shape = get_model(name)
    net.initialize()
    x = make_input(shape)
    net(mx.nd.array(x))  # deferred shapes
    set_weights(net, model=name)
    res = {f"{name}.x": x}
    for i, o in enumerate(flat(net(mx.nd.array(x)))):
        res[f"{name}.eager.{i}"] = o
    net.hybridize()
    for i, o in enumerate(flat(net(mx.nd.array(x)))):
        res[f"{name}.hybrid.{i}"] = o
    if params_dir is not None:
        net.save_parameters(os.path.join(params_dir, f"{name}.params"))
        np.savez(os.path.join(params_dir, f"{name}.npz"), **res)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--params", help="also write MXNet's .params and outputs per model here")
    ap.add_argument("--models", help="comma-separated (default: FIXTURE_MODELS)")
    ap.add_argument("--train", action="store_true", help="two SGD steps, float32 and 64")
    args = ap.parse_args()
    if args.train:
        names = args.models.split(",") if args.models else TRAIN_FIXTURE_MODELS
        out = {}
        for name in names:
            out.update(train(name, args.params))
            print(name, "ok", flush=True)
        if args.params is None:
            np.savez_compressed(TRAIN_OUT, **out)
            print("wrote", TRAIN_OUT, os.path.getsize(TRAIN_OUT), "bytes")
        return
    names = args.models.split(",") if args.models else FIXTURE_MODELS
    out = {}
    for name in names:
        try:
            out.update(run(name, args.params))
            print(name, "ok", flush=True)
        except Exception as e:  # report and go on: one model's failure is a table row
            print(name, "FAIL", type(e).__name__, str(e)[:300], flush=True)
    if args.params is None:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(OUT, **out)
        print("wrote", OUT, os.path.getsize(OUT), "bytes")


if __name__ == "__main__":
    main()

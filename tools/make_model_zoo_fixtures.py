"""Record MXNet 1.9.1's model zoo for ``tests/gluon/test_model_zoo.py``.

Run with the reference interpreter::

    .venv-mxnet/bin/python tools/make_model_zoo_fixtures.py [--out DIR]

For every ``mxnet.gluon.model_zoo.vision.get_model`` name: build the network,
finish deferred initialization at the input size of
``tests/gluon/zoo_recipe.MODEL_INPUT``, set every parameter to
``zoo_recipe.recipe_value(structural name, shape)`` (deterministic, NumPy only, so the
test computes the same weights instead of storing them), and run one predict-mode
forward on ``zoo_recipe.recipe_input(name)``.

Layout of DIR (default ``tests/fixtures/model_zoo``):

* ``structure.json.gz``: ``{name: {"prefix": ..., "params": [[structural name,
  display name, shape, grad_req], ...], "collect": [display names in
  collect_params() order]}}``;
* ``outputs.npz``: ``<name>.y``, the predict-mode output (1, 1000); for the models in
  ``WITH_GRAD`` also, for the input ``recipe_input(name, batch=2, side=64)``, ``<name>.yt`` (its
  training-mode output), ``<name>.head`` and ``<name>.xgrad`` (d sum(yt * head) / d x), and the
  running statistics after that step (``<name>.aux.<structural name>``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("MXNET_MKLDNN_ENABLED", "0")  # MXNet's reference CPU kernels
os.environ.setdefault("MXNET_STORAGE_FALLBACK_LOG_VERBOSE", "0")

import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402
from mxnet.gluon.model_zoo import vision  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "gluon"))
from zoo_recipe import MODEL_INPUT, recipe_input, recipe_value  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "model_zoo"
WITH_GRAD = ("resnet18_v1", "mobilenet0.25")
TRAIN_SIDE = 64


def build(name, structure, io):
    mx.random.seed(0)
    net = vision.get_model(name)
    net.initialize()
    x = mx.nd.array(recipe_input(name))
    net(x)  # deferred initialization
    params = net._collect_params_with_prefix()
    for key, p in params.items():
        p.set_data(mx.nd.array(recipe_value(key, p.shape)))
    structure[name] = {
        "prefix": net.prefix,
        "params": [[k, p.name, list(p.shape), p.grad_req] for k, p in params.items()],
        "collect": list(net.collect_params().keys()),
    }
    io[f"{name}.y"] = net(x).asnumpy()
    if name in WITH_GRAD:
        rng = np.random.RandomState(5)
        # 64x64: every BatchNorm sees at least 8 values per channel in a batch of two
        xt = mx.nd.array(recipe_input(name, batch=2, side=TRAIN_SIDE))
        xt.attach_grad()
        with mx.autograd.record():
            yt = net(xt)
        head = rng.standard_normal(yt.shape).astype(np.float32)
        yt.backward(mx.nd.array(head))
        io[f"{name}.yt"] = yt.asnumpy()
        io[f"{name}.head"] = head
        io[f"{name}.xgrad"] = xt.grad.asnumpy()
        for key, p in params.items():
            if key.endswith(("running_mean", "running_var")):
                io[f"{name}.aux.{key}"] = p.data().asnumpy()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("names", nargs="*", help="only these models (default: all)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    structure, io = {}, {}
    for name in args.names or MODEL_INPUT:
        print("building", name, flush=True)
        build(name, structure, io)
    with gzip.open(args.out / "structure.json.gz", "wt") as f:
        json.dump(structure, f, separators=(",", ":"))
    np.savez_compressed(args.out / "outputs.npz", **io)
    for f in sorted(args.out.iterdir()):
        print(f"{f.name:24s} {f.stat().st_size:9d}")


if __name__ == "__main__":
    main()

"""Export gluon.model_zoo.vision models to ONNX and compare ONNX Runtime with gluonjax.

``python tools/check_onnx_zoo.py`` checks one model per family at the input size it
needs; ``--all`` every model of the zoo (slow on CPU); ``--names a,b`` the named ones.
Weights are random with unit-scale statistics (no download); each model must pass
``onnx.checker`` and match gluonjax's hybridized output within 1e-4 (relative to its
largest output). tests/onnx covers every family with MXNet's own exports.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FAMILIES = [
    "alexnet",
    "densenet121",
    "inceptionv3",
    "mobilenet0.25",
    "mobilenetv2_0.25",
    "resnet18_v1",
    "resnet18_v2",
    "squeezenet1.0",
    "squeezenet1.1",
    "vgg11",
    "vgg11_bn",
]


def size_of(name):
    if name.startswith("inception"):
        return 299
    if name.startswith(("alexnet", "densenet", "squeezenet")):
        return 224
    return 64


def spread(net, mx):
    rng = np.random.RandomState(1)
    for name, p in net.collect_params().items():
        if name.endswith(("running_var", "gamma")):
            value = rng.uniform(0.5, 1.5, p.shape)
        elif name.endswith(("running_mean", "beta", "bias")):
            value = rng.uniform(-0.1, 0.1, p.shape)
        else:
            value = rng.normal(0, 1.4 / np.sqrt(int(np.prod(p.shape[1:])) or 1), p.shape)
        p.set_data(mx.nd.array(value, dtype=p.dtype))


def check(name, tmp):
    import onnx
    import onnxruntime as ort

    import gluonjax as mx
    from gluonjax.gluon.model_zoo import vision

    net = vision.get_model(name, classes=10)
    net.initialize()
    s = size_of(name)
    x = mx.nd.array(np.random.RandomState(0).uniform(size=(1, 3, s, s)))
    net(x)
    spread(net, mx)
    net.hybridize()
    want = net(x).asnumpy()
    path = mx.onnx.export_block(net, x, str(Path(tmp) / f"{name}.onnx"))
    onnx.checker.check_model(path)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    (got,) = sess.run(None, {"data": x.asnumpy()})
    scale = np.abs(want).max()
    err = np.abs(got - want).max() / scale
    return err, scale


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--names", default="")
    args = ap.parse_args()
    from gluonjax.gluon.model_zoo import vision

    names = args.names.split(",") if args.names else FAMILIES
    if args.all:
        names = sorted(vision._MODELS)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            t = time.time()
            try:
                err, scale = check(name, tmp)
                ok = err <= 1e-4
                print(
                    f"{name:20s} {'ok ' if ok else 'BAD'} rel.err {err:.1e} (scale {scale:.2g}) "
                    f"{time.time() - t:.1f}s",
                    flush=True,
                )
            except Exception as e:  # report and go on
                ok = False
                print(f"{name:20s} FAIL {type(e).__name__}: {str(e)[:200]}", flush=True)
            bad += not ok
    print(f"{len(names) - bad} of {len(names)} models match")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

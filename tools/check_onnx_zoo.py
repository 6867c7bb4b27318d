"""Export gluon.model_zoo.vision models to ONNX and compare ONNX Runtime with gluonjax.

``python tools/check_onnx_zoo.py`` checks one model per family at the input size it
needs; ``--all`` every model of the zoo (slow on CPU); ``--names a,b`` the named ones.
Weights are random with unit-scale statistics (no download); each model must pass
``onnx.checker`` and match gluonjax's hybridized output within 1e-4 (relative to its
largest output). tests/onnx covers every family with MXNet's own exports.

``--gluoncv [a,b]``: gluoncv 0.10.5's models of ``tools/gluoncv_common.MODELS`` (all, or the
named ones) through gluonjax's ``mxnet`` alias, with ``set_weights``'s seeded weights and
``MODELS``' input shapes, hybridized and exported with ``mx.onnx.export_block``. Every
output (a detector's ids, scores and boxes, -1 padding included) must match gluonjax's
hybridized output within 1e-4 of ``max(1, max |output|)``. ``--size S`` overrides the input
side (PSPNet and DeepLab are then built for that crop); ``--post-nms N`` keeps N rows of a
detector's output (-1: every row, the -1 padding after the kept ones included); ``--json``
prints one JSON object per model.
"""

from __future__ import annotations

import argparse
import json
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


def _gluoncv_model(name, size):
    """gluoncv's model and input shape; ``size`` a square input side (PSPNet and DeepLab
    are built for that crop: their pyramid pooling is sized by it)."""
    from gluoncv import model_zoo
    from gluoncv_common import MODELS, get_model

    if not size:
        return get_model(name)
    shape, kwargs = MODELS[name]
    if name.startswith(("psp_", "deeplab_")):
        kwargs = dict(kwargs, crop_size=size)
    return model_zoo.get_model(name, pretrained=False, **kwargs), (*shape[:2], size, size)


def check_gluoncv(name, tmp, size=None, post_nms=None):
    """One row: ORT against gluonjax's hybridized outputs of a gluoncv model."""
    import onnx
    import onnxruntime as ort
    from check_gluoncv import _err
    from gluoncv_common import flat, make_input, set_weights

    import gluonjax as mx

    net, shape = _gluoncv_model(name, size)
    if post_nms is not None:  # a detector's rows after NMS (-1: all, -1 padding included)
        net.set_nms(nms_thresh=net.nms_thresh, nms_topk=net.nms_topk, post_nms=post_nms)
    x = mx.nd.array(make_input(shape))
    net.initialize()
    net(x)
    set_weights(net, model=name)
    net.hybridize()
    want = flat(net(x))
    path = mx.onnx.export_block(net, x, str(Path(tmp) / f"{name}.onnx"))
    onnx.checker.check_model(path)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = sess.run(None, {"data": x.asnumpy()})
    row = {"model": name, "shape": list(shape), "err": _err(got, want)}
    row["scale"] = max(float(np.abs(w[np.isfinite(w)]).max(initial=0)) for w in want)
    row["outputs"] = [list(w.shape) for w in want]
    if len(want) == 3 and want[0].shape[-1] == 1:  # a detector's (ids, scores, boxes)
        row["kept"] = int((want[0] >= 0).sum())
        row["padding"] = int((want[0] < 0).sum())
    return row


def main_gluoncv(args):
    sys.path.insert(0, str(ROOT / "tools"))
    from gluoncv_common import MODELS, setup_gluonjax

    setup_gluonjax()
    names = args.gluoncv.split(",") if args.gluoncv else list(MODELS)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            t = time.time()
            try:
                row = check_gluoncv(name, tmp, args.size, args.post_nms)
                row["status"] = "ok" if row["err"] <= 1e-4 else "differs"
            except Exception as e:  # a row of the table
                row = {"model": name, "status": f"{type(e).__name__}: {str(e)[:300]}"}
            row["seconds"] = round(time.time() - t, 1)
            rows.append(row)
            if args.json:
                print(json.dumps(row), flush=True)
    if not args.json:
        print("| model | input | status | max error | scale | detections kept / -1 rows | s |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for r in rows:
            err = f"{r['err']:.1e}" if "err" in r else "-"
            scale = f"{r['scale']:.2g}" if "scale" in r else "-"
            det = f"{r['kept']} / {r['padding']}" if "kept" in r else "-"
            shape = "x".join(map(str, r.get("shape", [])[2:]))
            print(
                f"| {r['model']} | {shape} | {r['status']} | {err} | {scale} | {det} "
                f"| {r['seconds']} |"
            )
    bad = sum(r["status"] != "ok" for r in rows)
    print(f"{len(rows) - bad} of {len(rows)} models match", file=sys.stderr)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--names", default="")
    ap.add_argument("--gluoncv", nargs="?", const="", default=None, metavar="NAMES")
    ap.add_argument("--size", type=int, default=None, help="--gluoncv: square input side")
    ap.add_argument("--post-nms", type=int, default=None, help="--gluoncv: detector rows")
    ap.add_argument("--json", action="store_true", help="--gluoncv: one JSON object per line")
    args = ap.parse_args()
    if args.gluoncv is not None:
        return main_gluoncv(args)
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

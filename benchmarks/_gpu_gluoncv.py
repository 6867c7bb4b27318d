"""bench_gluoncv's gluonjax child for ``python -m benchmarks --gpu`` (driver:
:mod:`benchmarks.gpu`): its ``CHILD`` script, unmodified but for the run's context (entered
once at the top: gluonjax, like MXNet, creates arrays on ``cpu(0)`` by default), sizes
(a dry run: 32x32 images, one-block-per-stage ResNetV1b nets) and the plain-jax rows below.
"""

from __future__ import annotations

from . import _gpu_jobs as J
from . import bench_gluoncv as g

# gluonjax's gluoncv child: the same exported program called by plain jax, batch 1 and N
XLA_ROWS = """
res["ctx"] = str(xb.context)
if not FIRST_ONLY:
    import tempfile, jax
    from gluonjax import deploy
    with tempfile.TemporaryDirectory() as d:
        net.export(d + "/r50")
        served = deploy.load(d + "/r50")
        for key, xin in (("infer1_xla", x1), ("infer32_xla", xb)):
            xd = jax.device_put(xin.asnumpy(), jax.devices()[0])
            jax.block_until_ready(served(xd))
            res[key] = median(lambda: jax.block_until_ready(served(xd)))
"""
MINI_V1B = "model_zoo.resnetv1b.ResNetV1b(model_zoo.resnetv1b.{}, [1, 1, 1, 1])"


def gluoncv_script(cfg, first_only):
    """bench_gluoncv's gluonjax child at the run's sizes, on the run's context."""
    gc = cfg["gluoncv"]
    setup = g.GLUONJAX_SETUP + f"gluonjax.Context({cfg['ctx']!r}, 0).__enter__()\n"
    s = g.CHILD.format(
        setup=setup, repeats=gc["repeats"], batch=gc["batch"], first_only=first_only,
        xla_rows=XLA_ROWS,
    )  # fmt: skip
    subs = [("224, 224", f"{gc['size']}, {gc['size']}", 2)]
    if gc["mini"]:
        for name, block in (("resnet50_v1b", "BottleneckV1b"), ("resnet18_v1b", "BasicBlockV1b")):
            subs.append(
                (f'model_zoo.get_model("{name}", pretrained=False)', MINI_V1B.format(block), 1)
            )
    for old, new, count in subs:
        if s.count(old) != count:
            raise RuntimeError(f"bench_gluoncv.CHILD changed: {old!r} found {s.count(old)} times")
        s = s.replace(old, new)
    return s


def cells(cfg, run, res):
    """The table cells of one child's result (``run``: 'cold' or 'second'), or raises when
    gluonjax did not run on the run's context."""
    if not str(res.get("ctx", "")).startswith(cfg["ctx"]):
        raise RuntimeError(f"gluoncv {run}: gluonjax ran on {res.get('ctx')}, not {cfg['ctx']}")
    rows = J.GLUONCV if run == "cold" else J.GLUONCV_SECOND
    out = [[row, "gluonjax", res[key], ""] for key, row in rows.items()]
    if run == "cold":
        note = "pure JAX: the exported program"
        out.append([J.GLUONCV["infer1"], "jax", res["infer1_xla"], note])
        out.append([J.GLUONCV["infer32"], "jax", res["infer32_xla"], note])
    return out

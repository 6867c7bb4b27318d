"""What ``tools/make_gluoncv_fixtures.py`` (MXNet) and ``tools/check_gluoncv.py`` share.

It runs in both interpreters: the reference MXNet 1.9.1 one, and gluonjax's with the ``mxnet``
alias on (:func:`setup_gluonjax`). Every model gets the same weights on both sides: either a
file MXNet wrote with ``save_parameters``, or :func:`set_weights`, which draws them from a seeded
NumPy ``RandomState`` (stable across NumPy versions) in sorted structural-name order, so the
committed fixtures hold only inputs and outputs.
"""

from __future__ import annotations

import fnmatch
import sys

import numpy as np

# name -> (input shape, extra get_model keywords); small inputs where the model allows them
# (squeezenet and densenet end in a fixed 7x7/13x13 pooling, PSPNet and DeepLab pool to the
# crop size they are built for)
MODELS = {
    "resnet18_v1b": ((1, 3, 64, 64), {}),
    "resnet50_v1b": ((1, 3, 64, 64), {}),
    "mobilenet1.0": ((1, 3, 64, 64), {}),
    "mobilenet0.25": ((1, 3, 64, 64), {}),
    "densenet121": ((1, 3, 224, 224), {}),
    "squeezenet1.1": ((1, 3, 224, 224), {}),
    "se_resnet18_v1": ((1, 3, 64, 64), {}),
    "yolo3_mobilenet1.0_voc": ((1, 3, 128, 128), {"pretrained_base": False}),
    "yolo3_mobilenet0.25_voc": ((1, 3, 64, 64), {"pretrained_base": False}),
    "ssd_512_resnet50_v1_voc": ((1, 3, 256, 256), {"pretrained_base": False}),
    "faster_rcnn_resnet50_v1b_voc": ((1, 3, 128, 128), {"pretrained_base": False}),
    "center_net_resnet18_v1b_voc": ((1, 3, 128, 128), {"pretrained_base": False}),
    "fcn_resnet50_voc": ((1, 3, 64, 64), {"pretrained_base": False}),
    "psp_resnet50_ade": ((1, 3, 480, 480), {"pretrained_base": False}),
    "deeplab_resnet50_ade": ((1, 3, 480, 480), {"pretrained_base": False}),
    "simple_pose_resnet18_v1b": ((1, 3, 64, 48), {"pretrained_base": False}),
}

# the models whose outputs are committed (tests/fixtures/gluoncv/outputs.npz): small and quick
FIXTURE_MODELS = (
    "resnet18_v1b",
    "mobilenet0.25",
    "se_resnet18_v1",
    "yolo3_mobilenet0.25_voc",
    "simple_pose_resnet18_v1b",
)
SEED = 3

# per-model factors on set_weights's draw, by structural parameter name: a well-conditioned
# setup where He-scaled random weights would saturate an output. CenterNet's heatmap is a
# sigmoid followed by topk over ~20k scores; with the plain draw its logits reach ~40, several
# hundred scores round to exactly 1.0 in float32, and topk has to order ties. MXNet 1.9.1's CPU
# topk orders ties by libstdc++'s unstable std::sort/partial_sort (a different order on its GPU,
# which sorts stably), so that order is no semantics to match: gluonjax keeps ties in index order.
# Scaled by 0.1 the logits stay below ~4, no score saturates and the top scores are distinct.
# SSD likewise: with the plain draw every class score is a saturated 1.0 and the box decoder's
# exp overflows to inf, so its outputs would say little; its predictors are scaled down.
# YOLOv3 on MobileNet 1.0 too: with the plain draw every score is a saturated 1.0 (all tied)
# and exp overflows the box sizes to 1e12 or to needles 1e-5 wide, whose overlaps (and so NMS)
# turn on the last bits of the coordinates; scaled by 0.1 the scores are distinct (< 0.95) and
# the boxes image-sized.
# Keys are fnmatch patterns over structural names.
WEIGHT_SCALE = {
    "yolo3_mobilenet1.0_voc": {"yolo_outputs.*.prediction.weight": 0.1},
    "center_net_resnet18_v1b_voc": {"heads.0.2.weight": 0.1},
    "ssd_512_resnet50_v1_voc": {
        "class_predictors.*.predictor.weight": 1e-3,
        "box_predictors.*.predictor.weight": 1e-3,
    },
}


def setup_gluonjax():
    """Turn the ``mxnet`` alias on and work around gluoncv 0.10.5's environment checks.

    gluoncv 0.10.5 raises on import when torch >= 2 is installed beside it (it checks
    ``torch<2``), and its Faster R-CNN uses ``np.float``, removed in NumPy 1.24 (MXNet 1.9.1
    pins ``numpy<1.24``). Neither is about MXNet's API: torch is hidden from this process and
    ``np.float`` set to ``float``.
    """
    import gluonjax.mxnet_alias

    sys.modules.setdefault("torch", None)
    if not hasattr(np, "float"):
        np.float = float
    gluonjax.mxnet_alias.install()


def get_model(name):
    """gluoncv's ``model_zoo.get_model(name, pretrained=False)`` and its input shape."""
    from gluoncv import model_zoo

    shape, kwargs = MODELS[name]
    return model_zoo.get_model(name, pretrained=False, **kwargs), shape


def make_input(shape, seed=SEED):
    return np.random.RandomState(seed).uniform(0, 1, size=shape).astype(np.float32)


def set_weights(net, seed=SEED, model=None):
    """Seeded weights by sorted structural name (the net must be initialized and run once).

    Weights are scaled by their fan-in so deep nets keep bounded activations; BatchNorm gets
    gamma and running variance in [0.5, 1.5]. Constant parameters (anchors) are kept.
    ``model`` (a name in ``MODELS``) applies its ``WEIGHT_SCALE`` factors.
    """
    import mxnet as mx

    scale = WEIGHT_SCALE.get(model, {})
    rng = np.random.RandomState(seed)
    for name, p in sorted(net._collect_params_with_prefix().items()):
        if type(p).__name__ == "Constant":
            continue
        shape = p.shape
        if name.endswith(("gamma", "running_var")):
            v = rng.uniform(0.5, 1.5, size=shape)
        elif name.endswith(("beta", "bias", "running_mean")):
            v = rng.normal(0, 0.1, size=shape)
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else int(shape[0])
            v = rng.normal(0, np.sqrt(2.0 / max(fan_in, 1)), size=shape)
        for pattern, factor in scale.items():
            if fnmatch.fnmatchcase(name, pattern):
                v = v * factor
        p.set_data(mx.nd.array(v.astype(p.dtype)))


def flat(out):
    """The outputs of a forward as a flat list of NumPy arrays."""
    if isinstance(out, (list, tuple)):
        res = []
        for o in out:
            res += flat(o)
        return res
    return [out.asnumpy()]


# models whose two SGD steps are compared (classification-style outputs in training mode)
TRAIN_MODELS = (
    "resnet18_v1b",
    "resnet50_v1b",
    "mobilenet0.25",
    "mobilenet1.0",
    "se_resnet18_v1",
    "simple_pose_resnet18_v1b",
)
# the models whose two steps are committed (tests/fixtures/gluoncv/train.npz)
TRAIN_FIXTURE_MODELS = ("mobilenet0.25",)
# a well-conditioned two-step problem, so that MXNet float32 against MXNet float64 measures
# float32 rounding and not chaos: 8 samples give BatchNorm (training mode, batch statistics)
# at least 32 values per channel even on the last 2x2 maps; the input has an image's
# normalized scale; the loss has a softmax cross-entropy's gradient scale (below).
TRAIN_BATCH = 8
TRAIN_INPUT = 96  # the side of the (square) training input; simple_pose keeps its 4:3


def train_input(name):
    """The seeded training batch of ``name``: (TRAIN_BATCH, 3, H, W), roughly zero mean and
    unit scale (a normalized image)."""
    shape = MODELS[name][0]
    h = TRAIN_INPUT
    w = h * shape[3] // shape[2]
    return (make_input((TRAIN_BATCH, 3, h, w)) - 0.5) * 4


def train_steps(net, x, steps=2, seed=SEED):
    """``steps`` SGD steps (lr 0.05, momentum 0.9, wd 1e-4) on mean over the batch of
    sum(output * fixed random head).

    Each head is N(0, 1) / sqrt(outputs per sample), so the gradient an output gets has the
    norm of a softmax cross-entropy's (about 1 per sample) whatever the head's size, and
    ``trainer.step(batch)`` averages over the batch. Returns ``{structural name: array}`` of
    every parameter afterwards (running statistics included). ``x`` is an NDArray; its dtype
    decides the heads' dtype.
    """
    import mxnet as mx

    trainer = mx.gluon.Trainer(
        net.collect_params(), "sgd", {"learning_rate": 0.05, "momentum": 0.9, "wd": 1e-4}
    )
    rng = np.random.RandomState(seed + 1)
    heads = None
    for _ in range(steps):
        with mx.autograd.record():
            out = net(x)
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            if heads is None:
                heads = []
                for o in outs:
                    per_sample = max(1, o.size // o.shape[0])
                    h = rng.normal(size=o.shape) / np.sqrt(per_sample)
                    heads.append(mx.nd.array(h, dtype=o.dtype))
            loss = mx.nd.add_n(*[(o * h).sum() for o, h in zip(outs, heads)])
        loss.backward()
        trainer.step(x.shape[0])
    return {k: p.data().asnumpy() for k, p in net._collect_params_with_prefix().items()}


def train_sample(params, n=16, seed=SEED):
    """A fixed sample of each parameter for fixtures: ``n`` seeded entries and the L2 norm.

    The norm stands for the entries left out (a sum would cancel, and its error relative to
    the sample's scale would say nothing)."""
    rng = np.random.RandomState(seed + 2)
    res = {}
    for k in sorted(params):
        v = params[k].reshape(-1).astype(np.float64)
        pick = rng.randint(0, v.size, size=min(n, v.size))
        res[k] = np.concatenate([v[pick], [np.sqrt((v * v).sum())]])
    return res

"""The op cases recorded by ``make_op_fixtures.py`` (plain numpy, no MXNet import).

Each case is ``Case(id, op, inputs, attrs, train, group)``. Inputs are numpy
arrays; a bare float array is differentiated, ``ND(a)`` is a non-differentiable
input (labels, indices: integer values stored as float32, like MXNet) and
``Aux(a)`` an auxiliary state (BatchNorm's moving stats) saved after the call.
Some attributes use MXNet's string forms on purpose (``kernel='(3, 3)'``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

RNG = np.random.RandomState(20240501)


@dataclass
class ND:
    a: np.ndarray


@dataclass
class Aux:
    a: np.ndarray


@dataclass
class Case:
    id: str
    op: str
    inputs: list
    attrs: dict = field(default_factory=dict)
    train: bool = False
    group: str = ""


CASES: list[Case] = []
_GROUP = [""]


def group(name):
    _GROUP[0] = name


def case(cid, op, inputs, train=False, **attrs):
    if any(c.id == cid for c in CASES):
        raise ValueError(f"duplicate case id {cid}")
    CASES.append(Case(cid, op, list(inputs), attrs, train, _GROUP[0]))


def r(*s):
    return RNG.randn(*s).astype(np.float32)


def u(lo, hi, *s):
    return RNG.uniform(lo, hi, s).astype(np.float32)


def pos(*s):
    return u(0.5, 2.0, *s)


def away(*s):
    """Values with |x| in [0.3, 1.5]: away from kinks and poles at 0."""
    return (u(0.3, 1.5, *s) * RNG.choice([-1.0, 1.0], s)).astype(np.float32)


def ints(lo, hi, *s):
    return ND(RNG.randint(lo, hi, s).astype(np.float32))


def idx(values):
    return ND(np.asarray(values, dtype=np.float32))


# fmt: off
# ----------------------------------------------------------------------------- nn
group("nn")
case("fc-flatten", "FullyConnected", [r(2, 3, 4), r(5, 12), r(5)], num_hidden=5)
case("fc-noflatten", "FullyConnected", [r(2, 3, 4), r(5, 4), r(5)], num_hidden=5, flatten=False)
case("fc-nobias", "FullyConnected", [r(3, 6), r(4, 6)], num_hidden=4, no_bias=True)
case("fc-strings", "FullyConnected", [r(2, 2, 6), r(4, 6)], num_hidden="4", no_bias="True",
     flatten="False")
for t in ("relu", "sigmoid", "tanh", "softrelu", "softsign"):
    case(f"act-{t}", "Activation", [r(2, 5)], act_type=t)
case("leaky-default", "LeakyReLU", [r(2, 5)])
case("leaky-leaky", "LeakyReLU", [r(2, 5)], act_type="leaky", slope=0.1)
case("leaky-elu", "LeakyReLU", [r(2, 5)], act_type="elu", slope="0.5")
case("leaky-selu", "LeakyReLU", [r(2, 5)], act_type="selu")
case("leaky-gelu", "LeakyReLU", [r(2, 5)], act_type="gelu")
case("leaky-prelu", "LeakyReLU", [r(2, 3, 4), u(0.05, 0.5, 3)], act_type="prelu")
case("leaky-prelu-scalar", "LeakyReLU", [r(2, 3), u(0.05, 0.5, 1)], act_type="prelu")
case("dropout-infer", "Dropout", [r(3, 4)], p=0.5)
case("dropout-p0-train", "Dropout", [r(3, 4)], train=True, p=0.0)
case("flatten-4d", "Flatten", [r(2, 3, 2, 2)])
case("flatten-2d", "Flatten", [r(3, 4)])
case("relu", "relu", [r(3, 4)])
case("softmax-last", "softmax", [r(2, 5)])
case("softmax-axis0-temp", "softmax", [r(3, 4)], axis=0, temperature=2.0)
case("softmax-3d-axis1", "softmax", [r(2, 3, 4)], axis="1")
case("log_softmax-last", "log_softmax", [r(2, 5)])
case("log_softmax-axis1-temp", "log_softmax", [r(2, 3, 4)], axis=1, temperature="0.5")
case("embedding", "Embedding", [ints(0, 6, 2, 3), r(6, 4)], input_dim=6, output_dim=4)
case("embedding-strings", "Embedding", [ints(0, 5, 4), r(5, 3)], input_dim="5", output_dim="3")
case("upsampling-nearest-2", "UpSampling", [r(1, 2, 3, 3)], scale=2, sample_type="nearest")
case("upsampling-nearest-3", "UpSampling", [r(2, 1, 2, 3)], scale="3", sample_type="nearest")
case("softmaxout-null", "SoftmaxOutput", [r(4, 5), ints(0, 5, 4)])
case("softmaxout-batch", "SoftmaxOutput", [r(4, 5), ints(0, 5, 4)], normalization="batch",
     grad_scale=0.5)
case("softmaxout-valid-ignore", "SoftmaxOutput", [r(4, 5), idx([1, 0, 1, 3])],
     normalization="valid", use_ignore=True, ignore_label=1)
case("softmaxout-ignore-null", "SoftmaxOutput", [r(4, 5), idx([2, 2, 0, 4])], use_ignore="True",
     ignore_label="2")
case("softmaxout-multi", "SoftmaxOutput", [r(2, 4, 3), ints(0, 4, 2, 3)], multi_output=True)
case("softmaxout-multi-valid", "SoftmaxOutput", [r(2, 4, 3), idx([[0, 1, 2], [0, 3, 0]])],
     multi_output=True, use_ignore=True, ignore_label=0, normalization="valid")
case("softmaxout-multi-batch", "SoftmaxOutput", [r(2, 3, 2), ints(0, 3, 2, 2)], multi_output="True",
     normalization="batch", grad_scale="2")
case("softmaxout-preserve", "SoftmaxOutput", [r(2, 3, 4), ints(0, 4, 2, 3)], preserve_shape=True)
case("linreg", "LinearRegressionOutput", [r(3, 2), ND(r(3, 2))])
case("linreg-scale", "LinearRegressionOutput", [r(4, 1), ND(r(4, 1))], grad_scale=2.0)
case("logreg", "LogisticRegressionOutput", [r(3, 2), ints(0, 2, 3, 2)])
case("logreg-scale", "LogisticRegressionOutput", [r(3, 2), ints(0, 2, 3, 2)], grad_scale="0.5")
case("maereg", "MAERegressionOutput", [r(3, 2), ND(r(3, 2))])
case("maereg-scale", "MAERegressionOutput", [r(4, 3), ND(r(4, 3))], grad_scale=3.0)

# ----------------------------------------------------------------------------- conv / pooling
group("conv")
case("conv1d", "Convolution", [r(2, 3, 7), r(4, 3, 3), r(4)], kernel=(3,), num_filter=4)
case("conv1d-s2p1d2", "Convolution", [r(2, 2, 9), r(3, 2, 3), r(3)], kernel=(3,), num_filter=3,
     stride=(2,), pad=(1,), dilate=(2,))
case("conv2d", "Convolution", [r(2, 3, 6, 6), r(4, 3, 3, 3), r(4)], kernel="(3, 3)", num_filter="4")
case("conv2d-s2p1-nobias", "Convolution", [r(2, 3, 6, 6), r(4, 3, 3, 3)], kernel=(3, 3),
     num_filter=4, stride=(2, 2), pad=(1, 1), no_bias=True)
case("conv2d-dilate-asym", "Convolution", [r(1, 2, 7, 6), r(3, 2, 3, 2), r(3)], kernel=(3, 2),
     num_filter=3, dilate=(2, 1), pad=(2, 1), stride=(1, 2))
case("conv2d-group", "Convolution", [r(1, 4, 5, 5), r(6, 2, 3, 3), r(6)], kernel=(3, 3),
     num_filter=6, num_group=2)
case("conv2d-depthwise", "Convolution", [r(2, 4, 5, 5), r(4, 1, 3, 3)], kernel=(3, 3), num_filter=4,
     num_group="4", pad="(1, 1)", no_bias="True")
case("conv3d", "Convolution", [r(1, 2, 4, 4, 4), r(3, 2, 2, 2, 2), r(3)], kernel=(2, 2, 2),
     num_filter=3, stride=(1, 2, 1), pad=(1, 0, 1))
case("deconv2d", "Deconvolution", [r(1, 3, 3, 3), r(3, 2, 3, 3)], kernel=(3, 3), num_filter=2)
case("deconv2d-s2p1adj-bias", "Deconvolution", [r(1, 3, 3, 3), r(3, 2, 3, 3), r(2)], kernel=(3, 3),
     num_filter=2, stride=(2, 2), pad=(1, 1), adj=(1, 1), no_bias=False)
case("deconv2d-group", "Deconvolution", [r(1, 4, 3, 3), r(4, 1, 2, 2)], kernel=(2, 2), num_filter=2,
     num_group=2, stride=(2, 2))
case("deconv1d", "Deconvolution", [r(2, 2, 4), r(2, 3, 3)], kernel=(3,), num_filter=3, stride=(2,),
     pad=(1,))
case("deconv2d-strings", "Deconvolution", [r(2, 2, 3, 2), r(2, 3, 2, 2), r(3)], kernel="(2, 2)",
     stride="(2, 1)", num_filter="3", no_bias="False", adj="(1, 0)")
case("pool2d-max-valid", "Pooling", [r(1, 2, 5, 5)], kernel=(2, 2), stride=(2, 2))
case("pool2d-max-full", "Pooling", [r(1, 2, 5, 5)], kernel=(2, 2), stride=(2, 2),
     pooling_convention="full")
case("pool2d-max-pad", "Pooling", [r(1, 2, 4, 5)], kernel=(3, 3), stride=(2, 2), pad=(1, 1))
case("pool2d-avg-incl", "Pooling", [r(1, 2, 5, 5)], pool_type="avg", kernel=(3, 3), stride=(2, 2),
     pad=(1, 1), count_include_pad=True)
case("pool2d-avg-excl", "Pooling", [r(1, 2, 5, 5)], pool_type="avg", kernel=(3, 3), stride=(2, 2),
     pad=(1, 1), count_include_pad=False)
case("pool2d-avg-full-excl", "Pooling", [r(1, 1, 6, 6)], pool_type="avg", kernel=(3, 3),
     stride=(2, 2), pad=(1, 1), pooling_convention="full", count_include_pad="False")
case("pool2d-avg-full-incl", "Pooling", [r(1, 1, 6, 5)], pool_type="avg", kernel=(2, 2),
     stride=(2, 2), pooling_convention="full")
case("pool2d-sum", "Pooling", [r(2, 1, 4, 6)], pool_type="sum", kernel=(2, 3), stride=(1, 2))
case("pool2d-global-max", "Pooling", [r(2, 3, 3, 4)], global_pool=True, kernel=(1, 1))
case("pool2d-global-avg", "Pooling", [r(2, 3, 3, 4)], global_pool="True", pool_type="avg",
     kernel=(2, 2))
case("pool2d-global-sum", "Pooling", [r(1, 2, 2, 3)], global_pool=True, pool_type="sum",
     kernel=(1, 1))
case("pool1d-max", "Pooling", [r(2, 3, 7)], kernel=(3,), stride=(2,))
case("pool1d-avg-pad-excl", "Pooling", [r(2, 2, 6)], pool_type="avg", kernel=(3,), pad=(1,),
     count_include_pad=False)
case("pool1d-sum-full", "Pooling", [r(1, 2, 6)], pool_type="sum", kernel=(2,), stride=(2,),
     pooling_convention="full", pad=(1,))
case("pool2d-strings", "Pooling", [r(1, 2, 4, 4)], kernel="(2, 2)", stride="(1, 1)",
     pool_type="avg")
case("pool3d-max", "Pooling", [r(1, 1, 4, 4, 4)], kernel=(2, 2, 2), stride=(2, 2, 2))
# fmt: on

# MXNet 1.9.1 (MKLDNN) returns a wrong max-pooling gradient when the forward was recorded
# with train_mode=False (no workspace is kept), so every Pooling case is recorded in
# training mode; Pooling itself does not depend on the mode.
for _c in CASES:
    if _c.op == "Pooling":
        _c.train = True

# fmt: off
# depthwise convolutions (XLA:CPU lowers them as shifted multiply-adds: _ops/defs/conv.py)
case("conv2d-depthwise-s2-mult2", "Convolution", [r(2, 3, 7, 6), r(6, 1, 3, 3), r(6)],
     kernel=(3, 3), num_filter=6, num_group=3, stride=(2, 2), pad=(1, 1))
case("conv2d-depthwise-dilate-5x3", "Convolution", [r(1, 4, 9, 8), r(4, 1, 5, 3)],
     kernel=(5, 3), num_filter=4, num_group=4, dilate=(2, 1), pad=(2, 0), no_bias=True)
# fmt: on

"""Deterministic weights for model-zoo networks, computed the same way by MXNet and gluonjax.

``tools/make_model_zoo_fixtures.py`` (real MXNet) and ``tests/gluon/test_model_zoo.py``
both fill every parameter with :func:`recipe_value` of its structural name and shape,
so the fixtures store MXNet's outputs, not its (tens of MB of) weights. NumPy only.
"""

from __future__ import annotations

import math
import zlib

import numpy as np

# every get_model name and the input side it runs at: the smallest MXNet's layers accept
# (SqueezeNet and DenseNet end with fixed 13x13 / 7x7 average pools, Inception V3 with 8x8)
MODEL_INPUT = {
    **{f"resnet{d}_v{v}": 32 for v in (1, 2) for d in (18, 34, 50, 101, 152)},
    **{f"vgg{d}{bn}": 32 for d in (11, 13, 16, 19) for bn in ("", "_bn")},
    "alexnet": 64,
    **{f"densenet{d}": 224 for d in (121, 161, 169, 201)},
    "squeezenet1.0": 224,
    "squeezenet1.1": 224,
    "inceptionv3": 299,
    **{f"mobilenet{w}": 32 for w in ("1.0", "0.75", "0.5", "0.25")},
    **{f"mobilenetv2_{w}": 32 for w in ("1.0", "0.75", "0.5", "0.25")},
}

_POOL_SIZE = 1_000_003  # prime: a parameter's values never line up with its rows


def _pool():
    if not hasattr(_pool, "values"):
        _pool.values = np.random.RandomState(2024).standard_normal(_POOL_SIZE).astype(np.float32)
    return _pool.values


def recipe_value(name, shape):
    """The value of parameter ``name`` (structural, e.g. ``features.0.weight``) of ``shape``.

    Standard normal numbers from a fixed pool, starting at an offset given by the
    name, scaled by kind: He-scaled weights (so deep stacks keep their scale),
    gamma near 1, small biases, betas and running means, running variances in [1, 2).
    """
    shape = tuple(int(s) for s in shape)
    n = math.prod(shape)
    pool = _pool()
    start = zlib.crc32(name.encode()) % _POOL_SIZE
    base = np.resize(np.concatenate([pool[start:], pool[:start]]), n)
    if name.endswith("weight") and len(shape) > 1:
        out = base * np.float32(math.sqrt(2.0 / math.prod(shape[1:])))
    elif name.endswith("gamma"):
        out = 1 + np.float32(0.1) * base
    elif name.endswith("running_var"):
        out = 1 + np.float32(0.5) * np.abs(np.tanh(base))
    else:  # beta, bias, running_mean
        out = np.float32(0.1) * base
    return out.astype(np.float32).reshape(shape)


def recipe_input(name, batch=1, side=None):
    """The input image batch for model ``name`` (``side`` defaults to its MODEL_INPUT):
    uniform in [-1, 1)."""
    side = side or MODEL_INPUT[name]
    rng = np.random.RandomState(zlib.crc32(name.encode()) % (2**31))
    return rng.uniform(-1, 1, (batch, 3, side, side)).astype(np.float32)

"""Neural-network operators: FullyConnected, Activation, LeakyReLU, Dropout, softmax..."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ..bounds import check_values
from ..precise import expm1
from ..registry import Attr, register
from . import _subgrad


def _fc_inputs(attrs):
    return ("data", "weight") if attrs["no_bias"] else ("data", "weight", "bias")


def _fc_infer(attrs, shapes):
    data = shapes["data"]
    n = attrs["num_hidden"]
    k = math.prod(data[1:]) if attrs["flatten"] else data[-1]
    out = {"weight": (n, k)}
    if not attrs["no_bias"]:
        out["bias"] = (n,)
    return out


@register(
    "FullyConnected",
    inputs=_fc_inputs,
    attrs={
        "num_hidden": Attr("int"),
        "no_bias": Attr("bool", False),
        "flatten": Attr("bool", True),
    },
    infer_args=_fc_infer,
)
def fully_connected(data, weight, bias=None, *, num_hidden, no_bias, flatten):
    """``data @ weight.T + bias``; with ``flatten`` the data is first made 2-D.

    Inputs: data (batch, ...), weight (num_hidden, in_units), bias (num_hidden,).
    """
    if flatten:
        data = data.reshape(data.shape[0], -1)
    if weight.shape[0] != num_hidden or weight.shape[1] != data.shape[-1]:
        raise ValueError(
            f"weight shape {weight.shape} does not match (num_hidden, in_units) = "
            f"({num_hidden}, {data.shape[-1]})"
        )
    out = jax.lax.dot_general(data, weight, (((data.ndim - 1,), (1,)), ((), ())))
    if bias is not None:
        if bias.shape not in ((num_hidden,), (num_hidden, 1)):  # MXNet takes both
            raise ValueError(
                f"bias shape {bias.shape} must be (num_hidden,) or (num_hidden, 1) with "
                f"num_hidden = {num_hidden}"
            )
        out = out + bias.reshape(num_hidden)
    return out


def _act(x, act_type):
    if act_type == "relu":
        return _subgrad.relu(x)
    if act_type == "sigmoid":
        return jax.nn.sigmoid(x)
    if act_type == "tanh":
        return jnp.tanh(x)
    if act_type == "softrelu":
        return jax.nn.softplus(x)
    if act_type == "softsign":
        return x / (1 + jnp.abs(x))
    if act_type == "log_sigmoid":
        return jax.nn.log_sigmoid(x)
    if act_type == "mish":
        return x * jnp.tanh(jax.nn.softplus(x))
    raise ValueError(f"unknown act_type {act_type!r}")


ACT_TYPES = ("relu", "sigmoid", "tanh", "softrelu", "softsign", "log_sigmoid", "mish")


@register("Activation", attrs={"act_type": Attr("str", choices=ACT_TYPES)}, bucket="map")
def activation(data, *, act_type):
    """Element-wise activation: relu, sigmoid, tanh, softrelu, softsign, log_sigmoid, mish."""
    return _act(data, act_type)


_LEAKY = ("leaky", "prelu", "rrelu", "elu", "selu", "gelu")


def _prelu_gamma_shape(gamma, data):
    """MXNet's ``expand_shape``: gamma's dimensions, from the last, align with data's axes 1
    and 0 where they are equal or 1; every other axis broadcasts."""
    src, out = list(gamma.shape), [1] * data.ndim
    s = len(src) - 1
    for i in range(data.ndim - 1, -1, -1):
        if s >= 0 and i <= 1 and src[s] in (data.shape[i], 1):
            out[i] = src[s]
            s -= 1
    if s != -1:
        raise ValueError(
            f"prelu: gamma of shape {gamma.shape} does not fit data of shape {data.shape}: "
            f"gamma aligns with the data's first two axes (channel-wise: gamma of shape "
            f"({data.shape[1] if data.ndim > 1 else 1},))"
        )
    return tuple(out)


@register(
    "LeakyReLU",
    inputs=lambda a: ("data", "gamma") if a["act_type"] == "prelu" else ("data",),
    attrs={
        "act_type": Attr("str", "leaky", choices=_LEAKY),
        "slope": Attr("float", 0.25),
        "lower_bound": Attr("float", 0.125),
        "upper_bound": Attr("float", 0.334),
    },
    infer_args=lambda a, s: (
        {"gamma": (s["data"][1] if len(s["data"]) > 1 else 1,)} if a["act_type"] == "prelu" else {}
    ),
    num_outputs=lambda a: 2 if a["act_type"] == "rrelu" else 1,
    output_names=("output", "mask"),
)
def leaky_relu(data, gamma=None, *, act_type, slope, lower_bound, upper_bound):
    """Leaky family: ``leaky`` (x or slope*x), ``prelu`` (learned ``gamma`` per channel),
    ``elu``, ``selu``, ``gelu`` and ``rrelu``.

    ``rrelu`` returns ``[output, mask]`` as MXNet does; gluonjax applies the mean slope
    ``(lower_bound + upper_bound) / 2`` (MXNet's inference rule) in training too, and the
    mask holds that slope. Its gradient is 1 for ``x > 0`` and the slope elsewhere
    (MXNet 1.9.1's inference-mode backward reads an uninitialised mask instead).
    """
    if act_type == "leaky":
        return jnp.where(data > 0, data, data * slope)
    if act_type == "prelu":
        return jnp.where(data > 0, data, data * gamma.reshape(_prelu_gamma_shape(gamma, data)))
    if act_type == "rrelu":
        mean = jnp.asarray((lower_bound + upper_bound) / 2, data.dtype)
        return jnp.where(data > 0, data, data * mean), jnp.full_like(data, mean)
    # the exponential branch is evaluated on where(x > 0, 0, x): finite everywhere, and
    # its derivative at x = 0 is the left one (slope; lambda * alpha), as in MXNet.
    # MXNet's float32 formulas and evaluation order (mshadow_op.h): elu = slope * expm1(x),
    # selu = LAMBDA * (ALPHA * expm1(x)), gelu = (0.5 * x) * (1 + erf(x / SQRT_2))
    neg = jnp.where(data > 0, jnp.zeros((), data.dtype), data)
    if act_type == "elu":
        return jnp.where(data > 0, data, slope * expm1(neg))
    if act_type == "selu":
        alpha, lam = 1.6732632423543772, 1.0507009873554805
        return lam * jnp.where(data > 0, data, alpha * expm1(neg))
    return 0.5 * data * (1 + jax.scipy.special.erf(data / math.sqrt(2.0)))


@register(
    "Dropout",
    attrs={
        "p": Attr("float", 0.5),
        "mode": Attr("str", "training", choices=("training", "always")),
        "axes": Attr("shape", ()),
        "cudnn_off": Attr("bool", False),
    },
    mode=True,
    random=True,
)
def dropout(_key, data, *, p, mode, axes, cudnn_off, _train=False):
    """Zero elements with probability ``p`` and scale the rest by 1/(1-p) (training only).
    ``p=1`` gives NaN everywhere, as MXNet's ``0 * 1/(1-p)``.

    ``axes`` shares the mask along those axes (variational dropout).
    """
    if not (_train or mode == "always") or p <= 0:
        return data
    if p >= 1:  # MXNet: 0 * (1 / (1 - p)) is NaN, the output and its gradient
        return data * jnp.asarray(jnp.nan, data.dtype)
    mshape = tuple(1 if i in axes else d for i, d in enumerate(data.shape))
    keep = jax.random.bernoulli(_key, jnp.float32(1.0 - p), mshape)  # a float32 draw (x64 on)
    return jnp.where(keep, data / (1.0 - p), 0).astype(data.dtype)


@register("Flatten", aliases=("flatten",))
def flatten(data):
    """Collapse every axis but the first: (d0, d1, ..., dk) -> (d0, d1*...*dk)."""
    return data.reshape(data.shape[0], -1) if data.ndim else data.reshape(1, 1)


_SOFTMAX_ATTRS = {
    "axis": Attr("int", -1),
    "temperature": Attr("float?", None),
    "dtype": Attr("dtype?", None),
    "use_length": Attr("bool", False),
}


def _softmax_inputs(attrs):
    return ("data", "length") if attrs["use_length"] else ("data",)


def _masked(data, length, axis):
    if length is None:
        return data, None
    ax = axis % data.ndim
    idx = jnp.arange(data.shape[ax]).reshape([-1 if i == ax else 1 for i in range(data.ndim)])
    lens = jnp.expand_dims(length, ax)
    mask = idx < lens
    return jnp.where(mask, data, -jnp.inf), mask


def _softmax_family(kind):
    def impl(data, length=None, *, axis, temperature, dtype, use_length):
        x = data.astype(dtype) if dtype else data
        if temperature is not None and temperature != 1.0:
            x = x / temperature
        if kind == "softmin":
            x = -x
        x, mask = _masked(x, length, axis)
        # float16 sums in float32 (MXNet's accumulation type): a float16 backward
        # sum(g * y) over hundreds of elements loses the whole gradient
        half = x.dtype in (jnp.float16, jnp.bfloat16)
        xa = x.astype(jnp.float32) if half else x
        if kind == "log_softmax":
            out = jax.nn.log_softmax(xa, axis=axis)
        else:
            out = jax.nn.softmax(xa, axis=axis)
        out = out.astype(x.dtype) if half else out
        if mask is not None:
            out = jnp.where(mask, out, 0)
        return out

    impl.__doc__ = f"{kind} along ``axis`` (optionally with temperature and lengths)."
    return impl


for _kind in ("softmax", "log_softmax", "softmin"):
    register(_kind, inputs=_softmax_inputs, attrs=_SOFTMAX_ATTRS)(_softmax_family(_kind))


@register(
    "Embedding",
    inputs=("data", "weight"),
    attrs={
        "input_dim": Attr("int"),
        "output_dim": Attr("int"),
        "dtype": Attr("dtype", "float32"),
        "sparse_grad": Attr("bool", False),
    },
    infer_args=lambda a, s: {"weight": (a["input_dim"], a["output_dim"])},
    check=lambda a, arrays: check_values(
        arrays[0], 0, a["input_dim"], 0, (a["input_dim"], a["output_dim"]), "Embedding"
    ),
    graph_check=False,
)
def embedding(data, weight, *, input_dim, output_dim, dtype, sparse_grad):
    """Rows of ``weight`` picked by the (float or int) indices in ``data``.

    In eager mode an index outside ``[0, input_dim)`` raises ``IndexError`` (MXNet 1.9.1
    clips silently there); inside a traced (hybridized) program and a bound executor
    indices are clipped, as in MXNet (whose bucketing iterators pad with -1).
    ``weight`` must have shape ``(input_dim, output_dim)``."""
    if tuple(weight.shape) != (input_dim, output_dim):
        raise ValueError(
            f"weight has shape {tuple(weight.shape)} but input_dim={input_dim}, "
            f"output_dim={output_dim} need ({input_dim}, {output_dim})"
        )
    idx = jnp.clip(data.astype(jnp.int32), 0, input_dim - 1)
    return jnp.take(weight, idx, axis=0)


@register(
    "_contrib_SparseEmbedding",
    inputs=("data", "weight"),
    attrs={
        "input_dim": Attr("int"),
        "output_dim": Attr("int"),
        "dtype": Attr("dtype", "float32"),
        "deterministic": Attr("bool", False),
    },
    infer_args=lambda a, s: {"weight": (a["input_dim"], a["output_dim"])},
    check=lambda a, arrays: check_values(
        arrays[0], 0, a["input_dim"], 0, (a["input_dim"], a["output_dim"]), "SparseEmbedding"
    ),
    graph_check=False,
)
def sparse_embedding(data, weight, *, input_dim, output_dim, dtype, deterministic):
    """MXNet's ``contrib.SparseEmbedding``: Embedding's rows; its weight gradient is
    row_sparse (a bound executor's gradient array is; the values are dense underneath,
    see docs/sparse.md). ``deterministic`` is accepted and changes nothing: the gradient
    is one XLA scatter-add, deterministic on CPU (on GPU set XLA's
    ``--xla_gpu_deterministic_ops`` for bit-identical sums)."""
    return embedding(
        data, weight, input_dim=input_dim, output_dim=output_dim, dtype=dtype, sparse_grad=True
    )

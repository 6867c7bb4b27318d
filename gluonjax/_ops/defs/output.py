"""Loss-output operators: SoftmaxOutput, *RegressionOutput, SVMOutput, softmax_cross_entropy.

The ``*Output`` ops are identities (or softmax/sigmoid) in the forward pass; their
gradient w.r.t. ``data`` is the loss gradient, which IGNORES the incoming head
gradient (as in MXNet), and ``label`` gets a zero gradient.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ..registry import Attr, register

_LOSS_INPUTS = ("data", "label")


def _with_grad(forward, grad_fn):
    """``f(data, label)`` computing ``forward(data)`` whose data-gradient is
    ``grad_fn(out, label, head)`` and whose label-gradient is zero."""

    @jax.custom_vjp
    def f(data, label):
        return forward(data)

    def fwd(data, label):
        out = forward(data)
        return out, (out, label)

    def bwd(res, head):
        out, label = res
        return grad_fn(out, label, head).astype(out.dtype), jnp.zeros_like(label)

    f.defvjp(fwd, bwd)
    return f


def _label_like(label, shape, op):
    if math.prod(label.shape) != math.prod(shape):
        raise ValueError(f"label shape {tuple(label.shape)} does not match {tuple(shape)}")
    return label.reshape(shape)


@register(
    "SoftmaxOutput",
    head_free=True,
    aliases=("Softmax",),
    inputs=_LOSS_INPUTS,
    attrs={
        "grad_scale": Attr("float", 1.0),
        "ignore_label": Attr("float", -1.0),
        "multi_output": Attr("bool", False),
        "use_ignore": Attr("bool", False),
        "preserve_shape": Attr("bool", False),
        "normalization": Attr("str", "null", choices=("null", "batch", "valid")),
        "out_grad": Attr("bool", False),
        "smooth_alpha": Attr("float", 0.0),
    },
    infer_args=lambda a, s: {"label": _softmax_label_shape(a, s["data"])},
)
def softmax_output(
    data,
    label,
    *,
    grad_scale,
    ignore_label,
    multi_output,
    use_ignore,
    preserve_shape,
    normalization,
    out_grad,
    smooth_alpha,
):
    """Softmax forward; backward ``(softmax - onehot(label)) * grad_scale / normalizer``.

    Softmax axis: 1 for ``multi_output`` (label (N, ...)), the last for
    ``preserve_shape`` (label = data.shape[:-1]), else over data flattened to
    (N, -1) (label (N,)). ``normalizer``: ``null`` -> 1 (the spatial size with
    ``multi_output``), ``batch`` -> label size, ``valid`` -> number of labels !=
    ``ignore_label``. ``use_ignore`` zeroes the gradient of ignored positions;
    ``smooth_alpha`` smooths the one-hot target. ``out_grad`` multiplies the
    gradient by the softmax output (what MXNet 1.9.1 actually does). A label of the
    data's shape holds probabilities: the gradient is ``(softmax - label) * grad_scale``
    (times the head gradient with ``out_grad``), as in MXNet.
    """
    shape = data.shape
    if multi_output:
        if data.ndim < 2:
            raise ValueError("multi_output needs data of at least 2 dimensions (N, C, ...)")
        axis, x = 1, data
        lshape = (shape[0],) + shape[2:]
    elif preserve_shape:
        axis, x, lshape = data.ndim - 1, data, shape[:-1]
    else:
        x = data.reshape(shape[0], -1) if data.ndim != 2 else data
        axis, lshape = 1, (shape[0],)
    if tuple(label.shape) == tuple(shape) and tuple(lshape) != tuple(shape):
        # MXNet: a label of the data's shape holds class probabilities (soft labels)
        def prob_grad(p, lab, head):
            g = (p - lab) * grad_scale
            return g * head if out_grad else g

        f = _with_grad(lambda d: jax.nn.softmax(d, axis=axis), prob_grad)
        return f(x, label.astype(x.dtype).reshape(x.shape)).reshape(shape)
    if data.ndim > 2 and not (multi_output or preserve_shape):
        if tuple(label.shape) == tuple(shape[:-1]):
            # MXNet's inferred label shape for this case; its backward reads the first N
            # of these labels as the N rows' classes (checked against MXNet 1.9.1)
            label = label.reshape(-1)[: shape[0]]
    label = _label_like(label, lshape, "SoftmaxOutput").astype(x.dtype)
    n_class = x.shape[axis]
    spatial = math.prod(shape[2:]) if multi_output else 1

    def grad_fn(p, lab, head):
        lab = jnp.expand_dims(lab, axis)
        cls = jnp.arange(n_class).reshape([-1 if i == axis else 1 for i in range(p.ndim)])
        hot = (lab == cls).astype(p.dtype)
        if smooth_alpha > 0:
            hot = hot * (1 - smooth_alpha) + (1 - hot) * (smooth_alpha / max(n_class - 1, 1))
        g = p - hot
        keep = (lab != ignore_label).astype(p.dtype)
        if use_ignore:
            g = g * keep
        if normalization == "valid":
            norm = jnp.maximum(jnp.sum(keep), 1.0)
        elif normalization == "batch":
            norm = float(math.prod(lshape))
        else:
            norm = float(spatial)
        g = g * (grad_scale / norm)
        return g * p if out_grad else g

    f = _with_grad(lambda d: jax.nn.softmax(d, axis=axis), grad_fn)
    return f(x, label).reshape(shape)


def _softmax_label_shape(attrs, dshape):
    if attrs["multi_output"]:
        return (dshape[0],) + tuple(dshape[2:])
    # MXNet infers data.shape[:-1] for the other cases too: (N,) for 2-d data
    return tuple(dshape[:-1])


_REGRESSION = {
    "LinearRegressionOutput": (lambda x: x, lambda out, lab: out - lab),
    # MXNet's MAE gradient is +1 where out > label and -1 elsewhere (also at out == label)
    "MAERegressionOutput": (lambda x: x, lambda out, lab: jnp.where(out - lab > 0, 1.0, -1.0)),
    "LogisticRegressionOutput": (jax.nn.sigmoid, lambda out, lab: out - lab),
}


def _regression(name):
    forward, diff = _REGRESSION[name]

    def impl(data, label, *, grad_scale):
        lab = _label_like(label, data.shape, name).astype(data.dtype)
        per_sample = math.prod(data.shape[1:]) if data.ndim > 1 else 1

        def grad_fn(out, lab_, head):
            return diff(out, lab_) * (grad_scale / per_sample)

        return _with_grad(forward, grad_fn)(data, lab)

    impl.__doc__ = (
        f"{name}: forward is {'sigmoid' if forward is jax.nn.sigmoid else 'the identity'}; "
        "the data gradient is ``d(out, label) * grad_scale / (outputs per sample)``, "
        "ignoring the head gradient."
    )
    return impl


for _name in _REGRESSION:
    register(
        _name,
        inputs=_LOSS_INPUTS,
        attrs={"grad_scale": Attr("float", 1.0)},
        infer_args=lambda a, s: {"label": tuple(s["data"])},
        head_free=True,
    )(_regression(_name))


@register(
    "SVMOutput",
    head_free=True,
    inputs=_LOSS_INPUTS,
    attrs={
        "margin": Attr("float", 1.0),
        "regularization_coefficient": Attr("float", 1.0),
        "use_linear": Attr("bool", False),
    },
    infer_args=lambda a, s: {"label": (s["data"][0],)},
)
def svm_output(data, label, *, margin, regularization_coefficient, use_linear):
    """Identity forward; one-vs-all hinge (squared, or linear with ``use_linear``) gradient.

    For the labelled class ``-c * [margin > x]`` (linear) or ``-2c * max(0, margin - x)``,
    for the others ``c * [margin > -x]`` or ``2c * max(0, margin + x)``; ``c`` is
    ``regularization_coefficient``. Data (N, K), label (N,).
    """
    x = data.reshape(data.shape[0], -1)
    label = _label_like(label, (data.shape[0],), "SVMOutput").astype(data.dtype)
    c = regularization_coefficient

    def grad_fn(out, lab, head):
        hot = lab[:, None] == jnp.arange(out.shape[1])[None, :]
        if use_linear:
            pos, neg = -c * (margin > out), c * (margin > -out)
        else:
            pos, neg = -2 * c * jnp.maximum(margin - out, 0), 2 * c * jnp.maximum(margin + out, 0)
        return jnp.where(hot, pos, neg)

    return _with_grad(lambda d: d, grad_fn)(x, label).reshape(data.shape)


@register("softmax_cross_entropy", inputs=_LOSS_INPUTS)
def softmax_cross_entropy(data, label):
    """Sum over the batch of ``-log(softmax(data)[i, label[i]])``; data (N, K), label (N,).

    Output shape (1,).
    """
    if data.ndim != 2:
        raise ValueError(f"data must be 2-D (batch, classes), got {tuple(data.shape)}")
    label = _label_like(label, (data.shape[0],), "softmax_cross_entropy")
    logp = jax.nn.log_softmax(data, axis=1)
    idx = jnp.clip(label.astype(jnp.int32), 0, data.shape[1] - 1)
    picked = jnp.take_along_axis(logp, idx[:, None], axis=1)
    return -jnp.sum(picked).reshape(1)

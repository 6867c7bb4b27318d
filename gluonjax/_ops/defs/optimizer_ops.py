"""Optimizer update operators (``sgd_update``, ``adam_update``, ``multi_sgd_mom_update``...).

MXNet's formulas (``src/operator/optimizer_op-inl.h``), as pure functions: each op
returns the new weight and, as auxiliary states, the new optimizer states, which
``nd`` writes back into the state arrays passed in (MXNet's mutable inputs). Call
them as MXNet code does, with ``out=weight``::

    nd.sgd_mom_update(weight, grad, mom, out=weight, lr=0.1, momentum=0.9)

Conventions, as in MXNet: ``rescale_grad`` multiplies the gradient; clipping is on
when ``clip_gradient >= 0`` (the default -1 turns it off); the plain ops compute in
the weight's dtype, the ``mp_`` ops keep float32 master weights (``weight32``) and
float32 states for float16 weights. The numbers are traced, so a new learning rate
does not recompile. When MXNet updates the weight in place, ``nag_mom_update``'s
kernel reads the updated weight back for the momentum; these ops are pure, so
they give the formula's value (``mp_nag_mom_update`` keeps MXNet's use of the new
float32 weight, which is part of its formula).

Examples
--------
>>> import gluonjax as mx
>>> w, g, m = mx.nd.ones((2,)), mx.nd.ones((2,)), mx.nd.zeros((2,))
>>> _ = mx.nd.sgd_mom_update(w, g, m, out=w, lr=0.1, momentum=0.9)
>>> [round(v, 3) for v in w.asnumpy().tolist()], [round(v, 3) for v in m.asnumpy().tolist()]
([0.9, 0.9], [-0.1, -0.1])
"""

from __future__ import annotations

import jax.numpy as jnp

from ..registry import REQUIRED, Attr, register

_MAX_WEIGHTS = 64  # multi-tensor ops: the most weights one call can update


def _f(default=REQUIRED):
    return Attr("float", default, static=False)


_COMMON = {"wd": _f(0.0), "rescale_grad": _f(1.0), "clip_gradient": _f(-1.0)}


def _clip(g, c):
    """MXNet's clipping: on when ``c >= 0``."""
    c = jnp.asarray(c, g.dtype)
    return jnp.where(c >= 0, jnp.clip(g, -c, c), g)


def _dt(x, *vals):
    return [jnp.asarray(v, x.dtype) for v in vals]


def _op(name, inputs, attrs, aux=(), aliases=()):
    def deco(fn):
        return register(name, inputs=inputs, attrs=attrs, aux=aux, aliases=aliases)(fn)

    return deco


# ----------------------------------------------------------------------------- SGD
def _sgd_step(w, g, lr, wd, rescale, clip):
    return (1 - lr * wd) * w - lr * _clip(rescale * g, clip)


def _mom_step(w, g, mom, lr, wd, momentum, rescale, clip):
    mom = momentum * mom - lr * wd * w - lr * _clip(rescale * g, clip)
    return w + mom, mom


@_op("sgd_update", ("weight", "grad"), dict(lr=_f(), **_COMMON, lazy_update=Attr("bool", True)))
def sgd_update(weight, grad, *, lr, wd, rescale_grad, clip_gradient, lazy_update):
    """``weight = (1 - lr*wd)*weight - lr*clip(rescale_grad*grad)``."""
    lr, wd, rg, cg = _dt(weight, lr, wd, rescale_grad, clip_gradient)
    return _sgd_step(weight, grad, lr, wd, rg, cg)


@_op(
    "sgd_mom_update",
    ("weight", "grad", "mom"),
    dict(lr=_f(), momentum=_f(0.0), **_COMMON, lazy_update=Attr("bool", True)),
    aux=("mom",),
)
def sgd_mom_update(
    weight, grad, mom, *, lr, momentum, wd, rescale_grad, clip_gradient, lazy_update
):
    """``mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad)``;
    ``weight += mom`` (``mom`` is updated in place)."""
    lr, m, wd, rg, cg = _dt(weight, lr, momentum, wd, rescale_grad, clip_gradient)
    w, mom = _mom_step(weight, grad, mom, lr, wd, m, rg, cg)
    return w, (mom,)


def _f32(*xs):
    return [x.astype(jnp.float32) for x in xs]


@_op(
    "mp_sgd_update",
    ("weight", "grad", "weight32"),
    dict(lr=_f(), **_COMMON, lazy_update=Attr("bool", True)),
    aux=("weight32",),
)
def mp_sgd_update(weight, grad, weight32, *, lr, wd, rescale_grad, clip_gradient, lazy_update):
    """``sgd_update`` on the float32 master copy ``weight32``; the output is its cast."""
    (g,) = _f32(grad)
    w32 = _sgd_step(weight32, g, lr, wd, rescale_grad, clip_gradient)
    return w32.astype(weight.dtype), (w32,)


@_op(
    "mp_sgd_mom_update",
    ("weight", "grad", "mom", "weight32"),
    dict(lr=_f(), momentum=_f(0.0), **_COMMON, lazy_update=Attr("bool", True)),
    aux=("mom", "weight32"),
)
def mp_sgd_mom_update(
    weight, grad, mom, weight32, *, lr, momentum, wd, rescale_grad, clip_gradient, lazy_update
):
    """``sgd_mom_update`` on the float32 master copy and float32 momentum."""
    (g,) = _f32(grad)
    w32, mom = _mom_step(weight32, g, mom, lr, wd, momentum, rescale_grad, clip_gradient)
    return w32.astype(weight.dtype), (mom, w32)


# ----------------------------------------------------------------------------- NAG
_NAG = dict(lr=_f(), momentum=_f(0.0), **_COMMON)


@_op("nag_mom_update", ("weight", "grad", "mom"), _NAG, aux=("mom",))
def nag_mom_update(weight, grad, mom, *, lr, momentum, wd, rescale_grad, clip_gradient):
    """Nesterov momentum: ``g = clip(rescale_grad*grad) + wd*weight``,
    ``weight += momentum**2*mom - (1+momentum)*lr*g``, ``mom = momentum*mom - lr*g``."""
    lr, m, wd, rg, cg = _dt(weight, lr, momentum, wd, rescale_grad, clip_gradient)
    step = lr * (_clip(rg * grad, cg) + wd * weight)
    mom = m * mom
    w = weight - mom + (m + 1) * (mom - step)
    return w, (mom - step,)


@_op("mp_nag_mom_update", ("weight", "grad", "mom", "weight32"), _NAG, aux=("mom", "weight32"))
def mp_nag_mom_update(
    weight, grad, mom, weight32, *, lr, momentum, wd, rescale_grad, clip_gradient
):
    """``nag_mom_update`` on the float32 master copy; as MXNet's kernel, the momentum's
    weight-decay term uses the updated master weight."""
    (g,) = _f32(grad)
    gc = _clip(rescale_grad * g, clip_gradient)
    mom = momentum * mom
    w32 = weight32 - mom + (momentum + 1) * (mom - lr * (gc + wd * weight32))
    mom = mom - lr * (gc + wd * w32)
    return w32.astype(weight.dtype), (mom, w32)


# ----------------------------------------------------------------------------- Adam family
@_op(
    "adam_update",
    ("weight", "grad", "mean", "var"),
    dict(
        lr=_f(),
        beta1=_f(0.9),
        beta2=_f(0.999),
        epsilon=_f(1e-8),
        **_COMMON,
        lazy_update=Attr("bool", True),
    ),
    aux=("mean", "var"),
)
def adam_update(
    weight,
    grad,
    mean,
    var,
    *,
    lr,
    beta1,
    beta2,
    epsilon,
    wd,
    rescale_grad,
    clip_gradient,
    lazy_update,
):
    """``g = clip(rescale_grad*grad + wd*weight)``; ``mean, var`` moving averages of
    ``g, g**2``; ``weight -= lr*mean/(sqrt(var) + epsilon)`` (no bias correction: the
    optimizer folds it into ``lr``)."""
    lr, b1, b2, eps, wd, rg, cg = _dt(
        weight, lr, beta1, beta2, epsilon, wd, rescale_grad, clip_gradient
    )
    g = _clip(grad * rg + weight * wd, cg)
    mean = b1 * mean + (1 - b1) * g
    var = b2 * var + (1 - b2) * g * g
    return weight - lr * mean / (jnp.sqrt(var) + eps), (mean, var)


def _adamw(w32, g, mean, var, rescale, lr, eta, beta1, beta2, eps, wd, clip):
    g = _clip(rescale * g, clip)
    mean = beta1 * mean + (1 - beta1) * g
    var = beta2 * var + (1 - beta2) * g * g
    new = w32 - eta * (lr * mean / (jnp.sqrt(var) + eps) + wd * w32)
    return new, mean, var


_ADAMW = dict(
    lr=_f(),
    beta1=_f(0.9),
    beta2=_f(0.999),
    epsilon=_f(1e-8),
    wd=_f(0.0),
    eta=_f(),
    clip_gradient=_f(-1.0),
)


@_op(
    "_adamw_update",
    ("weight", "grad", "mean", "var", "rescale_grad"),
    _ADAMW,
    aux=("mean", "var"),
    aliases=("_contrib_adamw_update",),
)
def adamw_update(
    weight, grad, mean, var, rescale_grad, *, lr, beta1, beta2, epsilon, wd, eta, clip_gradient
):
    """AdamW (decoupled weight decay): ``weight -= eta*(lr*mean/(sqrt(var)+eps) + wd*weight)``.
    ``rescale_grad`` is an array; when it is not finite the step is skipped (AMP)."""
    rg = rescale_grad.reshape(()).astype(weight.dtype)
    lr, b1, b2, eps, wd, et, cg = _dt(weight, lr, beta1, beta2, epsilon, wd, eta, clip_gradient)
    new, m, v = _adamw(weight, grad, mean, var, rg, lr, et, b1, b2, eps, wd, cg)
    ok = jnp.isfinite(rg)
    return jnp.where(ok, new, weight), (jnp.where(ok, m, mean), jnp.where(ok, v, var))


@_op(
    "_mp_adamw_update",
    ("weight", "grad", "mean", "var", "weight32", "rescale_grad"),
    _ADAMW,
    aux=("mean", "var", "weight32"),
    aliases=("_contrib_mp_adamw_update",),
)
def mp_adamw_update(
    weight,
    grad,
    mean,
    var,
    weight32,
    rescale_grad,
    *,
    lr,
    beta1,
    beta2,
    epsilon,
    wd,
    eta,
    clip_gradient,
):
    """``_adamw_update`` on the float32 master copy."""
    rg = rescale_grad.reshape(()).astype(jnp.float32)
    (g,) = _f32(grad)
    new, m, v = _adamw(
        weight32, g, mean, var, rg, lr, eta, beta1, beta2, epsilon, wd, clip_gradient
    )
    ok = jnp.isfinite(rg)
    w32 = jnp.where(ok, new, weight32)
    return w32.astype(weight.dtype), (jnp.where(ok, m, mean), jnp.where(ok, v, var), w32)


# ----------------------------------------------------------------------------- LAMB
_LAMB1 = dict(
    beta1=_f(0.9),
    beta2=_f(0.999),
    epsilon=_f(1e-6),
    t=Attr("int", REQUIRED, static=False),
    bias_correction=Attr("bool", True),
    wd=_f(),
    rescale_grad=_f(1.0),
    clip_gradient=_f(-1.0),
)
_LAMB2 = dict(lr=_f(), lower_bound=_f(-1.0), upper_bound=_f(-1.0))


def _lamb1(w, g, mean, var, beta1, beta2, eps, t, bias_correction, wd, rescale, clip):
    g = _clip(g * rescale, clip)
    mean = beta1 * mean + (1 - beta1) * g
    var = beta2 * var + (1 - beta2) * g * g
    if bias_correction:
        m_hat = mean / (1 - beta1**t)
        v_hat = var / (1 - beta2**t)
        out = m_hat / (jnp.sqrt(v_hat) + eps) + wd * w
    else:
        out = mean / (jnp.sqrt(var) + eps) + wd * w
    return out, mean, var


def _lamb2(w, g, r1, r2, lr, lower, upper):
    r1 = r1.reshape(-1)[0]
    r2 = r2.reshape(-1)[0]
    r1 = jnp.where(lower >= 0, jnp.maximum(r1, lower), r1)
    r1 = jnp.where(upper >= 0, jnp.minimum(r1, upper), r1)
    ratio = jnp.where((r1 == 0) | (r2 == 0), 1.0, r1 / jnp.where(r2 == 0, 1.0, r2))
    return w - lr * ratio * g


@_op("lamb_update_phase1", ("weight", "grad", "mean", "var"), _LAMB1, aux=("mean", "var"))
def lamb_update_phase1(
    weight,
    grad,
    mean,
    var,
    *,
    beta1,
    beta2,
    epsilon,
    t,
    bias_correction,
    wd,
    rescale_grad,
    clip_gradient,
):
    """LAMB's direction ``g = mean_hat/(sqrt(var_hat)+eps) + wd*weight`` (moments updated in
    place); phase 2 scales it by the trust ratio ``||weight|| / ||g||``."""
    b1, b2, eps, t, wd, rg, cg = _dt(
        weight, beta1, beta2, epsilon, t, wd, rescale_grad, clip_gradient
    )
    g, m, v = _lamb1(weight, grad, mean, var, b1, b2, eps, t, bias_correction, wd, rg, cg)
    return g, (m, v)


@_op("lamb_update_phase2", ("weight", "g", "r1", "r2"), _LAMB2)
def lamb_update_phase2(weight, g, r1, r2, *, lr, lower_bound, upper_bound):
    """``weight -= lr * r1/r2 * g`` with ``r1 = ||weight||`` clamped to
    ``[lower_bound, upper_bound]`` (when >= 0); the ratio is 1 if either norm is 0."""
    return _lamb2(weight, g, r1, r2, *_dt(weight, lr, lower_bound, upper_bound))


@_op(
    "mp_lamb_update_phase1",
    ("weight", "grad", "mean", "var", "weight32"),
    _LAMB1,
    aux=("mean", "var"),
)
def mp_lamb_update_phase1(
    weight,
    grad,
    mean,
    var,
    weight32,
    *,
    beta1,
    beta2,
    epsilon,
    t,
    bias_correction,
    wd,
    rescale_grad,
    clip_gradient,
):
    """``lamb_update_phase1`` in float32 on the master copy (output float32)."""
    (g,) = _f32(grad)
    out, m, v = _lamb1(
        weight32,
        g,
        mean,
        var,
        beta1,
        beta2,
        epsilon,
        t,
        bias_correction,
        wd,
        rescale_grad,
        clip_gradient,
    )
    return out, (m, v)


@_op("mp_lamb_update_phase2", ("weight", "g", "r1", "r2", "weight32"), _LAMB2, aux=("weight32",))
def mp_lamb_update_phase2(weight, g, r1, r2, weight32, *, lr, lower_bound, upper_bound):
    """``lamb_update_phase2`` on the float32 master copy; the output is its cast.

    The master copy is updated too (MXNet 1.9.1 declares it mutable but its kernel leaves
    it unchanged, so its optimizer restarts every step from the first weights)."""
    w32 = _lamb2(weight32, g, r1, r2, lr, lower_bound, upper_bound)
    return w32.astype(weight.dtype), (w32,)


# ----------------------------------------------------------------------------- RMSProp, FTRL...
_RMS = dict(lr=_f(), gamma1=_f(0.95), epsilon=_f(1e-8), **_COMMON, clip_weights=_f(-1.0))


@_op("rmsprop_update", ("weight", "grad", "n"), _RMS, aux=("n",))
def rmsprop_update(
    weight, grad, n, *, lr, gamma1, epsilon, wd, rescale_grad, clip_gradient, clip_weights
):
    """``g = clip(rescale_grad*grad + wd*weight)``; ``n = (1-gamma1)*g**2 + gamma1*n``;
    ``weight -= lr*g/sqrt(n + epsilon)``, clipped to ``clip_weights`` when >= 0."""
    lr, g1, eps, wd, rg, cg, cw = _dt(
        weight, lr, gamma1, epsilon, wd, rescale_grad, clip_gradient, clip_weights
    )
    g = _clip(rg * grad + wd * weight, cg)
    n = (1 - g1) * (g * g) + g1 * n
    return _clip(weight - lr * (g / jnp.sqrt(n + eps)), cw), (n,)


@_op(
    "rmspropalex_update",
    ("weight", "grad", "n", "g", "delta"),
    dict(_RMS, gamma2=_f(0.9)),
    aux=("n", "g", "delta"),
)
def rmspropalex_update(
    weight,
    grad,
    n,
    g,
    delta,
    *,
    lr,
    gamma1,
    epsilon,
    wd,
    rescale_grad,
    clip_gradient,
    clip_weights,
    gamma2,
):
    """Graves' RMSProp: moving averages ``n`` of g**2 and ``g`` of g;
    ``delta = gamma2*delta - lr*g/sqrt(n - g**2 + epsilon)``; ``weight += delta``."""
    lr, g1, g2, eps, wd, rg, cg, cw = _dt(
        weight, lr, gamma1, gamma2, epsilon, wd, rescale_grad, clip_gradient, clip_weights
    )
    gr = _clip(rg * grad + wd * weight, cg)
    n = (1 - g1) * gr * gr + g1 * n
    g = (1 - g1) * gr + g1 * g
    delta = g2 * delta - lr * gr / jnp.sqrt(n - g * g + eps)
    return _clip(weight + delta, cw), (n, g, delta)


@_op(
    "ftrl_update",
    ("weight", "grad", "z", "n"),
    dict(lr=_f(), lamda1=_f(0.01), beta=_f(1.0), **_COMMON),
    aux=("z", "n"),
)
def ftrl_update(weight, grad, z, n, *, lr, lamda1, beta, wd, rescale_grad, clip_gradient):
    """FTRL-proximal: ``z += g - (sqrt(n + g**2) - sqrt(n))*weight/lr``; ``n += g**2``;
    ``weight = (sign(z)*lamda1 - z)/((beta + sqrt(n))/lr + wd)`` where ``|z| > lamda1``,
    else 0."""
    lr, l1, beta, wd, rg, cg = _dt(weight, lr, lamda1, beta, wd, rescale_grad, clip_gradient)
    g = _clip(grad * rg, cg)
    z = z + g - (jnp.sqrt(n + g * g) - jnp.sqrt(n)) * weight / lr
    n = n + g * g
    w = (jnp.sign(z) * l1 - z) / ((beta + jnp.sqrt(n)) / lr + wd) * (jnp.abs(z) > l1)
    return w.astype(weight.dtype), (z, n)


@_op(
    "ftml_update",
    ("weight", "grad", "d", "v", "z"),
    dict(
        lr=_f(),
        beta1=_f(0.6),
        beta2=_f(0.999),
        epsilon=_f(1e-8),
        t=Attr("int", REQUIRED, static=False),
        wd=_f(0.0),
        rescale_grad=_f(1.0),
        clip_grad=_f(-1.0),
    ),
    aux=("d", "v", "z"),
)
def ftml_update(
    weight, grad, d, v, z, *, lr, beta1, beta2, epsilon, t, wd, rescale_grad, clip_grad
):
    """FTML (Zheng & Kwok 2017) with ``g = clip(rescale_grad*grad + wd*weight, clip_grad)``
    at step ``t``."""
    lr, b1, b2, eps, t, wd, rg, cg = _dt(
        weight, lr, beta1, beta2, epsilon, t, wd, rescale_grad, clip_grad
    )
    g = _clip(rg * grad + wd * weight, cg)
    v = b2 * v + (1 - b2) * g * g
    d_t = (1 - b1**t) / lr * (jnp.sqrt(v / (1 - b2**t)) + eps)
    z = b1 * z + (1 - b1) * g - (d_t - b1 * d) * weight
    return -z / d_t, (d_t, v, z)


@_op("signsgd_update", ("weight", "grad"), dict(lr=_f(), **_COMMON))
def signsgd_update(weight, grad, *, lr, wd, rescale_grad, clip_gradient):
    """``weight = (1 - lr*wd)*weight - lr*sign(grad)`` (clipping has no effect)."""
    lr, wd = _dt(weight, lr, wd)
    return (1 - lr * wd) * weight - lr * jnp.sign(grad)


@_op(
    "signum_update",
    ("weight", "grad", "mom"),
    dict(lr=_f(), momentum=_f(0.0), **_COMMON, wd_lh=_f(0.0)),
    aux=("mom",),
)
def signum_update(weight, grad, mom, *, lr, momentum, wd, rescale_grad, clip_gradient, wd_lh):
    """``mom = momentum*mom - (1-momentum)*(wd*weight + clip(rescale_grad*grad))``;
    ``weight = (1 - lr*wd_lh)*weight + lr*sign(mom)``."""
    lr, m, wd, rg, cg, wlh = _dt(weight, lr, momentum, wd, rescale_grad, clip_gradient, wd_lh)
    mom = m * mom - (1 - m) * wd * weight - (1 - m) * _clip(rg * grad, cg)
    return (1 - lr * wlh) * weight + lr * jnp.sign(mom), (mom,)


# ----------------------------------------------------------------------------- multi-tensor
def _multi(name, stride, has_mom, mp, preloaded, doc):
    attrs = {"rescale_grad": _f(1.0), "clip_gradient": _f(-1.0), "num_weights": Attr("int", 1)}
    if not preloaded:
        attrs = {"lrs": Attr("floats", static=False), "wds": Attr("floats", static=False), **attrs}
    if has_mom:
        attrs["momentum"] = _f(0.0)
    # mutated inputs: the momentum (position 2) and/or the master weight (last) of each group
    pos = ([2] if has_mom else []) + ([stride - 1] if mp else [])
    aux = tuple(f"arg{stride * i + p}" for i in range(_MAX_WEIGHTS) for p in pos)

    def impl(*arrays, rescale_grad, clip_gradient, num_weights, momentum=0.0, lrs=None, wds=None):
        if num_weights > _MAX_WEIGHTS:
            raise ValueError(f"{name} updates at most {_MAX_WEIGHTS} weights per call")
        if preloaded:
            lrs, wds = arrays[-2], arrays[-1]
            arrays = arrays[:-2]
        elif len(lrs) != num_weights or len(wds) != num_weights:
            raise ValueError(
                f"{name}: {len(lrs)} lrs and {len(wds)} wds for num_weights={num_weights}"
            )
        outs, states = [], []
        for i in range(num_weights):
            group = arrays[stride * i : stride * (i + 1)]
            w, g = group[0], group[1]
            w32 = group[-1] if mp else w
            dt = w32.dtype
            lr, wd = jnp.asarray(lrs[i], dt), jnp.asarray(wds[i], dt)
            rg, cg, m = (jnp.asarray(v, dt) for v in (rescale_grad, clip_gradient, momentum))
            mom = group[2] if has_mom else jnp.zeros_like(w32)
            mom = m * mom - lr * wd * w32 - lr * _clip(rg * g.astype(dt), cg)
            new = w32 + mom
            outs.append(new.astype(w.dtype))
            states += ([mom] if has_mom else []) + ([new] if mp else [])
        if not states:
            return tuple(outs)
        return tuple(outs), tuple(states)

    impl.__doc__ = doc
    register(
        name,
        variadic=True,
        attrs=attrs,
        count=lambda a, s=stride, p=preloaded: s * a["num_weights"] + (2 if p else 0),
        num_outputs=lambda a: a["num_weights"],
        aux=aux if pos else (),
    )(impl)


_MDOC = (
    "SGD{mom} for several weights in one call: inputs ``{layout}`` per weight{pre}; one "
    "output per weight (call with ``out=[weights]``){mp}."
)
for _name, _stride, _mom, _mp in (
    ("multi_sgd_update", 2, False, False),
    ("multi_sgd_mom_update", 3, True, False),
    ("multi_mp_sgd_update", 3, False, True),
    ("multi_mp_sgd_mom_update", 4, True, True),
):
    _layout = "weight, grad" + (", mom" if _mom else "") + (", weight32" if _mp else "")
    for _pre in (False, True):
        _multi(
            ("preloaded_" if _pre else "") + _name,
            _stride,
            _mom,
            _mp,
            _pre,
            _MDOC.format(
                mom=" with momentum" if _mom else "",
                layout=_layout,
                pre=", then the arrays ``lrs`` and ``wds``"
                if _pre
                else " (``lrs``, ``wds``: tuples)",
                mp="; float32 master weights" if _mp else "",
            ),
        )


@_op(
    "multi_lars",
    ("lrs", "weights_sum_sq", "grads_sum_sq", "wds"),
    dict(eta=_f(), eps=_f(), rescale_grad=_f(1.0)),
)
def multi_lars(lrs, weights_sum_sq, grads_sum_sq, wds, *, eta, eps, rescale_grad):
    """LARS learning rates: ``lr * eta * ||w|| / (||g||*rescale_grad + wd*||w|| + eps)`` where
    both norms are positive, else ``lr`` (float32 arrays of one entry per weight)."""
    w = jnp.sqrt(weights_sum_sq)
    ok = (w > 0) & (grads_sum_sq > 0)
    scaled = lrs * eta * w / (jnp.sqrt(grads_sum_sq) * rescale_grad + wds * w + eps)
    return jnp.where(ok, scaled, lrs)

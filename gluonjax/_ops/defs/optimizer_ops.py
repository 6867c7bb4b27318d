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

The update rules themselves are the ``*_rule`` functions below, which
``gluonjax.optimizer``'s optimizers call as well.

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
import numpy as np

from ..registry import REQUIRED, Attr, register

# ----------------------------------------------------------------------------- the rules
# MXNet's update rules as pure functions of jax arrays. The ops below wrap them, and
# ``gluonjax.optimizer`` calls them inside its compiled update: the math exists here only.
# ``g`` is the gradient times ``rescale_grad``; a rule that clips after adding the weight
# decay (MXNet's Adam, RMSProp, FTML) takes ``clip_gradient``, the others get ``g``
# clipped. The arithmetic runs in the dtype of the numbers passed (``cast_like``).


def cast_like(x, *vals):
    """``vals`` as arrays of ``x``'s dtype (MXNet's kernels compute in the weight's dtype,
    so ``1 - beta1`` is a float32 difference).

    A value first becomes a float32: the update kernels declare their hyperparameters
    (``lr``, ``momentum``, ``beta1``, ``wd``...) as C ``float``, so a float64 weight is
    updated with ``float32(0.9)``, not 0.9 (a relative 3e-8 apart, far above float64's
    rounding).
    """
    return [jnp.asarray(v, jnp.float32).astype(x.dtype) for v in vals]


def clip(g, c):
    """MXNet's clipping ``clip(g, -c, c)``, on when ``c >= 0`` (``c`` None: off)."""
    if c is None or (isinstance(c, (int, float)) and c < 0):
        return g
    if isinstance(c, (int, float)):
        c = float(np.float32(c))  # a C float in MXNet's kernels, as ``cast_like``'s values
        return jnp.clip(g, -c, c)
    c = jnp.asarray(c, jnp.float32).astype(g.dtype)
    return jnp.where(c >= 0, jnp.clip(g, -c, c), g)


def sgd_rule(w, g, lr, wd):
    """``(1 - lr*wd)*w - lr*g``."""
    return (1 - lr * wd) * w - lr * g


def sgd_mom_rule(w, g, mom, lr, wd, momentum):
    """``mom = momentum*mom - lr*wd*w - lr*g``; ``w + mom``. Returns ``(w, mom)``."""
    mom = momentum * mom - lr * wd * w - lr * g
    return w + mom, mom


def nag_rule(w, g, mom, lr, wd, momentum, reread=False):
    """Nesterov momentum: ``w += momentum**2*mom - (1+momentum)*lr*(g + wd*w)``;
    ``mom = momentum*mom - lr*(g + wd*w)``. With ``reread`` the momentum's decay term
    uses the new ``w``, as MXNet's kernel run in place (``out=weight``) reads it back."""
    mom = momentum * mom
    new = w - mom + (momentum + 1) * (mom - lr * (g + wd * w))
    return new, mom - lr * (g + wd * (new if reread else w))


def _moments(g, mean, var, beta1, beta2):
    return beta1 * mean + (1 - beta1) * g, beta2 * var + (1 - beta2) * g * g


def adam_rule(w, g, mean, var, lr, wd, beta1, beta2, epsilon, clip_gradient=None):
    """``g = clip(g + wd*w)``; moving averages ``mean, var`` of ``g, g**2``;
    ``w - lr*mean/(sqrt(var) + epsilon)``. Returns ``(w, mean, var)``."""
    mean, var = _moments(clip(g + wd * w, clip_gradient), mean, var, beta1, beta2)
    return w - lr * mean / (jnp.sqrt(var) + epsilon), mean, var


def adamw_rule(w, g, mean, var, lr, eta, wd, beta1, beta2, epsilon):
    """Adam's moments of ``g``; ``w - eta*(lr*mean/(sqrt(var) + epsilon) + wd*w)``."""
    mean, var = _moments(g, mean, var, beta1, beta2)
    return w - eta * (lr * mean / (jnp.sqrt(var) + epsilon) + wd * w), mean, var


def lamb_phase1_rule(w, g, mean, var, beta1, beta2, epsilon, t, bias_correction, wd):
    """LAMB's direction ``mean_hat/(sqrt(var_hat) + epsilon) + wd*w`` (the moments
    divided by ``1 - beta**t`` when ``bias_correction``). Returns ``(d, mean, var)``."""
    mean, var = _moments(g, mean, var, beta1, beta2)
    m, v = (mean / (1 - beta1**t), var / (1 - beta2**t)) if bias_correction else (mean, var)
    return m / (jnp.sqrt(v) + epsilon) + wd * w, mean, var


def lamb_phase2_rule(w, d, r1, r2, lr, lower_bound, upper_bound):
    """``w - lr*r1/r2*d`` with ``r1 = ||w||`` clamped to ``[lower_bound, upper_bound]``
    (each when >= 0); the ratio is 1 when either norm is 0."""
    r1, r2 = r1.reshape(-1)[0], r2.reshape(-1)[0]
    r1 = jnp.where(lower_bound >= 0, jnp.maximum(r1, lower_bound), r1)
    r1 = jnp.where(upper_bound >= 0, jnp.minimum(r1, upper_bound), r1)
    ratio = jnp.where((r1 == 0) | (r2 == 0), 1.0, r1 / jnp.where(r2 == 0, 1.0, r2))
    return w - lr * ratio * d


def rmsprop_rule(w, g, n, lr, wd, gamma1, epsilon, clip_gradient=None, clip_weights=None):
    """``g = clip(g + wd*w)``; ``n = (1-gamma1)*g**2 + gamma1*n``;
    ``w - lr*g/sqrt(n + epsilon)`` clipped to ``clip_weights``. Returns ``(w, n)``."""
    g = clip(g + wd * w, clip_gradient)
    n = (1 - gamma1) * (g * g) + gamma1 * n
    return clip(w - lr * (g / jnp.sqrt(n + epsilon)), clip_weights), n


def rmspropalex_rule(
    w, g, n, gm, delta, lr, wd, gamma1, gamma2, epsilon, clip_gradient=None, clip_weights=None
):
    """Graves' RMSProp: moving averages ``n`` of ``g**2`` and ``gm`` of ``g``;
    ``delta = gamma2*delta - lr*g/sqrt(n - gm**2 + epsilon)``; ``w + delta`` clipped to
    ``clip_weights``. Returns ``(w, n, gm, delta)``."""
    g = clip(g + wd * w, clip_gradient)
    n = (1 - gamma1) * g * g + gamma1 * n
    gm = (1 - gamma1) * g + gamma1 * gm
    delta = gamma2 * delta - lr * g / jnp.sqrt(n - gm * gm + epsilon)
    return clip(w + delta, clip_weights), n, gm, delta


def ftrl_rule(w, g, z, n, lr, wd, lamda1, beta):
    """FTRL-proximal: ``z += g - (sqrt(n + g**2) - sqrt(n))*w/lr``; ``n += g**2``;
    ``w = (sign(z)*lamda1 - z)/((beta + sqrt(n))/lr + wd)`` where ``|z| > lamda1``, else 0.
    Returns ``(w, z, n)``."""
    z = z + g - (jnp.sqrt(n + g * g) - jnp.sqrt(n)) * w / lr
    n = n + g * g
    new = (jnp.sign(z) * lamda1 - z) / ((beta + jnp.sqrt(n)) / lr + wd) * (jnp.abs(z) > lamda1)
    return new.astype(w.dtype), z, n


def ftml_rule(w, g, d, v, z, lr, wd, beta1, beta2, epsilon, t, clip_gradient=None):
    """FTML (Zheng & Kwok 2017) at step ``t`` with ``g = clip(g + wd*w)``.
    Returns ``(w, d, v, z)``."""
    g = clip(g + wd * w, clip_gradient)
    v = beta2 * v + (1 - beta2) * g * g
    d_t = (1 - beta1**t) / lr * (jnp.sqrt(v / (1 - beta2**t)) + epsilon)
    z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * w
    return -z / d_t, d_t, v, z


def signsgd_rule(w, g, lr, wd):
    """``(1 - lr*wd)*w - lr*sign(g)``."""
    return (1 - lr * wd) * w - lr * jnp.sign(g)


def signum_rule(w, g, mom, lr, wd, momentum, wd_lh):
    """``mom = momentum*mom - (1-momentum)*(wd*w + g)``;
    ``(1 - lr*wd_lh)*w + lr*sign(mom)``. Returns ``(w, mom)``."""
    mom = momentum * mom - (1 - momentum) * wd * w - (1 - momentum) * g
    return (1 - lr * wd_lh) * w + lr * jnp.sign(mom), mom


def lars_rule(lr, w_sum_sq, g_sum_sq, wd, eta, eps, rescale_grad=1.0):
    """LARS learning rate ``lr*eta*||w||/(||g||*rescale_grad + wd*||w|| + eps)`` where both
    norms are positive, else ``lr``."""
    w = jnp.sqrt(w_sum_sq)
    ok = (w > 0) & (g_sum_sq > 0)
    return jnp.where(ok, lr * eta * w / (jnp.sqrt(g_sum_sq) * rescale_grad + wd * w + eps), lr)


_MAX_WEIGHTS = 64  # multi-tensor ops: the most weights one call can update


def _f(default=REQUIRED):
    return Attr("float", default, static=False)


_COMMON = {"wd": _f(0.0), "rescale_grad": _f(1.0), "clip_gradient": _f(-1.0)}


def _op(name, inputs, attrs, aux=(), aliases=()):
    def deco(fn):
        return register(name, inputs=inputs, attrs=attrs, aux=aux, aliases=aliases)(fn)

    return deco


def _f32(*xs):
    return [x.astype(jnp.float32) for x in xs]


# ----------------------------------------------------------------------------- SGD
_SGD = dict(lr=_f(), **_COMMON, lazy_update=Attr("bool", True))
_SGD_MOM = dict(lr=_f(), momentum=_f(0.0), **_COMMON, lazy_update=Attr("bool", True))


@_op("sgd_update", ("weight", "grad"), _SGD)
def sgd_update(weight, grad, *, lr, wd, rescale_grad, clip_gradient, lazy_update):
    """``weight = (1 - lr*wd)*weight - lr*clip(rescale_grad*grad)``."""
    lr, wd, rg, cg = cast_like(weight, lr, wd, rescale_grad, clip_gradient)
    return sgd_rule(weight, clip(rg * grad, cg), lr, wd)


@_op("sgd_mom_update", ("weight", "grad", "mom"), _SGD_MOM, aux=("mom",))
def sgd_mom_update(
    weight, grad, mom, *, lr, momentum, wd, rescale_grad, clip_gradient, lazy_update
):
    """``mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad)``;
    ``weight += mom`` (``mom`` is updated in place)."""
    lr, m, wd, rg, cg = cast_like(weight, lr, momentum, wd, rescale_grad, clip_gradient)
    w, mom = sgd_mom_rule(weight, clip(rg * grad, cg), mom, lr, wd, m)
    return w, (mom,)


@_op("mp_sgd_update", ("weight", "grad", "weight32"), _SGD, aux=("weight32",))
def mp_sgd_update(weight, grad, weight32, *, lr, wd, rescale_grad, clip_gradient, lazy_update):
    """``sgd_update`` on the float32 master copy ``weight32``; the output is its cast."""
    (g,) = _f32(grad)
    w32 = sgd_rule(weight32, clip(rescale_grad * g, clip_gradient), lr, wd)
    return w32.astype(weight.dtype), (w32,)


@_op("mp_sgd_mom_update", ("weight", "grad", "mom", "weight32"), _SGD_MOM, aux=("mom", "weight32"))
def mp_sgd_mom_update(
    weight, grad, mom, weight32, *, lr, momentum, wd, rescale_grad, clip_gradient, lazy_update
):
    """``sgd_mom_update`` on the float32 master copy and float32 momentum."""
    (g,) = _f32(grad)
    w32, mom = sgd_mom_rule(weight32, clip(rescale_grad * g, clip_gradient), mom, lr, wd, momentum)
    return w32.astype(weight.dtype), (mom, w32)


# ----------------------------------------------------------------------------- NAG
_NAG = dict(lr=_f(), momentum=_f(0.0), **_COMMON)


@_op("nag_mom_update", ("weight", "grad", "mom"), _NAG, aux=("mom",))
def nag_mom_update(weight, grad, mom, *, lr, momentum, wd, rescale_grad, clip_gradient):
    """Nesterov momentum: ``g = clip(rescale_grad*grad) + wd*weight``,
    ``weight += momentum**2*mom - (1+momentum)*lr*g``, ``mom = momentum*mom - lr*g``."""
    lr, m, wd, rg, cg = cast_like(weight, lr, momentum, wd, rescale_grad, clip_gradient)
    w, mom = nag_rule(weight, clip(rg * grad, cg), mom, lr, wd, m)
    return w, (mom,)


@_op("mp_nag_mom_update", ("weight", "grad", "mom", "weight32"), _NAG, aux=("mom", "weight32"))
def mp_nag_mom_update(
    weight, grad, mom, weight32, *, lr, momentum, wd, rescale_grad, clip_gradient
):
    """``nag_mom_update`` on the float32 master copy; as MXNet's kernel, the momentum's
    weight-decay term uses the updated master weight."""
    (g,) = _f32(grad)
    gc = clip(rescale_grad * g, clip_gradient)
    w32, mom = nag_rule(weight32, gc, mom, lr, wd, momentum, reread=True)
    return w32.astype(weight.dtype), (mom, w32)


# ----------------------------------------------------------------------------- Adam family
_ADAM = dict(lr=_f(), beta1=_f(0.9), beta2=_f(0.999), epsilon=_f(1e-8), **_COMMON)


@_op(
    "adam_update",
    ("weight", "grad", "mean", "var"),
    dict(_ADAM, lazy_update=Attr("bool", True)),
    aux=("mean", "var"),
)
def adam_update(weight, grad, mean, var, *, lr, beta1, beta2, epsilon, wd, rescale_grad,
                clip_gradient, lazy_update):  # fmt: skip
    """``g = clip(rescale_grad*grad + wd*weight)``; ``mean, var`` moving averages of
    ``g, g**2``; ``weight -= lr*mean/(sqrt(var) + epsilon)`` (no bias correction: the
    optimizer folds it into ``lr``)."""
    hyper = cast_like(weight, lr, wd, beta1, beta2, epsilon, rescale_grad, clip_gradient)
    lr, wd, b1, b2, eps, rg, cg = hyper
    w, mean, var = adam_rule(weight, grad * rg, mean, var, lr, wd, b1, b2, eps, cg)
    return w, (mean, var)


_ADAMW = dict(
    lr=_f(), beta1=_f(0.9), beta2=_f(0.999), epsilon=_f(1e-8), wd=_f(0.0), eta=_f(),
    clip_gradient=_f(-1.0),
)  # fmt: skip


def _adamw(w32, grad, mean, var, rg, lr, eta, beta1, beta2, eps, wd, cg):
    """``adamw_rule``, skipped (nothing changes) when ``rescale_grad`` is not finite or is
    0 (AMP's loss scaler: MXNet's kernel skips both)."""
    new, m, v = adamw_rule(w32, clip(rg * grad, cg), mean, var, lr, eta, wd, beta1, beta2, eps)
    ok = jnp.isfinite(rg) & (rg != 0)
    return jnp.where(ok, new, w32), jnp.where(ok, m, mean), jnp.where(ok, v, var)


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
    ``rescale_grad`` is an array; when it is not finite or 0 the step is skipped (AMP)."""
    rg = rescale_grad.reshape(()).astype(weight.dtype)
    hyper = cast_like(weight, lr, eta, beta1, beta2, epsilon, wd, clip_gradient)
    w, m, v = _adamw(weight, grad, mean, var, rg, *hyper)
    return w, (m, v)


@_op(
    "_mp_adamw_update",
    ("weight", "grad", "mean", "var", "weight32", "rescale_grad"),
    _ADAMW,
    aux=("mean", "var", "weight32"),
    aliases=("_contrib_mp_adamw_update",),
)
def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, *, lr, beta1, beta2,
                    epsilon, wd, eta, clip_gradient):  # fmt: skip
    """``_adamw_update`` on the float32 master copy."""
    rg = rescale_grad.reshape(()).astype(jnp.float32)
    (g,) = _f32(grad)
    hyper = (lr, eta, beta1, beta2, epsilon, wd, clip_gradient)
    w32, m, v = _adamw(weight32, g, mean, var, rg, *hyper)
    return w32.astype(weight.dtype), (m, v, w32)


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


@_op("lamb_update_phase1", ("weight", "grad", "mean", "var"), _LAMB1, aux=("mean", "var"))
def lamb_update_phase1(weight, grad, mean, var, *, beta1, beta2, epsilon, t, bias_correction,
                       wd, rescale_grad, clip_gradient):  # fmt: skip
    """LAMB's direction ``g = mean_hat/(sqrt(var_hat)+eps) + wd*weight`` (moments updated in
    place); phase 2 scales it by the trust ratio ``||weight|| / ||g||``."""
    b1, b2, eps, t, wd, rg, cg = cast_like(
        weight, beta1, beta2, epsilon, t, wd, rescale_grad, clip_gradient
    )
    g = clip(grad * rg, cg)
    d, m, v = lamb_phase1_rule(weight, g, mean, var, b1, b2, eps, t, bias_correction, wd)
    return d, (m, v)


@_op("lamb_update_phase2", ("weight", "g", "r1", "r2"), _LAMB2)
def lamb_update_phase2(weight, g, r1, r2, *, lr, lower_bound, upper_bound):
    """``weight -= lr * r1/r2 * g`` with ``r1 = ||weight||`` clamped to
    ``[lower_bound, upper_bound]`` (when >= 0); the ratio is 1 if either norm is 0."""
    return lamb_phase2_rule(weight, g, r1, r2, *cast_like(weight, lr, lower_bound, upper_bound))


@_op(
    "mp_lamb_update_phase1",
    ("weight", "grad", "mean", "var", "weight32"),
    _LAMB1,
    aux=("mean", "var"),
)
def mp_lamb_update_phase1(weight, grad, mean, var, weight32, *, beta1, beta2, epsilon, t,
                          bias_correction, wd, rescale_grad, clip_gradient):  # fmt: skip
    """``lamb_update_phase1`` in float32 on the master copy (output float32)."""
    (g,) = _f32(grad)
    g = clip(g * rescale_grad, clip_gradient)
    out, m, v = lamb_phase1_rule(weight32, g, mean, var, beta1, beta2, epsilon, t,
                                 bias_correction, wd)  # fmt: skip
    return out, (m, v)


@_op("mp_lamb_update_phase2", ("weight", "g", "r1", "r2", "weight32"), _LAMB2, aux=("weight32",))
def mp_lamb_update_phase2(weight, g, r1, r2, weight32, *, lr, lower_bound, upper_bound):
    """``lamb_update_phase2`` on the float32 master copy; the output is its cast.

    The master copy is updated too (MXNet 1.9.1 declares it mutable but its kernel leaves
    it unchanged, so its optimizer restarts every step from the first weights)."""
    w32 = lamb_phase2_rule(weight32, g, r1, r2, lr, lower_bound, upper_bound)
    return w32.astype(weight.dtype), (w32,)


# ----------------------------------------------------------------------------- RMSProp, FTRL...
_RMS = dict(lr=_f(), gamma1=_f(0.95), epsilon=_f(1e-8), **_COMMON, clip_weights=_f(-1.0))


@_op("rmsprop_update", ("weight", "grad", "n"), _RMS, aux=("n",))
def rmsprop_update(
    weight, grad, n, *, lr, gamma1, epsilon, wd, rescale_grad, clip_gradient, clip_weights
):
    """``g = clip(rescale_grad*grad + wd*weight)``; ``n = (1-gamma1)*g**2 + gamma1*n``;
    ``weight -= lr*g/sqrt(n + epsilon)``, clipped to ``clip_weights`` when >= 0."""
    lr, g1, eps, wd, rg, cg, cw = cast_like(
        weight, lr, gamma1, epsilon, wd, rescale_grad, clip_gradient, clip_weights
    )
    w, n = rmsprop_rule(weight, rg * grad, n, lr, wd, g1, eps, cg, cw)
    return w, (n,)


@_op(
    "rmspropalex_update",
    ("weight", "grad", "n", "g", "delta"),
    dict(_RMS, gamma2=_f(0.9)),
    aux=("n", "g", "delta"),
)
def rmspropalex_update(weight, grad, n, g, delta, *, lr, gamma1, epsilon, wd, rescale_grad,
                       clip_gradient, clip_weights, gamma2):  # fmt: skip
    """Graves' RMSProp: moving averages ``n`` of g**2 and ``g`` of g;
    ``delta = gamma2*delta - lr*g/sqrt(n - g**2 + epsilon)``; ``weight += delta``."""
    lr, g1, g2, eps, wd, rg, cg, cw = cast_like(
        weight, lr, gamma1, gamma2, epsilon, wd, rescale_grad, clip_gradient, clip_weights
    )
    w, *state = rmspropalex_rule(weight, rg * grad, n, g, delta, lr, wd, g1, g2, eps, cg, cw)
    return w, tuple(state)


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
    lr, l1, beta, wd, rg, cg = cast_like(weight, lr, lamda1, beta, wd, rescale_grad, clip_gradient)
    w, z, n = ftrl_rule(weight, clip(grad * rg, cg), z, n, lr, wd, l1, beta)
    return w, (z, n)


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
    lr, b1, b2, eps, t, wd, rg, cg = cast_like(
        weight, lr, beta1, beta2, epsilon, t, wd, rescale_grad, clip_grad
    )
    w, *state = ftml_rule(weight, rg * grad, d, v, z, lr, wd, b1, b2, eps, t, cg)
    return w, tuple(state)


@_op("signsgd_update", ("weight", "grad"), dict(lr=_f(), **_COMMON))
def signsgd_update(weight, grad, *, lr, wd, rescale_grad, clip_gradient):
    """``weight = (1 - lr*wd)*weight - lr*sign(grad)`` (clipping has no effect)."""
    return signsgd_rule(weight, grad, *cast_like(weight, lr, wd))


@_op(
    "signum_update",
    ("weight", "grad", "mom"),
    dict(lr=_f(), momentum=_f(0.0), **_COMMON, wd_lh=_f(0.0)),
    aux=("mom",),
)
def signum_update(weight, grad, mom, *, lr, momentum, wd, rescale_grad, clip_gradient, wd_lh):
    """``mom = momentum*mom - (1-momentum)*(wd*weight + clip(rescale_grad*grad))``;
    ``weight = (1 - lr*wd_lh)*weight + lr*sign(mom)``."""
    lr, m, wd, rg, cg, wlh = cast_like(weight, lr, momentum, wd, rescale_grad, clip_gradient, wd_lh)
    w, mom = signum_rule(weight, clip(rg * grad, cg), mom, lr, wd, m, wlh)
    return w, (mom,)


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
            lr, wd, rg, cg, m = cast_like(
                w32, lrs[i], wds[i], rescale_grad, clip_gradient, momentum
            )
            mom = group[2] if has_mom else jnp.zeros_like(w32)
            new, mom = sgd_mom_rule(w32, clip(rg * g.astype(w32.dtype), cg), mom, lr, wd, m)
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
    return lars_rule(lrs, weights_sum_sq, grads_sum_sq, wds, eta, eps, rescale_grad)

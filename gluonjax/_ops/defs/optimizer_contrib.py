"""Contrib optimizer update operators: ``_contrib_group_adagrad_update`` and the
multi-tensor AdamW ops ``_multi_adamw_update`` / ``_multi_mp_adamw_update``.

As in ``optimizer_ops``, each op is a pure function returning the new weight(s) and, as
auxiliary states, the new optimizer states; call them with ``out=weight``. The rules are
shared with ``gluonjax.optimizer`` (``group_adagrad_rule`` is the step of
``mx.optimizer.contrib.GroupAdaGrad``). ``nd.contrib.multi_adamw_update`` (MXNet's
Python wrapper taking lists) is built on these in ``gluonjax.contrib``.

Examples
--------
>>> import gluonjax as mx
>>> w, g, h = mx.nd.ones((2, 2)), mx.nd.ones((2, 2)), mx.nd.zeros((2, 1))
>>> _ = mx.nd.contrib.group_adagrad_update(w, g, h, out=w, lr=0.5, epsilon=0.0)
>>> w.asnumpy().tolist(), h.asnumpy().tolist()
([[0.5, 0.5], [0.5, 0.5]], [[1.0], [1.0]])
"""

from __future__ import annotations

import jax.numpy as jnp

from ..registry import Attr, register
from .optimizer_ops import _MAX_WEIGHTS, _adamw, _f, cast_like, clip

__all__ = ["group_adagrad_rule"]


def group_adagrad_rule(w, g, history, lr, epsilon):
    """Row-wise AdaGrad: ``history += mean(g**2, axis=1)``;
    ``w - lr * g / sqrt(history + epsilon)`` (``history`` is ``(rows, 1)``).
    Returns ``(w, history)``."""
    axes = tuple(range(1, g.ndim))
    history = history + jnp.mean(g * g, axis=axes).reshape(history.shape)
    scale = jnp.sqrt(history + epsilon).reshape((-1,) + (1,) * (g.ndim - 1))
    return w - lr * g / scale, history


@register(
    "_contrib_group_adagrad_update",
    inputs=("weight", "grad", "history"),
    attrs=dict(lr=_f(), rescale_grad=_f(1.0), clip_gradient=_f(-1.0), epsilon=_f(1e-5)),
    aux=("history",),
)
def group_adagrad_update(weight, grad, history, *, lr, rescale_grad, clip_gradient, epsilon):
    """Group AdaGrad (one learning rate per row): ``g = clip(rescale_grad*grad)``;
    ``history += mean(g**2, axis=1, keepdims=True)``;
    ``weight -= lr*g/sqrt(history + epsilon)``."""
    lr, rg, cg, eps = cast_like(weight, lr, rescale_grad, clip_gradient, epsilon)
    w, h = group_adagrad_rule(weight, clip(grad * rg, cg), history, lr, eps)
    return w, (h,)


def _multi_adamw(name, mp):
    stride = 5 if mp else 4
    attrs = {
        "lrs": Attr("floats", static=False),
        "wds": Attr("floats", static=False),
        "etas": Attr("floats", static=False),
        "beta1": _f(0.9),
        "beta2": _f(0.999),
        "epsilon": _f(1e-8),
        "clip_gradient": _f(-1.0),
        "num_weights": Attr("int", 1),
    }
    # mutated inputs of each group: mean, var (and the float32 master weight)
    pos = (2, 3, 4) if mp else (2, 3)
    aux = tuple(f"arg{stride * i + p}" for i in range(_MAX_WEIGHTS) for p in pos)

    def impl(*arrays, lrs, wds, etas, beta1, beta2, epsilon, clip_gradient, num_weights):
        if num_weights > _MAX_WEIGHTS:
            raise ValueError(f"{name} updates at most {_MAX_WEIGHTS} weights per call")
        if not len(lrs) == len(wds) == len(etas) == num_weights:
            raise ValueError(
                f"{name}: {len(lrs)} lrs, {len(wds)} wds and {len(etas)} etas for "
                f"num_weights={num_weights}; pass one of each per weight"
            )
        rescale = arrays[-1]
        outs, states = [], []
        for i in range(num_weights):
            group = arrays[stride * i : stride * (i + 1)]
            w, g, mean, var = group[:4]
            w32 = group[4] if mp else w
            rg = rescale.reshape(()).astype(w32.dtype)
            hyper = cast_like(w32, lrs[i], etas[i], beta1, beta2, epsilon, wds[i], clip_gradient)
            new, m, v = _adamw(w32, g.astype(w32.dtype), mean, var, rg, *hyper)
            outs.append(new.astype(w.dtype))
            states += [m, v] + ([new] if mp else [])
        return tuple(outs), tuple(states)

    impl.__doc__ = (
        f"AdamW for several weights in one call: inputs ``weight, grad, mean, var"
        f"{', weight32' if mp else ''}`` per weight, then ``rescale_grad``; ``lrs``, ``wds``, "
        f"``etas`` one per weight; one output per weight (call with ``out=[weights]``). The "
        f"step is skipped when ``rescale_grad`` is not finite or 0."
    )
    register(
        name,
        variadic=True,
        attrs=attrs,
        count=lambda a: stride * a["num_weights"] + 1,
        num_outputs=lambda a: a["num_weights"],
        aux=aux,
    )(impl)


_multi_adamw("_multi_adamw_update", mp=False)
_multi_adamw("_multi_mp_adamw_update", mp=True)

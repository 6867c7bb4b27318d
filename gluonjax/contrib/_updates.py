"""``nd.contrib``'s AdamW wrappers, as MXNet's Python layer has them: a number given for
``rescale_grad`` becomes a one-element array, and the multi-tensor forms take lists
(``weights, grads, mean, var[, weights32]``) and flatten them for the registry ops
``_multi_adamw_update`` / ``_multi_mp_adamw_update``."""

from __future__ import annotations

__all__ = ["install"]


def install(mod, nd):
    """Put ``adamw_update``, ``mp_adamw_update``, ``multi_adamw_update`` and
    ``multi_mp_adamw_update`` on ``mod`` (``nd.contrib``), calling ``nd``'s ops."""

    def as_array(rescale_grad, like):
        if isinstance(rescale_grad, nd.NDArray):
            return rescale_grad
        return nd.full(shape=(1,), val=rescale_grad, ctx=like.context)

    def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, **kwargs):
        """AdamW update of one weight (``_adamw_update``); ``rescale_grad`` may be a number.
        The step is skipped when it is not finite or 0."""
        rg = as_array(rescale_grad, weight)
        return nd._adamw_update(weight, grad, mean, var, rg, lr=lr, eta=eta, **kwargs)

    def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, **kwargs):
        """Multi-precision AdamW update of one weight (``_mp_adamw_update``)."""
        rg = as_array(rescale_grad, weight)
        return nd._mp_adamw_update(weight, grad, mean, var, weight32, rg, lr=lr, eta=eta, **kwargs)

    def multi(op, groups):
        def update(*arrays, rescale_grad, lrs, wds, etas, out=None, name=None, size=0, **kw):
            lists = arrays[:groups]
            size = size or len(lists[0])
            flat = [a for group in zip(*lists, strict=True) for a in group]
            flat.append(as_array(rescale_grad, lists[0][0]))
            return op(*flat, out=out, num_weights=size, lrs=lrs, wds=wds, etas=etas, **kw)

        return update

    plain, mp = multi(nd._multi_adamw_update, 4), multi(nd._multi_mp_adamw_update, 5)

    def multi_adamw_update(weights, grads, mean, var, rescale_grad, lrs, wds, etas, **kwargs):
        """AdamW update of several weights in one call (lists of equal length)."""
        return plain(weights, grads, mean, var, rescale_grad=rescale_grad, lrs=lrs, wds=wds,
                     etas=etas, **kwargs)  # fmt: skip

    def multi_mp_adamw_update(
        weights, grads, mean, var, weights32, rescale_grad, lrs, wds, etas, **kwargs
    ):
        """Multi-precision AdamW update of several weights in one call."""
        return mp(weights, grads, mean, var, weights32, rescale_grad=rescale_grad, lrs=lrs,
                  wds=wds, etas=etas, **kwargs)  # fmt: skip

    mod.adamw_update, mod.mp_adamw_update = adamw_update, mp_adamw_update
    mod.multi_adamw_update, mod.multi_mp_adamw_update = multi_adamw_update, multi_mp_adamw_update

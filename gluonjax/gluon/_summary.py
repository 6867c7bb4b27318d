"""``Block.summary``: a table of layers, output shapes and parameter counts."""

from __future__ import annotations

import numpy as np

from .. import autograd as _ag
from .._caches import PROCESS
from ..base import MXNetError

_LINE = "-" * 80


class SummaryError(MXNetError, AssertionError):
    """``summary()`` of a hybridized block (MXNet asserts it is not)."""


_EQ = "=" * 80


def _shape_of(out):
    if isinstance(out, (list, tuple)):
        return [_shape_of(o) for o in out]
    return tuple(out.shape) if hasattr(out, "shape") else out


def _count(params):
    return int(sum(np.prod(p.shape) for p in params if p.shape is not None))


def summary(block, *inputs):
    """Print each layer's output shape and parameter count (runs one forward)."""

    if getattr(block, "_active", False):
        raise SummaryError("summary() needs a non-hybridized block: call it before hybridize()")
    old = PROCESS.auto_jit
    if any(p._data is None for p in block._all_params()):
        # one plain call gives deferred parameters their shapes (through each block's own
        # __call__: an RNN layer infers its input size there), before the hooks count
        PROCESS.auto_jit = False
        try:
            with _ag.pause(train_mode=False):
                block(*inputs)
        finally:
            PROCESS.auto_jit = old
    rows, handles, seen_params, counter = [], [], {}, [0]

    def hook(b, _inputs, out):
        counter[0] += 1
        own = list(b._own_params().values())
        for p in own:
            seen_params[id(p)] = seen_params.get(id(p), 0) + 1
        rows.append((f"{type(b).__name__}-{counter[0]}", _shape_of(out), _count(own)))

    block.apply(lambda b: handles.append(b.register_forward_hook(hook)))
    PROCESS.auto_jit = False
    try:
        with _ag.pause(train_mode=False):
            block(*inputs)
    finally:
        PROCESS.auto_jit = old
        for h in handles:
            h.detach()
    print(_LINE)
    print(f"{'Layer (type)':>20}{'Output Shape':>42}{'Param #':>15}")
    print(_EQ)
    print(
        f"{'Input':>20}{str(_shape_of(inputs[0] if len(inputs) == 1 else list(inputs))):>42}{0:>15}"
    )
    for name, shape, n in rows:
        print(f"{name:>20}{str(shape):>42}{n:>15}")
    params = block._all_params()
    total = sum(_count([p]) * seen_params.get(id(p), 1) for p in params)
    trainable = sum(_count([p]) for p in params if p.grad_req != "null")
    print(_EQ)
    print("Parameters in forward computation graph, duplicate included")
    print(f"   Total params: {total}")
    print(f"   Trainable params: {trainable}")
    print(f"   Non-trainable params: {total - trainable}")
    print(
        f"Shared params in forward computation graph: "
        f"{sum(_count([p]) * (c - 1) for p in params for c in [seen_params.get(id(p), 1)])}"
    )
    print(f"Unique parameters in model: {_count(params)}")
    print(_LINE)

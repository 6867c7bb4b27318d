"""Comparing two optimizers step by step (``compare_optimizer``)."""

from __future__ import annotations

import copy

from ._compare import assert_almost_equal, compare_ndarray_tuple, default_context
from ._data import rand_ndarray

__all__ = ["compare_optimizer"]


def _pair(shape, stype, dtype, density=None):
    """(dense copy, array of ``stype``) holding the same random values."""
    from .. import random

    ctx = default_context()
    if stype == "default":
        second = random.uniform(shape=shape, ctx=ctx, dtype=dtype)
        return second.copyto(ctx), second
    if stype in ("row_sparse", "csr"):
        kw = {} if density is None else {"density": density}
        second = rand_ndarray(shape, stype, dtype=dtype, **kw)
        return second.copyto(ctx).tostype("default"), second
    raise ValueError(f"unknown storage type {stype!r}")


def compare_optimizer(
    opt1,
    opt2,
    shape,
    dtype,
    w_stype="default",
    g_stype="default",
    rtol=1e-4,
    atol=1e-5,
    compare_states=True,
    ntensors=1,
):
    """Run one update of ``opt1`` and ``opt2`` on the same random weight and gradient and
    compare the states and the weights.

    Parameters
    ----------
    opt1, opt2 : Optimizer
        ``opt1`` gets dense copies; ``opt2`` gets arrays of ``w_stype`` / ``g_stype``.
    shape : tuple, or list of tuples
        A list runs ``opt2`` once on all tensors (``update_multi_precision`` with lists,
        a multi-tensor update) and ``opt1`` tensor by tensor.
    dtype : numpy dtype
    rtol, atol : float
    compare_states : bool
    ntensors : int
        Number of tensors when ``shape`` is a list.

    Examples
    --------
    >>> import numpy as np
    >>> import gluonjax as mx
    >>> from gluonjax.test_utils import compare_optimizer
    >>> compare_optimizer(mx.optimizer.SGD(momentum=0.9), mx.optimizer.SGD(momentum=0.9),
    ...                   (2, 3), np.float32)
    """
    if not isinstance(shape, list):
        if ntensors != 1:
            raise ValueError("ntensors > 1 needs a list of shapes")
        w1, w2 = _pair(shape, w_stype, dtype, density=1)
        g1, g2 = _pair(shape, g_stype, dtype)
        s1 = opt1.create_state_multi_precision(0, w1)
        s2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(s1, s2)
        opt1.update_multi_precision(0, w1, g1, s1)
        opt2.update_multi_precision(0, w2, g2, s2)
        if compare_states:
            compare_ndarray_tuple(s1, s2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    from .. import random

    ctx = default_context()
    w1, g1 = [], []
    for s in shape:
        w1.append(random.uniform(shape=s, ctx=ctx, dtype=dtype))
        g1.append(random.uniform(shape=s, ctx=ctx, dtype=dtype))
    w1, g1 = tuple(w1), tuple(g1)
    w2, g2 = copy.deepcopy(w1), copy.deepcopy(g1)
    s2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, s2)
    for i in range(ntensors):
        s1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], s1)
        if compare_states:
            compare_ndarray_tuple(s1, s2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)

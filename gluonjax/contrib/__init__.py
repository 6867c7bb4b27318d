"""``nd.contrib`` / ``sym.contrib``: control flow, the registry's ``_contrib_*`` ops and
MXNet's Python-level contrib functions (``rand_zipfian``; ``isinf``/``isfinite``/``isnan``
for NDArrays), each written with registry ops so they also hybridize and export.

Examples
--------
>>> import gluonjax as mx
>>> x = mx.nd.array([1.0, float("inf"), float("nan")])
>>> mx.nd.contrib.isinf(x).asnumpy().tolist(), mx.nd.contrib.isnan(x).asnumpy().tolist()
([0.0, 1.0, 0.0], [0.0, 0.0, 1.0])
"""

from __future__ import annotations

import math
import types

from .. import _control_flow
from .._control_flow import cond, foreach, while_loop
from . import _updates


def namespace(parent, name):
    """A ``contrib`` module for ``parent`` (nd or sym): control flow + ``_contrib_*`` ops."""
    _control_flow.install(parent, symbolic=name != "nd")
    mod = types.ModuleType(f"{parent.__name__}.contrib", "Contrib operators and control flow.")
    mod.cond, mod.foreach, mod.while_loop = cond, foreach, while_loop
    for attr in dir(parent):
        if attr.startswith("_contrib_"):
            setattr(mod, attr[len("_contrib_") :], getattr(parent, attr))
    mod.rand_zipfian = _zipfian(parent, name)
    if name == "nd":
        mod.isinf, mod.isfinite, mod.isnan = _nd_checks(parent)
        _updates.install(mod, parent)
    return mod


def prefixed(parent, modname, prefix, doc):
    """A module holding ``parent``'s ops named ``<prefix><x>`` as ``x`` (``nd.linalg``...)."""
    mod = types.ModuleType(f"{parent.__name__}.{modname}", doc)
    for attr in dir(parent):
        if attr.startswith(prefix):
            setattr(mod, attr[len(prefix) :], getattr(parent, attr))
    return mod


def _zipfian(F, name):
    def rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
        """Sample ``num_sampled`` classes from the approximately log-uniform (Zipfian)
        distribution on ``[0, range_max)``: ``P(c) = log((c+2)/(c+1)) / log(range_max+1)``.

        Returns
        -------
        (sampled_classes, expected_count_true, expected_count_sampled)
            The sampled classes (int), and the expected number of times each true class
            and each sampled class is drawn in ``num_sampled`` draws.
        """
        log_range = math.log(range_max + 1)
        extra = {} if name != "nd" else {"ctx": ctx}
        rand = F.random.uniform(0, log_range, shape=(num_sampled,), dtype="float64", **extra)
        classes = F.Cast(F.expm1(rand), dtype="int64")
        classes = F._mod_scalar(classes, scalar=range_max)

        def expected(c):
            c = F.Cast(c, dtype="float64")
            ratio = F.log(F._plus_scalar(c, scalar=2.0) / F._plus_scalar(c, scalar=1.0))
            ratio = F._div_scalar(ratio, scalar=log_range)
            return F._mul_scalar(ratio, scalar=num_sampled)

        if name == "nd" and ctx is not None:
            true_classes = true_classes.as_in_context(ctx)
        return classes, expected(true_classes), expected(classes)

    return rand_zipfian


def _nd_checks(nd):
    inf = float("inf")

    def isinf(data):
        """1 where ``data`` is +inf or -inf, else 0 (same dtype as ``data``)."""
        return nd._equal_scalar(nd.abs(data), scalar=inf)

    def isfinite(data):
        """1 where ``data`` is neither infinite nor NaN, else 0."""
        not_inf = nd._not_equal_scalar(nd.abs(data), scalar=inf)
        not_nan = nd._equal(data, data)
        return nd.elemwise_mul(not_inf, not_nan)

    def isnan(data):
        """1 where ``data`` is NaN, else 0."""
        return nd._not_equal(data, data)

    return isinf, isfinite, isnan

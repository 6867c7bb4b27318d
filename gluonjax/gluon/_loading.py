"""Checking and applying loaded arrays to parameters, all-or-nothing."""

from __future__ import annotations

import numpy as np

from ..base import ParameterMismatchError, ShapeError


def apply_loaded(
    params, loaded, filename, allow_missing, ignore_extra, cast_dtype, dtype_source, ctx
):
    """Check everything first, then assign: a failed load changes nothing.

    ``params`` maps the names used in the file to Parameters.
    """
    missing = [k for k in params if k not in loaded]
    extra = [k for k in loaded if k not in params]
    problems = []
    if missing and not allow_missing:
        problems.append(f"missing from the file: {missing}")
    if extra and not ignore_extra:
        problems.append(f"in the file but not in the model: {extra}")
    if problems:
        raise ParameterMismatchError(
            f"cannot load '{filename}': " + "; ".join(problems) + ". Parameters of this model: "
            f"{list(params)}. Pass allow_missing=True / ignore_extra=True to load anyway, or "
            f"check that the file was saved from the same architecture."
        )
    plan = []
    for name, p in params.items():
        if name not in loaded:
            continue
        arr = np.asarray(getattr(loaded[name], "_data", loaded[name]))
        if p.shape is not None and (
            len(p.shape) != arr.ndim or any(s and s != a for s, a in zip(p.shape, arr.shape))
        ):
            raise ShapeError(
                f"cannot load '{filename}': parameter '{name}' ({p.name}) has shape {p.shape} "
                f"in the model but {arr.shape} in the file"
            )
        if np.dtype(arr.dtype) != np.dtype(p.dtype):
            if cast_dtype and dtype_source == "saved":
                pass
            elif cast_dtype or np.issubdtype(arr.dtype, np.floating):
                arr = arr.astype(p.dtype)
        plan.append((p, arr))
    for p, arr in plan:
        if cast_dtype and dtype_source == "saved":
            p.dtype = arr.dtype.type
        fresh = p._data is None
        p.set_data(arr)
        if fresh and ctx is not None:  # MXNet: ctx places the parameters it initializes
            p.reset_ctx(ctx)

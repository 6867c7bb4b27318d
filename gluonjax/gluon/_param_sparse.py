"""Storage types of Parameters: ``stype``/``grad_stype``, ``row_sparse_data`` and the Trainer link.

A row_sparse Parameter keeps its whole value (dense underneath, see
``docs/sparse.md``); ``row_sparse_data(row_id)`` gives the rows a forward needs
as a RowSparseNDArray that shares the Parameter's gradient buffer, so backward
through it writes the Parameter's gradient. As in MXNet it needs a Trainer, and
``data()`` is refused for such a Parameter.
"""

from __future__ import annotations

import numpy as np

from .. import autograd
from ..base import ArgumentTypeError, MXNetError
from ..ndarray.ndarray import NDArray

__all__ = ["SparseParameterMixin", "StorageTypeError", "STYPES"]

STYPES = ("default", "row_sparse", "csr")


class StorageTypeError(MXNetError, AssertionError):
    """An unknown storage type given to a Parameter (MXNet raises AssertionError)."""


def check_stypes(name, stype, grad_stype):
    """Validate a Parameter's ``stype`` and ``grad_stype``."""
    for what, value in (("grad_stype", grad_stype), ("stype", stype)):
        if value not in STYPES:
            raise StorageTypeError(
                f"{what} for Parameter '{name}' must be one of 'default', 'row_sparse', or "
                f"'csr', but got '{value}'"
            )


class SparseParameterMixin:
    """The storage-type half of :class:`~gluonjax.gluon.Parameter`."""

    _stype = "default"
    _grad_stype = "default"
    _trainer = None  # the Trainer this Parameter was given to (MXNet holds it too)

    # ------------------------------------------------------------ the trainer
    def _set_trainer(self, trainer):
        """Link this Parameter to ``trainer`` (None unlinks); a sparse Parameter takes one."""
        current = self._trainer
        if self._stype != "default" and current is not None and trainer is not None:
            if current is not trainer:
                raise MXNetError(
                    f"Failed to set the trainer for Parameter '{self.name}' because it was "
                    f"already set. More than one trainers for a {self._stype} Parameter is not "
                    f"supported."
                )
        self._trainer = trainer

    def _reset_trainer_kvstore(self):
        """New values make a store that updates weights stale: MXNet's Trainer drops it."""
        t = self._trainer
        if (
            t is not None
            and getattr(t, "_kv_initialized", False)
            and getattr(t, "_update_on_kvstore", False)
            and self not in getattr(t, "_params_to_init", ())
        ):
            t._reset_kvstore()

    # ------------------------------------------------------------ buffers
    def _array_class(self):
        from ._param_array import ParamArray, sparse_param_array_class

        return ParamArray if self._stype == "default" else sparse_param_array_class(self._stype)

    def _new_grad(self, shape, dtype):
        """A zero gradient buffer of this Parameter's ``grad_stype``."""
        if self._grad_stype == "default":
            return NDArray(np.zeros(shape, dtype))
        from ..ndarray import sparse

        return sparse.zeros(self._grad_stype, shape, dtype=dtype)

    def _refuse_dense_access(self, what):
        if self._stype != "default":
            raise MXNetError(
                f"Cannot return a copy of Parameter '{self.name}' via {what} because its "
                f"storage type is {self._stype}. Please use row_sparse_data() instead."
            )

    # ------------------------------------------------------------ row_sparse data
    def row_sparse_data(self, row_id):
        """The rows ``row_id`` of a row_sparse Parameter, on ``row_id``'s context.

        Parameters
        ----------
        row_id : NDArray
            Row indices (any order, repeats allowed).

        Returns
        -------
        RowSparseNDArray
            The Parameter with every other row zero; backward through it writes this
            Parameter's gradient.
        """
        if self._stype != "row_sparse":
            raise MXNetError(
                f"Cannot return a copy of Parameter {self.name} via row_sparse_data() because "
                f"its storage type is {self._stype}. Please use data() instead."
            )
        return self._get_row_sparse(row_id, getattr(row_id, "context", None))

    def list_row_sparse_data(self, row_id):
        """:meth:`row_sparse_data` on every context of this Parameter."""
        if self._stype != "row_sparse":
            raise MXNetError(
                f"Cannot return copies of Parameter '{self.name}' on all contexts via "
                f"list_row_sparse_data() because its storage type is {self._stype}. Please "
                f"use data() instead."
            )
        return [self._get_row_sparse(row_id, ctx) for ctx in self.list_ctx()]

    def _get_row_sparse(self, row_id, ctx):
        from ..ndarray.sparse import retain

        if not isinstance(row_id, NDArray):
            raise ArgumentTypeError(f"row_id must have NDArray type, but {type(row_id)} is given")
        if self._trainer is None:
            raise MXNetError(
                f"Cannot get row_sparse data for Parameter '{self.name}' when no Trainer is "
                f"created with it."
            )
        self._check()
        trainer = self._trainer
        if not trainer._kv_initialized:  # MXNet: reading rows sets up the trainer's store
            trainer._init_kvstore()
        if trainer._params_to_init:
            trainer._init_params()
        full = self._data if ctx is None or not self._copies else self._array_for(ctx)
        if row_id.context != full.context:  # the rows are taken where the weight lives
            row_id = row_id.as_in_context(full.context)
        with autograd.pause():
            out = retain(full, row_id).as_in_context(ctx)
        out._grad, out._grad_req = full._grad, full._grad_req  # backward writes ours
        return out

    def _reduce(self):
        """The value to save: the dense array, or a RowSparseNDArray of every row."""
        if self._stype == "default":
            return self.data()
        self._check()
        from ..ndarray.sparse import cast_storage

        with autograd.pause():
            return cast_storage(NDArray(self._data._data), stype=self._stype)

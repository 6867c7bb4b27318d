"""The classes behind ``mx.operator``: ``CustomOp``, ``CustomOpProp``, the registry of
props by name (``register``), and ``CustomOpError``. ``operator`` runs them (eager and
inside graphs); ``_legacy_op`` builds MXNet's deprecated Python operators on them."""

from __future__ import annotations

from .base import MXNetError

__all__ = [
    "CustomOp",
    "CustomOpError",
    "CustomOpProp",
    "register",
    "get_all_registered_operators",
]

_REGISTRY: dict = {}


class CustomOpError(MXNetError, ValueError):
    """A custom operator that is unknown, or whose prop or op misbehaves."""


class CustomOp:
    """Base class of Python operators: define ``forward`` and ``backward``."""

    def __init__(self):
        pass

    def forward(self, is_train, req, in_data, out_data, aux):
        """Compute ``out_data`` from ``in_data`` (write with :meth:`assign`).

        Parameters
        ----------
        is_train : bool
        req : list of {'null', 'write', 'inplace', 'add'}
            How each output is to be written.
        in_data, out_data, aux : list of NDArray
        """
        raise NotImplementedError(f"{type(self).__name__}.forward")

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Compute ``in_grad`` from ``out_grad`` (write with :meth:`assign`)."""
        raise NotImplementedError(f"{type(self).__name__}.backward")

    def assign(self, dst, req, src):
        """Write ``src`` into NDArray ``dst`` as ``req`` says ('null': nothing, 'write' or
        'inplace': overwrite, 'add': accumulate)."""
        if req == "null":
            return
        if req in ("write", "inplace"):
            dst[:] = src
        elif req == "add":
            dst[:] = dst + src
        else:
            raise CustomOpError(f"assign: unknown req {req!r} (null, write, inplace or add)")


class CustomOpProp:
    """Base class of operator descriptions: arguments, outputs, inference, creation.

    Parameters
    ----------
    need_top_grad : bool
        Whether ``backward`` needs the output gradients (False for losses).
    """

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape):
        """``(arg_shapes, out_shapes, aux_shapes)``; by default every output and auxiliary
        state has the first input's shape."""
        first = in_shape[0]
        return (
            in_shape,
            [first] * len(self.list_outputs()),
            [first] * len(self.list_auxiliary_states()),
        )

    def infer_type(self, in_type):
        """``(arg_types, out_types, aux_types)``; by default the first input's type."""
        t = in_type[0]
        return (
            [t] * len(in_type),
            [t] * len(self.list_outputs()),
            [t] * len(self.list_auxiliary_states()),
        )

    def infer_storage_type(self, in_stype):
        """Dense storage for every array (gluonjax arrays are dense)."""
        return (
            ["default"] * len(in_stype),
            ["default"] * len(self.list_outputs()),
            ["default"] * len(self.list_auxiliary_states()),
        )

    def infer_storage_type_backward(self, ograd_stype, in_stype, out_stype, igrad_stype, aux_stype):
        """Dense storage for every gradient."""
        return (
            ["default"] * len(ograd_stype),
            ["default"] * len(in_stype),
            ["default"] * len(out_stype),
            ["default"] * len(igrad_stype),
            ["default"] * len(aux_stype),
        )

    def list_outputs(self):
        """Output names (default ``['output']``)."""
        return ["output"]

    def list_arguments(self):
        """Input names (default ``['data']``)."""
        return ["data"]

    def list_auxiliary_states(self):
        """Auxiliary state names (default none)."""
        return []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """The arrays ``backward`` reads (all of them by default)."""
        deps = list(out_grad) if self.need_top_grad_ else []
        return deps + list(in_data) + list(out_data)

    def create_operator(self, ctx, in_shapes, in_dtypes):
        """The :class:`CustomOp` for these input shapes and dtypes."""
        return CustomOp()


def register(reg_name):
    """Class decorator: register a :class:`CustomOpProp` subclass as ``op_type=reg_name``."""

    def deco(prop_cls):
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise CustomOpError(f"register({reg_name!r}) decorates CustomOpProp subclasses")
        _REGISTRY[reg_name] = prop_cls
        return prop_cls

    return deco


def get_all_registered_operators():
    """The names of the registered custom operators."""
    return sorted(_REGISTRY)


def _prop(op_type, kwargs):
    cls = _REGISTRY.get(op_type)
    if cls is None:
        raise CustomOpError(
            f"Custom: no operator registered as op_type={op_type!r}; registered: "
            f"{get_all_registered_operators()} (use @mx.operator.register(name))"
        )
    return cls(**{k: str(v) for k, v in kwargs.items()})

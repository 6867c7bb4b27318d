"""Block: the base of every Gluon layer and model (MXNet 1.x semantics)."""

from __future__ import annotations

import warnings
from collections import OrderedDict

import numpy as np

from .._caches import PROCESS
from ..base import MXNetError
from ..ndarray.ndarray import NDArray
from ._scope import BlockScope
from ._scope import BlockScope as _BlockScope  # noqa: F401 - MXNet's name (gluon.block)
from .parameter import Parameter
from .parameter_dict import ParameterDict

__all__ = ["Block", "BlockAttributeError"]


class BlockAttributeError(MXNetError, TypeError):
    """An attribute holding a child Block or a Parameter was given a value of another
    type (MXNet raises TypeError), or a Parameter attribute was set twice."""


# Bumped whenever hooks or children change, so blocks can cache "may I compile myself
# whole in eager mode?" (see HybridBlock._can_auto_jit).


class _HookHandle:
    def __init__(self, hooks, hook):
        self._hooks, self._id = hooks, id(hook)
        hooks[self._id] = hook

    def detach(self):
        self._hooks.pop(self._id, None)
        PROCESS.structure_epoch += 1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.detach()


def _indent(text, n):
    lines = text.split("\n")
    return "\n".join([lines[0]] + [" " * n + ln for ln in lines[1:]])


class Block:
    """Base class of layers and models; subclass it and define ``forward``.

    Parameters
    ----------
    prefix : str, optional
        Name prefix of this block's parameters (default: ``<classname><N>_``).
    params : ParameterDict, optional
        Share parameters with another block.

    Examples
    --------
    >>> import gluonjax as mx
    >>> class Net(mx.gluon.Block):
    ...     def __init__(self, **kwargs):
    ...         super().__init__(**kwargs)
    ...         with self.name_scope():
    ...             self.fc = mx.gluon.nn.Dense(2, in_units=3)
    ...     def forward(self, x):
    ...         return self.fc(x) * 2
    >>> net = Net(prefix='net_'); net.initialize()
    >>> net(mx.nd.ones((1, 3))).shape
    (1, 2)
    >>> sorted(net._collect_params_with_prefix())
    ['fc.bias', 'fc.weight']
    """

    def __init__(self, prefix=None, params=None):
        object.__setattr__(self, "_children", OrderedDict())
        object.__setattr__(self, "_reg_params", OrderedDict())
        self._empty_prefix = prefix == ""
        self._prefix, self._params = BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith("_") else self._prefix
        self._scope = BlockScope(self)
        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()

    def _alias(self):
        return self.__class__.__name__.lower()

    # ------------------------------------------------------------ registration
    def __setattr__(self, name, value):
        existing = self.__dict__.get(name)
        if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
            raise BlockAttributeError(
                f"{type(self).__name__}.{name}: changing the attribute's type from "
                f"{type(existing).__name__} to {type(value).__name__} is not allowed (it holds "
                f"a registered {'child block' if isinstance(existing, Block) else 'parameter'}). "
                f"Use another attribute name for the new value."
            )
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise BlockAttributeError(
                    f"{type(self).__name__}.{name}: overriding a Parameter attribute is not "
                    f"allowed. To share parameters between blocks, pass params= when "
                    f"constructing the block instead."
                )
            self._reg_params[name] = value
        object.__setattr__(self, name, value)

    def _check_container_with_block(self):
        """Warn about Blocks kept in plain lists, tuples or dicts (they are not children)."""
        children = {id(c) for c in self._children.values()}

        def unregistered(data):
            if isinstance(data, (list, tuple)):
                return any(unregistered(v) for v in data)
            if isinstance(data, dict):
                return any(unregistered(v) for v in data.values())
            return isinstance(data, Block) and id(data) not in children

        for key, value in self.__dict__.items():
            if key.startswith("__") or key == "_children":
                continue
            if isinstance(value, (list, tuple, dict)) and unregistered(value):
                warnings.warn(
                    f'"{type(self).__name__}.{key}" is an unregistered container with Blocks. '
                    f"Blocks inside a list, tuple or dict are not registered automatically, so "
                    f"their parameters are not collected: register them with register_child() "
                    f"or use nn.Sequential / nn.HybridSequential instead.",
                    stacklevel=3,
                )

    def register_child(self, block, name=None):
        """Make ``block`` a child (named ``name`` or by its position)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block
        PROCESS.structure_epoch += 1

    def __repr__(self):
        mods = "\n".join(
            f"  ({key}): {_indent(repr(block), 2)}" for key, block in self._children.items()
        )
        return f"{self.__class__.__name__}(\n{mods}\n)"

    @property
    def prefix(self):
        return self._prefix

    @property
    def name(self):
        return self._name

    @property
    def params(self):
        """This block's own ParameterDict (children's parameters are not included)."""
        return self._params

    def name_scope(self):
        """Scope in which child blocks and symbols get this block's prefix."""
        return self._scope

    # ------------------------------------------------------------ parameters
    def _own_params(self):
        """{local name: Parameter}: attributes, then ``self.params.get`` entries."""
        own = OrderedDict(self._reg_params)
        seen = {id(p) for p in own.values()}
        plen = len(self._params.prefix)
        for full, p in self._params.items():
            if id(p) not in seen and not self._child_owns(p):
                own[full[plen:] if full.startswith(self._params.prefix) else full] = p
                seen.add(id(p))
        return own

    def _child_owns(self, param):
        return any(
            param in c._params.values() or param in c._reg_params.values()
            for c in self._children.values()
        )

    def collect_params(self, select=None):
        """Every parameter of this block and its descendants, optionally regex-selected.

        Parameters
        ----------
        select : str, optional
            Regular expression(s) matched against display names, e.g. ``'.*weight|.*bias'``.
        """
        from ._collect import collect

        self.apply(Block._check_container_with_block)
        ret = ParameterDict(self._params.prefix)
        ret._params.update(collect(self, select))
        return ret

    def _local_params(self):
        """{local key: Parameter} of this block alone, keyed as parameter files name them
        (a layer whose files use other keys, such as the fused RNN layers, overrides it)."""
        return self._own_params()

    def _walk_params(self, path=""):
        """The parameter walk: ``(child path, block, local key, Parameter)`` for every
        parameter of this block and its descendants, depth first. ``collect_params``,
        structural names, files and compiled calls all read the tree through it."""
        for local, p in self._local_params().items():
            yield path, self, local, p
        for name, child in self._children.items():
            yield from child._walk_params(f"{path}.{name}" if path else name)

    def _all_params(self):
        """Every distinct Parameter, in walk order."""
        out, seen = [], set()
        for *_, p in self._walk_params():
            if id(p) not in seen:
                seen.add(id(p))
                out.append(p)
        return out

    def _collect_params_with_prefix(self, prefix=""):
        """{structural name: Parameter}, e.g. ``{'0.weight': ..., 'fc1.bias': ...}``."""
        return OrderedDict(
            (".".join(k for k in (prefix, path, local) if k), p)
            for path, _, local, p in self._walk_params()
        )

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False):
        """Initialize every parameter (``Uniform()`` by default) on ``ctx`` (a context or a
        list of them: one array per context)."""
        self.collect_params().initialize(init, ctx, verbose, force_reinit)
        if force_reinit or isinstance(ctx, (list, tuple)):
            self.apply(_drop_compiled)  # compiled calls hold the parameters' arrays

    def zero_grad(self):
        self.collect_params().zero_grad()

    def cast(self, dtype):
        """Cast every parameter to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for p in self._own_params().values():
            p.cast(dtype)

    def reset_ctx(self, ctx):
        """Move every parameter to ``ctx`` (a context or a list of them)."""
        self.collect_params().reset_ctx(ctx)
        self.apply(_drop_compiled)

    def apply(self, fn):
        """Call ``fn(block)`` on every descendant, then on this block."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def hybridize(self, active=True, **kwargs):
        """Hybridize the HybridBlock descendants (a plain Block itself stays eager)."""
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    # ------------------------------------------------------------ hooks and calls
    def register_forward_pre_hook(self, hook):
        """``hook(block, inputs)`` runs before forward; returns a handle with ``detach()``."""
        PROCESS.structure_epoch += 1
        self.__dict__["_fast"] = None  # a hybridized block leaves its hook-free fast path
        return _HookHandle(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook):
        """``hook(block, inputs, outputs)`` runs after forward."""
        PROCESS.structure_epoch += 1
        self.__dict__["_fast"] = None
        return _HookHandle(self._forward_hooks, hook)

    def __call__(self, *args, **kwargs):
        for hook in list(self._forward_pre_hooks.values()):
            hook(self, args)
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            hook(self, args, out)
        return out

    def forward(self, *args):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    # ------------------------------------------------------------ files
    def save_parameters(self, filename, deduplicate=False):
        """Save parameters under structural names (``0.weight``), loadable into a fresh model."""
        from ._params_file import save_structural

        save_structural(self, filename, deduplicate)

    def load_parameters(
        self,
        filename,
        ctx=None,
        allow_missing=False,
        ignore_extra=False,
        cast_dtype=False,
        dtype_source="current",
    ):
        """Load a file saved by :meth:`save_parameters`; on any mismatch nothing changes."""
        from ._params_file import load_structural

        load_structural(self, filename, ctx, allow_missing, ignore_extra, cast_dtype, dtype_source)

    def save_params(self, filename):
        """[Deprecated] MXNet's legacy format: display names minus this block's prefix.

        Such a file loads into a SymbolBlock of the exported graph, or into a block
        of the same architecture with :meth:`load_params`. Prefer :meth:`save_parameters`.
        """
        warnings.warn(
            "save_params is deprecated. Please use save_parameters. Note that if you want to "
            "load from SymbolBlock later, please use export instead.",
            stacklevel=2,
        )
        self.collect_params().save(filename, strip_prefix=self.prefix)

    def load_params(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        """[Deprecated] Load a file of :meth:`save_params` (or :meth:`save_parameters`)."""
        warnings.warn("load_params is deprecated. Please use load_parameters.", stacklevel=2)
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    def save(self, prefix):
        """Save the block tree (``<prefix>-model.json``) and its parameters
        (``<prefix>-model.params``), as MXNet 1.9.1's ``Block.save``."""
        from ._block_io import save_model

        save_model(self, prefix)

    def load(self, prefix):
        """Load files written by :meth:`save` into a model built by the same code
        (block names and child keys are restored first, as MXNet 1.9.1 does)."""
        from ._block_io import load_model

        load_model(self, prefix)

    # ------------------------------------------------------------ summary
    def summary(self, *inputs):
        """Print a layer table: output shapes and parameter counts (runs one forward)."""
        from ._summary import summary

        summary(self, *inputs)


def _drop_compiled(block):
    clear = getattr(block, "_clear_cached", None)
    if clear is not None:
        clear()


def to_ndarray(x):
    """NDArray for a jax/numpy array input; other values pass through."""
    if isinstance(x, NDArray) or x is None:
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        import jax.numpy as jnp

        return NDArray(jnp.asarray(x))
    if isinstance(x, (list, tuple)):
        return type(x)(to_ndarray(v) for v in x)
    return x


def param_count(params):
    return int(sum(np.prod(p.shape) for p in params if p.shape is not None))


# MXNet defines HybridBlock and SymbolBlock in gluon/block.py, and libraries import them from
# there (``from mxnet.gluon.block import HybridBlock``); here they live in their own modules,
# which import this one, so they are looked up on first access.
_MOVED = {"HybridBlock": "hybrid", "SymbolBlock": "symbol_block"}


def __getattr__(name):
    if name in _MOVED:
        import importlib

        return getattr(importlib.import_module(f"{__package__}.{_MOVED[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

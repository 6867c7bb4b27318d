"""The op registry: every operator of gluonjax is defined here exactly once.

An :class:`Op` holds the MXNet name, the MXNet keyword arguments (with their
defaults and string forms, as they appear in symbol JSON) and a single jax
implementation. ``gluonjax.nd`` and ``gluonjax.sym`` are generated from it, and
the JSON exporter/importer look ops up here by name, so no op exists twice.

Eager calls go through :meth:`Op.kernel`, which returns one ``jax.jit``-compiled
function per (op, static attributes); jax caches the compiled XLA executable per
input shape/dtype, so an eager ``FullyConnected`` is a single dispatch.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax

from .._caches import LRU
from ..base import AttrError, IndexOutOfRangeError, OpError, ShapeError
from .attrs import REQUIRED, Attr, attr_to_str, dtype_of  # noqa: F401  (re-exported)

__all__ = ["Attr", "Op", "register", "get", "list_ops", "REQUIRED", "dtype_of"]

_REGISTRY: dict[str, Op] = {}


@dataclass(eq=False)
class Op:
    """An operator: MXNet name, attributes, inputs and one jax implementation.

    ``impl(*arrays, **attrs)`` returns one array or a tuple of arrays. Ops whose
    ``aux`` is non-empty (BatchNorm) return ``(outputs, new_aux)`` and the caller
    writes the new auxiliary states back. ``mode`` ops receive ``_train``;
    ``random`` ops receive a jax PRNG key ``_key`` as their first argument.
    """

    name: str
    impl: Callable
    inputs: Any = ("data",)  # tuple of names, or fn(attrs) -> tuple
    attrs: dict = field(default_factory=dict)
    variadic: bool = False  # inputs are *args (Concat, stack, add_n)
    # variadic ops: fn(attrs) -> number of inputs when the attributes say it (num_args,
    # num_arrays, 3 * num_weights...); None reads ``num_args``
    count: Callable | None = None
    aux: Any = ()  # tuple of input names, or fn(attrs) -> tuple (Custom: the prop's)
    num_outputs: Any = 1  # int or fn(attrs) -> int
    visible_outputs: Any = None  # int or fn(attrs); default num_outputs
    output_names: Any = ("output",)
    mode: bool = False
    random: bool = False
    infer_args: Callable | None = None  # fn(attrs, in_shapes: dict) -> dict of arg shapes
    # eager only: fn(attrs: dict, arrays) -> None, raises on bad input *values* (bounds of
    # take(mode='raise'), Embedding indices); never called on traced values
    check: Callable | None = None
    # False: ``check`` runs in eager calls only; a bound executor (a Module's graph) takes
    # the op's traced behaviour, as MXNet's graphs do (Embedding clips the -1 padding of
    # MXNet's bucketing iterators there)
    graph_check: bool = True
    # eager only: fn(attrs: dict, arrays) -> dict of hidden static attributes read from
    # the input *values* (boolean_mask's count: an output shape that depends on values);
    # a traced call leaves them at their defaults and the implementation says it needs
    # eager values (HostOnlyError)
    eager_attrs: Callable | None = None
    head_free: bool = False  # gradient ignores the head gradient (MXNet's loss outputs)
    # eager runs on new shapes use size classes (``_ops.buckets``): "map", "broadcast",
    # ("reduce", identity) with identity 0, 1, "low", "high" or "mean", or "contract"
    # (dot, batch_dot)
    bucket: Any = None
    # integer inputs that need a gradient get one through a float32 stand-in (MXNet gives
    # integer arrays gradients); False: they get zeros, as MXNet's integer ``mod`` does
    int_vjp: bool = True
    doc: str = ""
    aliases: tuple = ()
    _kernels: LRU = field(default_factory=lambda: LRU(512, "op kernels"), repr=False)
    _parsed: dict = field(default_factory=dict, repr=False)
    _seen: dict = field(default_factory=dict, repr=False)  # (attrs, shapes) -> calls

    def __post_init__(self):
        if self.mode:
            self.attrs["_train"] = Attr("bool", False)
        self.static_names = tuple(k for k, a in self.attrs.items() if a.static)
        self.dynamic_names = tuple(k for k, a in self.attrs.items() if not a.static)
        if self.random or self.aux or self.variadic or self.num_outputs != 1:
            self.bucket = None  # keys, auxiliary states, counts: exact shapes only

    def __repr__(self):
        return f"<Op {self.name}>"

    __str__ = lambda self: self.name  # noqa: E731

    # -- attributes
    def default_inputs(self):
        """The op's input names with every attribute at its default (before a call's
        attributes are parsed); empty when they depend on a required attribute."""
        defaults = {
            k: (None if a.default is REQUIRED else a.default) for k, a in self.attrs.items()
        }
        try:
            return list(self.input_names(defaults))
        except Exception:  # inputs that depend on attributes the call did not give
            return []

    def unknown_keywords(self, strays):
        """The error for keywords that are neither an input nor an attribute of this op,
        with the closest attribute name for each (``num_hiden`` -> ``num_hidden``)."""
        import difflib

        defaults = {
            k: (None if a.default is REQUIRED else a.default) for k, a in self.attrs.items()
        }
        try:
            inputs = list(self.input_names(defaults))
        except Exception:  # inputs that depend on attributes the call did not give
            inputs = []
        public = [a for a in self.attrs if not a.startswith("_")]
        hints = {k: difflib.get_close_matches(k, public + inputs, n=1) for k in strays}
        hint = "; ".join(f"{k!r} -> did you mean {h[0]!r}?" for k, h in hints.items() if h)
        return AttrError(
            f"{self.name}: unknown argument(s) {list(strays)}"
            + (f" ({hint})" if hint else "")
            + f"; inputs are {inputs}, attributes are {public}"
        )

    def parse_attrs(self, kwargs):
        """Validate ``kwargs`` and return ``(static_key, dynamic_values)``.

        ``static_key`` is a hashable tuple of every static attribute's value in
        declaration order (defaults filled in); results are memoised.
        """
        try:
            memo_key = tuple(kwargs.items())
            hit = self._parsed.get(memo_key)
            if hit is not None:
                return hit
        except TypeError:
            memo_key = None
        unknown = [k for k in kwargs if k not in self.attrs]
        if unknown:
            known = ", ".join(self.attrs) or "none"
            raise AttrError(
                f"{self.name}: unknown attribute(s) {unknown}; {self.name} takes: {known}"
            )
        values = {}
        for k, a in self.attrs.items():
            if k in kwargs and kwargs[k] is not None or (k in kwargs and a.kind.endswith("?")):
                values[k] = a.parse(self.name, k, kwargs[k])
            elif a.default is REQUIRED:
                raise AttrError(
                    f"{self.name}: required attribute '{k}' is missing "
                    f"(e.g. {self.name}(..., {k}=...))"
                )
            else:
                values[k] = a.default
        out = (
            tuple(values[k] for k in self.static_names),
            tuple(values[k] for k in self.dynamic_names),
        )
        if memo_key is not None and not self.dynamic_names:
            self._parsed[memo_key] = out
        return out

    def attr_dict(self, static_key, dynamic=()):
        """Attribute name -> value from a parsed key."""
        d = dict(zip(self.static_names, static_key))
        d.update(zip(self.dynamic_names, dynamic))
        return d

    def input_names(self, attrs, n_args=None):
        """Argument names for these attributes (``arg0..`` for variadic ops)."""
        if self.variadic:
            if n_args is None:
                n_args = self.count(attrs) if self.count is not None else attrs.get("num_args")
            return tuple(f"arg{i}" for i in range(n_args or 0))
        names = self.inputs(attrs) if callable(self.inputs) else self.inputs
        return tuple(names)

    def aux_names(self, attrs):
        """The auxiliary-state inputs for these attributes (``aux`` may be fn(attrs))."""
        return tuple(self.aux(attrs)) if callable(self.aux) else self.aux

    def n_outputs(self, attrs):
        return self.num_outputs(attrs) if callable(self.num_outputs) else self.num_outputs

    def n_visible(self, attrs):
        v = self.visible_outputs
        if v is None:
            return self.n_outputs(attrs)
        return v(attrs) if callable(v) else v

    # -- execution
    def bound(self, static_key):
        """The implementation with static attributes fixed: ``f(*arrays, *dynamic)``."""
        static = dict(zip(self.static_names, static_key))
        dyn_names = self.dynamic_names
        impl = self.impl
        if dyn_names:

            def fn(*args):
                n = len(args) - len(dyn_names)
                return impl(*args[:n], **static, **dict(zip(dyn_names, args[n:])))
        else:

            def fn(*args):
                return impl(*args, **static)

        if self.random:
            inner = fn

            def fn(seed_key, counter, *args):
                return inner(jax.random.fold_in(seed_key, counter), *args)

        fn.__name__ = fn.__qualname__ = self.name
        return fn

    def kernel(self, static_key):
        """The cached ``jax.jit`` kernel for these static attributes.

        Its name is ``<op>__gj<digest of the attributes>``; inside a traced program it
        shows up as a ``jit`` equation of that name, and :func:`kernel_owner` maps the
        name back to ``(op, static_key)`` (the jaxpr -> MXNet JSON converter relies on
        it). The name does not depend on the order kernels are made in, so the
        persistent compilation cache finds the program in any later process.
        """
        k = self._kernels.get(static_key)
        if k is None:
            fn = self.bound(static_key)
            fn.__name__ = fn.__qualname__ = _kernel_name(self, static_key)
            k = self._kernels.put(static_key, jax.jit(fn))
            _KERNEL_OWNER.put(fn.__name__, (self, static_key))
        return k

    def fail(self, err, args, static_key):
        """Turn an exception from the implementation into an OpError."""
        if isinstance(err, (OpError, IndexOutOfRangeError)):
            return err
        shapes = ", ".join(
            f"{tuple(getattr(a, 'shape', ()))}:{getattr(a, 'dtype', type(a).__name__)}"
            for a in args
        )
        attrs = self.attr_dict(static_key)
        shown = {k: v for k, v in attrs.items() if not k.startswith("_")}
        msg = str(err).split("\n")[0]
        if isinstance(err, TypeError) and _ARITY.match(msg):
            # Python's arity message names the implementation (``impl() missing 1 ...``):
            # say it in the op's terms instead
            count = len(args) - (1 if self.random else 0)
            msg = (
                f"it takes the inputs {self.default_inputs() or '(see its signature)'}, "
                f"got {count} array(s) ({_ARITY.sub('', msg)})"
            )
        cls = ShapeError if isinstance(err, (TypeError, ValueError, IndexError)) else OpError
        return cls(
            f"{self.name}: cannot compute with inputs [{shapes}] and attributes {shown}: {msg}"
        )


# MXNet's legacy ops whose inputs share one dtype (its ElemwiseType inference): a mix
# raises there (nd calls, symbol type inference), where jax would promote silently.
# ``mx.np`` promotes as NumPy does and does not ask.
_SAME_DTYPE_OPS = frozenset(
    {"FullyConnected", "Convolution", "Deconvolution", "dot", "batch_dot", "Concat",
     "stack", "add_n", "_linalg_gemm", "_linalg_gemm2"}
)  # fmt: skip
_SAME_DTYPE = {}


def same_dtype_inputs(op):
    """Whether MXNet's type inference makes every input of ``op`` one dtype."""
    hit = _SAME_DTYPE.get(op.name)
    if hit is None:
        hit = _SAME_DTYPE[op.name] = op.name in _SAME_DTYPE_OPS or (
            op.bucket in ("map", "broadcast") and not op.variadic and op.name != "where"
        )
    return hit


# Python's own message for a call with too many or too few arguments
_ARITY = re.compile(
    r"^[\w.<>]+\(\) (?=missing \d+ required|takes \d+ positional|got an unexpected)"
)

# kernel name -> (op, static_key), for the jaxpr -> JSON converter
_KERNEL_OWNER = LRU(1 << 16, "kernel names")


def _kernel_name(op, static_key):
    base = f"{op.name}__gj{zlib.crc32(repr(static_key).encode()):08x}"
    name, n = base, 0
    while (owner := _KERNEL_OWNER.get(name)) is not None and (
        owner[0] is not op or owner[1] != static_key
    ):
        n += 1
        name = f"{base}_{n}"  # two attribute sets with one digest
    return name


def kernel_owner(name):
    """``(op, static_key)`` of the kernel called ``name`` (a jaxpr ``jit`` name), or None."""
    return _KERNEL_OWNER.get(name)


def register(name, *, inputs=("data",), attrs=None, aliases=(), **kw):
    """Decorator: register ``impl`` as op ``name`` (and its aliases).

    Examples
    --------
    >>> from gluonjax._ops.registry import register, Attr, get
    >>> @register("_demo_scale", attrs={"k": Attr("float", 2.0)})
    ... def _demo_scale(data, k):
    ...     return data * k
    >>> get("_demo_scale").attrs["k"].default
    2.0
    """

    def deco(impl):
        op = Op(
            name=name,
            impl=impl,
            inputs=inputs,
            attrs=dict(attrs or {}),
            aliases=tuple(aliases),
            doc=kw.pop("doc", impl.__doc__ or ""),
            **kw,
        )
        for n in (name, *aliases):
            if n in _REGISTRY:
                raise OpError(f"op {n!r} is registered twice")
            _REGISTRY[n] = op
        return impl

    return deco


def split_positional_attrs(op, args, attr_kw):
    """Drop trailing ``None`` inputs and map trailing non-array positionals to attributes.

    MXNet's generated functions accept ``clip(x, 0, 1)`` (attributes after the
    inputs, in declaration order) and ``FullyConnected(x, w, None, no_bias=True)``.
    """
    args = list(args)
    while args and args[-1] is None:
        args.pop()
    extra = []
    while (
        args
        and isinstance(args[-1], (int, float, str, tuple, list, bool))
        and not (isinstance(args[-1], (tuple, list)) and args[-1] and hasattr(args[-1][0], "shape"))
    ):
        extra.insert(0, args.pop())
    if extra:
        free = [k for k in op.attrs if k not in attr_kw and not k.startswith("_")]
        for k, v in zip(free, extra):
            attr_kw[k] = v
    return tuple(args)


def get(name):
    """The Op called ``name`` (an MXNet name or alias); raises OpError if unknown."""
    try:
        return _REGISTRY[name]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(name, list(_REGISTRY), n=3)
        hint = f" Did you mean {close}?" if close else ""
        raise OpError(f"unknown operator {name!r}.{hint}") from None


def list_ops():
    """Every registered name (aliases included), sorted."""
    return sorted(_REGISTRY)


def items():
    """(name, op) pairs, aliases included."""
    return list(_REGISTRY.items())

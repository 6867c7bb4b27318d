"""Core layers: Sequential, Dense, Dropout, BatchNorm, norms, Embedding, Flatten, Lambda."""

from __future__ import annotations

import warnings

from ...base import MXNetError
from ..block import Block
from ..hybrid import HybridBlock

__all__ = [
    "Sequential",
    "HybridSequential",
    "Dense",
    "Dropout",
    "Embedding",
    "Flatten",
    "Lambda",
    "HybridLambda",
]


class _SequentialMixin:
    def add(self, *blocks):
        """Append blocks; they run in order."""
        for block in blocks:
            self.register_child(block)
        if hasattr(self, "_clear_cached"):  # a hybridized stack recompiles with the new layers
            self._clear_cached()

    def __getitem__(self, key):
        layers = list(self._children.values())[key]
        if isinstance(layers, list):
            net = type(self)(prefix=self._prefix)
            with net.name_scope():
                net.add(*layers)
            return net
        return layers

    def __len__(self):
        return len(self._children)


class Sequential(_SequentialMixin, Block):
    """Stacks Blocks sequentially.

    Examples
    --------
    >>> import gluonjax as mx
    >>> net = mx.gluon.nn.Sequential()
    >>> net.add(mx.gluon.nn.Dense(3), mx.gluon.nn.Dense(2))
    >>> net.initialize(); net(mx.nd.ones((4, 5))).shape
    (4, 2)
    """

    def forward(self, x, *args):
        for block in self._children.values():
            x = block(x, *args)
            args = ()
            if isinstance(x, (tuple, list)):
                x, args = x[0], tuple(x[1:])
        return x if not args else (x, *args)

    def hybridize(self, active=True, **kwargs):
        """Hybridize the HybridBlock children (warns when all of them are: use
        HybridSequential then, which compiles the whole stack as one)."""
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn(
                f"All children of this Sequential layer '{self.prefix}' are HybridBlocks. "
                f"Consider using HybridSequential for the best performance.",
                stacklevel=2,
            )
        super().hybridize(active, **kwargs)


class HybridSequential(_SequentialMixin, HybridBlock):
    """Stacks HybridBlocks sequentially; ``hybridize()`` compiles the whole stack.

    Made only of built-in layers, it also runs eagerly as one compiled call.
    """

    _auto_jit = True

    def hybrid_forward(self, F, x, *args):
        for block in self._children.values():
            x = block(x, *args)
            args = ()
            if isinstance(x, (tuple, list)):
                x, args = x[0], tuple(x[1:])
        return x if not args else (x, *args)


class Dense(HybridBlock):
    """Fully connected layer: ``activation(dot(x, weight.T) + bias)``.

    Parameters
    ----------
    units : int
    activation : str, optional
        Name of an Activation act_type ('relu', 'sigmoid', 'tanh', 'softrelu', 'softsign').
    use_bias : bool, default True
    flatten : bool, default True
        Flatten inputs to 2-D first; else apply to the last axis.
    dtype : str, default 'float32'
    weight_initializer, bias_initializer : Initializer or str
    in_units : int, default 0 (inferred at the first forward)

    Inputs: ``data`` of shape (batch, ...). Outputs: (batch, units).
    """

    _auto_jit = True

    def __init__(
        self,
        units,
        activation=None,
        use_bias=True,
        flatten=True,
        dtype="float32",
        weight_initializer=None,
        bias_initializer="zeros",
        in_units=0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get(
                "weight",
                shape=(units, in_units),
                init=weight_initializer,
                dtype=dtype,
                allow_deferred_init=True,
            )
            if use_bias:
                self.bias = self.params.get(
                    "bias",
                    shape=(units,),
                    init=bias_initializer,
                    dtype=dtype,
                    allow_deferred_init=True,
                )
            else:
                self.bias = None
            if activation is not None:
                from .activations import Activation

                self.act = Activation(activation, prefix=activation + "_")
            else:
                self.act = None

    def hybrid_forward(self, F, x, weight, bias=None):
        out = F.FullyConnected(
            x,
            weight,
            bias,
            no_bias=bias is None,
            num_hidden=self._units,
            flatten=self._flatten,
            name="fwd",
        )
        if self.act is not None:
            out = self.act(out)
        return out

    def __repr__(self):
        shape = self.weight.shape
        ins = shape[1] if shape[1] else None
        act = repr(self.act) if self.act is not None else "linear"
        return f"{type(self).__name__}({ins} -> {shape[0]}, {act})"


class Dropout(HybridBlock):
    """Randomly zero inputs with probability ``rate`` during training.

    Parameters
    ----------
    rate : float
    axes : tuple of int
        Axes along which the mask is shared.
    """

    _auto_jit = True

    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F, x):
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name="fwd", cudnn_off=False)
        return F.identity(x)

    def __repr__(self):
        return f"{type(self).__name__}(p = {self._rate}, axes={self._axes})"


class Embedding(HybridBlock):
    """Map integer indices to dense vectors of size ``output_dim``.

    Not hybridized, an index outside ``[0, input_dim)`` raises ``IndexError`` (the values
    are known; one op, so nothing is lost by not compiling it); hybridized, indices are
    clipped, as MXNet does.
    """

    _auto_jit = False  # eager calls check index values (see the docstring)

    def __init__(
        self,
        input_dim,
        output_dim,
        dtype="float32",
        weight_initializer=None,
        sparse_grad=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._kwargs = {
            "input_dim": input_dim,
            "output_dim": output_dim,
            "dtype": dtype,
            "sparse_grad": sparse_grad,
        }
        self.weight = self.params.get(
            "weight",
            shape=(input_dim, output_dim),
            init=weight_initializer,
            dtype=dtype,
            allow_deferred_init=True,
            grad_stype="row_sparse" if sparse_grad else "default",
        )

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return f"{type(self).__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"


class Flatten(HybridBlock):
    """Flatten to (batch, -1)."""

    _auto_jit = True

    def hybrid_forward(self, F, x):
        return F.Flatten(x)

    def __repr__(self):
        return type(self).__name__


def _resolve(function, namespace_name):
    if isinstance(function, str):
        return function
    if not callable(function):
        raise MXNetError(f"{namespace_name} needs a function or an operator name, got {function!r}")
    return function


class Lambda(Block):
    """Wrap a function (or an ``nd`` operator name) as a Block."""

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        self._func = _resolve(function, "Lambda")

    def forward(self, *args):
        if isinstance(self._func, str):
            from ... import ndarray

            if not hasattr(ndarray, self._func):
                raise MXNetError(f"Lambda: nd has no operator {self._func!r}")
            return getattr(ndarray, self._func)(*args)
        return self._func(*args)

    def __repr__(self):
        name = self._func if isinstance(self._func, str) else self._func.__name__
        return f"{type(self).__name__}({name})"


class HybridLambda(HybridBlock):
    """Wrap ``function(F, x, ...)`` (or an operator name) as a HybridBlock."""

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        self._func = _resolve(function, "HybridLambda")

    def hybrid_forward(self, F, x, *args):
        if isinstance(self._func, str):
            if not hasattr(F, self._func):
                raise MXNetError(f"HybridLambda: {F.__name__} has no operator {self._func!r}")
            return getattr(F, self._func)(x, *args)
        return self._func(F, x, *args)

    def __repr__(self):
        name = self._func if isinstance(self._func, str) else self._func.__name__
        return f"{type(self).__name__}({name})"

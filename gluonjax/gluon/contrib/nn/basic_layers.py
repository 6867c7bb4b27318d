"""Contributed layers of MXNet 1.9.1's ``gluon.contrib.nn``."""

from __future__ import annotations

import warnings

from .... import context
from ....base import MXNetError
from ...block import Block
from ...hybrid import HybridBlock
from ...nn import BatchNorm, HybridSequential, Sequential

__all__ = [
    "Concurrent",
    "HybridConcurrent",
    "Identity",
    "SparseEmbedding",
    "SyncBatchNorm",
    "PixelShuffle1D",
    "PixelShuffle2D",
    "PixelShuffle3D",
]


class Concurrent(Sequential):
    """Feed the input to every child and concatenate their outputs along ``axis``.

    Parameters
    ----------
    axis : int, default -1
        The axis along which the outputs are concatenated.

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax.gluon import nn
    >>> from gluonjax.gluon.contrib.nn import Concurrent, Identity
    >>> net = Concurrent()
    >>> with net.name_scope():
    ...     net.add(nn.Dense(3), Identity())
    >>> net.initialize(); net(mx.nd.ones((2, 4))).shape
    (2, 7)
    """

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        from .... import ndarray as nd

        return nd.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class HybridConcurrent(HybridSequential):
    """Feed the input to every child and concatenate their outputs along ``axis``.

    The HybridBlock form of :class:`Concurrent` (Inception and DenseNet blocks).

    Parameters
    ----------
    axis : int, default -1
        The axis along which the outputs are concatenated.

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax.gluon import nn
    >>> from gluonjax.gluon.contrib.nn import HybridConcurrent
    >>> net = HybridConcurrent(axis=1)
    >>> with net.name_scope():
    ...     net.add(nn.Conv2D(2, 1), nn.Conv2D(3, 1))
    >>> net.initialize(); net.hybridize(); net(mx.nd.ones((1, 4, 5, 5))).shape
    (1, 5, 5, 5)
    """

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class Identity(HybridBlock):
    """Return the input unchanged (a residual branch of a :class:`HybridConcurrent`).

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax.gluon.contrib.nn import Identity
    >>> Identity()(mx.nd.ones((2,))).asnumpy().tolist()
    [1.0, 1.0]
    """

    _auto_jit = True

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x):
        return x


class SparseEmbedding(Block):
    """Embedding whose weight is a ``row_sparse`` parameter, for very large vocabularies.

    As in MXNet, the weight is read with ``row_sparse_data(x)``: only the rows the
    batch uses, and only once a :class:`~gluonjax.gluon.Trainer` optimizes it. The
    rows are stored densely; the gradient is dense (zero outside the used rows).

    Parameters
    ----------
    input_dim : int
        Size of the vocabulary (largest index + 1).
    output_dim : int
        Size of each embedding vector.
    dtype : str, default 'float32'
    weight_initializer : Initializer, optional

    Inputs: ``data`` of indices, any shape. Outputs: ``data.shape + (output_dim,)``.
    """

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {
            "input_dim": input_dim,
            "output_dim": output_dim,
            "dtype": dtype,
            "sparse_grad": True,
        }
        self.weight = self.params.get(
            "weight",
            shape=(input_dim, output_dim),
            init=weight_initializer,
            dtype=dtype,
            grad_stype="row_sparse",
            stype="row_sparse",
        )

    def forward(self, x):
        from .... import ndarray as nd

        weight = self.weight.row_sparse_data(x)
        return nd.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return f"{type(self).__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"


class SyncBatchNorm(BatchNorm):
    """Batch normalization whose statistics cover the whole batch across devices.

    On one device it equals ``nn.BatchNorm(axis=1)``. With the batch split over
    ``num_devices`` devices, MXNet averages the batch statistics across them. In
    gluonjax the whole batch's statistics come from a step that sees the whole batch
    as one array over the devices: ``Trainer.compile_step`` (one program over the
    parameters' devices, given the whole batch or ``split_and_load``'s shards),
    hybridized or not. A loop that calls the layer on each device's shard in turn
    normalizes each shard with its own statistics (gluonjax runs the calls one after
    another; MXNet's engine makes them wait for each other): it warns once.

    In a job of several processes (``python -m gluonjax.launch``), training sums the
    statistics over every worker too, in the forward and backward passes (eager,
    hybridized or in ``compile_step``): the result is BatchNorm on the global batch.
    Every worker must then run the same layers in the same order.

    Parameters
    ----------
    in_channels : int, default 0 (inferred)
    num_devices : int, optional
        Devices the batch is split over (default: the number of GPUs, at least 1).
    momentum, epsilon, center, scale, use_global_stats, *_initializer
        As :class:`~gluonjax.gluon.nn.BatchNorm`.

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax.gluon.contrib.nn import SyncBatchNorm
    >>> bn = SyncBatchNorm(in_channels=3, num_devices=1); bn.initialize()
    >>> bn(mx.nd.ones((2, 3, 4))).shape
    (2, 3, 4)
    """

    def __init__(
        self,
        in_channels=0,
        num_devices=None,
        momentum=0.9,
        epsilon=1e-5,
        center=True,
        scale=True,
        use_global_stats=False,
        beta_initializer="zeros",
        gamma_initializer="ones",
        running_mean_initializer="zeros",
        running_variance_initializer="ones",
        **kwargs,
    ):
        super().__init__(
            axis=1,
            momentum=momentum,
            epsilon=epsilon,
            center=center,
            scale=scale,
            use_global_stats=use_global_stats,
            beta_initializer=beta_initializer,
            gamma_initializer=gamma_initializer,
            running_mean_initializer=running_mean_initializer,
            running_variance_initializer=running_variance_initializer,
            in_channels=in_channels,
            **kwargs,
        )
        if num_devices is None:
            warnings.warn(
                "Caution using SyncBatchNorm: if not using all the GPUs, please set "
                "num_devices manually",
                UserWarning,
                stacklevel=2,
            )
            num_devices = max(context.num_gpus(), 1)
        self._kwargs = {
            "eps": epsilon,
            "momentum": momentum,
            "fix_gamma": not scale,
            "use_global_stats": use_global_stats,
            "ndev": num_devices,
            "key": self.prefix,
        }
        self._warned_shard = False

    def _warn_if_one_shard(self, x):
        """Warn (once) when training eagerly on one device's shard of a batch split over
        several devices: the statistics are then that shard's, not the whole batch's."""
        import jax

        from ....autograd import is_training
        from ....ndarray.ndarray import NDArray
        from ..._mesh import mesh_devices

        if not isinstance(x, NDArray) or isinstance(x._data, jax.core.Tracer) or not is_training():
            return
        if self.gamma._data is None or mesh_devices(self.gamma.list_ctx()) is None:
            return
        if len(x._data.devices()) != 1:
            return
        self._warned_shard = True
        warnings.warn(
            f"SyncBatchNorm '{self.prefix}' runs on one device's shard of the batch: in a loop "
            f"over the devices gluonjax runs the calls one after another, so each normalizes "
            f"with its own shard's statistics (MXNet's engine makes the calls wait for each "
            f"other). For the whole batch's statistics over several devices, train with "
            f"trainer.compile_step(net, loss)(shards, labels): one program over the devices.",
            UserWarning,
            stacklevel=3,
        )

    def __call__(self, *args, **kwargs):
        if not self._warned_shard and args and self._kwargs["ndev"] > 1:
            self._warn_if_one_shard(args[0])
        return super().__call__(*args, **kwargs)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.contrib.SyncBatchNorm(
            x, gamma, beta, running_mean, running_var, name="fwd", **self._kwargs
        )


def _factors(factor, n, cls):
    try:
        factors = (int(factor),) * n
    except TypeError:
        factors = tuple(int(f) for f in factor)
    if len(factors) != n or any(f < 1 for f in factors):
        raise MXNetError(f"{cls}: factor must be a positive int or {n} positive ints, got {factor}")
    return factors


class PixelShuffle1D(HybridBlock):
    """Move groups of ``f`` channels into the width: (N, f*C, W) -> (N, C, W*f).

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax.gluon.contrib.nn import PixelShuffle1D
    >>> PixelShuffle1D(2)(mx.nd.zeros((1, 8, 3))).shape
    (1, 4, 6)
    """

    _auto_jit = True

    def __init__(self, factor):
        super().__init__()
        (self._factor,) = _factors(factor, 1, "PixelShuffle1D")

    def hybrid_forward(self, F, x):
        f = self._factor
        x = F.reshape(x, (0, -4, -1, f, 0))  # (N, C, f, W)
        x = F.transpose(x, (0, 1, 3, 2))  # (N, C, W, f)
        return F.reshape(x, (0, 0, -3))  # (N, C, W*f)

    def __repr__(self):
        return f"{type(self).__name__}({self._factor})"


class PixelShuffle2D(HybridBlock):
    """Move blocks of f1*f2 channels into space: (N, f1*f2*C, H, W) -> (N, C, H*f1, W*f2).

    The sub-pixel convolution upsampling of Shi et al. (2016).

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax.gluon.contrib.nn import PixelShuffle2D
    >>> PixelShuffle2D((2, 3))(mx.nd.zeros((1, 12, 3, 5))).shape
    (1, 2, 6, 15)
    """

    _auto_jit = True

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors(factor, 2, "PixelShuffle2D")

    def hybrid_forward(self, F, x):
        f1, f2 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2, 0, 0))  # (N, C, f1*f2, H, W)
        x = F.reshape(x, (0, 0, -4, f1, f2, 0, 0))  # (N, C, f1, f2, H, W)
        x = F.transpose(x, (0, 1, 4, 2, 5, 3))  # (N, C, H, f1, W, f2)
        return F.reshape(x, (0, 0, -3, -3))  # (N, C, H*f1, W*f2)

    def __repr__(self):
        return f"{type(self).__name__}({self._factors})"


class PixelShuffle3D(HybridBlock):
    """Move blocks of f1*f2*f3 channels into space:
    (N, f1*f2*f3*C, D, H, W) -> (N, C, D*f1, H*f2, W*f3).

    Examples
    --------
    >>> import gluonjax as mx
    >>> from gluonjax.gluon.contrib.nn import PixelShuffle3D
    >>> PixelShuffle3D((2, 3, 4))(mx.nd.zeros((1, 48, 3, 5, 7))).shape
    (1, 2, 6, 15, 28)
    """

    _auto_jit = True

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors(factor, 3, "PixelShuffle3D")

    def hybrid_forward(self, F, x):
        f1, f2, f3 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2 * f3, 0, 0, 0))  # (N, C, f1*f2*f3, D, H, W)
        x = F.reshape(x, (0, 0, -4, f1, f2 * f3, 0, 0, 0))  # (N, C, f1, f2*f3, D, H, W)
        x = F.reshape(x, (0, 0, 0, -4, f2, f3, 0, 0, 0))  # (N, C, f1, f2, f3, D, H, W)
        x = F.transpose(x, (0, 1, 5, 2, 6, 3, 7, 4))  # (N, C, D, f1, H, f2, W, f3)
        return F.reshape(x, (0, 0, -3, -3, -3))  # (N, C, D*f1, H*f2, W*f3)

    def __repr__(self):
        return f"{type(self).__name__}({self._factors})"

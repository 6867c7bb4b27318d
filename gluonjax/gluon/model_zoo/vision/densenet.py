"""DenseNet 121/161/169/201 ("Densely Connected Convolutional Networks", Huang et al., 2016)."""

from __future__ import annotations

from ....base import MXNetError
from ....context import cpu
from ... import nn
from ...contrib.nn import HybridConcurrent, Identity
from ...hybrid import HybridBlock
from ._common import load_pretrained

__all__ = ["DenseNet", "densenet121", "densenet161", "densenet169", "densenet201"]


def _make_dense_layer(growth_rate, bn_size, dropout):
    """BN-ReLU-1x1 conv-BN-ReLU-3x3 conv, concatenated to its own input."""
    new_features = nn.HybridSequential(prefix="")
    new_features.add(nn.BatchNorm(), nn.Activation("relu"))
    new_features.add(nn.Conv2D(bn_size * growth_rate, kernel_size=1, use_bias=False))
    new_features.add(nn.BatchNorm(), nn.Activation("relu"))
    new_features.add(nn.Conv2D(growth_rate, kernel_size=3, padding=1, use_bias=False))
    if dropout:
        new_features.add(nn.Dropout(dropout))
    out = HybridConcurrent(axis=1, prefix="")
    out.add(Identity(), new_features)
    return out


def _make_dense_block(num_layers, bn_size, growth_rate, dropout, stage_index):
    out = nn.HybridSequential(prefix=f"stage{stage_index}_")
    with out.name_scope():
        for _ in range(num_layers):
            out.add(_make_dense_layer(growth_rate, bn_size, dropout))
    return out


def _make_transition(num_output_features):
    out = nn.HybridSequential(prefix="")
    out.add(nn.BatchNorm(), nn.Activation("relu"))
    out.add(nn.Conv2D(num_output_features, kernel_size=1, use_bias=False))
    out.add(nn.AvgPool2D(pool_size=2, strides=2))
    return out


class DenseNet(HybridBlock):
    """DenseNet: every layer of a block sees the feature maps of all the layers before it.

    Parameters
    ----------
    num_init_features : int
        Channels of the stem convolution.
    growth_rate : int
        Channels each dense layer adds.
    block_config : list of int
        Layers per dense block.
    bn_size : int, default 4
        Width multiplier of the 1x1 bottleneck convolutions (``bn_size * growth_rate``).
    dropout : float, default 0
        Dropout after each dense layer.
    classes : int, default 1000

    Inputs are 224x224 images: the classifier ends with a 7x7 average pool.
    """

    _auto_jit = True

    def __init__(
        self, num_init_features, growth_rate, block_config, bn_size=4, dropout=0, classes=1000,
        **kwargs,
    ):  # fmt: skip
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(
                nn.Conv2D(num_init_features, kernel_size=7, strides=2, padding=3, use_bias=False)
            )
            self.features.add(nn.BatchNorm(), nn.Activation("relu"))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2, padding=1))
            num_features = num_init_features
            for i, num_layers in enumerate(block_config):
                self.features.add(
                    _make_dense_block(num_layers, bn_size, growth_rate, dropout, i + 1)
                )
                num_features += num_layers * growth_rate
                if i != len(block_config) - 1:
                    num_features //= 2
                    self.features.add(_make_transition(num_features))
            self.features.add(nn.BatchNorm(), nn.Activation("relu"))
            self.features.add(nn.AvgPool2D(pool_size=7), nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


# depth -> (stem channels, growth rate, layers per dense block)
densenet_spec = {
    121: (64, 32, [6, 12, 24, 16]),
    161: (96, 48, [6, 12, 36, 24]),
    169: (64, 32, [6, 12, 32, 32]),
    201: (64, 32, [6, 12, 48, 32]),
}


def get_densenet(num_layers, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """DenseNet with ``num_layers`` layers (121, 161, 169 or 201).

    Parameters
    ----------
    num_layers : int
    pretrained : bool, default False
        Load MXNet's published weights from the model store.
    ctx : Context, default cpu()
    root : str, optional
        The model store (default ``$MXNET_HOME/models``).
    **kwargs
        Passed to :class:`DenseNet` (``classes``, ``bn_size``, ``dropout``, ``prefix``).
    """
    if num_layers not in densenet_spec:
        raise MXNetError(
            f"Invalid number of layers: {num_layers}. Options are {sorted(densenet_spec)}"
        )
    num_init_features, growth_rate, block_config = densenet_spec[num_layers]
    net = DenseNet(num_init_features, growth_rate, block_config, **kwargs)
    return load_pretrained(net, f"densenet{num_layers}", pretrained, ctx, root)


def _variant(depth):
    def make(**kwargs):
        return get_densenet(depth, **kwargs)

    make.__name__ = make.__qualname__ = f"densenet{depth}"
    make.__doc__ = f"DenseNet-{depth}; keyword arguments as :func:`get_densenet`."
    return make


densenet121 = _variant(121)
densenet161 = _variant(161)
densenet169 = _variant(169)
densenet201 = _variant(201)

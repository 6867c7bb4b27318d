"""VGG 11/13/16/19, with and without BatchNorm (Simonyan and Zisserman, 2014)."""

from __future__ import annotations

from ....base import MXNetError
from ....context import cpu
from ....initializer import Xavier
from ... import nn
from ...hybrid import HybridBlock
from ._common import load_pretrained

__all__ = [
    "VGG",
    "vgg11",
    "vgg13",
    "vgg16",
    "vgg19",
    "vgg11_bn",
    "vgg13_bn",
    "vgg16_bn",
    "vgg19_bn",
    "get_vgg",
]


class VGG(HybridBlock):
    """VGG from "Very Deep Convolutional Networks for Large-Scale Image Recognition".

    Parameters
    ----------
    layers : list of int
        Convolutions per stage (each stage ends with a 2x2 max pool).
    filters : list of int
        Channels of each stage.
    classes : int, default 1000
    batch_norm : bool, default False
        A BatchNorm after every convolution.
    """

    _auto_jit = True

    def __init__(self, layers, filters, classes=1000, batch_norm=False, **kwargs):
        super().__init__(**kwargs)
        if len(layers) != len(filters):
            raise MXNetError(
                f"VGG: one filter count per stage, got layers={list(layers)} and "
                f"filters={list(filters)}"
            )
        with self.name_scope():
            self.features = self._make_features(layers, filters, batch_norm)
            for _ in range(2):
                self.features.add(
                    nn.Dense(
                        4096,
                        activation="relu",
                        weight_initializer="normal",
                        bias_initializer="zeros",
                    )
                )
                self.features.add(nn.Dropout(rate=0.5))
            self.output = nn.Dense(classes, weight_initializer="normal", bias_initializer="zeros")

    def _make_features(self, layers, filters, batch_norm):
        features = nn.HybridSequential(prefix="")
        for num, channels in zip(layers, filters):
            for _ in range(num):
                features.add(
                    nn.Conv2D(
                        channels,
                        kernel_size=3,
                        padding=1,
                        weight_initializer=Xavier(
                            rnd_type="gaussian", factor_type="out", magnitude=2
                        ),
                        bias_initializer="zeros",
                    )
                )
                if batch_norm:
                    features.add(nn.BatchNorm())
                features.add(nn.Activation("relu"))
            features.add(nn.MaxPool2D(strides=2))
        return features

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


# depth -> (convolutions per stage, channels per stage)
vgg_spec = {
    11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
    13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
    16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
    19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512]),
}


def get_vgg(num_layers, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """VGG with ``num_layers`` layers (11, 13, 16 or 19).

    Parameters
    ----------
    num_layers : int
    pretrained : bool, default False
        Load MXNet's published weights (``vgg16`` or, with ``batch_norm=True``, ``vgg16_bn``).
    ctx : Context, default cpu()
    root : str, optional
        The model store (default ``$MXNET_HOME/models``).
    **kwargs
        Passed to :class:`VGG` (``classes``, ``batch_norm``, ``prefix``).
    """
    if num_layers not in vgg_spec:
        raise MXNetError(f"Invalid number of layers: {num_layers}. Options are {sorted(vgg_spec)}")
    layers, filters = vgg_spec[num_layers]
    net = VGG(layers, filters, **kwargs)
    name = f"vgg{num_layers}{'_bn' if kwargs.get('batch_norm') else ''}"
    return load_pretrained(net, name, pretrained, ctx, root)


def _variant(depth, batch_norm):
    def make(**kwargs):
        if batch_norm:
            kwargs["batch_norm"] = True
        return get_vgg(depth, **kwargs)

    make.__name__ = make.__qualname__ = f"vgg{depth}{'_bn' if batch_norm else ''}"
    make.__doc__ = (
        f"VGG-{depth}{' with BatchNorm' if batch_norm else ''}; keyword arguments as "
        f":func:`get_vgg`."
    )
    return make


vgg11 = _variant(11, False)
vgg13 = _variant(13, False)
vgg16 = _variant(16, False)
vgg19 = _variant(19, False)
vgg11_bn = _variant(11, True)
vgg13_bn = _variant(13, True)
vgg16_bn = _variant(16, True)
vgg19_bn = _variant(19, True)

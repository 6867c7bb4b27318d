"""SqueezeNet 1.0 and 1.1 (Iandola et al., 2016)."""

from __future__ import annotations

from ....base import MXNetError
from ....context import cpu
from ... import nn
from ...contrib.nn import HybridConcurrent
from ...hybrid import HybridBlock
from ._common import load_pretrained

__all__ = ["SqueezeNet", "squeezenet1_0", "squeezenet1_1"]


def _make_fire_conv(channels, kernel_size, padding=0):
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(channels, kernel_size, padding=padding), nn.Activation("relu"))
    return out


def _make_fire(squeeze_channels, expand1x1_channels, expand3x3_channels):
    """A fire module: a 1x1 squeeze, then 1x1 and 3x3 expansions concatenated."""
    out = nn.HybridSequential(prefix="")
    out.add(_make_fire_conv(squeeze_channels, 1))
    paths = HybridConcurrent(axis=1, prefix="")
    paths.add(_make_fire_conv(expand1x1_channels, 1))
    paths.add(_make_fire_conv(expand3x3_channels, 3, 1))
    out.add(paths)
    return out


def _pool():
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


# the feature extractor after the stem: "pool" or the fire module's (squeeze, expand) widths
_LAYOUT = {
    "1.0": (96, 7, ["pool", (16, 64), (16, 64), (32, 128), "pool", (32, 128), (48, 192),
                    (48, 192), (64, 256), "pool", (64, 256)]),
    "1.1": (64, 3, ["pool", (16, 64), (16, 64), "pool", (32, 128), (32, 128), "pool",
                    (48, 192), (48, 192), (64, 256), (64, 256)]),
}  # fmt: skip


class SqueezeNet(HybridBlock):
    """SqueezeNet: AlexNet-level accuracy with 50x fewer parameters.

    Parameters
    ----------
    version : str
        '1.0' or '1.1' (1.1 needs 2.4x less computation).
    classes : int, default 1000

    Inputs are 224x224 images: the classifier ends with a 13x13 average pool.
    """

    _auto_jit = True

    def __init__(self, version, classes=1000, **kwargs):
        super().__init__(**kwargs)
        if version not in _LAYOUT:
            raise MXNetError(f"Unsupported SqueezeNet version {version}: 1.0 or 1.1 expected")
        stem_channels, stem_kernel, body = _LAYOUT[version]
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(stem_channels, kernel_size=stem_kernel, strides=2))
            self.features.add(nn.Activation("relu"))
            for item in body:
                if item == "pool":
                    self.features.add(_pool())
                else:
                    squeeze, expand = item
                    self.features.add(_make_fire(squeeze, expand, expand))
            self.features.add(nn.Dropout(0.5))
            self.output = nn.HybridSequential(prefix="")
            self.output.add(nn.Conv2D(classes, kernel_size=1))
            self.output.add(nn.Activation("relu"), nn.AvgPool2D(13), nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_squeezenet(version, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """SqueezeNet ``version`` ('1.0' or '1.1').

    Parameters
    ----------
    version : str
    pretrained : bool, default False
        Load MXNet's published weights from the model store.
    ctx : Context, default cpu()
    root : str, optional
        The model store (default ``$MXNET_HOME/models``).
    **kwargs
        Passed to :class:`SqueezeNet` (``classes``, ``prefix``).
    """
    net = SqueezeNet(version, **kwargs)
    return load_pretrained(net, f"squeezenet{version}", pretrained, ctx, root)


def squeezenet1_0(**kwargs):
    """SqueezeNet 1.0; keyword arguments as :func:`get_squeezenet`."""
    return get_squeezenet("1.0", **kwargs)


def squeezenet1_1(**kwargs):
    """SqueezeNet 1.1; keyword arguments as :func:`get_squeezenet`."""
    return get_squeezenet("1.1", **kwargs)

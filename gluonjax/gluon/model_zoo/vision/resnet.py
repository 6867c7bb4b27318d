"""ResNet V1 (He et al., 2015) and V2 (He et al., 2016), 18 to 152 layers.

Structure, block order and parameter names are MXNet 1.9.1's
(``resnetv10_stage1_conv0_weight``...), so MXNet's pretrained files load.
"""

from __future__ import annotations

from ....base import MXNetError
from ....context import cpu
from ... import nn
from ...hybrid import HybridBlock
from ._common import load_pretrained

__all__ = [
    "ResNetV1",
    "ResNetV2",
    "BasicBlockV1",
    "BasicBlockV2",
    "BottleneckV1",
    "BottleneckV2",
    "resnet18_v1",
    "resnet34_v1",
    "resnet50_v1",
    "resnet101_v1",
    "resnet152_v1",
    "resnet18_v2",
    "resnet34_v2",
    "resnet50_v2",
    "resnet101_v2",
    "resnet152_v2",
    "get_resnet",
]


def _conv3x3(channels, stride, in_channels):
    return nn.Conv2D(
        channels, kernel_size=3, strides=stride, padding=1, use_bias=False, in_channels=in_channels
    )


def _conv_bn_stack(*layers):
    seq = nn.HybridSequential(prefix="")
    seq.add(*layers)
    return seq


def _projection_v1(channels, stride, in_channels):
    """1x1 convolution + BatchNorm matching the residual to the block's output."""
    return _conv_bn_stack(
        nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False, in_channels=in_channels),
        nn.BatchNorm(),
    )


class _ResBlock(HybridBlock):
    _auto_jit = True


class BasicBlockV1(_ResBlock):
    """Two 3x3 convolutions with BatchNorm, plus the input (ResNet V1, 18/34 layers).

    Parameters
    ----------
    channels : int
        Output channels.
    stride : int
        Stride of the first convolution (and of the projection).
    downsample : bool, default False
        Project the residual with a strided 1x1 convolution + BatchNorm.
    in_channels : int, default 0 (inferred)
    """

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix="")
        self.body.add(_conv3x3(channels, stride, in_channels), nn.BatchNorm())
        self.body.add(nn.Activation("relu"))
        self.body.add(_conv3x3(channels, 1, channels), nn.BatchNorm())
        self.downsample = _projection_v1(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        residual = self.downsample(x) if self.downsample else x
        return F.Activation(residual + self.body(x), act_type="relu")


class BottleneckV1(_ResBlock):
    """1x1 -> 3x3 -> 1x1 convolutions with BatchNorm, plus the input (ResNet V1, 50+ layers).

    Parameters are those of :class:`BasicBlockV1`; the inner width is ``channels // 4``.
    """

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        mid = channels // 4
        self.body = nn.HybridSequential(prefix="")
        self.body.add(nn.Conv2D(mid, kernel_size=1, strides=stride), nn.BatchNorm())
        self.body.add(nn.Activation("relu"))
        self.body.add(_conv3x3(mid, 1, mid), nn.BatchNorm(), nn.Activation("relu"))
        self.body.add(nn.Conv2D(channels, kernel_size=1, strides=1), nn.BatchNorm())
        self.downsample = _projection_v1(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        residual = self.downsample(x) if self.downsample else x
        return F.Activation(self.body(x) + residual, act_type="relu")


class BasicBlockV2(_ResBlock):
    """Pre-activation basic block (ResNet V2, 18/34 layers): BN-ReLU-conv twice.

    Parameters are those of :class:`BasicBlockV1`; the projection is a bare 1x1
    convolution applied to the first activation.
    """

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        self.downsample = (
            nn.Conv2D(channels, 1, stride, use_bias=False, in_channels=in_channels)
            if downsample
            else None
        )

    def hybrid_forward(self, F, x):
        residual = x
        x = F.Activation(self.bn1(x), act_type="relu")
        if self.downsample:
            residual = self.downsample(x)
        x = self.conv1(x)
        x = F.Activation(self.bn2(x), act_type="relu")
        return self.conv2(x) + residual


class BottleneckV2(_ResBlock):
    """Pre-activation bottleneck (ResNet V2, 50+ layers): BN-ReLU-conv three times."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        mid = channels // 4
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(mid, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(mid, stride, mid)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        self.downsample = (
            nn.Conv2D(channels, 1, stride, use_bias=False, in_channels=in_channels)
            if downsample
            else None
        )

    def hybrid_forward(self, F, x):
        residual = x
        x = F.Activation(self.bn1(x), act_type="relu")
        if self.downsample:
            residual = self.downsample(x)
        x = self.conv1(x)
        x = F.Activation(self.bn2(x), act_type="relu")
        x = self.conv2(x)
        x = F.Activation(self.bn3(x), act_type="relu")
        return self.conv3(x) + residual


def _check_spec(layers, channels):
    if len(layers) != len(channels) - 1:
        raise MXNetError(
            f"ResNet: channels needs one entry more than layers (the stem's width first), "
            f"got layers={list(layers)} and channels={list(channels)}"
        )


class _ResNet(HybridBlock):
    _auto_jit = True

    def _make_layer(self, block, layers, channels, stride, stage_index, in_channels=0):
        stage = nn.HybridSequential(prefix=f"stage{stage_index}_")
        with stage.name_scope():
            stage.add(
                block(channels, stride, channels != in_channels, in_channels=in_channels, prefix="")
            )
            for _ in range(layers - 1):
                stage.add(block(channels, 1, False, in_channels=channels, prefix=""))
        return stage

    def _add_stem(self, channels, thumbnail):
        if thumbnail:  # CIFAR-sized inputs: one 3x3 convolution
            self.features.add(_conv3x3(channels, 1, 0))
        else:
            self.features.add(nn.Conv2D(channels, 7, 2, 3, use_bias=False))
            self.features.add(nn.BatchNorm(), nn.Activation("relu"), nn.MaxPool2D(3, 2, 1))

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class ResNetV1(_ResNet):
    """ResNet V1 from "Deep Residual Learning for Image Recognition" (He et al., 2015).

    Parameters
    ----------
    block : HybridBlock class
        :class:`BasicBlockV1` or :class:`BottleneckV1`.
    layers : list of int
        Blocks per stage.
    channels : list of int
        The stem's width, then each stage's.
    classes : int, default 1000
    thumbnail : bool, default False
        A 3x3 stem without pooling, for small (CIFAR) images.
    """

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        _check_spec(layers, channels)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self._add_stem(channels[0], thumbnail)
            for i, num_layer in enumerate(layers):
                self.features.add(
                    self._make_layer(
                        block, num_layer, channels[i + 1], 1 if i == 0 else 2, i + 1, channels[i]
                    )
                )
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes, in_units=channels[-1])


class ResNetV2(_ResNet):
    """ResNet V2 from "Identity Mappings in Deep Residual Networks" (He et al., 2016).

    Parameters are those of :class:`ResNetV1`, with :class:`BasicBlockV2` or
    :class:`BottleneckV2` blocks; the input is first normalized by a BatchNorm
    without scale and shift.
    """

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        _check_spec(layers, channels)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.BatchNorm(scale=False, center=False))
            self._add_stem(channels[0], thumbnail)
            in_channels = channels[0]
            for i, num_layer in enumerate(layers):
                self.features.add(
                    self._make_layer(
                        block, num_layer, channels[i + 1], 1 if i == 0 else 2, i + 1, in_channels
                    )
                )
                in_channels = channels[i + 1]
            self.features.add(nn.BatchNorm(), nn.Activation("relu"))
            self.features.add(nn.GlobalAvgPool2D(), nn.Flatten())
            self.output = nn.Dense(classes, in_units=in_channels)


# depth -> (block kind, blocks per stage, widths: stem then stages)
resnet_spec = {
    18: ("basic_block", [2, 2, 2, 2], [64, 64, 128, 256, 512]),
    34: ("basic_block", [3, 4, 6, 3], [64, 64, 128, 256, 512]),
    50: ("bottle_neck", [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
    101: ("bottle_neck", [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
    152: ("bottle_neck", [3, 8, 36, 3], [64, 256, 512, 1024, 2048]),
}
resnet_net_versions = [ResNetV1, ResNetV2]
resnet_block_versions = [
    {"basic_block": BasicBlockV1, "bottle_neck": BottleneckV1},
    {"basic_block": BasicBlockV2, "bottle_neck": BottleneckV2},
]


def get_resnet(version, num_layers, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """ResNet V``version`` with ``num_layers`` layers (18, 34, 50, 101 or 152).

    Parameters
    ----------
    version : int
        1 or 2.
    num_layers : int
    pretrained : bool, default False
        Load MXNet's published ImageNet weights from the local model store.
    ctx : Context, default cpu()
        Where the pretrained weights are loaded.
    root : str, optional
        The model store (default ``$MXNET_HOME/models``).
    **kwargs
        Passed to :class:`ResNetV1` / :class:`ResNetV2` (``classes``, ``thumbnail``, ``prefix``).

    Examples
    --------
    >>> import gluonjax as mx
    >>> net = mx.gluon.model_zoo.vision.get_resnet(1, 18, classes=10)
    >>> net.initialize(); net(mx.nd.ones((1, 3, 32, 32))).shape
    (1, 10)
    """
    if num_layers not in resnet_spec:
        raise MXNetError(
            f"Invalid number of layers: {num_layers}. Options are {sorted(resnet_spec)}"
        )
    if version not in (1, 2):
        raise MXNetError(f"Invalid resnet version: {version}. Options are 1 and 2.")
    block_type, layers, channels = resnet_spec[num_layers]
    block = resnet_block_versions[version - 1][block_type]
    net = resnet_net_versions[version - 1](block, layers, channels, **kwargs)
    return load_pretrained(net, f"resnet{num_layers}_v{version}", pretrained, ctx, root)


def _variant(version, depth):
    def make(**kwargs):
        return get_resnet(version, depth, **kwargs)

    make.__name__ = make.__qualname__ = f"resnet{depth}_v{version}"
    make.__doc__ = (
        f"ResNet-{depth} V{version}; keyword arguments as :func:`get_resnet` "
        f"(``pretrained``, ``ctx``, ``root``, ``classes``...)."
    )
    return make


resnet18_v1 = _variant(1, 18)
resnet34_v1 = _variant(1, 34)
resnet50_v1 = _variant(1, 50)
resnet101_v1 = _variant(1, 101)
resnet152_v1 = _variant(1, 152)
resnet18_v2 = _variant(2, 18)
resnet34_v2 = _variant(2, 34)
resnet50_v2 = _variant(2, 50)
resnet101_v2 = _variant(2, 101)
resnet152_v2 = _variant(2, 152)

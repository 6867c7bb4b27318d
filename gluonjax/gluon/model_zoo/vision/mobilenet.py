"""MobileNet V1 (Howard et al., 2017) and V2 (Sandler et al., 2018) at widths 0.25 to 1.0."""

from __future__ import annotations

from ....context import cpu
from ... import nn
from ...hybrid import HybridBlock
from ._common import load_pretrained

__all__ = [
    "MobileNet",
    "MobileNetV2",
    "mobilenet1_0",
    "mobilenet_v2_1_0",
    "mobilenet0_75",
    "mobilenet_v2_0_75",
    "mobilenet0_5",
    "mobilenet_v2_0_5",
    "mobilenet0_25",
    "mobilenet_v2_0_25",
    "get_mobilenet",
    "get_mobilenet_v2",
]


class RELU6(HybridBlock):
    """``min(max(x, 0), 6)``."""

    _auto_jit = True

    def hybrid_forward(self, F, x):
        return F.clip(x, 0, 6, name="relu6")


def _add_conv(
    out, channels=1, kernel=1, stride=1, pad=0, num_group=1, active=True, relu6=False
):  # fmt: skip
    """Append convolution (no bias) + BatchNorm (+ ReLU or ReLU6) to ``out``."""
    out.add(nn.Conv2D(channels, kernel, stride, pad, groups=num_group, use_bias=False))
    out.add(nn.BatchNorm(scale=True))
    if active:
        out.add(RELU6() if relu6 else nn.Activation("relu"))


def _add_conv_dw(out, dw_channels, channels, stride, relu6=False):
    """A depthwise 3x3 convolution then a pointwise 1x1 one."""
    _add_conv(out, dw_channels, kernel=3, stride=stride, pad=1, num_group=dw_channels, relu6=relu6)
    _add_conv(out, channels, relu6=relu6)


class LinearBottleneck(HybridBlock):
    """MobileNetV2's inverted residual: expand (1x1), depthwise 3x3, linear projection (1x1).

    Parameters
    ----------
    in_channels, channels : int
    t : int
        Expansion factor.
    stride : int
        The shortcut is added when ``stride == 1`` and the width is unchanged.
    """

    _auto_jit = True

    def __init__(self, in_channels, channels, t, stride, **kwargs):
        super().__init__(**kwargs)
        self.use_shortcut = stride == 1 and in_channels == channels
        with self.name_scope():
            self.out = nn.HybridSequential()
            wide = in_channels * t
            _add_conv(self.out, wide, relu6=True)
            _add_conv(self.out, wide, kernel=3, stride=stride, pad=1, num_group=wide, relu6=True)
            _add_conv(self.out, channels, active=False, relu6=True)

    def hybrid_forward(self, F, x):
        out = self.out(x)
        return F.elemwise_add(out, x) if self.use_shortcut else out


def _widths(multiplier, widths):
    return [int(w * multiplier) for w in widths]


class MobileNet(HybridBlock):
    """MobileNet V1: depthwise separable convolutions.

    Parameters
    ----------
    multiplier : float, default 1.0
        Width multiplier of every layer.
    classes : int, default 1000
    """

    _auto_jit = True

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                _add_conv(self.features, int(32 * multiplier), kernel=3, pad=1, stride=2)
                dw_channels = _widths(multiplier, [32, 64, 128, 128, 256, 256] + [512] * 6 + [1024])
                channels = _widths(multiplier, [64, 128, 128, 256, 256] + [512] * 6 + [1024] * 2)
                strides = [1, 2] * 3 + [1] * 5 + [2, 1]
                for dwc, c, s in zip(dw_channels, channels, strides):
                    _add_conv_dw(self.features, dw_channels=dwc, channels=c, stride=s)
                self.features.add(nn.GlobalAvgPool2D(), nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class MobileNetV2(HybridBlock):
    """MobileNet V2: inverted residuals and linear bottlenecks.

    Parameters
    ----------
    multiplier : float, default 1.0
        Width multiplier (the last 1x1 convolution keeps 1280 channels up to 1.0).
    classes : int, default 1000
    """

    _auto_jit = True

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="features_")
            with self.features.name_scope():
                _add_conv(
                    self.features, int(32 * multiplier), kernel=3, stride=2, pad=1, relu6=True
                )
                in_widths = _widths(
                    multiplier, [32, 16, 24, 24] + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3
                )
                out_widths = _widths(
                    multiplier, [16, 24, 24] + [32] * 3 + [64] * 4 + [96] * 3 + [160] * 3 + [320]
                )
                expansions = [1] + [6] * 16
                strides = [1, 2] * 2 + [1, 1, 2] + [1] * 6 + [2] + [1] * 3
                for in_c, c, t, s in zip(in_widths, out_widths, expansions, strides):
                    self.features.add(LinearBottleneck(in_channels=in_c, channels=c, t=t, stride=s))
                last = int(1280 * multiplier) if multiplier > 1.0 else 1280
                _add_conv(self.features, last, relu6=True)
                self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.HybridSequential(prefix="output_")
            with self.output.name_scope():
                self.output.add(nn.Conv2D(classes, 1, use_bias=False, prefix="pred_"), nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def _version_suffix(multiplier):
    suffix = f"{multiplier:.2f}"
    return suffix[:-1] if suffix in ("1.00", "0.50") else suffix


def get_mobilenet(multiplier, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """MobileNet V1 of width ``multiplier`` (pretrained: 0.25, 0.5, 0.75, 1.0).

    Parameters
    ----------
    multiplier : float
    pretrained : bool, default False
        Load MXNet's published weights from the model store.
    ctx : Context, default cpu()
    root : str, optional
        The model store (default ``$MXNET_HOME/models``).
    **kwargs
        Passed to :class:`MobileNet` (``classes``, ``prefix``).
    """
    net = MobileNet(multiplier, **kwargs)
    name = f"mobilenet{_version_suffix(multiplier)}"
    return load_pretrained(net, name, pretrained, ctx, root)


def get_mobilenet_v2(multiplier, pretrained=False, ctx=cpu(), root=None, **kwargs):
    """MobileNet V2 of width ``multiplier`` (pretrained: 0.25, 0.5, 0.75, 1.0).

    Parameters are those of :func:`get_mobilenet`, for :class:`MobileNetV2`.
    """
    net = MobileNetV2(multiplier, **kwargs)
    name = f"mobilenetv2_{_version_suffix(multiplier)}"
    return load_pretrained(net, name, pretrained, ctx, root)


def _variant(version, multiplier):
    get = get_mobilenet if version == 1 else get_mobilenet_v2

    def make(**kwargs):
        return get(multiplier, **kwargs)

    tag = str(multiplier).replace(".", "_")
    make.__name__ = make.__qualname__ = f"mobilenet{tag}" if version == 1 else f"mobilenet_v2_{tag}"
    make.__doc__ = (
        f"MobileNet{' V2' if version == 2 else ''} of width {multiplier}; keyword arguments "
        f"as :func:`{get.__name__}`."
    )
    return make


mobilenet1_0 = _variant(1, 1.0)
mobilenet0_75 = _variant(1, 0.75)
mobilenet0_5 = _variant(1, 0.5)
mobilenet0_25 = _variant(1, 0.25)
mobilenet_v2_1_0 = _variant(2, 1.0)
mobilenet_v2_0_75 = _variant(2, 0.75)
mobilenet_v2_0_5 = _variant(2, 0.5)
mobilenet_v2_0_25 = _variant(2, 0.25)

"""Convolution, transposed convolution, pooling and reflection-padding layers.

Examples
--------
>>> import gluonjax as mx
>>> conv = mx.gluon.nn.Conv2D(8, 3, padding=1)  # in_channels inferred at the first call
>>> conv.initialize()
>>> conv(mx.nd.ones((1, 3, 5, 5))).shape
(1, 8, 5, 5)
>>> conv.weight.shape
(8, 3, 3, 3)
>>> mx.gluon.nn.MaxPool2D(ceil_mode=True)(mx.nd.ones((1, 8, 5, 5))).shape
(1, 8, 3, 3)
"""

from __future__ import annotations

import numpy as np

from ...base import MXNetError
from ..hybrid import HybridBlock

__all__ = [
    "Conv1D", "Conv2D", "Conv3D",
    "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose",
    "MaxPool1D", "MaxPool2D", "MaxPool3D",
    "AvgPool1D", "AvgPool2D", "AvgPool3D",
    "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
    "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D",
    "ReflectionPad2D",
]  # fmt: skip

_CONV_LAYOUTS = {1: ("NCW",), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}
_POOL_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _tup(value, n, what):
    """``value`` (a number or ``n`` numbers) as an ``n``-tuple of ints."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    value = tuple(int(v) for v in value)
    if len(value) != n:
        raise MXNetError(f"{what} must be a number or a list of {n} ints, got {value}")
    return value


def _check_layout(layout, allowed, what):
    if layout not in allowed:
        raise MXNetError(f"{what}: layout must be one of {allowed}, got {layout!r}")


# ----------------------------------------------------------------------------- convolution
class _Conv(HybridBlock):
    """Shared body of the (transposed) convolution layers."""

    _auto_jit = True
    _op_name = "Convolution"
    _nd = 2

    def __init__(
        self,
        channels,
        kernel_size,
        strides,
        padding,
        dilation,
        groups,
        layout,
        in_channels=0,
        activation=None,
        use_bias=True,
        weight_initializer=None,
        bias_initializer="zeros",
        output_padding=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        n, name = self._nd, type(self).__name__
        _check_layout(layout, _CONV_LAYOUTS[n], name)
        self._channels = channels
        self._in_channels = in_channels
        self._kwargs = {
            "kernel": _tup(kernel_size, n, "kernel_size"), "stride": _tup(strides, n, "strides"),
            "dilate": _tup(dilation, n, "dilation"), "pad": _tup(padding, n, "padding"),
            "num_filter": channels, "num_group": groups, "no_bias": not use_bias,
            "layout": layout,
        }  # fmt: skip
        if output_padding is not None:
            adj = _tup(output_padding, n, "output_padding")
            if any(a >= s for a, s in zip(adj, self._kwargs["stride"], strict=True)):
                raise MXNetError(
                    f"{name}: output_padding {adj} must be smaller than the "
                    f"strides {self._kwargs['stride']}"
                )
            self._kwargs["adj"] = adj
        with self.name_scope():
            self.weight = self.params.get(
                "weight",
                shape=self._weight_shape(),
                init=weight_initializer,
                allow_deferred_init=True,
            )
            if use_bias:
                self.bias = self.params.get(
                    "bias", shape=(channels,), init=bias_initializer, allow_deferred_init=True
                )
            else:
                self.bias = None
            if activation is not None:
                from .activations import Activation

                self.act = Activation(activation, prefix=activation + "_")
            else:
                self.act = None

    def _alias(self):
        return "conv"

    def _weight_shape(self):
        k = self._kwargs
        lead, per_group = self._channels, self._in_channels // k["num_group"]
        if self._op_name == "Deconvolution":
            lead, per_group = self._in_channels, self._channels // k["num_group"]
        if k["layout"].endswith("C"):
            return (lead, *k["kernel"], per_group)
        return (lead, per_group, *k["kernel"])

    def hybrid_forward(self, F, x, weight, bias=None):
        op = getattr(F, self._op_name)
        if bias is None:
            out = op(x, weight, name="fwd", **self._kwargs)
        else:
            out = op(x, weight, bias, name="fwd", **self._kwargs)
        if self.act is not None:
            out = self.act(out)
        return out

    def __repr__(self):
        k = self._kwargs
        shape = self.weight.shape
        n = len(k["kernel"])
        s = (
            f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]}, "
            f"kernel_size={k['kernel']}, stride={k['stride']}"
        )
        if k["pad"] != (0,) * n:
            s += f", padding={k['pad']}"
        if k["dilate"] != (1,) * n:
            s += f", dilation={k['dilate']}"
        if k["num_group"] != 1:
            s += f", groups={k['num_group']}"
        if self.bias is None:
            s += ", bias=False"
        if self.act is not None:
            s += f", {self.act!r}"
        return s + ")"


def _conv_class(name, nd, layout, transpose):
    ones, zeros = (1,) * nd if nd > 1 else 1, (0,) * nd if nd > 1 else 0
    kind = "transposed convolution (Deconvolution)" if transpose else "convolution"
    doc = (
        f"{nd}-D {kind} layer.\n\n    Parameters\n    ----------\n"
        f"    channels : int\n        Number of output channels.\n"
        f"    kernel_size, strides, padding, dilation : int or tuple of {nd} ints\n"
        + (
            "    output_padding : int or tuple\n        Extra size added to one side of the "
            "output (``adj``).\n"
            if transpose
            else ""
        )
        + f"    groups : int, default 1\n    layout : str, default '{layout}'\n"
        f"    activation : str, optional\n    use_bias : bool, default True\n"
        f"    weight_initializer, bias_initializer : Initializer or str\n"
        f"    in_channels : int, default 0 (inferred at the first forward)\n"
    )

    if transpose:

        def __init__(
            self,
            channels,
            kernel_size,
            strides=ones,
            padding=zeros,
            output_padding=zeros,
            dilation=ones,
            groups=1,
            layout=layout,
            activation=None,
            use_bias=True,
            weight_initializer=None,
            bias_initializer="zeros",
            in_channels=0,
            **kwargs,
        ):
            _Conv.__init__(
                self,
                channels,
                kernel_size,
                strides,
                padding,
                dilation,
                groups,
                layout,
                in_channels,
                activation,
                use_bias,
                weight_initializer,
                bias_initializer,
                output_padding=output_padding,
                **kwargs,
            )
    else:

        def __init__(
            self,
            channels,
            kernel_size,
            strides=ones,
            padding=zeros,
            dilation=ones,
            groups=1,
            layout=layout,
            activation=None,
            use_bias=True,
            weight_initializer=None,
            bias_initializer="zeros",
            in_channels=0,
            **kwargs,
        ):
            _Conv.__init__(
                self,
                channels,
                kernel_size,
                strides,
                padding,
                dilation,
                groups,
                layout,
                in_channels,
                activation,
                use_bias,
                weight_initializer,
                bias_initializer,
                **kwargs,
            )

    ns = {
        "__init__": __init__,
        "__doc__": doc,
        "_nd": nd,
        "__module__": __name__,
        "_op_name": "Deconvolution" if transpose else "Convolution",
    }
    return type(name, (_Conv,), ns)


Conv1D = _conv_class("Conv1D", 1, "NCW", False)
Conv2D = _conv_class("Conv2D", 2, "NCHW", False)
Conv3D = _conv_class("Conv3D", 3, "NCDHW", False)
Conv1DTranspose = _conv_class("Conv1DTranspose", 1, "NCW", True)
Conv2DTranspose = _conv_class("Conv2DTranspose", 2, "NCHW", True)
Conv3DTranspose = _conv_class("Conv3DTranspose", 3, "NCDHW", True)


# ----------------------------------------------------------------------------- pooling
class _Pooling(HybridBlock):
    """Shared body of the pooling layers (``Pooling`` op)."""

    _auto_jit = True

    def __init__(
        self,
        pool_size,
        strides,
        padding,
        ceil_mode,
        global_pool,
        pool_type,
        layout,
        count_include_pad=None,
        nd=2,
        **kwargs,
    ):
        super().__init__(**kwargs)
        _check_layout(layout, _POOL_LAYOUTS[nd], type(self).__name__)
        kernel = _tup(pool_size, nd, "pool_size")
        self._kwargs = {
            "kernel": kernel, "stride": _tup(kernel if strides is None else strides, nd, "strides"),
            "pad": _tup(padding, nd, "padding"), "global_pool": global_pool,
            "pool_type": pool_type, "layout": layout,
            "pooling_convention": "full" if ceil_mode else "valid",
        }  # fmt: skip
        if count_include_pad is not None:
            self._kwargs["count_include_pad"] = count_include_pad

    def _alias(self):
        return "pool"

    def hybrid_forward(self, F, x):
        return F.Pooling(x, name="fwd", **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return (
            f"{type(self).__name__}(size={k['kernel']}, stride={k['stride']}, "
            f"padding={k['pad']}, ceil_mode={k['pooling_convention'] == 'full'}, "
            f"global_pool={k['global_pool']}, pool_type={k['pool_type']}, "
            f"layout={k['layout']})"
        )


_LAYOUT = {1: "NCW", 2: "NCHW", 3: "NCDHW"}
_POOL_DOC = """{nd}-D {kind} pooling.

    Parameters
    ----------
    pool_size : int or tuple of {nd} ints
    strides : int or tuple, default pool_size
    padding : int or tuple, default 0
    ceil_mode : bool, default False
        Round the output size up (``pooling_convention='full'``) instead of down.
    layout : str, default '{layout}'
"""


def _pool_class(name, nd, pool_type):
    default = (2,) * nd if nd > 1 else 2
    if pool_type == "max":

        def __init__(
            self,
            pool_size=default,
            strides=None,
            padding=0,
            ceil_mode=False,
            layout=_LAYOUT[nd],
            **kwargs,
        ):
            _Pooling.__init__(
                self, pool_size, strides, padding, ceil_mode, False, "max", layout, nd=nd, **kwargs
            )

        doc = _POOL_DOC.format(nd=nd, kind="Max", layout=_LAYOUT[nd])
    else:

        def __init__(
            self,
            pool_size=default,
            strides=None,
            padding=0,
            ceil_mode=False,
            layout=_LAYOUT[nd],
            count_include_pad=True,
            **kwargs,
        ):
            _Pooling.__init__(
                self,
                pool_size,
                strides,
                padding,
                ceil_mode,
                False,
                "avg",
                layout,
                count_include_pad,
                nd=nd,
                **kwargs,
            )

        doc = _POOL_DOC.format(nd=nd, kind="Average", layout=_LAYOUT[nd]) + (
            "    count_include_pad : bool, default True\n"
            "        Count padded zeros in the averaging window.\n"
        )
    return type(name, (_Pooling,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


def _global_pool_class(name, nd, pool_type):
    def __init__(self, layout=_LAYOUT[nd], **kwargs):
        _Pooling.__init__(self, (1,) * nd, None, 0, True, True, pool_type, layout, nd=nd, **kwargs)

    doc = (
        f"Global {nd}-D {pool_type} pooling: output spatial size 1.\n\n"
        f"    Parameters\n    ----------\n    layout : str, default '{_LAYOUT[nd]}'\n"
    )
    return type(name, (_Pooling,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


MaxPool1D = _pool_class("MaxPool1D", 1, "max")
MaxPool2D = _pool_class("MaxPool2D", 2, "max")
MaxPool3D = _pool_class("MaxPool3D", 3, "max")
AvgPool1D = _pool_class("AvgPool1D", 1, "avg")
AvgPool2D = _pool_class("AvgPool2D", 2, "avg")
AvgPool3D = _pool_class("AvgPool3D", 3, "avg")
GlobalMaxPool1D = _global_pool_class("GlobalMaxPool1D", 1, "max")
GlobalMaxPool2D = _global_pool_class("GlobalMaxPool2D", 2, "max")
GlobalMaxPool3D = _global_pool_class("GlobalMaxPool3D", 3, "max")
GlobalAvgPool1D = _global_pool_class("GlobalAvgPool1D", 1, "avg")
GlobalAvgPool2D = _global_pool_class("GlobalAvgPool2D", 2, "avg")
GlobalAvgPool3D = _global_pool_class("GlobalAvgPool3D", 3, "avg")


# ----------------------------------------------------------------------------- padding
class ReflectionPad2D(HybridBlock):
    """Mirror-pad the last two axes of NCHW data (the border is not repeated).

    Parameters
    ----------
    padding : int or tuple of 8 ints
        An int ``p`` pads H and W by ``p`` on both sides; 8 ints are the ``pad_width``
        of the ``pad`` op (before/after per axis, the first four must be 0).
    """

    _auto_jit = True

    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, (int, np.integer)):
            padding = (0, 0, 0, 0) + (int(padding),) * 4
        padding = tuple(int(p) for p in padding)
        if len(padding) != 8:
            raise MXNetError(f"ReflectionPad2D: padding must be an int or 8 ints, got {padding}")
        self._padding = padding

    def hybrid_forward(self, F, x):
        return F.pad(x, mode="reflect", pad_width=self._padding)

    def __repr__(self):  # MXNet prints a childless block as 'Name(\n\n)'
        return f"{type(self).__name__}(\n\n)"

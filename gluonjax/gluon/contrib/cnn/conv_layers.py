"""2-D deformable convolutions as MXNet 1.9.1's ``gluon.contrib.cnn`` has them: a plain
convolution predicts the sampling offsets (and, modulated, the masks), and the registry's
``DeformableConvolution`` / ``ModulatedDeformableConvolution`` op samples with them.

Examples
--------
>>> import gluonjax as mx
>>> from gluonjax.gluon.contrib.cnn import DeformableConvolution
>>> layer = DeformableConvolution(4, kernel_size=3, padding=1)
>>> layer.initialize()
>>> layer(mx.nd.ones((1, 2, 5, 5))).shape
(1, 4, 5, 5)
"""

from __future__ import annotations

from ....base import InvalidArgumentError
from ...hybrid import HybridBlock
from ...nn import Activation

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]


def _pair(v, n=2):
    return (int(v),) * n if isinstance(v, (int, float)) else tuple(int(x) for x in v)


class _Deformable(HybridBlock):
    """Shared by both layers: the offset convolution's parameters and the op's."""

    _per_position = 2  # offset channels per kernel position and deformable group
    _op = "DeformableConvolution"

    def __init__(
        self,
        channels,
        kernel_size=(1, 1),
        strides=(1, 1),
        padding=(0, 0),
        dilation=(1, 1),
        groups=1,
        num_deformable_group=1,
        layout="NCHW",
        use_bias=True,
        in_channels=0,
        activation=None,
        weight_initializer=None,
        bias_initializer="zeros",
        offset_weight_initializer="zeros",
        offset_bias_initializer="zeros",
        offset_use_bias=True,
        op_name=None,
        adj=None,
        prefix=None,
        params=None,
    ):
        super().__init__(prefix=prefix, params=params)
        if layout not in ("NCHW", "NHWC"):
            raise InvalidArgumentError(
                f"{type(self).__name__}: layout must be 'NCHW' or 'NHWC', got {layout!r}"
            )
        kernel = _pair(kernel_size)
        self._channels, self._in_channels = channels, in_channels
        self._op_name = op_name or self._op
        k = kernel[0] * kernel[1] * num_deformable_group
        self._split = 2 * k  # offset channels; a modulated layer's masks follow them
        common = {"kernel": kernel, "stride": _pair(strides), "dilate": _pair(dilation)}
        common.update(pad=_pair(padding), num_group=groups, layout=layout)
        if adj:
            common["adj"] = adj
        self._kwargs_offset = dict(
            common, num_filter=self._per_position * k, no_bias=not offset_use_bias
        )
        self._kwargs_deformable_conv = dict(
            common,
            num_filter=channels,
            num_deformable_group=num_deformable_group,
            no_bias=not use_bias,
        )
        cin = in_channels // groups if in_channels else 0
        with self.name_scope():
            self.offset_weight = self.params.get(
                "offset_weight",
                shape=(self._per_position * k, cin, *kernel),
                init=offset_weight_initializer,
                allow_deferred_init=True,
            )
            self.offset_bias = (
                self.params.get(
                    "offset_bias",
                    shape=(self._per_position * k,),
                    init=offset_bias_initializer,
                    allow_deferred_init=True,
                )
                if offset_use_bias
                else None
            )
            self.deformable_conv_weight = self.params.get(
                "deformable_conv_weight",
                shape=(channels, cin, *kernel),
                init=weight_initializer,
                allow_deferred_init=True,
            )
            self.deformable_conv_bias = (
                self.params.get(
                    "deformable_conv_bias",
                    shape=(channels,),
                    init=bias_initializer,
                    allow_deferred_init=True,
                )
                if use_bias
                else None
            )
            self.act = Activation(activation, prefix=activation + "_") if activation else None

    def _offsets(self, F, x, offset_weight, offset_bias):
        args = (x, offset_weight) if offset_bias is None else (x, offset_weight, offset_bias)
        return F.Convolution(*args, cudnn_off=True, **self._kwargs_offset)

    def _finish(self, act):
        return self.act(act) if self.act is not None else act

    def _alias(self):
        return "deformable_conv"

    def __repr__(self):
        kw = self._kwargs_deformable_conv
        return (
            f"{type(self).__name__}({self._in_channels or None} -> {self._channels}, "
            f"kernel_size={kw['kernel']}, stride={kw['stride']}, pad={kw['pad']}, "
            f"dilate={kw['dilate']}, groups={kw['num_group']}, "
            f"deformable_groups={kw['num_deformable_group']})"
        )


class DeformableConvolution(_Deformable):
    """2-D deformable convolution v1 (Dai et al., 2017): ``channels`` outputs sampled at
    positions a second convolution (``offset_weight``/``offset_bias``, zero-initialized)
    predicts. Parameters as MXNet 1.9.1's ``gluon.contrib.cnn.DeformableConvolution``.

    Inputs: ``data`` (N, C, H, W) for NCHW. Output: (N, channels, H', W')."""

    def hybrid_forward(
        self,
        F,
        x,
        offset_weight,
        deformable_conv_weight,
        offset_bias=None,
        deformable_conv_bias=None,
    ):
        offset = self._offsets(F, x, offset_weight, offset_bias)
        extra = {} if deformable_conv_bias is None else {"bias": deformable_conv_bias}
        act = F.contrib.DeformableConvolution(
            data=x,
            offset=offset,
            weight=deformable_conv_weight,
            name="fwd",
            **extra,
            **self._kwargs_deformable_conv,
        )
        return self._finish(act)


class ModulatedDeformableConvolution(_Deformable):
    """2-D deformable convolution v2 (Zhu et al., 2019): as
    :class:`DeformableConvolution`, and each sampled position is weighted by a mask
    ``2 * sigmoid(m)`` that the offset convolution also predicts.

    Inputs: ``data`` (N, C, H, W) for NCHW. Output: (N, channels, H', W')."""

    _per_position = 3
    _op = "ModulatedDeformableConvolution"

    def hybrid_forward(
        self,
        F,
        x,
        offset_weight,
        deformable_conv_weight,
        offset_bias=None,
        deformable_conv_bias=None,
    ):
        offset = self._offsets(F, x, offset_weight, offset_bias)
        offset_t = F.slice_axis(offset, axis=1, begin=0, end=self._split)
        mask = F.sigmoid(F.slice_axis(offset, axis=1, begin=self._split, end=None)) * 2
        extra = {} if deformable_conv_bias is None else {"bias": deformable_conv_bias}
        act = F.contrib.ModulatedDeformableConvolution(
            data=x,
            offset=offset_t,
            mask=mask,
            weight=deformable_conv_weight,
            name="fwd",
            **extra,
            **self._kwargs_deformable_conv,
        )
        return self._finish(act)

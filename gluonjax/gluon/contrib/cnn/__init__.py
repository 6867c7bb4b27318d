"""``gluon.contrib.cnn``: deformable convolution layers (MXNet 1.x)."""

from .conv_layers import DeformableConvolution, ModulatedDeformableConvolution

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]

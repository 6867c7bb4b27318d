"""AlexNet ("One weird trick for parallelizing convolutional neural networks", Krizhevsky 2014)."""

from __future__ import annotations

from ....context import cpu
from ... import nn
from ...hybrid import HybridBlock
from ._common import load_pretrained

__all__ = ["AlexNet", "alexnet"]


class AlexNet(HybridBlock):
    """AlexNet: five convolutions and three fully connected layers (MXNet's layout and names).

    Parameters
    ----------
    classes : int, default 1000
    """

    _auto_jit = True

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                add = self.features.add
                add(nn.Conv2D(64, kernel_size=11, strides=4, padding=2, activation="relu"))
                add(nn.MaxPool2D(pool_size=3, strides=2))
                add(nn.Conv2D(192, kernel_size=5, padding=2, activation="relu"))
                add(nn.MaxPool2D(pool_size=3, strides=2))
                for channels in (384, 256, 256):
                    add(nn.Conv2D(channels, kernel_size=3, padding=1, activation="relu"))
                add(nn.MaxPool2D(pool_size=3, strides=2))
                add(nn.Flatten())
                for _ in range(2):
                    add(nn.Dense(4096, activation="relu"))
                    add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def alexnet(pretrained=False, ctx=cpu(), root=None, **kwargs):
    """AlexNet; ``pretrained=True`` loads MXNet's ImageNet weights from the model store.

    Parameters
    ----------
    pretrained : bool, default False
    ctx : Context, default cpu()
    root : str, optional
        The model store (default ``$MXNET_HOME/models``).
    **kwargs
        Passed to :class:`AlexNet` (``classes``, ``prefix``).
    """
    return load_pretrained(AlexNet(**kwargs), "alexnet", pretrained, ctx, root)

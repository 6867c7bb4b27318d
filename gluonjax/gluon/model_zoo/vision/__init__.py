"""``gluon.model_zoo.vision``: MXNet 1.9.1's image classification models.

AlexNet, DenseNet, Inception V3, ResNet V1/V2, SqueezeNet, VGG, MobileNet V1/V2,
with MXNet's structures and parameter names: ``pretrained=True`` loads MXNet's
published ImageNet weights from the local model store
(:mod:`~gluonjax.gluon.model_zoo.model_store`). The pretrained models expect RGB
images in [0, 1] normalized with mean (0.485, 0.456, 0.406) and std
(0.229, 0.224, 0.225), at least 224x224 (299x299 for Inception V3).

Examples
--------
>>> import gluonjax as mx
>>> net = mx.gluon.model_zoo.vision.get_model('mobilenet0.25', classes=10)
>>> net.initialize(); net(mx.nd.ones((1, 3, 32, 32))).shape
(1, 10)
"""

from __future__ import annotations

from ....base import MXNetError
from .alexnet import *  # noqa: F401,F403
from .alexnet import alexnet
from .densenet import *  # noqa: F401,F403
from .densenet import densenet121, densenet161, densenet169, densenet201
from .inception import *  # noqa: F401,F403
from .inception import inception_v3
from .mobilenet import *  # noqa: F401,F403
from .mobilenet import (
    mobilenet0_5,
    mobilenet0_25,
    mobilenet0_75,
    mobilenet1_0,
    mobilenet_v2_0_5,
    mobilenet_v2_0_25,
    mobilenet_v2_0_75,
    mobilenet_v2_1_0,
)
from .resnet import *  # noqa: F401,F403
from .resnet import (
    resnet18_v1,
    resnet18_v2,
    resnet34_v1,
    resnet34_v2,
    resnet50_v1,
    resnet50_v2,
    resnet101_v1,
    resnet101_v2,
    resnet152_v1,
    resnet152_v2,
)
from .squeezenet import *  # noqa: F401,F403
from .squeezenet import squeezenet1_0, squeezenet1_1
from .vgg import *  # noqa: F401,F403
from .vgg import vgg11, vgg11_bn, vgg13, vgg13_bn, vgg16, vgg16_bn, vgg19, vgg19_bn

_MODELS = {
    "resnet18_v1": resnet18_v1,
    "resnet34_v1": resnet34_v1,
    "resnet50_v1": resnet50_v1,
    "resnet101_v1": resnet101_v1,
    "resnet152_v1": resnet152_v1,
    "resnet18_v2": resnet18_v2,
    "resnet34_v2": resnet34_v2,
    "resnet50_v2": resnet50_v2,
    "resnet101_v2": resnet101_v2,
    "resnet152_v2": resnet152_v2,
    "vgg11": vgg11,
    "vgg13": vgg13,
    "vgg16": vgg16,
    "vgg19": vgg19,
    "vgg11_bn": vgg11_bn,
    "vgg13_bn": vgg13_bn,
    "vgg16_bn": vgg16_bn,
    "vgg19_bn": vgg19_bn,
    "alexnet": alexnet,
    "densenet121": densenet121,
    "densenet161": densenet161,
    "densenet169": densenet169,
    "densenet201": densenet201,
    "squeezenet1.0": squeezenet1_0,
    "squeezenet1.1": squeezenet1_1,
    "inceptionv3": inception_v3,
    "mobilenet1.0": mobilenet1_0,
    "mobilenet0.75": mobilenet0_75,
    "mobilenet0.5": mobilenet0_5,
    "mobilenet0.25": mobilenet0_25,
    "mobilenetv2_1.0": mobilenet_v2_1_0,
    "mobilenetv2_0.75": mobilenet_v2_0_75,
    "mobilenetv2_0.5": mobilenet_v2_0_5,
    "mobilenetv2_0.25": mobilenet_v2_0_25,
}


class UnknownModelError(MXNetError, ValueError):
    """``get_model`` was asked for a name the model zoo does not have."""


def get_model(name, **kwargs):
    """The model zoo's model ``name`` (case-insensitive), e.g. ``'resnet50_v1'``.

    Parameters
    ----------
    name : str
        One of MXNet 1.9.1's names: ``resnet{18,34,50,101,152}_v{1,2}``,
        ``vgg{11,13,16,19}[_bn]``, ``alexnet``, ``densenet{121,161,169,201}``,
        ``squeezenet1.{0,1}``, ``inceptionv3``, ``mobilenet{1.0,0.75,0.5,0.25}``,
        ``mobilenetv2_{1.0,0.75,0.5,0.25}``.
    pretrained : bool, default False
        Load MXNet's published weights from the model store.
    classes : int, default 1000
    ctx : Context, default cpu()
        Where pretrained weights are loaded.
    root : str, optional
        The model store (default ``$MXNET_HOME/models``).

    Returns
    -------
    HybridBlock
    """
    key = name.lower()
    if key not in _MODELS:
        raise UnknownModelError(
            f"Model {name} is not supported. Available options are\n\t"
            + "\n\t".join(sorted(_MODELS))
        )
    return _MODELS[key](**kwargs)


__all__ = ["get_model", "UnknownModelError"] + [
    n
    for mod in ("alexnet", "densenet", "inception", "mobilenet", "resnet", "squeezenet", "vgg")
    for n in __import__(f"{__name__}.{mod}", fromlist=["__all__"]).__all__
]

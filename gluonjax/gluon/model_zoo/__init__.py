"""``gluon.model_zoo``: MXNet 1.9.1's vision models (``vision``) and the local store of
their pretrained weights (``model_store``)."""

from . import model_store, vision

__all__ = ["model_store", "vision"]

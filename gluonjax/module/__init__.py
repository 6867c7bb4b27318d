"""``mx.mod``: the Module API (symbolic training with bind/forward/backward/update)."""

from .base_module import BaseModule
from .module import Module

__all__ = ["BaseModule", "Module"]

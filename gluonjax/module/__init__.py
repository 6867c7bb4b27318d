"""``mx.mod``: the Module API (symbolic training with bind/forward/backward/update)."""

from . import executor_group
from .base_module import BaseModule
from .bucketing_module import BucketingModule
from .executor_group import DataParallelExecutorGroup
from .module import Module
from .python_module import PythonLossModule, PythonModule
from .sequential_module import SequentialModule

__all__ = [
    "BaseModule",
    "Module",
    "BucketingModule",
    "SequentialModule",
    "PythonModule",
    "PythonLossModule",
    "DataParallelExecutorGroup",
    "executor_group",
]

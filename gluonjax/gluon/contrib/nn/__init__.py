"""``gluon.contrib.nn``: Concurrent, HybridConcurrent, Identity, SparseEmbedding,
SyncBatchNorm, PixelShuffle1D/2D/3D."""

from .basic_layers import *  # noqa: F401,F403
from .basic_layers import __all__  # noqa: F401

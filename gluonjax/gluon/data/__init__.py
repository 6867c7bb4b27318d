"""``gluon.data``: datasets, samplers, batchify functions and the DataLoader.

Examples
--------
>>> import numpy as np
>>> from gluonjax import gluon
>>> loader = gluon.data.DataLoader(gluon.data.ArrayDataset(np.ones((5, 2))), batch_size=2,
...                                last_batch="discard")
>>> [b.shape for b in loader]
[(2, 2), (2, 2)]
"""

from . import batchify, vision
from .dataloader import DataLoader, DataLoaderError, DataLoaderTimeoutError
from .dataset import ArrayDataset, Dataset, RecordFileDataset, SimpleDataset
from .sampler import (
    BatchSampler,
    FilterSampler,
    IntervalSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
)

__all__ = [
    "Dataset",
    "SimpleDataset",
    "ArrayDataset",
    "RecordFileDataset",
    "Sampler",
    "SequentialSampler",
    "RandomSampler",
    "FilterSampler",
    "BatchSampler",
    "IntervalSampler",
    "DataLoader",
    "DataLoaderError",
    "DataLoaderTimeoutError",
    "batchify",
    "vision",
]

"""Small data sets shipped inside gluonjax (no download), for demos and notebooks.

:func:`digits` is scikit-learn's copy of the UCI 8x8 handwritten digits (1797
images, ten classes), stored in ``digits.npz`` next to this file (made once by
``tools/make_digits_data.py``; about 50 KB) and read with ``allow_pickle=False``.
The split is fixed: 1497 training and 300 test images.

Examples
--------
>>> from gluonjax.data import digits
>>> x, y = digits("test")
>>> x.shape, x.dtype, y.shape, y.dtype
((300, 1, 28, 28), dtype('float32'), (300,), dtype('int32'))
>>> float(x.min()), float(x.max())
(0.0, 1.0)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..base import InvalidArgumentError

__all__ = ["digits", "batches", "DIGITS_FILE"]

DIGITS_FILE = Path(__file__).with_name("digits.npz")
_SPLITS = ("train", "test")


def _raw(split):
    if split not in _SPLITS:
        raise InvalidArgumentError(f"digits: split must be one of {_SPLITS}, got {split!r}")
    with np.load(DIGITS_FILE, allow_pickle=False) as f:
        return f[f"{split}_images"], f[f"{split}_labels"]


def digits(split="train", size=28, raw=False):
    """The 8x8 digits as ``(images, labels)`` NumPy arrays.

    Parameters
    ----------
    split : ``'train'`` (1497 images) or ``'test'`` (300 images).
    size : int, >= 8. Each image is enlarged by the integer factor ``size // 8``
        (nearest neighbour) and zero-padded to ``size x size``: the default 28
        gives a 24x24 digit centred in a 28x28 frame, the MNIST geometry a LeNet
        expects. 8 keeps the original resolution.
    raw : if True, return the stored arrays unchanged: uint8 images of shape
        ``(N, 8, 8)`` with values 0..16, and uint8 labels.

    Returns
    -------
    images : float32, shape ``(N, 1, size, size)``, values in [0, 1].
    labels : int32, shape ``(N,)``, values 0..9.
    """
    images, labels = _raw(split)
    if raw:
        return images, labels
    size = int(size)
    if size < 8:
        raise InvalidArgumentError(f"digits: size must be at least 8, got {size}")
    f = size // 8
    x = images.astype(np.float32) / 16.0
    x = np.repeat(np.repeat(x, f, axis=1), f, axis=2)
    extra = size - 8 * f
    lo = extra // 2
    x = np.pad(x, ((0, 0), (lo, extra - lo), (lo, extra - lo)))
    return np.ascontiguousarray(x[:, None]), labels.astype(np.int32)


def batches(images, labels, batch_size, shuffle=False, seed=None, last_batch="keep"):
    """Yield ``(images, labels)`` mini-batches of NumPy arrays.

    ``shuffle`` draws a new order from ``numpy.random.default_rng(seed)``;
    ``last_batch='discard'`` drops a final incomplete batch (a fixed batch shape
    means one compiled program).

    >>> x, y = digits("test")
    >>> [len(b) for b, _ in batches(x, y, 128)]
    [128, 128, 44]
    """
    n = len(images)
    if len(labels) != n:
        raise InvalidArgumentError(f"batches: {n} images but {len(labels)} labels")
    if last_batch not in ("keep", "discard"):
        raise InvalidArgumentError(
            f"batches: last_batch must be 'keep' or 'discard', got {last_batch!r}"
        )
    order = np.random.default_rng(seed).permutation(n) if shuffle else np.arange(n)
    stop = n - n % batch_size if last_batch == "discard" else n
    for i in range(0, stop, batch_size):
        idx = order[i : i + batch_size]
        yield images[idx], labels[idx]

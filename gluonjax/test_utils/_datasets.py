"""MXNet's data helpers of ``mx.test_utils``: MNIST and CIFAR-10 in MXNet's files and
folders, and zip / bz2 archives fetched into a folder.

Each helper reads the files it finds under MXNet's names and folders (relative to the
current folder, as MXNet's) and downloads only what is missing, from MXNet's URLs,
with :func:`gluonjax.gluon.utils.download`. Nothing is unpickled or executed: the MNIST
readers parse idx files with :mod:`struct`/NumPy, ``get_mnist_pkl`` only downloads.
Archives are unpacked with :mod:`zipfile` (which keeps every member inside the target
folder) and :mod:`bz2`.
"""

from __future__ import annotations

import bz2
import os
import zipfile

import numpy as np

from .._io.atomic import atomic_write
from ..base import FileFormatError

__all__ = [
    "get_mnist",
    "get_mnist_pkl",
    "get_mnist_ubyte",
    "get_mnist_iterator",
    "get_cifar10",
    "get_zip_data",
    "get_bz2_data",
]

MNIST_URL = "http://data.mxnet.io/data/mnist/"
MNIST_ZIP_URL = "http://data.mxnet.io/mxnet/data/mnist.zip"
MNIST_PKL_URL = "http://deeplearning.net/data/mnist/mnist.pkl.gz"
CIFAR10_ZIP_URL = "http://data.mxnet.io/mxnet/data/cifar10.zip"
_UBYTE = (
    "train-images-idx3-ubyte",
    "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte",
    "t10k-labels-idx1-ubyte",
)
_CIFAR = ("train.rec", "test.rec", "train.lst", "test.lst")


def _download(url, path):
    """``url`` into the file ``path`` (through gluon's downloader); returns ``path``."""
    from ..gluon import utils

    return utils.download(url, path=path)


def _extract_zip(path, folder):
    try:
        with zipfile.ZipFile(path) as zf:
            zf.extractall(folder)
    except zipfile.BadZipFile as err:
        raise FileFormatError(
            f"'{path}' is not a valid zip archive ({err}); delete it and call again to "
            f"download it anew"
        ) from None


def _read_mnist(label_path, image_path):
    from ..gluon.data.vision.datasets import _read_idx

    label = _read_idx(label_path, 2049, ()).view(np.int8)
    image = _read_idx(image_path, 2051, (28, 28))
    if len(image) != len(label):
        raise FileFormatError(
            f"MNIST: '{image_path}' holds {len(image)} images but '{label_path}' holds "
            f"{len(label)} labels"
        )
    image = image.reshape(len(image), 1, 28, 28).astype(np.float32) / 255
    return label, image


def get_mnist():
    """MNIST as NumPy arrays, from the gzip'd idx files in the current folder
    (``train-images-idx3-ubyte.gz`` ...; downloaded when missing).

    Returns
    -------
    dict
        ``train_data``/``test_data``: float32 ``(n, 1, 28, 28)`` images in [0, 1]
        (pixel / 255); ``train_label``/``test_label``: int8 ``(n,)`` labels.
    """
    out = {}
    for split, prefix in (("train", "train"), ("test", "t10k")):
        paths = []
        for kind in ("labels-idx1", "images-idx3"):
            name = f"{prefix}-{kind}-ubyte.gz"
            paths.append(name if os.path.exists(name) else _download(MNIST_URL + name, name))
        out[f"{split}_label"], out[f"{split}_data"] = _read_mnist(*paths)
    return {k: out[k] for k in ("train_data", "train_label", "test_data", "test_label")}


def get_mnist_pkl():
    """Download ``data/mnist.pkl.gz`` (relative to the current folder) unless it exists.
    The file is not opened (it is a pickle; gluonjax never unpickles)."""
    os.makedirs("data", exist_ok=True)
    path = os.path.join("data", "mnist.pkl.gz")
    if not os.path.exists(path):
        _download(MNIST_PKL_URL, path)


def get_mnist_ubyte():
    """Make sure ``data/`` holds MNIST's four idx files (``train-images-idx3-ubyte`` ...):
    when one is missing, download ``data/mnist.zip`` and extract it into ``data/``."""
    os.makedirs("data", exist_ok=True)
    if not all(os.path.exists(os.path.join("data", f)) for f in _UBYTE):
        _extract_zip(_download(MNIST_ZIP_URL, os.path.join("data", "mnist.zip")), "data")


def get_cifar10():
    """Make sure ``data/cifar/`` holds CIFAR-10 as RecordIO (``train.rec``, ``test.rec``,
    ``train.lst``, ``test.lst``): when one is missing, download ``data/cifar10.zip``
    and extract it into ``data/``."""
    os.makedirs("data", exist_ok=True)
    if not all(os.path.exists(os.path.join("data", "cifar", f)) for f in _CIFAR):
        _extract_zip(_download(CIFAR10_ZIP_URL, os.path.join("data", "cifar10.zip")), "data")


def get_mnist_iterator(batch_size, input_shape, num_parts=1, part_index=0):
    """Training and validation :class:`~gluonjax.io.MNISTIter` over ``data/`` (see
    :func:`get_mnist_ubyte`).

    Parameters
    ----------
    batch_size : int
    input_shape : tuple
        ``(1, 28, 28)`` gives image batches; any other length flat ``(batch, 784)`` ones.
    num_parts, part_index : int
        Read only part ``part_index`` of ``num_parts`` of each file.

    Returns
    -------
    (MNISTIter, MNISTIter)
        Both shuffled (MXNet's MNISTIter shuffles by default); pixels are scaled by 1/256.
    """
    from ..io import MNISTIter

    get_mnist_ubyte()
    flat = len(input_shape) != 3
    iters = []
    for prefix in ("train", "t10k"):
        iters.append(
            MNISTIter(
                image=os.path.join("data", f"{prefix}-images-idx3-ubyte"),
                label=os.path.join("data", f"{prefix}-labels-idx1-ubyte"),
                input_shape=input_shape,
                batch_size=batch_size,
                shuffle=True,
                flat=flat,
                num_parts=num_parts,
                part_index=part_index,
            )
        )
    return iters[0], iters[1]


def get_zip_data(data_dir, url, data_origin_name):
    """Unless ``data_dir/data_origin_name`` exists, download ``url`` there and extract
    the zip archive into ``data_dir``.

    Parameters
    ----------
    data_dir : str
    url : str
    data_origin_name : str
        The archive's file name.
    """
    path = os.path.join(data_dir, data_origin_name)
    if not os.path.exists(path):
        os.makedirs(data_dir or ".", exist_ok=True)
        _extract_zip(_download(url, path), data_dir or ".")


def get_bz2_data(data_dir, data_name, url, data_origin_name):
    """Unless ``data_dir/data_name`` exists, download ``url`` to
    ``data_dir/data_origin_name``, decompress it to ``data_dir/data_name`` and delete the
    archive.

    Parameters
    ----------
    data_dir : str
    data_name : str
        The decompressed file's name.
    url : str
    data_origin_name : str
        The archive's file name.
    """
    target = os.path.join(data_dir, data_name)
    if os.path.exists(target):
        return
    os.makedirs(data_dir or ".", exist_ok=True)
    archive = _download(url, os.path.join(data_dir, data_origin_name))

    def chunks():
        try:
            with bz2.open(archive, "rb") as f:
                while chunk := f.read(1 << 20):
                    yield chunk
        except (OSError, EOFError) as err:
            raise FileFormatError(
                f"'{archive}' is not a valid bz2 archive ({err}); delete it and call again to "
                f"download it anew"
            ) from None

    atomic_write(target, chunks())
    os.remove(archive)

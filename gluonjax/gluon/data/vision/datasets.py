"""Vision data sets: MNIST, FashionMNIST, CIFAR10/100, image folders, lists and RecordIO files.

They read the standard files from ``root``; by default
``$MXNET_HOME/datasets/<name>`` (``MXNET_HOME`` defaults to ``~/.mxnet``), read
when the data set is created. A file that is absent is downloaded from MXNet's
repository (``MXNET_GLUON_REPO`` overrides it) with ``gluon.utils.download`` and
its sha1 checked; without a network the error names the files to put where. A
file that is present is used as it is (a warning says when its sha1 is not the
published one, e.g. a hand-made subset). Images are uint8 HWC NDArrays whose
values stay in host memory until used; labels are numpy int32 scalars as in
MXNet. This module imports no jax (data-loader workers load it).
"""

from __future__ import annotations

import gzip
import os
import struct
import tarfile
import warnings

import numpy as np

from .... import recordio
from ...._data import cv
from ...._data.host import item
from ....base import FileFormatError, InvalidArgumentError, MXNetError
from .. import dataset

__all__ = [
    "MNIST",
    "FashionMNIST",
    "CIFAR10",
    "CIFAR100",
    "ImageRecordDataset",
    "ImageFolderDataset",
    "ImageListDataset",
]

_DEFAULT_REPO = "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"


def data_dir():
    """MXNet's data directory: ``$MXNET_HOME``, or ``~/.mxnet``."""
    return os.getenv("MXNET_HOME", os.path.join(os.path.expanduser("~"), ".mxnet"))


def _repo_file_url(namespace, filename):
    base = os.environ.get("MXNET_GLUON_REPO", _DEFAULT_REPO)
    if not base.endswith("/"):
        base += "/"
    return f"{base}{namespace}/{filename}"


def _sha1(path):
    import hashlib

    h = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class _DownloadedDataset(dataset.Dataset):
    """Base of the data sets that come as files from MXNet's repository."""

    _namespace = ""

    def __init__(self, root, transform):
        super().__init__()
        self._transform = transform
        self._images = None
        self._label = None
        if root is None:
            root = os.path.join(data_dir(), "datasets", self._namespace)
        self._root = os.path.expanduser(root)
        self._get_data()

    @property
    def _data(self):
        return item(self._images)

    def __getitem__(self, idx):
        img = item(self._images[idx])
        if self._transform is not None:
            return self._transform(img, self._label[idx])
        return img, self._label[idx]

    def __len__(self):
        return len(self._label)

    def _fetch(self, files, archive=None):
        """Paths of ``files`` ((name, sha1) pairs) in root, downloading what is absent."""
        paths = [os.path.join(self._root, name) for name, _ in files]
        missing = [(n, s) for (n, s), p in zip(files, paths) if not os.path.exists(p)]
        if missing:
            wanted = [archive] if archive else missing
            try:
                from ...utils import download

                os.makedirs(self._root, exist_ok=True)
                for name, sha1 in wanted:
                    got = download(
                        _repo_file_url(f"gluon/dataset/{self._namespace}", name),
                        path=self._root,
                        sha1_hash=sha1,
                    )
                    if archive:
                        with tarfile.open(got) as tar:
                            tar.extractall(self._root, filter="data")
                        _flatten(self._root, [n for n, _ in files])
            except Exception as err:
                names = ", ".join(n for n, _ in missing)
                raise MXNetError(
                    f"{type(self).__name__}: {names} not found in '{self._root}' and the "
                    f"download failed ({type(err).__name__}: {err}). Put "
                    f"{'these files' if len(missing) > 1 else 'this file'} into '{self._root}' "
                    f"(from {_repo_file_url('gluon/dataset/' + self._namespace, '')}), or pass "
                    f"root= a folder that has them."
                ) from None
        for (_, sha1), path in zip(files, paths):
            if sha1 and _sha1(path) != sha1:
                warnings.warn(
                    f"{type(self).__name__}: '{path}' does not have the published sha1 {sha1}; "
                    f"using it as it is",
                    stacklevel=4,
                )
        return paths

    def _get_data(self):
        raise NotImplementedError


def _flatten(root, names):
    """Move ``names`` found in a sub-folder of ``root`` (archives add one) up to ``root``."""
    for dirpath, _, files in os.walk(root):
        for n in files:
            if n in names and dirpath != root:
                os.replace(os.path.join(dirpath, n), os.path.join(root, n))


def _open_maybe_gz(path):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gz else open(path, "rb")


def _read_idx(path, magic, dims):
    """An MNIST idx file (gzip'd or not) as a uint8 array of shape (n, *dims)."""
    with _open_maybe_gz(path) as f:
        try:
            data = f.read()
        except (OSError, EOFError) as err:
            raise FileFormatError(f"MNIST: '{path}' is not a readable idx file: {err}") from None
    head = 4 * (1 + 1 + len(dims))
    if len(data) < head:
        raise FileFormatError(f"MNIST: '{path}' is too short for an idx header ({len(data)} bytes)")
    fields = struct.unpack(">" + "I" * (2 + len(dims)), data[:head])
    if fields[0] != magic or tuple(fields[2:]) != tuple(dims):
        raise FileFormatError(
            f"MNIST: '{path}' has header {fields}, expected magic {magic} and item shape {dims}"
        )
    n = fields[1]
    body = np.frombuffer(data, dtype=np.uint8, offset=head)
    if body.size != n * int(np.prod(dims, dtype=np.int64)):
        raise FileFormatError(
            f"MNIST: '{path}' announces {n} items of shape {dims} but holds {body.size} bytes"
        )
    return body.reshape((n, *dims))


class MNIST(_DownloadedDataset):
    """The MNIST handwritten digits: 28x28x1 uint8 images, int32 labels 0-9.

    Parameters
    ----------
    root : str, optional
        Folder with ``train-images-idx3-ubyte.gz``, ``train-labels-idx1-ubyte.gz``,
        ``t10k-images-idx3-ubyte.gz``, ``t10k-labels-idx1-ubyte.gz`` (gzip'd or not).
        Default ``$MXNET_HOME/datasets/mnist``.
    train : bool, default True
        The training set (else the test set).
    transform : callable, optional
        ``transform(image, label) -> sample``.
    """

    _namespace = "mnist"
    _files = {
        True: (
            ("train-images-idx3-ubyte.gz", "6c95f4b05d2bf285e1bfb0e7960c31bd3b3f8a7d"),
            ("train-labels-idx1-ubyte.gz", "2a80914081dc54586dbdf242f9805a6b8d2a15fc"),
        ),
        False: (
            ("t10k-images-idx3-ubyte.gz", "c3a25af1f52dad7f726cce8cacb138654b760d48"),
            ("t10k-labels-idx1-ubyte.gz", "763e7fa3757d93b0cdec073cef058b2004252c17"),
        ),
    }

    def __init__(self, root=None, train=True, transform=None):
        self._train = train
        super().__init__(root, transform)

    def _resolve(self, files):
        """Prefer an uncompressed copy (``name`` without ``.gz``) when only it is present."""
        out = []
        for name, sha1 in files:
            plain = name[:-3]
            if not os.path.exists(os.path.join(self._root, name)) and os.path.exists(
                os.path.join(self._root, plain)
            ):
                out.append((plain, None))
            else:
                out.append((name, sha1))
        return out

    def _get_data(self):
        image_file, label_file = self._fetch(self._resolve(self._files[self._train]))
        label = _read_idx(label_file, 2049, ()).astype(np.int32)
        images = _read_idx(image_file, 2051, (28, 28))
        if len(images) != len(label):
            raise FileFormatError(
                f"MNIST: '{image_file}' has {len(images)} images but '{label_file}' has "
                f"{len(label)} labels"
            )
        self._images = images.reshape(len(label), 28, 28, 1)
        self._label = label


class FashionMNIST(MNIST):
    """Fashion-MNIST: 28x28x1 uint8 images of clothes, int32 labels 0-9 (MNIST's files).

    Default root ``$MXNET_HOME/datasets/fashion-mnist``.
    """

    _namespace = "fashion-mnist"
    _files = {
        True: (
            ("train-images-idx3-ubyte.gz", "0cf37b0d40ed5169c6b3aba31069a9770ac9043d"),
            ("train-labels-idx1-ubyte.gz", "236021d52f1e40852b06a4c3008d8de8aef1e40b"),
        ),
        False: (
            ("t10k-images-idx3-ubyte.gz", "626ed6a7c06dd17c0eec72fa3be1740f146a2863"),
            ("t10k-labels-idx1-ubyte.gz", "17f9ab60e7257a1620f4ad76bbbaf857c3920701"),
        ),
    }


class CIFAR10(_DownloadedDataset):
    """CIFAR-10: 32x32x3 uint8 images, int32 labels 0-9, from the binary batch files.

    Parameters
    ----------
    root : str, optional
        Folder with ``data_batch_1.bin`` ... ``data_batch_5.bin`` and ``test_batch.bin``
        (default ``$MXNET_HOME/datasets/cifar10``).
    train : bool, default True
    transform : callable, optional
    """

    _namespace = "cifar10"
    _archive = ("cifar-10-binary.tar.gz", "fab780a1e191a7eda0f345501ccd62d20f7ed891")
    _train_files = (
        ("data_batch_1.bin", "aadd24acce27caa71bf4b10992e9e7b2d74c2540"),
        ("data_batch_2.bin", "c0ba65cce70568cd57b4e03e9ac8d2a5367c1795"),
        ("data_batch_3.bin", "1dd00a74ab1d17a6e7d73e185b69dbf31242f295"),
        ("data_batch_4.bin", "aab85764eb3584312d3c7f65fd2fd016e36a258e"),
        ("data_batch_5.bin", "26e2849e66a845b7f1e4614ae70f4889ae604628"),
    )
    _test_files = (("test_batch.bin", "67eb016db431130d61cd03c7ad570b013799c88c"),)
    _label_bytes = 1

    def __init__(self, root=None, train=True, transform=None):
        self._train = train
        super().__init__(root, transform)

    def _read_batch(self, path):
        with open(path, "rb") as f:
            raw = np.frombuffer(f.read(), dtype=np.uint8)
        rec = 3072 + self._label_bytes
        if raw.size % rec:
            raise FileFormatError(
                f"{type(self).__name__}: '{path}' has {raw.size} bytes, not a multiple of the "
                f"{rec}-byte record of the CIFAR binary format"
            )
        raw = raw.reshape(-1, rec)
        images = raw[:, self._label_bytes :].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        return np.ascontiguousarray(images), raw[:, self._label_column()].astype(np.int32)

    def _label_column(self):
        return 0

    def _get_data(self):
        files = self._train_files if self._train else self._test_files
        paths = self._fetch(files, archive=self._archive)
        images, labels = zip(*(self._read_batch(p) for p in paths))
        self._images = np.concatenate(images)
        self._label = np.concatenate(labels)


class CIFAR100(CIFAR10):
    """CIFAR-100: 32x32x3 uint8 images; coarse (20) or ``fine_label`` (100) int32 labels.

    Default root ``$MXNET_HOME/datasets/cifar100`` with ``train.bin`` and ``test.bin``.
    """

    _namespace = "cifar100"
    _archive = ("cifar-100-binary.tar.gz", "a0bb982c76b83111308126cc779a992fa506b90b")
    _train_files = (("train.bin", "e207cd2e05b73b1393c74c7f5e7bea451d63e08e"),)
    _test_files = (("test.bin", "8fb6623e830365ff53cf14adec797474f5478006"),)
    _label_bytes = 2

    def __init__(self, root=None, fine_label=False, train=True, transform=None):
        self._fine_label = fine_label
        super().__init__(root, train, transform)

    def _label_column(self):
        return int(bool(self._fine_label))


class ImageRecordDataset(dataset.RecordFileDataset):
    """Images and labels packed in a RecordIO file (``.rec`` with its ``.idx``).

    Parameters
    ----------
    filename : str
    flag : {0, 1}, default 1
        1: 3-channel RGB images, 0: grayscale (1 channel).
    transform : callable, optional
        ``transform(image, label) -> sample``.
    """

    def __init__(self, filename, flag=1, transform=None):
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx):
        record = super().__getitem__(idx)
        header, img = recordio.unpack(record)
        img = item(cv.imdecode(img, self._flag, what=f"record {idx} of '{self.filename}'"))
        if self._transform is not None:
            return self._transform(img, header.label)
        return img, header.label


class ImageFolderDataset(dataset.Dataset):
    """Images in ``root/<class>/<image>``: the sorted folder names are the classes.

    Parameters
    ----------
    root : str
    flag : {0, 1}, default 1
    transform : callable, optional

    Attributes
    ----------
    synsets : list of str
        The class names; a label is an index into it.
    items : list of (path, label)
    """

    def __init__(self, root, flag=1, transform=None):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._transform = transform
        self._exts = [".jpg", ".jpeg", ".png"]
        self._list_images(self._root)

    def _list_images(self, root):
        self.synsets = []
        self.items = []
        for folder in sorted(os.listdir(root)):
            path = os.path.join(root, folder)
            if not os.path.isdir(path):
                warnings.warn(f"Ignoring {path}, which is not a directory.", stacklevel=3)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for filename in sorted(os.listdir(path)):
                filename = os.path.join(path, filename)
                ext = os.path.splitext(filename)[1]
                if ext.lower() not in self._exts:
                    warnings.warn(
                        f"Ignoring {filename} of type {ext}. Only support {', '.join(self._exts)}",
                        stacklevel=3,
                    )
                    continue
                self.items.append((filename, label))

    def __getitem__(self, idx):
        path, label = self.items[idx]
        img = item(cv.imread(path, self._flag))
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self):
        return len(self.items)


class ImageListDataset(dataset.Dataset):
    """Images listed in an ``.lst`` file (``index<TAB>label(s)<TAB>path``) or a Python list.

    Parameters
    ----------
    root : str, default '.'
        Folder the image paths are relative to (and the ``.lst`` file's folder).
    imglist : str or list
        A ``.lst`` file name, or a list of ``[label(s)..., path]`` entries.
    flag : {0, 1}, default 1

    A sample is ``(image, label)`` with the label a float32 NDArray of the label columns.
    """

    def __init__(self, root=".", imglist=None, flag=1):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._imglist = {}
        self._imgkeys = []
        if isinstance(imglist, str):
            fname = os.path.join(self._root, imglist)
            with open(fname, encoding="utf-8") as fin:
                for lineno, line in enumerate(fin, 1):
                    if not line.strip():
                        continue
                    fields = line.strip().split("\t")
                    try:
                        key = int(fields[0])
                        label = np.asarray([float(v) for v in fields[1:-1]], dtype=np.float32)
                        if len(fields) < 3:
                            raise InvalidArgumentError("too few fields")
                    except ValueError as err:
                        raise FileFormatError(
                            f"ImageListDataset: '{fname}' line {lineno} is malformed ({err}): "
                            f"{line.strip()!r}; expected 'index<TAB>label...<TAB>path'"
                        ) from None
                    self._imglist[key] = (label, os.path.join(self._root, fields[-1]))
                    self._imgkeys.append(key)
        elif isinstance(imglist, list):
            for index, img in enumerate(imglist, 1):
                if len(img) > 2:
                    label = np.asarray(img[:-1], dtype=np.float32)
                elif isinstance(img[0], (int, float, np.number)):
                    label = np.asarray([img[0]], dtype=np.float32)
                else:
                    label = np.asarray(img[0], dtype=np.float32)
                if not isinstance(img[-1], str):
                    raise InvalidArgumentError(
                        f"ImageListDataset: entry {index} must end with a path: {img}"
                    )
                self._imglist[str(index)] = (label, os.path.join(self._root, img[-1]))
                self._imgkeys.append(str(index))
        else:
            raise InvalidArgumentError(
                f"imglist must be filename or list of valid entries, given {type(imglist)}"
            )

    def __getitem__(self, idx):
        label, path = self._imglist[self._imgkeys[idx]]
        return item(cv.imread(path, self._flag)), item(label)

    def __len__(self):
        return len(self._imgkeys)

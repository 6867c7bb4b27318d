"""``mx.image.ImageIter``: batches of augmented images from a ``.rec`` file, a ``.lst`` file
or a Python list, with ``last_batch_handle`` = pad / discard / roll_over as in MXNet 1.9.1."""

from __future__ import annotations

import os
import random

import numpy as np

from .. import recordio
from .._data import host
from ..base import FileFormatError, InvalidArgumentError, MXNetError
from ..io.base import DataBatch, DataIter
from . import image as _img
from .augment import CreateAugmenter

__all__ = ["ImageIter"]


def _nd(values):
    from ..ndarray import array

    return array(values, dtype=values.dtype)


class ImageIter(DataIter):
    """Images and labels in batches of ``(batch_size,) + data_shape`` (CHW, float32).

    Parameters
    ----------
    batch_size : int
    data_shape : tuple (3, H, W)
    label_width : int, default 1
    path_imgrec, path_imgidx : str, optional
        A RecordIO file (and its index, for shuffling and parts).
    path_imglist : str, optional
        A ``.lst`` file (``index<TAB>label(s)<TAB>path``), images under ``path_root``.
    imglist : list, optional
        ``[label(s)..., path]`` entries.
    shuffle : bool
        Shuffle at every reset (Python's ``random``).
    part_index, num_parts : int
        Read only part ``part_index`` of ``num_parts``.
    aug_list : list of Augmenter, optional
        Default: ``CreateAugmenter(data_shape, **kwargs)``.
    last_batch_handle : {'pad', 'discard', 'roll_over'}
    """

    def __init__(
        self,
        batch_size,
        data_shape,
        label_width=1,
        path_imgrec=None,
        path_imglist=None,
        path_root=None,
        path_imgidx=None,
        shuffle=False,
        part_index=0,
        num_parts=1,
        aug_list=None,
        imglist=None,
        data_name="data",
        label_name="softmax_label",
        dtype="float32",
        last_batch_handle="pad",
        **kwargs,
    ):
        super().__init__(batch_size)
        if not (path_imgrec or path_imglist or isinstance(imglist, list)):
            raise InvalidArgumentError("ImageIter needs path_imgrec, path_imglist or imglist")
        if dtype not in ("int32", "float32", "int64", "float64"):
            raise InvalidArgumentError(f"{dtype} label not supported")
        self.imgrec, self.imgidx = None, None
        if path_imgrec:
            if path_imgidx:
                self.imgrec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
                self.imgidx = list(self.imgrec.keys)
            else:
                self.imgrec = recordio.MXRecordIO(path_imgrec, "r")
        imgkeys = []
        self.imglist = None
        if path_imglist:
            self.imglist = {}
            with open(path_imglist, encoding="utf-8") as fin:
                for lineno, line in enumerate(fin, 1):
                    fields = line.strip().split("\t")
                    if not line.strip():
                        continue
                    try:
                        label = np.asarray([float(v) for v in fields[1:-1]], dtype=dtype)
                        key = int(fields[0])
                    except ValueError as err:
                        raise FileFormatError(
                            f"ImageIter: '{path_imglist}' line {lineno} is malformed ({err})"
                        ) from None
                    self.imglist[key] = (label, fields[-1])
                    imgkeys.append(key)
        elif isinstance(imglist, list):
            self.imglist = {}
            for index, img in enumerate(imglist, 1):
                key = str(index)
                if len(img) > 2:
                    label = np.asarray(img[:-1], dtype=dtype)
                elif isinstance(img[0], (int, float, np.number)):
                    label = np.asarray([img[0]], dtype=dtype)
                else:
                    label = np.asarray(img[0], dtype=dtype)
                self.imglist[key] = (label, img[-1])
                imgkeys.append(key)
        self.path_root = path_root
        self.check_data_shape(data_shape)
        self.provide_data = [(data_name, (batch_size,) + tuple(data_shape))]
        if label_width > 1:
            self.provide_label = [(label_name, (batch_size, label_width))]
        else:
            self.provide_label = [(label_name, (batch_size,))]
        self.data_shape = tuple(data_shape)
        self.label_width = label_width
        self.label_dtype = dtype
        self.shuffle = shuffle
        if self.imgrec is None:
            self.seq = imgkeys
        elif shuffle or num_parts > 1 or path_imgidx:
            if self.imgidx is None:
                raise InvalidArgumentError("shuffle and num_parts > 1 need path_imgidx")
            self.seq = self.imgidx
        else:
            self.seq = None
        if num_parts > 1:
            n = len(self.seq) // num_parts
            self.seq = self.seq[part_index * n : (part_index + 1) * n]
        self.auglist = CreateAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.cur = 0
        self._allow_read = True
        self.last_batch_handle = last_batch_handle
        self.num_image = len(self.seq) if self.seq is not None else None
        self._cache = None
        self.reset()

    def reset(self):
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.last_batch_handle != "roll_over" or self._cache is None:
            if self.imgrec is not None:
                self.imgrec.reset()
            self.cur = 0
            self._allow_read = True

    def hard_reset(self):
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.imgrec is not None:
            self.imgrec.reset()
        self.cur = 0
        self._allow_read = True
        self._cache = None

    def next_sample(self):
        """``(label, encoded image bytes)`` of the next image; StopIteration at the end."""
        if not self._allow_read:
            raise StopIteration
        if self.seq is not None:
            if self.cur >= self.num_image:
                if self.last_batch_handle != "discard":
                    self.cur = 0
                raise StopIteration
            idx = self.seq[self.cur]
            self.cur += 1
            if self.imgrec is not None:
                header, img = recordio.unpack(self.imgrec.read_idx(idx))
                if self.imglist is None:
                    return header.label, img
                return self.imglist[idx][0], img
            label, fname = self.imglist[idx]
            return label, self.read_image(fname)
        s = self.imgrec.read()
        if s is None:
            if self.last_batch_handle != "discard":
                self.imgrec.reset()
            raise StopIteration
        header, img = recordio.unpack(s)
        return header.label, img

    def _batchify(self, data, label, start=0):
        i = start
        try:
            while i < self.batch_size:
                lab, s = self.next_sample()
                img = self.augmentation_transform(self.imdecode(s))
                data[i] = host.raw(self.postprocess_data(img))
                label[i] = np.asarray(lab).reshape(label[i].shape)
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def next(self):
        c, h, w = self.data_shape
        if self._cache is not None:
            data, label, i = self._cache
        else:
            data = np.zeros((self.batch_size, c, h, w), np.float32)
            label = np.zeros(self.provide_label[0][1], self.label_dtype)
            i = self._batchify(data, label)
        pad = self.batch_size - i
        if pad:
            if self.last_batch_handle == "discard":
                raise StopIteration
            if self.last_batch_handle == "roll_over" and self._cache is None:
                self._cache = (data, label, i)
                raise StopIteration
            self._batchify(data, label, i)
            if self.last_batch_handle == "pad":
                self._allow_read = False
            else:
                self._cache = None
        return DataBatch([_nd(data)], [_nd(label)], pad=pad)

    def check_data_shape(self, data_shape):
        if len(data_shape) != 3:
            raise InvalidArgumentError("data_shape should have length 3, with dimensions CxHxW")
        if data_shape[0] != 3:
            raise InvalidArgumentError("This iterator expects inputs to have 3 channels.")

    def imdecode(self, s):
        """Decode ``s``; a broken image raises naming its file or index."""
        try:
            return _img.imdecode(s)
        except Exception as err:
            raise MXNetError(f"Broken image at position {self.cur - 1}: {err}") from None

    def read_image(self, fname):
        with open(os.path.join(self.path_root or "", fname), "rb") as fin:
            return fin.read()

    def augmentation_transform(self, data):
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum):
        return np.ascontiguousarray(np.moveaxis(host.raw(datum), 2, 0))

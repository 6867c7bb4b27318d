"""``mx.io.ImageRecordIter``: batches of decoded, augmented images from a RecordIO file.

The per-image steps are MXNet's default augmenter's: decode to RGB, resize the
short side to ``resize``, crop ``data_shape`` (centered, or random with
``rand_crop``; an image smaller than the crop is enlarged first), mirror with
``rand_mirror``, then ``(x - mean) * scale / std`` per channel into float32 CHW.
``preprocess_threads`` threads decode (OpenCV releases the GIL) and a background
thread prepares ``prefetch_buffer`` batches ahead. The last batch wraps around
(``round_batch``) with ``pad`` set. Random choices come from a numpy generator
seeded with ``seed`` (so the same seed gives the same epoch); they are not MXNet's
C++ draws. Arguments of MXNet's other augmentations (rotation, shear, HSL jitter)
are accepted and warned about when set, not applied.
"""

from __future__ import annotations

import collections
import itertools
import queue
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .. import recordio
from .._data import cv
from .._data.batch import BufferPool, as_ndarray
from ..base import MXNetError
from .base import DataBatch, DataDesc, DataIter

__all__ = ["ImageRecordIter"]

_IGNORED = (
    "max_rotate_angle",
    "max_shear_ratio",
    "max_aspect_ratio",
    "min_aspect_ratio",
    "max_random_scale",
    "min_random_scale",
    "max_img_size",
    "min_img_size",
    "random_h",
    "random_s",
    "random_l",
    "max_random_illumination",
    "max_random_contrast",
    "rotate",
    "fill_value",
    "pad",
    "brightness",
    "contrast",
    "saturation",
    "pca_noise",
    "random_resized_crop",
    "max_random_area",
    "min_random_area",
)


def _nd(values):
    return as_ndarray(values, fresh=True)  # each batch has its own (aligned) arrays


class ImageRecordIter(DataIter):
    """Images from ``path_imgrec`` (MXNet's ImageRecordIter, common arguments).

    Parameters
    ----------
    path_imgrec : str
    data_shape : tuple (C, H, W)
    batch_size : int
    path_imgidx : str, optional
        The index (needed for ``shuffle`` and ``num_parts``; default: ``.rec`` -> ``.idx``).
    shuffle : bool, default False
    seed : int, default 0
    rand_crop, rand_mirror : bool, default False
    resize : int, default -1
        Resize the short side to this first.
    mean_r, mean_g, mean_b, std_r, std_g, std_b, scale : float
    mean_img : str, optional
        An NDArray file (``nd.save``) with the mean image, subtracted instead of mean_*.
    label_width : int, default 1
    round_batch : bool, default True
    preprocess_threads : int, default 4
    prefetch_buffer : int, default 4
    inter_method : int, default 1
    num_parts, part_index : int
    dtype : {'float32', 'uint8'}, default 'float32'
    """

    def __init__(
        self,
        path_imgrec,
        data_shape,
        batch_size,
        path_imgidx=None,
        shuffle=False,
        seed=0,
        rand_crop=False,
        rand_mirror=False,
        resize=-1,
        mean_r=0.0,
        mean_g=0.0,
        mean_b=0.0,
        mean_a=0.0,
        std_r=1.0,
        std_g=1.0,
        std_b=1.0,
        std_a=1.0,
        scale=1.0,
        mean_img=None,
        label_width=1,
        round_batch=True,
        preprocess_threads=4,
        prefetch_buffer=4,
        inter_method=1,
        num_parts=1,
        part_index=0,
        data_name="data",
        label_name="softmax_label",
        dtype="float32",
        seed_aug=None,
        **kwargs,
    ):
        super().__init__(batch_size)
        data_shape = tuple(int(d) for d in data_shape)
        if len(data_shape) != 3 or data_shape[0] not in (1, 3):
            raise MXNetError(
                f"ImageRecordIter: data_shape must be (C, H, W) with C = 1 or 3, got {data_shape}"
            )
        used = [k for k in kwargs if k in _IGNORED and kwargs[k] not in (0, 0.0, False, None, -1)]
        unknown = [k for k in kwargs if k not in _IGNORED]
        if unknown:
            warnings.warn(f"ImageRecordIter: unknown arguments {unknown} are ignored", stacklevel=2)
        if used:
            warnings.warn(
                f"ImageRecordIter: augmentations {used} are not implemented in gluonjax and are "
                f"not applied",
                stacklevel=2,
            )
        idx = path_imgidx or (path_imgrec.rsplit(".", 1)[0] + ".idx")
        try:
            self._rec = recordio.MXIndexedRecordIO(idx, path_imgrec, "r")
            keys = list(self._rec.keys)
        except MXNetError:
            if path_imgidx or shuffle or num_parts > 1:
                raise
            self._rec = None
            keys = self._scan(path_imgrec)
        n = len(keys)
        self._keys = keys[n * part_index // num_parts : n * (part_index + 1) // num_parts]
        self._path = path_imgrec
        self.data_shape = data_shape
        self.label_width = label_width
        self._shuffle = shuffle
        self._rng = np.random.default_rng(seed if seed_aug is None else seed_aug)
        self._order_rng = np.random.default_rng(seed)
        self._aug = (rand_crop, rand_mirror, int(resize), int(inter_method))
        c = data_shape[0]
        self._mean = np.asarray([mean_r, mean_g, mean_b, mean_a][:c], np.float32).reshape(c, 1, 1)
        self._std = np.asarray([std_r, std_g, std_b, std_a][:c], np.float32).reshape(c, 1, 1)
        if mean_img:
            from ..ndarray import load

            loaded = load(mean_img)
            arr = next(iter(loaded.values())) if isinstance(loaded, dict) else loaded[0]
            self._mean = arr.asnumpy().astype(np.float32)
        self._round = round_batch
        self._dtype = np.dtype(dtype)
        self._scale = np.float32(scale)
        # x - 0, x * 1 and x / 1 are x: a plain cast when nothing else is asked for
        self._plain = not np.any(self._mean) and scale == 1 and not np.any(self._std != 1)
        self._names = (data_name, label_name)
        self._threads = max(1, int(preprocess_threads))
        self._pool = ThreadPoolExecutor(self._threads)
        self._depth = max(1, int(prefetch_buffer))
        self._buffers = BufferPool(keep=self._depth + 3)  # the batches a pass keeps alive
        self._local = threading.local()
        self._queue = None
        self._thread = None
        self.reset()

    def _scan(self, path):
        r = recordio.MXRecordIO(path, "r")
        keys, pos = [], 0
        while r.read() is not None:
            keys.append(pos)
            pos = r._f.tell()
        r.close()
        return keys

    @property
    def provide_data(self):
        return [DataDesc(self._names[0], (self.batch_size,) + self.data_shape)]

    @property
    def provide_label(self):
        shape = (self.batch_size,) if self.label_width == 1 else (self.batch_size, self.label_width)
        return [DataDesc(self._names[1], shape)]

    # ------------------------------------------------------------ one image
    def _reader(self):
        r = getattr(self._local, "rec", None)
        if r is None:
            if self._rec is not None:
                r = recordio.MXIndexedRecordIO(self._rec.idx_path, self._path, "r")
            else:
                r = recordio.MXRecordIO(self._path, "r")
            self._local.rec = r
        return r

    def _load(self, key, draws, out):
        """Decode and augment record ``key`` into ``out`` (C, H, W); its label back."""
        r = self._reader()
        if self._rec is not None:
            raw = r.read_idx(key)
        else:
            r._seek(key, key)
            raw = r.read()
        header, payload = recordio.unpack(raw)
        # decoded as OpenCV's BGR; _augment turns it to RGB while it copies it to CHW
        img = cv.imdecode(payload, 0 if self.data_shape[0] == 1 else 1, False, what=f"record {key}")
        self._augment(img, draws, out)
        return np.asarray(header.label, np.float32).reshape(-1)[: self.label_width]

    def _augment(self, img, draws, out):
        rand_crop, rand_mirror, resize, interp = self._aug
        _, h, w = self.data_shape
        if resize > 0:
            rows, cols = img.shape[:2]
            if rows > cols:
                nh, nw = resize * rows // cols, resize
            else:
                nh, nw = resize, resize * cols // rows
            img = cv.imresize(img, nw, nh, cv.interp_method(interp, (rows, cols, nh, nw)))
        method = cv.interp_method(interp, (img.shape[0], img.shape[1], h, w))
        if img.shape[0] < h:
            new_cols = int(np.float32(h) / np.float32(img.shape[0]) * np.float32(img.shape[1]))
            img = cv.imresize(img, new_cols, h, method)
        if img.shape[1] < w:
            new_rows = int(np.float32(w) / np.float32(img.shape[1]) * np.float32(img.shape[0]))
            img = cv.imresize(img, w, new_rows, method)
        y, x = img.shape[0] - h, img.shape[1] - w
        if rand_crop:
            y, x = int(draws[0] * (y + 1)), int(draws[1] * (x + 1))
        else:
            y, x = y // 2, x // 2
        img = img[y : y + h, x : x + w]
        if rand_mirror and draws[2] < 0.5:
            img = cv.cv2().flip(img, 1).reshape(img.shape)  # keeps a 1-channel axis
        # uint8 HWC BGR -> one contiguous plane per channel, RGB order; then one float32
        # pass per plane into the batch: (x - mean) * scale / std in float32, as MXNet
        planes = cv.planes(img)[::-1]
        tmp = out if out.dtype == np.float32 else np.empty(out.shape, np.float32)
        for c, plane in enumerate(planes):
            if self._plain:
                np.copyto(tmp[c], plane)
                continue
            np.subtract(plane, self._mean[c], out=tmp[c], dtype=np.float32)
            if self._scale != 1:
                np.multiply(tmp[c], self._scale, out=tmp[c])
            np.divide(tmp[c], self._std[c], out=tmp[c])
        if tmp is not out:
            np.copyto(out, tmp, casting="unsafe")

    def _fill(self, keys, draws, data, labels, todo):
        """One thread's share of a batch: images ``next(todo)`` until none are left."""
        for i in todo:
            if i >= len(keys):
                return
            labels[i] = self._load(keys[i], draws[i], data[i])

    # ------------------------------------------------------------ batches
    def _start(self, keys, pad):
        """Queue the images of one batch on the threads; (futures, data, labels, pad)."""
        draws = self._rng.random((len(keys), 3))
        data = self._buffers.take((len(keys),) + self.data_shape, self._dtype)
        labels = [None] * len(keys)
        todo = itertools.count()  # the threads take the next image as they finish one
        jobs = [
            self._pool.submit(self._fill, keys, draws, data, labels, todo)
            for _ in range(min(self._threads, len(keys)))
        ]
        return jobs, data, labels, pad

    def _finish(self, started):
        jobs, data, labels, pad = started
        for job in jobs:
            job.result()
        label = np.stack(labels)
        if self.label_width == 1:
            label = label.reshape(-1)
        return data, label, pad

    def _batches(self, order):
        """The batches of one pass; the next batch's images are queued before waiting for
        this one's, so no thread idles at the end of a batch."""
        n, bs = len(order), self.batch_size
        running = collections.deque()
        for begin in range(0, n, bs):
            keys = order[begin : begin + bs]
            pad = bs - len(keys)
            if pad and not self._round:
                break
            if pad:
                keys = keys + [order[i % n] for i in range(pad)]
            running.append(self._start(keys, pad))
            if len(running) > 1:
                yield self._finish(running.popleft())
        while running:
            yield self._finish(running.popleft())

    def _produce(self, order, q, stop):
        try:
            for item in self._batches(order):
                if stop.is_set():
                    return
                q.put(("ok", item))
            q.put(("end", None))
        except Exception as err:
            q.put(("err", err))

    def reset(self):
        self._stop_thread()
        order = list(self._keys)
        if self._shuffle:
            self._order_rng.shuffle(order)
        self._queue = queue.Queue(self._depth)
        self._stopper = threading.Event()
        self._thread = threading.Thread(
            target=self._produce, args=(order, self._queue, self._stopper), daemon=True
        )
        self._thread.start()
        self._current = None

    def _stop_thread(self):
        if self._thread is not None:
            self._stopper.set()
            while self._thread.is_alive():
                try:
                    self._queue.get(timeout=0.05)
                except queue.Empty:
                    pass
            self._thread = None

    def iter_next(self):
        kind, value = self._queue.get()
        if kind == "err":
            self._queue.put((kind, value))
            raise value
        if kind == "end":
            self._queue.put((kind, value))
            return False
        self._current = value
        return True

    def next(self):
        if not self.iter_next():
            raise StopIteration
        return DataBatch([self.getdata()], [self.getlabel()], pad=self.getpad())

    def getdata(self):
        return _nd(self._current[0])

    def getlabel(self):
        return _nd(self._current[1])

    def getpad(self):
        return self._current[2]

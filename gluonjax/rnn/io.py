"""``mx.rnn.BucketSentenceIter`` and ``encode_sentences``: token sequences for
bucketing language models (the label of each step is the next token)."""

from __future__ import annotations

import bisect
import random

import numpy as np

from ..base import MXNetError
from ..io import DataBatch, DataDesc, DataIter

__all__ = ["encode_sentences", "BucketSentenceIter"]


def encode_sentences(
    sentences, vocab=None, invalid_label=-1, invalid_key="\n", start_label=0, unknown_token=None
):
    """Encode token lists as integer lists, building (or using) a vocabulary.

    Parameters
    ----------
    sentences : list of list of str
    vocab : dict of str -> int, optional
        Existing vocabulary (new tokens are then errors unless ``unknown_token``).
    invalid_label : int, default -1
        Index of ``invalid_key`` (end of sentence).
    invalid_key : str, default '\\n'
    start_label : int, default 0
        First index given to a new token.
    unknown_token : str, optional
        Token that unknown words map to.

    Returns
    -------
    (list of list of int, dict of str -> int)

    Examples
    --------
    >>> from gluonjax.rnn import encode_sentences
    >>> encode_sentences([["a", "b"], ["b", "c"]])
    ([[0, 1], [1, 2]], {'\\n': -1, 'a': 0, 'b': 1, 'c': 2})
    """
    idx = start_label
    new_vocab = vocab is None
    if new_vocab:
        vocab = {invalid_key: invalid_label}
    res = []
    for sent in sentences:
        coded = []
        for word in sent:
            if word not in vocab:
                if not (new_vocab or unknown_token):
                    raise MXNetError(f"Unknown token {word!r} (pass unknown_token= to map it)")
                if idx == invalid_label:
                    idx += 1
                if unknown_token:
                    word = unknown_token
                vocab[word] = idx
                idx += 1
            coded.append(vocab[word])
        res.append(coded)
    return res, vocab


class BucketSentenceIter(DataIter):
    """Batches of equal-length (padded) sentences, one bucket length per batch.

    Parameters
    ----------
    sentences : list of list of int
    batch_size : int
    buckets : list of int, optional
        Bucket lengths (default: every length with at least ``batch_size`` sentences).
        A sentence goes to the smallest bucket it fits; longer ones are dropped.
    invalid_label : int, default -1
        Padding value (and the label after the last token).
    data_name, label_name : str
    dtype : str, default 'float32'
    layout : str, 'NT' (batch major) or 'TN'
    """

    def __init__(
        self,
        sentences,
        batch_size,
        buckets=None,
        invalid_label=-1,
        data_name="data",
        label_name="softmax_label",
        dtype="float32",
        layout="NT",
    ):
        super().__init__(batch_size)
        if not buckets:
            counts = np.bincount([len(s) for s in sentences])
            buckets = [i for i, n in enumerate(counts) if n >= batch_size]
        buckets = sorted(buckets)
        per_bucket = [[] for _ in buckets]
        used = [False] * len(buckets)
        ndiscard = 0
        for sent in sentences:
            b = bisect.bisect_left(buckets, len(sent))
            if b == len(buckets):
                ndiscard += 1
                continue
            used[b] = True
            row = np.full((buckets[b],), invalid_label, dtype=dtype)
            row[: len(sent)] = sent
            per_bucket[b].append(row)
        if ndiscard:
            print(f"WARNING: discarded {ndiscard} sentences longer than the largest bucket.")
        self.buckets = [b for b, u in zip(buckets, used, strict=True) if u]
        self.data = [np.asarray(rows, dtype=dtype) for rows in per_bucket if rows]
        if not self.data:
            raise MXNetError("BucketSentenceIter: no sentence fits in the buckets")
        self.batch_size = batch_size
        self.data_name, self.label_name = data_name, label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.layout = layout
        self.major_axis = layout.find("N")
        if self.major_axis not in (0, 1):
            raise MXNetError(f"Invalid layout {layout}: must be NT (batch major) or TN")
        self.default_bucket_key = max(self.buckets)
        shape = (batch_size, self.default_bucket_key)
        if self.major_axis == 1:
            shape = shape[::-1]
        self.provide_data = [DataDesc(data_name, shape, layout=layout)]
        self.provide_label = [DataDesc(label_name, shape, layout=layout)]
        self.idx = [
            (i, j)
            for i, rows in enumerate(self.data)
            for j in range(0, len(rows) - batch_size + 1, batch_size)
        ]
        self.curr_idx = 0
        self.nddata, self.ndlabel = [], []
        self.reset()

    def reset(self):
        """Shuffle the batches and the sentences in each bucket; start again."""
        from ..ndarray import array

        self.curr_idx = 0
        random.shuffle(self.idx)
        for rows in self.data:
            np.random.shuffle(rows)
        self.nddata, self.ndlabel = [], []
        for rows in self.data:
            label = np.empty_like(rows)
            label[:, :-1] = rows[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(array(rows, dtype=self.dtype))
            self.ndlabel.append(array(label, dtype=self.dtype))

    def next(self):
        """The next batch (its ``bucket_key`` is the bucket's length)."""
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[i][j : j + self.batch_size]
        label = self.ndlabel[i][j : j + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        return DataBatch(
            [data],
            [label],
            pad=0,
            bucket_key=self.buckets[i],
            provide_data=[DataDesc(self.data_name, data.shape, layout=self.layout)],
            provide_label=[DataDesc(self.label_name, label.shape, layout=self.layout)],
        )

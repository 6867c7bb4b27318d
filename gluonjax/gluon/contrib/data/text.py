"""Language-model text data sets of MXNet 1.x: ``WikiText2`` and ``WikiText103``.

Each reads one ``wiki.<segment>.tokens`` file from ``root`` (by default
``$MXNET_HOME/datasets/wikitext-2`` or ``.../wikitext-103``). A file that is absent
is downloaded (the archive from MXNet's repository, ``MXNET_GLUON_REPO``
overrides it) and unpacked; without a network the error names the file to put
where. A file that is present is used as it is (a warning says when its sha1 is
not the published one, e.g. a hand-made subset).

The text is split on whitespace line by line, ``'<eos>'`` ends every non-empty
line, and the tokens become indices of :attr:`vocabulary` (built from the file's
token counts unless one is given). Item ``i`` is ``(data, label)``: two int32
NDArrays of ``seq_len`` indices, the label being the data shifted by one token.

Examples
--------
>>> import os, tempfile
>>> from gluonjax.gluon.contrib.data.text import WikiText2
>>> root = tempfile.mkdtemp()
>>> with open(os.path.join(root, "wiki.train.tokens"), "w") as f:
...     _ = f.write("a b c\\n\\n b c a a\\n")
>>> import warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     ds = WikiText2(root=root, seq_len=3)
>>> len(ds), ds[0][0].asnumpy().tolist(), ds[0][1].asnumpy().tolist()
(2, [2, 3, 4], [3, 4, 1])
"""

from __future__ import annotations

import os
import shutil
import warnings
import zipfile

import numpy as np

from ...._data.host import item
from ....base import InvalidArgumentError, MissingFileError, data_dir
from ....contrib import text as _text
from ...data.dataset import Dataset

__all__ = ["WikiText2", "WikiText103"]

EOS_TOKEN = "<eos>"
_DEFAULT_REPO = "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"


def _sha1(path):
    import hashlib

    h = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _repo_file_url(namespace, filename):
    base = os.environ.get("MXNET_GLUON_REPO", _DEFAULT_REPO)
    return f"{base if base.endswith('/') else base + '/'}{namespace}/{filename}"


class _LanguageModelDataset(Dataset):
    """A token file turned into fixed-length (data, label) index sequences."""

    def __init__(self, root, namespace, vocabulary):
        super().__init__()
        self._vocab = vocabulary
        self._counter = None
        self._namespace = namespace
        if root is None:
            root = os.path.join(data_dir(), "datasets", namespace)
        self._root = os.path.expanduser(root)
        self._get_data()

    @property
    def vocabulary(self):
        """The :class:`~gluonjax.contrib.text.vocab.Vocabulary` the indices refer to."""
        return self._vocab

    @property
    def frequencies(self):
        """The token counts of the file (a ``collections.Counter``), ``None`` when a
        vocabulary was given."""
        return self._counter

    def _build_vocab(self, content):
        if not self._counter:
            self._counter = _text.utils.count_tokens_from_str(content)
        if not self._vocab:
            self._vocab = _text.vocab.Vocabulary(
                counter=self.frequencies, reserved_tokens=[EOS_TOKEN]
            )


class _WikiText(_LanguageModelDataset):
    _archive_file = ("", "")
    _data_file: dict = {}

    def __init__(self, root, segment, vocab, seq_len):
        if segment not in self._data_file:
            raise InvalidArgumentError(
                f"{type(self).__name__}: segment must be one of "
                f"{sorted(self._data_file)}, got {segment!r}"
            )
        if int(seq_len) <= 0:
            raise InvalidArgumentError(
                f"{type(self).__name__}: seq_len must be a positive int, got {seq_len!r}"
            )
        self._segment = segment
        self._seq_len = int(seq_len)
        super().__init__(root, self._namespace_name, vocab)

    def _read_batch(self, filename):
        with open(filename, encoding="utf8") as fin:
            content = fin.read()
        self._build_vocab(content)
        tokens = []
        for line in content.splitlines():
            words = line.strip().split()
            if words:
                tokens.extend(words)
                tokens.append(EOS_TOKEN)
        indices = self.vocabulary.to_indices(tokens)
        return np.array(indices[:-1], dtype=np.int32), np.array(indices[1:], dtype=np.int32)

    def _download(self, name):
        archive, archive_sha1 = self._archive_file
        url = _repo_file_url(f"gluon/dataset/{self._namespace}", archive)
        try:
            from ...utils import download

            os.makedirs(self._root, exist_ok=True)
            got = download(url, path=self._root, sha1_hash=archive_sha1)
            with zipfile.ZipFile(got) as zf:
                for member in zf.namelist():
                    base = os.path.basename(member)
                    if base:
                        with (
                            zf.open(member) as src,
                            open(os.path.join(self._root, base), "wb") as dst,
                        ):
                            shutil.copyfileobj(src, dst)
        except Exception as err:
            raise MissingFileError(
                f"{type(self).__name__}: {name} not found in '{self._root}' and the download "
                f"of {url} failed ({type(err).__name__}: {err}). Put {name} into "
                f"'{self._root}' (it is in {archive}), or pass root= a folder that has it.",
                filename=os.path.join(self._root, name),
            ) from None

    def _get_data(self):
        name, sha1 = self._data_file[self._segment]
        path = os.path.join(self._root, name)
        if not os.path.exists(path):
            self._download(name)
        elif _sha1(path) != sha1:
            warnings.warn(
                f"{type(self).__name__}: '{path}' does not have the published sha1 {sha1}; "
                f"using it as it is",
                stacklevel=4,
            )
        data, label = self._read_batch(path)
        # whole sequences only (MXNet 1.9.1 drops the tail that does not fill seq_len)
        n = len(data) // self._seq_len * self._seq_len
        self._data = data[:n].reshape((-1, self._seq_len))
        self._label = label[:n].reshape((-1, self._seq_len))

    def __getitem__(self, idx):
        return item(self._data[idx]), item(self._label[idx])

    def __len__(self):
        return len(self._label)


class WikiText2(_WikiText):
    """WikiText-2 (Salesforce research), word level, for language modelling.

    Parameters
    ----------
    root : str, default ``$MXNET_HOME/datasets/wikitext-2``
        The folder holding ``wiki.{train,valid,test}.tokens`` (downloaded if absent).
    segment : str, default 'train'
        ``'train'``, ``'validation'`` or ``'test'``.
    vocab : Vocabulary, optional
        The vocabulary to index with; by default one built from the segment's tokens
        with ``'<eos>'`` reserved.
    seq_len : int, default 35
        Tokens per sample, regardless of sentence boundaries.

    Returns
    -------
    Dataset
        Items ``(data, label)``: int32 arrays of shape ``(seq_len,)``.
    """

    _namespace_name = "wikitext-2"
    _archive_file = ("wikitext-2-v1.zip", "3c914d17d80b1459be871a5039ac23e752a53cbe")
    _data_file = {
        "train": ("wiki.train.tokens", "863f29c46ef9d167fff4940ec821195882fe29d1"),
        "validation": ("wiki.valid.tokens", "0418625c8b4da6e4b5c7a0b9e78d4ae8f7ee5422"),
        "test": ("wiki.test.tokens", "c7b8ce0aa086fb34dab808c5c49224211eb2b172"),
    }

    def __init__(self, root=None, segment="train", vocab=None, seq_len=35):
        super().__init__(root, segment, vocab, seq_len)


class WikiText103(_WikiText):
    """WikiText-103 (Salesforce research), word level, for language modelling.

    Parameters
    ----------
    root : str, default ``$MXNET_HOME/datasets/wikitext-103``
        The folder holding ``wiki.{train,valid,test}.tokens`` (downloaded if absent).
    segment : str, default 'train'
        ``'train'``, ``'validation'`` or ``'test'``.
    vocab : Vocabulary, optional
        The vocabulary to index with; by default one built from the segment's tokens
        with ``'<eos>'`` reserved.
    seq_len : int, default 35
        Tokens per sample, regardless of sentence boundaries.

    Returns
    -------
    Dataset
        Items ``(data, label)``: int32 arrays of shape ``(seq_len,)``.
    """

    _namespace_name = "wikitext-103"
    _archive_file = ("wikitext-103-v1.zip", "0aec09a7537b58d4bb65362fee27650eeaba625a")
    _data_file = {
        "train": ("wiki.train.tokens", "b7497e2dfe77e72cfef5e3dbc61b7b53712ac211"),
        "validation": ("wiki.valid.tokens", "c326ac59dc587676d58c422eb8a03e119582f92b"),
        "test": ("wiki.test.tokens", "8a5befc548865cec54ed4273cf87dbbad60d1e47"),
    }

    def __init__(self, root=None, segment="train", vocab=None, seq_len=35):
        super().__init__(root, segment, vocab, seq_len)

"""Token embeddings (``mx.contrib.text.embedding``): vectors for the tokens of a vocabulary.

``CustomEmbedding`` reads a text file of ``token<delim>v1<delim>v2...`` lines;
``CompositeEmbedding`` concatenates the vectors of several embeddings for the tokens of a
:class:`~.vocab.Vocabulary`; ``GloVe`` and ``FastText`` read MXNet's published files,
downloading them first when they are not under ``embedding_root``. Files are parsed as
text only (nothing is unpickled or run). ``register``/``create`` keep MXNet's registry of
embedding classes by lower-cased name.

Examples
--------
>>> import os, tempfile
>>> from gluonjax.contrib import text
>>> path = os.path.join(tempfile.mkdtemp(), "vec.txt")
>>> with open(path, "w") as f:
...     _ = f.write("hello 1 2\\nworld 3 4\\n")
>>> emb = text.embedding.CustomEmbedding(path)
>>> emb.idx_to_token, emb.get_vecs_by_tokens("world").asnumpy().tolist()
(['<unk>', 'hello', 'world'], [3.0, 4.0])
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from ... import ndarray as nd
from ...base import InvalidArgumentError, MXNetError, data_dir
from . import _pretrained
from ._files import fetch_pretrained, read_vectors
from .vocab import UNKNOWN_IDX, TextError, Vocabulary

__all__ = [
    "register",
    "create",
    "get_pretrained_file_names",
    "GloVe",
    "FastText",
    "CustomEmbedding",
    "CompositeEmbedding",
    "UnknownEmbeddingError",
]


class UnknownEmbeddingError(MXNetError, KeyError):
    """An embedding name or pre-trained file name that is not registered."""


_REGISTRY = {}


def register(embedding_cls):
    """Register a ``_TokenEmbedding`` subclass under its lower-cased class name.

    Parameters
    ----------
    embedding_cls : type

    Returns
    -------
    type
        ``embedding_cls`` (usable as a decorator).
    """
    if not (isinstance(embedding_cls, type) and issubclass(embedding_cls, _TokenEmbedding)):
        raise TextError(f"embedding.register: {embedding_cls!r} is not a _TokenEmbedding class")
    name = embedding_cls.__name__.lower()
    if name in _REGISTRY and _REGISTRY[name] is not embedding_cls:
        warnings.warn(
            f"embedding.register: new token embedding {name!r} replaces the old one", stacklevel=2
        )
    _REGISTRY[name] = embedding_cls
    return embedding_cls


def _lookup(embedding_name):
    key = str(embedding_name).lower()
    if key not in _REGISTRY:
        raise UnknownEmbeddingError(
            f"Cannot find embedding_name {embedding_name!r}; registered: {sorted(_REGISTRY)} "
            f"(see get_pretrained_file_names(embedding_name=None).keys())"
        )
    return _REGISTRY[key]


def create(embedding_name, **kwargs):
    """An instance of the registered embedding ``embedding_name`` (case-insensitive).

    Parameters
    ----------
    embedding_name : str
    **kwargs
        Passed to the class (e.g. ``pretrained_file_name``).

    Returns
    -------
    _TokenEmbedding
    """
    return _lookup(embedding_name)(**kwargs)


def get_pretrained_file_names(embedding_name=None):
    """The pre-trained file names of one embedding, or of all (a dict by name).

    Parameters
    ----------
    embedding_name : str, optional

    Returns
    -------
    list of str or dict of str to list of str

    Examples
    --------
    >>> len(get_pretrained_file_names("glove"))
    10
    """
    if embedding_name is not None:
        if embedding_name not in _REGISTRY:
            raise UnknownEmbeddingError(
                f"Cannot find embedding_name {embedding_name!r}; registered: {sorted(_REGISTRY)}"
            )
        return list(_REGISTRY[embedding_name].pretrained_file_name_sha1)
    return {name: list(cls.pretrained_file_name_sha1) for name, cls in _REGISTRY.items()}


class _TokenEmbedding(Vocabulary):
    """Base of token embeddings: a :class:`Vocabulary` whose tokens have vectors
    (``idx_to_vec``; row 0 is the unknown token's vector)."""

    pretrained_file_name_sha1: dict = {}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._vec_len = None
        self._idx_to_vec = None

    @property
    def vec_len(self):
        """int: the length of each vector."""
        return self._vec_len

    @property
    def idx_to_vec(self):
        """NDArray: ``(len(self), vec_len)``, the vector of each indexed token."""
        return self._idx_to_vec

    # ---------------------------------------------------------------- loading
    @classmethod
    def _check_pretrained_file_names(cls, pretrained_file_name):
        if pretrained_file_name not in cls.pretrained_file_name_sha1:
            name = cls.__name__.lower()
            raise UnknownEmbeddingError(
                f"Cannot find pretrained file {pretrained_file_name!r} for token embedding "
                f"{name}; valid files: {', '.join(cls.pretrained_file_name_sha1)}"
            )

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        return pretrained_file_name

    @classmethod
    def _get_pretrained_file(cls, embedding_root, pretrained_file_name):
        archives = getattr(cls, "pretrained_archive_name_sha1", None)
        return fetch_pretrained(
            os.path.join(os.path.expanduser(embedding_root), cls.__name__.lower()),
            pretrained_file_name,
            cls.pretrained_file_name_sha1[pretrained_file_name],
            cls._get_download_file_name(pretrained_file_name),
            archives,
        )

    def _load_embedding(self, pretrained_file_path, elem_delim, init_unknown_vec, encoding="utf8"):
        """Index the tokens of a vector file and set ``idx_to_vec``: the first vector of
        each token is kept; the unknown token's row comes from the file when the file has
        it, else from ``init_unknown_vec(shape=vec_len)``."""
        tokens, vecs, unknown = read_vectors(
            pretrained_file_path, elem_delim, self.unknown_token, encoding
        )
        for tok in tokens:
            self._token_to_idx[tok] = len(self._idx_to_token)
            self._idx_to_token.append(tok)
        self._vec_len = vecs.shape[1]
        table = np.concatenate([np.zeros((1, self._vec_len), np.float32), vecs])
        if unknown is None:
            init = init_unknown_vec(shape=self._vec_len)
            table[UNKNOWN_IDX] = init.asnumpy() if hasattr(init, "asnumpy") else np.asarray(init)
        else:
            table[UNKNOWN_IDX] = unknown
        self._idx_to_vec = nd.array(table)

    def _index_tokens_from_vocabulary(self, vocabulary):
        self._token_to_idx = dict(vocabulary.token_to_idx)
        self._idx_to_token = list(vocabulary.idx_to_token)
        self._unknown_token = vocabulary.unknown_token
        reserved = vocabulary.reserved_tokens
        self._reserved_tokens = None if reserved is None else list(reserved)

    def _set_idx_to_vec_by_embeddings(self, token_embeddings, vocab_len, vocab_idx_to_token):
        """``idx_to_vec`` for ``vocab_idx_to_token``: the embeddings' vectors side by side
        (each embedding's unknown vector for the unknown token and tokens it lacks)."""
        cols = []
        others = list(vocab_idx_to_token[1:])
        for embed in token_embeddings:
            unk = embed.idx_to_vec[UNKNOWN_IDX].asnumpy().reshape(1, -1)
            rows = embed.get_vecs_by_tokens(others).asnumpy() if others else unk[:0]
            cols.append(np.concatenate([unk, rows]))
        table = np.concatenate(cols, axis=1).astype(np.float32)
        if table.shape[0] != vocab_len:
            raise TextError(f"embedding: {table.shape[0]} rows for a vocabulary of {vocab_len}")
        self._vec_len = table.shape[1]
        self._idx_to_vec = nd.array(table)

    def _build_embedding_for_vocabulary(self, vocabulary):
        if vocabulary is None:
            return
        if not isinstance(vocabulary, Vocabulary):
            raise TextError(
                f"{type(self).__name__}: vocabulary must be a text.vocab.Vocabulary, got "
                f"{type(vocabulary).__name__}"
            )
        self._set_idx_to_vec_by_embeddings([self], len(vocabulary), vocabulary.idx_to_token)
        self._index_tokens_from_vocabulary(vocabulary)

    # ---------------------------------------------------------------- lookups
    def get_vecs_by_tokens(self, tokens, lower_case_backup=False):
        """Vectors of a token (1-D) or a list of tokens (2-D); unknown tokens get row 0.

        Parameters
        ----------
        tokens : str or list of str
        lower_case_backup : bool, default False
            Look up the lower-cased token when the token itself is not indexed.

        Returns
        -------
        NDArray
        """
        single = not isinstance(tokens, list)
        idx = self._token_to_idx
        out = []
        for t in [tokens] if single else tokens:
            if t in idx or not lower_case_backup:
                out.append(idx.get(t, UNKNOWN_IDX))
            else:
                out.append(idx.get(t.lower(), UNKNOWN_IDX))
        table = self._idx_to_vec
        vecs = nd.Embedding(nd.array(out), table, table.shape[0], table.shape[1])
        return vecs[0] if single else vecs

    def update_token_vectors(self, tokens, new_vectors):
        """Replace the vectors of indexed tokens.

        Parameters
        ----------
        tokens : str or list of str
            Indexed tokens (the unknown token only when named explicitly).
        new_vectors : NDArray
            ``(len(tokens), vec_len)``; for a single token also ``(vec_len,)``.
        """
        if self._idx_to_vec is None:
            raise TextError(f"{type(self).__name__}.update_token_vectors: idx_to_vec is not set")
        tokens = tokens if isinstance(tokens, list) else [tokens]
        ndims = (1, 2) if len(tokens) == 1 else (2,)
        if not isinstance(new_vectors, nd.NDArray) or new_vectors.ndim not in ndims:
            want = " or ".join(f"{d}-D" for d in ndims)
            raise TextError(
                f"update_token_vectors: new_vectors must be a {want} NDArray for "
                f"{len(tokens)} token(s), got "
                f"{getattr(new_vectors, 'shape', type(new_vectors).__name__)}"
            )
        if new_vectors.ndim == 1:
            new_vectors = new_vectors.reshape((1, -1))
        if tuple(new_vectors.shape) != (len(tokens), self._vec_len):
            raise TextError(
                f"update_token_vectors: new_vectors has shape {tuple(new_vectors.shape)} but "
                f"{len(tokens)} token(s) of vec_len {self._vec_len} need "
                f"{(len(tokens), self._vec_len)}"
            )
        rows = []
        for t in tokens:
            if t not in self._token_to_idx:
                raise InvalidArgumentError(
                    f"update_token_vectors: token {t!r} is unknown. To update the vector of "
                    f"the unknown token, name it as {self._idx_to_token[UNKNOWN_IDX]!r}."
                )
            rows.append(self._token_to_idx[t])
        self._idx_to_vec[nd.array(rows)] = new_vectors


@register
class GloVe(_TokenEmbedding):
    """The GloVe word embedding (https://nlp.stanford.edu/projects/glove/).

    Parameters
    ----------
    pretrained_file_name : str, default 'glove.840B.300d.txt'
    embedding_root : str, default $MXNET_HOME/embeddings
    init_unknown_vec : callable, default nd.zeros
    vocabulary : Vocabulary, optional
        Index only its tokens.
    """

    pretrained_archive_name_sha1 = _pretrained.GLOVE_ARCHIVES
    pretrained_file_name_sha1 = _pretrained.GLOVE_FILES

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        corpus = pretrained_file_name.split(".")[1]
        return next(a for a in cls.pretrained_archive_name_sha1 if a.split(".")[1] == corpus)

    def __init__(
        self,
        pretrained_file_name="glove.840B.300d.txt",
        embedding_root=os.path.join(data_dir(), "embeddings"),
        init_unknown_vec=nd.zeros,
        vocabulary=None,
        **kwargs,
    ):
        type(self)._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        path = type(self)._get_pretrained_file(embedding_root, pretrained_file_name)
        self._load_embedding(path, " ", init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


@register
class FastText(_TokenEmbedding):
    """The fastText word embedding (https://fasttext.cc/).

    Parameters
    ----------
    pretrained_file_name : str, default 'wiki.simple.vec'
    embedding_root : str, default $MXNET_HOME/embeddings
    init_unknown_vec : callable, default nd.zeros
    vocabulary : Vocabulary, optional
    """

    pretrained_archive_name_sha1 = _pretrained.FASTTEXT_ARCHIVES
    pretrained_file_name_sha1 = _pretrained.FASTTEXT_FILES

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        return pretrained_file_name.rsplit(".", 1)[0] + ".zip"

    def __init__(
        self,
        pretrained_file_name="wiki.simple.vec",
        embedding_root=os.path.join(data_dir(), "embeddings"),
        init_unknown_vec=nd.zeros,
        vocabulary=None,
        **kwargs,
    ):
        type(self)._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        path = type(self)._get_pretrained_file(embedding_root, pretrained_file_name)
        self._load_embedding(path, " ", init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


class CustomEmbedding(_TokenEmbedding):
    """Vectors from a user's text file of ``token<elem_delim>v1<elem_delim>v2...`` lines.

    Parameters
    ----------
    pretrained_file_path : str
    elem_delim : str, default ' '
    encoding : str, default 'utf8'
    init_unknown_vec : callable, default nd.zeros
        Makes the unknown token's vector when the file has none for it.
    vocabulary : Vocabulary, optional
        Index only its tokens.
    """

    def __init__(
        self,
        pretrained_file_path,
        elem_delim=" ",
        encoding="utf8",
        init_unknown_vec=nd.zeros,
        vocabulary=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self._load_embedding(pretrained_file_path, elem_delim, init_unknown_vec, encoding)
        self._build_embedding_for_vocabulary(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """The vectors of one or several embeddings, concatenated, for a vocabulary's tokens.

    Parameters
    ----------
    vocabulary : Vocabulary
    token_embeddings : _TokenEmbedding or list of _TokenEmbedding
    """

    def __init__(self, vocabulary, token_embeddings):
        if not isinstance(vocabulary, Vocabulary):
            raise TextError(
                f"CompositeEmbedding: vocabulary must be a text.vocab.Vocabulary, got "
                f"{type(vocabulary).__name__}"
            )
        if not isinstance(token_embeddings, list):
            token_embeddings = [token_embeddings]
        for k, embed in enumerate(token_embeddings):
            if not isinstance(embed, _TokenEmbedding):
                raise TextError(
                    f"CompositeEmbedding: token_embeddings[{k}] is a {type(embed).__name__}, "
                    f"not a token embedding"
                )
        self._index_tokens_from_vocabulary(vocabulary)
        self._set_idx_to_vec_by_embeddings(token_embeddings, len(self), self.idx_to_token)

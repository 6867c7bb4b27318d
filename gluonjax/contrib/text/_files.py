"""Reading vector files and fetching MXNet's published ones, for ``text.embedding``.

A vector file is parsed as text (never unpickled or run); an archive is opened with
``zipfile`` and only the one expected member is written out.
"""

from __future__ import annotations

import os
import warnings
import zipfile

import numpy as np

from ..._io.download import check_sha1, download
from ...base import MissingFileError
from . import _pretrained
from .vocab import TextError

__all__ = ["read_vectors", "fetch_pretrained", "EmbeddingFileNotFoundError"]


class EmbeddingFileNotFoundError(MissingFileError, ValueError):
    """A pre-trained embedding file path that is not a file (MXNet raises ValueError)."""


def read_vectors(path, elem_delim, unknown_token, encoding="utf8"):
    """Parse ``token<delim>v1<delim>v2...`` lines.

    Parameters
    ----------
    path : str
    elem_delim : str
    unknown_token : hashable
        Its line (the first one) gives the unknown vector instead of a new token.
    encoding : str

    Returns
    -------
    (list of str, numpy.ndarray, numpy.ndarray or None)
        The tokens in file order (first occurrence; one-number lines are taken for a
        header and skipped), their float32 vectors ``(n, vec_len)``, the unknown vector.
    """
    path = os.path.expanduser(path)
    if not os.path.isfile(path):
        raise EmbeddingFileNotFoundError(
            f"text.embedding: pretrained_file_path {path!r} is not a file; pass the path of "
            f"a pre-trained token embedding file",
            filename=path,
        )
    tokens, vecs, seen, unknown, vec_len = [], [], set(), None, None
    with open(path, encoding=encoding) as f:
        for line_num, line in enumerate(f, 1):
            elems = line.rstrip().split(elem_delim)
            if len(elems) < 2:
                raise TextError(
                    f"text.embedding: line {line_num} of {path!r} has no vector "
                    f"({line.rstrip()!r}); lines must be token{elem_delim!r}v1{elem_delim!r}v2..."
                )
            token = elems[0]
            try:
                vec = [float(v) for v in elems[1:]]
            except ValueError as err:
                raise TextError(f"text.embedding: line {line_num} of {path!r}: {err}") from None
            if token == unknown_token and unknown is None:
                unknown = vec
                seen.add(token)
            elif token in seen:
                warnings.warn(
                    f"line {line_num} of {path}: a second vector for token {token!r} is skipped",
                    stacklevel=3,
                )
            elif len(vec) == 1:
                warnings.warn(
                    f"line {line_num} of {path}: token {token!r} with a 1-dimensional vector "
                    f"is taken for a header and skipped",
                    stacklevel=3,
                )
            else:
                if vec_len is None:
                    vec_len = len(vec)
                elif len(vec) != vec_len:
                    raise TextError(
                        f"text.embedding: line {line_num} of {path!r}: token {token!r} has "
                        f"{len(vec)} numbers but earlier tokens have {vec_len}; every vector "
                        f"must have the same length"
                    )
                tokens.append(token)
                vecs.append(vec)
                seen.add(token)
    if vec_len is None:
        raise TextError(f"text.embedding: {path!r} holds no token vectors")
    if unknown is not None and len(unknown) != vec_len:
        raise TextError(
            f"text.embedding: the vector of the unknown token {unknown_token!r} in {path!r} "
            f"has {len(unknown)} numbers, the others {vec_len}"
        )
    unk = None if unknown is None else np.asarray(unknown, np.float32)
    return tokens, np.asarray(vecs, np.float32).reshape(-1, vec_len), unk


def fetch_pretrained(folder, file_name, file_sha1, download_name, archive_sha1=None):
    """The path of ``folder/file_name``, downloaded from MXNet's repository (and taken out
    of its zip archive) when it is missing or fails its SHA-1 check.

    Parameters
    ----------
    folder : str
    file_name : str
    file_sha1 : str
    download_name : str
        The file to download (the archive for archived files).
    archive_sha1 : dict, optional
        SHA-1 of each archive.

    Returns
    -------
    str
    """
    path = os.path.join(folder, file_name)
    if os.path.exists(path) and check_sha1(path, file_sha1):
        return path
    repo = os.environ.get("MXNET_GLUON_REPO", _pretrained.REPO_URL)
    if not repo.endswith("/"):
        repo += "/"
    cls_name = os.path.basename(folder)
    url = f"{repo}gluon/embeddings/{cls_name}/{download_name}"
    target = os.path.join(folder, download_name)
    expected = (archive_sha1 or {}).get(download_name, file_sha1)
    download(url, target, sha1_hash=expected)
    if download_name.endswith(".zip"):
        with zipfile.ZipFile(target) as zf:
            members = [m for m in zf.namelist() if os.path.basename(m) == file_name]
            if not members:
                raise TextError(f"text.embedding: {target!r} does not contain {file_name!r}")
            tmp = path + ".part"
            with zf.open(members[0]) as src, open(tmp, "wb") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
            os.replace(tmp, path)
    return path

"""``mx.contrib.text``: token counting, vocabularies and embeddings read from local files
(expected values: MXNet 1.9.1 via ``tools/make_contrib_module_fixtures.py``, or the files)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.base import MXNetError
from gluonjax.contrib import text

REF = np.load(Path(__file__).parent / "fixtures" / "contrib_modules" / "ref.npz")


def _files(tmp_path):
    p1, p2 = tmp_path / "e1.txt", tmp_path / "e2.txt"
    p1.write_text("a\t0.1\t0.2\nb\t0.3\t0.4\n<unk>\t9\t9\n")
    p2.write_text("b 1 2 3\nc 4 5 6\n")
    return str(p1), str(p2)


def test_count_tokens_with_regex_delimiters():
    got = text.utils.count_tokens_from_str("*Life*is*great*!*\n*life*is*\n", "\\*", "\n", True)
    assert got == Counter({"life": 2, "is": 2, "great": 1, "!": 1})


def test_vocabulary_order_and_thresholds():
    counter = Counter(["a", "b", "b", "c", "c", "c", "d"])
    v = text.vocab.Vocabulary(counter, most_freq_count=2, reserved_tokens=["<pad>"])
    assert v.idx_to_token == ["<unk>", "<pad>", "c", "b"]
    assert v.to_indices(["b", "zzz"]) == [3, 0] and v.to_tokens(2) == "c"
    with pytest.raises(ValueError, match="token index 9"):
        v.to_tokens(9)
    for bad in (
        dict(min_freq=0),
        dict(reserved_tokens=["x", "x"]),
        dict(reserved_tokens=["<unk>"]),
    ):
        with pytest.raises(AssertionError) as info:
            text.vocab.Vocabulary(counter, **bad)
        assert isinstance(info.value, MXNetError)


def test_composite_embedding_matches_mxnet(tmp_path):
    p1, p2 = _files(tmp_path)
    e1 = text.embedding.CustomEmbedding(p1, "\t")
    e2 = text.embedding.CustomEmbedding(p2, " ", init_unknown_vec=mx.nd.ones)
    assert e1.idx_to_token == ["<unk>", "a", "b"] and e1.vec_len == 2
    vocab = text.vocab.Vocabulary(Counter("abbccc"), reserved_tokens=["<pad>"])
    ce = text.embedding.CompositeEmbedding(vocab, [e1, e2])
    np.testing.assert_allclose(ce.idx_to_vec.asnumpy(), REF["text.composite"], rtol=1e-6)
    got = ce.get_vecs_by_tokens(["c", "zz", "A"], lower_case_backup=True)
    np.testing.assert_allclose(got.asnumpy(), REF["text.lookup"], rtol=1e-6)


def test_update_token_vectors_and_its_errors(tmp_path):
    emb = text.embedding.CustomEmbedding(_files(tmp_path)[1])
    emb.update_token_vectors("c", mx.nd.array([7, 8, 9]))
    emb.update_token_vectors(["<unk>", "b"], mx.nd.array([[1, 1, 1], [2, 2, 2]]))
    np.testing.assert_array_equal(emb.idx_to_vec.asnumpy(), [[1, 1, 1], [2, 2, 2], [7, 8, 9]])
    with pytest.raises(ValueError, match="'zz' is unknown"):
        emb.update_token_vectors("zz", mx.nd.array([0, 0, 0]))
    with pytest.raises(AssertionError, match=r"\(1, 3\)"):
        emb.update_token_vectors("c", mx.nd.array([0, 0]))


@pytest.mark.parametrize("body", ["a 1 2\nb\n", "a 1 2\nb 1 2 3\n", "a 1 x\n"])
def test_bad_embedding_files_raise(tmp_path, body):
    path = tmp_path / "bad.txt"
    path.write_text(body)
    with pytest.raises(AssertionError, match="bad.txt"):
        text.embedding.CustomEmbedding(str(path))


def test_missing_file_and_unknown_names(tmp_path):
    with pytest.raises(ValueError, match="nope.txt") as info:
        text.embedding.CustomEmbedding(str(tmp_path / "nope.txt"))
    assert isinstance(info.value, FileNotFoundError)
    assert len(text.embedding.get_pretrained_file_names("fasttext")) == 327
    assert "glove.6B.50d.txt" in text.embedding.get_pretrained_file_names()["glove"]
    with pytest.raises(KeyError, match="unknown"):
        text.embedding.get_pretrained_file_names("unknown")
    with pytest.raises(KeyError, match="wiki.xx.vec"):
        text.embedding.create("fasttext", pretrained_file_name="wiki.xx.vec")


def test_pretrained_file_found_locally_is_not_downloaded(tmp_path, monkeypatch):
    """A GloVe file already under embedding_root (SHA-1 checked) is read, never fetched."""
    from gluonjax.contrib.text import _files

    folder = tmp_path / "glove"
    folder.mkdir()
    (folder / "glove.6B.50d.txt").write_text("the 1 2\n")
    monkeypatch.setattr(_files, "check_sha1", lambda path, sha1: True)
    monkeypatch.setattr(_files, "download", lambda *a, **k: pytest.fail("downloaded"))
    emb = text.embedding.create(
        "glove", pretrained_file_name="glove.6B.50d.txt", embedding_root=str(tmp_path)
    )
    np.testing.assert_array_equal(emb.get_vecs_by_tokens("the").asnumpy(), [1, 2])

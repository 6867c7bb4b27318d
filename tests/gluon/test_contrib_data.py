"""``gluon.contrib.data``: IntervalSampler and the WikiText data sets (read from local
files; no download), against MXNet 1.9.1 run in ``.venv-mxnet``."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

sys.path.insert(0, __file__.rsplit("/", 2)[0])
from mxnet_ref import needs_mxnet, run_mxnet  # noqa: E402

import gluonjax as mx  # noqa: E402
from gluonjax.gluon import contrib  # noqa: E402
from gluonjax.gluon.contrib.data.text import WikiText2, WikiText103  # noqa: E402

TEXT = """ = Valkyria Chronicles III =

 Senjo no Valkyria 3 : <unk> Chronicles ( Japanese : 3 , lit .
 The game began development in 2010 , carrying over a large portion of the work
 done on Valkyria Chronicles II .

 It met with positive sales in Japan , and was praised by both Japanese and western critics .
"""


def test_interval_sampler():
    # MXNet 1.9.1's test_gluon_contrib.py::test_sampler and its docstring examples
    assert sorted(contrib.data.IntervalSampler(10, 3)) == list(range(10))
    assert list(contrib.data.IntervalSampler(10, 3, rollover=False)) == [0, 3, 6, 9]
    assert list(contrib.data.sampler.IntervalSampler(13, interval=3)) == [
        0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11,
    ]  # fmt: skip
    with pytest.raises(ValueError):
        contrib.data.IntervalSampler(3, 5)


@pytest.fixture()
def root(tmp_path):
    for name in ("wiki.train.tokens", "wiki.valid.tokens"):
        (tmp_path / name).write_text(TEXT if "train" in name else TEXT[:200], encoding="utf8")
    return tmp_path


@needs_mxnet
@pytest.mark.parametrize("segment,seq_len", [("train", 7), ("validation", 5), ("train", 35)])
def test_wikitext_matches_mxnet(root, segment, seq_len):
    script = f"""
import json, mxnet as mx
from mxnet.gluon.contrib.data import text
text.check_sha1 = lambda *a: True  # a hand-made file: MXNet would download the real one
ds = text.WikiText2(root={str(root)!r}, segment={segment!r}, seq_len={seq_len})
print(json.dumps({{"items": [[d.asnumpy().tolist(), l.asnumpy().tolist()] for d, l in ds],
                  "dtype": str(ds[0][0].dtype) if len(ds) else "",
                  "tokens": ds.vocabulary.idx_to_token,
                  "freq": dict(ds.frequencies)}}))
"""
    ref = json.loads(run_mxnet(script))
    with pytest.warns(UserWarning, match="sha1"):
        ds = WikiText2(root=str(root), segment=segment, seq_len=seq_len)
    assert len(ds) == len(ref["items"])
    for (d, lab), (rd, rl) in zip(ds, ref["items"]):
        assert d.asnumpy().tolist() == rd and lab.asnumpy().tolist() == rl
        assert d.dtype == np.int32 and d.shape == (seq_len,)
    assert ds.vocabulary.idx_to_token == ref["tokens"]
    assert dict(ds.frequencies) == ref["freq"]


def test_wikitext_given_vocabulary(root):
    vocab = mx.contrib.text.vocab.Vocabulary(
        mx.contrib.text.utils.count_tokens_from_str("Valkyria Chronicles"),
        reserved_tokens=["<eos>"],
    )
    with pytest.warns(UserWarning):
        ds = WikiText103(root=str(root), vocab=vocab, seq_len=4)
    assert ds.vocabulary is vocab and ds.frequencies is not None
    words = [w for line in TEXT.splitlines() for w in line.split() + ["<eos>"] if line.split()]
    want = [vocab.token_to_idx.get(w, 0) for w in words]
    got = np.concatenate([d.asnumpy() for d, _ in ds]).tolist()
    assert got == want[: len(got)] and len(got) == (len(want) - 1) // 4 * 4


def test_wikitext_missing_file_names_it(tmp_path, monkeypatch):
    monkeypatch.setenv("MXNET_GLUON_REPO", "http://127.0.0.1:9/")  # nothing listens there
    with pytest.raises(FileNotFoundError, match="wiki.test.tokens"):
        WikiText2(root=str(tmp_path), segment="test")
    with pytest.raises(ValueError, match="segment"):
        WikiText2(root=str(tmp_path), segment="dev")

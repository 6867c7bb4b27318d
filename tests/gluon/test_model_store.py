"""The model store: MXNet's file names, SHA-1 checks, zips, MXNET_HOME, and the error
that says which file to put where when there is no network.

The published weights cannot be fetched here, so the tests store a small model's
own parameters under a name whose SHA-1 entry is set to that file's (the table is
data; the lookup, naming, checks and loading are the code under test).
"""

from __future__ import annotations

import hashlib
import os
import zipfile

import numpy as np
import pytest

import gluonjax as mx
from gluonjax.gluon.model_zoo import model_store, vision

NAME = "mobilenet0.25"


def _sha1(path):
    return hashlib.sha1(open(path, "rb").read()).hexdigest()


@pytest.fixture
def saved(tmp_path, monkeypatch):
    """A mobilenet0.25 parameter file registered in the SHA-1 table; returns (net, path, sha1)."""
    net = vision.mobilenet0_25(classes=4)
    net.initialize(mx.init.Xavier())
    net.infer_shape(mx.nd.zeros((1, 3, 32, 32)))
    src = tmp_path / "src.params"
    net.save_parameters(str(src))
    sha1 = _sha1(src)
    monkeypatch.setitem(model_store._model_sha1, NAME, sha1)
    monkeypatch.setenv("MXNET_GLUON_REPO", "http://127.0.0.1:9/")  # no network in tests
    return net, src, sha1


def _same_weights(a, b):
    pa, pb = a._collect_params_with_prefix(), b._collect_params_with_prefix()
    assert list(pa) == list(pb)
    for k in pa:
        np.testing.assert_array_equal(pa[k].data().asnumpy(), pb[k].data().asnumpy())


def test_short_hash_and_file_names():
    assert model_store.short_hash("resnet18_v1") == "a0666292"
    assert model_store.short_hash("mobilenetv2_0.25") == "ae8f9392"
    with pytest.raises(ValueError, match="resnet19_v1"):
        model_store.short_hash("resnet19_v1")


def test_pretrained_loads_from_mxnet_home(saved, tmp_path, monkeypatch):
    net, src, sha1 = saved
    home = tmp_path / "home"
    (home / "models").mkdir(parents=True)
    target = home / "models" / f"{NAME}-{sha1[:8]}.params"
    target.write_bytes(src.read_bytes())
    monkeypatch.setenv("MXNET_HOME", str(home))
    assert model_store.get_model_file(NAME) == str(target)
    _same_weights(net, vision.get_model(NAME, pretrained=True, classes=4))


def test_pretrained_unpacks_mxnet_zip(saved, tmp_path):
    net, src, sha1 = saved
    root = tmp_path / "store"
    root.mkdir()
    file_name = f"{NAME}-{sha1[:8]}"
    with zipfile.ZipFile(root / f"{file_name}.zip", "w") as zf:
        zf.write(src, f"{file_name}.params")
    _same_weights(net, vision.mobilenet0_25(pretrained=True, root=str(root), classes=4))
    assert _sha1(root / f"{file_name}.params") == sha1


def test_missing_file_says_what_to_put_where(saved, tmp_path):
    _, _, sha1 = saved
    root = tmp_path / "empty"
    with pytest.raises(model_store.ModelStoreError) as err:
        vision.mobilenet0_25(pretrained=True, root=str(root))
    msg = str(err.value)
    assert f"{NAME}-{sha1[:8]}.zip" in msg and str(root) in msg
    assert "http://127.0.0.1:9/gluon/models/" in msg
    assert not [f for f in os.listdir(root) if f.endswith(".params")]


def test_corrupted_file_is_not_used(saved, tmp_path):
    _, _, sha1 = saved
    root = tmp_path / "store"
    root.mkdir()
    (root / f"{NAME}-{sha1[:8]}.params").write_bytes(b"not the weights")
    with pytest.raises(model_store.ModelStoreError, match="could not be downloaded"):
        model_store.get_model_file(NAME, root=str(root))


def test_purge(tmp_path):
    (tmp_path / "a.params").write_bytes(b"x")
    (tmp_path / "keep.txt").write_bytes(b"x")
    model_store.purge(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["keep.txt"]

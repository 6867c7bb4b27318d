"""The local store of MXNet's published pretrained model-zoo weights.

``get_model_file('resnet18_v1')`` returns ``$MXNET_HOME/models/resnet18_v1-a0666292.params``
(``~/.mxnet/models`` by default): MXNet's file names (the model name and the
first 8 hex digits of the file's SHA-1) and MXNet's checksums, so a store filled
by MXNet serves gluonjax as is. A file is used only when its SHA-1 matches.
When it is missing, MXNet's ``.zip`` of the same name in the store is unpacked;
otherwise it is downloaded (``gluon.utils.download``, from ``$MXNET_GLUON_REPO``
or MXNet's repository), and when that fails the error names the file to fetch
and where to put it. Parameter files are read with MXNet's binary format, never
unpickled.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import zipfile

from ...base import MXNetError

__all__ = ["get_model_file", "purge", "short_hash", "ModelStoreError"]


class ModelStoreError(MXNetError, ValueError):
    """A pretrained model file is unknown, missing, or fails its SHA-1 check."""


# SHA-1 of MXNet's published .params files (as listed by MXNet 1.9.1's model_store.py).
_model_sha1 = {
    "alexnet": "44335d1f0046b328243b32a26a4fbd62d9057b45",
    "densenet121": "f27dbf2dbd5ce9a80b102d89c7483342cd33cb31",
    "densenet161": "b6c8a95717e3e761bd88d145f4d0a214aaa515dc",
    "densenet169": "2603f878403c6aa5a71a124c4a3307143d6820e9",
    "densenet201": "1cdbc116bc3a1b65832b18cf53e1cb8e7da017eb",
    "inceptionv3": "ed47ec45a937b656fcc94dabde85495bbef5ba1f",
    "mobilenet0.25": "9f83e440996887baf91a6aff1cccc1c903a64274",
    "mobilenet0.5": "8e9d539cc66aa5efa71c4b6af983b936ab8701c3",
    "mobilenet0.75": "529b2c7f4934e6cb851155b22c96c9ab0a7c4dc2",
    "mobilenet1.0": "6b8c5106c730e8750bcd82ceb75220a3351157cd",
    "mobilenetv2_1.0": "36da4ff1867abccd32b29592d79fc753bca5a215",
    "mobilenetv2_0.75": "e2be7b72a79fe4a750d1dd415afedf01c3ea818d",
    "mobilenetv2_0.5": "aabd26cd335379fcb72ae6c8fac45a70eab11785",
    "mobilenetv2_0.25": "ae8f9392789b04822cbb1d98c27283fc5f8aa0a7",
    "resnet18_v1": "a0666292f0a30ff61f857b0b66efc0228eb6a54b",
    "resnet34_v1": "48216ba99a8b1005d75c0f3a0c422301a0473233",
    "resnet50_v1": "0aee57f96768c0a2d5b23a6ec91eb08dfb0a45ce",
    "resnet101_v1": "d988c13d6159779e907140a638c56f229634cb02",
    "resnet152_v1": "671c637a14387ab9e2654eafd0d493d86b1c8579",
    "resnet18_v2": "a81db45fd7b7a2d12ab97cd88ef0a5ac48b8f657",
    "resnet34_v2": "9d6b80bbc35169de6b6edecffdd6047c56fdd322",
    "resnet50_v2": "ecdde35339c1aadbec4f547857078e734a76fb49",
    "resnet101_v2": "18e93e4f48947e002547f50eabbcc9c83e516aa6",
    "resnet152_v2": "f2695542de38cf7e71ed58f02893d82bb409415e",
    "squeezenet1.0": "264ba4970a0cc87a4f15c96e25246a1307caf523",
    "squeezenet1.1": "33ba0f93753c83d86e1eb397f38a667eaf2e9376",
    "vgg11": "dd221b160977f36a53f464cb54648d227c707a05",
    "vgg11_bn": "ee79a8098a91fbe05b7a973fed2017a6117723a8",
    "vgg13": "6bc5de58a05a5e2e7f493e2d75a580d83efde38c",
    "vgg13_bn": "7d97a06c3c7a1aecc88b6e7385c2b373a249e95e",
    "vgg16": "e660d4569ccb679ec68f1fd3cce07a387252a90a",
    "vgg16_bn": "7f01cf050d357127a73826045c245041b0df7363",
    "vgg19": "ad2f660d101905472b83590b59708b71ea22b2e5",
    "vgg19_bn": "f360b758e856f1074a85abd5fd873ed1d98297c3",
}

_DEFAULT_REPO = "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"


def default_root():
    """``$MXNET_HOME/models`` (``~/.mxnet/models`` when MXNET_HOME is not set)."""
    home = os.environ.get("MXNET_HOME") or os.path.join(os.path.expanduser("~"), ".mxnet")
    return os.path.join(home, "models")


def short_hash(name):
    """The first 8 hex digits of the SHA-1 of model ``name``'s parameter file.

    Examples
    --------
    >>> short_hash('resnet18_v1')
    'a0666292'
    """
    if name not in _model_sha1:
        raise ModelStoreError(
            f"Pretrained model for {name} is not available. Models with pretrained weights: "
            f"{', '.join(sorted(_model_sha1))}"
        )
    return _model_sha1[name][:8]


def _sha1_matches(path, sha1_hash):
    digest = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest() == sha1_hash


def _unzip_params(zip_path, member, dest):
    """Extract only ``member`` (a bare file name) from ``zip_path`` to ``dest``."""
    with zipfile.ZipFile(zip_path) as zf:
        names = [n for n in zf.namelist() if os.path.basename(n) == member]
        if not names:
            raise ModelStoreError(f"'{zip_path}' does not contain {member}")
        tmp = dest + ".part"
        with zf.open(names[0]) as src, open(tmp, "wb") as out:
            shutil.copyfileobj(src, out)
        os.replace(tmp, dest)


def _download(url, path):
    from .. import utils

    download = getattr(utils, "download", None)
    if download is None:
        raise OSError("gluon.utils.download is not available")
    download(url, path=path, overwrite=True)


def get_model_file(name, root=None):
    """Path of the pretrained parameter file of model ``name`` in the local store.

    Parameters
    ----------
    name : str
        A model zoo name with pretrained weights, e.g. ``'resnet18_v1'``.
    root : str, optional
        The store (default ``$MXNET_HOME/models``, ``~/.mxnet/models``).

    Returns
    -------
    str
        ``<root>/<name>-<short sha1>.params``, whose SHA-1 has been checked.
    """
    file_name = f"{name}-{short_hash(name)}"
    root = os.path.expanduser(root) if root is not None else default_root()
    file_path = os.path.join(root, file_name + ".params")
    sha1_hash = _model_sha1[name]
    if os.path.exists(file_path):
        if _sha1_matches(file_path, sha1_hash):
            return file_path
        logging.warning("Mismatch in the content of model file %s detected.", file_path)
    zip_path = os.path.join(root, file_name + ".zip")
    if os.path.exists(zip_path):
        _unzip_params(zip_path, file_name + ".params", file_path)
        if _sha1_matches(file_path, sha1_hash):
            return file_path
    repo_url = os.environ.get("MXNET_GLUON_REPO", _DEFAULT_REPO)
    if not repo_url.endswith("/"):
        repo_url += "/"
    url = f"{repo_url}gluon/models/{file_name}.zip"
    os.makedirs(root, exist_ok=True)
    tmp_dir = tempfile.mkdtemp(dir=root)
    try:
        tmp_zip = os.path.join(tmp_dir, file_name + ".zip")
        try:
            _download(url, tmp_zip)
        except Exception as err:
            raise ModelStoreError(
                f"The pretrained weights of '{name}' are not in the local model store and "
                f"could not be downloaded ({type(err).__name__}: {err}). Download {url} and "
                f"put it (or the {file_name}.params inside it) in {root}"
            ) from err
        _unzip_params(tmp_zip, file_name + ".params", file_path)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    if _sha1_matches(file_path, sha1_hash):
        return file_path
    raise ModelStoreError(
        f"Downloaded file {file_path} has a different SHA-1 than {sha1_hash}. Please try again."
    )


def purge(root=None):
    """Delete every pretrained ``.params`` file from the local store.

    Parameters
    ----------
    root : str, optional
        The store (default ``$MXNET_HOME/models``).
    """
    root = os.path.expanduser(root) if root is not None else default_root()
    if not os.path.isdir(root):
        return
    for f in os.listdir(root):
        if f.endswith(".params"):
            os.remove(os.path.join(root, f))

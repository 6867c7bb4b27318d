"""gluon.utils.download / check_sha1 / replace_file against a local HTTP server."""

from __future__ import annotations

import hashlib
import http.server
import os
import threading

import pytest

from gluonjax._io.download import ChecksumError, DownloadError
from gluonjax.gluon import utils

BODY = b"gluonjax download test\n" * 500


class _Handler(http.server.BaseHTTPRequestHandler):
    hits = []

    def do_GET(self):  # noqa: N802  (http.server's name)
        self.hits.append(self.path)
        if self.path.endswith("missing.bin"):
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def test_download_into_a_folder_writes_the_file_and_nothing_else(server, tmp_path):
    sha1 = hashlib.sha1(BODY).hexdigest()
    got = utils.download(f"{server}/data/file.bin", path=str(tmp_path), sha1_hash=sha1)
    assert got == os.path.join(str(tmp_path), "file.bin")
    assert open(got, "rb").read() == BODY
    assert os.listdir(tmp_path) == ["file.bin"]
    assert utils.check_sha1(got, sha1) and not utils.check_sha1(got, "0" * 40)


def test_existing_file_is_kept_unless_overwrite_or_hash_mismatch(server, tmp_path):
    dest = tmp_path / "x.bin"
    dest.write_bytes(b"old")
    _Handler.hits.clear()
    utils.download(f"{server}/x.bin", path=str(dest))
    assert dest.read_bytes() == b"old" and _Handler.hits == []
    utils.download(f"{server}/x.bin", path=str(dest), sha1_hash=hashlib.sha1(BODY).hexdigest())
    assert dest.read_bytes() == BODY and len(_Handler.hits) == 1
    dest.write_bytes(b"old")
    # MXNet 1.9.1 downloads here but keeps the old file; overwrite=True replaces it
    utils.download(f"{server}/x.bin", path=str(dest), overwrite=True)
    assert dest.read_bytes() == BODY and len(_Handler.hits) == 2


def test_failures_are_retried_then_raised(server, tmp_path):
    _Handler.hits.clear()
    with pytest.raises(DownloadError, match="404"):
        utils.download(f"{server}/missing.bin", path=str(tmp_path), retries=3)
    assert len(_Handler.hits) == 3
    with pytest.raises(ChecksumError, match="hash does not match"):
        utils.download(f"{server}/y.bin", path=str(tmp_path), sha1_hash="0" * 40, retries=2)
    assert isinstance(ChecksumError("x"), UserWarning)


def test_unverified_ssl_warns(server, tmp_path):
    with pytest.warns(UserWarning, match="^Unverified HTTPS request"):
        utils.download(f"{server}/z.bin", path=str(tmp_path), verify_ssl=False)


def test_url_without_a_file_name_needs_a_path():
    with pytest.raises(DownloadError, match="path"):
        utils.download("http://127.0.0.1:9/")


def test_replace_file_moves_and_cleans_up(tmp_path):
    src, dst = tmp_path / "a", tmp_path / "b"
    src.write_bytes(b"new")
    dst.write_bytes(b"old")
    utils.replace_file(str(src), str(dst))
    assert dst.read_bytes() == b"new" and not src.exists()
    src.write_bytes(b"x")
    with pytest.raises(OSError, match="retry"):
        utils.replace_file(str(src), str(tmp_path / "no" / "such" / "dir"))
    assert not src.exists()

"""``mx.image.imrotate``, ``transforms.Rotate``, ``mx.img`` and ``imresize``'s interpolation
codes, against MXNet 1.9.1 (run in ``.venv-mxnet``) and OpenCV."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

sys.path.insert(0, __file__.rsplit("/", 2)[0])
from mxnet_ref import needs_mxnet, run_mxnet  # noqa: E402

import gluonjax as mx  # noqa: E402
from gluonjax.gluon.data.vision import transforms as T  # noqa: E402

RNG = np.random.RandomState(7)
BATCH = RNG.uniform(0, 1, (5, 2, 9, 12)).astype(np.float32)
ANGLES = [1.0, 20.0, 45.0, -30.0, 90.0]
ZOOMS = [(False, False), (False, True), (True, False)]


@pytest.fixture(scope="module")
def mxnet_rotations(tmp_path_factory):
    """MXNet 1.9.1's imrotate of BATCH: per-image angles, and one scalar angle."""
    d = tmp_path_factory.mktemp("rot")
    np.save(d / "batch.npy", BATCH)
    script = f"""
import json, numpy as np, mxnet as mx
x = mx.nd.array(np.load("batch.npy"))
out = {{}}
for zi, zo in {ZOOMS!r}:
    v = mx.image.imrotate(x, mx.nd.array({ANGLES!r}), zoom_in=zi, zoom_out=zo)
    out["vec_%d%d" % (zi, zo)] = v.asnumpy().tolist()
    s = mx.image.imrotate(x, 33, zoom_in=zi, zoom_out=zo)
    out["scalar_%d%d" % (zi, zo)] = s.asnumpy().tolist()
    one = mx.image.imrotate(x[1], 20, zoom_in=zi, zoom_out=zo)
    out["single_%d%d" % (zi, zo)] = one.asnumpy().tolist()
print(json.dumps(out))
"""
    return {k: np.array(v, np.float32) for k, v in json.loads(run_mxnet(script, cwd=d)).items()}


@needs_mxnet
@pytest.mark.parametrize("zoom", ZOOMS)
def test_imrotate_matches_mxnet(mxnet_rotations, zoom):
    zi, zo = zoom
    key = f"{int(zi)}{int(zo)}"
    x = mx.nd.array(BATCH)
    got = mx.image.imrotate(x, mx.nd.array(ANGLES), zoom_in=zi, zoom_out=zo)
    np.testing.assert_allclose(got.asnumpy(), mxnet_rotations["vec_" + key], atol=1e-5)
    got = mx.image.imrotate(x, 33, zoom_in=zi, zoom_out=zo)
    np.testing.assert_allclose(got.asnumpy(), mxnet_rotations["scalar_" + key], atol=1e-5)
    got = mx.image.imrotate(x[1], 20, zoom_in=zi, zoom_out=zo)
    np.testing.assert_allclose(got.asnumpy(), mxnet_rotations["single_" + key], atol=1e-5)


def test_imrotate_argument_errors_are_mxnets():
    x = mx.nd.array(BATCH)
    with pytest.raises(TypeError, match="scalar rotation angle"):  # one image, many angles
        mx.image.imrotate(x[0], mx.nd.array(ANGLES))
    with pytest.raises(ValueError, match="number of rotation angles"):
        mx.image.imrotate(x, mx.nd.array(ANGLES[:3]))
    with pytest.raises(ValueError, match="cannot be both True"):
        mx.image.imrotate(x, 3, zoom_in=True, zoom_out=True)
    with pytest.raises(TypeError, match="float32"):
        mx.image.imrotate(x.astype("uint8"), 3)
    with pytest.raises(mx.base.MXNetError):
        mx.image.imrotate(x[0], mx.nd.array(ANGLES))


# MXNet 1.9.1's own expected outputs (tests/python/unittest/test_gluon_data_vision.py)
ROTATED = {
    90.0: [[[0, 1, 0], [0, 0, 0], [0, 0, 0]]],
    180.0: [[[0, 0, 0], [1, 0, 0], [0, 0, 0]]],
    270.0: [[[0, 0, 0], [0, 0, 0], [0, 1, 0]]],
    360.0: [[[0, 0, 0], [0, 0, 1], [0, 0, 0]]],
}


@pytest.mark.parametrize("angle", sorted(ROTATED))
def test_rotate_transform(angle):
    src = mx.nd.array([[[0, 0, 0], [0, 0, 1], [0, 0, 0]]])
    out = T.Rotate(angle)(src)
    np.testing.assert_allclose(out.asnumpy(), np.array(ROTATED[angle], np.float32), atol=1e-6)


def test_rotate_transform_shapes_and_dtype():
    t = T.Rotate(10.0)
    with pytest.raises(TypeError):
        t(mx.nd.ones((3, 30, 60), dtype="uint8"))
    assert t(mx.nd.ones((3, 30, 60))).shape == (3, 30, 60)
    assert t(mx.nd.ones((3, 3, 30, 60))).shape == (3, 3, 30, 60)
    with pytest.raises(ValueError):
        T.Rotate(5, zoom_in=True, zoom_out=True)(mx.nd.ones((1, 4, 4)))


def test_img_is_image():
    assert mx.img is mx.image
    with pytest.raises(mx.base.MXNetError):
        mx.img.image.imread("/139810923jadjsajlskd.___adskj/blah.jpg")


@pytest.mark.parametrize("interp", [-1, 6, 7, 9, 10, 16])
def test_imresize_rejects_what_cv_resize_rejects(interp):
    # MXNet 1.9.1 raises MXNetError for these (its OpenCV 3.4.2's "Unknown interpolation")
    with pytest.raises(mx.base.MXNetError, match="interpolation"):
        mx.image.imresize(mx.nd.ones((12, 16, 3)), 5, 4, interp=interp)


@pytest.mark.parametrize("interp", [0, 1, 3, 4, 5])
def test_imresize_codes_are_opencvs(interp):
    cv2 = pytest.importorskip("cv2")
    src = (RNG.uniform(0, 255, (12, 16, 3))).astype(np.uint8)
    got = mx.image.imresize(mx.nd.array(src, dtype="uint8"), 5, 4, interp=interp)
    np.testing.assert_array_equal(got.asnumpy(), cv2.resize(src, (5, 4), interpolation=interp))

"""Fixtures for tests/data: tiny data files, and MXNet 1.9.1's outputs on them.

Two steps (MXNet's interpreter has no OpenCV to encode images):

    .venv/bin/python tools/make_data_fixtures.py inputs        # images, MNIST idx, CIFAR bins
    .venv-mxnet/bin/python tools/make_data_fixtures.py reference  # tiny.rec (run it again:)
    .venv-mxnet/bin/python tools/make_data_fixtures.py reference  # mxnet_ref.npz

Everything goes to tests/fixtures/data/ (a few KB per file).
"""

from __future__ import annotations

import gzip
import os
import random
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "tests", "fixtures", "data"))


def _pattern(h, w, seed):
    rs = np.random.RandomState(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    img = np.stack([(xx * 7 + yy * 3) % 256, (yy * 11) % 256, (xx * yy) % 256], -1)
    img = img + rs.randint(0, 40, size=(h, w, 3))
    return np.clip(img, 0, 255).astype(np.uint8)


def make_inputs():
    import cv2

    folder = os.path.join(OUT, "images")
    sizes = {"cat": [(20, 28), (26, 18)], "dog": [(24, 24), (17, 31)]}
    for k, (cls, shapes) in enumerate(sorted(sizes.items())):
        os.makedirs(os.path.join(folder, cls), exist_ok=True)
        for j, (h, w) in enumerate(shapes):
            img = _pattern(h, w, 10 * k + j)
            ext = ".jpg" if j == 0 else ".png"
            cv2.imwrite(os.path.join(folder, cls, f"{cls}{j}{ext}"), img)
    rs = np.random.RandomState(0)
    mnist = os.path.join(OUT, "mnist")
    os.makedirs(mnist, exist_ok=True)
    for prefix, n in (("train", 12), ("t10k", 6)):
        imgs = rs.randint(0, 256, size=(n, 28, 28)).astype(np.uint8)
        labels = rs.randint(0, 10, size=n).astype(np.uint8)
        for kind, body in (
            ("images-idx3", struct.pack(">IIII", 2051, n, 28, 28) + imgs.tobytes()),
            ("labels-idx1", struct.pack(">II", 2049, n) + labels.tobytes()),
        ):
            with open(os.path.join(mnist, f"{prefix}-{kind}-ubyte.gz"), "wb") as f:
                f.write(gzip.compress(body, mtime=0))
    for name, files, label_bytes in (
        ("cifar10", [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"], 1),
        ("cifar100", ["train.bin", "test.bin"], 2),
    ):
        os.makedirs(os.path.join(OUT, name), exist_ok=True)
        for fname in files:
            recs = rs.randint(0, 256, size=(2, 3072 + label_bytes)).astype(np.uint8)
            recs[:, 0] %= 10 if label_bytes == 1 else 20
            if label_bytes == 2:
                recs[:, 1] %= 100
            with open(os.path.join(OUT, name, fname), "wb") as f:
                f.write(recs.tobytes())


def _images():
    folder = os.path.join(OUT, "images")
    out = []
    for cls in sorted(os.listdir(folder)):
        for f in sorted(os.listdir(os.path.join(folder, cls))):
            out.append(os.path.join(folder, cls, f))
    return out


def make_reference():
    import mxnet as mx
    from mxnet.gluon.data.vision import transforms as T

    ref = {}
    paths = _images()
    if not os.path.exists(os.path.join(OUT, "tiny.rec")):  # MXNet's ImageRecordIter
        # yields nothing for a .rec this same process just wrote: run the step twice
        rec = mx.recordio.MXIndexedRecordIO(
            os.path.join(OUT, "tiny.idx"), os.path.join(OUT, "tiny.rec"), "w"
        )
        for i, p in enumerate(paths):
            with open(p, "rb") as f:
                header = mx.recordio.IRHeader(0, float(i % 2), i, 0)
                rec.write_idx(i, mx.recordio.pack(header, f.read()))
        rec.close()
        return
    magic = mx.recordio.MXRecordIO(os.path.join(OUT, "magic.rec"), "w")
    for payload in (
        b"\x0a\x23\xd7\xce" * 3 + b"xy",
        b"ab\x0a\x23\xd7\xcecd",
        b"abcd\x0a\x23\xd7\xce",
    ):
        magic.write(payload)
    magic.close()

    it = mx.io.ImageRecordIter(
        path_imgrec=os.path.join(OUT, "tiny.rec"),
        data_shape=(3, 14, 12),
        batch_size=2,
        mean_r=10.0,
        mean_g=20.0,
        mean_b=30.0,
        std_r=2.0,
        std_g=3.0,
        std_b=4.0,
        scale=0.5,
        preprocess_threads=1,
    )
    for k, b in enumerate(it):
        ref[f"recit_data_{k}"] = b.data[0].asnumpy()
        ref[f"recit_label_{k}"] = b.label[0].asnumpy()
        ref[f"recit_pad_{k}"] = np.array(b.pad)
    img = mx.image.imread(paths[0])
    for i, p in enumerate(paths):
        ref[f"imread_{i}"] = mx.image.imread(p).asnumpy()
        ref[f"imread_gray_{i}"] = mx.image.imread(p, 0).asnumpy()
        with open(p, "rb") as f:
            ref[f"imdecode_bgr_{i}"] = mx.image.imdecode(f.read(), to_rgb=False).asnumpy()
    for interp in range(5):
        ref[f"imresize_{interp}"] = mx.image.imresize(img, 17, 13, interp=interp).asnumpy()
    ref["resize_short"] = mx.image.resize_short(img, 15).asnumpy()
    out, box = mx.image.center_crop(img, (12, 10))
    ref["center_crop"], ref["center_crop_box"] = out.asnumpy(), np.array(box)
    random.seed(3)
    out, box = mx.image.random_crop(img, (12, 10))
    ref["random_crop"], ref["random_crop_box"] = out.asnumpy(), np.array(box)
    random.seed(4)
    out, box = mx.image.random_size_crop(img, (9, 11), 0.3, (0.75, 1.33))
    ref["random_size_crop"], ref["random_size_crop_box"] = out.asnumpy(), np.array(box)
    ref["border"] = mx.image.copyMakeBorder(img, 1, 2, 3, 4, type=0, value=7).asnumpy()
    ref["border_rep"] = mx.image.copyMakeBorder(img, 2, 1, 0, 3, type=1).asnumpy()
    ref["scale_down"] = np.array(mx.image.scale_down((10, 20), (15, 30)))

    f32 = img.astype("float32")
    tensor = T.ToTensor()(img)
    ref["to_tensor"] = tensor.asnumpy()
    ref["to_tensor_batch"] = mx.nd.image.to_tensor(mx.nd.stack(img, img)).asnumpy()
    ref["normalize"] = T.Normalize((0.1, 0.2, 0.3), (0.5, 0.6, 0.7))(tensor).asnumpy()
    ref["normalize_scalar"] = T.Normalize(0.5, 0.25)(tensor).asnumpy()
    ref["resize_int"] = T.Resize(14)(img).asnumpy()
    ref["resize_keep"] = T.Resize(14, keep_ratio=True)(img).asnumpy()
    ref["resize_tuple_nearest"] = T.Resize((15, 9), interpolation=0)(img).asnumpy()
    ref["resize_batch"] = mx.nd.image.resize(mx.nd.stack(img, img), (7, 5)).asnumpy()
    ref["center_crop_t"] = T.CenterCrop((10, 8))(img).asnumpy()
    ref["crop_resize"] = T.CropResize(2, 3, 10, 8, size=(6, 5), interpolation=1)(img).asnumpy()
    ref["cast"] = T.Cast("float16")(img).asnumpy()
    random.seed(7)
    ref["random_resized_crop"] = T.RandomResizedCrop((12, 9), scale=(0.2, 1.0))(img).asnumpy()
    ref["flip_lr"] = mx.nd.image.flip_left_right(img).asnumpy()
    ref["flip_tb"] = mx.nd.image.flip_top_bottom(img).asnumpy()
    ref["crop"] = mx.nd.image.crop(img, 1, 2, 5, 6).asnumpy()
    ref["lighting_u8"] = mx.nd.image.adjust_lighting(img, alpha=(0.3, -0.2, 0.1)).asnumpy()
    ref["lighting_f32"] = mx.nd.image.adjust_lighting(f32, alpha=(0.3, -0.2, 0.1)).asnumpy()
    for name in ("brightness", "contrast", "saturation", "hue"):
        op = getattr(mx.nd.image, f"random_{name}")
        for a in (0.6, 1.3):
            ref[f"{name}_u8_{a}"] = op(img, min_factor=a, max_factor=a).asnumpy()
            ref[f"{name}_f32_{a}"] = op(f32, min_factor=a, max_factor=a).asnumpy()
    ref["hue_f32_0.1"] = mx.nd.image.random_hue(f32, min_factor=0.1, max_factor=0.1).asnumpy()

    # augmenters (python random / numpy draws)
    augs = {
        "aug_resize": mx.image.ResizeAug(11),
        "aug_force": mx.image.ForceResizeAug((9, 7)),
        "aug_center": mx.image.CenterCropAug((8, 8)),
        "aug_randsized": mx.image.RandomSizedCropAug((8, 9), 0.3, (0.75, 1.33)),
        "aug_flip": mx.image.HorizontalFlipAug(1.0),
        "aug_brightness": mx.image.BrightnessJitterAug(0.4),
        "aug_contrast": mx.image.ContrastJitterAug(0.4),
        "aug_saturation": mx.image.SaturationJitterAug(0.4),
        "aug_hue": mx.image.HueJitterAug(0.3),
        "aug_gray": mx.image.RandomGrayAug(1.0),
        "aug_norm": mx.image.ColorNormalizeAug(mx.nd.array([1, 2, 3]), mx.nd.array([2, 3, 4])),
        "aug_lighting": mx.image.LightingAug(
            0.5, np.array([55.46, 4.794, 1.148]), np.array([[-0.5, 0.7, 0.4]] * 3)
        ),
    }
    for name, aug in augs.items():
        random.seed(11)
        np.random.seed(11)
        src = img if name in ("aug_resize", "aug_force", "aug_center", "aug_randsized") else f32
        ref[name] = aug(src.copy()).asnumpy()

    # data sets and loaders
    ds = mx.gluon.data.vision.ImageRecordDataset(os.path.join(OUT, "tiny.rec"))
    for i in range(len(ds)):
        x, y = ds[i]
        ref[f"recds_{i}"], ref[f"recds_label_{i}"] = x.asnumpy(), np.array(y)
    folder = mx.gluon.data.vision.ImageFolderDataset(os.path.join(OUT, "images"))
    ref["folder_labels"] = np.array([lab for _, lab in folder.items])
    ref["folder_synsets"] = np.array(folder.synsets)
    it = mx.image.ImageIter(
        2, (3, 10, 10), path_imgrec=os.path.join(OUT, "tiny.rec"), last_batch_handle="pad"
    )
    for k, b in enumerate(it):
        ref[f"imgiter_data_{k}"] = b.data[0].asnumpy()
        ref[f"imgiter_label_{k}"] = b.label[0].asnumpy()
    import tempfile

    tmp = tempfile.mkdtemp()
    for kind in ("images-idx3", "labels-idx1"):  # MXNet's MNISTIter reads uncompressed files
        with gzip.open(os.path.join(OUT, "mnist", f"t10k-{kind}-ubyte.gz")) as f:
            with open(os.path.join(tmp, kind), "wb") as g:
                g.write(f.read())
    mn = mx.io.MNISTIter(
        image=os.path.join(tmp, "images-idx3"),
        label=os.path.join(tmp, "labels-idx1"),
        batch_size=4,
        shuffle=False,
        flat=True,
    )
    ref["mnistiter"] = np.concatenate([b.data[0].asnumpy() for b in mn])

    np.random.seed(5)
    data = mx.gluon.data.ArrayDataset(np.arange(10), np.arange(10) * 2.0)
    loader = mx.gluon.data.DataLoader(data, batch_size=3, shuffle=True, last_batch="rollover")
    order = []
    for _ in range(2):
        order.append(np.concatenate([x.asnumpy() for x, _ in loader]))
    ref["rollover_order"] = np.stack(order)
    batch = mx.gluon.data.dataloader.default_batchify_fn(
        [((1, 2.5), [1, 2], np.int32(3)), ((3, 4.5), [3, 4], np.int32(5))]
    )
    ref["batchify_a"] = batch[0][0].asnumpy()
    ref["batchify_b"] = batch[0][1].asnumpy()
    ref["batchify_c"] = batch[1].asnumpy()
    ref["batchify_d"] = batch[2].asnumpy()
    ref["batchify_dtypes"] = np.array(
        [str(batch[0][0].dtype), str(batch[0][1].dtype), str(batch[1].dtype), str(batch[2].dtype)]
    )
    np.savez_compressed(os.path.join(OUT, "mxnet_ref.npz"), **ref)


if __name__ == "__main__":
    step = sys.argv[1] if len(sys.argv) > 1 else ""
    if step == "inputs":
        make_inputs()
    elif step == "reference":
        make_reference()
    else:
        sys.exit(__doc__)

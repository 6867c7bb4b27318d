"""``python -m gluonjax.tools.im2rec``: image lists (``.lst``) and RecordIO files (MXNet's im2rec).

``--list`` walks ``root`` and writes ``<prefix>.lst`` (``index<TAB>label<TAB>path``;
``--recursive`` labels each sub-folder, shuffled with seed 100 unless
``--no-shuffle``, split by ``--train-ratio``/``--test-ratio``/``--chunks``).
Without ``--list`` it reads every ``<prefix>*.lst`` and writes ``.rec``/``.idx``
with the images re-encoded by OpenCV (``--resize``, ``--center-crop``,
``--quality``, ``--encoding``) or packed as they are (``--pass-through``).
A malformed ``.lst`` line raises ``FileFormatError`` naming the file and line.
"""

from __future__ import annotations

import argparse
import os
import random
import sys

from .. import recordio
from .._data import cv
from ..base import FileFormatError, InvalidArgumentError


def list_image(root, recursive, exts):
    """Yield ``(index, relative path, label)`` for the images under ``root``."""
    i = 0
    if recursive:
        cat = {}
        for path, dirs, files in os.walk(root, followlinks=True):
            dirs.sort()
            files.sort()
            for fname in files:
                fpath = os.path.join(path, fname)
                if os.path.isfile(fpath) and os.path.splitext(fname)[1].lower() in exts:
                    if path not in cat:
                        cat[path] = len(cat)
                    yield (i, os.path.relpath(fpath, root), cat[path])
                    i += 1
        for k, v in sorted(cat.items(), key=lambda x: x[1]):
            print(os.path.relpath(k, root), v)
    else:
        for fname in sorted(os.listdir(root)):
            fpath = os.path.join(root, fname)
            if os.path.isfile(fpath) and os.path.splitext(fname)[1].lower() in exts:
                yield (i, os.path.relpath(fpath, root), 0)
                i += 1


def write_list(path_out, image_list):
    from .._io.atomic import atomic_write

    lines = []
    for item in image_list:
        labels = "".join(f"{j:f}\t" for j in item[2:])
        lines.append(f"{item[0]}\t{labels}{item[1]}\n")
    atomic_write(path_out, "".join(lines).encode("utf-8"))


def make_list(args):
    image_list = list(list_image(args.root, args.recursive, args.exts))
    if args.shuffle:
        random.seed(100)
        random.shuffle(image_list)
    n = len(image_list)
    chunk_size = (n + args.chunks - 1) // args.chunks
    for i in range(args.chunks):
        chunk = image_list[i * chunk_size : (i + 1) * chunk_size]
        suffix = f"_{i}" if args.chunks > 1 else ""
        sep = int(chunk_size * args.train_ratio)
        sep_test = int(chunk_size * args.test_ratio)
        if args.train_ratio == 1.0:
            write_list(args.prefix + suffix + ".lst", chunk)
        else:
            if args.test_ratio:
                write_list(args.prefix + suffix + "_test.lst", chunk[:sep_test])
            if args.train_ratio + args.test_ratio < 1.0:
                write_list(args.prefix + suffix + "_val.lst", chunk[sep_test + sep :])
            write_list(args.prefix + suffix + "_train.lst", chunk[sep_test : sep_test + sep])


def read_list(path_in):
    """Yield ``[index, path, label...]`` of each line of a ``.lst`` file."""
    with open(path_in, encoding="utf-8") as fin:
        for lineno, line in enumerate(fin, 1):
            if not line.strip():
                continue
            fields = [f.strip() for f in line.strip().split("\t")]
            try:
                if len(fields) < 3:
                    raise InvalidArgumentError(
                        f"{len(fields)} fields, expected index, label(s), path"
                    )
                yield [int(fields[0]), fields[-1]] + [float(v) for v in fields[1:-1]]
            except ValueError as err:
                raise FileFormatError(
                    f"im2rec: '{path_in}' line {lineno} is malformed ({err}): {line.strip()!r}"
                ) from None


def image_encode(args, item):
    """The packed record of one ``.lst`` item."""
    fullpath = os.path.join(args.root, item[1])
    if len(item) > 3 and args.pack_label:
        header = recordio.IRHeader(0, item[2:], item[0], 0)
    else:
        header = recordio.IRHeader(0, item[2], item[0], 0)
    if args.pass_through:
        with open(fullpath, "rb") as fin:
            return recordio.pack(header, fin.read())
    img = cv.cv2().imread(fullpath, args.color)
    if img is None:
        raise FileFormatError(f"im2rec: cannot read the image '{fullpath}'")
    if args.center_crop:
        h, w = img.shape[:2]
        m = abs(h - w) // 2
        img = img[m : m + w, :] if h > w else img[:, m : m + h]
    if args.resize:
        h, w = img.shape[:2]
        size = (args.resize, h * args.resize // w) if h > w else (w * args.resize // h, args.resize)
        img = cv.cv2().resize(img, size)
    return recordio.pack_img(header, img, quality=args.quality, img_fmt=args.encoding)


def make_rec(args, lst):
    base = os.path.splitext(lst)[0]
    record = recordio.MXIndexedRecordIO(base + ".idx", base + ".rec", "w")
    try:
        for count, item in enumerate(read_list(lst)):
            record.write_idx(item[0], image_encode(args, item))
            if count % 1000 == 0 and not args.quiet:
                print("count:", count)
    finally:
        record.close()


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        description="Create an image list or make a RecordIO database from an image list",
    )
    p.add_argument("prefix", help="prefix of input/output lst and rec files")
    p.add_argument("root", help="folder containing the images")
    p.add_argument("--list", action="store_true", help="write <prefix>.lst from root")
    p.add_argument("--exts", nargs="+", default=[".jpeg", ".jpg", ".png"])
    p.add_argument("--chunks", type=int, default=1)
    p.add_argument("--train-ratio", type=float, default=1.0)
    p.add_argument("--test-ratio", type=float, default=0)
    p.add_argument("--recursive", action="store_true", help="one label per sub-folder")
    p.add_argument("--no-shuffle", dest="shuffle", action="store_false")
    p.add_argument("--pass-through", action="store_true", help="pack the files as they are")
    p.add_argument("--resize", type=int, default=0, help="resize the short side to this")
    p.add_argument("--center-crop", action="store_true")
    p.add_argument("--quality", type=int, default=95)
    p.add_argument("--num-thread", type=int, default=1, help="accepted; one thread is used")
    p.add_argument("--color", type=int, default=1, choices=[-1, 0, 1])
    p.add_argument("--encoding", type=str, default=".jpg", choices=[".jpg", ".png"])
    p.add_argument("--pack-label", action="store_true")
    p.add_argument("--quiet", action="store_true")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    args.prefix = os.path.abspath(args.prefix)
    args.root = os.path.abspath(args.root)
    if args.list:
        make_list(args)
        return 0
    folder = os.path.dirname(args.prefix) if not os.path.isdir(args.prefix) else args.prefix
    stem = os.path.basename(args.prefix)
    lsts = sorted(
        os.path.join(folder, f)
        for f in os.listdir(folder)
        if f.startswith(stem) and f.endswith(".lst")
    )
    if not lsts:
        print(f"im2rec: no .lst file with prefix '{args.prefix}'", file=sys.stderr)
        return 1
    for lst in lsts:
        if not args.quiet:
            print("Creating .rec file from", lst, "in", folder)
        make_rec(args, lst)
    return 0


if __name__ == "__main__":
    sys.exit(main())

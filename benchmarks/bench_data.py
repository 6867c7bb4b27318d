"""Data pipeline rows: DataLoader over JPEGs (vs MXNet 1.9.1, vs torch) and ImageRecordIter.

The JPEGs (256x256, a few hundred) are made in a temporary folder at run time, and a
``.rec`` of them with ``python -m gluonjax.tools.im2rec``.

* DataLoader: ``ImageFolderDataset`` + RandomResizedCrop(224) + RandomFlipLeftRight +
  ToTensor + Normalize, batch 64, shuffled, ``num_workers`` 0 and 2. MXNet 1.9.1 runs
  the same code in its own interpreter (``.venv-mxnet``). torch (when installed) runs
  ``torch.utils.data.DataLoader`` (``persistent_workers=True``) over the same steps
  written by hand with OpenCV/numpy (torchvision has no CPU build here), so the row
  compares the loaders, not the decoders; its OpenCV and torch ops run single-threaded
  in each process, as gluonjax's (torch's default threads make its num_workers=0 row
  several times slower on a busy 2-core machine). Targets: >= MXNet's images/s,
  >= 0.9x torch's.
* ImageRecordIter: 224x224 random crops and mirrors of the ``.rec``, batch 64,
  ``preprocess_threads=2``, against MXNet's (more rounds: its epochs are short).
  Target: >= MXNet's images/s.

Each contender is a long-lived process that runs one epoch when asked; the epochs of
the contenders alternate, round after round, so a burst of load on the machine hits
them alike, and each row quotes the median over the rounds (after a warm-up epoch).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

N_IMAGES = 512
REPO = Path(__file__).resolve().parents[1]
MXNET_PY = REPO / ".venv-mxnet" / "bin" / "python"

# Every contender defines ``epoch() -> images`` and then serves: one line in, one epoch
# (timed), "images seconds" out.
_SERVE = """
import sys, time
epoch()  # warm-up: worker start-up, first decodes
print("ready", flush=True)
for line in sys.stdin:
    t = time.perf_counter()
    n = epoch()
    print(n, time.perf_counter() - t, flush=True)
"""

_GLUON = """
import {pkg} as mx
from {pkg}.gluon.data import DataLoader
from {pkg}.gluon.data.vision import ImageFolderDataset, transforms as T
tf = T.Compose([T.RandomResizedCrop(224), T.RandomFlipLeftRight(), T.ToTensor(),
                T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))])
ds = ImageFolderDataset({root!r}).transform_first(tf)
loader = DataLoader(ds, batch_size=64, shuffle=True, num_workers={workers})
def epoch():
    n = 0
    for x, y in loader:
        n += x.shape[0]
    x.wait_to_read()
    return n
"""

_TORCH = """
import cv2, numpy as np, random, math, os, torch
from torch.utils.data import Dataset, DataLoader
cv2.setNumThreads(1)  # as gluonjax's decoding; torch's workers also use 1 thread each
torch.set_num_threads(1)
MEAN = np.array([0.485, 0.456, 0.406], np.float32).reshape(3, 1, 1)
STD = np.array([0.229, 0.224, 0.225], np.float32).reshape(3, 1, 1)
class Folder(Dataset):
    def __init__(self, root):
        self.items = [(os.path.join(root, c, f), i) for i, c in enumerate(sorted(os.listdir(root)))
                      for f in sorted(os.listdir(os.path.join(root, c)))]
    def __len__(self):
        return len(self.items)
    def __getitem__(self, i):
        path, label = self.items[i]
        img = cv2.cvtColor(cv2.imread(path), cv2.COLOR_BGR2RGB)
        h, w = img.shape[:2]
        for _ in range(10):
            area = random.uniform(0.08, 1.0) * h * w
            r = math.exp(random.uniform(math.log(3 / 4), math.log(4 / 3)))
            cw, ch = int(round(math.sqrt(area * r))), int(round(math.sqrt(area / r)))
            if cw <= w and ch <= h:
                x0, y0 = random.randint(0, w - cw), random.randint(0, h - ch)
                break
        else:
            cw = ch = min(h, w)
            x0, y0 = (w - cw) // 2, (h - ch) // 2
        img = cv2.resize(img[y0:y0 + ch, x0:x0 + cw], (224, 224))
        if random.random() < 0.5:
            img = img[:, ::-1]
        t = (np.ascontiguousarray(img.transpose(2, 0, 1)).astype(np.float32) / 255 - MEAN) / STD
        return torch.from_numpy(t), label
w = {workers}
loader = DataLoader(Folder({root!r}), batch_size=64, shuffle=True, num_workers=w,
                    persistent_workers=w > 0)
def epoch():
    n = 0
    for x, y in loader:
        n += x.shape[0]
    return n
"""

_REC = """
import {pkg} as mx
it = mx.io.ImageRecordIter(path_imgrec={rec!r}, data_shape=(3, 224, 224), batch_size=64,
                           rand_crop=True, rand_mirror=True, preprocess_threads=2)
def epoch():
    it.reset()
    n = 0
    for b in it:
        n += 64 - b.pad
    b.data[0].wait_to_read()
    return n
"""


class _Contender:
    """A process that runs ``code`` (defining ``epoch()``) and times one epoch per request."""

    def __init__(self, python, code, env=None):
        self.log = tempfile.TemporaryFile("w+")  # not a pipe: a chatty stderr cannot block
        self.proc = subprocess.Popen(
            [str(python), "-c", code + _SERVE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
            env=env,
        )
        self.rates = []
        self.error = None
        if self.proc.stdout.readline().strip() != "ready":
            self._fail()

    def _fail(self):
        self.proc.kill()
        self.proc.wait()
        self.log.seek(0)
        self.error = (self.log.read().strip().splitlines() or ["exited"])[-1]

    def epoch(self):
        if self.error:
            return
        try:
            self.proc.stdin.write("go\n")
            self.proc.stdin.flush()
            n, secs = self.proc.stdout.readline().split()
            self.rates.append(int(n) / float(secs))
        except (ValueError, OSError):
            self._fail()

    def close(self):
        self.log.close()
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    @property
    def median(self):
        return statistics.median(self.rates) if self.rates and not self.error else None


def _ours_env():
    return dict(os.environ, PYTHONPATH=str(REPO))


def _ref_env():
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return env


def _have_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def _race(contenders, rounds):
    """Alternate one epoch of each contender, ``rounds`` times."""
    for _ in range(rounds):
        for c in contenders.values():
            if c is not None:
                c.epoch()
    for c in contenders.values():
        if c is not None:
            c.close()


def make_images(root, n=N_IMAGES):
    """``n`` 256x256 JPEGs (blurred noise) in four class folders under ``root``."""
    import cv2

    rs = np.random.RandomState(0)
    for c in range(4):
        os.makedirs(os.path.join(root, f"c{c}"), exist_ok=True)
    for i in range(n):
        img = cv2.GaussianBlur(rs.randint(0, 256, (256, 256, 3)).astype(np.uint8), (7, 7), 3)
        cv2.imwrite(os.path.join(root, f"c{i % 4}", f"{i}.jpg"), img)


def make_rec(root, prefix):
    for extra in (["--list", "--recursive"], ["--pass-through"]):
        subprocess.run(
            [sys.executable, "-m", "gluonjax.tools.im2rec", prefix, root, "--quiet", *extra],
            check=True,
            env=_ours_env(),
            capture_output=True,
        )
    return prefix + ".rec"


def _row(name, ours, ref, target, what):
    spread = f"{min(ours.rates):5.0f}-{max(ours.rates):<5.0f}"
    head = f"  {name:46s} {ours.median:7.0f} img/s ({spread})"
    if ref is None or ref.median is None:
        why = "not available" if ref is None else f"failed: {ref.error}"
        print(f"{head}   {what}: {why}")
        return
    print(
        f"{head}   {what} {ref.median:7.0f} img/s   ratio {ours.median / ref.median:5.2f}x "
        f"(target >= {target})"
    )


def run(n=None):
    rounds = 3 if n is not None and n < 1000 else 5
    print(
        f"data pipeline: {N_IMAGES} JPEGs 256x256, batch 64; median images/s over {rounds} "
        f"alternating epochs (min-max)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "images")
        make_images(root)
        rec = make_rec(root, os.path.join(tmp, "all"))
        print("  DataLoader: ImageFolderDataset, RandomResizedCrop(224)+Flip+ToTensor+Normalize")
        for workers in (0, 2):
            args = {"root": root, "workers": workers}
            race = {
                "ours": _Contender(
                    sys.executable, _GLUON.format(pkg="gluonjax", **args), _ours_env()
                ),
                "mxnet": _Contender(MXNET_PY, _GLUON.format(pkg="mxnet", **args), _ref_env())
                if MXNET_PY.exists()
                else None,
                "torch": _Contender(sys.executable, _TORCH.format(**args), _ref_env())
                if _have_torch()
                else None,
            }
            _race(race, rounds)
            if race["ours"].error:
                print(f"  DataLoader num_workers={workers} failed: {race['ours'].error}")
                continue
            label = f"DataLoader num_workers={workers}"
            _row(f"{label} vs MXNet", race["ours"], race["mxnet"], "1.0", "MXNet 1.9.1")
            _row(f"{label} vs torch", race["ours"], race["torch"], "0.9", "torch")
        race = {
            "ours": _Contender(sys.executable, _REC.format(pkg="gluonjax", rec=rec), _ours_env()),
            "mxnet": _Contender(MXNET_PY, _REC.format(pkg="mxnet", rec=rec), _ref_env())
            if MXNET_PY.exists()
            else None,
        }
        _race(race, 2 * rounds)
        if race["ours"].error:
            print(f"  ImageRecordIter failed: {race['ours'].error}")
        else:
            _row(
                "ImageRecordIter 224x224 crop+mirror, 2 threads",
                race["ours"],
                race["mxnet"],
                "1.0",
                "MXNet 1.9.1",
            )


if __name__ == "__main__":
    t = time.time()
    run()
    print(f"({time.time() - t:.0f} s)")

"""Data pipeline rows: DataLoader over JPEGs (vs MXNet 1.9.1, vs torch) and ImageRecordIter.

The JPEGs (256x256, a few hundred) are made in a temporary folder at run time.
Pipeline: RandomResizedCrop(224) + RandomFlipLeftRight + ToTensor + Normalize,
batch 64. MXNet runs in its own interpreter (``.venv-mxnet``) on the same files;
torch (when installed) uses ``torch.utils.data.DataLoader`` with the same steps
written by hand with OpenCV/numpy/torch ops (torchvision has no CPU build here),
so the row compares the loaders, not the decoders. Targets: >= MXNet's images/s,
>= 0.9x torch's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

N_IMAGES = 320
MXNET_PY = Path(__file__).resolve().parents[1] / ".venv-mxnet" / "bin" / "python"

_PIPELINE = """
from {pkg}.gluon.data.vision import ImageFolderDataset, transforms as T
from {pkg}.gluon.data import DataLoader
def loader(root, workers):
    tf = T.Compose([T.RandomResizedCrop(224), T.RandomFlipLeftRight(), T.ToTensor(),
                    T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))])
    ds = ImageFolderDataset(root).transform_first(tf)
    return DataLoader(ds, batch_size=64, shuffle=True, num_workers=workers)
def rate(root, workers):
    import time
    ld = loader(root, workers)
    for _ in ld: pass  # warm up (worker start-up, first decode)
    t = time.perf_counter(); n = 0
    for x, y in ld: n += x.shape[0]
    x.wait_to_read() if hasattr(x, "wait_to_read") else None
    return n / (time.perf_counter() - t)
"""


def make_images(root):
    import cv2

    rs = np.random.RandomState(0)
    for c in range(4):
        os.makedirs(os.path.join(root, f"c{c}"), exist_ok=True)
    for i in range(N_IMAGES):
        img = cv2.GaussianBlur(rs.randint(0, 256, (256, 256, 3)).astype(np.uint8), (7, 7), 3)
        cv2.imwrite(os.path.join(root, f"c{i % 4}", f"{i}.jpg"), img)


def _gluonjax_rate(root, workers):
    ns = {}
    exec(_PIPELINE.format(pkg="gluonjax"), ns)
    return ns["rate"](root, workers)


def _mxnet_rate(root, workers):
    if not MXNET_PY.exists():
        return None
    code = _PIPELINE.format(pkg="mxnet") + f"\nprint(rate({root!r}, {workers}))\n"
    res = subprocess.run([str(MXNET_PY), "-c", code], capture_output=True, text=True)
    try:
        return float(res.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


_TORCH = """
import cv2, numpy as np, random, math, time, os, torch
from torch.utils.data import Dataset, DataLoader
MEAN = np.array([0.485, 0.456, 0.406], np.float32).reshape(3, 1, 1)
STD = np.array([0.229, 0.224, 0.225], np.float32).reshape(3, 1, 1)
class Folder(Dataset):
    def __init__(self, root):
        self.items = [(os.path.join(root, c, f), i) for i, c in enumerate(sorted(os.listdir(root)))
                      for f in sorted(os.listdir(os.path.join(root, c)))]
    def __len__(self): return len(self.items)
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
            cw = ch = min(h, w); x0, y0 = (w - cw) // 2, (h - ch) // 2
        img = cv2.resize(img[y0:y0 + ch, x0:x0 + cw], (224, 224))
        if random.random() < 0.5:
            img = img[:, ::-1]
        t = (np.ascontiguousarray(img.transpose(2, 0, 1)).astype(np.float32) / 255 - MEAN) / STD
        return torch.from_numpy(t), label
def rate(root, workers):
    ld = DataLoader(Folder(root), batch_size=64, shuffle=True, num_workers=workers)
    for _ in ld: pass
    t = time.perf_counter(); n = 0
    for x, y in ld: n += x.shape[0]
    return n / (time.perf_counter() - t)
print(rate(ROOT, WORKERS))
"""


def _torch_rate(root, workers):
    try:
        import torch  # noqa: F401
    except ImportError:
        return None
    code = _TORCH.replace("ROOT", repr(root)).replace("WORKERS", str(workers))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    try:
        return float(res.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def _rec_rate(py, rec, pkg):
    code = f"""
import time, {pkg} as mx
it = mx.io.ImageRecordIter(path_imgrec={rec!r}, data_shape=(3, 224, 224), batch_size=64,
                           rand_crop=True, rand_mirror=True, preprocess_threads=2)
for _ in it: pass
it.reset(); t = time.perf_counter(); n = 0
for b in it: n += 64 - b.pad
print(n / (time.perf_counter() - t))
"""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    res = subprocess.run([str(py), "-c", code], capture_output=True, text=True, env=env)
    try:
        return float(res.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def _row(name, ours, ref, target, what):
    if ref is None:
        print(f"  {name:44s} {ours:8.0f} img/s   ({what}: not available)")
    else:
        print(
            f"  {name:44s} {ours:8.0f} img/s   {what} {ref:8.0f} img/s   ratio "
            f"{ours / ref:5.2f}x (target >= {target})"
        )


def run(n=None):
    print("data pipeline (ImageFolderDataset of JPEGs, RandomResizedCrop+Flip+ToTensor+Normalize)")
    with tempfile.TemporaryDirectory() as root:
        make_images(root)
        for workers in (0, 2):
            ours = _gluonjax_rate(root, workers)
            _row(
                f"DataLoader num_workers={workers} vs MXNet",
                ours,
                _mxnet_rate(root, workers),
                "1.0",
                "MXNet 1.9.1",
            )
            _row(
                f"DataLoader num_workers={workers} vs torch",
                ours,
                _torch_rate(root, workers),
                "0.9",
                "torch",
            )
        rec = os.path.join(root, "all.rec")
        lst = os.path.join(root, "all.lst")
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
        subprocess.run(
            [
                sys.executable,
                "-m",
                "gluonjax.tools.im2rec",
                lst[:-4],
                root,
                "--list",
                "--recursive",
                "--quiet",
            ],
            check=True,
            env=env,
            capture_output=True,
        )
        subprocess.run(
            [
                sys.executable,
                "-m",
                "gluonjax.tools.im2rec",
                lst[:-4],
                root,
                "--pass-through",
                "--quiet",
            ],
            check=True,
            env=env,
            capture_output=True,
        )
        ours = _rec_rate(sys.executable, rec, "gluonjax")
        ref = _rec_rate(MXNET_PY, rec, "mxnet") if MXNET_PY.exists() else None
        _row("ImageRecordIter 224x224, 2 threads vs MXNet", ours or 0.0, ref, "1.0", "MXNet 1.9.1")


if __name__ == "__main__":
    t = time.time()
    run()
    print(f"({time.time() - t:.0f} s)")

"""Make ``gluonjax/data/digits.npz`` from scikit-learn's 8x8 digits (run once).

scikit-learn is not a dependency of gluonjax: when it cannot be imported, this
script creates a throw-away virtual environment in a temporary folder, installs
scikit-learn there and runs itself again with that interpreter::

    python tools/make_digits_data.py            # writes gluonjax/data/digits.npz

The file holds the 1797 images (uint8, values 0..16, shape (N, 8, 8)) and labels
(uint8), already split: a fixed shuffle (``RandomState(0)``) then the first 1497
for training and the last 300 for testing, stratification not needed at this size.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "gluonjax" / "data" / "digits.npz"
N_TEST = 300


def _rerun_in_temp_venv():
    with tempfile.TemporaryDirectory() as tmp:
        venv.create(tmp, with_pip=True)
        py = os.path.join(tmp, "bin", "python")
        subprocess.run([py, "-m", "pip", "install", "-q", "scikit-learn", "numpy"], check=True)
        subprocess.run([py, __file__, "--no-venv"], check=True)


def main():
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        if "--no-venv" in sys.argv:
            raise
        return _rerun_in_temp_venv()
    import numpy as np

    d = load_digits()
    images = np.asarray(d.images).astype(np.uint8)
    labels = np.asarray(d.target).astype(np.uint8)
    if images.shape != (1797, 8, 8) or images.max() != 16 or set(labels) != set(range(10)):
        raise SystemExit(f"unexpected data set: {images.shape}, max {images.max()}")
    order = np.random.RandomState(0).permutation(len(images))
    images, labels = images[order], labels[order]
    n_train = len(images) - N_TEST
    np.savez_compressed(
        OUT,
        train_images=images[:n_train],
        train_labels=labels[:n_train],
        test_images=images[n_train:],
        test_labels=labels[n_train:],
    )
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes): {n_train} train, {N_TEST} test images")


if __name__ == "__main__":
    main()

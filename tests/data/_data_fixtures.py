"""Paths of the data fixtures (tests/fixtures/data, made by tools/make_data_fixtures.py)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "data"
REF = np.load(FIXTURES / "mxnet_ref.npz")


def image_paths():
    root = FIXTURES / "images"
    return [
        str(root / c / f) for c in sorted(os.listdir(root)) for f in sorted(os.listdir(root / c))
    ]

"""``mx.np.linalg``: NumPy's linear algebra (registry ops over ``jax.numpy.linalg``)."""

from __future__ import annotations

from ._funcs import FUNCS

norm = FUNCS["linalg.norm"]
svd = FUNCS["linalg.svd"]
cholesky = FUNCS["linalg.cholesky"]
inv = FUNCS["linalg.inv"]
det = FUNCS["linalg.det"]
slogdet = FUNCS["linalg.slogdet"]
solve = FUNCS["linalg.solve"]
pinv = FUNCS["linalg.pinv"]
eig = FUNCS["linalg.eig"]
eigh = FUNCS["linalg.eigh"]
eigvals = FUNCS["linalg.eigvals"]
eigvalsh = FUNCS["linalg.eigvalsh"]
tensorinv = FUNCS["linalg.tensorinv"]
tensorsolve = FUNCS["linalg.tensorsolve"]
qr = FUNCS["linalg.qr"]
matrix_rank = FUNCS["linalg.matrix_rank"]

__all__ = [
    "norm",
    "svd",
    "cholesky",
    "inv",
    "det",
    "slogdet",
    "solve",
    "pinv",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "tensorinv",
    "tensorsolve",
    "qr",
    "matrix_rank",
]

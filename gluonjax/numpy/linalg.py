"""``mx.np.linalg``: NumPy's linear algebra (registry ops over ``jax.numpy.linalg``)."""

from __future__ import annotations

from ._funcs import FUNCS

__all__ = [
    "norm", "svd", "cholesky", "inv", "det", "slogdet", "solve", "pinv", "eig", "eigh",
    "eigvals", "eigvalsh", "tensorinv", "tensorsolve", "qr", "matrix_rank",
]
for _n in __all__:
    globals()[_n] = FUNCS[f"linalg.{_n}"]

"""File formats: MXNet's NDArray-list binary format and atomic writes."""

from .atomic import atomic_write
from .ndformat import read_arrays, write_arrays

__all__ = ["atomic_write", "read_arrays", "write_arrays"]

"""The host side of the data pipeline: image kernels, transforms on numpy, batching, workers.

Every module of this package imports only the standard library, numpy and (lazily)
OpenCV, never jax: data-loader worker processes import them without importing
gluonjax's array machinery (see :mod:`gluonjax._data.worker`).
"""

"""Internals of :mod:`gluonjax.executor` (compiled programs, argument handling)."""

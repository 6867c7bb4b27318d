"""Private modules behind :mod:`gluonjax.initializer` (import from there)."""

"""Implementation modules of :mod:`gluonjax.metric`."""

"""Command-line tools (``python -m gluonjax.tools.im2rec``)."""

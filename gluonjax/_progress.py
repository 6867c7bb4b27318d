"""One-line text progress bar, shared by ``python -m gluonjax.demo`` and the
Estimator's :class:`~gluonjax.gluon.contrib.estimator.LoggingHandler`."""

from __future__ import annotations

import sys
import time

__all__ = ["ProgressBar"]


class ProgressBar:
    """A one-line text progress bar: redrawn in place on a terminal, one line per
    epoch otherwise (logs, CI); silent when ``enabled`` is False.

    Parameters
    ----------
    total : int or None
        Number of steps (``None`` when unknown: the bar shows the count only).
    title : str
        Text before the bar (``"epoch 1/5"``).
    enabled : bool
        False draws nothing at all.
    width : int
        Characters of the bar itself.
    stream : file-like, optional
        Where to draw (``sys.stdout`` by default).

    Examples
    --------
    >>> import io
    >>> from gluonjax._progress import ProgressBar
    >>> out = io.StringIO()
    >>> bar = ProgressBar(4, "epoch 1/1", width=8, stream=out)
    >>> bar.update(2, "loss 0.500")  # not a terminal: nothing until close
    >>> bar.close("loss 0.250")
    >>> out.getvalue().split(" (")[0]
    'epoch 1/1 [########] 4/4 loss 0.250'
    """

    def __init__(self, total, title, enabled=True, width=24, stream=None):
        self.total, self.title, self.enabled, self.width = total, title, enabled, width
        self.stream = stream or sys.stdout
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(self.enabled and isatty is not None and isatty())
        self.t0 = time.perf_counter()
        self._shown = 0  # characters of the line drawn in place (to erase it)

    def update(self, done, text=""):
        """Redraw at ``done`` steps (on a terminal only)."""
        if self.tty:
            line = self._line(done, text)
            self.stream.write("\r" + line + " " * max(self._shown - len(line), 0))
            self.stream.flush()
            self._shown = len(line)

    def close(self, text=""):
        """The final line (``total`` steps) and a newline."""
        if not self.enabled:
            return
        done = self.total if self.total is not None else 0
        self.stream.write(("\r" if self.tty else "") + self._line(done, text) + "\n")
        self.stream.flush()
        self._shown = 0

    def clear(self):
        """Erase the line drawn in place (a terminal), so a log line can replace it."""
        if self.tty and self._shown:
            self.stream.write("\r" + " " * self._shown + "\r")
            self.stream.flush()
            self._shown = 0

    def _line(self, done, text):
        took = time.perf_counter() - self.t0
        if self.total is None:
            return f"{self.title} {done} {text} ({took:.1f}s)"
        fill = int(self.width * done / max(self.total, 1))
        bar = "#" * fill + "." * (self.width - fill)
        return f"{self.title} [{bar}] {done}/{self.total} {text} ({took:.1f}s)"

"""The one table of ``python -m benchmarks --gpu``: as text, JSON and markdown.

``table`` is the dict :func:`benchmarks.gpu.main` builds: ``rows`` (``(name, has pure JAX,
has PyTorch)`` in order), ``cells`` (``{row: {'gluonjax': s, 'jax': s, 'torch': s, 'note':
[...]}}``, seconds), ``correctness`` (the pytest pass, or None), ``problems``, ``device``,
``torch``, ``torch_ok``, ``dry_run``, ``seconds``.
"""

from __future__ import annotations

import json
import math

HEAD = ("row", "gluonjax ms", "pure JAX ms", "PyTorch ms", "vs JAX", "vs torch", "note")


def _ms(sec):
    if sec is None or not math.isfinite(sec):
        return "-"
    ms = sec * 1e3
    return f"{ms:.3f}" if ms < 1 else f"{ms:.2f}" if ms < 100 else f"{ms:.0f}"


def records(table):
    """One dict per row: times in ms (None where not measured), ratios, note."""
    out = []
    for name, has_jax, has_torch in table["rows"]:
        cell = table["cells"].get(name, {})
        g, j, t = (cell.get(k) for k in ("gluonjax", "jax", "torch"))
        missing = [c for c, want in (("gluonjax", True), ("pure JAX", has_jax)) if want]
        missing = [c for c, v in zip(missing, (g, j)) if v is None]
        if has_torch and table["torch_ok"] and t is None:
            missing.append("PyTorch")
        note = list(dict.fromkeys(cell.get("note", [])))
        if missing:
            note.append("not measured: " + ", ".join(missing))
        out.append(
            {
                "row": name,
                "gluonjax_ms": None if g is None else g * 1e3,
                "jax_ms": None if j is None else j * 1e3,
                "torch_ms": None if t is None else t * 1e3,
                "vs_jax": None if g is None or not j else g / j,
                "vs_torch": None if g is None or not t else g / t,
                "note": "; ".join(note),
            }
        )
    return out


def header(table):
    lines = [f"gluonjax GPU run: {table['device']}; {table['torch']}"]
    c = table["correctness"]
    if c is None:
        lines.append("correctness: skipped (--no-correctness)")
    else:
        state = "ok" if c["ok"] else "FAILED" + (" (timed out)" if c["timed_out"] else "")
        if c["first_failure"]:
            state += f" at {c['first_failure']}"
        lines.append(
            f"correctness: {c['passed']} passed, {c['failed']} failed, {state}, on "
            f"{c['context']} ({len(c['files'])} test files, {c['seconds']:.0f} s)"
        )
    lines.append(
        "times in ms (per call, or to the event named); vs JAX / vs torch = gluonjax's "
        "time / theirs (below 1.00: gluonjax faster)"
    )
    return lines


def _cells(r):
    return (
        r["row"],
        _ms(None if r["gluonjax_ms"] is None else r["gluonjax_ms"] / 1e3),
        _ms(None if r["jax_ms"] is None else r["jax_ms"] / 1e3),
        _ms(None if r["torch_ms"] is None else r["torch_ms"] / 1e3),
        "-" if r["vs_jax"] is None else f"{r['vs_jax']:.2f}x",
        "-" if r["vs_torch"] is None else f"{r['vs_torch']:.2f}x",
        r["note"],
    )


def render(table):
    """The text table (what the command prints)."""
    rows = [_cells(r) for r in records(table)]
    width = max(len(r[0]) for r in rows) + 2
    lines = ["", "== " + header(table)[0]] + ["   " + h for h in header(table)[1:]]
    fmt = lambda c: f"{c[0]:<{width}}{c[1]:>12}{c[2]:>12}{c[3]:>12}{c[4]:>8}{c[5]:>9}  {c[6]}"  # noqa: E731
    lines += [fmt(HEAD).rstrip()] + [fmt(r).rstrip() for r in rows]
    lines += [f"problem: {p}" for p in table["problems"]]
    lines.append(f"total {table['seconds']:.0f} s")
    return "\n".join(lines)


def to_json(table):
    keep = ("device", "torch", "dry_run", "correctness", "problems", "seconds")
    return json.dumps({**{k: table[k] for k in keep}, "rows": records(table)}, indent=1)


def to_markdown(table):
    lines = [f"- {h}" for h in header(table)] + ["", "| " + " | ".join(HEAD) + " |"]
    lines.append("|" + "---|" * len(HEAD))
    lines += ["| " + " | ".join(_cells(r)) + " |" for r in records(table)]
    lines += [""] + [f"- problem: {p}" for p in table["problems"]]
    return "\n".join(lines) + "\n"

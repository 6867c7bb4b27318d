"""Token counting for ``mx.contrib.text``."""

from __future__ import annotations

import collections
import re

__all__ = ["count_tokens_from_str"]


def count_tokens_from_str(
    source_str, token_delim=" ", seq_delim="\n", to_lower=False, counter_to_update=None
):
    """Count the tokens of a string split at token and sequence delimiters.

    Parameters
    ----------
    source_str : str
    token_delim : str, default ' '
        A regular expression between tokens (escape special characters, e.g. ``'\\*'``).
    seq_delim : str, default '\\n'
        A regular expression between sequences.
    to_lower : bool, default False
        Count the lower-cased tokens.
    counter_to_update : collections.Counter, optional
        A counter to add the counts to (and return); default a new one.

    Returns
    -------
    collections.Counter

    Examples
    --------
    >>> sorted(count_tokens_from_str(" Life is good \\n life is \\n", to_lower=True).items())
    [('good', 1), ('is', 2), ('life', 2)]
    """
    tokens = [t for t in re.split(token_delim + "|" + seq_delim, source_str) if t]
    if to_lower:
        tokens = [t.lower() for t in tokens]
    if counter_to_update is None:
        return collections.Counter(tokens)
    counter_to_update.update(tokens)
    return counter_to_update

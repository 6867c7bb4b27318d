"""``Vocabulary``: indices for text tokens (``mx.contrib.text.vocab``).

Index 0 is the unknown token, then the reserved tokens, then the counter's keys by
decreasing frequency (ties by the tokens' order), as MXNet 1.9.1 indexes them.
"""

from __future__ import annotations

import collections

from ...base import InvalidArgumentError, MXNetError

__all__ = ["Vocabulary", "TextError", "UNKNOWN_IDX"]

#: the index of the unknown token
UNKNOWN_IDX = 0


class TextError(MXNetError, ValueError, AssertionError):
    """A bad argument or file for ``mx.contrib.text`` (MXNet asserts, so this is also an
    ``AssertionError``)."""


class Vocabulary:
    """Indexing for text tokens.

    Parameters
    ----------
    counter : collections.Counter, optional
        Token frequencies; its keys are indexed by the thresholds below.
    most_freq_count : int, optional
        Index at most this many of the most frequent keys (reserved tokens not counted).
    min_freq : int, default 1
        Index only keys counted at least this often.
    unknown_token : hashable, default '<unk>'
        What every unknown token maps to (index 0).
    reserved_tokens : list, optional
        Tokens always indexed, right after the unknown token (no duplicates, not the
        unknown token).

    Examples
    --------
    >>> from collections import Counter
    >>> v = Vocabulary(Counter(["a", "b", "b"]), reserved_tokens=["<pad>"])
    >>> v.token_to_idx
    {'<unk>': 0, '<pad>': 1, 'b': 2, 'a': 3}
    """

    def __init__(
        self,
        counter=None,
        most_freq_count=None,
        min_freq=1,
        unknown_token="<unk>",
        reserved_tokens=None,
    ):
        if not min_freq > 0:
            raise TextError(f"Vocabulary: min_freq must be positive, got {min_freq}")
        if reserved_tokens is not None:
            if unknown_token in set(reserved_tokens):
                raise TextError(
                    f"Vocabulary: reserved_tokens {reserved_tokens} contain the unknown_token "
                    f"{unknown_token!r}; leave it out (it always has index 0)"
                )
            if len(set(reserved_tokens)) != len(reserved_tokens):
                raise TextError(f"Vocabulary: reserved_tokens {reserved_tokens} contain duplicates")
        self._unknown_token = unknown_token
        self._reserved_tokens = None if reserved_tokens is None else list(reserved_tokens)
        self._idx_to_token = [unknown_token] + list(reserved_tokens or [])
        self._token_to_idx = {t: i for i, t in enumerate(self._idx_to_token)}
        if counter is not None:
            self._index_counter_keys(counter, most_freq_count, min_freq)

    def _index_counter_keys(self, counter, most_freq_count, min_freq):
        if not isinstance(counter, collections.Counter):
            raise TextError(
                f"Vocabulary: counter must be a collections.Counter, got {type(counter).__name__}"
            )
        special = set(self._idx_to_token)
        by_freq = sorted(sorted(counter.items(), key=lambda kv: kv[0]), key=lambda kv: -kv[1])
        cap = len(special) + (len(counter) if most_freq_count is None else most_freq_count)
        for token, freq in by_freq:
            if freq < min_freq or len(self._idx_to_token) == cap:
                break
            if token not in special:
                self._token_to_idx[token] = len(self._idx_to_token)
                self._idx_to_token.append(token)

    def __len__(self):
        return len(self._idx_to_token)

    @property
    def token_to_idx(self):
        """dict: each token's index."""
        return self._token_to_idx

    @property
    def idx_to_token(self):
        """list: the tokens, by index."""
        return self._idx_to_token

    @property
    def unknown_token(self):
        """The representation of every unknown token."""
        return self._unknown_token

    @property
    def reserved_tokens(self):
        """list or None: the reserved tokens."""
        return self._reserved_tokens

    def to_indices(self, tokens):
        """Indices of a token or a list of tokens (unknown ones map to 0).

        Parameters
        ----------
        tokens : hashable or list

        Returns
        -------
        int or list of int
        """
        single = not isinstance(tokens, list)
        out = [self._token_to_idx.get(t, UNKNOWN_IDX) for t in ([tokens] if single else tokens)]
        return out[0] if single else out

    def to_tokens(self, indices):
        """Tokens of an index or a list of indices.

        Parameters
        ----------
        indices : int or list of int

        Returns
        -------
        token or list of tokens
        """
        single = not isinstance(indices, list)
        n = len(self._idx_to_token)
        out = []
        for idx in [indices] if single else indices:
            if not isinstance(idx, int) or not -n <= idx < n:
                raise InvalidArgumentError(
                    f"Vocabulary.to_tokens: token index {idx!r} is invalid; the vocabulary "
                    f"has {n} tokens (indices 0..{n - 1})"
                )
            out.append(self._idx_to_token[idx])
        return out[0] if single else out

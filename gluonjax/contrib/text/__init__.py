"""``mx.contrib.text``: MXNet's text utilities: token counting (:mod:`.utils`),
vocabularies (:mod:`.vocab`) and token embeddings (:mod:`.embedding`).

Examples
--------
>>> from collections import Counter
>>> from gluonjax.contrib import text
>>> counter = text.utils.count_tokens_from_str("a b b c c c")
>>> vocab = text.vocab.Vocabulary(counter)
>>> vocab.idx_to_token, vocab.to_indices(["c", "zzz"])
(['<unk>', 'c', 'b', 'a'], [1, 0])
"""

from . import embedding, utils, vocab

__all__ = ["utils", "vocab", "embedding"]

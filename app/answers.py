"""Answer text normalisation shared by the reasoners and the evaluation metrics."""

from __future__ import annotations

import re
import string

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower case, no punctuation, no articles, single spaces.

    Exactly the official SQuAD / HotpotQA evaluation script's rule (punctuation is
    removed, not replaced by a space), so "U.S." and "US" compare equal.
    """
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())

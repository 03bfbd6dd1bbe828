"""Whether a text says a word of the question: written, in other words, or misspelt.

An answer says what a question asks when its text writes the asked word: by its stem, by
another wording of its relation (`_relations`: "born" for "birthplace"), by its root with
an ending ("genetic" for "gene"), misspelt (`PARAMS.relation_spelling`), or, for an
attribute whose notes use words of their own, by its kind's words (`_topics.kind_cues`:
"prognosis" for an outlook, "mutations" for genetic changes).
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._relations import with_relations
from prefrag.reasoners._text import term_set
from prefrag.reasoners._topics import kind_cues


def says_word(word: str, context: str) -> bool:
    """Whether `context` writes `word`.

    By its stem (each part of a hyphenated word), a wording of its relation, or misspelt
    (`PARAMS.relation_spelling`); a figure as it is.
    """
    if re.fullmatch(r"\d[\d,.]*", word):
        figures = {f.replace(",", "") for f in re.findall(r"\d[\d,.]*\d|\d", context)}
        return word.replace(",", "").rstrip(".") in figures
    held = with_relations(term_set(context))
    written = {w for w in re.findall(r"[a-z][a-z-]+", context.lower()) if term_set(w)}
    for part in [p for p in word.split("-") if len(p) > 2 and term_set(p)] or [word]:
        if term_set(part) <= held:
            continue
        if not any(
            SequenceMatcher(None, part, other).ratio() >= PARAMS.relation_spelling
            or same_root(part, other)
            for other in written
        ):
            return False
    return True


def same_root(word: str, other: str) -> bool:
    """Whether one word is the other with an ending ("gene" and "genetic"), four letters on."""
    short, long = sorted((word, other), key=len)
    return len(short) >= 4 and long.startswith(short)


def said_attribute(head: str, text: str) -> bool:
    """Whether `text` says the attribute `head`: written (`says_word`) or in its kind's words.

    Notes say some attributes in other words: an outlook as a "prognosis" or "survival",
    genetic changes as "mutations", complications as what a condition "can lead to"
    (`_topics.kind_cues`).
    """
    return says_word(head, text) or any(cue.search(text) for cue in kind_cues(head))

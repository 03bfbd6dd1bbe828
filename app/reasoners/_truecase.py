"""A question typed in lower case, read with the capitals its evidence writes.

The reasoner tells names from other words by their capitals (`_text.candidate_spans`): in
"how many people live in ardley?" it sees no name, so the checks that a cited note names what
the question names have nothing to check, and the same question gets another answer than
"How many people live in Ardley?". A question with no capital after its first letter ("I"
aside) is therefore read with the capitals the held documents give its words: a word the
documents write capitalised in mid-sentence and never in lower case ("Ardley", "Monday",
"SSRI") takes that form. A question that has capitals of its own is the user's spelling and
is left as it is.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from langchain_core.documents import Document

_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*")
# Two or more capitalised words in a row, "of"/"the" allowed between: "Hask Point", "Isle of Venn".
_NAME_PHRASE = re.compile(
    r"[A-Z][A-Za-z'\u2019-]*(?:\s(?:(?:of|the|and|on|upon)\s)*[A-Z][A-Za-z'\u2019-]*)+"
)
_LEADING = frozenset("the a an in on at of for from by to and but when if as".split())
_PRONOUN_I = frozenset({"I", "I'm", "I've", "I'd", "I'll"})
# A Markdown heading or table row, or a line of two or more words all capitalised.
_HEADING_LINE = re.compile(r"\s*(?:[#|]|(?:[A-Z][\w'\u2019-]*\s+)+[A-Z][\w'\u2019-]*\s*$)")
_OPENERS = " \t\"'([*_-"
_ENDS = ".!?:;|#*\n"


def typed_in_lower_case(question: str) -> bool:
    """True when no word after the first carries a capital (the pronoun "I" aside)."""
    words = _WORD.findall(question)
    return not any(w != w.lower() and w.replace("\u2019", "'") not in _PRONOUN_I for w in words[1:])


def truecase(question: str, *groups: Iterable[Document]) -> str:
    """`question` with its words capitalised as the documents write them, when typed in lower case.

    First the names of several words the documents write ("Hask Point", "St Ronan's Church"),
    longest first, then single words the documents write capitalised in mid-sentence and never
    in lower case ("ardley"). Unchanged when the question has capitals of its own or nothing
    matches. `groups`: the documents held, in as many groups as the caller has them (held and
    new, a scratchpad's steps).
    """
    if not typed_in_lower_case(question):
        return question
    bodies = [_prose(d.page_content) for group in groups for d in group]
    question = _phrases_cased(question, bodies)
    wanted = {w.lower() for w in _WORD.findall(question) if len(w) > 2 and w == w.lower()}
    if not wanted:
        return question
    cased: dict[str, Counter[str]] = {}
    lower: set[str] = set()
    for text in bodies:
        for match in _WORD.finditer(text):
            word = match.group()
            key = word.lower()
            if key not in wanted:
                continue
            if word == key:
                lower.add(key)
            elif _acronym_or_capitalised(word) and not _starts_sentence(text, match.start()):
                cased.setdefault(key, Counter())[word] += 1
    forms = {key: counts.most_common(1)[0][0] for key, counts in cased.items() if key not in lower}
    if not forms:
        return question
    return _WORD.sub(lambda m: forms.get(m.group(), m.group()), question)


def _prose(text: str) -> str:
    """`text` without its heading, table and title-case lines: capitals there name nothing."""
    return "\n".join(line for line in text.splitlines() if not _HEADING_LINE.match(line))


def _phrases_cased(question: str, texts: list[str]) -> str:
    """`question` with each name of several words the texts write put in their capitals.

    Only a name written in mid-sentence counts (a heading or a table cell in title case is
    not a name): "The Cressingby Viaduct carried ..." gives "Cressingby Viaduct".
    """
    lowered = question.lower()
    phrases: dict[str, str] = {}
    for text in texts:
        for match in _NAME_PHRASE.finditer(text):
            words = match.group().split()
            if _starts_sentence(text, match.start()):
                if words[0].lower() not in _LEADING:
                    continue
                words = words[1:]
            if len(words) > 1 and all(_acronym_or_capitalised(w) for w in (words[0], words[-1])):
                phrase = " ".join(words)
                key = phrase.lower()
                if re.search(rf"\b{re.escape(key)}\b", lowered):
                    phrases.setdefault(key, phrase)
    for key in sorted(phrases, key=len, reverse=True):
        question = re.sub(rf"\b{re.escape(key)}\b", phrases[key], question)
    return question


def _acronym_or_capitalised(word: str) -> bool:
    """A word like "Ardley" or "SSRI"; not a word shouted in capitals ("WARFARIN", "TUNNEL")."""
    if word.isupper():
        return len(word) <= 5
    return word[:1].isupper()


def _starts_sentence(text: str, start: int) -> bool:
    """True when only punctuation or spaces stand between a sentence's end and `start`.

    A capital there says nothing about the word.
    """
    i = start - 1
    while i >= 0 and text[i] in _OPENERS:
        i -= 1
    return i < 0 or text[i] in _ENDS or text[i].isdigit()

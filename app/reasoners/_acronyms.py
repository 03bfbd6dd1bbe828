"""Acronyms read as the words they stand for: "MIU" for "minor injuries unit".

Notes and questions shorten names of several words to their initials, and not always the
same way: a note says "the MIU", its reader asks about "the minor injuries unit"; a
question asks for a "PPI" where the note writes "proton pump inhibitor". An acronym (three
to six capitals, as written in the question or the evidence; two letters spell too many
chance pairs) stands for a run of as many content words, in the question or the evidence,
whose initials spell it. Nothing is listed: the pairs are read from the texts at hand
(`Acronyms.read`), and a set of terms holding either side also holds the other
(`Acronyms.expand`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prefrag.reasoners._text import term_set

_ACRONYM_RE = re.compile(r"\b[A-Z]{3,6}\b")


@dataclass(frozen=True)
class Pair:
    """An acronym and the words it stands for, as written, with their terms."""

    short: str
    long: str
    short_term: str
    long_terms: frozenset[str]


@dataclass(frozen=True)
class Acronyms:
    """The acronym pairs read from a question and its evidence."""

    pairs: tuple[Pair, ...] = ()

    @classmethod
    def read(cls, *texts: str) -> Acronyms:
        """The acronyms of `texts` with every run of words in them their initials spell."""
        joined = "\n".join(texts)
        found: dict[tuple[str, frozenset[str]], Pair] = {}
        for acronym in dict.fromkeys(_ACRONYM_RE.findall(joined)):
            short = term_set(acronym)
            if len(short) != 1:
                continue
            spelled = r"[\s-]+".join(rf"{letter}[a-z]+" for letter in acronym.lower())
            for match in re.finditer(rf"(?<![\w-]){spelled}(?![\w-])", joined, re.IGNORECASE):
                words = re.split(r"[\s-]+", match.group())
                terms = term_set(" ".join(words))
                # Every word must be a content word ("of the" spells nothing) and not
                # itself written in capitals (an acronym beside another).
                if len(terms) == len(words) and not any(w.isupper() for w in words):
                    term = next(iter(short))
                    found.setdefault((term, terms), Pair(acronym, match.group(), term, terms))
        return cls(tuple(found.values()))

    def expand(self, terms: frozenset[str]) -> frozenset[str]:
        """`terms` plus the other side of every acronym pair one side of which it holds."""
        added: set[str] = set()
        for pair in self.pairs:
            if pair.short_term in terms:
                added |= pair.long_terms
            elif pair.long_terms <= terms:
                added.add(pair.short_term)
        return terms | added if added else terms

    def spelled(self, text: str) -> str:
        """The other side of every pair `text` writes one side of, as words ("" if none)."""
        terms = term_set(text)
        other = [
            pair.long if pair.short_term in terms else pair.short
            for pair in self.pairs
            if pair.short_term in terms or pair.long_terms <= terms
        ]
        return " ".join(dict.fromkeys(other))


__all__ = ["Acronyms", "Pair"]

"""The question's named subject linked to what the answer is about, through a first hop.

"Mr Orrin Vale is on the green inhaler after his chest infection - how many puffs a day at
most?" names Mr Vale, and the inhaler's note that says the puffs never does: its sentences
are about the inhaler. The subject check (`_checks.unnamed_subject`) rightly abstains on
an answer about something else - unless the held evidence itself links the two: a
sentence (with its heading), a line or a log's bullet (`_record_links.records_of`) naming
Mr Vale and a name the answer stands on ("Mr Orrin Vale, 71: chest infection. Brelvane
inhaler.") is the first hop, and the answer about Brelvane is his. The link must also say
some of the question's description that neither his name nor the answer says ("chest
infection"): a note that merely names him beside the medicine does not make every fact of
the medicine his. Without such a link the check keeps abstaining; a yes/no (both its
subjects decide it) and a question about a described thing ("the engineer of X", asked
of the thing by name in `_bridges`) are never linked.

The linked answer cites the link's note too and says the link first ("Mr Orrin Vale, 71:
chest infection. Brelvane inhaler. Brelvane: at most 8 puffs a day."), so a reader sees
the chain; a bare short answer (a name, a figure) only cites it. Its confidence is that of
its sentence read through the link (`linked_confidence`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from prefrag.reasoners._bridges import described_thing
from prefrag.reasoners._checks import _own_sentences, mentioned, unnamed_subject
from prefrag.reasoners._evidence import Evidence, ScoredSentence, Sentence, without_heading
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._policy import FROM, Judge, Judged, plain
from prefrag.reasoners._record_links import records_of
from prefrag.reasoners._text import split_sentences, term_set, unique
from prefrag.reasoners.base import AnswerDraft

# A word written as a name: capitalised after another word, or an acronym anywhere.
_NAME_WORD_RE = re.compile(r"(?<=[\w,;)] )[A-Z][\w-]+|\b[A-Z]{2,}[\w-]*")


@dataclass(frozen=True)
class SubjectLink:
    """A first-hop text naming the question's subject and a name the answer stands on."""

    doc: int
    text: str
    terms: frozenset[str]


def linked_subject(
    judge: Judge, judged: list[Judged], draft: AnswerDraft, evidence: Evidence
) -> tuple[str, AnswerDraft, list[SubjectLink]]:
    """The subject still unmentioned ("" if none), the draft, and the links it stands on.

    Each subject the answer's evidence never mentions is looked for in a first hop
    (`subject_link`); the terms of the links found count as mentioned, and the draft
    shows and cites them (`with_links`).
    """
    links: list[SubjectLink] = []
    missing = unnamed_subject(judge, judged, draft, evidence)
    while missing:
        link = subject_link(judge, draft, evidence, missing)
        if link is None or link in links:
            return missing, draft, []
        links.append(link)
        linked = frozenset().union(*(found.terms for found in links))
        missing = unnamed_subject(judge, judged, draft, evidence, linked)
    return "", with_links(draft, links, evidence), links


def linked_confidence(
    judge: Judge,
    judged: list[Judged],
    draft: AnswerDraft,
    evidence: Evidence,
    links: list[SubjectLink],
) -> AnswerDraft:
    """The linked draft with the confidence of its best sentence read through the links.

    As a sentence reached through a log's record is (`_evidence.rank_sentences`), the
    answer's best own sentence is judged with what the links say of the question counted
    for it: the draft's own confidence is that of the two-hop answer it is, when higher.
    """
    own = _own_sentences(draft, evidence)
    mine = next((j for j in judged if j.scored.sentence in own), None)
    if mine is None:
        return draft
    best = mine.scored
    text = " ".join(link.text for link in links)
    terms = frozenset().union(*(link.terms for link in links))
    said = terms & frozenset(judge.weights.weights)
    first = Sentence(links[0].doc, -1, text, terms)
    score = best.score + judge.weights.of(said - best.covered)
    bridged = judge.judge(ScoredSentence(best.sentence, score, best.covered | said, first))
    confidence = max(draft.confidence or 0.0, bridged.confidence)
    return draft.model_copy(update={"confidence": confidence})


def subject_link(
    judge: Judge, draft: AnswerDraft, evidence: Evidence, missing: str
) -> SubjectLink | None:
    """The best-matching first hop naming `missing` and what the answer is about, if any.

    A heading over one of the answer's own sentences naming `missing` ("2. Ms Ada Pell"
    over a log's plan read beside another note's sentence) says whose entry it is, when
    that sentence says some of the question besides the name; else `first_hop` finds a
    hop naming `missing` as the subject check reads names.
    """
    if missing in evidence.titles or not linkable(judge):
        return None  # a note's title the question names is no person or place to link
    own = _own_sentences(draft, evidence)
    if len(own) > 1:
        asked = frozenset(judge.weights.weights) - term_set(missing)
        for sentence in own:
            named = term_set(sentence.heading)
            if named and mentioned(missing, named, evidence) and sentence.terms & asked:
                return SubjectLink(sentence.doc, sentence.heading, named)
    return first_hop(
        judge, draft, evidence, lambda _, terms: mentioned(missing, terms, evidence), missing
    )


def situation_link(
    judge: Judge, draft: AnswerDraft, evidence: Evidence, qualifier: str
) -> SubjectLink | None:
    """The first hop whose words or note's title say a qualifier of the situation told.

    "The man in the March review log whose INR dropped ...: how often ...?" is answered
    by a sentence of the medicine's note, which never says March: the log's entry about
    him (in a note titled "Review log, March 2026") does (`first_hop`).
    """
    wanted = term_set(qualifier)
    if not wanted:
        return None
    return first_hop(
        judge,
        draft,
        evidence,
        lambda doc, terms: wanted <= terms | evidence.title_terms[doc],
        "",
    )


def first_hop(
    judge: Judge,
    draft: AnswerDraft,
    evidence: Evidence,
    says: Callable[[int, frozenset[str]], bool],
    missing: str,
) -> SubjectLink | None:
    """The best-matching first hop that `says` what is missing and names what the answer is about.

    What the answer is about (`_about`): the names its own words write and the rare words
    of its cited notes' titles and its sentences' headings. A first hop (a sentence with
    its heading, a line or a bullet record of a note) says the missing thing (`says`, of
    its note and terms), writes one of those words, and says some of the question's
    description that neither `missing` nor the answer's own words say ("the antibiotic Mr
    X got for his water infection": "Mr X: urinary tract infection, started
    ciprofloxacin"): a note that only names him beside the answer's medicine does not make
    its every fact his. Of several, the one covering most of the question's weight; its
    text is its parts that say either (the heading naming him, the sentences naming the
    answer's thing).
    """
    if not linkable(judge):
        return None
    own = _own_sentences(draft, evidence)
    answer_terms = term_set(f"{draft.answer} {draft.rationale.removeprefix(FROM)}")
    about = _about(draft, evidence, own) - term_set(missing)
    if not about:
        return None
    own_texts = {" ".join(s.text.split()) for s in own}
    said_before = answer_terms | term_set(missing)
    best: tuple[float, SubjectLink] | None = None
    for doc, heading, text in _first_hops(evidence):
        parts = [
            part
            for part in split_sentences(text)
            if " ".join(part.split()) not in own_texts
            and (term_set(part) & about or says(doc, term_set(part)))
        ]
        if not says(doc, term_set(" ".join(parts))):
            if not heading or not says(doc, term_set(heading)):
                continue
            parts = [heading, *parts]
        terms = term_set(" ".join(parts))
        if not terms & about or not says(doc, terms):
            continue
        described = frozenset(t for t in terms if t in judge.weights.weights) - said_before
        if not described:
            continue
        score = judge.weights.of(terms)
        if best is None or score > best[0]:
            best = (score, SubjectLink(doc, plain(" ".join(parts)), terms))
    return best[1] if best else None


def linkable(judge: Judge) -> bool:
    """Whether a first hop may stand between the question and its answer.

    Not for a yes/no or a choice (both subjects, each option decide it), nor for a question
    about a described thing ("the engineer of X": `_bridges` asks the first hop by name).
    """
    if judge.sides or judge.shape.kind == "yesno":
        return False
    return described_thing(judge.shape.text) is None


def _about(draft: AnswerDraft, evidence: Evidence, own: list[Sentence]) -> frozenset[str]:
    """What an answer is about: the names its words write, rare words of its notes' titles.

    A name is a word capitalised inside a sentence that the evidence never writes in lower
    case, or an acronym ("MMR"); a title's or heading's word is rare when at most
    `PARAMS.record_bridge_docs` held notes hold it.
    """
    text = f"{draft.answer} {draft.rationale.removeprefix(FROM)}"
    names = frozenset(
        t
        for word in _NAME_WORD_RE.findall(text)
        if word.isupper() or word.lower() not in evidence.lower_case_words
        for t in term_set(word)
    )
    context = frozenset().union(
        *(s.section for s in own),
        *(evidence.title_terms[doc] for doc in evidence.positions(draft.cited_ids)),
    )
    rare = frozenset(t for t in context if _notes_holding(evidence, t) <= PARAMS.record_bridge_docs)
    return names | rare


def with_links(draft: AnswerDraft, links: list[SubjectLink], evidence: Evidence) -> AnswerDraft:
    """The draft citing the links' notes and saying the links before its answer.

    A verdict or list the answer opens with (its short answer: "No.", "Warfarin, aspirin.")
    stays first; a short answer given alone (a name, a figure) stays alone, citing them.
    """
    if not links:
        return draft
    cited = unique([*draft.cited_ids, *(evidence.ids[link.doc] for link in links)])
    said = " ".join(_ended(link.text) for link in links)
    answer = draft.answer
    short = draft.short_answer.strip()
    if short and answer.strip() == short:
        return draft.model_copy(update={"cited_ids": cited})
    if short and answer.lower().startswith(short.lower()):
        head, rest = answer[: len(short)], answer[len(short) :].lstrip(" .:;,")
        answer = f"{_ended(head)} {said} {rest}"
    else:
        answer = f"{said} {answer}"
    return draft.model_copy(update={"answer": answer, "cited_ids": cited})


def _name_terms(text: str) -> frozenset[str]:
    """The terms of the words `text` writes as names: capitalised inside a sentence, acronyms."""
    return term_set(" ".join(_NAME_WORD_RE.findall(text)))


def _ended(text: str) -> str:
    text = text.strip()
    return text if text[-1:] in ".!?" else f"{text}."


def _notes_holding(evidence: Evidence, term: str) -> int:
    """How many held notes (chunks of one note count once) hold `term`."""
    return len({evidence.titles[i] for i, terms in enumerate(evidence.doc_terms) if term in terms})


def _first_hops(evidence: Evidence) -> list[tuple[int, str, str]]:
    """Every sentence (with its heading), line and bullet record of the held notes.

    Each is (its note, the heading it stands under or "", its text).
    """
    hops = [(s.doc, s.heading, s.text) for s in evidence.sentences]
    for doc, (document, title) in enumerate(zip(evidence.docs, evidence.titles, strict=True)):
        content = without_heading(document.page_content, title)
        for record in records_of(doc, content):
            hops.append((doc, "", record.text))
        for line in content.splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                if len(line.split()) <= PARAMS.record_words:
                    hops.append((doc, "", line.strip()))
    return hops


__all__ = [
    "SubjectLink",
    "linked_confidence",
    "linked_subject",
    "situation_link",
    "subject_link",
    "with_links",
]

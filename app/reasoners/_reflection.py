"""Self-reflection for the extractive reasoner: is the answer supported for what is asked?"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from langchain_core.documents import Document

from prefrag.documents import unique_documents
from prefrag.reasoners._answering import ABSTENTION
from prefrag.reasoners._conflicts import without_note
from prefrag.reasoners._evidence import (
    Evidence,
    QuestionWeights,
    ScoredSentence,
    rank_sentences,
)
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._shapes import listed_items
from prefrag.reasoners._support import (
    anchored,
    answer_is_bridge,
    attainable_share,
    bridge_gap,
    bridged_terms,
    compared_names,
    evidence_gaps,
    fits_type,
    is_settled,
    is_year,
    missing_for,
    question_constraints,
    subjects_of,
    unresolved_words,
)
from prefrag.reasoners._text import (
    QuestionShape,
    analyze_question,
    normalize_answer,
    split_sentences,
    term_set,
)
from prefrag.reasoners.base import (
    Reflection,
    ReflectionLabel,
)


def reflect_on(question: str, answer: str, evidence: Sequence[Document]) -> Reflection:
    """Label the answer (`label_answer`) and, when negative, say what evidence it lacks.

    `Reflection.gaps` lists what the answer needs that no held document mentions; an empty
    list says the evidence is all there and the answer misreads it, which more retrieval
    cannot mend.
    """
    reflection = label_answer(question, answer, evidence)
    if not reflection.negative or reflection.gaps is not None:
        return reflection
    documents = unique_documents(evidence)
    claim = without_note(answer)
    if not documents or claim.startswith(ABSTENTION) or not normalize_answer(claim):
        return reflection  # nothing usable was found: anything retrieved may help
    gaps = evidence_gaps(analyze_question(question), Evidence(documents))
    return reflection.model_copy(update={"gaps": gaps})


def label_answer(question: str, answer: str, evidence: Sequence[Document]) -> Reflection:
    """Label an answer: CORRECT only when a sentence holding it supports it for what is asked.

    A span answer needs a sentence holding it whose chain names every name and year of the
    question, covers most of its weight, and states its relation words, with the answer of
    the asked type. A sentence or list answer needs its sentences (items) in the evidence and
    the best of them to meet the same support. Only the answer's own claim is judged: the
    conflict note ("(The sources disagree...)") that may follow it is not part of it. A
    claim that is Markdown, a label line, a pasted document or a bare number whose
    sentence gives a unit is never CORRECT. Negative labels carry a suggestion and the
    names to search for (`Reflection.leads`).
    """
    shape = analyze_question(question)
    documents = unique_documents(evidence)
    answer = without_note(answer).strip()
    key = normalize_answer(answer)
    if not key or answer.startswith(ABSTENTION):
        return _negative(
            "INCORRECT",
            "No answer was found in the evidence held.",
            suggest_search(shape, Evidence(documents) if documents else None),
        )
    if not documents:
        return _negative(
            "INCORRECT", "No evidence supports the answer.", suggest_search(shape, None)
        )
    held = Evidence(documents)
    unfit = malformed(answer) or title_line(answer, documents)
    if unfit:
        return _negative(
            "INCORRECT", f"The answer {unfit}, not a statement.", suggest_search(shape, held)
        )
    weights = QuestionWeights(shape, held)
    ranked = rank_sentences(shape, held, weights)
    if shape.kind in ("choice", "yesno"):
        return reflect_on_subjects(shape, held, key, weights, ranked)
    polarity = yes_no_word(key)
    if polarity is not None:  # "No." or "No. <the deciding sentence>" to an advice question
        return _reflect_on_yes_no(shape, held, weights, ranked, polarity, answer)
    if shape.form == "list" or not is_span_claim(answer):
        # Sentences are judged as quoted sentences, whatever the question asked for: a span
        # question is answered with whole sentences when no span of its type is sure.
        return reflect_on_quotes(shape, held, weights, ranked, answer)
    answer_terms = term_set(answer)
    containing = [
        s
        for s in ranked
        if key in normalize_answer(s.sentence.text)
        or (answer_terms and answer_terms <= s.sentence.terms)
    ]
    if not containing:
        return _negative(
            "INCORRECT", f"No evidence sentence contains '{answer}'.", suggest_search(shape, held)
        )
    # The answer's own sentence (and the bridge sentence leading to it) must name what
    # the question asks about; of the sentences holding the answer, take the one that
    # leaves the fewest names, titles and years of the question unaccounted for.
    checked = [(s, missing_for(shape, held, s)) for s in containing[: PARAMS.reflect_sentences]]
    best, missing = min(checked, key=lambda pair: len(pair[1]))
    # Question terms a sentence naming the answer's document covers count too: that
    # sentence is how the question reaches the answer.
    support = weights.share(best.covered | bridged_terms(held, best))
    if not missing and is_settled(shape, held, weights, answer, best):
        # The standard `think` answers by: a typed answer at the end of a held chain.
        support = max(support, PARAMS.answer_support)
    where = held.titles[best.sentence.doc] or held.ids[best.sentence.doc]
    if not missing and answer_is_bridge(shape, held, answer, best):
        rest = " ".join(unresolved_words(shape, best.covered | term_set(answer)))
        return _negative(
            "PARTIALLY CORRECT",
            f"'{answer}' is the entity the question describes through a relative clause, "
            "not what it asks about it; nothing held is about it.",
            Suggestion(f"Search for '{answer}' {rest}.".replace(" .", "."), (answer,)),
        )
    doubt = answer_doubt(shape, held, weights, answer, best)
    if support >= PARAMS.answer_support and not missing and doubt:
        return _negative(
            "PARTIALLY CORRECT",
            f"'{answer}' appears in '{where}', but {doubt}.",
            suggest_search(shape, held, best.covered),
        )
    if support >= PARAMS.answer_support and not missing:
        return Reflection(
            label="CORRECT",
            explanation=f"'{answer}' appears in '{where}', in evidence covering "
            f"{support:.0%} of the question's key terms and naming all it asks about.",
        )
    if missing:
        return _negative(
            negative_label(support),
            f"'{answer}' appears in '{where}', but the evidence behind it does not mention "
            + " or ".join(f"'{m}'" for m in missing)
            + ".",
            suggest_missing(shape, held, missing),
        )
    unresolved = unresolved_words(shape, best.covered)
    return _negative(
        negative_label(support),
        f"'{answer}' appears in '{where}', but that evidence covers only {support:.0%} of the "
        f"question's key terms (missing: {', '.join(unresolved) or '-'}).",
        suggest_search(shape, held, best.covered),
    )


def answer_doubt(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    answer: str,
    scored: ScoredSentence,
) -> str:
    """Why a well-supported answer is still doubtful ("" when there is no reason).

    Support counts the names the question gives, which any sentence about its subject
    shares; the answer must also be of the asked type (a name for "who", not a common word
    capitalised at a sentence start or a bare number), and its own sentence must state some
    of the question's relation words ("formed", "executive producer", "voted").
    """
    if not fits_type(shape, answer):
        return f"it is not a {shape.answer_type}, which the question asks for"
    link_terms = scored.link.terms if scored.link is not None else frozenset()
    named = bool(shape.entities)  # a named subject's sentence need not name the category
    if (
        shape.focus
        and not named
        and not (scored.sentence.terms | link_terms) & term_set(shape.focus)
    ):
        return f"its sentence never names the {shape.focus} the question asks for"
    word = answer.strip()
    if shape.answer_type == "name" and (
        re.fullmatch(r"[\d,.\s]+", word)
        or (word.isalpha() and lower_case_in(evidence, word.lower()))
    ):
        return "it is a common word or a bare number, not the name the question asks for"
    if word.isalpha() and word[:1].isupper() and lower_case_in(evidence, word.lower()):
        return "it is a common word capitalised at a sentence start, not an answer"
    unit = unit_after(word, scored.sentence.text)
    if unit:
        return f"its sentence gives it with a unit ('{word} {unit}'), which the answer drops"
    # Counted, not idf-weighted: the relation word the answer's sentence shares ("victories")
    # is often in every held document, which gives it almost no idf weight.
    names = frozenset().union(*(term_set(c) for c in question_constraints(shape.text)))
    relation = [t for t in weights.weights if t not in names]
    stated = sum(1 for t in relation if t in scored.sentence.terms)
    if relation and stated == 0:
        return "its sentence states none of what the question asks about its subject"
    return ""


# Markdown a reader would see as syntax: a heading marker, bold or a table rule.
_MARKDOWN = re.compile(r"(?:^|\s)#{1,6}\s|\*\*|^\s*[-*]\s|\|\s*-{3}")
# "Reviewed: 2025-02-11", "Patient: Aurelio Brandt": a label and its value, not a statement.
_LABEL_LINE = re.compile(r"^[A-Z][\w' -]{0,30}:\s*\S")
_UNIT = (
    r"(?:mg|micrograms?|mcg|g|kg|ml|l|mmol/l|micromol/l|mmhg|mm|cm|m|km|metres?|meters?|"
    r"miles?|mi|ft|feet|hectares?|%|percent|per cent|units?|hours?|days?|weeks?|months?|"
    r"years?|minutes?|times?|tablets?|doses?|locks?|students?|people|inhabitants|residents)"
)
MAX_CLAIM_SENTENCES = 3
MAX_CLAIM_WORDS = 100


def malformed(claim: str) -> str:
    """Why `claim` cannot be an answer ("" when it can): syntax, a label line, a pasted text."""
    if _MARKDOWN.search(claim):
        return "holds Markdown syntax"
    if _LABEL_LINE.match(claim) and len(claim.split(":", 1)[1].split()) <= 4:
        return "is a label line"
    if len(split_sentences(claim)) > MAX_CLAIM_SENTENCES or len(claim.split()) > MAX_CLAIM_WORDS:
        return "pastes a document"
    return ""


def title_line(claim: str, documents: Sequence[Document]) -> str:
    """Why `claim` is a document's title or heading line rather than a statement ("" if not).

    A text file's first line is its title ("Tessaly Cross" then the paragraph); a claim
    opening with that line, or made of a heading's words alone, read the layout, not the
    text.
    """
    words = claim.split()
    for document in documents:
        lines = [line.strip().lstrip("#").strip() for line in document.page_content.splitlines()]
        first = next((line for line in lines if line), "")
        if first and len(words) > len(first.split()) and claim.startswith(first + " "):
            return "opens with a document's title line"
        headings = [
            line.strip().lstrip("#").strip()
            for line in document.page_content.splitlines()
            if line.strip().startswith("#")
        ]
        body = "\n".join(
            line for line in document.page_content.splitlines() if not line.strip().startswith("#")
        )
        if (
            len(words) <= 3
            and any(h.split()[: len(words)] == words for h in headings if h)
            and claim not in body
        ):
            return "is the start of a heading"
    return ""


def unit_after(answer: str, sentence: str) -> str:
    """The unit `sentence` gives right after the bare number `answer` ("" if none or a year).

    "6" read out of "no more than 6 mg" drops the unit; "1132" as a year needs none.
    """
    number = answer.strip()
    if not re.fullmatch(r"\d[\d,.]*", number) or is_year(number):
        return ""
    range_tail = r"(?:\s*(?:-|\u2013|to|and)\s*\d[\d,.]*)?"
    pattern = rf"(?<![\w.,]){re.escape(number)}{range_tail}\s*({_UNIT})(?![\w])"
    match = re.search(pattern, sentence, flags=re.IGNORECASE)
    return match.group(1) if match else ""


def lower_case_in(evidence: Evidence, word: str) -> bool:
    """Whether `word` occurs in lower case in the evidence (a common word, not a name)."""
    pattern = re.compile(rf"\b{re.escape(word)}\b")
    return any(pattern.search(d.page_content) for d in evidence.docs)


class Suggestion(NamedTuple):
    """How to improve an answer: a sentence for people and prompts, and the names to search."""

    text: str
    leads: tuple[str, ...] = ()


def suggest_search(
    shape: QuestionShape, evidence: Evidence | None, covered: frozenset[str] = frozenset()
) -> Suggestion:
    """A search for what the question still lacks: a compared side, a bridge, unresolved words."""
    missing_names = [
        e for e in compared_names(shape) if evidence is None or not evidence.has_document(e)
    ]
    if missing_names:
        return Suggestion(f"Search for '{missing_names[0]}'.", (missing_names[0],))
    if evidence is not None:
        ranked = rank_sentences(shape, evidence, QuestionWeights(shape, evidence))
        gap = bridge_gap(shape, evidence, ranked)
        if gap is not None:
            rest = " ".join(unresolved_words(shape, gap[1]))
            return Suggestion(f"Search for '{gap[0]}' {rest}.".replace(" .", "."), (gap[0],))
    rest_words = unresolved_words(shape, covered)
    if rest_words:
        return Suggestion("Search for " + anchored(shape, rest_words) + ".")
    return Suggestion("Search again with the question.")


def suggest_missing(shape: QuestionShape, evidence: Evidence, missing: Sequence[str]) -> Suggestion:
    """A search for what the answer's evidence lacks, naming the entity to look up."""
    compared = [m for m in missing if m in compared_names(shape)]
    if compared:
        return Suggestion(f"Search for '{compared[0]}'.", (compared[0],))
    ranked = rank_sentences(shape, evidence, QuestionWeights(shape, evidence))
    gap = bridge_gap(shape, evidence, ranked)
    extra = " ".join(m for m in missing if term_set(m))
    if gap is not None:
        return Suggestion(f"Search for '{gap[0]}' {extra}.".replace(" .", "."), (gap[0],))
    names = [m for m in missing if not is_year(m)]
    if names:
        rest = " ".join(m for m in missing if m != names[0])
        text = f"Search for '{names[0]}' {anchored(shape, [rest]) if rest else ''}".strip() + "."
        return Suggestion(text, (names[0],))
    return Suggestion("Search for " + anchored(shape, list(missing)) + ".")


def negative_label(support: float) -> ReflectionLabel:
    """PARTIALLY CORRECT from `PARAMS.weak_support` of the question covered up, else INCORRECT."""
    return "PARTIALLY CORRECT" if support >= PARAMS.weak_support else "INCORRECT"


def _negative(label: ReflectionLabel, explanation: str, suggestion: Suggestion) -> Reflection:
    return Reflection(
        label=label,
        explanation=explanation,
        suggestion=suggestion.text,
        leads=list(suggestion.leads),
    )


def reflect_on_subjects(
    shape: QuestionShape,
    evidence: Evidence,
    key: str,
    weights: QuestionWeights,
    ranked: Sequence[ScoredSentence],
) -> Reflection:
    """A choice or yes/no answer: CORRECT when the evidence settles it as answered.

    A choice must be one of the options, with every named option documented (an option that
    is not a name, "in pregnancy", needs only to be mentioned). A yes/no answer must be the
    one its deciding sentence gives: "no" needs a negation or, for a question asking
    whether something is safe or allowed, a stated harm; "yes" needs neither.
    """
    subjects = subjects_of(shape)
    if shape.kind == "choice":
        chosen = [c for c in subjects if _is_option(key, c, subjects)]
        if not chosen:
            return Reflection(
                label="INCORRECT",
                explanation=f"'{key}' is not one of the options the question names.",
                suggestion=f"Choose between {' and '.join(subjects)}.",
            )
    polarity = yes_no_word(key)
    if shape.kind == "yesno" and polarity is None:
        return Reflection(
            label="PARTIALLY CORRECT",
            explanation="The question asks for yes or no.",
            suggestion="Answer yes or no.",
        )
    covered = [s for s in subjects if _documented(evidence, s)]
    missing = [s for s in subjects if s not in covered]
    if missing:
        label: ReflectionLabel = "PARTIALLY CORRECT" if covered else "INCORRECT"
        return _negative(
            label,
            "The evidence does not describe " + " and ".join(f"'{m}'" for m in missing) + ".",
            Suggestion(f"Search for '{missing[0]}'.", (missing[0],)),
        )
    if shape.kind == "choice" or (shape.same and len(subjects) == 2):
        if shape.kind == "yesno" and not _same_agrees(shape, evidence, polarity == "yes"):
            return _negative(
                "PARTIALLY CORRECT",
                f"The documents of {' and '.join(subjects)} do not bear out '{key}'.",
                suggest_search(shape, evidence),
            )
        return Reflection(
            label="CORRECT",
            explanation="The evidence describes " + " and ".join(subjects) + ".",
        )
    return _reflect_on_yes_no(shape, evidence, weights, ranked, polarity or "")


# Words that make a deciding sentence say "no"; harms say "no" only to "is it safe / can I".
_NEGATION = re.compile(
    r"\b(?:not|never|no|cannot|can't|don't|doesn't|avoid(?:ed)?|must not|should not|"
    r"without|neither|nor|ended|stopped|closed)\b|n't\b",
    re.IGNORECASE,
)
_HARM = re.compile(
    r"\b(?:risk|toxic|toxicity|danger(?:ous|ously)?|harm(?:ful)?|severe|fatal|bleeding|"
    r"raise|raises|increase|increases|contraindicated|interact(?:s|ion)?)\b",
    re.IGNORECASE,
)
_PERMISSION = re.compile(
    r"^(?:can|could|may|should|is it (?:safe|ok|okay|all right)|are .{0,40}safe)\b",
    re.IGNORECASE,
)


def is_span_claim(claim: str) -> bool:
    """A short span ("1,084 metres"), not sentences: at most eight words, no full stop."""
    return len(claim.split()) <= 8 and not re.search(r"[.!?]\s*$", claim.strip())


def yes_no_word(key: str) -> str | None:
    """The answer's opening "yes" or "no" (of the normalized answer), else None."""
    first = key.split()[0] if key.split() else ""
    return first if first in ("yes", "no") else None


def _reflect_on_yes_no(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    ranked: Sequence[ScoredSentence],
    polarity: str,
    claim: str = "",
) -> Reflection:
    """A yes/no answer about one matter: do the held sentences on it decide it so?

    "no" needs a sentence on the matter that refuses or warns (the one the answer quotes
    after its "no", when it is held); "yes" needs a sentence meeting most of the question
    and no sentence on the matter that refuses or warns. Support counts only question words
    the evidence uses at all ("safe" rarely is).
    """

    def support(scored: ScoredSentence) -> float:
        return attainable_share(evidence, weights, scored.covered)

    # A sentence is on the matter when it covers enough of the question, including its
    # rarest word among those the evidence uses (the drug or place asked about).
    telling = max(
        (t for t in weights.weights if t in evidence.all_terms),
        key=lambda t: weights.weights[t],
        default=None,
    )
    on_matter = [
        s
        for s in ranked
        if support(s) >= PARAMS.weak_support
        and (telling is None or telling in s.covered or telling in s.sentence.terms)
    ]
    refusing = [s for s in on_matter if _says_no(shape, s.sentence.text)]
    quoted = " ".join(" ".join(claim.split()[1:]).split())
    cited = [s for s in ranked if quoted and " ".join(s.sentence.text.split()) in quoted]
    strongest_refusal = max(refusing, key=support, default=None)
    if polarity == "no":
        deciding = cited[0] if cited else strongest_refusal
        decided = deciding is not None and deciding in refusing
    else:
        deciding = max(on_matter, key=support, default=None)
        decided = deciding is not None and support(deciding) >= PARAMS.answer_support
        if decided and strongest_refusal is not None:
            deciding, decided = strongest_refusal, False
    if deciding is None:
        best = max(ranked, key=support, default=None)
        share = support(best) if best is not None else 0.0
        return _negative(
            negative_label(share),
            f"No held sentence on the question ({share:.0%} of it at best) decides '{polarity}'.",
            suggest_search(shape, evidence, best.covered if best else frozenset()),
        )
    text = deciding.sentence.text
    where = evidence.titles[deciding.sentence.doc] or evidence.ids[deciding.sentence.doc]
    if decided:
        return Reflection(label="CORRECT", explanation=f"'{where}' decides it: \"{text}\"")
    return _negative(
        "PARTIALLY CORRECT",
        f"The sentence in '{where}' that decides it does not say '{polarity}': \"{text}\"",
        suggest_search(shape, evidence, deciding.covered),
    )


def _says_no(shape: QuestionShape, sentence: str) -> bool:
    """Whether `sentence` answers the question "no": a negation, or a harm to "is it safe"."""
    says = bool(_NEGATION.search(sentence)) or (
        bool(_PERMISSION.search(shape.text)) and bool(_HARM.search(sentence))
    )
    return says != shape.negated


def _is_option(key: str, option: str, options: Sequence[str]) -> bool:
    """Whether the answer names `option` (and no other): "that of fluoxetine" -> fluoxetine."""
    named = [o for o in options if normalize_answer(o) and normalize_answer(o) in key]
    wanted = normalize_answer(option)
    return bool(wanted) and (key == wanted or (wanted in key and len(named) == 1))


def _documented(evidence: Evidence, subject: str) -> bool:
    """A name needs a document of its own; an option that is no name needs a mention."""
    if evidence.has_document(subject):
        return True
    name = re.search(r"[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*", subject)
    if name is not None:  # "the enzyme effect of St John's wort": St John's wort's document
        return name.group(0) != subject and evidence.has_document(name.group(0))
    terms = term_set(subject)
    return bool(terms) and any(terms <= s.terms for s in evidence.sentences)


def _same_agrees(shape: QuestionShape, evidence: Evidence, same: bool) -> bool:
    """Whether the subjects' documents share a name in their property sentences as claimed.

    "Were A and B born in the same town?": both birth sentences naming Marrowick says yes.
    Without a shared name the evidence is left to the answerer's own comparison (True).
    """
    property_terms = term_set(shape.property_text) - term_set(" ".join(subjects_of(shape)))
    names: list[set[str]] = []
    for subject in subjects_of(shape):
        about = [s for s in evidence.sentences if term_set(subject) & s.terms]
        stating = [s for s in about if property_terms & s.terms] or about
        names.append(
            {
                m.lower()
                for sentence in stating
                for m in re.findall(r"\b[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*", sentence.text)
                if not term_set(m) & term_set(subject)
            }
        )
    shared = bool(names[0] & names[1]) if len(names) == 2 else False
    return True if same else not shared


def reflect_on_quotes(
    shape: QuestionShape,
    held: Evidence,
    weights: QuestionWeights,
    ranked: Sequence[ScoredSentence],
    answer: str,
) -> Reflection:
    """A sentence or list answer: its sentences (items) must be evidence meeting the question."""
    quoted = {" ".join(part.split()) for part in split_sentences(answer)}
    holding = [s for s in ranked if " ".join(s.sentence.text.split()) in quoted]
    complete = len({s.sentence.text for s in holding}) >= len(quoted)
    if shape.form == "list" and not complete:
        # Listed items: each must be an item some evidence sentence enumerates, not merely a
        # word found somewhere in it.
        question_terms = term_set(shape.text)
        items = [i.strip() for i in re.split(r",\s*|\s+and\s+", answer.rstrip(".")) if i.strip()]
        holding = [s for s in ranked if _lists_any(s, items, question_terms)]
        complete = bool(items) and all(
            any(_lists_any(s, [item], question_terms) for s in holding) for item in items
        )
    if not holding or not complete:
        return _negative(
            "INCORRECT",
            "The answer is not made of sentences or items of the evidence held.",
            suggest_search(shape, held),
        )
    checked = [(s, missing_for(shape, held, s)) for s in holding[: PARAMS.reflect_sentences]]
    best, missing = min(checked, key=lambda pair: (len(pair[1]), -pair[0].score))
    covered = frozenset().union(*(s.covered for s in holding))
    # Question words no held document uses (a synonym, a typo) cannot be quoted by any
    # sentence; support counts the share of what the evidence could cover.
    support = attainable_share(held, weights, covered | bridged_terms(held, best))
    where = held.titles[best.sentence.doc] or held.ids[best.sentence.doc]
    if support >= PARAMS.answer_support and not missing:
        return Reflection(
            label="CORRECT",
            explanation=f"The answer quotes '{where}', evidence covering {support:.0%} of the "
            "question's key terms and naming all it asks about.",
        )
    label = negative_label(support)
    if missing:
        return _negative(
            label,
            f"The answer quotes '{where}', which does not mention "
            + " or ".join(f"'{m}'" for m in missing)
            + ".",
            suggest_missing(shape, held, missing),
        )
    return _negative(
        label,
        f"The answer quotes '{where}', but it covers only {support:.0%} of the question's "
        "key terms.",
        suggest_search(shape, held, covered),
    )


def _lists_any(
    scored: ScoredSentence, items: Sequence[str], question_terms: frozenset[str]
) -> bool:
    listed = {normalize_answer(i) for i in listed_items(scored.sentence.text, question_terms)}
    return any(normalize_answer(item) in listed for item in items)

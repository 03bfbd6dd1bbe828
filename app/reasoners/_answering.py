"""Answering for the extractive reasoner: the policy choosing the answer form, checks, calibration.

The forms themselves live beside it: short spans and sentences (`_span_forms`), lists
(`_listing`), two-document answers (`_two_documents`), comparisons (`_comparisons`) and
yes/no (`_yes_no`).
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.documents import Document

from prefrag.documents import doc_id, unique_documents
from prefrag.reasoners._bridges import through_described
from prefrag.reasoners._checks import (
    absent_attribute,
    asked_clause,
    attribute_head,
    common_word_span,
    figure_missing,
    file_name_title,
    other_dimension,
    span_out_of_sentence,
    uncovered,
    unsaid_relation,
)
from prefrag.reasoners._comparisons import choice_answer, choose
from prefrag.reasoners._confidence import ConfidenceModel, active_model, answer_features
from prefrag.reasoners._conflicts import settle
from prefrag.reasoners._evidence import (
    Evidence,
    QuestionWeights,
    ScoredSentence,
    answer_candidates,
    rank_sentences,
)
from prefrag.reasoners._listing import completed_list, listing_answer
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._policy import (
    FROM,
    Decline,
    Embed,
    Judge,
    Judged,
    defers,
    plain,
)
from prefrag.reasoners._records import held_tables
from prefrag.reasoners._shapes import (
    duration_span,
    list_answer,
    sentence_answer,
)
from prefrag.reasoners._span_forms import (
    best_sentences,
    in_asked_form,
    in_asked_type,
    person_span,
    sentences_answer,
    span_answer,
    span_of_kind,
    unambiguous_span,
    with_short_span,
)
from prefrag.reasoners._spans import asked_thing
from prefrag.reasoners._subject_links import (
    SubjectLink,
    linked_confidence,
    linked_subject,
    situation_link,
    with_links,
)
from prefrag.reasoners._subjects import subject_sentences, unaddressed_aspect
from prefrag.reasoners._support import (
    observed_documents,
    subjects_of,
    support_ids,
)
from prefrag.reasoners._text import (
    QuestionShape,
    analyze_question,
    normalize_answer,
    split_sentences,
    unique,
)
from prefrag.reasoners._two_documents import (
    linked_subjects,
    pair_answer,
    pair_span,
    subject_and_topic,
    through_record,
    two_documents,
)
from prefrag.reasoners._yes_no import yes_no, yes_no_answer
from prefrag.reasoners.base import (
    AnswerDraft,
    Feedback,
    ScratchpadStep,
)


def answer_question(
    question: str,
    scratchpad: Sequence[ScratchpadStep],
    evidence: Sequence[Document],
    *,
    feedback: Feedback | None = None,
    embed: Embed | None = None,
    calibrated: bool = True,
) -> AnswerDraft:
    """The answer in the form its confidence allows, citing its sources, or an abstention.

    Evidence sentences are judged for the question (`_policy.Judge`); the answer stands on
    the most confident ones: a short span when asked for and sure enough, else whole
    sentences, else an abstention saying why. When held documents on one subject disagree,
    the superseded ones are set aside first (`_conflicts.settle`) and the answer says which
    document it follows. `embed` gives MiniLM vectors; without it the lexical overlap
    stands in for the similarity.
    """
    model = active_model() if calibrated else None
    draft, features = draft_with_features(
        question,
        scratchpad,
        evidence,
        feedback=feedback,
        embed=embed,
        floor=PARAMS.answer_confidence if calibrated and model is None else PARAMS.candidate_floor,
    )
    if model is None and calibrated:
        return sure_short_answer(draft)
    if model is None or features is None:
        return draft
    return calibrate(draft, features, model, scratchpad)


def sure_short_answer(draft: AnswerDraft) -> AnswerDraft:
    """The draft, or the sentence a bare short answer stands on when that is not sure enough.

    A short answer given alone (a name, "Marlow Quay"; a figure or date, "40 mg a day",
    "1974") shows nothing a reader could check, so it needs its sentence's hand-weighted
    confidence at `PARAMS.alone_confidence`. Below it the answer is the sentence it was
    read from, cited, and the span stays the short answer.
    """
    short = draft.short_answer.strip()
    confidence = draft.confidence
    if (
        draft.abstained
        or not short
        or draft.answer.strip() != short
        or confidence is None
        or confidence >= PARAMS.alone_confidence
    ):
        return draft
    sentence = span_sentence(draft)
    return draft.model_copy(update={"answer": sentence}) if sentence else draft


def calibrate(
    draft: AnswerDraft,
    features: dict[str, float],
    model: ConfidenceModel,
    scratchpad: Sequence[ScratchpadStep],
) -> AnswerDraft:
    """The draft with the fitted confidence: kept, shown with its sentence, or abstained.

    Below the model's answer threshold for the draft's form (one for answers holding a short
    answer - a span, a yes/no, an option - one for sentence answers) the reasoner abstains
    saying why (with what lowers the confidence most, `ConfidenceModel.most_against`), with
    the sentence the draft stood on as the closest evidence (never the span, verdict or
    option it would have answered); a bare span below the span threshold comes with the
    sentence it was read from (the span stays the short answer).
    """
    probability = round(model.probability(features), 4)
    threshold = model.threshold(draft)
    if probability < threshold:
        against = model.most_against(features)
        return abstention(
            scratchpad,
            f"no retrieved sentence says it surely enough (confidence {probability:.2f}, below"
            f" {threshold:.2f}{f'; most against it: {against}' if against else ''}); the"
            f" closest evidence is '{_quote(closest_evidence(draft))}'",
            probability,
        )
    update: dict[str, object] = {"confidence": probability}
    sentence = span_sentence(draft)
    if draft.short_answer and sentence is not None and probability < model.span_threshold:
        update["answer"] = sentence
    return draft.model_copy(update=update)


def span_sentence(draft: AnswerDraft) -> str | None:
    """The sentence a short span was read from (its "From: ..." rationale), as plain text."""
    if not draft.rationale.startswith(FROM):
        return None
    return plain(draft.rationale.removeprefix(FROM))


def closest_evidence(draft: AnswerDraft) -> str:
    """The first sentence a draft stands on, without the span, verdict or option it answers.

    A span's sentence is its rationale ("From: ..."); a yes/no or a comparison answer
    ("No. <sentence>") loses its leading verdict; any other answer is its sentences.
    """
    span_from = span_sentence(draft)
    if span_from is not None:
        text = span_from
    else:
        text = draft.answer
        short = draft.short_answer.strip()
        if short and text.lower().startswith(short.lower()):
            # A list answer is its items (its short answer): they are its evidence.
            text = text[len(short) :].lstrip(" .:;,") or text
    sentences = split_sentences(text)
    return sentences[0] if sentences else text


def draft_with_features(
    question: str,
    scratchpad: Sequence[ScratchpadStep],
    evidence: Sequence[Document],
    *,
    feedback: Feedback | None = None,
    embed: Embed | None = None,
    floor: float = 0.0,
) -> tuple[AnswerDraft, dict[str, float] | None]:
    """The policy's best answer (sentences below `floor` are not used) and its features.

    The features (`_confidence.answer_features`) are None for an abstention. A question
    about a thing it only describes ("the engineer of X") that stops at that thing is
    asked again of the thing by name (`_bridges.through_described`).
    """
    drafted = one_hop(question, scratchpad, evidence, feedback=feedback, embed=embed, floor=floor)
    hops: dict[str, tuple[AnswerDraft, dict[str, float] | None]] = {}

    def hop(asked: str) -> AnswerDraft:
        if asked not in hops:
            hops[asked] = one_hop(
                asked, scratchpad, evidence, feedback=feedback, embed=embed, floor=floor
            )
        return hops[asked][0]

    def identify(asked: str) -> AnswerDraft:
        # The first hop only names the described thing: a lower floor (never a higher one).
        lower = min(floor, PARAMS.first_hop_confidence)
        return one_hop(asked, scratchpad, evidence, feedback=feedback, embed=embed, floor=lower)[0]

    held = unique_documents([*evidence, *observed_documents(scratchpad)])

    def titled(draft: AnswerDraft, name: str) -> bool:
        # Whether the draft cites a note titled by the name (the thing's own note); a
        # file-name title ("halvard-fell") counts, spaces and hyphens aside.
        key = normalize_answer(name).replace(" ", "")
        return any(
            key in normalize_answer(str(doc.metadata.get("title", ""))).replace(" ", "")
            for doc in held
            if doc.id in draft.cited_ids
        )

    def titles(draft: AnswerDraft) -> list[str]:
        return [str(doc.metadata.get("title") or "") for doc in held if doc.id in draft.cited_ids]

    def abstain(reason: str) -> AnswerDraft:
        return abstention(scratchpad, reason)

    resolved, asked = through_described(
        question, drafted[0], hop, titled, identify, titles, lambda: held_tables(held), abstain
    )
    if not asked:
        return (resolved, None) if resolved.abstained and not drafted[0].abstained else drafted
    features = hops[asked][1]
    if features is not None and held:
        # The answer shown cites the note that named the thing as well as the thing's own:
        # whether it cites the note the retrieval ranked first is read from what it shows.
        features = {**features, "cited_first": float(doc_id(held[0]) in resolved.cited_ids)}
    return resolved, features


def one_hop(
    question: str,
    scratchpad: Sequence[ScratchpadStep],
    evidence: Sequence[Document],
    *,
    feedback: Feedback | None = None,
    embed: Embed | None = None,
    floor: float = 0.0,
) -> tuple[AnswerDraft, dict[str, float] | None]:
    """`draft_with_features` for the question as written (no second hop)."""
    shape = analyze_question(question)
    documents = unique_documents([*evidence, *observed_documents(scratchpad)])
    if not documents:
        return abstention(scratchpad, "nothing relevant was found"), None
    settled = settle(shape, documents)
    held = Evidence(settled.documents)
    weights = QuestionWeights(shape, held)
    ranked = rank_sentences(shape, held, weights)
    if shape.subject:
        # A question naming its subject is answered from a document about that subject
        # or not at all: another subject's sentences would be a confident wrong answer.
        ranked = subject_sentences(shape, held, weights, ranked)
        if not ranked:
            return abstention(scratchpad, f"nothing retrieved is about {shape.subject}"), None
        aspect = unaddressed_aspect(shape, held)
        if aspect is not None:
            # A page about the subject that never says what is asked (how it is inherited,
            # how many it affects) would be answered with its best unrelated sentences.
            reason = f"nothing retrieved about {shape.subject} says {aspect}"
            return abstention(scratchpad, reason), None
    judge = Judge(shape, held, weights, embed, attribute_head)
    judged = judge.rank(ranked)
    if not judged:
        reason = "no retrieved sentence is about what the question asks"
        return abstention(scratchpad, reason), None
    outcome = policy_answer(
        shape, held, weights, ranked, judged, judge, rejected_answers(feedback), floor
    )
    if isinstance(outcome, Decline):
        return abstention(scratchpad, outcome.reason, outcome.closest), None
    draft = outcome.model_copy(update={"answer": plain(outcome.answer)})
    if shape.form == "span" and shape.kind not in ("choice", "yesno"):
        draft = in_asked_form(shape, held, draft)
        sentences = best_sentences(held, weights, ranked, judged, floor)
        typed = in_asked_type(shape, held, draft, sentences)
        if typed is None:
            # A figure, date or contact is asked and neither the span nor the sentences
            # hold one of its kind.
            reason = f"no retrieved sentence gives the {asked_thing(shape)} it asks for"
            return abstention(scratchpad, reason, judged[0].confidence), None
        draft = typed
    links: list[SubjectLink] = []
    held_up = evidence_check(judge, judged, draft, held, links)
    if isinstance(held_up, Decline):
        return abstention(scratchpad, held_up.reason, held_up.closest), None
    if links:
        # Reached through a first hop: the answer is as sure as its sentence read through it.
        held_up = linked_confidence(judge, judged, held_up, held, links)
    features = answer_features(judge, judged, held_up, held)
    # Whether a first hop linked the question's subject to the answer (not in FEATURES:
    # offered to the gate's feature selection).
    features["subject_link"] = float(bool(links))
    return settled.explain(held_up), features


def evidence_check(
    judge: Judge,
    judged: list[Judged],
    draft: AnswerDraft,
    evidence: Evidence,
    links: list[SubjectLink] | None = None,
) -> AnswerDraft | Decline:
    """The draft if what it stands on says what is asked; else its sentence, or why not.

    A first hop linking a subject the answer never names to what it is about
    (`_subject_links`) is appended to `links` when given.

    General checks of the evidence, not of the question's wording (`_checks`): a short
    answer that is a common word capitalised at a sentence start ("Start") is no name, so
    the sentence it was read from answers instead; an answer whose sentences, cited titles
    and lead sentences never mention a name the question gives (both subjects of a yes/no,
    each option of a comparison) is about something else, and the reasoner abstains.
    """
    name = file_name_title(draft, evidence)
    if name:
        # A file-name title read out as the answer: the name as its note writes it.
        short = draft.short_answer.strip()
        answer = name if draft.answer.strip() == short else draft.answer.replace(short, name)
        draft = draft.model_copy(update={"answer": answer, "short_answer": name})
    if name == "" or common_word_span(draft, evidence) or span_out_of_sentence(draft):
        sentence = span_sentence(draft)
        if sentence is None:
            return Decline(f"'{draft.short_answer}' is not a name", 0.0)
        draft = draft.model_copy(update={"answer": sentence, "short_answer": ""})
    if figure_missing(judge, draft):
        return Decline("no retrieved sentence gives the figure it asks for", 0.0)
    # A subject the answer's sentences never name may be linked to them by a first hop.
    missing, draft, found = linked_subject(judge, judged, draft, evidence)
    if links is not None:
        links.extend(found)
    if missing:
        # Like "nothing retrieved is about X": the abstention is sure (confidence 1).
        return Decline(f"the sentences that say what is asked are not about {missing}", 0.0)
    unsaid = unsaid_relation(judge, judged, draft, evidence)
    if unsaid:
        # The subject's neighbouring fact ("an address" for "an email address").
        return Decline(
            f"the closest sentence, '{_quote(closest_evidence(draft))}', does not say '{unsaid}'",
            0.0,
        )
    # Through a first hop, the situation the question tells (the subject's age, the log's
    # month) is the link's to match; the answer covers what the question asks.
    asked = asked_clause(judge.shape.text) if found else None
    qualifier = uncovered(judge, draft, evidence, asked)
    if qualifier and not found:
        # A qualifier of the situation told ("the man in the March log"), not of what is
        # asked, may be said by the first hop linking that situation to the answer.
        asking = asked_clause(judge.shape.text)
        link = situation_link(judge, draft, evidence, qualifier)
        if link is not None and not uncovered(judge, draft, evidence, asking):
            draft, found, asked, qualifier = with_links(draft, [link], evidence), [link], asking, ""
            if links is not None:
                links.append(link)
    sentence = span_sentence(draft)
    if qualifier and draft.short_answer.strip() and sentence is not None:
        # The span's clause is another age group's ("10 ml for adults; ..."): when the whole
        # sentence covers the asked age, the sentence answers instead.
        whole = draft.model_copy(update={"answer": sentence, "short_answer": ""})
        if not uncovered(judge, whole, evidence, asked):
            draft, qualifier = whole, ""
    if qualifier:
        # The attribute for a neighbouring case: the adult dose for a child, 2021 for 1880.
        return Decline(
            f"the closest sentence, '{_quote(closest_evidence(draft))}', does not cover"
            f" '{qualifier}'",
            0.0,
        )
    dimension = other_dimension(judge.shape.text, f"{draft.answer} {span_sentence(draft) or ''}")
    if dimension:
        # "How deep?" answered by how wide: a neighbouring measure of the same thing.
        return Decline(f"the closest figure is said to be '{dimension}', not what is asked", 0.0)
    absent = absent_attribute(judge, judged, draft, evidence)
    if absent:
        # The subject's documents never give the asked attribute (its half-life, its vicar).
        return Decline(f"the cited notes never say '{absent}'", 0.0)
    return draft


def policy_answer(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    ranked: list[ScoredSentence],
    judged: list[Judged],
    judge: Judge,
    rejected: frozenset[str] = frozenset(),
    floor: float = PARAMS.answer_confidence,
) -> AnswerDraft | Decline:
    """The answer the judged sentences allow, or why there is none.

    Sentences below `floor` (their hand-weighted confidence) do not answer. When the best
    sentence only describes a first hop (a log's record) and a sentence it leads to says
    what is asked (`through_record`), that sentence answers, citing the record's note too.
    """
    led = through_record(judge, judged, floor) if shape.kind != "yesno" else None
    if led is not None:
        answering = led[1]
        judged = [answering, *(j for j in judged if j is not answering)]
    drafted = _policy_answer(shape, evidence, weights, ranked, judged, judge, rejected, floor)
    if led is None or isinstance(drafted, Decline):
        return drafted
    cited = unique([*drafted.cited_ids, evidence.ids[led[0].scored.sentence.doc]])
    return drafted.model_copy(update={"cited_ids": cited})


def _policy_answer(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    ranked: list[ScoredSentence],
    judged: list[Judged],
    judge: Judge,
    rejected: frozenset[str],
    floor: float,
) -> AnswerDraft | Decline:
    """`policy_answer` with the judged sentences in the order they answer."""
    if shape.kind == "choice":
        return choice_answer(shape, evidence, weights, judged, judge, floor)
    if shape.kind == "yesno":
        return yes_no_answer(shape, evidence, weights, ranked, judged, floor)
    if defers(judged[0].scored.sentence.text):
        # The closest sentence says its document does not cover what is asked.
        best = judged[0]
        return Decline(
            f"the closest retrieved sentence says '{_quote(best.scored.sentence.text)}'",
            0.0,
        )
    confident = [j for j in judged if j.confidence >= floor and not defers(j.scored.sentence.text)]
    if shape.answer_type in ("number", "date") and shape.form == "span":
        if not any(j.fits for j in judged):
            kind = "number" if shape.answer_type == "number" else "date"
            return Decline(
                f"no retrieved sentence gives the {kind} it asks for", judged[0].confidence
            )
        confident = [j for j in confident if j.fits]
    bridged = (
        two_documents(judge, judged, floor)
        or subject_and_topic(judge, judged, floor)
        or linked_subjects(judge, judged, floor)
    )
    if bridged is not None and (not confident or bridged[2] > confident[0].confidence):
        pair = pair_answer(evidence, judged[0], *bridged)
        if shape.form == "span":
            span = pair_span(shape, evidence, pair, bridged, frozenset(judge.asked), rejected)
            if span is not None:
                return span
            return span_of_kind(shape, evidence, pair, [bridged[0], bridged[1], *judged], rejected)
        return pair
    if not confident:
        best = judged[0]
        return Decline(
            "no retrieved sentence says what is asked (the closest, "
            f"'{_quote(best.scored.sentence.text)}', has confidence {best.confidence:.2f})",
            best.confidence,
        )
    if shape.form == "span":
        span = span_answer(shape, evidence, ranked, judge, rejected, named_best(judge, confident))
        if span is None:
            span = unambiguous_span(shape, evidence, confident[0], frozenset(judge.asked), rejected)
        if span is None:
            span = person_span(shape, evidence, confident, frozenset(judge.asked), rejected)
        if span is not None:
            return span
    if shape.form == "list":
        listed = listing_answer(shape, evidence, confident)
        if listed is not None:
            return listed
    answer = sentences_answer(evidence, weights, ranked, confident)
    if shape.form != "span":
        answer = completed_list(evidence, confident, answer) or answer
    if shape.form == "span":
        answer = with_short_span(
            shape, evidence, answer, confident[0], frozenset(judge.asked), rejected
        )
        if not answer.short_answer:
            answer = span_of_kind(shape, evidence, answer, confident, rejected)
    return answer


def named_best(judge: Judge, confident: list[Judged]) -> float:
    """The best sentence's confidence when it names the question's names itself, else 0.

    Only such a sentence (or its title) is a yardstick for a span's sentence: one that
    borrows the names from elsewhere in its note may be about something else.
    """
    best = confident[0].scored.sentence
    own = best.terms | judge.evidence.title_terms[best.doc]
    return confident[0].confidence if judge.name_terms <= own else 0.0


def _quote(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def rejected_answers(feedback: Feedback | None) -> frozenset[str]:
    """The earlier answer an INCORRECT reflection rejected (normalised), to avoid repeating it."""
    if feedback is None or feedback.label != "INCORRECT":
        return frozenset()
    key = normalize_answer(feedback.answer)
    return frozenset({key}) if key else frozenset()


def draft_answer(
    shape: QuestionShape,
    evidence: Evidence,
    weights: QuestionWeights,
    ranked: list[ScoredSentence],
    rejected: frozenset[str] = frozenset(),
) -> tuple[AnswerDraft, float, ScoredSentence | None]:
    """The answer, its support and the sentence it came from.

    Support is the share of question weight the answer's evidence covers; the sentence
    is None for choice and yes/no answers.
    """
    if shape.kind in ("choice", "yesno"):
        subjects = subjects_of(shape)
        covered = bool(subjects) and all(evidence.has_document(s) for s in subjects)
        support = 1.0 if covered else PARAMS.weak_support
        if shape.kind == "choice":
            return (
                choose(shape, evidence, weights, Judge(shape, evidence, weights))[0],
                support,
                None,
            )
        return yes_no(shape, evidence, weights, ranked), support, None
    if shape.form == "sentences":
        return sentence_answer(evidence, weights, ranked)
    if shape.form == "list":
        listed = list_answer(shape, evidence, weights, ranked)
        return listed if listed is not None else sentence_answer(evidence, weights, ranked)
    candidates = answer_candidates(shape, evidence, ranked, exclude=rejected)
    if not candidates and rejected:
        # The rejected answer is still the only span of the expected type; a whole
        # sentence would be no better an answer.
        candidates = answer_candidates(shape, evidence, ranked)
    if candidates:
        best = candidates[0]
        text = best.text
        if shape.duration and best.kind == "number":
            text = duration_span(best.support.sentence.text, text)
        cited = support_ids(evidence, best.support)
        draft = AnswerDraft(
            answer=text, cited_ids=cited, rationale=f"{FROM}{best.support.sentence.text}"
        )
        return draft, weights.share(best.support.covered), best.support
    # No span of the expected type: the best sentence itself is the answer.
    draft, support, scored = sentence_answer(evidence, weights, ranked[:1])
    return draft, support, scored


ABSTENTION = "The sources I could reach do not answer this"


def abstention(
    scratchpad: Sequence[ScratchpadStep], reason: str, closest: float = 0.0
) -> AnswerDraft:
    """A plain 'cannot answer' with why: the web was down, or nothing relevant was found.

    Its confidence is that of the abstention: 1 minus the `closest` evidence sentence's.
    """
    notes = " ".join(step.note for step in scratchpad).lower()
    why = [reason]
    if "web search unavailable" in notes:
        why.insert(0, "the web search was unavailable")
    answer = f"{ABSTENTION}: {' and '.join(why)}."
    return AnswerDraft(
        answer=answer, abstained=True, rationale=answer, confidence=round(1.0 - closest, 4)
    )

"""The answer's confidence: a fitted logistic regression over features that generalise.

The policy (`_answering`) drafts the best answer the evidence allows; this module says how
likely that answer is right, and the reasoner abstains below a threshold. The features
describe the evidence the answer stands on, never the question's wording:

- `similarity`, `overlap`, `names`, `fits`: the best evidence sentence's MiniLM similarity,
  the share of the question's asked terms it (with its title and bridge) covers, the share
  of the names the question gives that its document holds, and whether it holds the asked
  answer type (`_policy.Judge`);
- `margin`: how far the best sentence's hand-weighted score leads the runner-up's;
- `doc_asked`: the share of asked terms the answer's cited documents hold anywhere, and
  `focus_cited`, whether they hold the heaviest ones (`heaviest`: a note on another
  service or thing than the one asked for is a near miss);
- `evidence_asked`, `evidence_names`: the shares of asked terms and of the question's
  names found anywhere in the held evidence - an asked attribute ("email", "blood
  pressure") or entity no document holds is what makes a question unanswerable;
- `joint`: the best single document's share of both (min of names and asked terms): the
  subject named in one note and the attribute in another is a near miss, not an answer;
- `agreeing_docs`: how many documents' best sentences come close to the best one;
- `hand`: the policy's own hand-weighted confidence of the chosen form;
- the answer's form (`span`, `pair`, `choice`) and its length (`answer_words`);
- `labels`: how many "Label:" markers ("Author:", "Reviewed:") the answer or its span's
  sentence holds - a metadata line is not a statement;
- `common_span`: a one-word span the evidence also writes in lower case ("People",
  "Check"): a sentence's first word, not a name (`_checks.common_word_span`, which the
  evidence checks also apply);
- `bridged`: the best sentence was reached through another document's sentence (a
  two-hop answer), and `title_span`: the short answer is a held document's title (the
  bridged document's own subject); `record_bridge`: reached through a first-hop record (a
  log's bullet naming what another note is about, `_record_links`) and citing both notes;
- `cited`, `typed`, `yesno`: how many documents the answer cites (a two-document answer
  is less often right), whether a name, figure or date is asked, whether it is a yes/no;
- `asks_figure`, `asks_name`, `asks_sentences`, `relation_asked`: the asked type
  (`_spans.asked_type`) by group and how many words of an asked relation the question
  holds (`_checks.relation_words`);
- how the answer's own words read as the answer (`read_features`): `own_similarity`, the
  MiniLM similarity of the question and the answer with its span's sentence (not the best
  evidence sentence); `span_fallback`, a short answer asked and whole sentences given;
  `type_mismatch` / `type_unsure`, the short answer is not / may not be of the asked type
  (`_spans.span_fits`); `doc_margin` and `overlap_lead`, how far the cited documents' best
  sentence leads the best sentence of any other document (confidence, asked-term
  overlap); `focus_missing`, the weight of the heaviest asked term the answer's words do
  not hold (relative to the heaviest asked term); `echo`, the share of the short answer's
  words the question already holds; `own_rank`, the judged rank of the answer's sentence;
  `rival_spans`, other spans of the short answer's type in its sentence; `own_sentences`;
- whether the retrieval agrees (`agreement_features`): `cited_first`, the answer cites the
  document the retrieval ranked first (drafted answers citing another one were right
  28-50% of the time on the tuning splits, 65-88% otherwise), `top_cited`, the share
  of the three most confident sentences from the cited documents, and `similarity_lead`,
  how far the cited documents' sentence most like the question (MiniLM) leads the most
  alike sentence of any other document: it tells right from wrong answers read from a
  note the retrieval ranked lower or reached through a bridge (AUC 0.73 and 0.74 on those
  drafts of the nine tuning splits, against 0.72 and 0.55 for the hand-weighted confidence).

Which features a fit uses by default (`FEATURES`) was chosen by forward selection on the
log-loss of leave-one-split-out predictions (`bench/fit_confidence.py --select`): a
feature stays only when it helps predict a tuning split the model was not fitted on;
`cited_first` joined in stop 33 (out-of-fold log-loss 0.516 -> 0.505 on eight splits),
`similarity_lead` in stop 34 (0.524 -> 0.520 on nine splits). A name "a*b" is the product
of two features (`feature_value`): the same signal read by the answer's route. From stop
35, `own_rank*bridged` (a two-hop draft whose answer is not the bridged best sentence is
not penalised as one) and `similarity_lead*cited_first` (the similarity lead speaks mostly
for answers from a note the retrieval ranked lower): out-of-fold log-loss 0.528 -> 0.523
on ten splits, both chosen again by forward selection without each split in turn.
The shipped model names its own features (`ConfidenceModel.features`).

The coefficients are not typed here: `bench/fit_confidence.py` (`make confidence-model`)
fits them with scikit-learn and writes `prefrag/data/confidence_model.json` (`app/data/`
in the repository), with how it was fitted and the thresholds it chose (the shipped model:
every tuning split, `tune` to `fresh7`, its thresholds chosen on leave-one-split-out
predictions under a HotpotQA 1-200 EM floor; docs/answers.md). It decides by default
(`PREFRAG_CALIBRATED_CONFIDENCE`, on; `active_model`): scored on each split by a model and
thresholds chosen without that split, it beats the hand-weighted confidence on right
answers minus twice the confidently wrong ones on six of the eight splits (not on `tune`,
which the hand weights were set on, nor on `fresh5`). Turned off, or without the file,
the hand-weighted confidence stands.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from prefrag.config import get_settings
from prefrag.reasoners._checks import common_word_span, relation_words
from prefrag.reasoners._evidence import Evidence
from prefrag.reasoners._params import PARAMS
from prefrag.reasoners._policy import FROM, Judge, Judged
from prefrag.reasoners._relations import with_relations
from prefrag.reasoners._spans import (
    CONTACT,
    DATE,
    GROUP,
    MEDICINE,
    NAME,
    ORGANISATION,
    PERSON,
    PLACE,
    PROCEDURE,
    QUANTITY,
    REASON,
    TIME,
    asked_type,
    span_fits,
    span_type,
)
from prefrag.reasoners._text import candidate_spans, split_sentences, term_set
from prefrag.reasoners.base import AnswerDraft

_LABEL_RE = re.compile(r"(?:^|\s)[A-Z][a-z]+(?: [a-z]+)?:(?=\s)")
MODEL_PATH = Path(__file__).resolve().parent.parent / "data" / "confidence_model.json"


def answer_asked(judge: Judge, draft: AnswerDraft) -> float:
    """The share of the question's asked terms the answer's own sentences hold.

    Only the words the answer shows (and a span's sentence): not its document's title, not
    the sentence that led to it. "Which enzyme clears X?" answered by a sentence about X
    that never says "enzyme" or "clear" names the subject, not the asked relation.
    """
    text = draft.answer
    if draft.rationale.startswith(FROM):
        text = f"{text} {draft.rationale.removeprefix(FROM)}"
    return _share(judge.asked, with_relations(term_set(text)))


def new_of_type(judge: Judge, draft: AnswerDraft) -> float:
    """Whether the answer holds a span of the asked type the question does not name itself.

    "Who founded X?" answered by "X was founded in 1791" holds no name but X: the sentence
    is about the asked relation without giving what is asked. 1.0 for questions asking for
    no name, figure or date (and for yes/no and comparisons, which answer with an option).
    """
    shape = judge.shape
    if shape.answer_type not in ("name", "number", "date") or shape.kind in ("yesno", "choice"):
        return 1.0
    text = draft.answer
    if draft.rationale.startswith(FROM):
        text = f"{text} {draft.rationale.removeprefix(FROM)}"
    question = term_set(shape.text)
    for span in candidate_spans(text):
        terms = term_set(span.text)
        if not terms or terms <= question:
            continue
        if shape.answer_type == "name" and span.kind in ("name", "quote"):
            return 1.0
        if shape.answer_type == "date" and span.kind in ("date", "year"):
            return 1.0
    if shape.answer_type in ("number", "date"):
        return float(judge.holds_asked_type(text))
    return 0.0


FEATURES: tuple[str, ...] = (
    "hand",
    "typed",
    "bridged",
    "span_fallback",
    "own_similarity",
    "margin",
    "focus_missing",
    "asks_figure",
    "labels",
    "names",
    "choice",
    "cited_first",
    "similarity_lead",
    "own_rank*bridged",
    "similarity_lead*cited_first",
)


def feature_value(features: dict[str, float], name: str) -> float:
    """A feature's value; a product of features for a name like "own_rank*bridged".

    An interaction lets the gate read a two-hop answer (`bridged`) or one from the note the
    retrieval ranked first (`cited_first`) by its own measure: the same signal means
    something else for an answer reached through another note.
    """
    value = 1.0
    for part in name.split("*"):
        value *= features.get(part, 0.0)
    return value


def heaviest(asked: dict[str, float]) -> list[str]:
    """The asked terms of the top weight (several when their weights are capped alike)."""
    top = max(asked.values(), default=0.0)
    return [t for t, w in asked.items() if w >= top - 1e-9]


def _share(wanted: dict[str, float], terms: frozenset[str]) -> float:
    total = sum(wanted.values())
    if not total:
        return 1.0
    return sum(w for t, w in wanted.items() if t in terms) / total


def answer_features(
    judge: Judge, judged: list[Judged], draft: AnswerDraft, evidence: Evidence
) -> dict[str, float]:
    """The features of one drafted (not abstained) answer; see the module docstring."""
    best = judged[0]
    runner_up = judged[1].confidence if len(judged) > 1 else 0.0
    names = {t: 1.0 for t in judge.name_terms}
    asked = judge.asked
    cited = evidence.positions(draft.cited_ids)
    cited_terms = evidence.terms_of(cited) if cited else frozenset()
    per_doc = [min(_share(asked, terms), _share(names, terms)) for terms in evidence.doc_terms]
    close_docs = {j.scored.sentence.doc for j in judged if j.confidence >= best.confidence - 0.1}
    kind = judge.shape.kind
    short = draft.short_answer.strip().lower()
    source = draft.answer
    if draft.short_answer and draft.rationale.startswith(FROM):
        source = f"{source} {draft.rationale}"
    labels = len(_LABEL_RE.findall(source.replace(FROM, " ")))
    wanted = asked_type(judge.shape)
    return {
        "similarity": best.similarity,
        "overlap": best.overlap,
        "names": best.names,
        "fits": float(best.fits),
        "margin": best.confidence - runner_up,
        "doc_asked": _share(asked, cited_terms),
        "focus_cited": float(all(t in cited_terms for t in heaviest(asked))),
        "evidence_asked": _share(asked, evidence.all_terms),
        "evidence_names": _share(names, evidence.all_terms),
        "joint": max(per_doc, default=0.0),
        "agreeing_docs": float(min(len(close_docs), 3)),
        "hand": float(draft.confidence or 0.0),
        "span": float(bool(short) and kind not in ("yesno", "choice")),
        "pair": float(len(draft.cited_ids) >= 2),
        "yesno": float(kind == "yesno" or short in ("yes", "no")),
        "choice": float(kind == "choice"),
        "typed": float(judge.shape.answer_type in ("number", "date", "name")),
        "answer_words": math.log1p(len(draft.answer.split())),
        "labels": float(min(labels, 3)),
        "common_span": float(common_word_span(draft, evidence)),
        "bridged": float(best.scored.link is not None),
        "record_bridge": float(
            best.scored.link is not None
            and best.scored.link.position < 0
            and len(set(cited) | {best.scored.link.doc}) >= 2
        ),
        "title_span": float(bool(short) and short in {t.lower() for t in evidence.titles}),
        "answer_asked": answer_asked(judge, draft),
        "new_of_type": new_of_type(judge, draft),
        "asks_figure": float(wanted in (QUANTITY, DATE, TIME, CONTACT)),
        "asks_name": float(wanted in (PERSON, PLACE, ORGANISATION, NAME, MEDICINE)),
        "asks_sentences": float(wanted in (REASON, PROCEDURE, GROUP)),
        "relation_asked": float(min(len(relation_words(judge.shape.text, judge.name_terms)), 3)),
        "cited": float(min(len(draft.cited_ids), 3)),
        **read_features(judge, judged, draft, cited),
        **agreement_features(judged, cited),
        "answer_names": _share(
            names,
            term_set(f"{draft.answer} {draft.rationale.removeprefix(FROM)}").union(
                *(evidence.title_terms[i] for i in cited)
            ),
        ),
    }


def own_text(draft: AnswerDraft) -> str:
    """The words the answer shows, with the sentence a short span was read from."""
    if draft.rationale.startswith(FROM):
        return f"{draft.answer} {draft.rationale.removeprefix(FROM)}"
    return draft.answer


def read_features(
    judge: Judge, judged: list[Judged], draft: AnswerDraft, cited: list[int]
) -> dict[str, float]:
    """How the answer's own words read as the answer (see the module docstring)."""
    shape = judge.shape
    text = own_text(draft)
    short = draft.short_answer.strip()
    spanned = shape.kind not in ("yesno", "choice") and shape.form == "span"
    fit = span_fits(asked_type(shape), short) if short and spanned else None
    inside = [j for j in judged if j.scored.sentence.doc in cited]
    outside = [j for j in judged if j.scored.sentence.doc not in cited]
    best_in = max((j.confidence for j in inside), default=0.0)
    best_out = max((j.confidence for j in outside), default=0.0)
    over_in = max((j.overlap for j in inside), default=0.0)
    over_out = max((j.overlap for j in outside), default=0.0)
    terms = with_relations(term_set(text))
    asked = judge.asked
    top = max(asked.values(), default=0.0)
    missing = max((w for t, w in asked.items() if t not in terms), default=0.0)
    short_terms = term_set(short)
    question_terms = term_set(shape.text)
    similarity = own_similarity(judge, text)
    rank = next((i for i, j in enumerate(judged) if j.scored.sentence.text in text), len(judged))
    sentence = draft.rationale.removeprefix(FROM) if draft.rationale.startswith(FROM) else ""
    kind = span_type(short) if short else ""
    rivals = {
        span.text.lower()
        for span in candidate_spans(sentence)
        if span_type(span.text) == kind
        and span.text.lower() not in short.lower()
        and short.lower() not in span.text.lower()
        and not term_set(span.text) <= question_terms
    }
    return {
        "own_rank": float(min(rank, 4)),
        "rival_spans": float(min(len(rivals), 3)),
        "type_mismatch": float(fit is False),
        "type_unsure": float(fit is None and bool(short) and spanned),
        "span_fallback": float(spanned and not short),
        "doc_margin": best_in - best_out,
        "overlap_lead": over_in - over_out,
        "focus_missing": missing / top if top else 0.0,
        "echo": len(short_terms & question_terms) / len(short_terms) if short_terms else 0.0,
        "own_similarity": similarity if similarity is not None else answer_asked(judge, draft),
        "own_sentences": float(min(len(split_sentences(draft.answer)), 4)),
    }


def agreement_features(judged: list[Judged], cited: list[int]) -> dict[str, float]:
    """Whether the retrieval and the other top sentences agree with the answer.

    `cited_first`: the answer cites the document the retrieval ranked first (the held
    evidence keeps the retrieval's order); `top_cited`: the share of the three most
    confident sentences that come from the cited documents; `similarity_lead`: how far the
    cited documents' sentence most like the question (MiniLM) leads the most alike sentence
    of any other document, whatever the retrieval's order.
    """
    top = judged[:3]
    inside = [j.similarity for j in judged if j.scored.sentence.doc in cited]
    outside = [j.similarity for j in judged if j.scored.sentence.doc not in cited]
    return {
        "cited_first": float(0 in cited),
        "top_cited": sum(j.scored.sentence.doc in cited for j in top) / len(top) if top else 0.0,
        "similarity_lead": max(inside, default=0.0) - max(outside, default=0.0),
    }


def own_similarity(judge: Judge, text: str) -> float | None:
    """MiniLM similarity of the question and the answer's own words (None without MiniLM)."""
    vectors = judge.vectors([judge.shape.text, text])
    if vectors is None:
        return None
    cosine = float(vectors[0] @ vectors[1])
    low, high = PARAMS.similarity_floor, PARAMS.similarity_ceiling
    return min(1.0, max(0.0, (cosine - low) / (high - low)))


# What a feature says against an answer when it lowers the fitted confidence the most
# (`ConfidenceModel.most_against`): only features whose direction reads plainly.
AGAINST: dict[str, str] = {
    "hand": "the sentence matches the question weakly",
    "bridged": "the sentence was only reached through another note",
    "span_fallback": "a short answer was asked and only whole sentences say anything",
    "own_similarity": "the answer reads unlike the question",
    "margin": "another sentence fits the question nearly as well",
    "cited_first": "the answer's note is not the one the search ranked first",
    "similarity_lead": "another note holds a sentence closer to the question",
}


@dataclass(frozen=True)
class ConfidenceModel:
    """A fitted logistic regression on standardised features, with its thresholds."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    answer_threshold: float
    span_threshold: float
    correct_threshold: float
    short_threshold: float

    def threshold(self, draft: AnswerDraft) -> float:
        """The answer threshold of the draft's form: with a short answer, or sentences only."""
        return self.short_threshold if draft.short_answer.strip() else self.answer_threshold

    def probability(self, features: dict[str, float]) -> float:
        """The fitted probability that the answer with these features is right."""
        z = self.intercept
        for name, mean, scale, coef in zip(
            self.features, self.mean, self.scale, self.coef, strict=True
        ):
            z += coef * (feature_value(features, name) - mean) / (scale or 1.0)
        return 1.0 / (1.0 + math.exp(-z))

    def most_against(self, features: dict[str, float]) -> str | None:
        """What lowers this answer's confidence the most (`AGAINST`), if anything does."""
        pulls = {
            name: coef * (feature_value(features, name) - mean) / (scale or 1.0)
            for name, mean, scale, coef in zip(
                self.features, self.mean, self.scale, self.coef, strict=True
            )
            if name in AGAINST
        }
        name = min(pulls, key=lambda n: pulls[n], default=None)
        return AGAINST[name] if name is not None and pulls[name] < 0 else None


@lru_cache(maxsize=1)
def load_model(path: Path = MODEL_PATH) -> ConfidenceModel | None:
    """The fitted model (`MODEL_PATH`), or None when it is absent or unreadable."""
    try:
        data = json.loads(path.read_text())
        return ConfidenceModel(
            features=tuple(data["features"]),
            mean=tuple(float(v) for v in data["mean"]),
            scale=tuple(float(v) for v in data["scale"]),
            coef=tuple(float(v) for v in data["coef"]),
            intercept=float(data["intercept"]),
            answer_threshold=float(data["answer_threshold"]),
            span_threshold=float(data["span_threshold"]),
            correct_threshold=float(data.get("correct_threshold", data["span_threshold"])),
            short_threshold=float(data.get("short_threshold", data["answer_threshold"])),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def active_model() -> ConfidenceModel | None:
    """The fitted model when `PREFRAG_CALIBRATED_CONFIDENCE` is on, else None (hand weights)."""
    return load_model() if get_settings().calibrated_confidence else None


__all__ = [
    "AGAINST",
    "FEATURES",
    "MODEL_PATH",
    "ConfidenceModel",
    "active_model",
    "answer_features",
    "feature_value",
    "load_model",
]

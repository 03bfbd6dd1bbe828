"""Answer, retrieval and efficiency metrics: small pure functions.

Answer metrics follow the standard definitions so numbers compare with published tables:

- `exact_match` and `f1` use SQuAD answer normalisation (lower case, drop punctuation and
  the articles a/an/the, collapse whitespace); `f1` applies HotpotQA's rule that a yes / no /
  noanswer prediction or gold scores 0 unless the two are equal (FlashRAG does the same).
- `acc` is normalised containment (FlashRAG's "acc"): a normalised gold answer occurs in
  the normalised prediction.
- `acc_prefrag` is the PrefRAG code's lenient "Acc": a lower-cased gold answer is a raw
  substring of the lower-cased prediction, with no other normalisation.

Every answer metric takes the best score over the gold answers. An abstention scores 0 on
all of them (`ANSWER_METRICS`), whatever its text quotes (`runner.score_output`).
Multiple-choice accuracy counts an unparseable answer as wrong (MIRAGE's scorer silently
falls back to "A").

Answers judged against a gold text (MedQuAD snippets) use `rouge_l` (ROUGE-L F1 over the
longest common subsequence, tokenised like Google's `rouge-score`: lower case, runs of
letters and digits, no stemming), `token_precision` (share of the answer's SQuAD tokens found
in the gold text) and `full_sentence_support` (the answer is made of whole sentences of a
cited text).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from prefrag.answers import normalize_answer as normalize_answer  # re-exported for tests and users

_YES_NO = frozenset({"yes", "no", "noanswer"})
# The scores of an answer against gold answers: all 0 for an abstention.
ANSWER_METRICS = frozenset({"em", "f1", "acc", "acc_prefrag", "choice_acc"})


def _golds(golds: str | Sequence[str]) -> list[str]:
    if isinstance(golds, str):
        return [golds]
    return [g for g in golds if isinstance(g, str)]


def exact_match(prediction: str, golds: str | Sequence[str]) -> float:
    """1.0 when the normalised prediction equals a normalised gold answer, else 0.0."""
    pred = normalize_answer(prediction or "")
    return float(any(pred == normalize_answer(g) for g in _golds(golds)))


def f1_single(prediction: str, gold: str) -> tuple[float, float, float]:
    """Token F1, precision and recall against one gold answer (HotpotQA yes/no rule)."""
    pred = normalize_answer(prediction or "")
    ref = normalize_answer(gold)
    if (pred in _YES_NO or ref in _YES_NO) and pred != ref:
        return 0.0, 0.0, 0.0
    pred_tokens, ref_tokens = pred.split(), ref.split()
    common = Counter(pred_tokens) & Counter(ref_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0, 0.0, 0.0
    precision = same / len(pred_tokens)
    recall = same / len(ref_tokens)
    return 2 * precision * recall / (precision + recall), precision, recall


def f1(prediction: str, golds: str | Sequence[str]) -> float:
    """Best token F1 over the gold answers."""
    return max((f1_single(prediction, g)[0] for g in _golds(golds)), default=0.0)


def acc(prediction: str, golds: str | Sequence[str]) -> float:
    """Normalised containment: a normalised gold answer occurs in the normalised prediction."""
    pred = normalize_answer(prediction or "")
    for gold in _golds(golds):
        ref = normalize_answer(gold)
        if ref and ref in pred:
            return 1.0
    return 0.0


def acc_prefrag(prediction: str, golds: str | Sequence[str]) -> float:
    """The PrefRAG code's lenient accuracy: a raw lower-cased gold occurs in the prediction."""
    pred = (prediction or "").lower()
    return float(any(g.lower() in pred for g in _golds(golds) if g))


_CHOICE_PATTERNS = (
    re.compile(r"answer(?:\s+choice)?\s*(?:is|:)?\s*\(?([A-J])\)?(?![A-Za-z])", re.IGNORECASE),
    re.compile(r"^\s*\(?([A-J])\)?(?:[.:)\s]|$)"),
    re.compile(r"\boption\s*\(?([A-J])\)?(?![A-Za-z])", re.IGNORECASE),
)


def parse_choice(prediction: str, options: Mapping[str, str] | None = None) -> str | None:
    """The option letter a prediction commits to, or None when it cannot be parsed.

    Accepts `{"answer_choice": "B"}`-style JSON, "Answer: B", "(B)", a bare leading letter,
    or the exact text of exactly one option.
    """
    text = (prediction or "").strip()
    if not text:
        return None
    valid = set(options) if options else set("ABCDEFGHIJ")
    json_match = re.search(r'"answer(?:_choice)?"\s*:\s*"\(?([A-J])\)?"', text, re.IGNORECASE)
    if json_match and json_match.group(1).upper() in valid:
        return json_match.group(1).upper()
    for pattern in _CHOICE_PATTERNS:
        match = pattern.search(text)
        if match and match.group(1).upper() in valid:
            return match.group(1).upper()
    if options:
        norm = normalize_answer(text)
        hits = [
            k for k, v in options.items() if normalize_answer(v) and normalize_answer(v) in norm
        ]
        if len(hits) == 1:
            return hits[0]
    return None


def choice_accuracy(prediction: str, gold: str, options: Mapping[str, str] | None = None) -> float:
    """1.0 when the parsed option letter equals `gold`; unparseable counts as wrong."""
    choice = parse_choice(prediction, options)
    return float(choice is not None and choice == gold.strip().upper())


def recall_at_k(ranked_ids: Sequence[str], gold_ids: Iterable[str], k: int) -> float:
    """Share of gold ids among the first `k` ranked ids (0.0 when there is no gold)."""
    gold = set(gold_ids)
    if not gold:
        return 0.0
    return len(gold & set(_dedup(ranked_ids)[:k])) / len(gold)


def hit_at_k(ranked_ids: Sequence[str], gold_ids: Iterable[str], k: int) -> float:
    """1.0 when any gold id is among the first `k` ranked ids."""
    gold = set(gold_ids)
    return float(any(i in gold for i in _dedup(ranked_ids)[:k]))


def ndcg_at_k(ranked_ids: Sequence[str], gold_ids: Iterable[str], k: int) -> float:
    """Binary-relevance NDCG@k (log2 discount, ideal = all gold ranked first)."""
    gold = set(gold_ids)
    if not gold:
        return 0.0
    ranked = _dedup(ranked_ids)[:k]
    dcg = sum(1.0 / math.log2(rank + 2) for rank, i in enumerate(ranked) if i in gold)
    ideal = sum(1.0 / math.log2(rank + 2) for rank in range(min(len(gold), k)))
    return dcg / ideal


def _dedup(ids: Sequence[str]) -> list[str]:
    # A chunked index can return several chunks of one gold document; count it once.
    seen: set[str] = set()
    out: list[str] = []
    for i in ids:
        if i not in seen:
            seen.add(i)
            out.append(i)
    return out


def evidence_recall(used_keys: Iterable[str], gold_keys: Iterable[str]) -> float:
    """Share of gold supporting passages present in the evidence the answer used.

    Keys identify passages (HotpotQA: the paragraph title, as in its supporting-fact
    evaluation). Returns 0.0 when there is no gold passage.
    """
    gold = set(gold_keys)
    if not gold:
        return 0.0
    return len(gold & set(used_keys)) / len(gold)


def web_exposure(used_kinds: Sequence[str]) -> float:
    """Share of used documents that came from the web (0.0 when nothing was used)."""
    if not used_kinds:
        return 0.0
    return sum(1 for kind in used_kinds if kind == "web") / len(used_kinds)


def percentile(values: Sequence[float], q: float) -> float:
    """The `q`-th percentile (0-100) with linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(position), math.ceil(position)
    if low == high:
        return float(ordered[low])
    return float(ordered[low] + (ordered[high] - ordered[low]) * (position - low))


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean; 0.0 for no values."""
    return float(sum(values) / len(values)) if values else 0.0


_ROUGE_TOKEN = re.compile(r"[a-z0-9]+")


def rouge_tokens(text: str) -> list[str]:
    """`rouge-score`'s default tokens: lower case, runs of ASCII letters and digits."""
    return _ROUGE_TOKEN.findall((text or "").lower())


def longest_common_subsequence(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token lists (O(len(a)·len(b)))."""
    if len(a) < len(b):
        a, b = b, a
    row = [0] * (len(b) + 1)
    for token in a:
        diagonal = 0
        for j, other in enumerate(b, start=1):
            above = row[j]
            row[j] = diagonal + 1 if token == other else max(above, row[j - 1])
            diagonal = above
    return row[-1]


def rouge_l(prediction: str, reference: str) -> float:
    """ROUGE-L F1 (Lin 2004, beta = 1) of `prediction` against `reference`; 0.0 if either is empty.

    Precision and recall are the longest common subsequence of tokens over the prediction's
    and the reference's length.
    """
    pred, ref = rouge_tokens(prediction), rouge_tokens(reference)
    if not pred or not ref:
        return 0.0
    common = longest_common_subsequence(pred, ref)
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def token_precision(prediction: str, reference: str) -> float:
    """Share of the prediction's SQuAD-normalised tokens that the reference holds (bag of words)."""
    pred = normalize_answer(prediction or "").split()
    if not pred:
        return 0.0
    common = Counter(pred) & Counter(normalize_answer(reference or "").split())
    return sum(common.values()) / len(pred)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_CITATION_MARK = re.compile(r"\s*\[[^\]]{1,80}\]")
# What may precede a sentence inside a text: its start, an end of sentence, a list dash.
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|(?:^|\s)[-*\u2022]\s+)$")


_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d{1,2}[.)])\s+")


def answer_sentences(answer: str) -> list[str]:
    """The sentences of an answer: lines without list bullets, split at sentence ends.

    Citation marks such as "[1]" are removed.
    """
    sentences = []
    for line in _CITATION_MARK.sub("", answer or "").splitlines():
        text = " ".join(_BULLET.sub("", line).split())
        sentences += [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]
    return sentences


def full_sentence_support(answer: str, texts: Iterable[str]) -> float:
    """1.0 when every sentence of `answer` is a whole sentence of one of `texts`, else 0.0.

    A sentence is whole when it starts where a sentence of the text starts (the text's
    start, after ". ", "? ", "! ", ": ", "; " or a list dash) and ends with the text's
    sentence: at ".", "!" or "?", or at the end of the text. Case and whitespace are ignored.
    """
    sentences = answer_sentences(answer)
    flat = [" ".join(t.split()).lower() for t in texts if t]
    if not sentences or not flat:
        return 0.0
    return float(all(any(_whole_sentence_in(s.lower(), t) for t in flat) for s in sentences))


def _whole_sentence_in(sentence: str, text: str) -> bool:
    core = sentence.rstrip(".!? ")
    if not core:
        return False
    start = text.find(core)
    while start >= 0:
        end = start + len(core)
        ends = end == len(text) or text[end] in ".!?"
        if ends and _SENTENCE_START.search(text[:start]):
            return True
        start = text.find(core, start + 1)
    return False


def answer_scores(prediction: str, golds: Sequence[str]) -> dict[str, float]:
    """All open-answer metrics of one prediction: em, f1, acc, acc_prefrag."""
    return {
        "em": exact_match(prediction, golds),
        "f1": f1(prediction, golds),
        "acc": acc(prediction, golds),
        "acc_prefrag": acc_prefrag(prediction, golds),
    }

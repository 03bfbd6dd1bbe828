"""Score PrefRAG on our own tuning set: invented corpora and questions (bench/tuning/).

Each corpus folder (`bench/tuning/<corpus>/docs/`) is indexed with `prefrag index` into a
fresh PREFRAG home of its own, as a user would index their notes; every question of
`bench/tuning/questions.jsonl` is then asked through the API (`prefrag.ask`) with the web
off. A follow-up item is asked on a thread after its earlier turns (`context`).

An answer is judged by a transparent rule on normalized text (lower case, thousands
separators and dashes removed, articles dropped, punctuation split off):

- abstained: the result's `abstained` flag; never right, never confidently wrong on an
  unanswerable item;
- `all_of` items (lists): right when every group has one alias contained in the answer;
- `polarity` items (yes/no): right when the answer does not open with the opposite word and
  either opens with the gold word or contains one gold alias (the deciding phrase);
- items with `opposite` aliases (the other side of a comparison): wrong when the answer
  opens with one of them, whatever else it contains;
- other items: right when one gold alias is contained in the answer (on word boundaries) or,
  for an alias of four or more words holding no figure (an explanation), the token F1
  against it is at least `--f1` (0.5): a figure ("3 to 6 months", "2.5 mg twice daily") is
  right only when contained, never by sharing most of its words;
- whatever it contains, an answer is not right when it holds Markdown syntax (a `#` heading
  marker, `**`, a table's ` | ` or `|---`) or runs past 100 words: that is a document
  pasted, not an answer read out.

Reported per corpus, per kind and per split: answerable right (share of answerable items
answered right), unanswerable abstained (share of unanswerable items abstained on) and
confidently wrong (share of all items given a non-abstained answer that is not right:
wrong answers to answerable items plus answers to unanswerable ones).

    .venv/bin/python bench/tuning_set.py
        [--split tune|heldout|fresh|fresh2|...|fresh10|sealed|all] [--corpus clinic]
        (`all`: every split but the unseen `fresh10`)
        [--json runs/tuning.json] [--limit N] [--show] [--set bench/sealed]

`--set DIR` scores another set laid out the same way (`DIR/questions.jsonl`,
`DIR/<corpus>/docs/`), such as the sealed check set in bench/sealed/ that nobody tunes on.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unicodedata
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from prefrag.jsonl import read_rows

TUNING = Path(__file__).resolve().parent / "tuning"
QUESTIONS = TUNING / "questions.jsonl"
UNANSWERABLE = "unanswerable"
# The split nobody has seen answers to yet: reported, never tuned on, left out of `all`.
UNSEEN = "fresh10"
# The question splits of bench/tuning (the sealed set lives apart), oldest first.
SPLITS = ("tune", "heldout", "fresh", *(f"fresh{n}" for n in range(2, 11)))
_ARTICLES = frozenset({"a", "an", "the"})
_TOKEN = re.compile(r"[a-z0-9]+(?:[./][0-9]+)*")
# A heading marker, bold, or a table's cell separator / rule line.
_MARKDOWN = re.compile(r"(?:^|\s)#{1,6}\s|\*\*|\s\|\s|\|\s*:?-{3,}")
MAX_WORDS = 100
F1_MIN_ALIAS_WORDS = 4


def normalize(text: str) -> list[str]:
    """Lower-case word tokens of `text` with thousands separators and articles removed."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    return [t for t in _TOKEN.findall(text) if t not in _ARTICLES]


def contains(answer: list[str], alias: str) -> bool:
    """Whether the normalized `alias` occurs in the normalized `answer` on word boundaries."""
    needle = normalize(alias)
    if not needle:
        return False
    return f" {' '.join(needle)} " in f" {' '.join(answer)} "


def opens_with(answer: list[str], alias: str) -> bool:
    """Whether the normalized `answer` opens with the normalized `alias`."""
    needle = normalize(alias)
    return bool(needle) and answer[: len(needle)] == needle


def token_f1(answer: list[str], alias: str) -> float:
    """SQuAD-style token F1 between an answer and one gold alias."""
    gold = normalize(alias)
    common = sum((Counter(answer) & Counter(gold)).values())
    if not common:
        return 0.0
    precision, recall = common / len(answer), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def is_right(item: dict[str, Any], answer: str, *, f1: float = 0.5) -> bool:
    """Whether a (non-abstained) `answer` is right for `item` (the rule: module docstring)."""
    tokens = normalize(answer)
    if not tokens or item["docs"] == UNANSWERABLE:
        return False
    if _MARKDOWN.search(answer) or len(answer.split()) > MAX_WORDS:
        return False
    if any(opens_with(tokens, alias) for alias in item.get("opposite", [])):
        return False
    if item.get("all_of"):
        return all(any(contains(tokens, a) for a in group) for group in item["all_of"])
    aliases = list(item.get("answers", []))
    if item.get("polarity"):
        gold = item["polarity"]
        opposite = "no" if gold == "yes" else "yes"
        if tokens[0] == opposite:
            return False
        return tokens[0] == gold or any(contains(tokens, a) for a in aliases)
    return any(contains(tokens, a) or (explains(a) and token_f1(tokens, a) >= f1) for a in aliases)


def explains(alias: str) -> bool:
    """Whether a gold alias is an explanation, judged by token F1: four words or more, no figure."""
    words = normalize(alias)
    return len(words) >= F1_MIN_ALIAS_WORDS and not any(ch.isdigit() for ch in alias)


def cited_documents(result: dict[str, Any]) -> list[str]:
    """The cited documents as tuning-set ids: a file's stem, else the JSONL record id."""
    keys = []
    for cite in result.get("citations", []):
        url = str(cite.get("url") or "")
        key = Path(url).stem if url.startswith("file:") else str(cite.get("document", ""))
        if key not in keys:
            keys.append(key)
    return keys


def load_questions(split: str, corpus: str | None, set_dir: Path = TUNING) -> list[dict[str, Any]]:
    """The questions of one split (`tune`, `heldout`, `fresh`...`fresh10`, `sealed`, `all`).

    `all` is every split but the unseen one (`UNSEEN`), which is scored only by its name: a
    routine `--split all` while tuning must not show it.
    """
    items = read_rows(set_dir / "questions.jsonl")
    return [
        item
        for item in items
        if (item["split"] == split or (split == "all" and item["split"] != UNSEEN))
        and corpus in (None, item["corpus"])
    ]


def corpus_documents(corpus: str, set_dir: Path = TUNING) -> dict[str, str]:
    """Document id -> text for one corpus of a set, ids as `cited_documents` reports them.

    A JSONL file's rows are documents by their `id`; any other file is one document by its
    name without the suffix.
    """
    texts = {}
    for path in sorted((set_dir / corpus / "docs").iterdir()):
        if path.suffix == ".jsonl":
            texts.update({row["id"]: row["text"] for row in read_rows(path)})
        else:
            texts[path.stem] = path.read_text()
    return texts


def index_corpus(corpus: str, home: Path, set_dir: Path = TUNING) -> None:
    """`prefrag index <set_dir>/<corpus>/docs --source <corpus>` into `home`."""
    prefrag = Path(sys.executable).with_name("prefrag")
    env = {**os.environ, "PREFRAG_HOME": str(home), "PREFRAG_WEB_ENABLED": "false"}
    command = [str(prefrag), "index", str(set_dir / corpus / "docs"), "--source", corpus]
    subprocess.run(command, env=env, check=True, capture_output=True, text=True)


def ask_corpus(corpus: str, items: list[dict[str, Any]], home: Path) -> list[dict[str, Any]]:
    """Ask every item of one corpus against its own freshly indexed home."""
    from langgraph.checkpoint.memory import InMemorySaver

    from prefrag import ask, build_graph, get_settings
    from prefrag.sources.defaults import default_sources

    os.environ["PREFRAG_HOME"] = str(home)
    get_settings.cache_clear()
    graph = build_graph(sources=default_sources(web=False), checkpointer=InMemorySaver())
    results = []
    for item in items:
        thread = f"{item['id']}-{uuid.uuid4().hex[:8]}"
        for turn in item.get("context", []):
            ask(turn, graph=graph, thread_id=thread, fallback_sources=[])
        start = time.perf_counter()
        result = ask(item["question"], graph=graph, thread_id=thread, fallback_sources=[])
        results.append({**result, "seconds": time.perf_counter() - start})
    return results


def judge(item: dict[str, Any], result: dict[str, Any], *, f1: float) -> dict[str, Any]:
    """One scored row: the item, the answer, and right / abstained / confidently wrong."""
    answer = str(result.get("answer", ""))
    abstained = bool(result.get("abstained"))
    answerable = item["docs"] != UNANSWERABLE
    right = answerable and not abstained and is_right(item, answer, f1=f1)
    cited = cited_documents(result)
    reflections = result.get("reflections") or []
    return {
        "id": item["id"],
        "corpus": item["corpus"],
        "kind": item["kind"],
        "split": item["split"],
        "question": item["question"],
        "context": item.get("context", []),
        "answerable": answerable,
        "answer": answer,
        "abstained": abstained,
        "right": right,
        "confidently_wrong": not abstained and not right,
        "confidence": result.get("confidence"),
        "short_answer": result.get("short_answer"),
        "cited": cited,
        "cites_gold": answerable and any(doc in item["docs"] for doc in cited),
        "reflection": reflections[-1].get("label") if reflections else None,
        "reflection_answer": reflections[-1].get("answer") if reflections else None,
        "first_reflection": reflections[0].get("label") if reflections else None,
        "first_reflection_answer": reflections[0].get("answer") if reflections else None,
        "seconds": round(float(result.get("seconds", 0.0)), 3),
    }


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts and the three rates of a group of scored rows."""
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    right = sum(r["right"] for r in answerable)
    abstained_u = sum(r["abstained"] for r in unanswerable)
    wrong = sum(r["confidently_wrong"] for r in rows)
    wrong_answerable = [r for r in answerable if r["confidently_wrong"]]
    return {
        "n": len(rows),
        "answerable": len(answerable),
        "right": right,
        "abstained_on_answerable": sum(r["abstained"] for r in answerable),
        "unanswerable": len(unanswerable),
        "abstained_on_unanswerable": abstained_u,
        "confidently_wrong": wrong,
        "wrong_citing_gold": sum(r["cites_gold"] for r in wrong_answerable),
        "answerable_right": right / len(answerable) if answerable else None,
        "unanswerable_abstained": abstained_u / len(unanswerable) if unanswerable else None,
        "confidently_wrong_rate": wrong / len(rows) if rows else None,
    }


def _rate(value: float | None) -> str:
    return "   -" if value is None else f"{value:4.2f}"


def report(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Print the per-split, per-corpus and per-kind tables; return them as a dict."""
    tables: dict[str, Any] = {"overall": summarize(rows)}
    for field in ("split", "corpus", "kind"):
        values = sorted({r[field] for r in rows})
        tables[field] = {v: summarize([r for r in rows if r[field] == v]) for v in values}
    header = f"{'group':<22}{'n':>4}{'right':>8}{'abst(u)':>9}{'conf.wrong':>12}"
    print(header + "   (answerable right, unanswerable abstained, confidently wrong / all)")
    lines = [("overall", tables["overall"])]
    for field in ("split", "corpus", "kind"):
        lines += [(f"{field}={v}", s) for v, s in tables[field].items()]
    for name, s in lines:
        print(
            f"{name:<22}{s['n']:>4}{_rate(s['answerable_right']):>8}"
            f"{_rate(s['unanswerable_abstained']):>9}{_rate(s['confidently_wrong_rate']):>12}"
        )
    overall = tables["overall"]
    print(
        f"\nright {overall['right']}/{overall['answerable']} answerable; abstained on "
        f"{overall['abstained_on_unanswerable']}/{overall['unanswerable']} unanswerable; "
        f"confidently wrong {overall['confidently_wrong']}/{overall['n']}; wrong answers citing "
        f"a gold document {overall['wrong_citing_gold']}"
    )
    return tables


def main() -> None:
    """Index each corpus, ask its questions, print and optionally save the scores."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--split",
        choices=[*SPLITS, "sealed", "all"],
        default="all",
    )
    parser.add_argument(
        "--set",
        dest="set_dir",
        type=Path,
        default=TUNING,
        help="the set directory (questions.jsonl, <corpus>/docs/); default bench/tuning",
    )
    parser.add_argument(
        "--corpus", help="only this corpus (clinic, interactions, encyclopedia, clinic2, ...)"
    )
    parser.add_argument("--json", type=Path, help="write the summary and every row here")
    parser.add_argument("--limit", type=int, help="at most this many questions per corpus")
    parser.add_argument(
        "--f1", type=float, default=0.5, help="token F1 at which an answer is right"
    )
    parser.add_argument("--show", action="store_true", help="print every question and answer")
    args = parser.parse_args()
    os.environ["PREFRAG_WEB_ENABLED"] = "false"
    items = load_questions(args.split, args.corpus, args.set_dir)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="prefrag-tuning-") as tmp:
        for corpus in sorted({item["corpus"] for item in items}):
            chosen = [item for item in items if item["corpus"] == corpus][: args.limit]
            home = Path(tmp) / corpus
            index_corpus(corpus, home, args.set_dir)
            for item, result in zip(chosen, ask_corpus(corpus, chosen, home), strict=True):
                row = judge(item, result, f1=args.f1)
                rows.append(row)
                if args.show:
                    mark = "OK" if row["right"] else ("AB" if row["abstained"] else "--")
                    print(f"{mark} {row['id']} [{row['kind']}] {row['question']}")
                    print(f"     -> {row['answer'][:200]!r} cites {row['cited']}")
    tables = report(rows)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"summary": tables, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()

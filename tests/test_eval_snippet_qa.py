"""`prefrag eval --task qa`: MedQuAD-shaped questions answered from their own snippets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _eval_fakes import KeywordSource
from typer.testing import CliRunner

from prefrag.datasets import load_dataset
from prefrag.errors import ConfigurationError
from prefrag.eval.runner import EvalConfig, read_records, run_eval
from prefrag.eval.snippet_qa import (
    as_snippet_qa,
    snippet_rows,
    snippet_scores,
    withheld_ids,
)
from prefrag.reasoners.base import AnswerDraft, CompareVerdict, Reflection, ThinkDecision, Usage
from prefrag.sources.base import SourceRegistry

SNIPPETS = [
    (
        "Lithium toxicity",
        "What are the symptoms of Lithium toxicity?",
        "Key Points - Lithium toxicity causes tremor and confusion. - It is treated in "
        "hospital. Severe cases need dialysis.",
    ),
    (
        "Warfarin bleeding",
        "How is Warfarin bleeding treated?",
        "Bleeding on warfarin is reversed with vitamin K. Fresh frozen plasma works faster.",
    ),
    (
        "Statin myopathy",
        "What causes Statin myopathy?",
        "Statin myopathy is muscle damage caused by statins. Grapefruit juice raises the risk.",
    ),
    (
        "Metformin acidosis",
        "What is Metformin acidosis?",
        "Metformin acidosis is a rare build-up of lactic acid. Kidney failure raises the risk.",
    ),
]


def _medquad(tmp_path: Path, snippets=SNIPPETS) -> Path:
    folder = tmp_path / "medquad"
    folder.mkdir(exist_ok=True)
    rows = [
        {"id": f"mq{n}", "title": title, "content": text, "question": question, "qtype": "x"}
        for n, (title, question, text) in enumerate(snippets)
    ]
    (folder / "1_Toy.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


class TitleReasoner:
    """Searches once with the question; answers with the first sentence of a document whose
    title's first word the question names, citing it; abstains when none does."""

    def think(
        self, question, scratchpad, *, sources, force_answer=False, feedback=None, rationale=False
    ):
        if scratchpad or force_answer:
            return ThinkDecision(action="answer", usage=Usage(calls=1))
        return ThinkDecision(action="search", query=question, source=sources[0], usage=Usage())

    def compare(self, question, held, new):
        return CompareVerdict(status=True)

    def answer(self, question, scratchpad, evidence, *, feedback=None, earlier=None):
        for document in evidence:
            if document.metadata["title"].split()[0].lower() in question.lower():
                first = document.page_content.split(". ")[0].rstrip(".") + "."
                return AnswerDraft(answer=first, cited_ids=[document.metadata["id"]])
        return AnswerDraft(answer="The sources I could reach do not answer this.", abstained=True)

    def reflect(self, question, answer, evidence):
        return Reflection(label="CORRECT")


def test_medquad_file_becomes_qa_items_whose_gold_is_their_snippet(tmp_path):
    data = as_snippet_qa(load_dataset(_medquad(tmp_path)))
    assert data.task == "qa" and len(data.items) == 4
    item = data.items[1]
    assert item.gold_doc_ids == ("mq1",)
    assert item.metadata["gold_text"].startswith("Bleeding on warfarin")


def test_withheld_share_is_seeded_reproducible_and_rounded_to_questions():
    from prefrag.datasets import EvalItem

    items = [EvalItem(id=f"q{n}", question="?", task="qa") for n in range(200)]
    first = withheld_ids(items, 0.1, seed=3)
    assert len(first) == 20
    assert withheld_ids(list(reversed(items)), 0.1, seed=3) == first  # order does not matter
    assert withheld_ids(items, 0.1, seed=4) != first
    assert withheld_ids(items, 0.0, seed=3) == set()
    for bad in (1.0, -0.1, 2):
        with pytest.raises(ConfigurationError, match="--withhold"):
            withheld_ids(items, bad, seed=3)


def test_indexed_snippets_are_the_answerable_golds_plus_seeded_distractors(tmp_path):
    many = [(f"Topic{n}", f"What is Topic{n}?", f"Topic{n} is thing {n}.") for n in range(40)]
    data = as_snippet_qa(load_dataset(_medquad(tmp_path, many)))
    items = data.items[:10]
    withheld = {items[0].id}
    rows = snippet_rows(data, items, withheld, corpus="items", distractors=2.0, seed=1)
    ids = {r["id"] for r in rows}
    golds = {i.gold_doc_ids[0] for i in items}
    assert ids & golds == golds - {items[0].gold_doc_ids[0]}  # the withheld gold is out
    assert len(ids - golds) == 20  # two distractors per evaluated question
    assert rows == snippet_rows(data, items, withheld, corpus="items", distractors=2.0, seed=1)
    everything = snippet_rows(data, items, withheld, corpus="all", distractors=0, seed=1)
    assert len(everything) == 39
    with pytest.raises(ConfigurationError, match="--distractors"):
        snippet_rows(data, items, withheld, corpus="items", distractors=-1, seed=1)


def test_snippet_scores_citation_rouge_sentences_and_abstention(tmp_path):
    data = as_snippet_qa(load_dataset(_medquad(tmp_path)))
    texts = {r["id"]: r["text"] for r in data.corpus}
    item = data.items[1]
    cited = [{"id": "chunk-a", "document": "mq1"}]
    good = {"answer": "Bleeding on warfarin is reversed with vitamin K.", "citations": cited}
    scores = snippet_scores(good, item, texts)
    assert scores["cited_gold"] == 1.0 and scores["full_sentence"] == 1.0
    assert scores["token_precision"] == 1.0 and 0.5 < scores["rouge_l"] < 1.0
    assert scores["wrong_abstention"] == 0.0
    span = {"answer": "vitamin K", "citations": [{"id": "x", "document": "mq0"}]}
    scores = snippet_scores(span, item, texts)
    assert scores["cited_gold"] == 0.0 and scores["full_sentence"] == 0.0
    declined = {"answer": "The sources I could reach do not answer this.", "abstained": True}
    assert snippet_scores(declined, item, texts)["wrong_abstention"] == 1.0
    assert snippet_scores(declined, item, texts)["cited_gold"] == 0.0
    hidden = item.__class__(**{**item.__dict__, "metadata": {**item.metadata, "withheld": True}})
    assert snippet_scores(declined, hidden, texts) == {"abstention_withheld": 1.0}
    assert snippet_scores(good, hidden, texts) == {"abstention_withheld": 0.0}


def _keyword_sources(data, withheld_gold: set[str]) -> SourceRegistry:
    passages = [(r["title"], r["text"]) for r in data.corpus if r["id"] not in withheld_gold]
    local = KeywordSource("local", "local", passages)
    # Citations of the keyword source name chunk ids; map them to the snippet ids.
    ids = [r["id"] for r in data.corpus if r["id"] not in withheld_gold]
    original = local.search

    def search(query, k):
        found = original(query, k)
        for document in found:
            document.metadata["parent_id"] = ids[int(document.metadata["id"].split("-")[1])]
        return found

    local.search = search  # type: ignore[method-assign]
    return SourceRegistry([local])


def test_qa_task_scores_answers_and_abstention_on_withheld_questions(tmp_path):
    folder = _medquad(tmp_path)
    data = as_snippet_qa(load_dataset(folder))
    config = EvalConfig(
        dataset=str(folder),
        methods=["prefrag", "vanilla-local"],
        out=str(tmp_path / "run"),
        task="qa",
        withhold=0.25,
        seed=0,
        concurrency=1,
        context={"top_k": 2},
    )
    (withheld,) = withheld_ids(data.items, 0.25, 0)
    gold = next(i.gold_doc_ids[0] for i in data.items if i.id == withheld)
    summary = run_eval(
        config,
        sources=_keyword_sources(data, {gold}),
        reasoner=TitleReasoner(),
        progress=False,
    )
    for method in ("prefrag", "vanilla-local"):
        entry = summary[method]
        assert entry["n"] == 4 and entry["withheld"] == 1 and entry["errors"] == 0
        # Every answerable question cites its gold snippet with one of its whole sentences.
        assert entry["cited_gold"] == 100.0 and entry["full_sentence"] == 100.0
        assert entry["wrong_abstention"] == 0.0
        assert entry["abstention_withheld"] == 100.0
        assert 0.0 < entry["rouge_l"] < 100.0 and entry["token_precision"] == 100.0
    records = {r["id"]: r for r in read_records(tmp_path / "run" / "items.jsonl")}
    assert records[withheld]["withheld"] and records[withheld]["abstained"]
    assert records[withheld]["golds"] == [gold]
    report = (tmp_path / "run" / "report.md").read_text()
    assert "Answers against the gold snippet" in report and "| prefrag | 100.0 |" in report
    assert "top-k 2," in report and "None" not in report
    # Accuracy and web-exposure plots would only show zeros here: none are drawn.
    assert not (tmp_path / "run" / "accuracy_vs_retrievals.png").exists()
    assert summary["_run"]["snippet_qa"]["withheld"] == 1


@pytest.mark.slow
def test_qa_task_indexes_only_the_sample_and_its_distractors(tmp_path):
    many = [
        (f"Disease{n}", f"What is Disease{n}?", f"Disease{n} is a condition of organ {n}.")
        for n in range(30)
    ]
    folder = _medquad(tmp_path, many)
    out = tmp_path / "run"
    from prefrag.cli import app

    args = ["eval", "--dataset", str(folder), "--task", "qa", "--method", "vanilla-local"]
    args += ["--limit", "5", "--sample", "--seed", "2", "--withhold", "0.2", "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--no-progress"])
    assert result.exit_code == 0, result.output
    indexed = (out / "index" / "local.jsonl").read_text().splitlines()
    assert len(indexed) == 4 + 5  # four answerable golds and one distractor per question
    summary = json.loads((out / "summary.json").read_text())
    assert summary["vanilla-local"]["n"] == 5 and summary["vanilla-local"]["withheld"] == 1
    assert "abstention_withheld" in summary["vanilla-local"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--withhold", "0.1"], "--withhold applies to --task qa"),
        (["--task", "qa", "--withhold", "1.5"], "in [0, 1)"),
        (["--task", "nope"], "--task must be one of"),
        (["--task", "qa", "--distractors", "-1"], "--distractors must be 0 or more"),
        (["--task", "qa", "--method", "dense"], "Unknown method"),
    ],
)
def test_bad_qa_options_are_one_clear_error(tmp_path, extra, message):
    from prefrag.cli import app

    args = ["eval", "--dataset", str(_medquad(tmp_path)), "--out", str(tmp_path / "x")]
    result = CliRunner().invoke(app, [*args, *extra, "--no-progress"])
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())


def test_qa_task_on_a_file_without_snippets_is_refused(tmp_path):
    from prefrag.cli import app

    path = tmp_path / "flash.jsonl"
    path.write_text(json.dumps({"question": "Q?", "golden_answers": ["x"]}) + "\n")
    args = ["eval", "--dataset", str(path), "--task", "qa", "--withhold", "0.1"]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "x"), "--no-progress"])
    assert result.exit_code == 2
    assert "MedQuAD-shaped" in " ".join(result.output.split())


def test_a_run_saved_before_the_qa_options_existed_still_resumes(tmp_path):
    from prefrag.eval.runner import _check_resumable

    out = tmp_path / "old"
    out.mkdir()
    saved = {"dataset": "d", "methods": ["prefrag"], "out": str(out), "seed": 0}
    (out / "config.json").write_text(json.dumps({"config": saved}))
    _check_resumable(EvalConfig(dataset="d", methods=["prefrag"], out=str(out)), out)
    with pytest.raises(ConfigurationError, match="withhold"):
        config = EvalConfig(dataset="d", methods=["prefrag"], out=str(out), withhold=0.1)
        _check_resumable(config, out)

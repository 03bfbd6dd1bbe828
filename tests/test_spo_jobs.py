"""SPO data jobs: exploration writes queries and retrievals; judging writes SFT/DPO plan rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from graph_helpers import ListSource, doc
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from prefrag.errors import ConfigurationError
from prefrag.reasoners.plans import SourceBrief, parse_plan, plan_prompt
from prefrag.training import spo_explore, spo_judge
from prefrag.training.jobs import JOBS
from prefrag.training.spo_explore import (
    ExtractiveExplorer,
    LLMExplorer,
    explore,
    query_diversity,
)
from prefrag.training.spo_judge import GoldJudge, LLMJudge, build_datasets, judge_rows

QUESTION = "What are the treatments for gout?"


def _sources() -> list[ListSource]:
    gold = doc("gout-1", "Gout is treated with NSAIDs, colchicine and allopurinol.", "book")
    book = ListSource(
        "book",
        answers={"treat": [gold], "allopurinol": [gold]},
        default=[doc("b-x", "Unrelated textbook page.", "book")],
    )
    book.description = "Medical textbooks."
    concepts = ListSource(
        "concepts", kind="graph", default=[doc("c-x", "Gout: a form of arthritis.", "concepts")]
    )
    concepts.description = "A concept graph of diseases."
    return [book, concepts]


EXPERT_REPLY = (
    "<book>gout treatment ; allopurinol dosing ; gout diet ; uric acid ; gout history ; "
    "gout in women</book>"
    "<concepts>Gout , treatment ; Gout , definition ; Uric acid , role ; Gout , causes ; "
    "Arthritis, Gouty , therapy ; Gout , prevalence</concepts>"
)


def test_an_llm_expert_writes_six_queries_per_source_and_each_retrieves() -> None:
    expert = LLMExplorer(FakeListChatModel(responses=[EXPERT_REPLY]))
    book, concepts = _sources()
    (row,) = explore(
        [{"id": "q1", "question": QUESTION, "answer": "allopurinol", "gold_ids": ["gout-1"]}],
        [book, concepts],
        expert,
        n_queries=6,
        top_k=3,
    )
    assert [len(row["queries"][name]) for name in ("book", "concepts")] == [6, 6]
    assert row["queries"]["book"][0]["doc_ids"] == ["gout-1"]
    assert row["queries"]["book"][2]["doc_ids"] == ["b-x"]
    assert row["queries"]["concepts"][4]["term"] == "Arthritis, Gouty"
    assert len(book.queries) == 6 and len(concepts.queries) == 6
    assert row["sources"][1] == {
        "name": "concepts",
        "description": "A concept graph of diseases.",
        "query_format": "a natural-language question",
        "kind": "graph",
    }


def test_the_extractive_expert_writes_distinct_queries_offline() -> None:
    sources = [SourceBrief(name="book", description="Medical textbooks about diseases")]
    plan = ExtractiveExplorer().explore(
        "Which medicines lower uric acid levels in chronic gout patients?", sources, 6
    )
    texts = plan.query_texts("book")
    assert len(texts) == 6 and len(set(texts)) == 6
    assert texts[0].startswith("Which medicines")


def test_query_diversity_is_the_mean_pairwise_cosine_distance() -> None:
    class Axes:
        def encode(self, texts):
            import numpy as np

            table = {"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [1.0, 0.0]}
            return np.array([table[t] for t in texts])

    assert query_diversity(["a", "b", "c"], Axes()) == pytest.approx(2 / 3)
    assert query_diversity(["a"], Axes()) is None


def _explored() -> list[dict]:
    expert = LLMExplorer(FakeListChatModel(responses=[EXPERT_REPLY, "<book>x</book>"]))
    rows = [
        {"id": "q1", "question": QUESTION, "answer": "allopurinol", "gold_ids": ["gout-1"]},
        {"id": "q2", "question": "Unanswerable?", "answer": "nothing", "gold_ids": ["none"]},
    ]
    return explore(rows, _sources(), expert, n_queries=6, top_k=3)


def test_gold_judging_builds_sft_and_dpo_plans() -> None:
    judged = judge_rows(_explored(), GoldJudge())
    labels = [q["positive"] for q in judged[0]["queries"]["book"]]
    assert labels == [True, True, False, False, False, False]
    sft, dpo = build_datasets(judged)
    (row,) = sft  # the second question has no positive query: dropped
    sources = [SourceBrief(**s) for s in judged[0]["sources"]]
    user, assistant = row["messages"]
    assert user == {"role": "user", "content": plan_prompt(QUESTION, sources)}
    plan = parse_plan(assistant["content"], sources)
    assert plan is not None and plan.strict
    assert plan.query_texts("book") == ["gout treatment", "allopurinol dosing"]
    assert plan.query_texts("concepts") == []
    (pair,) = dpo
    rejected = parse_plan(pair["rejected"][0]["content"], sources)
    assert rejected is not None and len(rejected.query_texts("book")) == 3
    assert len(rejected.query_texts("concepts")) == 3
    assert "Arthritis" not in " ".join(rejected.query_texts("book"))
    assert pair["prompt"] == [user] and pair["chosen"] == [assistant]


def test_the_llm_judge_reads_yes_no_and_counts_unreadable_verdicts() -> None:
    judge = LLMJudge(
        FakeListChatModel(
            responses=["Supported. <answer>yes</answer>", "hmm", "<answer>No</answer>"]
        )
    )
    documents = [doc("d", "text")]
    assert judge.supports("q", "a", [], documents) is True
    assert judge.supports("q", "a", [], documents) is False
    assert judge.supports("q", "a", [], documents) is False
    assert judge.unreadable == 1


def test_gold_judge_matches_the_file_id_a_chunk_came_from() -> None:
    chunk = doc("f9aa1c8d", "Gout is treated with allopurinol.", parent_id="medquad_1")
    assert GoldJudge().supports("q", "a", ["medquad_1"], [chunk])
    assert not GoldJudge().supports("q", "a", ["medquad_2"], [chunk])


def test_gold_judge_without_ids_looks_for_the_answer_text() -> None:
    judge = GoldJudge()
    assert judge.supports("q", "Allopurinol!", [], [doc("x", "Take allopurinol daily.")])
    assert not judge.supports("q", "colchicine", [], [doc("x", "Take allopurinol daily.")])


def test_both_jobs_run_from_their_command_lines(tmp_path: Path, monkeypatch) -> None:
    data = tmp_path / "train.jsonl"
    data.write_text(
        json.dumps({"id": "gout-1", "question": QUESTION, "answer": "allopurinol"}) + "\n"
    )
    monkeypatch.setattr(spo_explore, "_sources", lambda names: _sources())
    explored = tmp_path / "explored.jsonl"
    summary = spo_explore.main(
        ["--data", str(data), "--output", str(explored), "--n_queries", "4", "--top_k", "2"]
    )
    assert summary["questions"] == 1 and summary["queries"] == 8
    out = tmp_path / "spo"
    summary = spo_judge.main(["--data", str(explored), "--output_dir", str(out)])
    assert summary["positive_queries"] >= 1 and summary["sft_rows"] == 1
    first = json.loads((out / "sft.jsonl").read_text().splitlines()[0])
    assert [m["role"] for m in first["messages"]] == ["user", "assistant"]
    assert {job.name for job in JOBS} >= {"spo-explore", "spo-judge"}
    with pytest.raises(ConfigurationError, match="needs --data"):
        spo_judge.main(["--output_dir", str(out)])

"""`prefrag eval-sources`: multi-source retrieval arms on a MedQuAD-shaped folder."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prefrag.eval.multisource import MultiSourceConfig, run_multisource, sample_questions
from prefrag.sources.base import Source
from prefrag.sources.medquad_demo import SITE_STORES

TOPICS = {
    "CancerGov": ("Anal Cancer", "anal cancer forms in the tissues of the anus"),
    "GARD": ("Hurler syndrome", "hurler syndrome causes coarse facial features"),
    "GHR": ("choroideremia", "choroideremia causes progressive vision loss in males"),
    "MPlusHealthTopics": ("Asthma", "asthma inflames and narrows the airways"),
    "NIDDK": ("Acromegaly", "acromegaly results from too much growth hormone"),
    "NINDS": ("Tourette Syndrome", "tourette syndrome involves repetitive tics"),
    "NIHSeniorHealth": ("Glaucoma", "glaucoma damages the optic nerve"),
}


def _medquad(folder: Path) -> Path:
    folder.mkdir()
    for number, (site, (title, text)) in enumerate(TOPICS.items(), start=1):
        rows = [
            {
                "id": f"{site}-{i}",
                "title": title if i == 0 else f"{title} care",
                "content": text if i == 0 else f"general care advice number {i} for {title}",
                "question": f"What is (are) {title} ?" if i == 0 else f"How to care for {i}?",
                "qtype": "information",
                "source": site,
                "url": f"https://example.org/{site}/{i}",
                "umls_cuis": [f"C{number:07d}"] if i == 0 else [],
                "semantic_types": ["T047"],
            }
            for i in range(3)
        ]
        path = folder / f"{number}_{site}.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return folder


def test_questions_are_spread_evenly_over_the_sites(tmp_path: Path) -> None:
    from prefrag.sources.medquad_demo import read_medquad

    rows = read_medquad(_medquad(tmp_path / "mq"))
    asked = sample_questions(rows, 14, seed=0)
    assert {site: len(items) for site, items in asked.items()} == dict.fromkeys(TOPICS, 2)
    assert sample_questions(rows, 14, seed=0) == asked


def _route_to_gard(question: str, sources: Sequence[Source]) -> dict[str, list[str]]:
    return {"gard": [question]} if any(s.name == "gard" for s in sources) else {}


@pytest.mark.slow
def test_every_arm_is_scored_with_and_without_the_graph(tmp_path: Path) -> None:
    config = MultiSourceConfig(
        data=_medquad(tmp_path / "mq"), work=tmp_path / "work", questions=7, corpus_share=1.0
    )
    summary = run_multisource(config, planners={"gard only": _route_to_gard})
    arms = {arm["name"]: arm for arm in summary["arms"]}
    assert set(arms) == {
        "gold-site only",
        "stacked by cosine [sites]",
        "stacked [sites]",
        "balanced [sites]",
        "planned: gard only [sites]",
        "stacked [sites+graph]",
        "balanced [sites+graph]",
        "planned: gard only [sites+graph]",
    }
    assert summary["corpus"] == dict.fromkeys(SITE_STORES.values(), 3)
    assert arms["gold-site only"]["recall"] == 1.0
    assert arms["balanced [sites]"]["recall"] >= 5 / 7
    # The plan searches one site only: it finds that site's gold and no other.
    planned = arms["planned: gard only [sites]"]
    assert planned["per_site"]["gard"] == 1.0 and planned["recall"] == pytest.approx(1 / 7)
    assert set(planned["shares"]) == {"gard"}
    assert "concepts" in arms["stacked [sites+graph]"]["shares"]
    # Only the graph holds definitions copied from the gold snippets.
    assert arms["stacked [sites]"]["gold_definition"] == 0.0
    assert arms["stacked [sites+graph]"]["gold_definition"] > 0.0
    report = (tmp_path / "work" / "report.md").read_text()
    assert f"| balanced [sites] | {arms['balanced [sites]']['recall']:.3f} |" in report
    # A second run reuses the indexes and gives the same numbers.
    again = run_multisource(config, planners={"gard only": _route_to_gard})
    assert [a["recall"] for a in again["arms"]] == [a["recall"] for a in summary["arms"]]


def test_the_command_rejects_a_planner_it_cannot_load(tmp_path: Path) -> None:
    from prefrag.cli import app

    result = CliRunner().invoke(
        app,
        ["eval-sources", "--out", str(tmp_path / "o"), "--data", str(_medquad(tmp_path / "mq")),
         "--planner", "no_such_module:plan"],
    )  # fmt: skip
    assert result.exit_code == 2 and "Cannot load planner" in result.output

"""The sealed check set (bench/sealed/) is consistent and the tuning scorer scores it.

This file reads the set only to check its shape and that the scorer can run on it; it
asserts no accuracy number (nobody tunes on the sealed set: see bench/sealed/README.md).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest
from repo_files import load_file

REPO_ROOT = Path(__file__).resolve().parents[1]
SEALED = REPO_ROOT / "bench" / "sealed"


scorer = load_file(REPO_ROOT / "bench" / "tuning_set.py", "tuning_set_for_sealed")
ITEMS = scorer.load_questions("all", None, SEALED)


def test_the_sealed_set_loads_apart_from_the_tuning_set() -> None:
    """`--set bench/sealed` reads its own questions; the default still reads bench/tuning."""
    assert ITEMS and {item["split"] for item in ITEMS} == {"sealed"}
    assert scorer.load_questions("sealed", None, SEALED) == ITEMS
    tuning_ids = {item["id"] for item in scorer.load_questions("all", None)}
    assert tuning_ids and not tuning_ids & {item["id"] for item in ITEMS}
    assert {item["corpus"] for item in ITEMS} == {"clinic", "interactions", "encyclopedia"}


def test_every_sealed_answerable_item_is_answered_by_its_gold_documents() -> None:
    """Gold ids exist and a gold alias (each group of a list) is in the gold documents."""
    for item in ITEMS:
        if item["docs"] == scorer.UNANSWERABLE:
            continue
        documents = scorer.corpus_documents(item["corpus"], SEALED)
        missing = [doc for doc in item["docs"] if doc not in documents]
        assert not missing, f"{item['id']}: unknown gold documents {missing}"
        text = scorer.normalize(" ".join(documents[doc] for doc in item["docs"]))
        for group in item.get("all_of") or [item["answers"]]:
            assert any(scorer.contains(text, alias) for alias in group), (item["id"], group)


def test_the_sealed_set_has_the_promised_mix() -> None:
    """Unique ids, about a fifth unanswerable, every kind in every corpus' share."""
    assert len({item["id"] for item in ITEMS}) == len(ITEMS) >= 80
    unanswerable = sum(item["docs"] == scorer.UNANSWERABLE for item in ITEMS)
    assert 0.15 <= unanswerable / len(ITEMS) <= 0.3
    kinds = Counter(item["kind"] for item in ITEMS)
    for kind in ("bridge", "followup", "unanswerable", "comparison", "yesno", "list", "figure"):
        assert kinds[kind] >= 6, kind
    assert all(item.get("context") for item in ITEMS if item["kind"] == "followup")


@pytest.mark.slow
def test_the_scorer_scores_the_sealed_set_from_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`bench/tuning_set.py --set bench/sealed --limit 2`: indexes, asks, writes rows."""
    out = tmp_path / "sealed.json"
    argv = ["tuning_set.py", "--set", str(SEALED), "--corpus", "encyclopedia", "--limit", "2"]
    monkeypatch.setattr(sys, "argv", [*argv, "--json", str(out)])
    monkeypatch.setenv("PREFRAG_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PREFRAG_WEB_ENABLED", "false")  # the scorer sets it: undone after
    scorer.main()
    rows = json.loads(out.read_text())["rows"]
    assert [row["id"] for row in rows] == [
        item["id"] for item in ITEMS if item["corpus"] == "encyclopedia"
    ][:2]
    assert all(row["answer"] for row in rows)
    assert "overall" in capsys.readouterr().out


def test_reflection_agreement_reads_rows_scored_on_the_sealed_set(tmp_path: Path) -> None:
    """`reflection_agreement.py --tuning FILE --set bench/sealed` judges against sealed gold."""
    agreement = load_file(
        REPO_ROOT / "bench" / "reflection_agreement.py", "reflection_agreement_for_sealed"
    )
    answerable = next(i for i in ITEMS if i["answers"] and not i.get("polarity"))
    unanswerable = next(i for i in ITEMS if i["docs"] == scorer.UNANSWERABLE)
    rows = [
        {"id": item["id"], "split": "sealed", "answer": answer, "abstained": False}
        | {"first_reflection": "CORRECT", "first_reflection_answer": answer}
        for item, answer in ((answerable, answerable["answers"][0]), (unanswerable, "1901"))
    ]
    path = tmp_path / "rows.json"
    path.write_text(json.dumps({"rows": rows}))
    found = agreement.tuning_agreement(path, SEALED)["sealed"]
    assert (found["n"], found["correct_labels"], found["right"]) == (2, 2, 1)
    assert found["precision"] == 0.5
    with pytest.raises(KeyError):
        agreement.tuning_agreement(path)

"""Our own tuning set (bench/tuning/) is consistent, and its scorer judges answers as documented."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from repo_files import load_file

REPO_ROOT = Path(__file__).resolve().parents[1]


scorer = load_file(REPO_ROOT / "bench" / "tuning_set.py", "tuning_set")


ITEMS = [*scorer.load_questions("all", None), *scorer.load_questions(scorer.UNSEEN, None)]


def test_all_leaves_out_the_unseen_split() -> None:
    """`--split all` (the tuning loop) never shows the split held out this stop."""
    assert not any(item["split"] == scorer.UNSEEN for item in scorer.load_questions("all", None))
    assert {item["split"] for item in ITEMS} >= {"tune", "heldout", scorer.UNSEEN}


def test_every_split_of_the_questions_can_be_asked_for() -> None:
    """`--split NAME` (and the confidence fit's folds) know every split the questions use."""
    assert {item["split"] for item in ITEMS} == set(scorer.SPLITS)
    assert scorer.UNSEEN == scorer.SPLITS[-1]


def test_every_answerable_item_is_answered_by_its_gold_documents() -> None:
    """Gold ids exist, and a gold alias (each group of a list) is in the gold documents' text."""
    for item in ITEMS:
        if item["docs"] == scorer.UNANSWERABLE:
            continue
        documents = scorer.corpus_documents(item["corpus"])
        missing = [doc for doc in item["docs"] if doc not in documents]
        assert not missing, f"{item['id']}: unknown gold documents {missing}"
        text = scorer.normalize(" ".join(documents[doc] for doc in item["docs"]))
        groups = item.get("all_of") or [item["answers"]]
        for group in groups:
            assert any(scorer.contains(text, alias) for alias in group), (item["id"], group)


def test_the_set_has_the_promised_shape() -> None:
    """Ids unique; a fifth unanswerable; both splits hold every corpus and kind."""
    assert len({item["id"] for item in ITEMS}) == len(ITEMS) >= 100
    unanswerable = sum(item["docs"] == scorer.UNANSWERABLE for item in ITEMS)
    assert 0.15 <= unanswerable / len(ITEMS) <= 0.3
    for split in ("tune", "heldout"):
        half = [item for item in ITEMS if item["split"] == split]
        assert {i["corpus"] for i in half} == {"clinic", "interactions", "encyclopedia"}
        kinds = Counter(i["kind"] for i in half)
        for kind in ("bridge", "followup", "unanswerable", "comparison", "yesno", "list"):
            assert kinds[kind] >= 4, (split, kind)
    assert all(item.get("context") for item in ITEMS if item["kind"] == "followup")


FRESH_SPLITS = {
    "fresh": {"clinic2", "interactions2", "encyclopedia2"},
    "fresh2": {"clinic3", "interactions3", "encyclopedia3"},
    "fresh3": {"clinic4", "interactions4", "encyclopedia4"},
    "fresh4": {"clinic5", "interactions5", "encyclopedia5"},
    "fresh5": {"clinic6", "interactions6", "encyclopedia6"},
    "fresh6": {"clinic7", "interactions7", "encyclopedia7"},
    "fresh7": {"clinic8", "interactions8", "encyclopedia8"},
    "fresh8": {"clinic9", "interactions9", "encyclopedia9"},
    "fresh9": {"clinic10", "interactions10", "encyclopedia10"},
    "fresh10": {"clinic11", "interactions11", "encyclopedia11"},
}


@pytest.mark.parametrize("split", sorted(FRESH_SPLITS))
def test_a_fresh_split_loads_on_corpora_of_its_own(split: str) -> None:
    """`--split fresh`...`fresh10`: own three corpora, every kind, a fifth unanswerable."""
    fresh = scorer.load_questions(split, None)
    assert len(fresh) >= 75
    corpora = {item["corpus"] for item in fresh}
    assert corpora == FRESH_SPLITS[split]
    elsewhere = {i["corpus"] for i in ITEMS if i["split"] != split}
    assert not corpora & elsewhere
    for corpus in corpora:
        assert len(scorer.corpus_documents(corpus)) >= 10, corpus
    kinds = Counter(item["kind"] for item in fresh)
    for kind in ("factoid", "figure", "advice", "yesno", "list", "bridge", "comparison"):
        assert kinds[kind] >= 4, kind
    assert kinds["followup"] >= 6 and kinds["unanswerable"] >= 12
    unanswerable = sum(item["docs"] == scorer.UNANSWERABLE for item in fresh)
    assert 0.15 <= unanswerable / len(fresh) <= 0.3


@pytest.mark.parametrize(
    ("split", "prefix"),
    [
        ("fresh5", "6"),
        ("fresh6", "7"),
        ("fresh7", "8"),
        ("fresh8", "9"),
        ("fresh9", "10"),
        (scorer.UNSEEN, "11"),
    ],
    ids=["fresh5", "fresh6", "fresh7", "fresh8", "fresh9", "unseen"],
)
def test_the_recent_splits_have_their_kinds_mix(split: str, prefix: str) -> None:
    """fresh5 to fresh9 and the unseen fresh10: own id prefixes, enough bridges, comparisons
    and follow-ups, 15 to 22 documents per corpus."""
    items = scorer.load_questions(split, None)
    prefixes = {f"clinic{prefix}": f"cl{prefix}-", f"interactions{prefix}": f"ix{prefix}-"}
    prefixes[f"encyclopedia{prefix}"] = f"en{prefix}-"
    assert all(item["id"].startswith(prefixes[item["corpus"]]) for item in items)
    kinds = Counter(item["kind"] for item in items)
    assert kinds["bridge"] >= 25 and kinds["comparison"] >= 15 and kinds["followup"] >= 25
    for corpus in FRESH_SPLITS[split]:
        assert 15 <= len(scorer.corpus_documents(corpus)) <= 22, corpus


def test_the_unseen_split_is_fresh10_and_never_fitted_on() -> None:
    """fresh10 is held out this stop: `all` (and so the confidence fit) includes fresh5 to
    fresh9, tuning splits from stops 31 to 35, and leaves fresh10 out."""
    assert scorer.UNSEEN == "fresh10"
    tuning = {"fresh5", "fresh6", "fresh7", "fresh8", "fresh9"}
    splits = {item["split"] for item in scorer.load_questions("all", None)}
    assert tuning <= splits and "fresh10" not in splits
    fit_confidence = load_file(REPO_ROOT / "bench" / "fit_confidence.py", "fit_confidence")
    assert tuning <= set(fit_confidence.FOLDS)
    assert "fresh10" not in fit_confidence.FOLDS


def _item(**fields: object) -> dict[str, object]:
    return {"docs": ["x"], "answers": [], **fields}


def test_a_fragment_without_the_figure_is_wrong_and_the_figure_in_a_sentence_is_right() -> None:
    """Containment on normalized text: thousands separators and case do not matter."""
    item = _item(answers=["48,300"])
    assert not scorer.is_right(item, "Wednesday")
    assert scorer.is_right(item, "The population was 48300 at the 2021 census.")
    figure = _item(answers=["6 to 8 weeks"])
    assert scorer.is_right(figure, "Check the TSH 6 to 8 weeks after a change of dose.")
    assert not scorer.is_right(figure, "8")


def test_a_figure_is_right_only_when_contained_and_an_explanation_by_most_of_its_words() -> None:
    """Half of a range or another dose is wrong; a reworded explanation is right."""
    figure = _item(answers=["4 to 9 months"])
    assert not scorer.is_right(figure, "9 months")
    dose = _item(answers=["7.5 mg once nightly"])
    assert not scorer.is_right(dose, "5 mg once nightly")
    explanation = _item(answers=["the pads dry out the skin around the corn"])
    assert scorer.is_right(explanation, "The pads dry out the skin around a corn.")


def test_yes_no_items_need_the_right_polarity_or_the_deciding_phrase() -> None:
    """A bare opposite answer is wrong even when it quotes the note."""
    item = _item(polarity="no", answers=["must not be combined"])
    assert scorer.is_right(item, "No. They must not be combined.")
    assert scorer.is_right(item, "Methotrexate must not be combined with trimethoprim.")
    assert not scorer.is_right(item, "Yes, but they must not be combined for long.")
    assert not scorer.is_right(item, "Methotrexate is taken once weekly.")


def test_list_items_need_every_group() -> None:
    """One item of a list is not the list."""
    item = _item(all_of=[["coal"], ["hemp"], ["grain"]])
    assert not scorer.is_right(item, "It carried coal.")
    assert scorer.is_right(item, "It carried coal, hemp and grain until 1958.")


def test_a_comparison_answer_that_opens_with_the_other_side_is_wrong() -> None:
    """Naming both sides is not enough: the side the answer opens with is its choice."""
    item = _item(answers=["Brackley Hall"], opposite=["Fennick Lodge"])
    assert not scorer.is_right(item, "Fennick Lodge. Brackley Hall has 40 beds, Fennick Lodge 12.")
    assert scorer.is_right(item, "Brackley Hall. It has 40 beds, Fennick Lodge 12.")
    assert scorer.is_right(item, "The larger one is Brackley Hall (40 beds).")


def test_unanswerable_items_are_never_right_and_citations_map_to_tuning_ids() -> None:
    """Any answer to an unanswerable item counts against; file citations become file stems."""
    assert not scorer.is_right({"docs": scorer.UNANSWERABLE, "answers": []}, "Edderton")
    result = {
        "citations": [
            {"url": "file:///tmp/x/clinic/docs/gout.md", "document": "a1b2"},
            {"url": "", "document": "fluconazole"},
        ]
    }
    assert scorer.cited_documents(result) == ["gout", "fluconazole"]
    row = scorer.judge(
        {
            **_item(answers=["Sallow"]),
            "id": "t",
            "corpus": "c",
            "kind": "k",
            "split": "tune",
            "question": "q",
        },
        {"answer": "Venn"},
        f1=0.5,
    )
    assert row["confidently_wrong"] and not row["right"]


@pytest.mark.slow
def test_the_scorer_indexes_a_corpus_and_asks_through_the_api(tmp_path: Path) -> None:
    """`prefrag index` into a fresh home, then `prefrag.ask`: one question gets an answer."""
    items = [i for i in ITEMS if i["corpus"] == "encyclopedia"][:1]
    scorer.index_corpus("encyclopedia", tmp_path)
    assert (tmp_path / "sources" / "encyclopedia").is_dir()
    (result,) = scorer.ask_corpus("encyclopedia", items, tmp_path)
    assert result["answer"]


def test_a_pasted_document_or_a_bare_number_is_not_an_answer() -> None:
    """Markdown syntax, a 100-word dump, or a number without its unit is not right."""
    item = _item(answers=["severe bronchospasm"])
    assert not scorer.is_right(item, "# Asthma: clinic notes ## Avoid: severe bronchospasm")
    assert not scorer.is_right(item, "word " * 101 + "severe bronchospasm")
    assert not scorer.is_right(item, "| Propranolol | severe bronchospasm |")
    assert not scorer.is_right(item, "|---|---| Propranolol: severe bronchospasm")
    assert scorer.is_right(item, "Propranolol can cause severe bronchospasm in asthma.")
    dose = _item(answers=["6 mg"])
    assert not scorer.is_right(dose, "6")
    assert scorer.is_right(dose, "No more than 6 mg of colchicine in one course.")

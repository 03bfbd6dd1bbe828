from __future__ import annotations

import json

import pytest

from prefrag.datasets import load_dataset
from prefrag.errors import IngestError


def _write(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


IRCOT_ROW = {
    "question_id": "q1",
    "question_text": "Who?",
    "answers_objects": [{"number": "", "spans": ["Ann"]}, {"spans": ["Anne"]}],
    "contexts": [
        {"id": "0", "title": "T0", "paragraph_text": "x", "is_supporting": False},
        {"id": "1", "title": "T1", "paragraph_text": "y", "is_supporting": True},
        {"id": "2", "title": "T2", "paragraph_text": "z", "is_supporting": True},
    ],
}


def test_ircot_hotpotqa_file_loads_answers_and_gold_paragraphs(tmp_path):
    data = load_dataset(_write(tmp_path / "h.jsonl", [IRCOT_ROW]))
    (item,) = data.items
    assert data.task == "qa"
    assert item.answers == ("Ann", "Anne")
    assert item.gold_titles == ["T1", "T2"]
    assert len(item.paragraphs) == 3


def test_flashrag_file_loads(tmp_path):
    rows = [
        {"id": "a", "question": "Q?", "golden_answers": ["x", "y"], "metadata": {"type": "b"}},
        {"question": "R?", "golden_answers": "z"},
    ]
    data = load_dataset(_write(tmp_path / "f.jsonl", rows))
    assert [i.id for i in data.items] == ["a", "1"]
    assert data.items[1].answers == ("z",)
    assert data.items[0].metadata == {"type": "b"}


def test_mirage_json_loads_multiple_choice(tmp_path):
    payload = {
        "medqa": {"0001": {"question": "Q?", "options": {"A": "a", "B": "b"}, "answer": "b"}}
    }
    path = tmp_path / "m.json"
    path.write_text(json.dumps(payload))
    (item,) = load_dataset(path).items
    assert item.task == "mc"
    assert item.answers == ("B",)
    assert item.options == {"A": "a", "B": "b"}
    assert item.id == "medqa/0001"


def test_medquad_folder_is_a_retrieval_set_with_its_corpus(tmp_path):
    folder = tmp_path / "mq"
    folder.mkdir()
    _write(folder / "1.jsonl", [{"id": "s1", "title": "T", "content": "c", "question": "q?"}])
    _write(folder / "2.jsonl", [{"id": "s2", "title": "U", "content": "d", "question": "r?"}])
    data = load_dataset(folder)
    assert data.task == "retrieval"
    assert [i.gold_doc_ids for i in data.items] == [("s1",), ("s2",)]
    assert [r["text"] for r in data.corpus] == ["c", "d"]


def test_bad_files_say_where(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "golden_answers": ["a"]}\n{oops\n')
    with pytest.raises(IngestError, match=r"bad.jsonl:2"):
        load_dataset(bad)
    odd = _write(tmp_path / "odd.jsonl", [{"foo": 1}])
    with pytest.raises(IngestError, match="unrecognised"):
        load_dataset(odd)
    with pytest.raises(IngestError, match="does not exist"):
        load_dataset(tmp_path / "missing.jsonl")


def test_shared_data_loads(shared_data):
    hotpot = load_dataset(shared_data / "hotpotqa" / "hotpotqa_dev_350.jsonl")
    assert len(hotpot) == 350
    assert all(len(i.gold_titles) == 2 for i in hotpot.items)
    mirage = load_dataset(shared_data / "mirage" / "mirage_medqa.json")
    assert len(mirage) == 1273
    assert all(i.answers[0] in i.options for i in mirage.items)
    medquad = load_dataset(shared_data / "medquad")
    assert len(medquad.items) == len(medquad.corpus) == 15578

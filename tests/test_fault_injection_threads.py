"""Fault injection, threads: concurrent runs on one thread, and a damaged checkpoint store.

Runs on one thread take turns (no turn vanishes from `history`); a checkpoint file whose
header is intact but whose pages are damaged is one sentence and exit 2, never a traceback.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from indexed_notes import thread_graph
from typer.testing import CliRunner

import prefrag
from prefrag.cli import app
from prefrag.thread_locks import thread_lock

runner = CliRunner()
PREFRAG = Path(sys.executable).parent / "prefrag"
ASK = ["--source", "notes", "--no-web", "--max-reflections", "0"]
NOTES = [
    {"id": "n1", "title": "Warfarin and NSAIDs", "text": "Ibuprofen raises the INR on warfarin."},
    {"id": "n2", "title": "Statins", "text": "Grapefruit juice raises simvastatin levels."},
    {"id": "n3", "title": "Gout", "text": "Colchicine eases the pain of a gout flare."},
]
FIRST, SECOND, THIRD = (
    "What raises the INR on warfarin?",
    "What raises simvastatin levels?",
    "What eases the pain of a gout flare?",
)


@pytest.fixture
def notes(tmp_path: Path) -> None:
    corpus = tmp_path / "notes.jsonl"
    corpus.write_text("\n".join(json.dumps(n) for n in NOTES) + "\n")
    assert runner.invoke(app, ["index", str(corpus), "--source", "notes"]).exit_code == 0


def _asked(thread: str) -> list[str]:
    """Every question the thread kept: its history and its latest question."""
    shown = runner.invoke(app, ["ask", "--thread", thread, "--json"])
    assert shown.exit_code == 0, shown.output
    record = json.loads(shown.stdout)
    return [turn["question"] for turn in record["history"]] + [record["question"]]


def _start(question: str, thread: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(PREFRAG), "ask", question, *ASK, "--thread", thread],
        env=os.environ.copy(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


# --- concurrent runs on one thread ----------------------------------------------------------


@pytest.mark.slow
def test_two_processes_asking_on_one_thread_keep_both_turns(notes):
    assert runner.invoke(app, ["ask", FIRST, *ASK, "--thread", "t1"]).exit_code == 0
    both = [_start(SECOND, "t1"), _start(THIRD, "t1")]
    outputs = [process.communicate(timeout=300) for process in both]
    assert [process.returncode for process in both] == [0, 0], outputs
    assert sorted(_asked("t1")) == sorted([FIRST, SECOND, THIRD])
    assert any("waiting for it to end" in err for _, err in outputs)  # one took its turn


@pytest.mark.slow
def test_a_run_waits_while_another_process_holds_the_thread(notes):
    from prefrag.config import get_settings

    assert runner.invoke(app, ["ask", FIRST, *ASK, "--thread", "t2"]).exit_code == 0
    with thread_lock(get_settings().checkpoint_db, "t2"):
        waiting = _start(SECOND, "t2")
        time.sleep(20)  # long enough for an unlocked run to finish
        assert waiting.poll() is None, waiting.communicate()
    _, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 0, err
    assert "Another run is using thread 't2'" in " ".join(err.split())
    assert _asked("t2") == [FIRST, SECOND]


def test_threads_of_one_process_asking_on_one_thread_keep_every_turn(notes):
    graph = thread_graph()
    settings = {"preferred_source": "notes", "fallback_sources": [], "max_reflections": 0}
    prefrag.ask(FIRST, graph=graph, thread_id="t3", **settings)
    errors: list[BaseException] = []

    def ask(question: str) -> None:
        try:
            prefrag.ask(question, graph=graph, thread_id="t3", **settings)
        except BaseException as error:  # handed to the test's thread
            errors.append(error)

    workers = [threading.Thread(target=ask, args=(q,)) for q in (SECOND, THIRD)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert not errors
    state = graph.get_state({"configurable": {"thread_id": "t3"}}).values
    kept = [turn["question"] for turn in state["history"]] + [state["question"]]
    assert sorted(kept) == sorted([FIRST, SECOND, THIRD])


# --- a damaged checkpoint store -------------------------------------------------------------


def _stored_thread(home: Path) -> bytes:
    result = runner.invoke(app, ["ask", FIRST, *ASK, "--thread", "t1"])
    assert result.exit_code == 0, result.output
    return (home / "checkpoints.sqlite").read_bytes()


def test_a_record_with_invalid_text_is_one_sentence_and_exit_2(notes, _isolated_home):
    data = bytearray(_stored_thread(_isolated_home))
    assert data[:16] == b"SQLite format 3\x00"
    # Every stored copy of the question becomes invalid UTF-8; the header stays intact.
    needle = FIRST.encode()
    start = data.find(needle, 100)
    assert start > 0
    while start > 0:
        data[start] = 0xFF
        start = data.find(needle, start + 1)
    (_isolated_home / "checkpoints.sqlite").write_bytes(bytes(data))
    for args in (["ask", "--thread", "t1"], ["ask", SECOND, *ASK, "--thread", "t1"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        text = " ".join(result.output.split())
        assert "holds a damaged record for thread 't1'" in text
        assert "Traceback" not in result.output
    # Other threads of the same file still work.
    assert runner.invoke(app, ["ask", SECOND, *ASK, "--thread", "t9"]).exit_code == 0


def test_random_damage_to_the_pages_never_gives_a_traceback(notes, _isolated_home):
    good = _stored_thread(_isolated_home)
    outcomes = set()
    for seed in range(12):
        data = bytearray(good)
        rng = random.Random(seed)
        for _ in range(200):  # the header and the schema page (page 1) stay intact
            data[rng.randrange(4096 * 2, len(data))] = rng.randrange(256)
        (_isolated_home / "checkpoints.sqlite").write_bytes(bytes(data))
        result = runner.invoke(app, ["ask", "--thread", "t1"])
        assert result.exit_code in (0, 2), (seed, result.exception)
        assert "Traceback" not in result.output
        if result.exit_code == 2:
            assert "checkpoint store" in result.output
        outcomes.add(result.exit_code)
    assert 2 in outcomes  # the damage was noticed at least once

"""A question typed in lower case is read like the same question with its capitals.

Users type "how long is the orrin tunnel"; the reasoner tells names by their capitals, so
without them it saw no name to check and answered from another tunnel's note. Through `prefrag
index` and `prefrag ask --json`, on invented notes: the lower-case question gets the cased
question's answer, or its abstention; and a name is told apart by its rarest word ("Orrin"),
not by the "Tunnel" another tunnel's note also writes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home
from langchain_core.documents import Document

from prefrag.reasoners._truecase import truecase

NOTES = {
    "rail/brack-tunnel.txt": (
        "The Brack Tunnel carries the Ollerby branch line under Scawfell Ridge. The Brack "
        "Tunnel is 1.2 km long and opened in 1889.\n"
    ),
    "rail/ollerby-branch-line.txt": (
        "The Ollerby branch line serves the villages of Orrin and Kelby. North of Orrin the "
        "line enters the Orrin Tunnel, begun in 1890 and never finished; trains still use the "
        "older cutting beside it.\n"
    ),
    "rail/scawfell-ridge.txt": (
        "Scawfell Ridge is a limestone escarpment above the Ollerby valley. Its highest point, "
        "Tarn Knott, is 412 m high; the Ollerby branch line passes under it.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ["rail"]) as path:
        yield path


@pytest.mark.parametrize(
    "question",
    [
        "How long is the Orrin Tunnel?",
        "how long is the orrin tunnel",
        "When did the Orrin Tunnel open?",
        "when did the orrin tunnel open",
    ],
)
def test_another_tunnels_note_does_not_answer_for_the_tunnel_asked(question) -> None:
    result = ask_json(question, "rail")
    assert result["abstained"], result["answer"]
    assert "Brack" not in result["answer"]


@pytest.mark.parametrize(
    "question", ["How long is the Brack Tunnel?", "how long is the brack tunnel"]
)
def test_the_tunnel_a_note_measures_is_answered_either_way(question) -> None:
    result = ask_json(question, "rail")
    assert not result["abstained"], result["answer"]
    assert "1.2 km" in result["answer"]


def test_capitals_come_from_names_written_in_mid_sentence() -> None:
    notes = [
        Document(
            page_content=(
                "# Opening Hours\nThe Orrin Tunnel was begun in 1890. We open on Saturday "
                "mornings. CARPAL TUNNEL CLINIC notes. The tunnel floods in winter."
            ),
            metadata={"title": "Orrin Tunnel"},
        )
    ]
    assert truecase("when was the orrin tunnel begun", notes) == "when was the Orrin Tunnel begun"
    # A heading in title case, a word shouted in capitals and a capital a sentence opens
    # with name nothing.
    assert truecase("what are the opening hours", notes) == "what are the opening hours"
    assert truecase("is there a carpal clinic", notes) == "is there a carpal clinic"
    assert truecase("is the saturday clinic busy", notes) == "is the Saturday clinic busy"
    # The user's own capitals are kept as typed.
    assert truecase("When was the orrin Tunnel begun?", notes) == "When was the orrin Tunnel begun?"

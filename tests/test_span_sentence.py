"""A short span answers only from a sentence about as confident as the best one.

"What did the harbour at Brellow Quay ship?" is answered by the sentence saying what it
shipped ("wool and slate", no name in it), not by a name read from a less relevant sentence
of the same note ("the Great Gale", "Pellam Ironworks"). Through `prefrag index` on a
user's own notes and `prefrag ask --json`. The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "coast/brellow-quay.txt": (
        "Brellow Quay is a small port on the invented Morrant Firth, with a population of"
        " 3,120. Its harbour shipped wool and slate until 1950 and now serves fishing boats."
        " The harbour wall was rebuilt after the Great Gale of 1903 by the Pellam Ironworks."
        " The chapel on the quay dates from 1788.\n"
    ),
    "coast/morrant-firth.txt": (
        "The Morrant Firth is an invented sea inlet with three ports: Brellow Quay, Sallis"
        " and Orrin Head. Seals breed on its sandbanks.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("coast",)) as home:
        yield home


def test_a_span_from_a_less_confident_sentence_does_not_answer() -> None:
    record = ask_json("What did the harbour at Brellow Quay ship?", "coast")
    assert not record["abstained"], record["answer"]
    answer = record["answer"].lower()
    assert "wool and slate" in answer, record["answer"]
    assert "gale" not in answer and "ironworks" not in answer, record["answer"]

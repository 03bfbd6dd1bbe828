"""The answer confidence gate as a user meets it: a confident answer is shown with its
confidence, a doubtful one is withheld saying why and what weighs most against it.

A user indexes invented notes about a lake, a village and a stream (`prefrag index`) and
asks with `prefrag ask --json`, with the default (fitted) confidence. The gate reads where
the answer's note stands in the search: an answer from the note ranked first is trusted
more than one from a note ranked below another.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "places/kestle-water.md": """# Kestle Water

Kestle Water is a lake in the hills above the village of Ormsby Cross.
It was formed when a glacier retreated about twelve thousand years ago.
The lake is 41 metres deep and is home to a rare fish, the Kestle char.
Boating is allowed only for members of the Ormsby Cross sailing club.
""",
    "places/ormsby-cross.md": """# Ormsby Cross

Ormsby Cross is a village of about 1,200 people at the foot of Kestle Fell.
Its stone cross was put up in 1347 after the village survived the plague.
The annual sheep fair is held on the last Saturday of September.
""",
}
WITHHELD = re.compile(
    r"surely enough \(confidence (?P<probability>[0-9.]+), below (?P<threshold>[0-9.]+);"
    r" most against it: (?P<against>[^)]+)\)"
)


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One data directory for the module, the notes indexed as one source."""
    with indexed_home(tmp_path_factory, NOTES, ("places",)) as home:
        yield home


pytestmark = pytest.mark.usefixtures("default_confidence")


def test_an_answer_from_the_first_ranked_note_is_shown_with_its_confidence() -> None:
    """The lake's own note says who may go boating: the answer is shown, citing it, and
    `--json` carries its fitted confidence, above the threshold of sentence answers."""
    from prefrag.reasoners._confidence import load_model

    model = load_model()
    assert model is not None
    record = ask_json("Who can go boating on Kestle Water?", "places")
    assert not record["abstained"], record["answer"]
    assert "sailing club" in record["answer"]
    assert model.answer_threshold <= record["confidence"] <= 1.0
    assert any("kestle-water" in str(c.get("url", "")) for c in record["citations"])


@pytest.mark.parametrize(
    "question",
    [
        # A lake has no population: the closest sentence only names a village. ("What
        # fish lives in Ormsby Cross?" no longer reaches the gate: the lake's note names the
        # village only on the way, and the subject check abstains first.)
        "What is the population of Kestle Water?",
    ],
)
def test_a_doubtful_answer_is_withheld_with_what_weighs_most_against_it(question: str) -> None:
    """The answer is withheld: the reason gives the fitted confidence, the threshold it
    missed and what lowers it most, quotes the closest evidence, and cites nothing;
    `--json` gives the abstention's confidence (1 minus the answer's)."""
    record = ask_json(question, "places")
    assert record["abstained"], record["answer"]
    withheld = WITHHELD.search(record["answer"])
    assert withheld, record["answer"]
    probability = float(withheld["probability"])
    assert probability < float(withheld["threshold"])
    assert withheld["against"].strip()
    assert "the closest evidence is" in record["answer"]
    assert record["citations"] == []
    assert record["confidence"] == pytest.approx(1.0 - probability, abs=0.006)

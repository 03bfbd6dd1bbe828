"""Yes/no verdicts read from the clause that states what is asked, as a user meets them:
`prefrag index` on their own notes, then `prefrag ask --json`.

The deciding sentence often says it in a clause next to others: "none on Saturdays" after
the weekday times, "was last cut in 1958" for "still cut", "shut on Tuesdays" for
"open on Tuesdays", "has been repaired and rings again" for "still ring". The verdict
follows that clause's polarity, not the sentence's overlap with the question. A sentence
giving the asked relation another value ("Born at Quenby" for "born in Oskley?") says
"no", or does not decide when nothing says the two places differ. A contrast ("for five
years rather than for life") denies what follows it; a bracketed list without a verb is read
within its clause ("Antacids (tablets, gums) must not be taken"); a sentence only about the
past ("in the 1840s it spun rope") does not say a state still holds. The notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "places/brill-water-bus.md": """# Brill Water Bus

The Brill Water Bus carries foot passengers across the Marl estuary from Oskley.
In summer there are six sailings a day on weekdays and none on Saturdays.
""",
    "places/dunmarl-quarry.md": """# Dunmarl Quarry

Dunmarl Quarry is a granite quarry above the village of Oskley.
Granite was last cut at Dunmarl Quarry in 1958, by the Marl Stone Company.
""",
    "places/oskley-museum.md": """# Oskley Museum

The Oskley Museum holds the Marl estuary's fishing boats and nets.
The museum is open from 10:00 to 16:00 and shut on Tuesdays.
""",
    "places/oskley-bell.md": """# Oskley Chapel Bell

The Oskley chapel bell was cast in 1722 for the fishermen's chapel.
The bell, cracked in a storm, has been repaired and rings again on feast days.
""",
    "places/tamsin-hale.md": """# Tamsin Hale

Tamsin Hale (1868-1941) was a lacemaker of the Marl estuary. Born at Quenby, she married an
Oskley boatman in 1889 and taught lace in Oskley for forty years.
""",
    "places/rolf-anning.md": """# Rolf Anning

Captain Rolf Anning built the Oskley lighthouse in 1851. He retired to Fenwick House above
Oskley; he is buried in the churchyard at Quenby.
""",
    "places/harrow-ropewalk.md": """# Harrow Ropewalk

Harrow Ropewalk is a long stone shed on the quay at Oskley.
At its busiest in the 1840s the ropewalk spun about 90 tons of hemp rope a year for the boats.
""",
    "places/quenby-reeves.md": """# Quenby Reeves

The Quenby reeves look after the common grazing of the Marl marshes.
The three reeves, who today are elected by the commoners for a term of five years rather
than for life, meet twice a year.
""",
    "places/corvalene.md": """# Corvalene

Corvalene 20 mg once a day is taken to prevent migraine.
Antacids (tablets, liquids, chewing gums) must not be taken with corvalene because they
stop it being absorbed.
""",
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One data directory for the module, holding the notes indexed."""
    with indexed_home(tmp_path_factory, NOTES, ("places",)) as home:
        yield home


@pytest.mark.parametrize(
    ("question", "verdict"),
    [
        # A negative clause about the asked day, after an affirmative one about others.
        ("Does the Brill Water Bus sail on Saturdays in summer?", "no"),
        # "Still" asked, an ended state said.
        ("Is granite still cut at Dunmarl Quarry?", "no"),
        # The opposite of the asked word.
        ("Is the Oskley Museum open on Tuesdays?", "no"),
        # "Still" asked, the state said to hold again.
        ("Does the Oskley chapel bell still ring?", "yes"),
        # The asked relation with another value, the asked place named elsewhere.
        ("Was Tamsin Hale born in Oskley?", "no"),
        ("Was Tamsin Hale born in Quenby?", "yes"),
        ("Is Rolf Anning buried in Oskley?", "no"),
        ("Is Rolf Anning buried at Quenby?", "yes"),
        # What is not so, named after "rather than".
        ("Are the Quenby reeves still elected for life?", "no"),
        # A bracketed gloss without a verb is read within the negated clause around it.
        ("Is antacid chewing gum ok with corvalene?", "no"),
    ],
)
def test_the_verdict_follows_the_clause_that_states_the_asked_property(
    question: str, verdict: str
) -> None:
    record = ask_json(question, "places")
    assert not record["abstained"], record["answer"]
    opposite = "No." if verdict == "yes" else "Yes."
    assert not record["answer"].startswith(opposite), record["answer"]
    assert record["answer"].startswith(f"{verdict.capitalize()}."), record["answer"]


def test_another_value_for_an_unknown_place_does_not_decide() -> None:
    """'Born at Quenby' does not say whether Quenby is in a county no note mentions."""
    record = ask_json("Was Tamsin Hale born in Cornwall?", "places")
    assert record["abstained"], record["answer"]
    assert "Quenby" in record["answer"], record["answer"]


def test_a_sentence_only_about_the_past_does_not_say_it_still_holds() -> None:
    """'At its busiest in the 1840s it spun rope' does not say it spins rope now."""
    record = ask_json("Does Harrow Ropewalk still spin rope?", "places")
    assert not record["answer"].startswith("Yes."), record["answer"]
    assert record["abstained"], record["answer"]

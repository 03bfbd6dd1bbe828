"""Who-questions answered with a person, as a user meets them: `prefrag index` on their own
notes, then `prefrag ask --json`.

"Who does X" is not answered by where X is done (a health centre), by a day's short form
from a timetable ("Tue"), by a role ("Senior Audiologist") or by a word capitalised only
because it opens a sentence ("Welcome"): the person is read from the most confident
sentence that names one (a staff table's row), and a name set beside the asked role by
apposition ("our new hearing assistant, Dilys Parvey, ...") is the one it describes. The
notes are invented.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from indexed_notes import ask_json, indexed_home

NOTES = {
    "hearing/brackwater-hearing-service.md": (
        "# Brackwater Hearing Service: who we are\n\n"
        "Brackwater Hearing Service, Quenby Road Clinic.\n\n"
        "The Brackwater Hearing Service sees adults registered with a GP in the Brackwater"
        " district, at the Quenby Road Clinic and at two village halls.\n\n"
        "## Our team\n\n"
        "| name | role | main days | special interest |\n"
        "|---|---|---|---|\n"
        "| Rhoswen Tarrant | Lead Audiologist | Mon, Tue, Wed | tinnitus |\n"
        "| Ansel Quarmby | Senior Audiologist | Tue, Thu, Fri | ear wax removal |\n"
        "| Oren Castle | Hearing Assistant | Mon to Fri | repairs, home visits |\n\n"
        "Ear wax removal takes a 40-minute slot. Hearing tests take an hour.\n"
    ),
    "hearing/wax-clinic-notice.txt": (
        "Ear wax removal moves to Quenby Road\n\n"
        "From 1 March ear wax removal at Brackwater is done on Tuesday mornings at the"
        " Quenby Road Clinic, where the new room has a proper chair and sink.\n"
    ),
    "hearing/team-news.txt": (
        "Team news, spring\n\n"
        "Rhoswen Tarrant has finished her tinnitus course and now runs a tinnitus group on"
        " Thursday evenings. Welcome to our new hearing assistant, Dilys Parvey, who will"
        " share the home visits with Oren Castle.\n"
    ),
}


@pytest.fixture(scope="module", autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with indexed_home(tmp_path_factory, NOTES, ("hearing",)) as home:
        yield home


def test_who_does_it_is_answered_with_a_person_not_a_day_or_place() -> None:
    record = ask_json("who does the ear wax removal at brackwater hearing service?", "hearing")
    assert not record["abstained"], record["answer"]
    assert "Ansel Quarmby" in record["answer"], record
    assert record["short_answer"] not in ("Tue", "Thu", "Fri", "Quenby Road Clinic"), record


def test_the_name_in_apposition_to_the_asked_role_answers() -> None:
    record = ask_json("who's the new hearing assistant?", "hearing")
    assert not record["abstained"], record["answer"]
    assert "Dilys Parvey" in record["answer"], record
    assert record["short_answer"] not in ("Welcome", "Oren Castle"), record

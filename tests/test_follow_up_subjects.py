"""A follow-up's standalone question keeps the whole earlier subject.

Through the API on a thread, with invented notes: "the Kelderby outreach clinic" is one
subject (a name and the kind of thing it names), "the home cooking assessment" keeps its
noun in -ing, and "who was it built for" asks it of the earlier subject (a stranded "for"
is no expletive "it ... for").
"""

from __future__ import annotations

from pathlib import Path

import pytest
from indexed_notes import index_notes, thread_graph

import prefrag

RUN = {"preferred_source": "notes", "fallback_sources": [], "max_reflections": 0}

NOTES = {
    "kelderby-outreach": "# Kelderby outreach clinic\n\n"
    "The Kelderby outreach clinic is held on Wednesdays at Kelderby Village Hall. The "
    "Kelderby outreach clinic runs from 2 pm to 5 pm.",
    "hollinsford-granary": "# Hollinsford Granary\n\n"
    "Hollinsford Granary is a timber-framed store on the quay at Hollinsford. It was built "
    "in 1742 for the corn merchant Josiah Penrick.",
    "kitchen-safety": "# Kitchen safety visits\n\n"
    "The home cooking assessment takes about an hour in the person's own kitchen. "
    "The home cooking assessment is free of charge.",
}


@pytest.fixture
def graph(tmp_path: Path):
    index_notes(tmp_path / "notes", NOTES, "notes")
    return thread_graph()


def test_a_name_and_its_kind_are_one_subject(graph):
    prefrag.ask("When is the Kelderby outreach clinic held?", graph=graph, thread_id="k", **RUN)
    result = prefrag.ask("what times does it run?", graph=graph, thread_id="k", **RUN)
    assert "Kelderby outreach clinic run" in result["standalone_question"], result[
        "standalone_question"
    ]


def test_a_noun_in_ing_stays_in_the_subject(graph):
    prefrag.ask(
        "how long does the home cooking assessment take?", graph=graph, thread_id="c", **RUN
    )
    result = prefrag.ask("and what does it cost?", graph=graph, thread_id="c", **RUN)
    assert "home cooking assessment cost" in result["standalone_question"], result[
        "standalone_question"
    ]


def test_it_before_a_stranded_for_is_the_earlier_subject(graph):
    prefrag.ask("when was Hollinsford Granary built?", graph=graph, thread_id="g", **RUN)
    result = prefrag.ask("who was it built for", graph=graph, thread_id="g", **RUN)
    assert "Hollinsford Granary built for" in result["standalone_question"], result[
        "standalone_question"
    ]
    assert "Josiah Penrick" in result["answer"], result["answer"]

import json

import pytest

from prefrag.config import get_settings
from prefrag.documents import doc_id, make_document
from prefrag.reasoners.base import Feedback, Reasoner, ScratchpadStep
from prefrag.reasoners.extractive import ExtractiveReasoner

BRIDGE_Q = (
    "Which civic office was later held by the engraver who cut the river seal of the "
    "Tollmere Guild?"
)


def doc(text, title, id=None):
    return make_document(text, id=id or title.lower().replace(" ", "-"), source="demo", title=title)


SEAL = doc(
    "The river seal of the Tollmere Guild was cut in 1911 by the young engraver Brannoc Vell. "
    "It shows a barge passing under a crescent moon.",
    "Tollmere Guild river seal",
)
GUILD = doc(
    "The Tollmere Guild, a fellowship of river pilots, met every Thursday in the Lantern Hall "
    "from 1890 until 1952.",
    "Tollmere Guild",
)
VELL = doc(
    "Brannoc Vell (June 2, 1889 \u2013 October 9, 1960) was an engraver and town official. "
    "In later life he held the civic office of Keeper of Weirs for the borough of "
    "Tollmere.",
    "Brannoc Vell",
)
REEVE = doc(
    "The Reeve of Saltings was a civic office of the old fen boroughs from 1640 until 1835.",
    "Reeve of Saltings",
)
BAKING = doc(
    "Sourdough bread is leavened by wild yeast and lactic acid bacteria rather than baker's yeast.",
    "Sourdough",
)


@pytest.fixture
def reasoner():
    return ExtractiveReasoner(use_embeddings=False)


def step(query, *docs):
    return ScratchpadStep(thought="", query=query, source="demo", observation=list(docs))


def test_satisfies_the_reasoner_protocol(reasoner):
    assert isinstance(reasoner, Reasoner)


def test_first_step_searches_with_the_question(reasoner):
    decision = reasoner.think(BRIDGE_Q, [], sources=["demo"])
    assert decision.action == "search"
    assert decision.query == BRIDGE_Q


def test_bridge_sub_query_uses_an_entity_from_the_first_observation(reasoner):
    decision = reasoner.think(BRIDGE_Q, [step(BRIDGE_Q, SEAL, GUILD)], sources=["demo"])
    assert decision.action == "search"
    assert "Brannoc Vell" in decision.query
    # The unresolved part of the question travels with the bridge entity.
    assert "civic" in decision.query.lower()


def test_answers_once_the_bridge_document_is_held(reasoner):
    scratchpad = [
        step(BRIDGE_Q, SEAL, GUILD),
        step("Brannoc Vell civic office", VELL),
    ]
    decision = reasoner.think(BRIDGE_Q, scratchpad, sources=["demo"])
    assert decision.action == "answer"
    draft = reasoner.answer(BRIDGE_Q, scratchpad, [SEAL, GUILD, VELL])
    assert draft.answer == "Keeper of Weirs"
    assert doc_id(VELL) in draft.cited_ids


def test_forced_answer_answers_from_held_evidence(reasoner):
    decision = reasoner.think(BRIDGE_Q, [step(BRIDGE_Q, SEAL)], sources=["demo"], force_answer=True)
    assert decision.action == "answer"
    # Only the seal note is held: the answer is its sentence naming the engraver, cited to it,
    # and nothing from the unseen note (the office itself) is invented.
    assert decision.answer == (
        "The river seal of the Tollmere Guild was cut in 1911 by the young engraver Brannoc Vell."
    )
    assert decision.cited_ids == [doc_id(SEAL)]
    assert "Keeper of Weirs" not in decision.answer


def test_compare_false_for_duplicates_by_id_and_by_text(reasoner):
    same_text = doc(SEAL.page_content, "Tollmere Guild seal copy", id="another-id")
    verdict = reasoner.compare(BRIDGE_Q, [SEAL, GUILD], [SEAL, same_text])
    assert verdict.status is False
    assert verdict.analysis


def test_compare_false_for_irrelevant_new_documents(reasoner):
    verdict = reasoner.compare(BRIDGE_Q, [SEAL, GUILD], [BAKING])
    assert verdict.status is False


def test_compare_false_when_nothing_new_was_found(reasoner):
    assert reasoner.compare(BRIDGE_Q, [SEAL], []).status is False


def test_compare_true_for_a_new_relevant_document(reasoner):
    verdict = reasoner.compare(BRIDGE_Q, [SEAL, GUILD], [VELL, BAKING])
    assert verdict.status is True
    assert "Brannoc Vell" in verdict.analysis


def test_yes_no_same_country():
    reasoner = ExtractiveReasoner(use_embeddings=False)
    question = "Did Ilse Varro and Teodor Brask come from the same country?"
    varro = doc(
        "Ilse Varro (born 14 October 1984) is a Finnish harpist who records folk songs from "
        "the eastern lakes.",
        "Ilse Varro",
    )
    brask = doc(
        "Teodor Brask (1902 \u2013 1977) was a Finnish boat builder who designed racing canoes.",
        "Teodor Brask",
    )
    danish_brask = doc(brask.page_content.replace("Finnish", "Danish"), "Teodor Brask", id="tb-dk")
    yes = reasoner.answer(question, [], [varro, brask])
    no = reasoner.answer(question, [], [varro, danish_brask])
    assert yes.short_answer == "yes" and yes.answer.startswith("Yes. ")
    assert no.short_answer == "no" and no.answer.startswith("No. ")
    assert set(yes.cited_ids) == {doc_id(varro), doc_id(brask)}


def test_yes_no_both_have_a_property(reasoner):
    question = "Are the Copperleaf Arcade and the Weyhill Exchange both used as concert venues?"
    arcade = doc(
        "The Copperleaf Arcade is a glass-roofed shopping arcade in Dunmere with a rooftop "
        "garden and a clock by a local maker.",
        "Copperleaf Arcade",
    )
    exchange = doc(
        "The Weyhill Exchange is a former corn exchange in Dunmere, now used as a concert venue "
        "by the town orchestra.",
        "Weyhill Exchange",
    )
    both = doc(
        "The Copperleaf Arcade is a shopping arcade in Dunmere whose upper gallery is used as "
        "a concert venue on Sundays.",
        "Copperleaf Arcade",
        id="arcade-2",
    )
    # Precision first: a property one side's page never states is "no" or an abstention.
    assert reasoner.answer(question, [], [arcade, exchange]).short_answer != "yes"
    assert reasoner.answer(question, [], [both, exchange]).short_answer == "yes"


def test_comparison_question_picks_the_right_candidate(reasoner):
    hollis = doc(
        "Wren Abernathy (born April 4, 1966), known as Wren Hollis, is a Welsh lighthouse "
        "keeper and diarist.",
        "Wren Hollis",
    )
    ilari = doc(
        "Matteo Ilari (born 17 January 1980) is an Italian glass engraver.",
        "Matteo Ilari",
    )
    first = reasoner.answer(
        "Who was born earlier, Wren Hollis or Matteo Ilari?", [], [ilari, hollis]
    )
    later = reasoner.answer("Who was born later, Wren Hollis or Matteo Ilari?", [], [ilari, hollis])
    assert first.short_answer == "Wren Hollis"
    assert later.short_answer == "Matteo Ilari"
    assert set(first.cited_ids) == {doc_id(hollis), doc_id(ilari)}


def test_choice_sub_query_looks_up_the_missing_option(reasoner):
    question = "Who was born earlier, Wren Hollis or Matteo Ilari?"
    hollis = doc("Wren Hollis (born April 4, 1966) is a Welsh diarist.", "Wren Hollis")
    decision = reasoner.think(question, [step(question, hollis)], sources=["demo"])
    assert decision.action == "search"
    assert "Matteo Ilari" in decision.query


def test_answer_cites_existing_document_ids(reasoner):
    evidence = [SEAL, GUILD, REEVE, VELL]
    draft = reasoner.answer(BRIDGE_Q, [], evidence)
    assert draft.cited_ids
    assert set(draft.cited_ids) <= {doc_id(d) for d in evidence}


def test_answer_without_evidence_is_an_abstention(reasoner):
    draft = reasoner.answer(BRIDGE_Q, [], [])
    assert draft.abstained is True
    assert draft.answer.endswith("nothing relevant was found.")
    assert draft.fallback is False


def test_reflect_labels_unsupported_answer_incorrect(reasoner):
    reflection = reasoner.reflect(BRIDGE_Q, "Secretary of Agriculture", [SEAL, VELL])
    assert reflection.label == "INCORRECT"
    assert reflection.negative
    assert reflection.suggestion


def test_reflect_labels_supported_answer_correct(reasoner):
    reflection = reasoner.reflect(BRIDGE_Q, "Keeper of Weirs", [SEAL, VELL])
    assert reflection.label == "CORRECT"


def test_reflect_weak_support_is_not_correct_and_suggests_the_bridge(reasoner):
    # The span exists, but only in a document unrelated to the question's chain.
    reflection = reasoner.reflect(BRIDGE_Q, "Reeve of Saltings", [SEAL, REEVE])
    assert reflection.label != "CORRECT"
    assert "Brannoc Vell" in reflection.suggestion


def test_reflect_empty_answer_is_incorrect(reasoner):
    assert reasoner.reflect(BRIDGE_Q, "", [SEAL]).label == "INCORRECT"


def test_decisions_are_deterministic():
    scratchpad = [step(BRIDGE_Q, SEAL, GUILD, REEVE)]
    runs = []
    for _ in range(2):
        reasoner = ExtractiveReasoner(use_embeddings=False)
        runs.append(
            [
                reasoner.think(BRIDGE_Q, scratchpad, sources=["demo"]).model_dump(),
                reasoner.compare(BRIDGE_Q, [SEAL, GUILD], [VELL, BAKING]).model_dump(),
                reasoner.answer(BRIDGE_Q, scratchpad, [SEAL, GUILD, VELL]).model_dump(),
                reasoner.reflect(BRIDGE_Q, "Keeper of Weirs", [SEAL, VELL]).model_dump(),
            ]
        )
    assert runs[0] == runs[1]


def test_feedback_entity_drives_the_next_search(reasoner):
    feedback = Feedback(
        answer="crescent moon",
        label="INCORRECT",
        suggestion="Search for 'Brannoc Vell' civic office.",
        leads=["Brannoc Vell"],
    )
    decision = reasoner.think(BRIDGE_Q, [step(BRIDGE_Q, SEAL)], sources=["demo"], feedback=feedback)
    assert decision.action == "search"
    assert decision.query.startswith("Brannoc Vell")


HOTPOT = get_settings().shared_data / "hotpotqa" / "hotpotqa_dev_350.jsonl"


@pytest.mark.skipif(not HOTPOT.exists(), reason="HotpotQA dev data not available")
def test_answers_hotpotqa_from_gold_paragraphs(reasoner):
    rows = [json.loads(line) for line in HOTPOT.open()][:60]
    correct = 0
    for row in rows:
        docs = [
            doc(c["paragraph_text"], c["title"], id=f"{row['question_id']}:{c['id']}")
            for c in row["contexts"]
            if c["is_supporting"]
        ]
        draft = reasoner.answer(row["question_text"], [], docs)
        golds = [g.lower().strip() for g in row["answers_objects"][0]["spans"]]
        # What is scored: the short answer when the answer holds one, as `prefrag eval` does.
        correct += (draft.short_answer or draft.answer).lower().strip() in golds
        assert set(draft.cited_ids) <= {doc_id(d) for d in docs}
    # Measured 0.27 EM over all 350 questions; a broken rule set drops far below this floor.
    assert correct / len(rows) >= 0.15


@pytest.mark.slow
def test_compare_with_embeddings_keeps_the_same_judgements():
    reasoner = ExtractiveReasoner()
    assert reasoner.compare(BRIDGE_Q, [SEAL, GUILD], [VELL]).status is True
    assert reasoner.compare(BRIDGE_Q, [SEAL, GUILD], [SEAL]).status is False
    assert reasoner.compare(BRIDGE_Q, [SEAL, GUILD], [BAKING]).status is False


# --------------------------------------------------------------------------- early answers

OLDER_Q = "Which of the two came into the world first, Anneke Strom or Jory Blaise?"
STROM = doc(
    "Anneke Strom (born March 3, 1972) is a Dutch clockmaker who trained in Utrecht. She has "
    "restored tower clocks with the engineers Piet Laan, Ivo Brandl and Jory Blaise.",
    "Anneke Strom",
)
BLAISE = doc(
    "Joris Blaise (born June 21, 1961), known as Jory Blaise, is a Dutch engineer and "
    "bell founder.",
    "Jory Blaise",
)
MENTOR_Q = "Which award did the mentor of Ysolde Crane receive from the Harwick Salon in 1987?"
PUPIL = doc(
    "Ysolde Crane (born 3 June 1990) is a tapestry weaver who works in a studio by the sea. "
    "She trained under the veteran weaver Odran Fell, who was praised as the finest weaver "
    "of his decade.",
    "Ysolde Crane",
)
MENTOR = doc(
    "Odran Fell (born 8 March 1951) is a tapestry weaver who received the Harwick Salon "
    "Gold Shuttle in 1987 for a tapestry of the flooded fens.",
    "Odran Fell",
)


def graph_feedback(answer, reflection):
    """The feedback the graph's self_reflect node hands on after a negative reflection."""
    return reflection.feedback(answer)


def test_choice_keeps_searching_when_one_side_is_only_mentioned(reasoner):
    # The clockmaker's page names the engineer, but says nothing about his age.
    decision = reasoner.think(OLDER_Q, [step(OLDER_Q, STROM)], sources=["local"])
    assert decision.action == "search"
    assert "Jory Blaise" in decision.query


def test_choice_answers_once_both_sides_have_a_document(reasoner):
    scratchpad = [step(OLDER_Q, STROM), step("Jory Blaise older", BLAISE)]
    decision = reasoner.think(OLDER_Q, scratchpad, sources=["local"])
    assert decision.action == "answer"
    assert reasoner.answer(OLDER_Q, scratchpad, [STROM, BLAISE]).short_answer == "Jory Blaise"


def test_bridge_keeps_searching_while_question_constraints_are_missing(reasoner):
    # The pupil's page praises the mentor loosely, but neither 'Harwick Salon' nor '1987' is
    # in it: the mentor it names has no document yet.
    decision = reasoner.think(MENTOR_Q, [step(MENTOR_Q, PUPIL)], sources=["local"])
    assert decision.action == "search"
    assert "Odran Fell" in decision.query


def test_bridge_answer_comes_from_the_document_holding_the_constraints(reasoner):
    scratchpad = [step(MENTOR_Q, PUPIL), step("Odran Fell Harwick Salon 1987", MENTOR)]
    draft = reasoner.answer(MENTOR_Q, scratchpad, [PUPIL, MENTOR])
    # Precision first: the span from the constraining document, or an abstention.
    assert draft.abstained or (draft.short_answer or draft.answer) == "Harwick Salon Gold Shuttle"
    assert draft.abstained or doc_id(MENTOR) in draft.cited_ids


# --------------------------------------------------------------------------- reflection


def test_reflect_choice_with_one_documented_side_is_not_correct(reasoner):
    reflection = reasoner.reflect(OLDER_Q, "Anneke Strom", [STROM])
    assert reflection.label != "CORRECT"
    assert "'Jory Blaise'" in reflection.suggestion
    assert reflection.leads == ["Jory Blaise"]
    assert reasoner.reflect(OLDER_Q, "Jory Blaise", [STROM, BLAISE]).label == "CORRECT"


def test_reflect_requires_the_question_constraints_in_the_supporting_evidence(reasoner):
    reflection = reasoner.reflect(MENTOR_Q, "finest weaver of his decade", [PUPIL])
    assert reflection.label != "CORRECT"
    assert "Harwick Salon" in reflection.explanation or "1987" in reflection.explanation
    # The suggestion quotes the name to look up (the think step reads quoted names).
    assert "'Odran Fell'" in reflection.suggestion
    supported = reasoner.reflect(MENTOR_Q, "Harwick Salon Gold Shuttle", [PUPIL, MENTOR])
    assert supported.label == "CORRECT"


def test_negative_reflection_feedback_drives_the_search_for_the_missing_side(reasoner):
    reflection = reasoner.reflect(OLDER_Q, "Anneke Strom", [STROM])
    feedback = graph_feedback("Anneke Strom", reflection)
    # Even after a search for the question itself repeated, the quoted side is looked up.
    scratchpad = [step(OLDER_Q, STROM), step(OLDER_Q, STROM)]
    decision = reasoner.think(OLDER_Q, scratchpad, sources=["local"], feedback=feedback)
    assert decision.action == "search"
    assert decision.query.startswith("Jory Blaise")


def test_feedback_quotes_in_the_explanation_are_not_leads(reasoner):
    # The explanation quotes the rejected answer and its source title; only the leads name
    # what to search for.
    feedback = Feedback(
        answer="Tollmere Guild",
        label="PARTIALLY CORRECT",
        explanation="'Sourdough' appears in 'Sourdough'.",
        suggestion="Search for 'Brannoc Vell'.",
        leads=["Brannoc Vell"],
    )
    decision = reasoner.think(BRIDGE_Q, [step(BRIDGE_Q, SEAL)], sources=["demo"], feedback=feedback)
    assert decision.query.startswith("Brannoc Vell")


# --------------------------------------------------------------------------- sub-queries


def test_follow_up_query_keeps_the_anchor_entity(reasoner):
    question = "For how long did the governor who chose Ilka Morrow as her deputy stay in office?"
    morrow = doc(
        "Ilka Morrow was a harbour surveyor and later a provincial deputy governor.",
        "Ilka Morrow",
    )
    decision = reasoner.think(question, [step(question, morrow)], sources=["local"])
    assert decision.action == "search"
    assert "Ilka Morrow" in decision.query


# --------------------------------------------------------------------------- determinism

TOWERS_Q = "Where can the Ossery Bell Tower and the Mardle Clock House be found?"
OSSERY = doc(
    "The Ossery Bell Tower stands on the eastern quay of Port Ossery, the largest harbour of "
    "the Skerran Islands. Its first bells were hung in 1893 and a second frame was added in "
    "1904. The tower is 41 metres tall and is kept by the harbour trust.",
    "Ossery Bell Tower",
)
MARDLE = doc(
    "The Mardle Clock House is a clock tower in the market square of Mardle (Skerran Islands).",
    "Mardle Clock House",
)
_SEEDED_DECISIONS = """
import json, sys
from prefrag.documents import make_document
from prefrag.reasoners.base import ScratchpadStep
from prefrag.reasoners.extractive import ExtractiveReasoner
case = json.loads(sys.stdin.read())
docs = [make_document(d["text"], id=d["id"], source="demo", title=d["title"]) for d in case["docs"]]
q = case["question"]
r = ExtractiveReasoner(use_embeddings=False)
pad = [ScratchpadStep(query=q, source="local", observation=docs)]
out = [
    r.think(q, pad, sources=["local", "web"]).model_dump(),
    r.answer(q, pad, docs).model_dump(),
    r.compare(q, docs[:1], docs[1:]).model_dump(),
    r.reflect(q, "Skerran Islands", docs).model_dump(),
]
print(json.dumps(out, sort_keys=True))
"""


def test_decisions_do_not_depend_on_the_hash_seed():
    # Score ties used to be broken by set iteration order (float sums over sets), so the same
    # question got different sub-queries in different processes.
    import os
    import subprocess
    import sys

    case = json.dumps(
        {
            "question": TOWERS_Q,
            "docs": [
                {"id": doc_id(d), "title": d.metadata["title"], "text": d.page_content}
                for d in (OSSERY, MARDLE, SEAL)
            ],
        }
    )
    outputs = set()
    for seed in ("0", "1", "3"):
        result = subprocess.run(
            [sys.executable, "-c", _SEEDED_DECISIONS],
            input=case,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed, "HF_HUB_OFFLINE": "1"},
            check=True,
            timeout=60,
        )
        outputs.add(result.stdout)
    assert len(outputs) == 1


# --------------------------------------------------------------------------- when to stop

MILL_Q = "The Orsk Weaving Mill lies in a valley whose residents number how many?"
MILL = doc(
    "The Orsk Weaving Mill is a former wool mill in the Kessel Valley, built in 1868. Its "
    "water wheel is 9 metres across and drove forty looms. The mill stands 3 kilometres "
    "upstream of Brisk.",
    "Orsk Weaving Mill",
)
VALLEY = doc(
    "The Kessel Valley is a farming valley in the northern hills. At the 2020 count, the "
    "valley population was 14,206. Its main village is Brisk.",
    "Kessel Valley",
)


@pytest.mark.xfail(
    strict=True,
    reason="issue 17: with both hops held, the extractive policy still chases 'Brisk' (named "
    "in both documents) and drafts the bare '3' of '3 kilometres'; it answered only when the "
    "documents copied a benchmark item's layout. The answer-policy rewrite should fix this; "
    "then drop this mark.",
)
def test_answers_when_the_held_chain_already_gives_a_typed_answer(reasoner):
    # Both hops are held: the mill's page names the Kessel Valley, whose page gives the
    # number. Question words no document uses ("residents") must not send it chasing 'Brisk'.
    decision = reasoner.think(MILL_Q, [step(MILL_Q, MILL, VALLEY)], sources=["local"])
    assert decision.action == "answer"
    assert decision.answer == "14,206"
    assert reasoner.reflect(MILL_Q, "14,206", [MILL, VALLEY]).label == "CORRECT"


def test_keeps_searching_when_the_second_hop_is_not_held(reasoner):
    decision = reasoner.think(MILL_Q, [step(MILL_Q, MILL)], sources=["local"])
    assert decision.action == "search"
    assert "Kessel Valley" in decision.query


# --------------------------------------------------------------------------- source choice


def test_search_names_no_source_with_a_single_source(reasoner):
    decision = reasoner.think(BRIDGE_Q, [step(BRIDGE_Q, SEAL)], sources=["local"])
    assert decision.action == "search"
    assert decision.source is None


def test_search_stays_on_a_source_while_it_brings_relevant_documents(reasoner):
    first = reasoner.think(BRIDGE_Q, [], sources=["local", "web"])
    assert first.source == "local"
    scratchpad = [ScratchpadStep(query=BRIDGE_Q, source="local", observation=[SEAL, GUILD])]
    assert reasoner.think(BRIDGE_Q, scratchpad, sources=["local", "web"]).source == "local"


def test_search_moves_to_the_next_source_when_a_step_brought_nothing_new(reasoner):
    scratchpad = [
        ScratchpadStep(query=BRIDGE_Q, source="local", observation=[SEAL, GUILD]),
        # Only repeats and an off-topic page: this source has stopped helping.
        ScratchpadStep(query="Brannoc Vell", source="local", observation=[SEAL, BAKING]),
    ]
    decision = reasoner.think(BRIDGE_Q, scratchpad, sources=["local", "web"])
    assert decision.action == "search"
    assert decision.source == "web"
    # Source entries may carry a note after the name (the prompt-preference baseline).
    noted = ["local (preferred: search this source first)", "web (use only when needed)"]
    assert reasoner.think(BRIDGE_Q, scratchpad, sources=noted).source == noted[1]


def test_source_choice_leaves_the_search_itself_unchanged(reasoner):
    scratchpad = [
        ScratchpadStep(query=BRIDGE_Q, source="local", observation=[SEAL, GUILD]),
        ScratchpadStep(query="Brannoc Vell", source="local", observation=[SEAL, BAKING]),
    ]
    one = reasoner.think(BRIDGE_Q, scratchpad, sources=["local"])
    two = reasoner.think(BRIDGE_Q, scratchpad, sources=["local", "web"])
    assert (one.action, one.query, one.thought) == (two.action, two.query, two.thought)


# --------------------------------------------------------------------------- reflection types


def test_reflect_doubts_an_answer_whose_sentence_states_no_relation_word(reasoner):
    question = "Who presents the baking contest on whose tasting panel Gwenllian Dray sits?"
    frame = doc(
        "Gwenllian Dray (born 4 May 1975), known professionally as Wenna Dray, is a "
        "Welsh pastry chef and cookbook author.",
        "Wenna Dray",
    )
    contest = doc(
        "Golden Crust is a baking contest series. Mira Delacourt presents the contest, "
        "with Wenna Dray on its tasting panel.",
        "Golden Crust",
    )
    # The stage name's sentence matches the question's names but says nothing of a contest,
    # a panel or a presenter.
    reflection = reasoner.reflect(question, "Wenna Dray", [frame, contest, BAKING])
    assert reflection.label != "CORRECT"
    assert "states none" in reflection.explanation


def test_reflect_doubts_a_common_word_given_for_a_name(reasoner):
    question = "Who managed the Tollmere Guild's pilot boats?"
    serial = doc(
        "The Tollmere Guild kept four pilot boats. Management of the boats was shared, and "
        "the management changed often.",
        "Tollmere Guild",
    )
    assert reasoner.reflect(question, "Management", [serial]).label != "CORRECT"


def test_advice_questions_are_answered_with_the_supporting_sentence():
    from prefrag.documents import make_document

    evidence = [
        make_document(
            "NSAIDs such as ibuprofen increase the risk of bleeding when taken with warfarin. "
            "Paracetamol is the usual alternative for pain.",
            id="nsaids",
            source="demo",
            title="Warfarin and NSAIDs",
        )
    ]
    draft = ExtractiveReasoner(use_embeddings=False).answer(
        "Can I take ibuprofen while I am on warfarin?", [], evidence
    )
    assert draft.answer.startswith("NSAIDs such as ibuprofen increase the risk of bleeding")
    assert draft.answer.lower() not in {"yes", "no"}
    assert draft.cited_ids == ["nsaids"]


def test_negative_reflection_names_what_no_held_document_mentions(reasoner):
    # Jory Blaise has no document: retrieval could mend the answer.
    reflection = reasoner.reflect(OLDER_Q, "Anneke Strom", [STROM])
    assert reflection.negative
    assert reflection.gaps == ["Jory Blaise"]
    assert reflection.evidence_missing


def test_a_misread_answer_over_complete_evidence_is_not_blamed_on_retrieval(reasoner):
    # Both hops are held and the answer comes from an unrelated document: the label stays
    # negative, but the evidence names everything the question does.
    reflection = reasoner.reflect(BRIDGE_Q, "Reeve of Saltings", [SEAL, VELL, REEVE])
    assert reflection.label != "CORRECT"
    assert reflection.gaps == []
    assert not reflection.evidence_missing


def test_an_abstention_always_leaves_retrieval_open(reasoner):
    reflection = reasoner.reflect(BRIDGE_Q, "", [SEAL, VELL])
    assert reflection.gaps is None
    assert reflection.evidence_missing


def test_a_late_search_without_a_lead_gives_way_to_a_typed_answer(reasoner):
    question = "In what year did the Lunvik harbour festival first feature tall ships?"
    festival = doc(
        "The Lunvik harbour festival began in 1978 and draws crowds every August.",
        "Lunvik harbour festival",
    )
    town = doc("Lunvik is a fishing town on the western coast with a small ferry port.", "Lunvik")
    first = [step(question, festival, town)]
    # Right after the question's own search, the words still unresolved are searched once.
    assert reasoner.think(question, first, sources=["local"]).action == "search"
    # Later, with no entity to look up and a year drafted, another such search is not spent.
    later = [*first, step("Lunvik harbour festival tall ships", festival)]
    decision = reasoner.think(question, later, sources=["local"])
    assert decision.action == "answer"
    assert decision.answer == "1978"

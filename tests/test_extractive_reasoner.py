import json

import pytest

from prefrag.config import get_settings
from prefrag.documents import doc_id, make_document
from prefrag.reasoners.base import Feedback, Reasoner, ScratchpadStep
from prefrag.reasoners.extractive import ExtractiveReasoner

BRIDGE_Q = (
    "What government position was held by the man who voiced Orrin Tull in the puppet show "
    "Copper Kettle?"
)


def doc(text, title, id=None):
    return make_document(text, id=id or title.lower().replace(" ", "-"), source="demo", title=title)


WINK = doc(
    "Copper Kettle is a 1962 Danish puppet show featuring the young stage actor Anders Pellow "
    "as the voice of Orrin Tull. Each episode follows a tinker and his goat between market towns.",
    "Copper Kettle (puppet show)",
)
MEET = doc(
    "Meet Orrin Tull, a spin-off serial for children's television, aired every Saturday from "
    "March 2, 1965 until the spring of 1971.",
    "Meet Orrin Tull",
)
LINDQVIST = doc(
    "Anders Pellow Brandt (May 19, 1937 \u2013 November 3, 2009) was a Danish puppeteer and "
    "civil servant. Later in life, he held the government position of Master of Tolls of the "
    "Danish Crown.",
    "Anders Pellow",
)
TREASURER = doc(
    "The post of Lord High Warden was an English government position since the Acts of "
    "Union of 1707.",
    "Lord High Warden",
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
    decision = reasoner.think(BRIDGE_Q, [step(BRIDGE_Q, WINK, MEET)], sources=["demo"])
    assert decision.action == "search"
    assert "Anders Pellow" in decision.query
    # The unresolved part of the question travels with the bridge entity.
    assert "government" in decision.query.lower()


def test_answers_once_the_bridge_document_is_held(reasoner):
    scratchpad = [
        step(BRIDGE_Q, WINK, MEET),
        step("Anders Pellow government position", LINDQVIST),
    ]
    decision = reasoner.think(BRIDGE_Q, scratchpad, sources=["demo"])
    assert decision.action == "answer"
    draft = reasoner.answer(BRIDGE_Q, scratchpad, [WINK, MEET, LINDQVIST])
    assert draft.answer == "Master of Tolls"
    assert doc_id(LINDQVIST) in draft.cited_ids


def test_forced_answer_answers_from_held_evidence(reasoner):
    decision = reasoner.think(BRIDGE_Q, [step(BRIDGE_Q, WINK)], sources=["demo"], force_answer=True)
    assert decision.action == "answer"
    assert decision.answer


def test_compare_false_for_duplicates_by_id_and_by_text(reasoner):
    same_text = doc(WINK.page_content, "Copper Kettle copy", id="another-id")
    verdict = reasoner.compare(BRIDGE_Q, [WINK, MEET], [WINK, same_text])
    assert verdict.status is False
    assert verdict.analysis


def test_compare_false_for_irrelevant_new_documents(reasoner):
    verdict = reasoner.compare(BRIDGE_Q, [WINK, MEET], [BAKING])
    assert verdict.status is False


def test_compare_false_when_nothing_new_was_found(reasoner):
    assert reasoner.compare(BRIDGE_Q, [WINK], []).status is False


def test_compare_true_for_a_new_relevant_document(reasoner):
    verdict = reasoner.compare(BRIDGE_Q, [WINK, MEET], [LINDQVIST, BAKING])
    assert verdict.status is True
    assert "Anders Pellow" in verdict.analysis


def test_yes_no_same_nationality():
    reasoner = ExtractiveReasoner(use_embeddings=False)
    question = "Were Tobin Marsh and Hal Quint of the same nationality?"
    marsh = doc(
        "Tobin Marsh (born 2 March 1979) is a Canadian bridge engineer who also teaches "
        "structural design.",
        "Tobin Marsh",
    )
    wood = doc(
        "Harold Everett Quint III (1931 \u2013 2004) was a Canadian glassblower, sculptor "
        "and kiln builder.",
        "Hal Quint",
    )
    british_wood = doc(wood.page_content.replace("Canadian", "Irish"), "Hal Quint", id="ed-uk")
    yes = reasoner.answer(question, [], [marsh, wood])
    no = reasoner.answer(question, [], [marsh, british_wood])
    assert yes.short_answer == "yes" and yes.answer.startswith("Yes. ")
    assert no.short_answer == "no" and no.answer.startswith("No. ")
    assert set(yes.cited_ids) == {doc_id(marsh), doc_id(wood)}


def test_yes_no_both_have_a_property(reasoner):
    question = "Are Granite Lane Tower and 412 5th Avenue both used for real estate?"
    tower = doc(
        "The Granite Lane Tower is a mixed-use tower in Manhattan used as the headquarters "
        "of Granite Lane and a luxury apartment complex.",
        "Granite Lane Tower",
    )
    avenue = doc(
        "412 5th Avenue is a modern-style office skyscraper in Midtown Manhattan, used for "
        "real estate investment by Halbrook.",
        "412 5th Avenue",
    )
    both = doc(
        "The Granite Lane Tower is a tower in Manhattan used for real estate by its owners.",
        "Granite Lane Tower",
        id="tower-2",
    )
    # Precision first: a property one side's page never states is "no" or an abstention.
    assert reasoner.answer(question, [], [tower, avenue]).short_answer != "yes"
    assert reasoner.answer(question, [], [both, avenue]).short_answer == "yes"


def test_comparison_question_picks_the_right_candidate(reasoner):
    carvell = doc(
        "Lena Morrow (born July 10, 1971), known as Lena Carvell, is an American singer.",
        "Lena Carvell",
    )
    rocha = doc(
        "Paolo Da Rocha (born 30 May 1977) is a French dancer and choreographer.",
        "Paolo Da Rocha",
    )
    first = reasoner.answer(
        "Who was born first, Lena Carvell or Paolo Da Rocha?", [], [rocha, carvell]
    )
    later = reasoner.answer(
        "Who was born later, Lena Carvell or Paolo Da Rocha?", [], [rocha, carvell]
    )
    assert first.short_answer == "Lena Carvell"
    assert later.short_answer == "Paolo Da Rocha"
    assert set(first.cited_ids) == {doc_id(carvell), doc_id(rocha)}


def test_choice_sub_query_looks_up_the_missing_option(reasoner):
    question = "Who was born first, Lena Carvell or Paolo Da Rocha?"
    carvell = doc("Lena Carvell (born July 10, 1971) is an American singer.", "Lena Carvell")
    decision = reasoner.think(question, [step(question, carvell)], sources=["demo"])
    assert decision.action == "search"
    assert "Paolo Da Rocha" in decision.query


def test_answer_cites_existing_document_ids(reasoner):
    evidence = [WINK, MEET, TREASURER, LINDQVIST]
    draft = reasoner.answer(BRIDGE_Q, [], evidence)
    assert draft.cited_ids
    assert set(draft.cited_ids) <= {doc_id(d) for d in evidence}


def test_answer_without_evidence_is_an_abstention(reasoner):
    draft = reasoner.answer(BRIDGE_Q, [], [])
    assert draft.abstained is True
    assert draft.answer.endswith("nothing relevant was found.")
    assert draft.fallback is False


def test_reflect_labels_unsupported_answer_incorrect(reasoner):
    reflection = reasoner.reflect(BRIDGE_Q, "Secretary of Agriculture", [WINK, LINDQVIST])
    assert reflection.label == "INCORRECT"
    assert reflection.negative
    assert reflection.suggestion


def test_reflect_labels_supported_answer_correct(reasoner):
    reflection = reasoner.reflect(BRIDGE_Q, "Master of Tolls", [WINK, LINDQVIST])
    assert reflection.label == "CORRECT"


def test_reflect_weak_support_is_not_correct_and_suggests_the_bridge(reasoner):
    # The span exists, but only in a document unrelated to the question's chain.
    reflection = reasoner.reflect(BRIDGE_Q, "Lord High Warden", [WINK, TREASURER])
    assert reflection.label != "CORRECT"
    assert "Anders Pellow" in reflection.suggestion


def test_reflect_empty_answer_is_incorrect(reasoner):
    assert reasoner.reflect(BRIDGE_Q, "", [WINK]).label == "INCORRECT"


def test_decisions_are_deterministic():
    scratchpad = [step(BRIDGE_Q, WINK, MEET, TREASURER)]
    runs = []
    for _ in range(2):
        reasoner = ExtractiveReasoner(use_embeddings=False)
        runs.append(
            [
                reasoner.think(BRIDGE_Q, scratchpad, sources=["demo"]).model_dump(),
                reasoner.compare(BRIDGE_Q, [WINK, MEET], [LINDQVIST, BAKING]).model_dump(),
                reasoner.answer(BRIDGE_Q, scratchpad, [WINK, MEET, LINDQVIST]).model_dump(),
                reasoner.reflect(BRIDGE_Q, "Master of Tolls", [WINK, LINDQVIST]).model_dump(),
            ]
        )
    assert runs[0] == runs[1]


def test_feedback_entity_drives_the_next_search(reasoner):
    feedback = Feedback(
        answer="1962 Danish",
        label="INCORRECT",
        suggestion="Search for 'Anders Pellow' government position.",
        leads=["Anders Pellow"],
    )
    decision = reasoner.think(BRIDGE_Q, [step(BRIDGE_Q, WINK)], sources=["demo"], feedback=feedback)
    assert decision.action == "search"
    assert decision.query.startswith("Anders Pellow")


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
        correct += draft.answer.lower().strip() in golds
        assert set(draft.cited_ids) <= {doc_id(d) for d in docs}
    # Measured 0.27 EM over all 350 questions; a broken rule set drops far below this floor.
    assert correct / len(rows) >= 0.15


@pytest.mark.slow
def test_compare_with_embeddings_keeps_the_same_judgements():
    reasoner = ExtractiveReasoner()
    assert reasoner.compare(BRIDGE_Q, [WINK, MEET], [LINDQVIST]).status is True
    assert reasoner.compare(BRIDGE_Q, [WINK, MEET], [WINK]).status is False
    assert reasoner.compare(BRIDGE_Q, [WINK, MEET], [BAKING]).status is False


# --------------------------------------------------------------------------- early answers

OLDER_Q = "Who is older, Mara Quell or Odo Varga?"
BARTON = doc(
    "Mara Quell (born March 3, 1972) is a Hungarian cellist who trained in Vienna. She has "
    "recorded with the pianists Lena Stroh, Ivo Brandl and Odo Varga.",
    "Mara Quell",
)
HARLAN = doc(
    "Odoakar Varga (born June 21, 1961) is a Hungarian concert pianist and teacher.",
    "Odo Varga",
)
FATHER_Q = "What was the teacher of Lior Benami voted to be by the ISGA in 1994?"
JESPER = doc(
    "Lior Benami (born 2 April 1988) is an Israeli glass artist who works in a studio "
    "in Haifa. She is the pupil of the veteran glassblower Dov Ashkar, who was voted the "
    "finest glassblower of his generation.",
    "Lior Benami",
)
ANTON = doc(
    "Dov Ashkar (born 12 May 1959) is an Israeli glass sculptor who was voted the "
    "ISGA Master Glassblower in 1994 and 1995.",
    "Dov Ashkar",
)


def graph_feedback(answer, reflection):
    """The feedback the graph's self_reflect node hands on after a negative reflection."""
    return reflection.feedback(answer)


def test_choice_keeps_searching_when_one_side_is_only_mentioned(reasoner):
    # The cellist's page names the pianist, but says nothing about his age.
    decision = reasoner.think(OLDER_Q, [step(OLDER_Q, BARTON)], sources=["local"])
    assert decision.action == "search"
    assert "Odo Varga" in decision.query


def test_choice_answers_once_both_sides_have_a_document(reasoner):
    scratchpad = [step(OLDER_Q, BARTON), step("Odo Varga older", HARLAN)]
    decision = reasoner.think(OLDER_Q, scratchpad, sources=["local"])
    assert decision.action == "answer"
    assert reasoner.answer(OLDER_Q, scratchpad, [BARTON, HARLAN]).short_answer == "Odo Varga"


def test_bridge_keeps_searching_while_question_constraints_are_missing(reasoner):
    # The pupil's page answers "voted to be" loosely, but neither 'ISGA' nor '1994' is in it:
    # the teacher it names has no document yet.
    decision = reasoner.think(FATHER_Q, [step(FATHER_Q, JESPER)], sources=["local"])
    assert decision.action == "search"
    assert "Dov Ashkar" in decision.query


def test_bridge_answer_comes_from_the_document_holding_the_constraints(reasoner):
    scratchpad = [step(FATHER_Q, JESPER), step("Dov Ashkar ISGA 1994", ANTON)]
    draft = reasoner.answer(FATHER_Q, scratchpad, [JESPER, ANTON])
    # Precision first: the span from the constraining document, or an abstention.
    assert draft.abstained or draft.answer == "ISGA Master Glassblower"
    assert draft.abstained or doc_id(ANTON) in draft.cited_ids


# --------------------------------------------------------------------------- reflection


def test_reflect_choice_with_one_documented_side_is_not_correct(reasoner):
    reflection = reasoner.reflect(OLDER_Q, "Mara Quell", [BARTON])
    assert reflection.label != "CORRECT"
    assert "'Odo Varga'" in reflection.suggestion
    assert reflection.leads == ["Odo Varga"]
    assert reasoner.reflect(OLDER_Q, "Odo Varga", [BARTON, HARLAN]).label == "CORRECT"


def test_reflect_requires_the_question_constraints_in_the_supporting_evidence(reasoner):
    reflection = reasoner.reflect(FATHER_Q, "finest glassblower of his generation", [JESPER])
    assert reflection.label != "CORRECT"
    assert "ISGA" in reflection.explanation or "1994" in reflection.explanation
    # The suggestion quotes the name to look up (the think step reads quoted names).
    assert "'Dov Ashkar'" in reflection.suggestion
    supported = reasoner.reflect(FATHER_Q, "ISGA Master Glassblower", [JESPER, ANTON])
    assert supported.label == "CORRECT"


def test_negative_reflection_feedback_drives_the_search_for_the_missing_side(reasoner):
    reflection = reasoner.reflect(OLDER_Q, "Mara Quell", [BARTON])
    feedback = graph_feedback("Mara Quell", reflection)
    # Even after a search for the question itself repeated, the quoted side is looked up.
    scratchpad = [step(OLDER_Q, BARTON), step(OLDER_Q, BARTON)]
    decision = reasoner.think(OLDER_Q, scratchpad, sources=["local"], feedback=feedback)
    assert decision.action == "search"
    assert decision.query.startswith("Odo Varga")


def test_feedback_quotes_in_the_explanation_are_not_leads(reasoner):
    # The explanation quotes the rejected answer and its source title; only the leads name
    # what to search for.
    feedback = Feedback(
        answer="Meet Orrin Tull",
        label="PARTIALLY CORRECT",
        explanation="'Sourdough' appears in 'Sourdough'.",
        suggestion="Search for 'Anders Pellow'.",
        leads=["Anders Pellow"],
    )
    decision = reasoner.think(BRIDGE_Q, [step(BRIDGE_Q, WINK)], sources=["demo"], feedback=feedback)
    assert decision.query.startswith("Anders Pellow")


# --------------------------------------------------------------------------- sub-queries


def test_follow_up_query_keeps_the_anchor_entity(reasoner):
    question = "How many years did the president who appointed Rolf Ekdahl serve?"
    ekdahl = doc(
        "Rolf Ekdahl was an American physician and public health official.",
        "Rolf Ekdahl",
    )
    decision = reasoner.think(question, [step(question, ekdahl)], sources=["local"])
    assert decision.action == "search"
    assert "Rolf Ekdahl" in decision.query


# --------------------------------------------------------------------------- determinism

KORVIK_Q = "Where are Korvik Observatory and Ustrand Observatory located?"
USTRAND = doc(
    'Ustrand Observatory (Portuguese: "Observat\u00f3rio de Ustrand" , ] ) stands on the '
    "western ridge of Pico Alto, the highest peak of the Lantern Isles (Portugal). Its first "
    "telescope saw light in 1993 and a second dome was added in 2004. The site covers 12 "
    "hectares and is shared by three universities.",
    "Ustrand Observatory",
)
KORVIK = doc(
    'Korvik Observatory (Portuguese: "Observat\u00f3rio do Korvik" , ] ) is an astronomical '
    "observatory on Vila Serena (Lantern Isles, Portugal).",
    "Korvik Observatory",
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
    r.reflect(q, "Lantern Isles", docs).model_dump(),
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
            "question": KORVIK_Q,
            "docs": [
                {"id": doc_id(d), "title": d.metadata["title"], "text": d.page_content}
                for d in (USTRAND, KORVIK, WINK)
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

LAKE_Q = "Brannock Point Light stands in a district with a population of how many inhabitants ?"
LAKE = doc(
    "Brannock Point Light (also called the Brannock Point Light And Beacon) is a historic "
    "lighthouse in Fenwick District, Ontario in Canada.  The tower is 21 metres (69 ft) tall "
    "and its lamp reaches 15 nautical miles (28 km).  The site was once called Fenwick "
    "District Beacon Reserve, and lies 5 kilometres (3 mi) north of Corran, Ontario.",
    "Brannock Point Light",
)
COUNTY = doc(
    "Fenwick District (district code FW) is a district in the southwestern part of the "
    "Canadian province of Ontario.  At the 2016 census, the district population was 27,412.  "
    "Its seat and largest town is Corran.",
    "Fenwick District, Ontario",
)


def test_answers_when_the_held_chain_already_gives_a_typed_answer(reasoner):
    # Both hops are held: the lighthouse's page names Fenwick District, whose page gives the
    # number. Question words no document uses ("inhabitants") must not send it chasing 'Corran'.
    decision = reasoner.think(LAKE_Q, [step(LAKE_Q, LAKE, COUNTY)], sources=["local"])
    assert decision.action == "answer"
    assert decision.answer == "27,412"
    assert reasoner.reflect(LAKE_Q, "27,412", [LAKE, COUNTY]).label == "CORRECT"


def test_keeps_searching_when_the_second_hop_is_not_held(reasoner):
    decision = reasoner.think(LAKE_Q, [step(LAKE_Q, LAKE)], sources=["local"])
    assert decision.action == "search"
    assert "Fenwick District" in decision.query


# --------------------------------------------------------------------------- source choice


def test_search_names_no_source_with_a_single_source(reasoner):
    decision = reasoner.think(BRIDGE_Q, [step(BRIDGE_Q, WINK)], sources=["local"])
    assert decision.action == "search"
    assert decision.source is None


def test_search_stays_on_a_source_while_it_brings_relevant_documents(reasoner):
    first = reasoner.think(BRIDGE_Q, [], sources=["local", "web"])
    assert first.source == "local"
    scratchpad = [ScratchpadStep(query=BRIDGE_Q, source="local", observation=[WINK, MEET])]
    assert reasoner.think(BRIDGE_Q, scratchpad, sources=["local", "web"]).source == "local"


def test_search_moves_to_the_next_source_when_a_step_brought_nothing_new(reasoner):
    scratchpad = [
        ScratchpadStep(query=BRIDGE_Q, source="local", observation=[WINK, MEET]),
        # Only repeats and an off-topic page: this source has stopped helping.
        ScratchpadStep(query="Anders Pellow", source="local", observation=[WINK, BAKING]),
    ]
    decision = reasoner.think(BRIDGE_Q, scratchpad, sources=["local", "web"])
    assert decision.action == "search"
    assert decision.source == "web"
    # Source entries may carry a note after the name (the prompt-preference baseline).
    noted = ["local (preferred: search this source first)", "web (use only when needed)"]
    assert reasoner.think(BRIDGE_Q, scratchpad, sources=noted).source == noted[1]


def test_source_choice_leaves_the_search_itself_unchanged(reasoner):
    scratchpad = [
        ScratchpadStep(query=BRIDGE_Q, source="local", observation=[WINK, MEET]),
        ScratchpadStep(query="Anders Pellow", source="local", observation=[WINK, BAKING]),
    ]
    one = reasoner.think(BRIDGE_Q, scratchpad, sources=["local"])
    two = reasoner.think(BRIDGE_Q, scratchpad, sources=["local", "web"])
    assert (one.action, one.query, one.thought) == (two.action, two.query, two.thought)


# --------------------------------------------------------------------------- reflection types


def test_reflect_doubts_an_answer_whose_sentence_states_no_relation_word(reasoner):
    question = "Quillan Oduya Frame sits on the panel of a baking contest presented by whom?"
    frame = doc(
        "Quillan Oduya Frame (born 4 May 1975), known professionally as Quill Frame, is a "
        "Kenyan-born pastry chef and cookbook author.",
        "Quill Frame",
    )
    contest = doc(
        "Golden Crust is a Canadian baking contest series. Mira Delacourt presents the contest, "
        "with Quill Frame on its tasting panel.",
        "Golden Crust",
    )
    # The stage name's sentence matches the question's names but says nothing of a contest,
    # a panel or a presenter.
    reflection = reasoner.reflect(question, "Quill Frame", [frame, contest, BAKING])
    assert reflection.label != "CORRECT"
    assert "states none" in reflection.explanation


def test_reflect_doubts_a_common_word_given_for_a_name(reasoner):
    question = "Who managed the Orrin Tull children's serial?"
    serial = doc(
        "Meet Orrin Tull was a children's serial. Management of the serial was shared, and "
        "the management changed often.",
        "Meet Orrin Tull",
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
    # Odo Varga has no document: retrieval could mend the answer.
    reflection = reasoner.reflect(OLDER_Q, "Mara Quell", [BARTON])
    assert reflection.negative
    assert reflection.gaps == ["Odo Varga"]
    assert reflection.evidence_missing


def test_a_misread_answer_over_complete_evidence_is_not_blamed_on_retrieval(reasoner):
    # Both hops are held and the answer comes from an unrelated document: the label stays
    # negative, but the evidence names everything the question does.
    reflection = reasoner.reflect(BRIDGE_Q, "Lord High Warden", [WINK, LINDQVIST, TREASURER])
    assert reflection.label != "CORRECT"
    assert reflection.gaps == []
    assert not reflection.evidence_missing


def test_an_abstention_always_leaves_retrieval_open(reasoner):
    reflection = reasoner.reflect(BRIDGE_Q, "", [WINK, LINDQVIST])
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

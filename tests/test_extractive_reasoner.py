import json

import pytest

from prefrag.config import get_settings
from prefrag.documents import doc_id, make_document
from prefrag.reasoners.base import Reasoner, ScratchpadStep
from prefrag.reasoners.extractive import ExtractiveReasoner

BRIDGE_Q = (
    "What government position was held by the woman who portrayed Corliss Archer in the film "
    "Kiss and Tell?"
)


def doc(text, title, id=None):
    return make_document(text, id=id or title.lower().replace(" ", "-"), source="demo", title=title)


KISS = doc(
    "Kiss and Tell is a 1945 American comedy film starring then 17-year-old Shirley Temple as "
    "Corliss Archer. In the film, two teenage girls cause their respective parents much concern.",
    "Kiss and Tell (1945 film)",
)
MEET = doc(
    "Meet Corliss Archer, a program from radio's Golden Age, ran from January 7, 1943 to "
    "September 30, 1956.",
    "Meet Corliss Archer",
)
TEMPLE = doc(
    "Shirley Temple Black (April 23, 1928 \u2013 February 10, 2014) was an American actress and "
    "diplomat. As an adult, she held the government position of Chief of Protocol of the United "
    "States.",
    "Shirley Temple",
)
TREASURER = doc(
    "The post of Lord High Treasurer was an English government position since the Acts of "
    "Union of 1707.",
    "Lord High Treasurer",
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
    decision = reasoner.think(BRIDGE_Q, [step(BRIDGE_Q, KISS, MEET)], sources=["demo"])
    assert decision.action == "search"
    assert "Shirley Temple" in decision.query
    # The unresolved part of the question travels with the bridge entity.
    assert "government" in decision.query.lower()


def test_answers_once_the_bridge_document_is_held(reasoner):
    scratchpad = [step(BRIDGE_Q, KISS, MEET), step("Shirley Temple government position", TEMPLE)]
    decision = reasoner.think(BRIDGE_Q, scratchpad, sources=["demo"])
    assert decision.action == "answer"
    draft = reasoner.answer(BRIDGE_Q, scratchpad, [KISS, MEET, TEMPLE])
    assert draft.answer == "Chief of Protocol"
    assert doc_id(TEMPLE) in draft.cited_ids


def test_forced_answer_answers_from_held_evidence(reasoner):
    decision = reasoner.think(BRIDGE_Q, [step(BRIDGE_Q, KISS)], sources=["demo"], force_answer=True)
    assert decision.action == "answer"
    assert decision.answer


def test_compare_false_for_duplicates_by_id_and_by_text(reasoner):
    same_text = doc(KISS.page_content, "Kiss and Tell copy", id="another-id")
    verdict = reasoner.compare(BRIDGE_Q, [KISS, MEET], [KISS, same_text])
    assert verdict.status is False
    assert verdict.analysis


def test_compare_false_for_irrelevant_new_documents(reasoner):
    verdict = reasoner.compare(BRIDGE_Q, [KISS, MEET], [BAKING])
    assert verdict.status is False


def test_compare_false_when_nothing_new_was_found(reasoner):
    assert reasoner.compare(BRIDGE_Q, [KISS], []).status is False


def test_compare_true_for_a_new_relevant_document(reasoner):
    verdict = reasoner.compare(BRIDGE_Q, [KISS, MEET], [TEMPLE, BAKING])
    assert verdict.status is True
    assert "Shirley Temple" in verdict.analysis


def test_yes_no_same_nationality():
    reasoner = ExtractiveReasoner(use_embeddings=False)
    question = "Were Scott Derrickson and Ed Wood of the same nationality?"
    derrickson = doc(
        "Scott Derrickson (born July 16, 1966) is an American director, screenwriter and producer.",
        "Scott Derrickson",
    )
    wood = doc(
        "Edward Davis Wood Jr. (October 10, 1924 \u2013 December 10, 1978) was an American "
        "filmmaker, actor, writer, producer, and director.",
        "Ed Wood",
    )
    british_wood = doc(wood.page_content.replace("American", "English"), "Ed Wood", id="ed-uk")
    yes = reasoner.answer(question, [], [derrickson, wood])
    no = reasoner.answer(question, [], [derrickson, british_wood])
    assert yes.answer == "yes"
    assert no.answer == "no"
    assert set(yes.cited_ids) == {doc_id(derrickson), doc_id(wood)}


def test_yes_no_both_have_a_property(reasoner):
    question = "Are Random House Tower and 888 7th Avenue both used for real estate?"
    tower = doc(
        "The Random House Tower is a mixed-use tower in Manhattan used as the headquarters "
        "of Random House and a luxury apartment complex.",
        "Random House Tower",
    )
    avenue = doc(
        "888 7th Avenue is a modern-style office skyscraper in Midtown Manhattan, used for "
        "real estate investment by Vornado.",
        "888 7th Avenue",
    )
    both = doc(
        "The Random House Tower is a tower in Manhattan used for real estate by its owners.",
        "Random House Tower",
        id="tower-2",
    )
    assert reasoner.answer(question, [], [tower, avenue]).answer == "no"
    assert reasoner.answer(question, [], [both, avenue]).answer == "yes"


def test_comparison_question_picks_the_right_candidate(reasoner):
    jayne = doc(
        "Erika Girardi (born July 10, 1971), known as Erika Jayne, is an American singer.",
        "Erika Jayne",
    )
    silva = doc(
        "Marco Da Silva (born 30 May 1977) is a French dancer and choreographer.",
        "Marco Da Silva",
    )
    first = reasoner.answer(
        "Who was born first, Erika Jayne or Marco Da Silva?", [], [silva, jayne]
    )
    later = reasoner.answer(
        "Who was born later, Erika Jayne or Marco Da Silva?", [], [silva, jayne]
    )
    assert first.answer == "Erika Jayne"
    assert later.answer == "Marco Da Silva"
    assert set(first.cited_ids) == {doc_id(jayne), doc_id(silva)}


def test_choice_sub_query_looks_up_the_missing_option(reasoner):
    question = "Who was born first, Erika Jayne or Marco Da Silva?"
    jayne = doc("Erika Jayne (born July 10, 1971) is an American singer.", "Erika Jayne")
    decision = reasoner.think(question, [step(question, jayne)], sources=["demo"])
    assert decision.action == "search"
    assert "Marco Da Silva" in decision.query


def test_answer_cites_existing_document_ids(reasoner):
    evidence = [KISS, MEET, TREASURER, TEMPLE]
    draft = reasoner.answer(BRIDGE_Q, [], evidence)
    assert draft.cited_ids
    assert set(draft.cited_ids) <= {doc_id(d) for d in evidence}


def test_answer_without_evidence_is_an_abstention(reasoner):
    draft = reasoner.answer(BRIDGE_Q, [], [])
    assert draft.abstained is True
    assert draft.answer.endswith("nothing relevant was found.")
    assert draft.fallback is False


def test_reflect_labels_unsupported_answer_incorrect(reasoner):
    reflection = reasoner.reflect(BRIDGE_Q, "Secretary of Agriculture", [KISS, TEMPLE])
    assert reflection.label == "INCORRECT"
    assert reflection.negative
    assert reflection.suggestion


def test_reflect_labels_supported_answer_correct(reasoner):
    reflection = reasoner.reflect(BRIDGE_Q, "Chief of Protocol", [KISS, TEMPLE])
    assert reflection.label == "CORRECT"


def test_reflect_weak_support_is_not_correct_and_suggests_the_bridge(reasoner):
    # The span exists, but only in a document unrelated to the question's chain.
    reflection = reasoner.reflect(BRIDGE_Q, "Lord High Treasurer", [KISS, TREASURER])
    assert reflection.label != "CORRECT"
    assert "Shirley Temple" in reflection.suggestion


def test_reflect_empty_answer_is_incorrect(reasoner):
    assert reasoner.reflect(BRIDGE_Q, "", [KISS]).label == "INCORRECT"


def test_decisions_are_deterministic():
    scratchpad = [step(BRIDGE_Q, KISS, MEET, TREASURER)]
    runs = []
    for _ in range(2):
        reasoner = ExtractiveReasoner(use_embeddings=False)
        runs.append(
            [
                reasoner.think(BRIDGE_Q, scratchpad, sources=["demo"]).model_dump(),
                reasoner.compare(BRIDGE_Q, [KISS, MEET], [TEMPLE, BAKING]).model_dump(),
                reasoner.answer(BRIDGE_Q, scratchpad, [KISS, MEET, TEMPLE]).model_dump(),
                reasoner.reflect(BRIDGE_Q, "Chief of Protocol", [KISS, TEMPLE]).model_dump(),
            ]
        )
    assert runs[0] == runs[1]


def test_feedback_entity_drives_the_next_search(reasoner):
    feedback = "Answer: 1945 American\nINCORRECT. Search for 'Shirley Temple' government position."
    decision = reasoner.think(BRIDGE_Q, [step(BRIDGE_Q, KISS)], sources=["demo"], feedback=feedback)
    assert decision.action == "search"
    assert decision.query.startswith("Shirley Temple")


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
    assert reasoner.compare(BRIDGE_Q, [KISS, MEET], [TEMPLE]).status is True
    assert reasoner.compare(BRIDGE_Q, [KISS, MEET], [KISS]).status is False
    assert reasoner.compare(BRIDGE_Q, [KISS, MEET], [BAKING]).status is False


# --------------------------------------------------------------------------- early answers

OLDER_Q = "Who is older, Annie Morton or Terry Richardson?"
MORTON = doc(
    "Annie Morton (born October 8, 1970) is an American model born in Pennsylvania. She has "
    "been photographed by Helmut Newton, Peter Lindbergh and Terry Richardson.",
    "Annie Morton",
)
RICHARDSON = doc(
    "Terrence Richardson (born August 14, 1965) is an American fashion and portrait photographer.",
    "Terry Richardson",
)
FATHER_Q = "What was the father of Kasper Schmeichel voted to be by the IFFHS in 1992?"
KASPER = doc(
    "Kasper Peter Schmeichel (born 5 November 1986) is a Danish professional footballer who "
    "plays as a goalkeeper for Leicester City. He is the son of former Manchester United "
    "goalkeeper Peter Schmeichel, who was voted the best goalkeeper of his era.",
    "Kasper Schmeichel",
)
PETER = doc(
    "Peter Bolesław Schmeichel (born 18 November 1963) is a Danish former footballer who was "
    "voted the IFFHS World's Best Goalkeeper in 1992 and 1993.",
    "Peter Schmeichel",
)


def graph_feedback(answer, reflection):
    """The feedback string the graph's self_reflect node builds from a negative reflection."""
    return (
        f"Previous answer: {answer}\nSelf-reflection: {reflection.label}. "
        f"{reflection.explanation}\nSuggestion: {reflection.suggestion}"
    )


def test_choice_keeps_searching_when_one_side_is_only_mentioned(reasoner):
    # Annie Morton's page names Terry Richardson, but says nothing about his age.
    decision = reasoner.think(OLDER_Q, [step(OLDER_Q, MORTON)], sources=["local"])
    assert decision.action == "search"
    assert "Terry Richardson" in decision.query


def test_choice_answers_once_both_sides_have_a_document(reasoner):
    scratchpad = [step(OLDER_Q, MORTON), step("Terry Richardson older", RICHARDSON)]
    decision = reasoner.think(OLDER_Q, scratchpad, sources=["local"])
    assert decision.action == "answer"
    assert reasoner.answer(OLDER_Q, scratchpad, [MORTON, RICHARDSON]).answer == "Terry Richardson"


def test_bridge_keeps_searching_while_question_constraints_are_missing(reasoner):
    # Kasper's page answers "voted to be" loosely, but neither 'IFFHS' nor '1992' is in it:
    # the father it names has no document yet.
    decision = reasoner.think(FATHER_Q, [step(FATHER_Q, KASPER)], sources=["local"])
    assert decision.action == "search"
    assert "Peter Schmeichel" in decision.query


def test_bridge_answer_comes_from_the_document_holding_the_constraints(reasoner):
    scratchpad = [step(FATHER_Q, KASPER), step("Peter Schmeichel IFFHS 1992", PETER)]
    draft = reasoner.answer(FATHER_Q, scratchpad, [KASPER, PETER])
    assert draft.answer == "IFFHS World's Best Goalkeeper"
    assert doc_id(PETER) in draft.cited_ids


# --------------------------------------------------------------------------- reflection


def test_reflect_choice_with_one_documented_side_is_not_correct(reasoner):
    reflection = reasoner.reflect(OLDER_Q, "Annie Morton", [MORTON])
    assert reflection.label != "CORRECT"
    assert "'Terry Richardson'" in reflection.suggestion
    assert reasoner.reflect(OLDER_Q, "Terry Richardson", [MORTON, RICHARDSON]).label == "CORRECT"


def test_reflect_requires_the_question_constraints_in_the_supporting_evidence(reasoner):
    reflection = reasoner.reflect(FATHER_Q, "best goalkeeper of his era", [KASPER])
    assert reflection.label != "CORRECT"
    assert "IFFHS" in reflection.explanation or "1992" in reflection.explanation
    # The suggestion quotes the name to look up (the think step reads quoted names).
    assert "'Peter Schmeichel'" in reflection.suggestion
    supported = reasoner.reflect(FATHER_Q, "IFFHS World's Best Goalkeeper", [KASPER, PETER])
    assert supported.label == "CORRECT"


def test_negative_reflection_feedback_drives_the_search_for_the_missing_side(reasoner):
    reflection = reasoner.reflect(OLDER_Q, "Annie Morton", [MORTON])
    feedback = graph_feedback("Annie Morton", reflection)
    # Even after a search for the question itself repeated, the quoted side is looked up.
    scratchpad = [step(OLDER_Q, MORTON), step(OLDER_Q, MORTON)]
    decision = reasoner.think(OLDER_Q, scratchpad, sources=["local"], feedback=feedback)
    assert decision.action == "search"
    assert decision.query.startswith("Terry Richardson")


def test_feedback_quotes_in_the_explanation_are_not_leads(reasoner):
    # The explanation quotes the rejected answer and its source title; only the suggestion
    # line names what to search for.
    feedback = (
        "Previous answer: Meet Corliss Archer\nSelf-reflection: PARTIALLY CORRECT. "
        "'Sourdough' appears in 'Sourdough'.\nSuggestion: Search for 'Shirley Temple'."
    )
    decision = reasoner.think(BRIDGE_Q, [step(BRIDGE_Q, KISS)], sources=["demo"], feedback=feedback)
    assert decision.query.startswith("Shirley Temple")


# --------------------------------------------------------------------------- sub-queries


def test_follow_up_query_keeps_the_anchor_entity(reasoner):
    question = "How many years did the president who appointed Roger Egeberg serve?"
    egeberg = doc(
        "Roger Egeberg was an American physician and public health official.",
        "Roger Egeberg",
    )
    decision = reasoner.think(question, [step(question, egeberg)], sources=["local"])
    assert decision.action == "search"
    assert "Roger Egeberg" in decision.query


# --------------------------------------------------------------------------- determinism

TEIDE_Q = "Where are Teide National Park and Garajonay National Park located?"
GARAJONAY = doc(
    'Garajonay National Park (Spanish: "Parque nacional de Garajonay" , ] ) is located in the '
    "center and north of the island of La Gomera, one of the Canary Islands (Spain). It was "
    "declared a national park in 1981 and a World Heritage Site by UNESCO in 1986. It occupies "
    "40 km (15 sq mi) and it extends into each of the six municipalities on the island.",
    "Garajonay National Park",
)
TEIDE = doc(
    'Teide National Park (Spanish: "Parque nacional del Teide" , ] ) is a national park '
    "located in Tenerife (Canary Islands, Spain).",
    "Teide National Park",
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
    r.reflect(q, "Canary Islands", docs).model_dump(),
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
            "question": TEIDE_Q,
            "docs": [
                {"id": doc_id(d), "title": d.metadata["title"], "text": d.page_content}
                for d in (GARAJONAY, TEIDE, KISS)
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

LAKE_Q = "Brown State Fishing Lake is in a country that has a population of how many inhabitants ?"
LAKE = doc(
    "Brown State Fishing Lake (sometimes also known as Brown State Fishing Lake And Wildlife "
    "Area) is a protected area in Brown County, Kansas in the United States.  The lake is 62 "
    "acres (0.25 km²) in area and up to 13 feet (4 m) deep.  The area was formerly known as "
    "Brown County State Park, and is 8 miles (13 km) east of Hiawatha, Kansas.",
    "Brown State Fishing Lake",
)
COUNTY = doc(
    "Brown County (county code BR) is a county located in the northeast portion of the U.S. "
    "state of Kansas.  As of the 2010 census, the county population was 9,984.  Its county "
    "seat and most populous city is Hiawatha.",
    "Brown County, Kansas",
)


def test_answers_when_the_held_chain_already_gives_a_typed_answer(reasoner):
    # Both hops are held: the lake's page names Brown County, whose page gives the number.
    # Question words no document uses ("inhabitants") must not send it chasing 'Hiawatha'.
    decision = reasoner.think(LAKE_Q, [step(LAKE_Q, LAKE, COUNTY)], sources=["local"])
    assert decision.action == "answer"
    assert decision.answer == "9,984"
    assert reasoner.reflect(LAKE_Q, "9,984", [LAKE, COUNTY]).label == "CORRECT"


def test_keeps_searching_when_the_second_hop_is_not_held(reasoner):
    decision = reasoner.think(LAKE_Q, [step(LAKE_Q, LAKE)], sources=["local"])
    assert decision.action == "search"
    assert "Brown County" in decision.query


# --------------------------------------------------------------------------- source choice


def test_search_names_no_source_with_a_single_source(reasoner):
    decision = reasoner.think(BRIDGE_Q, [step(BRIDGE_Q, KISS)], sources=["local"])
    assert decision.action == "search"
    assert decision.source is None


def test_search_stays_on_a_source_while_it_brings_relevant_documents(reasoner):
    first = reasoner.think(BRIDGE_Q, [], sources=["local", "web"])
    assert first.source == "local"
    scratchpad = [ScratchpadStep(query=BRIDGE_Q, source="local", observation=[KISS, MEET])]
    assert reasoner.think(BRIDGE_Q, scratchpad, sources=["local", "web"]).source == "local"


def test_search_moves_to_the_next_source_when_a_step_brought_nothing_new(reasoner):
    scratchpad = [
        ScratchpadStep(query=BRIDGE_Q, source="local", observation=[KISS, MEET]),
        # Only repeats and an off-topic page: this source has stopped helping.
        ScratchpadStep(query="Shirley Temple", source="local", observation=[KISS, BAKING]),
    ]
    decision = reasoner.think(BRIDGE_Q, scratchpad, sources=["local", "web"])
    assert decision.action == "search"
    assert decision.source == "web"
    # Source entries may carry a note after the name (the prompt-preference baseline).
    noted = ["local (preferred: search this source first)", "web (use only when needed)"]
    assert reasoner.think(BRIDGE_Q, scratchpad, sources=noted).source == noted[1]


def test_source_choice_leaves_the_search_itself_unchanged(reasoner):
    scratchpad = [
        ScratchpadStep(query=BRIDGE_Q, source="local", observation=[KISS, MEET]),
        ScratchpadStep(query="Shirley Temple", source="local", observation=[KISS, BAKING]),
    ]
    one = reasoner.think(BRIDGE_Q, scratchpad, sources=["local"])
    two = reasoner.think(BRIDGE_Q, scratchpad, sources=["local", "web"])
    assert (one.action, one.query, one.thought) == (two.action, two.query, two.thought)


# --------------------------------------------------------------------------- reflection types


def test_reflect_doubts_an_answer_whose_sentence_states_no_relation_word(reasoner):
    question = "Onika Tanya Maraj is a judge on a television show hosted by whom?"
    minaj = doc(
        "Onika Tanya Maraj (born December 8, 1982), known professionally as Nicki Minaj, is a "
        "Trinidadian-born rapper and singer.",
        "Nicki Minaj",
    )
    idol = doc(
        "American Idol is an American singing competition television series. Ryan Seacrest "
        "hosts the show, with Nicki Minaj as one of its judges.",
        "American Idol",
    )
    # The stage name's sentence matches the question's names but says nothing of a show,
    # a judge or a host.
    reflection = reasoner.reflect(question, "Nicki Minaj", [minaj, idol, BAKING])
    assert reflection.label != "CORRECT"
    assert "states none" in reflection.explanation


def test_reflect_doubts_a_common_word_given_for_a_name(reasoner):
    question = "Who managed the Corliss Archer radio program?"
    radio = doc(
        "Meet Corliss Archer was a radio program. Management of the program was shared, and "
        "the management changed often.",
        "Meet Corliss Archer",
    )
    assert reasoner.reflect(question, "Management", [radio]).label != "CORRECT"


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

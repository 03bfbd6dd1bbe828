from __future__ import annotations

import json

import pytest
from switcher_fakes import RecordingChatModel, stub_reply, two_hop_sources, write_dataset
from typer.testing import CliRunner

from prefrag.datasets import load_dataset
from prefrag.documents import make_document
from prefrag.errors import ConfigurationError, IngestError
from prefrag.reasoners.llm import LLMReasoner, compare_prompt
from prefrag.training.pairs import read_compare_prompt, read_pairs
from prefrag.training.switcher_data import (
    SwitcherDataConfig,
    collect_path,
    main,
    run,
)
from prefrag.training.switcher_teachers import GoldTeacher


def _config(tmp_path, **overrides):
    values = {
        "dataset": str(write_dataset(tmp_path / "two_hop.jsonl")),
        "out": str(tmp_path / "pairs.jsonl"),
        "two_source": None,
        "progress": False,
        "concurrency": 1,
    }
    values.update(overrides)
    return SwitcherDataConfig(**values)


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _doc(key, title, text, kind="local"):
    return make_document(text, id=key, source=kind, kind=kind, title=title)


# --- the prompt -----------------------------------------------------------------------------


def test_compare_prompt_is_byte_for_byte_what_the_compare_role_sends():
    model = RecordingChatModel(prompts=[])
    reasoner = LLMReasoner({"default": model}, structured=False, max_doc_chars=40)
    held = [_doc("a", "Town0", "Town0 is a town in the region of Region0, far in the north.")]
    new = [_doc("b", "Region0", "Region0 is a region of the country Country0 {not a field}.")]
    verdict = reasoner.compare("Which country holds the region of town0?", held, new)
    assert verdict.status is True and not verdict.fallback
    sent = model.prompts[0][-1]
    assert sent == compare_prompt(
        "Which country holds the region of town0?", held, new, max_doc_chars=40
    )
    # The pair format can be read back into the inputs the small switcher learns from.
    inputs = read_compare_prompt(sent)
    assert inputs.question == "Which country holds the region of town0?"
    assert [d.metadata["title"] for d in inputs.held] == ["Town0"]
    assert inputs.new[0].page_content.startswith("Region0 is a region")
    assert inputs.new[0].page_content.endswith(" ...")  # cut at 40 characters, as sent


def test_gold_teacher_keeps_exactly_when_a_supporting_paragraph_is_new(tmp_path):
    item = load_dataset(write_dataset(tmp_path / "d.jsonl", 1)).items[0]
    teacher = GoldTeacher()
    town = _doc("t", "Town0", "Town0 is a town in the region of Region0.")
    region = _doc("r", "Region0", "Region0 is a region of the country Country0.")
    lake = _doc("l", "Lake0", "Lake0 is a lake near town0 with fish.")
    assert teacher.verdict(item, item.question, [town], [region, lake]).status is True
    assert teacher.verdict(item, item.question, [town], [lake]).status is False
    repeated = teacher.verdict(item, item.question, [town, region], [region])
    assert repeated.status is False and "Region0" in repeated.analysis
    # The wrong verdict argues about this step's own documents, not a fixed sentence.
    wrong = teacher.opposite(repeated, [town, region], [region])
    assert wrong.status is True and "Region0" in wrong.analysis
    right = teacher.verdict(item, item.question, [town], [region, lake])
    wrong = teacher.opposite(right, [town], [region, lake])
    assert wrong.status is False and "Region0" in wrong.analysis and "Lake0" in wrong.analysis
    # The gold-needed variant does not switch once nothing is missing.
    needed = GoldTeacher(needed_only=True)
    assert needed.name == "gold-needed"
    assert needed.verdict(item, item.question, [town, region], [lake]).status is True
    assert needed.verdict(item, item.question, [town], [lake]).status is False


# --- end to end: extractive policy, gold teacher -------------------------------------------------


def test_extractive_policy_with_gold_teacher_writes_trl_pairs(tmp_path):
    config = _config(tmp_path, per_question=2)
    result = run(config, sources=two_hop_sources())
    pairs = _lines(tmp_path / "pairs.jsonl")
    assert result.pairs == len(pairs) > 0
    assert set(result.labels) == {"keep", "switch"}
    assert sum(result.labels.values()) == len(pairs)
    item_ids = {f"q{q}" for q in range(4)}
    for pair in pairs:
        assert set(pair) == {"prompt", "chosen", "rejected", "meta"}
        assert pair["prompt"][0]["role"] == "user" and len(pair["prompt"]) == 1
        chosen = json.loads(pair["chosen"][0]["content"])
        rejected = json.loads(pair["rejected"][0]["content"])
        assert {chosen["status"], rejected["status"]} == {True, False}
        meta = pair["meta"]
        assert meta["question_id"] in item_ids
        assert meta["teacher"] == "gold" and meta["policy"] == "extractive"
        assert meta["label"] == ("keep" if chosen["status"] is True else "switch")
        assert 2 <= meta["sampling"]["top_k"] <= 5
        inputs = read_compare_prompt(pair["prompt"][0]["content"])
        # The chosen verdict is the gold one: keep iff a supporting paragraph is new.
        held = {d.metadata["title"] for d in inputs.held}
        new = {d.metadata["title"] for d in inputs.new}
        q = meta["question_id"][1:]
        adds_gold = bool({f"Town{q}", f"Region{q}"} & (new - held))
        assert chosen["status"] is adds_gold
    assert list(read_pairs(tmp_path / "pairs.jsonl")) == pairs


def test_one_pair_per_question_and_the_keep_switch_ratio(tmp_path):
    # Three of four second hops are local: more keep than switch verdicts.
    sources = two_hop_sources(second_local=(0, 1, 2))
    every = run(_config(tmp_path, per_question=5), sources=sources)
    one = run(_config(tmp_path, per_question=1), sources=sources)
    ids = [p["meta"]["question_id"] for p in _lines(tmp_path / "pairs.jsonl")]
    assert len(ids) == len(set(ids)) == one.pairs
    assert every.pairs > one.pairs
    assert one.drops.get("more than one pair per question", 0) == every.pairs - one.pairs
    assert every.labels["keep"] > every.labels["switch"] > 0
    ratio = run(_config(tmp_path, per_question=5, keep_switch="1:1"), sources=sources)
    assert ratio.labels["keep"] == ratio.labels["switch"] == every.labels["switch"]
    assert ratio.drops["keep:switch ratio"] == every.pairs - ratio.pairs


def test_a_killed_run_continues_without_duplicating_pairs(tmp_path):
    class Killed(BaseException):
        pass

    class DyingTeacher(GoldTeacher):
        calls = 0

        def verdict(self, item, question, held, new):
            DyingTeacher.calls += 1
            if item.id == "q2":
                raise Killed()
            return super().verdict(item, question, held, new)

    config = _config(tmp_path, per_question=2)
    with pytest.raises(Killed):
        run(config, sources=two_hop_sources(), teacher=DyingTeacher())
    log = collect_path(tmp_path / "pairs.jsonl")
    finished = [json.loads(line)["question_id"] for line in log.read_text().splitlines()[1:]]
    assert finished == ["q0", "q1"]
    # A line cut short by the kill is ignored and redone.
    with log.open("a") as handle:
        handle.write('{"question_id": "q3", "pairs": [{"prompt"')

    counting = type("CountingTeacher", (GoldTeacher,), {})
    seen: list[str] = []
    original = counting.verdict

    def verdict(self, item, question, held, new):
        seen.append(item.id)
        return original(self, item, question, held, new)

    counting.verdict = verdict
    resumed = run(config, sources=two_hop_sources(), teacher=counting())
    assert set(seen) == {"q2", "q3"}  # finished questions are not collected again
    fresh_dir = tmp_path / "fresh"
    fresh_dir.mkdir()
    fresh = run(
        _config(tmp_path, per_question=2, out=str(fresh_dir / "pairs.jsonl")),
        sources=two_hop_sources(),
    )
    resumed_pairs = _lines(tmp_path / "pairs.jsonl")
    assert resumed_pairs == _lines(fresh_dir / "pairs.jsonl")
    assert resumed.pairs == fresh.pairs
    keys = [(p["meta"]["question_id"], p["meta"]["step"]) for p in resumed_pairs]
    assert len(keys) == len(set(keys))


def test_a_failed_question_is_reported_and_retried_by_the_next_run(tmp_path):
    class FlakyTeacher(GoldTeacher):
        def verdict(self, item, question, held, new):
            if item.id == "q1":
                raise RuntimeError("endpoint hiccup")
            return super().verdict(item, question, held, new)

    config = _config(tmp_path, per_question=2)
    first = run(config, sources=two_hop_sources(), teacher=FlakyTeacher())
    assert first.failed == 1 and first.drops["question failed"] == 1
    assert "q1" not in {p["meta"]["question_id"] for p in _lines(tmp_path / "pairs.jsonl")}
    second = run(config, sources=two_hop_sources())
    assert second.failed == 0
    assert "q1" in {p["meta"]["question_id"] for p in _lines(tmp_path / "pairs.jsonl")}


def test_rerun_with_other_settings_into_the_same_file_is_refused(tmp_path):
    run(_config(tmp_path), sources=two_hop_sources())
    with pytest.raises(ConfigurationError, match="different teacher"):
        run(_config(tmp_path, teacher="openai:other"), sources=two_hop_sources())


# --- an LLM policy and teacher against the OpenAI-compatible stub server ----------------------


def test_llm_policy_samples_nine_verdicts_and_the_teacher_picks(tmp_path):
    from stub_server import StubChatServer

    from prefrag.config import get_settings

    received: list[dict] = []
    with StubChatServer(reply=stub_reply(received)) as server:
        settings = get_settings().model_copy(
            update={"openai_base_url": server.url, "openai_api_key": "x", "backend": "openai"}
        )
        config = _config(tmp_path, policy="openai:policy", teacher="openai:teacher", concurrency=2)
        result = run(config, settings=settings, sources=two_hop_sources())
    pairs = _lines(tmp_path / "pairs.jsonl")
    assert result.pairs == len(pairs) == 4  # one per question
    compare_prompts = {
        r["messages"][-1]["content"]
        for r in received
        if "New information:" in r["messages"][-1]["content"]
    }
    by_model: dict[str, list] = {}
    for request in received:
        by_model.setdefault(request["model"], []).append(request)
    policy_compares = [
        r for r in by_model["policy"] if "New information:" in r["messages"][-1]["content"]
    ]
    settings_seen = {(r["temperature"], r["top_p"]) for r in policy_compares}
    assert settings_seen == {(t, p) for t in (0.1, 0.5, 0.9) for p in (0.1, 0.5, 0.9)}
    thinks = [r for r in by_model["policy"] if "Begin!" in r["messages"][-1]["content"]]
    assert thinks and {r["temperature"] for r in thinks} == {0.9}
    assert {r["temperature"] for r in by_model["teacher"]} == {settings.temperature}
    for pair in pairs:
        # Byte-for-byte the prompt the compare role sent to the endpoint.
        assert pair["prompt"][0]["content"] in compare_prompts
        assert json.loads(pair["chosen"][0]["content"])["status"] is True
        assert json.loads(pair["rejected"][0]["content"])["status"] is False
        sampling = pair["meta"]["sampling"]
        assert sampling["chosen"]["temperature"] == 0.1
        assert sampling["rejected"]["temperature"] in (0.5, 0.9)
        assert sampling["policy_temperature"] == 0.9
        assert pair["meta"]["policy"] == "openai:policy"
        assert pair["meta"]["teacher"] == "openai:teacher"


def test_a_policy_that_always_agrees_makes_no_pair_and_says_why(tmp_path):
    from prefrag.training.switcher_data import Policy

    model = RecordingChatModel(prompts=[])
    reasoner = LLMReasoner({"default": model}, structured=False)
    policy = Policy("agreeable", reasoner, [({"temperature": 0.1}, reasoner)] * 3)

    class KeepTeacher(GoldTeacher):
        def verdict(self, item, question, held, new):
            return super().verdict(item, question, [], new).model_copy(update={"status": True})

    from prefrag.reasoners.extractive import ExtractiveReasoner

    policy.reasoner = ExtractiveReasoner(use_embeddings=False)  # runs the graph's other roles
    result = run(_config(tmp_path), sources=two_hop_sources(), policy=policy, teacher=KeepTeacher())
    assert result.pairs == 0
    assert result.drops["every candidate agrees with the teacher"] >= 4


# --- bad input ---------------------------------------------------------------------------------


def test_bad_input_is_one_clear_sentence(tmp_path):
    from prefrag.cli import app

    runner = CliRunner()
    missing = runner.invoke(
        app,
        ["train", "switcher-data", "--dataset", str(tmp_path / "nope.jsonl"), "--out", "x.jsonl"],
    )
    assert missing.exit_code == 2 and "does not exist" in " ".join(missing.output.split())
    dataset = write_dataset(tmp_path / "d.jsonl")
    ratio = runner.invoke(
        app,
        [
            "train",
            "switcher-data",
            "--dataset",
            str(dataset),
            "--out",
            "x.jsonl",
            *["--keep-switch", "3-1"],
        ],
    )
    assert ratio.exit_code == 2 and "KEEP:SWITCH such as 3:1" in " ".join(ratio.output.split())
    with pytest.raises(ConfigurationError, match="top-k-range"):
        _config(tmp_path, top_k_range="5-2")
    bad = tmp_path / "bad.jsonl"
    good = {
        "prompt": [{"role": "user", "content": "p"}],
        "chosen": [{"role": "assistant", "content": '{"analysis": "", "status": "True"}'}],
        "rejected": [{"role": "assistant", "content": '{"analysis": "", "status": "False"}'}],
    }
    bad.write_text(json.dumps(good) + "\n" + json.dumps({**good, "chosen": "True"}) + "\n")
    with pytest.raises(IngestError, match="Line 2"):
        list(read_pairs(bad))
    with pytest.raises(IngestError, match="does not exist"):
        main(["--dataset", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "p.jsonl")])


@pytest.mark.slow
def test_cli_builds_pairs_from_the_two_source_split_of_real_items(tmp_path, shared_data):
    from prefrag.cli import app

    with (shared_data / "hotpotqa" / "hotpotqa_dev_350.jsonl").open() as handle:
        rows = [next(handle) for _ in range(4)]
    dataset = tmp_path / "slice.jsonl"
    dataset.write_text("".join(rows))
    out = tmp_path / "pairs.jsonl"
    result = CliRunner().invoke(
        app,
        [
            *["train", "switcher-data", "--dataset", str(dataset), "--out", str(out)],
            *["--two-source", "0.5", "--concurrency", "2", "--no-progress"],
        ],
    )
    assert result.exit_code == 0, result.output
    pairs = list(read_pairs(out))
    ids = {json.loads(row)["question_id"] for row in rows}
    assert pairs and {p["meta"]["question_id"] for p in pairs} <= ids
    summary = json.loads(out.with_name("pairs.jsonl.summary.json").read_text())
    assert summary["questions"] == 4 and summary["pairs"] == len(pairs)
    assert "pairs" in result.output and str(summary["pairs"]) in result.output


def test_policy_and_teacher_on_two_servers(tmp_path):
    """One vLLM server serves one base model: the teacher runs on a second endpoint."""
    from stub_server import StubChatServer

    from prefrag.config import get_settings

    policy_seen: list[dict] = []
    teacher_seen: list[dict] = []
    with (
        StubChatServer(reply=stub_reply(policy_seen)) as policy_server,
        StubChatServer(reply=stub_reply(teacher_seen)) as teacher_server,
    ):
        settings = get_settings().model_copy(
            update={"openai_base_url": "http://127.0.0.1:9/v1", "openai_api_key": "x"}
        )
        config = _config(
            tmp_path,
            policy="openai:policy",
            teacher="openai:teacher",
            policy_base_url=policy_server.url,
            teacher_base_url=teacher_server.url,
            teacher_api_key="teacher-key",
        )
        result = run(config, settings=settings, sources=two_hop_sources())
    assert result.pairs > 0 and not result.failed
    assert {r["model"] for r in policy_seen} == {"policy"}
    assert {r["model"] for r in teacher_seen} == {"teacher"}


def test_hotpotqa_official_json_becomes_a_dataset_switcher_data_reads(tmp_path):
    from prefrag.cli import app

    official = [
        {
            "_id": f"h{q}",
            "question": f"Which country holds the region of town{q}?",
            "answer": f"Country{q}",
            "context": [
                [f"Town{q}", [f"Town{q} is a town ", f"in the region of Region{q}."]],
                [f"Region{q}", [f"Region{q} is a region of Country{q}."]],
                [f"Lake{q}", [f"Lake{q} is a lake."]],
            ],
            "supporting_facts": [[f"Town{q}", 1], [f"Region{q}", 0]],
        }
        for q in range(3)
    ]
    source = tmp_path / "hotpot.json"
    source.write_text(json.dumps(official))
    out = tmp_path / "train.jsonl"
    result = CliRunner().invoke(
        app, ["train", "hotpot-convert", "--source", str(source), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    item = load_dataset(out).items[1]
    assert item.id == "h1" and item.answers == ("Country1",)
    assert item.gold_titles == ["Town1", "Region1"]
    assert item.paragraphs[0].text == "Town1 is a town in the region of Region1."
    source.write_text(json.dumps([{"_id": "x", "question": "q"}]))
    result = CliRunner().invoke(
        app, ["train", "hotpot-convert", "--source", str(source), "--out", str(out)]
    )
    assert result.exit_code == 2 and "Question 1 of" in result.output


def test_teacher_and_policy_flags_win_over_the_environment_and_keys_stay_with_their_server(
    tmp_path,
):
    """`--teacher_base_url` wins over PREFRAG_TEACHER_BASE_URL (and `--policy_base_url` over
    PREFRAG_COMPARE_BASE_URL); a teacher on its own server never gets the policy's key."""
    from stub_server import StubChatServer

    from prefrag.config import get_settings
    from prefrag.models import endpoint_of
    from prefrag.training.switcher_data import endpoint_settings

    dead = "http://127.0.0.1:9/v1"
    env = get_settings().model_copy(
        update={
            "openai_base_url": dead,
            "openai_api_key": "policy-key",
            "teacher_base_url": dead,
            "compare_base_url": dead,
        }
    )
    policy_seen: list[dict] = []
    teacher_seen: list[dict] = []
    with (
        StubChatServer(reply=stub_reply(policy_seen)) as policy_server,
        StubChatServer(reply=stub_reply(teacher_seen)) as teacher_server,
    ):
        config = _config(
            tmp_path,
            policy="openai:policy",
            teacher="openai:teacher",
            policy_base_url=policy_server.url,
            teacher_base_url=teacher_server.url,
        )
        result = run(config, settings=env, sources=two_hop_sources())
    assert result.pairs > 0 and not result.failed
    assert policy_seen and teacher_seen
    # The keys: own flag > own env > none for an own URL; a shared server's key otherwise.
    flagged = endpoint_settings(env, "teacher", "http://teacher/v1", None)
    assert endpoint_of("teacher", flagged) == ("http://teacher/v1", None)
    keyed = endpoint_settings(flagged, "teacher", None, "teacher-key")
    assert endpoint_of("teacher", keyed) == ("http://teacher/v1", "teacher-key")
    shared = env.model_copy(
        update={"teacher_base_url": None, "compare_base_url": None, "teacher_api_key": None}
    )
    assert endpoint_of("teacher", shared) == (dead, "policy-key")
    on_compare = shared.model_copy(
        update={"compare_base_url": "http://judge/v1", "compare_api_key": "judge-key"}
    )
    assert endpoint_of("teacher", on_compare) == ("http://judge/v1", "judge-key")
    assert endpoint_of("compare", on_compare.model_copy(update={"compare_api_key": None})) == (
        "http://judge/v1",
        None,
    )

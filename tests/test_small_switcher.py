from __future__ import annotations

import json

import numpy as np
import pytest
from switcher_fakes import WordEmbedder, stub_reply, two_hop_sources, write_dataset
from typer.testing import CliRunner

from prefrag.config import Settings
from prefrag.documents import make_document
from prefrag.errors import ConfigurationError, IngestError
from prefrag.reasoners.base import CompareVerdict
from prefrag.reasoners.extractive import ExtractiveReasoner
from prefrag.reasoners.factory import build_reasoner
from prefrag.reasoners.llm import compare_prompt
from prefrag.reasoners.small_switcher import (
    FEATURES,
    FeatureExtractor,
    SwitcherNetwork,
    load_switcher,
    read_card,
)
from prefrag.training.pairs import make_pair
from prefrag.training.switcher_small import SwitcherSmallConfig, train

QUESTION = "Which country holds the region of town{q}?"


def _doc(key, title, text):
    return make_document(text, id=key, source="local", title=title)


def _step(q, keep):
    """A compare step of question q: the new documents add the second hop, or repeat."""
    town = _doc(f"t{q}", f"Town{q}", f"Town{q} is a town in the region of Region{q}.")
    region = _doc(f"r{q}", f"Region{q}", f"Region{q} is a region of the country Country{q}.")
    lake = _doc(f"l{q}", f"Lake{q}", f"Lake{q} is a lake with fish and boats {q}.")
    if keep:
        return [town], [region, lake]
    return [town, region], [lake, town]


def _pairs_file(path, n=40):
    lines = []
    for q in range(n):
        keep = q % 3 != 0
        held, new = _step(q, keep)
        prompt = compare_prompt(QUESTION.format(q=q), held, new)
        good = CompareVerdict(analysis="right", status=keep)
        bad = CompareVerdict(analysis="wrong", status=not keep)
        meta = {"question_id": f"q{q}", "step": 1, "teacher": "gold", "policy": "x"}
        lines.append(json.dumps(make_pair(prompt, good, bad, meta | {"sampling": {}})))
    path.write_text("\n".join(lines) + "\n")
    return path


def _always(folder, keep):
    """A saved switcher that always keeps (or always switches)."""
    n = len(FEATURES)
    network = SwitcherNetwork(
        mean=np.zeros(n),
        scale=np.ones(n),
        hidden_weights=np.zeros((n, 1)),
        hidden_bias=np.zeros(1),
        out_weights=np.zeros(1),
        out_bias=8.0 if keep else -8.0,
    )
    folder.mkdir(parents=True, exist_ok=True)
    network.save(folder / "switcher.npz")
    return folder


def test_trained_switcher_learns_the_pairs_and_saves_a_card(tmp_path):
    pairs = _pairs_file(tmp_path / "pairs.jsonl")
    config = SwitcherSmallConfig(pairs=str(pairs), out=str(tmp_path / "sw"), validation=0.3)
    card = train(config, extractor=FeatureExtractor(WordEmbedder()))
    assert (tmp_path / "sw" / "switcher.npz").is_file()
    assert read_card(tmp_path / "sw") == card
    assert card["data"]["usable"] == 40 and card["data"]["switch"] == 14
    assert card["metrics"]["held_out"]["accuracy"] >= 0.9
    assert card["metrics"]["all_pairs"]["keep_recall"] == 1.0
    switcher = load_switcher(tmp_path / "sw", embedder=WordEmbedder())
    held, new = _step(99, keep=True)
    assert switcher.compare(QUESTION.format(q=99), held, new).status is True
    held, new = _step(99, keep=False)
    verdict = switcher.compare(QUESTION.format(q=99), held, new)
    assert verdict.status is False and "small switcher" in verdict.analysis


def test_switcher_setting_changes_compare_verdicts_and_unset_changes_nothing(tmp_path):
    held, new = _step(1, keep=True)
    question = QUESTION.format(q=1)
    heuristic = ExtractiveReasoner(use_embeddings=False).compare(question, held, new)
    plain = build_reasoner(Settings(_env_file=None), reasoner="extractive")
    assert plain.compare(question, held, new) == heuristic
    assert heuristic.status is True
    folder = _always(tmp_path / "never", keep=False)
    configured = build_reasoner(
        Settings(_env_file=None, switcher=str(folder)), reasoner="extractive"
    )
    verdict = configured.compare(question, held, new)
    assert verdict.status is False and "small switcher" in verdict.analysis
    # Only compare changes: the other roles are the extractive reasoner's own.
    assert configured.think(question, [], sources=["local"]) == plain.think(
        question, [], sources=["local"]
    )


def test_missing_or_foreign_switcher_file_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigurationError, match="train one"):
        build_reasoner(
            Settings(_env_file=None, switcher=str(tmp_path / "none")), reasoner="extractive"
        )
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "switcher.npz").write_bytes(b"not numpy")
    with pytest.raises(ConfigurationError, match="not a small switcher"):
        load_switcher(tmp_path / "junk")


def test_training_refuses_missing_and_malformed_pairs(tmp_path):
    with pytest.raises(IngestError, match="does not exist"):
        train(SwitcherSmallConfig(pairs=str(tmp_path / "none.jsonl"), out=str(tmp_path / "o")))
    pairs = _pairs_file(tmp_path / "pairs.jsonl", n=3)
    with pairs.open("a") as handle:
        handle.write('{"prompt": "not a list"}\n')
    with pytest.raises(IngestError, match="Line 4"):
        train(SwitcherSmallConfig(pairs=str(pairs), out=str(tmp_path / "o")))
    one_label = tmp_path / "one.jsonl"
    one_label.write_text(_pairs_file(tmp_path / "p.jsonl", n=2).read_text().splitlines()[1] + "\n")
    with pytest.raises(IngestError, match="no keep and switch pairs"):
        train(SwitcherSmallConfig(pairs=str(one_label), out=str(tmp_path / "o")))
    result = CliRunner().invoke(
        __import__("prefrag.cli", fromlist=["app"]).app,
        ["train", "switcher-small", "--pairs", str(pairs), "--out", str(tmp_path / "o")],
    )
    assert result.exit_code == 2 and "Line 4" in " ".join(result.output.split())


def test_eval_with_a_switcher_runs_compare_through_it(tmp_path):
    from prefrag.eval.runner import EvalConfig, run_eval

    dataset = write_dataset(tmp_path / "d.jsonl")

    def evaluate(name, switcher):
        config = EvalConfig(
            dataset=str(dataset),
            methods=["prefrag"],
            out=str(tmp_path / name),
            concurrency=1,
            switcher=switcher,
            context={"judge_first_retrieval": True, "max_reflections": 0},
        )
        summary = run_eval(config, sources=two_hop_sources(), progress=False, report=False)
        return summary["prefrag"]

    never = evaluate("never", str(_always(tmp_path / "never_sw", keep=False)))
    always = evaluate("always", str(_always(tmp_path / "always_sw", keep=True)))
    heuristic = evaluate("heuristic", None)
    assert never["counters_mean"]["web_total"] > 0
    assert always["counters_mean"]["web_total"] == 0
    assert never["web_exposure"] > heuristic["web_exposure"] >= always["web_exposure"]
    saved = json.loads((tmp_path / "never" / "config.json").read_text())
    assert saved["config"]["switcher"].endswith("never_sw")


@pytest.mark.slow
def test_eval_points_the_compare_role_at_a_served_model(tmp_path):
    """`prefrag eval --compare-model NAME` (llm) and `--switcher openai:NAME` (extractive)."""
    from stub_server import StubChatServer

    from prefrag.config import get_settings
    from prefrag.eval.runner import EvalConfig, run_eval

    received: list[dict] = []

    dataset = write_dataset(tmp_path / "d.jsonl", 2)
    with StubChatServer(reply=stub_reply(received)) as server:
        settings = get_settings().model_copy(
            update={"openai_base_url": server.url, "openai_api_key": "x", "model": "agent"}
        )
        for name, reasoner, extra in (
            ("llm", "llm", {"context": {"compare_model": "openai:judge"}}),
            ("extractive", "extractive", {"switcher": "openai:judge"}),
        ):
            received.clear()
            config = EvalConfig(
                dataset=str(dataset),
                methods=["prefrag"],
                out=str(tmp_path / name),
                reasoner=reasoner,
                concurrency=1,
                **extra,
            )
            config.context = {**config.context, "judge_first_retrieval": True}
            summary = run_eval(
                config, settings=settings, sources=two_hop_sources(2), progress=False
            )
            assert summary["prefrag"]["errors"] == 0
            seen = [
                (r["model"], "New information:" in r["messages"][-1]["content"]) for r in received
            ]
            compares = {model for model, is_compare in seen if is_compare}
            assert compares == {"judge"}, name
            others = {model for model, is_compare in seen if not is_compare}
            assert others == ({"agent"} if reasoner == "llm" else set())


def _prompt(request):
    return request["messages"][-1]["content"]


@pytest.mark.slow
def test_cli_trains_a_switcher_that_prefrag_switcher_then_uses(tmp_path, monkeypatch):
    from prefrag.cli import app

    pairs = _pairs_file(tmp_path / "pairs.jsonl", n=24)
    out = tmp_path / "model"
    result = CliRunner().invoke(
        app, ["train", "switcher-small", "--pairs", str(pairs), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    card = json.loads((out / "model_card.json").read_text())
    assert card["data"]["usable"] == 24 and card["settings"]["pairs"] == str(pairs)
    assert card["metrics"]["all_pairs"]["accuracy"] >= 0.9
    monkeypatch.setenv("PREFRAG_SWITCHER", str(out))
    from prefrag.config import get_settings

    get_settings.cache_clear()
    reasoner = build_reasoner(reasoner="extractive")
    held, new = _step(77, keep=False)
    verdict = reasoner.compare(QUESTION.format(q=77), held, new)
    assert verdict.status is False and str(out) in verdict.analysis


def test_each_document_is_embedded_once_however_often_it_is_judged():
    class CountingEmbedder(WordEmbedder):
        def __init__(self):
            self.texts = []

        def encode(self, texts):
            self.texts.extend(texts)
            return super().encode(texts)

    embedder = CountingEmbedder()
    extractor = FeatureExtractor(embedder)
    question = QUESTION.format(q=5)
    held, new = _step(5, keep=True)
    first = extractor.features(question, held, new)
    embedded = len(embedder.texts)
    assert embedded == 1 + len(held) + len(new)  # the question and each document, once
    # The next step holds what was new: nothing is embedded again, the features are equal.
    assert np.array_equal(extractor.features(question, held, new), first)
    extractor.features(question, [*held, *new], new[:1])
    assert len(embedder.texts) == embedded
    # A document no index holds is embedded by its text, as `prefrag index` embeds a chunk.
    other = _doc("x", "Other", "Other is a town by the sea.")
    extractor.features(question, held, [other])
    assert embedder.texts[embedded:] == [other.page_content]


def test_indexed_documents_are_judged_by_the_vectors_their_index_stored(tmp_path):
    """Through `prefrag index` and `prefrag.ask`: the switcher embeds the question only."""
    import prefrag
    from prefrag.cli import app
    from prefrag.index.embeddings import get_embedder
    from prefrag.sources.local import LocalSource
    from prefrag.sources.stored_vectors import StoredVectors

    corpus = tmp_path / "notes.jsonl"
    rows = [
        ("n1", "Brannock weir", "The Brannock weir holds back the river Tey above the mill."),
        ("n2", "Tey", "The Tey rises on Calder moor and joins the sea at Rusk."),
        ("n3", "Rusk", "Rusk is a harbour town with a lifeboat station."),
    ]
    corpus.write_text(
        "".join(json.dumps({"id": i, "title": t, "text": x}) + "\n" for i, t, x in rows)
    )
    assert CliRunner().invoke(app, ["index", str(corpus), "--source", "rivers"]).exit_code == 0
    real = get_embedder()

    class CountingEmbedder:
        def __init__(self):
            self.texts = []

        def __getattr__(self, name):
            return getattr(real, name)

        def encode(self, texts):
            self.texts.extend(texts)
            return real.encode(texts)

    counting = CountingEmbedder()
    switcher = load_switcher(_always(tmp_path / "sw", keep=True), embedder=counting)
    question = "Which river does the Brannock weir hold back?"
    result = prefrag.ask(
        question,
        reasoner=ExtractiveReasoner(use_embeddings=False, switcher=switcher),
        preferred_source="rivers",
        fallback_sources=[],
        judge_first_retrieval=True,
    )
    assert any(step["verdict"] is True for step in result["route"])
    judged = switcher.extractor._views
    assert judged, "the switcher judged no document"
    assert counting.texts == [question]  # no document embedded again
    # The stored vectors are the ones embedding the documents would give.
    source = LocalSource("rivers")
    documents = source.search("Tey river weir", 3)
    stored = FeatureExtractor(real, stored=StoredVectors([source]))
    embedded = FeatureExtractor(real)
    np.testing.assert_allclose(
        stored.features(question, documents[:1], documents[1:]),
        embedded.features(question, documents[:1], documents[1:]),
        atol=1e-4,
    )
    assert all(v is not None for v in StoredVectors([source])(documents))


def _without_sklearn(monkeypatch):
    """Make every `import sklearn...` fail, as in an install without the `train` extra."""
    import sys

    for name in [n for n in sys.modules if n == "sklearn" or n.startswith("sklearn.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "sklearn", None)


def test_training_without_scikit_learn_names_the_extra(tmp_path, monkeypatch):
    pairs = _pairs_file(tmp_path / "pairs.jsonl")
    _without_sklearn(monkeypatch)
    config = SwitcherSmallConfig(pairs=str(pairs), out=str(tmp_path / "sw"))
    with pytest.raises(
        ConfigurationError, match=r"needs scikit-learn: pip install 'prefrag\[train\]'"
    ):
        train(config, extractor=FeatureExtractor(WordEmbedder()))


def test_a_saved_switcher_judges_without_scikit_learn(tmp_path, monkeypatch):
    folder = _always(tmp_path / "sw", keep=False)
    _without_sklearn(monkeypatch)
    switcher = load_switcher(folder, embedder=WordEmbedder())
    held, new = _step(5, keep=True)
    assert switcher.compare(QUESTION.format(q=5), held, new).status is False

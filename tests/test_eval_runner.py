from __future__ import annotations

import json

import pytest
import typer
from _eval_fakes import KeywordSource, ScriptedReasoner
from fake_encoders import BagOfWords
from typer.testing import CliRunner

from prefrag.errors import ConfigurationError
from prefrag.eval.runner import EvalConfig, read_records, run_eval
from prefrag.graphs.baselines import METHODS
from prefrag.sources.base import SourceRegistry


def _dataset(tmp_path, n=4):
    rows = []
    for q in range(n):
        rows.append(
            {
                "question_id": f"q{q}",
                "question_text": f"where is town{q}",
                "answers_objects": [{"spans": [f"Country{q}"]}],
                "contexts": [
                    {
                        "id": "0",
                        "title": f"Town{q}",
                        "paragraph_text": f"town{q} lies in region{q}",
                        "is_supporting": True,
                    },
                    {
                        "id": "1",
                        "title": f"Country{q}",
                        "paragraph_text": f"region{q} belongs to country{q}",
                        "is_supporting": True,
                    },
                    {
                        "id": "2",
                        "title": f"Other{q}",
                        "paragraph_text": "unrelated words",
                        "is_supporting": False,
                    },
                ],
            }
        )
    path = tmp_path / "mini.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _sources(n=4):
    local = KeywordSource(
        "local", "local", [(f"Town{q}", f"town{q} lies in region{q}") for q in range(n)]
    )
    web = KeywordSource(
        "web",
        "web",
        [(f"Country{q}", f"region{q} belongs to country{q}") for q in range(n)]
        + [(f"Town{q}", f"town{q} lies in region{q}") for q in range(n)],
    )
    return SourceRegistry([local, web]), local, web


def _run(tmp_path, methods, *, limit=None, sources=None, reasoner=None, out="run"):
    registry = sources or _sources()[0]
    config = EvalConfig(
        dataset=str(_dataset(tmp_path)),
        methods=list(methods),
        out=str(tmp_path / out),
        limit=limit,
        concurrency=3,
        context={"top_k": 2},
    )
    return run_eval(
        config, sources=registry, reasoner=reasoner or ScriptedReasoner(), progress=False
    ), config


def test_all_methods_run_and_summary_has_every_metric(tmp_path):
    summary, _ = _run(tmp_path, METHODS)
    out = tmp_path / "run"
    records = read_records(out / "items.jsonl")
    assert len(records) == len(METHODS) * 4
    assert not [r for r in records if r["error"]]
    for method in METHODS:
        entry = summary[method]
        assert entry["n"] == 4
        for key in ("em", "f1", "acc", "acc_prefrag", "evidence_recall", "web_exposure"):
            assert 0.0 <= entry[key] <= 100.0
        assert set(entry["counters_mean"]) >= {
            "local_total",
            "web_total",
            "local_used",
            "used",
            "total",
        }
        assert "p50" in entry["latency_s"] and "p95" in entry["latency_s"]
    assert summary["no-retrieval"]["counters_total"]["total"] == 0
    assert summary["vanilla-local"]["web_exposure"] == 0.0
    assert summary["vanilla-web"]["web_exposure"] == 100.0
    assert summary["vanilla-both"]["counters_mean"] == {
        "local_total": 1.0,
        "web_total": 1.0,
        "local_used": 1.0,
        "used": 2.0,
        "total": 2.0,
    }
    # react-both searches both sources at each of its two hops.
    assert summary["react-both"]["counters_mean"]["local_total"] == 2.0
    assert summary["react-both"]["counters_mean"]["web_total"] == 2.0
    # The scripted second hop finds the country only on the web: PrefRAG switches there,
    # gets both gold paragraphs, and uses fewer retrievals than react-both.
    assert summary["prefrag"]["evidence_recall"] == 100.0
    assert summary["vanilla-local"]["evidence_recall"] == 50.0
    assert (
        summary["prefrag"]["counters_mean"]["used"] < summary["react-both"]["counters_mean"]["used"]
    )
    assert summary["prefrag"]["acc"] == 100.0
    assert summary["prefrag"]["model_calls_mean"]["think"] >= 1
    assert "think" in summary["prefrag"]["node_latency_s"]
    report = (out / "report.md").read_text()
    assert "| prefrag |" in report and "Evidence recall" in report
    assert (out / "accuracy_vs_retrievals.png").stat().st_size > 1000
    assert (out / "web_exposure.png").stat().st_size > 1000
    saved = json.loads((out / "config.json").read_text())
    assert saved["config"]["methods"] == list(METHODS)
    assert json.loads((out / "summary.json").read_text())["prefrag"]["n"] == 4


def test_resume_skips_finished_items_and_retries_failed_ones(tmp_path):
    registry, local, web = _sources()
    _run(tmp_path, ["vanilla-local"], limit=2, sources=registry)
    assert local.calls == 2
    _run(tmp_path, ["vanilla-local"], limit=4, sources=registry)
    # Only the two new questions were searched (the first two were finished and skipped).
    assert local.calls == 4
    lines = (tmp_path / "run" / "items.jsonl").read_text().splitlines()
    assert len(lines) == 4

    class Flaky(KeywordSource):
        fail = True

        def search(self, query, k):
            if Flaky.fail and "town1" in query:
                raise RuntimeError("boom")
            return super().search(query, k)

    flaky = Flaky("local", "local", local.passages)
    broken = SourceRegistry([flaky, web])
    summary, _ = _run(tmp_path, ["react-choose"], sources=broken, out="flaky")
    # A broken source is a trace note, not a failed item; a crashing reasoner is an error.

    class Crashing(ScriptedReasoner):
        def answer(self, question, scratchpad, evidence, *, feedback=None, earlier=None):
            if "town2" in question:
                raise RuntimeError("model down")
            return super().answer(question, scratchpad, evidence, feedback=feedback)

    summary, _ = _run(tmp_path, ["vanilla-local"], reasoner=Crashing(), out="crash")
    assert summary["vanilla-local"]["errors"] == 1
    assert summary["vanilla-local"]["n"] == 4  # the failed item scores zero, it is not dropped
    summary, _ = _run(tmp_path, ["vanilla-local"], out="crash")
    assert summary["vanilla-local"]["errors"] == 0


def test_rerun_with_different_setup_into_same_folder_is_refused(tmp_path):
    _run(tmp_path, ["no-retrieval"])
    config = EvalConfig(
        dataset=str(_dataset(tmp_path)),
        methods=["no-retrieval"],
        out=str(tmp_path / "run"),
        context={"top_k": 7},
    )
    with pytest.raises(ConfigurationError, match="top_k"):
        run_eval(config, sources=_sources()[0], reasoner=ScriptedReasoner(), progress=False)


def test_cli_command_registers_and_rejects_unknown_method(tmp_path):
    import typer

    from prefrag.eval.cli import register

    app = typer.Typer()
    register(app)

    @app.command()
    def other() -> None:  # a second command keeps `eval` a named subcommand
        pass

    runner = CliRunner()
    result = runner.invoke(app, ["eval", "--help"])
    assert result.exit_code == 0 and "--two-source" in result.output
    result = runner.invoke(
        app,
        [
            "eval",
            "--dataset",
            str(_dataset(tmp_path)),
            "--method",
            "nope",
            "--out",
            str(tmp_path / "x"),
            "--no-progress",
        ],
    )
    assert result.exit_code == 2
    assert "nope" in result.output


def test_llm_reasoner_runs_against_the_stub_endpoint(tmp_path):
    from stub_server import StubChatServer

    from prefrag.config import get_settings

    with StubChatServer(latency=0.0) as server:
        settings = get_settings().model_copy(
            update={
                "openai_base_url": server.url,
                "model": "stub",
                "backend": "openai",
                "openai_api_key": "x",
            }
        )
        config = EvalConfig(
            dataset=str(_dataset(tmp_path)),
            methods=["prefrag", "react-both"],
            out=str(tmp_path / "llm"),
            reasoner="llm",
            limit=2,
            concurrency=2,
        )
        summary = run_eval(config, settings=settings, sources=_sources()[0], progress=False)
        assert server.requests > 0
    entry = summary["prefrag"]
    assert entry["errors"] == 0
    assert entry["model_calls_mean"]["think"] >= 2  # the stub searches twice, then answers
    assert entry["tokens_mean"]["think"] > 0
    assert summary["react-both"]["counters_mean"]["web_total"] == 2.0
    assert "## Model calls" in (tmp_path / "llm" / "report.md").read_text()


def test_stub_server_refuses_non_loopback_and_bounds_requests():
    import httpx
    from stub_server import StubChatServer

    with pytest.raises(ValueError):
        StubChatServer(host="0.0.0.0")
    with StubChatServer(max_requests=1) as server:
        body = {"model": "stub", "messages": [{"role": "user", "content": "hi"}]}
        first = httpx.post(f"{server.url}/chat/completions", json=body)
        second = httpx.post(f"{server.url}/chat/completions", json=body)
    assert first.status_code == 200
    assert first.json()["choices"][0]["message"]["content"]
    assert second.status_code == 429


class _RankedSource:
    """A retrieval index in one mode: always returns `order` (ids) for any query."""

    def __init__(self, order):
        self.name, self.description, self.kind, self.authority = "corpus", "", "local", 1.0
        self.last_note = None
        self.order = order

    def search(self, query, k):
        from prefrag.documents import make_document

        return [
            make_document(text=f"text {i}", source="corpus", title=i, id=i, parent_id=i)
            for i in self.order[:k]
        ]


def test_retrieval_modes_of_one_index_are_scored_separately(tmp_path, monkeypatch):
    import prefrag.eval.runner as runner

    folder = tmp_path / "mq"
    folder.mkdir()
    rows = [{"id": f"s{n}", "title": f"T{n}", "content": "c", "question": f"q{n}?"} for n in (1, 2)]
    (folder / "1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ranked = {
        "dense": _RankedSource(["s1", "s2"]),
        "lexical": _RankedSource(["x", "y", "z"]),
        "hybrid": _RankedSource(["s2", "s1"]),
    }
    monkeypatch.setattr(runner, "_retrieval_sources", lambda *_: ranked)
    config = EvalConfig(
        dataset=str(folder), methods=["dense", "lexical", "hybrid"], out=str(tmp_path / "run")
    )
    summary = run_eval(config, progress=False, report=False)
    assert summary["dense"]["recall@1"] == 50.0  # s1 right, s2 second
    assert summary["lexical"]["recall@5"] == 0.0
    assert summary["hybrid"]["recall@1"] == 50.0 and summary["hybrid"]["recall@5"] == 100.0


# ----- tool nodes -----------------------------------------------------------------------
class _CountingKeywordSource(KeywordSource):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.ks = []

    def search(self, query, k):
        self.ks.append(k)
        return super().search(query, k)


def test_polyview_option_reaches_the_graph_and_is_saved(tmp_path, monkeypatch):
    from prefrag.tools.polyview import PolyviewReranker

    care = {"care": PolyviewReranker(profile="care", embedder=BagOfWords())}
    _, _, web = _sources()
    local = _CountingKeywordSource(
        "local", "local", [(f"Town{q}", f"town{q} lies in region{q}") for q in range(4)]
    )
    config = EvalConfig(
        dataset=str(_dataset(tmp_path)),
        methods=["prefrag", "vanilla-local"],
        out=str(tmp_path / "run"),
        context={"top_k": 2, "use_polyview": True, "polyview_profile": "care"},
    )
    summary = run_eval(
        config,
        sources=SourceRegistry([local, web]),
        reasoner=ScriptedReasoner(),
        rerankers=care,
        progress=False,
    )
    records = read_records(tmp_path / "run" / "items.jsonl")
    prefrag = [r for r in records if r["method"] == "prefrag"]
    assert prefrag and all(any("Polyview (care" in n for n in r["notes"]) for r in prefrag)
    assert 6 in local.ks  # the graph fetched top_k x pool candidates for the reranker
    assert "polyview_rerank" in summary["prefrag"]["node_latency_s"]
    saved = json.loads((tmp_path / "run" / "config.json").read_text())["config"]
    assert saved["context"]["use_polyview"] is True
    assert saved["context"]["polyview_profile"] == "care"
    assert "use_mog" not in saved["context"]
    config.context["use_polyview"] = False
    with pytest.raises(ConfigurationError, match="polyview"):
        run_eval(config, sources=_sources()[0], reasoner=ScriptedReasoner(), progress=False)


def test_unknown_polyview_profile_is_refused(tmp_path):
    config = EvalConfig(
        dataset=str(_dataset(tmp_path)),
        methods=["prefrag"],
        out=str(tmp_path / "run"),
        context={"use_polyview": True, "polyview_profile": "nonsense"},
    )
    with pytest.raises(ConfigurationError, match="nonsense"):
        run_eval(config, sources=_sources()[0], reasoner=ScriptedReasoner(), progress=False)


def test_mog_option_builds_the_index_of_the_searched_source_and_uses_it(tmp_path, monkeypatch):
    from prefrag.config import Settings
    from prefrag.documents import make_document
    from prefrag.shared import SharedResources, sharing
    from prefrag.tools import granularity_source

    registry, local, _ = _sources()
    local.settings = Settings(home=tmp_path / "eval-home")  # like an eval's LocalSource
    whole = [
        make_document(text, id=title, source="local", title=title) for title, text in local.passages
    ]
    monkeypatch.setattr(granularity_source, "source_documents", lambda name, settings: whole)
    config = EvalConfig(
        dataset=str(_dataset(tmp_path)),
        methods=["prefrag"],
        out=str(tmp_path / "run"),
        context={"top_k": 2, "use_mog": True},
    )
    with sharing(SharedResources(embedder=BagOfWords())):  # the process's embedder, for this run
        run_eval(
            config,
            sources=registry,
            reasoner=ScriptedReasoner(),
            settings=Settings(home=tmp_path / "user-home"),
            progress=False,
        )
    folder = tmp_path / "eval-home" / "sources" / "local" / "mog"
    assert (folder / "index.json").exists()
    assert not (tmp_path / "user-home" / "sources").exists()
    records = read_records(tmp_path / "run" / "items.jsonl")
    assert all(any("MoG on 'local'" in n for n in r["notes"]) for r in records)
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert saved["config"]["context"]["use_mog"] is True and saved["mog"]["built"] is True


def test_mog_option_without_an_indexed_source_is_a_clear_error(tmp_path):
    from prefrag.config import Settings

    config = EvalConfig(
        dataset=str(_dataset(tmp_path)),
        methods=["prefrag"],
        out=str(tmp_path / "run"),
        context={"use_mog": True},
    )
    with pytest.raises(ConfigurationError, match="--mog"):
        run_eval(
            config,
            sources=_sources()[0],
            reasoner=ScriptedReasoner(),
            settings=Settings(home=tmp_path / "empty"),
            progress=False,
        )


def _eval_app() -> tuple[typer.Typer, set[str]]:
    """An app holding `prefrag eval` (and a second command, so `eval` stays a subcommand),
    and the option names `eval` offers."""
    from prefrag.eval.cli import register

    app = typer.Typer()
    register(app)

    @app.command()
    def other() -> None:
        pass

    command = typer.main.get_command(app).commands["eval"]  # type: ignore[attr-defined]
    return app, {opt for param in command.params for opt in param.opts}


def test_cli_tool_options_are_offered():
    app, _ = _eval_app()
    result = CliRunner().invoke(app, ["eval", "--help"])
    for option in ("--polyview", "--polyview-profile", "--mog"):
        assert option in result.output


def test_every_run_setting_is_an_eval_option_and_reaches_the_graph(tmp_path):
    from dataclasses import fields

    from prefrag.graphs.context import Context
    from prefrag.run_options import option_name

    app, offered = _eval_app()
    for field in fields(Context):
        if field.name != "reasoner":  # eval's own --reasoner picks how the reasoner is built
            assert option_name(field.name) in offered, field.name

    out = tmp_path / "run"
    args = ["eval", "--dataset", str(_dataset(tmp_path)), "--out", str(out)]
    args += ["--method", "no-retrieval", "--no-progress", "--polyview-views", "R,A"]
    args += ["--polyview-pool", "2", "--no-polyview-coverage", "--max-reflections", "0"]
    result = CliRunner().invoke(app, args)
    saved = json.loads((out / "config.json").read_text())["config"]["context"]
    assert saved == {
        "polyview_views": ["R", "A"],
        "polyview_pool": 2,
        "polyview_coverage": False,
        "max_reflections": 0,
    }, result.output
    from prefrag.eval.runner import _context

    config = EvalConfig(dataset="d", methods=["prefrag"], out=str(out), context=saved)
    context = _context(config, SourceRegistry())
    assert (context.polyview_views, context.polyview_pool) == (["R", "A"], 2)
    assert context.polyview_coverage is False and context.reasoner == "extractive"


def test_eval_with_limit_indexes_only_the_evaluated_items_and_prints_whole_table_rows(tmp_path):
    from prefrag.cli import app

    out = tmp_path / "limited"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--dataset",
            str(_dataset(tmp_path, n=6)),
            "--method",
            "vanilla-local",
            "--out",
            str(out),
            "--limit",
            "2",
            "--no-progress",
        ],
        terminal_width=60,
    )
    assert result.exit_code == 0, result.output
    saved = json.loads((out / "config.json").read_text())
    assert saved["config"]["corpus"] == "items"
    indexed = (out / "index" / "local.jsonl").read_text().splitlines()
    assert len(indexed) == 2 * 3  # two items of three paragraphs, not all six items
    rows = [line for line in result.output.splitlines() if line.startswith("| vanilla-local")]
    assert rows and all(line.rstrip().endswith("|") for line in rows)


def test_accuracy_plot_starts_at_zero_and_its_legend_covers_no_bar():
    from prefrag.eval.report import accuracy_figure

    summary = {
        m: {"acc": 40.0 + i, "f1": 45.0, "counters_mean": {"local_total": 2.0 + i, "used": 3.0}}
        for i, m in enumerate(["prefrag", "vanilla-both", "react-both"])
    }
    fig = accuracy_figure(summary)
    fig.canvas.draw()
    bars, scores = fig.axes
    assert bars.get_ylim()[0] == 0 and scores.get_ylim()[0] == 0
    assert not bars.get_legend() and len(fig.legends) == 1
    renderer = fig.canvas.get_renderer()
    legend_box = fig.legends[0].get_window_extent(renderer)
    assert not legend_box.overlaps(bars.get_window_extent(renderer))


def test_an_item_range_selects_those_items_one_based_and_inclusive():
    from prefrag.datasets import Dataset, EvalItem, select_items

    items = [EvalItem(id=f"q{i}", question=f"question {i}?", answers=("a",)) for i in range(1, 11)]
    dataset = Dataset(name="toy", task="qa", items=items)
    chosen = select_items(dataset, item_range="3-5")
    assert [item.id for item in chosen] == ["q3", "q4", "q5"]
    assert [item.id for item in select_items(dataset, item_range="3-8", limit=2)] == ["q3", "q4"]
    with pytest.raises(ConfigurationError, match="201-350"):
        select_items(dataset, item_range="5-2")


def test_every_eval_config_field_is_an_option_and_bad_choices_name_what_is_accepted(tmp_path):
    from dataclasses import fields

    from prefrag.eval.runner import EvalConfig, option_of

    app, offered = _eval_app()
    for spec in fields(EvalConfig):
        if spec.name != "context":  # the run settings: one option per Context field
            assert option_of(spec.name) in offered, spec.name

    base = ["eval", "--dataset", str(_dataset(tmp_path)), "--out", str(tmp_path / "run")]
    for option, value, accepted in (
        ("--reasoner", "big", "extractive, llm, auto"),
        ("--corpus", "some", "all, items"),
        ("--task", "nope", "qa, mc, retrieval"),
    ):
        result = CliRunner().invoke(app, [*base, option, value, "--no-progress"])
        assert result.exit_code == 2
        assert f"{option} must be one of {accepted}; got '{value}'." in " ".join(
            result.output.split()
        )
    # Every value the error names is accepted (auto resolves to the extractive reasoner here).
    result = CliRunner().invoke(
        app, [*base, "--reasoner", "auto", "--method", "no-retrieval", "--no-progress"]
    )
    assert result.exit_code == 0, result.output


class UnsureReasoner(ScriptedReasoner):
    """Finds the right answer but abstains, quoting it: "not sure enough ('Country0')"."""

    def answer(self, question, scratchpad, evidence, *, feedback=None, earlier=None):
        found = super().answer(question, scratchpad, evidence, feedback=feedback)
        return found.model_copy(
            update={
                "answer": "The sources I could reach do not answer this: the best answer found"
                f" ('{found.answer}') is not sure enough.",
                "short_answer": found.answer,
                "abstained": True,
            }
        )


def test_an_abstention_quoting_the_answer_scores_zero(tmp_path):
    summary, _ = _run(tmp_path, ["prefrag"], reasoner=UnsureReasoner())
    records = read_records(tmp_path / "run" / "items.jsonl")
    assert records and all(r["abstained"] for r in records)
    # The text holds the gold answer, yet an abstention answered nothing.
    assert any("Country" in r["prediction"] for r in records)
    for record in records:
        assert {k: record["scores"][k] for k in ("em", "f1", "acc", "acc_prefrag")} == {
            "em": 0.0,
            "f1": 0.0,
            "acc": 0.0,
            "acc_prefrag": 0.0,
        }
    assert summary["prefrag"]["acc"] == 0.0 and summary["prefrag"]["em"] == 0.0
    # The same answers, not abstained, score.
    answered, _ = _run(tmp_path, ["prefrag"], out="answered")
    assert answered["prefrag"]["acc"] == 100.0

"""The tuning guard: `bench/demo_questions.py`'s check must stay at or above its bar."""

from __future__ import annotations

from pathlib import Path

import pytest
from repo_files import load_file

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "demo_questions.py"


def _script():
    return load_file(SCRIPT, "demo_questions_bench")


def test_below_bar_names_each_kind_that_regressed() -> None:
    bench = _script()
    at_bar = {kind: [bar, bar + 1] for kind, bar in bench.BAR.items()}
    assert bench.below_bar(at_bar) == []
    at_bar["conflict"][0] -= 1
    assert bench.below_bar(at_bar) == [
        f"conflict {bench.BAR['conflict'] - 1}/"
        f"{bench.BAR['conflict'] + 1} (bar {bench.BAR['conflict']})"
    ]


@pytest.mark.slow
def test_demo_questions_stay_at_or_above_the_scripts_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    from prefrag.config import get_settings

    monkeypatch.setenv("PREFRAG_WEB_ENABLED", "false")
    get_settings.cache_clear()
    bench = _script()
    rows, totals = bench.run()
    wrong = [f"{r['number']} [{r['kind']}] {r['reason']}" for r in rows if not r["right"]]
    assert bench.below_bar(totals) == [], wrong

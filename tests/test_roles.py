"""Reasoner roles are declared once; context, settings, wiring and caches follow."""

from __future__ import annotations

from dataclasses import dataclass, fields

import pytest
from _eval_fakes import ScriptedReasoner as EvalFake
from graph_helpers import ListSource
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from test_graph_flow import ScriptedReasoner as FlowFake

from prefrag.config import Settings
from prefrag.errors import ConfigurationError
from prefrag.graphs.context import Context
from prefrag.graphs.resources import ResourceProvider
from prefrag.reasoners import roles
from prefrag.reasoners.base import Reasoner
from prefrag.reasoners.extractive import ExtractiveReasoner
from prefrag.reasoners.llm import LLMReasoner
from prefrag.reasoners.roles import ROLE_NAMES, ROLES, Role, models_of
from prefrag.sources.base import SourceRegistry


def test_every_role_has_a_context_field_a_setting_and_a_method(monkeypatch):
    context_fields = {f.name: f for f in fields(Context)}
    monkeypatch.setenv("PREFRAG_COMPARE_MODEL", "judge")
    settings = Settings(_env_file=None)
    for role in ROLES:
        assert context_fields[role.model_field].default is None
        assert context_fields[role.model_field].metadata["description"] == role.model_help
        assert role.model_field in Settings.model_fields
        assert callable(getattr(Reasoner, role.name))
        for reasoner in (ExtractiveReasoner, LLMReasoner, FlowFake, EvalFake):
            assert callable(getattr(reasoner, role.name, None)), (reasoner, role.name)
    assert models_of(settings)["compare"] == "judge"
    assert models_of(Context(answer_model="big")) == {
        name: ("big" if name == "answer" else None) for name in ROLE_NAMES
    }


def test_llm_reasoner_wires_every_role_and_names_a_missing_one():
    default, judge = FakeListChatModel(responses=["x"]), FakeListChatModel(responses=["y"])
    reasoner = LLMReasoner({"default": default, "compare": judge}, structured=False)
    assert set(reasoner.models) == set(ROLE_NAMES)
    assert reasoner.models["compare"] is judge and reasoner.models["think"] is default
    with pytest.raises(ConfigurationError, match="reflect"):
        LLMReasoner({r: default for r in ROLE_NAMES if r != "reflect"}, structured=False)


def test_the_reasoner_cache_key_covers_every_role_model():
    built: list[Context] = []

    def factory(context: Context) -> Reasoner:
        built.append(context)
        return FlowFake()

    provider = ResourceProvider(
        sources=SourceRegistry([ListSource("local")]), reasoner_factory=factory
    )
    provider.reasoner(Context())
    provider.reasoner(Context())
    assert len(built) == 1
    for role in ROLES:
        provider.reasoner(Context(**{role.model_field: f"{role.name}-model"}))
    assert len(built) == 1 + len(ROLES)


def test_a_new_role_needs_its_fields_and_then_follows_everywhere(monkeypatch):
    """A role not yet in `ROLES`: the classes lacking its field are refused; one with it works."""
    critique = Role("critique", "Chat model that critiques the answer.")
    assert critique.name not in ROLE_NAMES
    monkeypatch.setattr(roles, "ROLES", (*ROLES, critique))
    monkeypatch.setattr(roles, "ROLE_NAMES", (*ROLE_NAMES, "critique"))

    with pytest.raises(TypeError, match="critique_model"):
        roles.require_model_fields((f.name for f in fields(Context)), "Context")
    with pytest.raises(TypeError, match="critique_model"):
        roles.require_model_fields(Settings.model_fields, "Settings")

    @dataclass(kw_only=True)
    class RunSettings(Context):
        critique_model: str | None = None

    roles.require_model_fields((f.name for f in fields(RunSettings)), "RunSettings")
    assert models_of(RunSettings(critique_model="critic"))["critique"] == "critic"
    assert roles.complete({"default": "m"})["critique"] == "m"

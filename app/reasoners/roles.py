"""The reasoner's roles, declared once.

Each `Role` is one method of the `Reasoner` protocol and one chat model slot. What lists
roles follows from `ROLES`: the key under which built reasoners are cached, the models
`LLMReasoner` wires, and the test fakes' checks. The run context's `<role>_model` fields
(Studio's form) and the process settings `PREFRAG_<ROLE>_MODEL` are written out in
`Context` and `Settings`, so type checkers see them; both classes check themselves
against `ROLES` at import. Adding a role is one entry here, its two fields, and the role's
method on each reasoner (with its prompt and wire schema).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ENDPOINT_NAMES",
    "MODEL_HELP",
    "ROLES",
    "ROLE_NAMES",
    "Role",
    "complete",
    "declare_endpoint_fields",
    "models_of",
    "require_model_fields",
]


@dataclass(frozen=True)
class Role:
    """One role of the PrefRAG process: a `Reasoner` method and a chat-model slot.

    Attributes:
        name: The method name on `Reasoner` and the key of per-role models and usage.
        model_help: What the role's chat model does (the run-context field's description).
    """

    name: str
    model_help: str

    @property
    def model_field(self) -> str:
        """Name of the per-role model field in `Context` and `Settings` (`<role>_model`)."""
        return f"{self.name}_model"


ROLES: tuple[Role, ...] = (
    Role("think", "Chat model for thoughts and sub-queries (and the forced answer)."),
    Role("compare", "Chat model behind `compare` (the switcher)."),
    Role("answer", "Chat model for the final answer."),
    Role("reflect", "Chat model for self-reflection."),
    Role("plan", "Chat model that plans per-source queries (the plan_sources node, SPO)."),
    Role(
        "condense",
        "Chat model that rewrites a follow-up on a thread into a standalone question "
        "(the condense_question node).",
    ),
)
ROLE_NAMES: tuple[str, ...] = tuple(role.name for role in ROLES)


MODEL_HELP: dict[str, str] = {role.name: role.model_help for role in ROLES}


def require_model_fields(names: Iterable[str], holder: str) -> None:
    """Refuse a class that lacks a `<role>_model` field for some role in `ROLES`.

    `Context` and `Settings` write their per-role fields out (so type checkers see them)
    and call this once, so a role added to `ROLES` without its fields fails at import.

    Raises:
        TypeError: Some role has no field in `names`; the message names the fields.
    """
    present = set(names)
    missing = [role.model_field for role in ROLES if role.model_field not in present]
    if missing:
        raise TypeError(f"{holder} lacks the per-role model field(s) {missing}; add them.")


# Endpoints can be set per role, and for the switcher-data teacher (a judge that often
# runs on another server than the policy): `PREFRAG_<NAME>_BASE_URL` / `_API_KEY`.
ENDPOINT_NAMES: tuple[str, ...] = (*ROLE_NAMES, "teacher")


def declare_endpoint_fields(
    namespace: MutableMapping[str, Any], default: Callable[[str, str], Any]
) -> None:
    """Declare optional `<name>_base_url` and `<name>_api_key` fields per endpoint name.

    Called as `declare_endpoint_fields(locals(), ...)` in the body of `Settings`; `default`
    gets the endpoint name and "base_url" or "api_key" and returns the field's default.
    """
    annotations = namespace.setdefault("__annotations__", {})
    for name in ENDPOINT_NAMES:
        for part in ("base_url", "api_key"):
            annotations[f"{name}_{part}"] = "str | None"
            namespace[f"{name}_{part}"] = default(name, part)


def models_of(holder: object) -> dict[str, str | None]:
    """The per-role model names of a `Context` or `Settings`, keyed by role name."""
    return {role.name: getattr(holder, role.model_field, None) for role in ROLES}


def complete(models: Mapping[str, Any], *, what: str = "model") -> dict[str, Any]:
    """One entry per role from `models`, whose "default" key fills the roles not given.

    Raises:
        ConfigurationError: A role has neither its own entry nor a default.
    """
    from prefrag.errors import ConfigurationError

    missing = [r for r in ROLE_NAMES if models.get(r) is None and models.get("default") is None]
    if missing:
        raise ConfigurationError(
            f"No {what} is given for the role(s) {', '.join(missing)}; "
            f"pass one per role or a 'default' {what}."
        )
    return {
        role: models["default"] if models.get(role) is None else models[role] for role in ROLE_NAMES
    }

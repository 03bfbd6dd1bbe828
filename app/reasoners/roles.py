"""The reasoner's roles, declared once.

Each `Role` is one method of the `Reasoner` protocol and one chat model slot. Everything
that lists roles follows from `ROLES`: the run context's `<role>_model` fields (Studio's
form), the process settings `PREFRAG_<ROLE>_MODEL`, the key under which built reasoners are
cached, the models `LLMReasoner` wires, and the test fakes' checks. Adding a role is one
entry here plus the role's method on each reasoner (and its prompt and wire schema).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ROLES",
    "ROLE_NAMES",
    "Role",
    "complete",
    "declare_model_fields",
    "models_of",
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


def declare_model_fields(
    namespace: MutableMapping[str, Any], default: Callable[[Role], Any]
) -> None:
    """Declare one optional `<role>_model: str | None` field per role in a class body.

    Called as `declare_model_fields(locals(), ...)` inside the body of a dataclass or a
    pydantic model, so the fields exist before the class is built and are ordinary
    fields there (Studio's context form, `PREFRAG_<ROLE>_MODEL` settings).

    Args:
        namespace: The class body's namespace.
        default: The field's default for a role (e.g. a `dataclasses.field(...)` or a
            pydantic `Field(...)` carrying `role.model_help`).
    """
    annotations = namespace.setdefault("__annotations__", {})
    for role in ROLES:
        annotations[role.model_field] = "str | None"
        namespace[role.model_field] = default(role)


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

"""What a source made of member sources shares: its members, authority and notes."""

from __future__ import annotations

from collections.abc import Sequence

from prefrag.sources.base import DEFAULT_QUERY_FORMAT, Source, SourceKind

__all__ = ["SourceGroup"]


class SourceGroup:
    """The `Source` attributes of several local sources searched as one.

    Its authority is its most authoritative member's; `member_names` lists the `source`
    names its documents may carry (each document keeps its member's name, so citations say
    where it really came from); `last_note` joins the notes of members that returned
    nothing. Subclasses implement `search` and set `_note` there.
    """

    kind: SourceKind = "local"

    def __init__(self, members: Sequence[Source], *, name: str, description: str) -> None:
        """Group `members` as `name`, described as `description` followed by their names.

        Raises:
            ValueError: There is no member.
        """
        if not members:
            raise ValueError(f"{type(self).__name__} needs at least one member source.")
        self.members = list(members)
        self.name = name
        self.description = description + ", ".join(m.name for m in self.members)
        self.authority = max(m.authority for m in self.members)
        self.query_format = DEFAULT_QUERY_FORMAT
        self._note: str | None = None

    @property
    def member_names(self) -> set[str]:
        """Source names its documents may carry."""
        return {member.name for member in self.members}

    @property
    def last_note(self) -> str | None:
        """Notes of members that returned nothing, if any."""
        return self._note

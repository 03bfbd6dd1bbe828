"""Typed errors. Each carries one sentence a user can act on."""

from __future__ import annotations


class PrefRAGError(Exception):
    """Base class of every error PrefRAG raises on purpose."""


class InvalidQuestionError(PrefRAGError, ValueError):
    """The question is not text, or longer than `PREFRAG_MAX_QUESTION_CHARS`."""


class EmptyQuestionError(InvalidQuestionError):
    """The question is empty or only whitespace."""


class UnknownSourceError(PrefRAGError, KeyError):
    """A source name that is not configured or indexed."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown source"


class StoreMissingError(PrefRAGError):
    """The local store for a source does not exist yet."""


class StoreLockedError(PrefRAGError):
    """Another process holds the embedded store."""


class IngestError(PrefRAGError, ValueError):
    """An input file cannot be read or parsed; nothing was written."""


class ModelEndpointError(PrefRAGError):
    """A configured model endpoint cannot be reached or refuses the request."""


class ConfigurationError(PrefRAGError, ValueError):
    """Settings that contradict each other or name something that does not exist."""


class CheckpointStoreError(PrefRAGError):
    """The checkpoint database of `--thread` runs is damaged or not writable."""


class DamagedStoreError(PrefRAGError):
    """A local source's files on disk are damaged or disagree; the message says how to fix.

    `problem` is what is wrong, without the advice (for `prefrag sources check`).
    """

    def __init__(self, message: str, problem: str = "") -> None:
        super().__init__(message)
        self.problem = problem or message

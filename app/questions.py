"""The one check every question passes, whichever way it arrives (CLI, API, Studio)."""

from __future__ import annotations

from prefrag.config import get_settings
from prefrag.errors import EmptyQuestionError, InvalidQuestionError

__all__ = ["checked_question"]


def checked_question(question: object) -> str:
    """`question` without surrounding whitespace, once it is text of a usable length.

    Raises:
        InvalidQuestionError: It is not a string, or longer than `max_question_chars`.
        EmptyQuestionError: It is empty or only whitespace.
    """
    if not isinstance(question, str):
        raise InvalidQuestionError(
            f"The question must be text, not {type(question).__name__}; send it as a string."
        )
    text = question.strip()
    if not text:
        raise EmptyQuestionError("The question is empty; ask something.")
    limit = get_settings().max_question_chars
    if len(text) > limit:
        raise InvalidQuestionError(
            f"The question is {len(text):,} characters long, over the limit of {limit:,} "
            "(PREFRAG_MAX_QUESTION_CHARS); ask it in fewer words."
        )
    return text

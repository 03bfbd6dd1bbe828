"""Reasoners: the model seam behind every graph node."""

from prefrag.reasoners.base import (
    AnswerDraft,
    CompareVerdict,
    Feedback,
    Reasoner,
    Reflection,
    ScratchpadStep,
    ThinkDecision,
    Usage,
)

__all__ = [
    "AnswerDraft",
    "CompareVerdict",
    "Feedback",
    "Reasoner",
    "Reflection",
    "ScratchpadStep",
    "ThinkDecision",
    "Usage",
]

"""PLACEHOLDER written by the lead so the graph imports; the tool-node helper replaces this file."""

from typing import Any


def mog_select(state: Any) -> dict:
    return {}


def polyview_rerank(state: Any) -> dict:
    return {}

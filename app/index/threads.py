"""BLAS thread control for query-sized numpy work.

A matrix-vector product over a few thousand vectors, or a query's pass through MiniLM, is
faster on one BLAS thread than on several (here 0.13 ms against 7.4 ms on two busy cores):
waking worker threads costs more than the arithmetic.
"""

from __future__ import annotations

import contextlib
from typing import Any

from prefrag.shared import shared


def _controller() -> Any:
    # Built once per process (`prefrag.shared`): inspecting the loaded libraries costs ~1 ms,
    # a limit afterwards ~7 µs.
    return shared().once("blas controller", _new_controller)


def _new_controller() -> Any:
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - scikit-learn brings threadpoolctl
        return None
    return ThreadpoolController()


def single_blas_thread() -> contextlib.AbstractContextManager[Any]:
    """A context in which numpy's BLAS runs on one thread."""
    controller = _controller()
    if controller is None:  # pragma: no cover
        return contextlib.nullcontext()
    return controller.limit(limits=1, user_api="blas")

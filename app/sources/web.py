"""The web source: DuckDuckGo and friends through `ddgs`, cached, scored by domain authority.

The search client is anything with a ddgs-compatible `text` method (see `SearchClient`);
by default a fresh `ddgs.DDGS` per attempt. Tests and the eval harness inject their own.
"""

from __future__ import annotations

import functools
import logging
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException
from langchain_core.documents import Document

from prefrag.config import Settings, get_settings
from prefrag.documents import content_id, make_document
from prefrag.shared import shared
from prefrag.sources.authority import AuthorityTable
from prefrag.sources.base import SourceKind
from prefrag.sources.cache import WebCache

logger = logging.getLogger(__name__)

SAFESEARCH = "moderate"
_BACKOFF_BASE_SECONDS = 1.0
_BACKOFF_CAP_SECONDS = 30.0
_NOTE_DETAIL_CHARS = 160
_NO_RESULTS = "no results found"
_T = TypeVar("_T")


class SearchClient(Protocol):
    """What `WebSource` needs from a search client: ddgs's `DDGS.text` shape.

    `WebSource` calls `client.text(query, max_results=k, region=..., safesearch=...,
    backend=...)` and reads `title`, `href` (or `url`), `body` (or `snippet`) and an
    optional `date` from each returned mapping; other keys are ignored. Transient failures
    are signalled with `ddgs.exceptions.DDGSException` (and its `RatelimitException`,
    `TimeoutException`), `TimeoutError` or `OSError`: those are retried with backoff. A
    `DDGSException` whose message is "No results found." means an empty result, as in
    ddgs itself. Implementations must accept (and may ignore) unknown keyword arguments.
    """

    def text(self, query: str, **kwargs: Any) -> Iterable[Mapping[str, Any]]:
        """Search results for `query`, best first."""
        ...


class WebSource:
    """Web search as a PrefRAG `Source` (kind "web").

    Results become Documents whose text is the snippet, with title, url (for citations),
    date when the result has one, an id derived from the url and the authority of the
    url's domain. Searches are cached (`WebCache`) when they return something. Each
    attempt is bounded by `Settings.web_timeout` seconds; failed attempts are retried
    `Settings.web_retries` times with exponential backoff. `search` never raises: when the
    web is disabled, offline or failing it returns `[]` and `last_note` says why.
    `last_note` is per thread, so concurrent searches on one source keep their own notes.
    """

    kind: SourceKind
    name: str
    description: str
    query_format: str
    authority: float

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        client: SearchClient | None = None,
        cache: WebCache | None = None,
        authority_table: AuthorityTable | None = None,
        name: str = "web",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Configure the source; nothing touches the network until `search`.

        Args:
            settings: Process settings; None uses `get_settings()`.
            client: A ddgs-compatible client; None builds `ddgs.DDGS` per attempt.
            cache: Result cache; None opens the one under `Settings.cache_dir` (no cache
                when `web_cache_ttl_hours` <= 0 or the cache cannot be opened).
            authority_table: Domain scores; None loads `Settings.authority_table` or the
                bundled table.
            name: Source name shown in citations and routes.
            sleep: Called with the backoff delay in seconds between attempts.

        Raises:
            ConfigurationError: The authority table file is missing or malformed.
        """
        self.settings = settings or get_settings()
        self.name = name
        self.kind = "web"
        self.description = (
            "Web search (DuckDuckGo and other engines via ddgs): broad and current, "
            "but snippets only and of mixed reliability."
        )
        self.authority_table = authority_table or AuthorityTable.load(self.settings.authority_table)
        self.authority = self.authority_table.default
        self.query_format = "a few search-engine keywords or a short question"
        self.cache = cache if cache is not None else _default_cache(self.settings)
        self._client = client
        self._sleep = sleep
        self._local = threading.local()

    @property
    def last_note(self) -> str | None:
        """Why this thread's last search returned nothing, if it did."""
        note: str | None = getattr(self._local, "note", None)
        return note

    def search(self, query: str, k: int) -> list[Document]:
        """The top-`k` web results for `query` as Documents, best first; never raises.

        Args:
            query: The search query.
            k: Maximum number of documents.

        Returns:
            Up to `k` documents; `[]` with `last_note` set when the web is disabled,
            unreachable or failing, or the query is empty.
        """
        self._local.note = None
        try:
            return self._search(query, k)
        except Exception as error:  # the graph must never see an exception from the web
            logger.exception("web search failed unexpectedly")
            self._local.note = f"web search unavailable: {_describe(error)}."
            return []

    def _search(self, query: str, k: int) -> list[Document]:
        if k <= 0:
            return []
        if not self.settings.web_enabled:
            self._local.note = "web search unavailable: disabled in settings (web_enabled=false)."
            return []
        query = " ".join(str(query).split())
        if not query:
            self._local.note = "web search skipped: the query is empty."
            return []
        results = self._cache_get(query, k)
        if results is None:
            results = self._fetch(query, k)
            if results is None:
                return []
            if results:
                self._cache_put(query, k, results)
        documents = self._to_documents(results, k)
        if not documents:
            self._local.note = "web search found no results for this query."
        return documents

    def _fetch(self, query: str, k: int) -> list[dict[str, Any]] | None:
        """Raw results, `[]` when there are none, None after failing (note set).

        Transient failures (ddgs errors, rate limits, timeouts, connection errors) are
        retried by tenacity with `_backoff` waits; anything else fails at once.
        """
        from tenacity import Retrying, retry_if_exception_type, stop_after_attempt

        attempts = max(0, self.settings.web_retries) + 1
        retrying = Retrying(
            stop=stop_after_attempt(attempts),
            wait=lambda state: _backoff(
                state.attempt_number - 1, state.outcome.exception() if state.outcome else None
            ),
            retry=retry_if_exception_type((DDGSException, OSError)),
            sleep=self._sleep,
            before_sleep=lambda state: logger.info(
                "web search attempt %d/%d failed: %r",
                state.attempt_number,
                attempts,
                state.outcome.exception() if state.outcome else None,
            ),
            reraise=True,
        )
        try:
            return retrying(self._call_or_empty, query, k)
        except (DDGSException, OSError) as error:  # includes TimeoutError
            tries = f"{attempts} attempt" + ("s" if attempts != 1 else "")
            self._local.note = f"web search unavailable: {_describe(error)} after {tries}."
        except Exception as failure:  # a broken client will not heal by retrying
            self._local.note = f"web search unavailable: {_describe(failure)}."
        return None

    def _call_or_empty(self, query: str, k: int) -> list[dict[str, Any]]:
        """`_call`, with ddgs's "No results found." error read as an empty result."""
        try:
            return self._call(query, k)
        except DDGSException as failure:
            if _NO_RESULTS in str(failure).lower():
                return []
            raise

    def _call(self, query: str, k: int) -> list[dict[str, Any]]:
        client = self._client if self._client is not None else _ddgs_client(self.settings)
        kwargs = {
            "max_results": k,
            "region": self.settings.web_region,
            "safesearch": SAFESEARCH,
            "backend": self.settings.web_backend,
        }
        raw = _with_deadline(lambda: list(client.text(query, **kwargs)), self.settings.web_timeout)
        return [dict(item) for item in raw if isinstance(item, Mapping)]

    def _to_documents(self, results: list[dict[str, Any]], k: int) -> list[Document]:
        documents: list[Document] = []
        seen: set[str] = set()
        for item in results:
            if len(documents) >= k:
                break
            url = _http_url(item.get("href") or item.get("url"))
            title = _text(item.get("title"), _MAX_TITLE_CHARS)
            body = item.get("body") or item.get("snippet")
            if body is not None and not isinstance(body, str):
                continue  # a malformed result, not a document
            snippet = _text(body, _MAX_SNIPPET_CHARS) or title
            if not url or not snippet:
                continue  # no usable link (none, not http(s), not a string) or no text
            doc_id = content_id("web", url)
            if doc_id in seen:
                continue
            seen.add(doc_id)
            documents.append(
                make_document(
                    snippet,
                    id=doc_id,
                    source=self.name,
                    kind="web",
                    title=title,
                    url=url,
                    date=_iso_date(item.get("date")),
                    authority=self.authority_table.score(url),
                    # Engines give ranks, not scores: reciprocal rank keeps "higher is better".
                    score=1.0 / (len(documents) + 1),
                )
            )
        return documents

    def _cache_key_parts(self) -> dict[str, str]:
        return {"backend": self.settings.web_backend, "region": self.settings.web_region}

    def _cache_get(self, query: str, k: int) -> list[dict[str, Any]] | None:
        if self.cache is None:
            return None
        try:
            return self.cache.get(query, k, **self._cache_key_parts())
        except (sqlite3.Error, OSError, ValueError):
            logger.warning("web cache unreadable; searching instead", exc_info=True)
            return None

    def _cache_put(self, query: str, k: int, results: list[dict[str, Any]]) -> None:
        if self.cache is None:
            return
        try:
            self.cache.put(query, k, results, **self._cache_key_parts())
        except (sqlite3.Error, OSError, ValueError, TypeError):
            logger.warning("web cache not writable; result not cached", exc_info=True)


_MAX_SNIPPET_CHARS = 1_000  # engines send ~300; a multi-megabyte "snippet" is hostile
_MAX_TITLE_CHARS = 300
_MAX_URL_CHARS = 2_048


def _default_cache(settings: Settings) -> WebCache | None:
    if settings.web_cache_ttl_hours <= 0:
        return None
    try:
        return WebCache.from_settings(settings)
    except (sqlite3.Error, OSError):
        logger.warning("web cache cannot be opened; searching without it", exc_info=True)
        return None


def _ddgs_client(settings: Settings) -> SearchClient:
    # Imported here: `ddgs.DDGS` loads its engines lazily and most runs never touch the web.
    return _bounded_ddgs()(timeout=settings.web_timeout, proxy=settings.web_proxy)


MAX_RESPONSE_BYTES = 2_000_000  # a results page is 50-500 kB; more is hostile or broken


@functools.cache
def _bounded_ddgs() -> type:
    """`ddgs.DDGS` whose engines read each response as a bounded stream (`bound_reads`)."""
    from ddgs.ddgs import DDGS  # the real class: `ddgs.DDGS` is a lazy-loading proxy

    class BoundedDDGS(DDGS):
        def _get_engines(self, category: str, backend: str) -> list[Any]:
            engines = super()._get_engines(category, backend)
            for engine in engines:
                bound_reads(engine.http_client, float(self._timeout or 10))
            return list(engines)

    return BoundedDDGS


def bound_reads(http_client: Any, timeout: float, limit: int = MAX_RESPONSE_BYTES) -> None:
    """Make a ddgs `HttpClient` stream each body and stop at `limit` bytes or `timeout` s.

    ddgs reads whole bodies, so a server whose body never ends is read (into memory)
    long after the search's deadline has passed; with this the read stops at once.
    """
    if getattr(http_client, "_prefrag_bounded", False):
        return
    client = http_client.client

    def request(method: str, url: str, *args: Any, **kwargs: Any) -> _BoundedResponse:
        import primp

        deadline = time.monotonic() + timeout
        try:
            response = client.request(method, url, *args, stream=True, **kwargs)
            try:
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > limit:
                        raise DDGSException(f"response over {limit:,} bytes; stopped reading")
                    if time.monotonic() > deadline:
                        raise TimeoutException(f"response not complete within {timeout:g} s")
            finally:
                response.close()
        except primp.TimeoutError:
            raise TimeoutException(f"response not complete within {timeout:g} s") from None
        except DDGSException:
            raise
        except Exception as error:
            if "timed out" in str(error):  # primp's body reads time out as a generic error
                raise TimeoutException(f"response not complete within {timeout:g} s") from None
            raise DDGSException(f"{type(error).__name__}: {error}") from None
        return _BoundedResponse(int(response.status_code), bytes(body), response.encoding)

    http_client.request = request
    http_client._prefrag_bounded = True


class _BoundedResponse:
    """What ddgs engines read from a response: status, bytes and text."""

    def __init__(self, status_code: int, content: bytes, encoding: str | None) -> None:
        self.status_code = status_code
        self.content = content
        try:
            self.text = content.decode(encoding or "utf-8", errors="replace")
        except LookupError:  # an encoding name Python does not know
            self.text = content.decode("utf-8", errors="replace")


def _with_deadline(call: Callable[[], _T], timeout: float) -> _T:
    """Run `call`, raising `TimeoutException` if it has not returned after `timeout` s."""
    if timeout <= 0:
        return call()
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as error:
            box["error"] = error
        finally:
            done.set()

    # ddgs's own timeout bounds each engine wave, not the whole call; a daemon thread
    # gives a hard bound, and a hung request is abandoned rather than waited for. At most
    # `shared().web_searches` such threads exist at once (`MAX_PENDING_WEB_SEARCHES`): past
    # that, searches fail at once instead of piling up threads behind a hanging engine.
    pending = shared().web_searches
    if not pending.acquire(blocking=False):
        raise TimeoutException("earlier web searches are still hanging; not searching again")

    def guarded() -> None:
        try:
            run()
        finally:
            pending.release()

    threading.Thread(target=guarded, name="prefrag-web-search", daemon=True).start()
    if not done.wait(timeout):
        raise TimeoutException(f"no answer within {timeout:g} s")
    if "error" in box:
        raise box["error"]
    value: _T = box["value"]
    return value


def _backoff(retry: int, error: BaseException | None) -> float:
    # Rate limits clear slower than network blips, so they start from a longer wait.
    base = _BACKOFF_BASE_SECONDS * (2.0 if isinstance(error, RatelimitException) else 1.0)
    return float(min(base * 2**retry, _BACKOFF_CAP_SECONDS))


def _describe(error: BaseException | None) -> str:
    if error is None:
        return "unknown error"
    detail = " ".join(str(error).split())
    if len(detail) > _NOTE_DETAIL_CHARS:
        detail = detail[: _NOTE_DETAIL_CHARS - 3] + "..."
    name = type(error).__name__
    return f"{name} ({detail})" if detail else name


def _text(value: object, limit: int) -> str:
    """A result field as one line of at most `limit` characters; non-strings give ""."""
    if not isinstance(value, str):
        return ""
    text = " ".join(value[: limit * 2].split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " ..."


def _http_url(value: object) -> str:
    """`value` when it is an http(s) URL with a host; anything else (javascript:, lists) ""."""
    if not isinstance(value, str) or len(value) > _MAX_URL_CHARS:
        return ""
    url = value.strip()
    parts = urlsplit(url)
    return url if parts.scheme.lower() in ("http", "https") and parts.netloc else ""


def _iso_date(value: object) -> str:
    """`YYYY-MM-DD` or `YYYY` from a result's date (ISO string or epoch seconds), else ""."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, UTC).date().isoformat()
        except (OverflowError, OSError, ValueError):
            return ""
    match = re.match(r"\s*(\d{4})(-\d{2}-\d{2})?", str(value or ""))
    if not match:
        return ""
    return match.group(1) + (match.group(2) or "")

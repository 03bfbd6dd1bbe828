"""The web source over an injected fake ddgs client, its cache and its authority table."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException
from source_contract import check_source_contract

from prefrag.config import Settings
from prefrag.documents import content_id
from prefrag.errors import ConfigurationError
from prefrag.shared import SharedResources, sharing
from prefrag.sources.authority import AuthorityTable
from prefrag.sources.base import Source
from prefrag.sources.cache import WebCache
from prefrag.sources.web import WebSource

RESULTS: list[dict[str, Any]] = [
    {
        "title": "Aspirin - MedlinePlus",
        "href": "https://medlineplus.gov/druginfo/meds/a682878.html",
        "body": "Aspirin is used to reduce fever and relieve mild to moderate pain.",
    },
    {
        "title": "Aspirin and warfarin interaction",
        "href": "https://www.ncbi.nlm.nih.gov/books/NBK519025/",
        "body": "Combining aspirin with warfarin raises the risk of bleeding.",
        "date": "2023-04-05T10:00:00+00:00",
    },
    {
        "title": "Anyone taking aspirin daily?",
        "href": "https://www.reddit.com/r/AskDocs/comments/abc/",
        "body": "I take one every morning, my doctor said it's fine.",
    },
    {
        "title": "Aspirin",
        "href": "https://en.wikipedia.org/wiki/Aspirin",
        "body": "Aspirin, also known as acetylsalicylic acid, is a medication.",
        "date": 1700000000,
    },
    {"title": "No link", "href": "", "body": "A result without a url cannot be cited."},
    {
        "title": "Aspirin (duplicate url)",
        "href": "https://en.wikipedia.org/wiki/Aspirin",
        "body": "Same page again from a second engine.",
    },
    {
        "title": "Some blog",
        "href": "https://example.com/aspirin",
        "body": "My thoughts on aspirin.",
    },
]


class FakeDDGS:
    """A ddgs-compatible client: scripted failures first, then results for known words."""

    def __init__(
        self,
        results: list[dict[str, Any]] | None = None,
        *,
        failures: list[BaseException] | None = None,
        block: threading.Event | None = None,
    ) -> None:
        self.results = RESULTS if results is None else results
        self.failures = list(failures or [])
        self.block = block
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()

    def text(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        with self._lock:
            self.calls.append((query, kwargs))
            failure = self.failures.pop(0) if self.failures else None
        if self.block is not None:
            self.block.wait(10)
        if failure is not None:
            raise failure
        if "aspirin" not in query.lower():
            return []
        return [dict(r) for r in self.results[: kwargs.get("max_results") or None]]


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path, web_retries=2, web_timeout=5.0, web_cache_ttl_hours=1.0)


@pytest.fixture
def make_source(
    settings: Settings,
) -> Callable[..., tuple[WebSource, FakeDDGS, Sleeps]]:
    def make(
        client: FakeDDGS | None = None, *, settings: Settings = settings, **kwargs: Any
    ) -> tuple[WebSource, FakeDDGS, Sleeps]:
        client = client or FakeDDGS()
        sleeps = Sleeps()
        return WebSource(settings, client=client, sleep=sleeps, **kwargs), client, sleeps

    return make


# --- results to documents -------------------------------------------------------------


def test_results_become_cited_documents_with_domain_authority(make_source) -> None:
    source, client, _ = make_source()
    docs = source.search("aspirin warfarin", 4)

    assert [d.metadata["url"] for d in docs] == [r["href"] for r in RESULTS[:4]]
    first = docs[0]
    assert first.page_content == RESULTS[0]["body"]
    assert first.metadata["title"] == "Aspirin - MedlinePlus"
    assert first.metadata["kind"] == "web" and first.metadata["source"] == "web"
    assert first.metadata["id"] == content_id("web", RESULTS[0]["href"])
    by_host = {d.metadata["url"].split("/")[2]: d.metadata["authority"] for d in docs}
    assert by_host["www.ncbi.nlm.nih.gov"] > by_host["en.wikipedia.org"]
    assert by_host["en.wikipedia.org"] > by_host["www.reddit.com"]
    assert docs[1].metadata["date"] == "2023-04-05"
    assert docs[3].metadata["date"] == "2023-11-14"  # epoch seconds from a news engine
    assert docs[0].metadata["date"] == ""
    assert source.last_note is None
    _, kwargs = client.calls[0]
    assert kwargs["max_results"] == 4
    assert kwargs["region"] == source.settings.web_region
    assert kwargs["backend"] == source.settings.web_backend


def test_uncitable_and_duplicate_results_are_dropped_and_k_respected(make_source) -> None:
    source, _, _ = make_source()
    docs = source.search("aspirin", 10)
    urls = [d.metadata["url"] for d in docs]
    assert "" not in urls
    assert len(urls) == len(set(urls)) == 5
    assert len(source.search("aspirin", 2)) == 2


def test_web_source_satisfies_the_source_contract(make_source) -> None:
    source, _, _ = make_source()
    assert isinstance(source, Source)
    assert source.kind == "web" and 0 <= source.authority <= 1
    check_source_contract(source, hit_query="aspirin", miss_query="zzqx unrelated words")


def test_source_authority_is_the_tables_default(make_source) -> None:
    table = AuthorityTable({"nih.gov": 0.9}, default=0.3)
    source, _, _ = make_source(authority_table=table)
    assert source.authority == 0.3
    docs = source.search("aspirin", 7)
    assert {d.metadata["authority"] for d in docs} == {0.9, 0.3}


# --- failures ---------------------------------------------------------------------------


def test_persistent_errors_are_retried_a_bounded_number_of_times(make_source) -> None:
    client = FakeDDGS(failures=[DDGSException("engine exploded")] * 10)
    source, client, sleeps = make_source(client)

    assert source.search("aspirin", 3) == []
    assert len(client.calls) == 3  # one attempt + web_retries=2
    assert sleeps == [1.0, 2.0]  # exponential backoff, injected sleep
    assert source.last_note is not None
    assert source.last_note.startswith("web search unavailable: DDGSException")
    assert "engine exploded" in source.last_note and "3 attempts" in source.last_note


def test_rate_limits_back_off_longer(make_source) -> None:
    client = FakeDDGS(failures=[RatelimitException("202 Ratelimit")] * 10)
    source, client, sleeps = make_source(client)
    assert source.search("aspirin", 3) == []
    assert sleeps == [2.0, 4.0]
    assert "RatelimitException" in (source.last_note or "")


@pytest.mark.parametrize("failure", [TimeoutException("timed out"), TimeoutError("read")])
def test_a_timeout_then_success_returns_results(make_source, failure) -> None:
    source, client, sleeps = make_source(FakeDDGS(failures=[failure]))
    docs = source.search("aspirin", 3)
    assert len(docs) == 3
    assert len(client.calls) == 2 and sleeps == [1.0]
    assert source.last_note is None


def test_a_hung_client_is_cut_off_by_the_timeout(make_source, tmp_path) -> None:
    release = threading.Event()
    quick = Settings(home=tmp_path, web_retries=1, web_timeout=0.05)
    source, client, _ = make_source(FakeDDGS(block=release), settings=quick)
    try:
        assert source.search("aspirin", 3) == []
    finally:
        release.set()
    assert len(client.calls) == 2
    assert "no answer within 0.05 s" in (source.last_note or "")


def test_zero_retries_means_a_single_attempt(make_source, tmp_path) -> None:
    once = Settings(home=tmp_path, web_retries=0)
    source, client, sleeps = make_source(
        FakeDDGS(failures=[ConnectionError("refused")]), settings=once
    )
    assert source.search("aspirin", 3) == []
    assert len(client.calls) == 1 and sleeps == []
    assert source.last_note == "web search unavailable: ConnectionError (refused) after 1 attempt."


def test_a_broken_client_is_not_retried_and_never_raises(make_source) -> None:
    source, client, sleeps = make_source(FakeDDGS(failures=[KeyError("href")]))
    assert source.search("aspirin", 3) == []
    assert len(client.calls) == 1 and sleeps == []
    assert (source.last_note or "").startswith("web search unavailable: KeyError")


def test_empty_results_give_no_documents_and_a_note(make_source) -> None:
    source, client, _ = make_source(FakeDDGS(results=[]))
    assert source.search("aspirin", 3) == []
    assert source.last_note == "web search found no results for this query."
    assert len(client.calls) == 1


def test_ddgs_no_results_exception_is_an_empty_answer_not_a_failure(make_source) -> None:
    source, client, sleeps = make_source(FakeDDGS(failures=[DDGSException("No results found.")]))
    assert source.search("aspirin", 3) == []
    assert len(client.calls) == 1 and sleeps == []
    assert source.last_note == "web search found no results for this query."


def test_disabled_web_returns_nothing_without_searching(make_source, tmp_path) -> None:
    off = Settings(home=tmp_path, web_enabled=False)
    source, client, _ = make_source(settings=off)
    assert source.search("aspirin", 3) == []
    assert client.calls == []
    assert "disabled" in (source.last_note or "")


def test_empty_query_and_zero_k_do_not_search(make_source) -> None:
    source, client, _ = make_source()
    assert source.search("   ", 3) == []
    assert source.last_note == "web search skipped: the query is empty."
    assert source.search("aspirin", 0) == []
    assert source.last_note is None
    assert client.calls == []


def test_notes_are_per_thread(make_source) -> None:
    source, _, _ = make_source(FakeDDGS(failures=[ValueError("bad")]))
    source.search("   ", 3)
    worker_notes: list[str | None] = []

    def work() -> None:
        source.search("aspirin", 3)
        worker_notes.append(source.last_note)

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    assert (worker_notes[0] or "").startswith("web search unavailable: ValueError")
    assert source.last_note == "web search skipped: the query is empty."


# --- cache ------------------------------------------------------------------------------


def test_second_search_is_served_from_the_cache(make_source) -> None:
    source, client, _ = make_source()
    first = source.search("Aspirin  warfarin", 3)
    second = source.search("aspirin warfarin", 3)  # same query once normalised
    assert len(client.calls) == 1
    assert [d.metadata["id"] for d in second] == [d.metadata["id"] for d in first]
    assert second[0].metadata["authority"] == first[0].metadata["authority"]
    source.search("aspirin warfarin", 2)  # a different k is a different search
    assert len(client.calls) == 2


def test_cache_survives_a_new_process(make_source, settings) -> None:
    source, _, _ = make_source()
    source.search("aspirin", 3)
    reopened, client2, _ = make_source()  # new source, new cache object, same file
    assert len(reopened.search("aspirin", 3)) == 3
    assert client2.calls == []
    assert (settings.cache_dir / "web_cache.sqlite").exists()


def test_expired_entries_are_searched_again(make_source, settings) -> None:
    clock = Clock()
    cache = WebCache(settings.cache_dir / "web_cache.sqlite", ttl_hours=1.0, clock=clock)
    source, client, _ = make_source(cache=cache)
    source.search("aspirin", 3)
    clock.now += 3599
    source.search("aspirin", 3)
    assert len(client.calls) == 1
    clock.now += 2
    source.search("aspirin", 3)
    assert len(client.calls) == 2


def test_failures_and_empty_answers_are_not_cached(make_source) -> None:
    client = FakeDDGS(failures=[DDGSException("down")] * 3)
    source, client, _ = make_source(client)
    assert source.search("aspirin", 3) == []
    assert len(source.search("aspirin", 3)) == 3  # the client recovered; nothing cached
    assert len(client.calls) == 4

    source.search("nothing here", 3)
    source.search("nothing here", 3)
    assert [q for q, _ in client.calls].count("nothing here") == 2


def test_zero_ttl_disables_the_cache(make_source, tmp_path) -> None:
    nocache = Settings(home=tmp_path, web_cache_ttl_hours=0)
    source, client, _ = make_source(settings=nocache)
    assert source.cache is None
    source.search("aspirin", 3)
    source.search("aspirin", 3)
    assert len(client.calls) == 2


def test_concurrent_searches_share_one_cache(make_source) -> None:
    source, client, _ = make_source()
    results: list[int] = []

    def run(i: int) -> None:
        results.append(len(source.search(f"aspirin {i % 4}", 3)))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [3] * 16
    assert source.cache is not None and len(source.cache) == 4
    assert len(client.calls) >= 4


def test_cache_key_normalises_the_query() -> None:
    key = WebCache.key
    assert key(" Aspirin\tDOSE ", 5, backend="auto") == key("aspirin dose", 5, backend="auto")
    assert key("aspirin", 5, region="wt-wt") != key("aspirin", 5, region="us-en")
    assert key("aspirin", 5) != key("aspirin", 3)


# --- authority table --------------------------------------------------------------------


def test_bundled_table_ranks_agencies_over_encyclopedias_over_forums() -> None:
    table = AuthorityTable.load()
    for url in ("https://www.cdc.gov/flu", "who.int", "https://www.nice.org.uk/guidance"):
        assert table.score(url) >= 0.9
    assert table.score("https://ncbi.nlm.nih.gov/x") > table.score("https://data.gov/x")
    assert table.score("https://www.example.gov") > table.score("https://en.wikipedia.org")
    assert table.score("https://en.wikipedia.org") > table.score("https://www.quora.com/q")
    assert table.score("https://notnih.gov") == table.score("https://www.example.gov")
    assert table.score("https://unknown.example") == table.default
    assert table.score("not a url at all") == table.default


def test_settings_table_overrides_the_bundled_one(make_source, tmp_path) -> None:
    path = tmp_path / "authority.yaml"
    path.write_text("default: 0.2\ndomains:\n  wikipedia.org: 1.0\n", encoding="utf-8")
    custom = Settings(home=tmp_path, authority_table=path)
    source, _, _ = make_source(settings=custom)
    docs = {d.metadata["url"]: d.metadata["authority"] for d in source.search("aspirin", 7)}
    assert docs["https://en.wikipedia.org/wiki/Aspirin"] == 1.0
    assert docs["https://www.ncbi.nlm.nih.gov/books/NBK519025/"] == 0.2
    assert source.authority == 0.2


@pytest.mark.parametrize(
    "text",
    ["default: 1.5\n", "domains:\n  nih.gov: -0.1\n", "domains:\n  nih.gov: high\n", "[1, 2]\n"],
)
def test_a_bad_table_is_a_configuration_error(tmp_path, text) -> None:
    path = tmp_path / "authority.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigurationError):
        AuthorityTable.load(path)


def test_a_missing_table_is_a_configuration_error(tmp_path) -> None:
    with pytest.raises(ConfigurationError, match="Cannot read the authority table"):
        AuthorityTable.load(tmp_path / "absent.yaml")


# --- the real ddgs client ---------------------------------------------------------------


def test_real_ddgs_without_network_degrades_to_a_note(tmp_path) -> None:
    # No fake client: ddgs itself, through a proxy on a closed loopback port, so every
    # request fails at once whether or not this machine has a network.
    quick = Settings(
        home=tmp_path,
        web_timeout=1.5,
        web_retries=1,
        web_backend="duckduckgo",
        web_proxy="http://127.0.0.1:9",
    )
    source = WebSource(quick, sleep=lambda _: None)
    assert source.search("aspirin warfarin interaction", 3) == []
    assert (source.last_note or "").startswith("web search unavailable:")


# --- hostile results ----------------------------------------------------------------------


def test_results_of_the_wrong_shape_or_scheme_never_become_documents(make_source) -> None:
    hostile: list[dict[str, Any]] = [
        {"title": "List link", "href": ["https://a.example"], "body": "aspirin"},
        {"title": "Dict body", "href": "https://b.example", "body": {"x": 1}},
        {"title": "Script", "href": "javascript:alert(1)", "body": "aspirin dose"},
        {"title": "Data", "href": "data:text/html,hi", "body": "aspirin dose"},
        {"title": "Huge", "href": "https://c.example/huge", "body": "aspirin " * 300_000},
        {"title": "Fine", "href": "https://d.example/ok", "body": "Aspirin thins blood."},
    ]
    source, _, _ = make_source(FakeDDGS(hostile))
    docs = source.search("aspirin", 10)
    assert [d.metadata["url"] for d in docs] == ["https://c.example/huge", "https://d.example/ok"]
    assert len(docs[0].page_content) <= 1_004  # capped snippet (+ " ...")


def test_a_hanging_engine_leaves_a_bounded_number_of_threads(settings: Settings) -> None:
    block = threading.Event()
    quick = settings.model_copy(update={"web_timeout": 0.05, "web_retries": 2})
    before = threading.active_count()
    try:
        # The limit is the process's (`prefrag.shared`): a smaller one given here holds.
        with sharing(SharedResources(max_pending_web_searches=2)):
            for _ in range(5):
                source = WebSource(
                    quick, client=FakeDDGS(block=block), sleep=lambda _: None, cache=None
                )
                assert source.search("aspirin", 3) == []
                assert (source.last_note or "").startswith("web search unavailable:")
            assert threading.active_count() - before <= 2
            assert "still hanging" in (source.last_note or "")
    finally:
        block.set()
        for thread in threading.enumerate():  # leave no hung search behind for later tests
            if thread.name == "prefrag-web-search":
                thread.join(5)

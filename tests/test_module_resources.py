"""No module keeps a process-wide resource of its own: they live in `prefrag.shared`.

A model, a stemmer, a lock or a cache held at module level is shared by every graph and
every test in the process and cannot be injected; `prefrag.shared.SharedResources` (reached
through the graph's `ResourceProvider`) holds them instead. This test reads every package
module's source and fails on a module-level resource that comes back: a call to a resource
constructor assigned at module level, an empty container assigned at module level (a cache
or registry in the making), a `global` rebinding, or a `functools.cache`/`lru_cache`
function outside the short list below of pure memos, each with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

from test_import_cycles import _modules

# Module-level cached functions that hold no resource, each with why it may stay.
ALLOWED_CACHES = {
    "prefrag.config.get_settings": "configuration read once (tests clear it per test)",
    "prefrag.prompts.load_prompt": "a prompt file shipped in the package: read-only text",
    "prefrag.checkpoints._state_shape": "a pydantic TypeAdapter of the state type: pure",
    "prefrag.reasoners._confidence.load_model": "a read-only fitted model file, by path",
    "prefrag.reasoners._relations._stem_groups": "stems of a constant word list: pure",
    "prefrag.reasoners._support.question_constraints": "a pure function of the question",
    "prefrag.reasoners._text.stem": "a pure memo (stems come from the thread's stemmer)",
    "prefrag.reasoners._text._content_terms": "a pure function of the text",
    "prefrag.reasoners._text.split_sentences": "a pure function of the text",
    "prefrag.reasoners._text.listed_sentences": "a pure function of the text",
    "prefrag.reasoners._text.analyze_question": "a pure function of the question",
    "prefrag.sources.graph._stopwords": "a constant word set",
    "prefrag.sources.web._bounded_ddgs": "a class derived once from ddgs's; holds no state",
}
# Module-level names bound to a resource on purpose.
ALLOWED_GLOBALS = {
    "prefrag.shared._process": "the one holder of the process's shared resources",
}
# Calls that build a resource (by the called name's last part).
RESOURCE_CALLS = {
    "Lock", "RLock", "Semaphore", "BoundedSemaphore", "Condition", "Event", "local",
    "Stemmer", "Embedder", "get_embedder", "build_reasoner", "ThreadPoolExecutor",
    "ProcessPoolExecutor", "connect", "from_file", "FileLock", "Tokenizer", "OrderedDict",
    "defaultdict", "WeakValueDictionary", "dict", "list", "set",
}  # fmt: skip


def _called_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _is_cache_decorator(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name in {"cache", "lru_cache"}


def _module_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """Statements run at import: the body, and inside top-level if/try/with blocks."""
    found: list[ast.stmt] = []
    for node in body:
        found.append(node)
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            for block in ("body", "orelse", "finalbody", "handlers"):
                for inner in getattr(node, block, []):
                    found.extend(_module_level(getattr(inner, "body", [inner])))
    return found


def module_resources(module: str, source: str) -> list[str]:
    """What in `source` (module `module`) is a module-level resource not allowed above."""
    problems: list[str] = []
    tree = ast.parse(source)
    for node in _module_level(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{module}.{node.name}"
            if any(map(_is_cache_decorator, node.decorator_list)) and name not in ALLOWED_CACHES:
                problems.append(f"{name}: a cached function at module level")
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [f"{module}.{t.id}" for t in targets if isinstance(t, ast.Name)]
            value = node.value
            empty = isinstance(value, (ast.Dict, ast.List, ast.Set)) and not (
                getattr(value, "keys", None) or getattr(value, "elts", None)
            )
            # `list(...)`/`dict(...)` of something is a constant; only empty ones hold state.
            built = [
                _called_name(call)
                for call in ast.walk(value)
                if isinstance(call, ast.Call)
                and _called_name(call) in RESOURCE_CALLS
                and not (_called_name(call) in {"dict", "list", "set"} and call.args)
            ]
            if (empty or built) and not all(n in ALLOWED_GLOBALS for n in names):
                what = f"a call to {built[0]}" if built else "an empty container"
                problems.append(f"{', '.join(names) or module}: {what} at module level")
    for found in ast.walk(tree):
        if isinstance(found, ast.Global):
            for name in found.names:
                if f"{module}.{name}" not in ALLOWED_GLOBALS:
                    problems.append(f"{module}.{name}: rebound with `global`")
    return problems


def test_no_module_keeps_a_process_wide_resource() -> None:
    problems = [
        problem
        for module, path in sorted(_modules().items())
        for problem in module_resources(module, Path(path).read_text(encoding="utf-8"))
    ]
    assert problems == [], "\n".join(problems)


def test_the_check_finds_each_kind_of_module_level_resource() -> None:
    source = (
        "import threading, functools, Stemmer\n"
        "_PENDING = threading.BoundedSemaphore(4)\n"
        "_STEMMER = Stemmer.Stemmer('english')\n"
        "_SEEN: dict[str, int] = {}\n"
        "WORDS = {'a': 1}\n"
        "ORDER = list(WORDS)\n"
        "@functools.lru_cache(maxsize=1)\n"
        "def _model():\n"
        "    return object()\n"
        "def reset():\n"
        "    global _SEEN\n"
        "    _SEEN = {}\n"
    )
    assert module_resources("prefrag.example", source) == [
        "prefrag.example._PENDING: a call to BoundedSemaphore at module level",
        "prefrag.example._STEMMER: a call to Stemmer at module level",
        "prefrag.example._SEEN: an empty container at module level",
        "prefrag.example._model: a cached function at module level",
        "prefrag.example._SEEN: rebound with `global`",
    ]


def test_every_allowed_entry_still_exists() -> None:
    modules = _modules()
    for name in [*ALLOWED_CACHES, *ALLOWED_GLOBALS]:
        module, attribute = name.rsplit(".", 1)
        assert module in modules, name
        assert attribute in modules[module].read_text(encoding="utf-8"), name


def test_a_shared_resource_is_built_once_and_may_need_another() -> None:
    import threading

    from prefrag.shared import SharedResources

    shared = SharedResources()
    built: list[str] = []

    def embedder() -> str:
        built.append("e")
        return "e"

    def reasoner() -> str:
        built.append("reasoner")
        return "reasoner using " + shared.once("embedder", embedder)

    threads = [threading.Thread(target=shared.once, args=("r", reasoner)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert not any(thread.is_alive() for thread in threads)  # no build waits on itself
    assert shared.once("r", reasoner) == "reasoner using e"
    assert built == ["reasoner", "e"]
    stemmers = []
    worker = threading.Thread(target=lambda: stemmers.append(shared.stemmer()))
    worker.start()
    worker.join(5)
    assert stemmers[0] is not shared.stemmer()  # one per thread
    assert shared.stemmer() is shared.stemmer()

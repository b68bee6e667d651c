"""Backend kinds come from the registry: a plugin kind is built as registered, never as another backend."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from dialeval.backends import BACKENDS, Backend, BackendOptions, ChatRequest, make_backend
from dialeval.errors import InputError
from dialeval.registry import RegistryEntryError

#: A plugin's module, written to disk so that the registry imports it by its "module:object" name.
PLUGIN = '''
from dialeval.backends.base import Backend, Completion


class EchoBackend(Backend):
    """Answers with its model name and the last message (a real plugin class, no model behind it)."""

    def __init__(self, model: str) -> None:
        self.model = model

    @property
    def signature(self) -> str:
        return f"echo:{self.model}"

    def chat(self, request):
        return Completion(text=f"{self.model}: {request.messages[-1][1]}")


class NotABackend:
    pass
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The module ``echo_plugin`` on the path; the kinds a test registers are removed afterwards."""
    (tmp_path / "echo_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(BACKENDS.names())
    yield "echo_plugin"
    for name in set(BACKENDS.names()) - before:
        BACKENDS._items.pop(name)  # the registry has no unregister: a test's kinds must not leak
    sys.modules.pop("echo_plugin", None)


def test_a_plugin_kind_registered_by_name_is_the_backend_used(plugin: str) -> None:
    BACKENDS.register("echo", f"{plugin}:EchoBackend")
    assert plugin not in sys.modules  # lazy: imported when the kind is first built
    backend = make_backend("echo", "parrot")
    assert type(backend).__name__ == "EchoBackend"  # not TransformersBackend, as make_backend once made it
    assert backend.signature == "echo:parrot"
    assert backend.chat(ChatRequest(messages=(("user", "hello"),))).text == "parrot: hello"


def test_a_factory_gets_the_run_options(plugin: str) -> None:
    import importlib

    echo = importlib.import_module(plugin).EchoBackend
    seen: list[BackendOptions] = []

    def factory(options: BackendOptions) -> Backend:
        seen.append(options)
        return echo(options.model.upper())

    BACKENDS.register("echo-factory", factory)
    assert make_backend("echo-factory", "parrot", in_flight=3).signature == "echo:PARROT"
    assert seen == [BackendOptions(model="parrot", in_flight=3)]


def test_an_entry_that_is_not_a_backend_is_refused_in_one_line(plugin: str) -> None:
    BACKENDS.register("not-one", f"{plugin}:NotABackend")
    BACKENDS.register("missing", f"{plugin}:Nowhere")
    not_one = r'^backend "not-one" \(echo_plugin:NotABackend\) is neither a Backend subclass nor a factory$'
    with pytest.raises(RegistryEntryError, match=not_one):
        make_backend("not-one")
    with pytest.raises(RegistryEntryError, match=r'^backend "missing" \(echo_plugin:Nowhere\) cannot be loaded'):
        make_backend("missing")


def test_the_built_in_kinds_are_lazy_and_checked() -> None:
    assert BACKENDS.names() == ["llamacpp", "openai-compatible", "transformers"]
    both = r'field "base_url": .* needs base_url and model \(-p base_url=\.\.\., -p model'
    with pytest.raises(InputError, match=both):
        make_backend("openai-compatible")
    one = r'^field "model": the openai-compatible backend needs model \(-p model=\.\.\.\)$'
    with pytest.raises(InputError, match=one):
        make_backend("openai-compatible", base_url="http://127.0.0.1:9")  # a one-line error, not a traceback
    with pytest.raises(ValueError, match="needs model="):
        make_backend("transformers")

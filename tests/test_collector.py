"""The cyclic garbage collector held off while a table is built (issue 38): paused for every
facade call in one place, back as the caller had it afterwards (after an error too, inside a
pause of the caller's own), left alone where the call runs the caller's code. No timing:
each test records whether the collector was on, and which collections ran."""

from __future__ import annotations

import gc
import warnings
from collections.abc import Iterator

import pytest
from conftest import sample

import adfkit
from adfkit._analysis import mind as _mind
from adfkit._analysis import replay as _replay
from adfkit._analysis import simulate as _simulate
from adfkit._base.collector import gc_paused
from adfkit._base.errors import AdfError


@pytest.fixture
def collector_on() -> Iterator[None]:
    """The collector on for the test (pytest or a plugin may have it otherwise), as before
    after it."""
    was = gc.isenabled()
    gc.enable()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


@pytest.fixture
def young_collections() -> Iterator[list[int]]:
    """The generation of every collection that ends while the test runs."""
    seen: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            seen.append(info["generation"])

    gc.callbacks.append(note)
    yield seen
    gc.callbacks.remove(note)


def _agent() -> adfkit.AgentFile:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return adfkit.open_adf(sample("long-runner"))


def _spy(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[bool]:
    """Record ``gc.isenabled()`` each time ``module.name`` runs (then run it)."""
    seen: list[bool] = []
    real = getattr(module, name)

    def spy(*a: object, **k: object) -> object:
        seen.append(gc.isenabled())
        return real(*a, **k)

    monkeypatch.setattr(module, name, spy)
    return seen


def test_paused_nests_and_is_restored_on_error(collector_on):
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause leaves it as the outer one wants it
    assert gc.isenabled()
    with pytest.raises(ValueError), gc_paused():
        raise ValueError("in the pause")
    assert gc.isenabled()
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()  # off before: off after


def test_settle_collects_the_young_generation_once_on_leaving(collector_on, young_collections):
    """``settle=True``: the outermost pause makes one generation-0 collection as it is left
    (an inner one, or one entered with the collector off, makes none); a plain pause none."""
    with gc_paused():
        pass
    assert young_collections == []
    with gc_paused(settle=True):
        with gc_paused(settle=True):
            pass
        assert young_collections == []
    assert young_collections == [0]
    gc.disable()
    with gc_paused(settle=True):
        pass
    gc.enable()
    assert young_collections == [0]


def test_a_table_is_built_with_the_collector_paused(monkeypatch, collector_on):
    """AgentFile's tables, and adfkit.observe()/simulate(), run with the collector off; it is
    back on when the table is returned."""
    agent = _agent()
    in_replay = _spy(monkeypatch, _replay, "replay")
    in_mind = _spy(monkeypatch, _mind, "mind_history")
    in_simulate = _spy(monkeypatch, _simulate, "simulate")
    assert len(agent.replay()) > 0
    assert gc.isenabled()
    agent.mind_history()
    assert gc.isenabled()
    adfkit.simulate(agent, adfkit.ThresholdPolicy())
    assert gc.isenabled()
    assert (in_replay, in_mind, in_simulate) == ([False], [False], [False])


def test_the_collector_is_back_after_an_error(monkeypatch, collector_on):
    def broken(*_a: object, **_k: object) -> None:
        raise AdfError("broken on purpose")

    monkeypatch.setattr(_replay, "replay", broken)
    with pytest.raises(AdfError, match="broken on purpose"):
        _agent().replay()
    assert gc.isenabled()


def test_inside_a_pause_of_the_callers_own(monkeypatch, collector_on):
    """A table built inside the caller's own pause leaves the collector off until the
    caller's pause ends."""
    agent = _agent()
    seen = _spy(monkeypatch, _replay, "replay")
    with gc_paused():
        agent.replay()
        assert not gc.isenabled()
    assert gc.isenabled()
    assert seen == [False]


def test_compaction_lab_runs_the_callers_compactor_with_the_collector_as_it_was(collector_on):
    """compaction_lab() runs the caller's compactors (and judge): the collector is left as the
    caller has it."""
    seen: list[bool] = []

    def compactor(inp: object) -> None:
        seen.append(gc.isenabled())
        return None

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _agent().compaction_lab([("probe", compactor)])
    assert seen and all(seen)


def test_a_table_is_built_with_pyarrow_allocating_through_malloc(monkeypatch):
    """While a table is built pyarrow's default allocator is the C library's (mimalloc, its
    own default, faulted fresh pages in for every large column); after the call, and after a
    failed one, it is what it was; a process that chose its allocator keeps it."""
    import pyarrow as pa

    from adfkit._sources.adf.source import AdfSource

    if pa.default_memory_pool().backend_name != "mimalloc":
        pytest.skip("pyarrow's default allocator here is not mimalloc")
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    seen: list[str] = []
    fail = []
    real = AdfSource.history

    def history(self, *a, **k):
        seen.append(pa.default_memory_pool().backend_name)
        if fail:
            raise RuntimeError("the build failed")
        return real(self, *a, **k)

    monkeypatch.setattr(AdfSource, "history", history)
    with adfkit.open(str(sample("long-runner"))) as agent:
        agent.compactions()
    assert seen and set(seen) == {"system"}
    assert pa.default_memory_pool().backend_name == "mimalloc"
    fail.append(True)
    with adfkit.open(str(sample("long-runner"))) as agent, pytest.raises(RuntimeError):
        agent.history()
    assert seen[-1] == "system" and pa.default_memory_pool().backend_name == "mimalloc"
    fail.clear()
    seen.clear()
    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "mimalloc")
    with adfkit.open(str(sample("long-runner"))) as agent:
        agent.history()
    assert seen and set(seen) == {"mimalloc"}


def test_the_allocator_stays_malloc_until_the_last_thread_leaves(monkeypatch):
    """The switch is the process's: a thread that leaves first does not put mimalloc back under
    another thread still building a table."""
    import threading

    import pyarrow as pa

    from adfkit._base.allocator import system_allocator

    if pa.default_memory_pool().backend_name != "mimalloc":
        pytest.skip("pyarrow's default allocator here is not mimalloc")
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    entered, leave = threading.Event(), threading.Event()

    def other() -> None:
        with system_allocator():
            entered.set()
            leave.wait()

    t = threading.Thread(target=other)
    t.start()
    entered.wait()
    with system_allocator():
        leave.set()
        t.join()
        assert pa.default_memory_pool().backend_name == "system"
    assert pa.default_memory_pool().backend_name == "mimalloc"


def test_history_keeps_the_memory_its_build_freed_for_the_next_tables(monkeypatch):
    """history() asks no allocator to hand its free memory back to the system once its build
    is done (pyarrow's ``release_unused``: with the C library's allocator a ``malloc_trim``
    that gave back every free page of the heap, which the next tables then faulted in again:
    big-runner x16's later passes took 19,000-23,000 such faults in replay() alone)."""
    import types

    from adfkit._sources.adf import source as adf_source

    released: list[bool] = []
    pool = types.SimpleNamespace(release_unused=lambda: released.append(True))
    spy = types.SimpleNamespace(default_memory_pool=lambda: pool)
    monkeypatch.setattr(adf_source, "pa", spy, raising=False)
    with adfkit.open(str(sample("long-runner"))) as agent:
        assert len(agent.history()) > 0
    assert released == []


def _in_a_fresh_process(code: str) -> list[str]:
    """The words ``code`` prints, run in a Python of its own (a freeze is process-wide)."""
    import subprocess
    import sys

    from conftest import ROOT

    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return done.stdout.split()


def test_imports_are_frozen_only_in_the_console_scripts_process():
    """``imports_frozen()`` pauses the collector for its block everywhere, but freezes what
    is alive only once the console script has marked the process as adfkit's own
    (``entry=True``); the collector is back on after each block."""
    words = _in_a_fresh_process(
        "import gc\n"
        "from adfkit._base.collector import imports_frozen, own_process\n"
        "def state(): return [gc.get_freeze_count() > 0, gc.isenabled(), own_process()]\n"
        "with imports_frozen():\n"
        "    off = not gc.isenabled()\n"
        "    import json\n"
        "a = state()\n"
        "with imports_frozen(entry=True):\n"
        "    import csv\n"
        "b = state()\n"
        "gc.unfreeze()\n"
        "with imports_frozen():\n"
        "    import decimal\n"
        "print(off, *a, *b, *state())\n"
    )
    assert words == ["True"] + ["False", "True", "False"] + ["True"] * 3 + ["True"] * 3


def test_a_command_called_in_process_freezes_nothing(tmp_path, capsys):
    """``adfkit.cli.main([...])`` in someone's process (here pytest's) is not the console
    script: the report's imports freeze nothing of the caller's."""
    from adfkit.cli import main

    before = gc.get_freeze_count()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["report", str(sample("long-runner")), "-o", str(tmp_path / "r.html")]) == 0
    assert gc.get_freeze_count() == before
    assert gc.isenabled()

"""``audiokit.held.signals_held``: a real SIGINT sent to this process inside the block reaches its handler only when
the block ends -- as while the registry imports a command's module (a handler's exception inside a compiled
extension's initialisation crashed the interpreter: SIGSEGV)."""

from __future__ import annotations

import os
import signal
import sys
import time

from audiokit.held import deferred, signals_held
from audiokit.pipelines import registry


def _wait_for(seen: list[str], n: int) -> None:
    """Let the main thread run until ``seen`` has ``n`` entries (a signal given to another thread is handled when
    that thread has run; at most 5 s)."""
    deadline = time.monotonic() + 5
    while len(seen) < n and time.monotonic() < deadline:
        time.sleep(0.01)


def _recording_handler(seen: list[str]):
    """A handler written as audiokit's are (audiokit.cli.signals): it asks ``deferred`` first."""

    def handler(signum, frame):
        if not deferred(signum):
            seen.append("handled")

    return signal.signal(signal.SIGINT, handler)


def test_a_signal_inside_the_block_is_delivered_when_it_ends():
    seen: list[str] = []
    previous = _recording_handler(seen)
    try:
        with signals_held():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.2)  # bytecodes run and the signal reaches some thread: unheld, it would be handled here
            seen.append("end of block")
        _wait_for(seen, 2)
        assert seen == ["end of block", "handled"]
    finally:
        signal.signal(signal.SIGINT, previous)


def test_the_registry_imports_a_module_with_signals_held(tmp_path, monkeypatch):
    (tmp_path / "ak_held_probe.py").write_text(
        "import os, signal, time\nSEEN = []\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(0.2)\n"
        "import builtins\nSEEN.append('imported')\nthing = object()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    seen: list[str] = []
    previous = _recording_handler(seen)
    try:
        registry.load("ak_held_probe:thing")
        _wait_for(seen, 1)
        probe = sys.modules["ak_held_probe"]
        assert probe.SEEN == ["imported"] and seen == ["handled"]  # handled after the module's last line, not inside
    finally:
        signal.signal(signal.SIGINT, previous)
        sys.modules.pop("ak_held_probe", None)

"""Files of the repository the tests read, named once (a moved test keeps finding them)."""

from __future__ import annotations

from pathlib import Path

#: The repository's root (the folder holding ``pyproject.toml``).
ROOT = Path(__file__).resolve().parents[2]
#: Committed test inputs (``tests/data/README.md`` says how each was made).
TEST_DATA = ROOT / "tests" / "data"
#: The recorded example, 16 kHz mono speech.
SPEECH = ROOT / "examples" / "data" / "speech.wav"

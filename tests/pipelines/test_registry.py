"""The job registry: a job registered through it alone is a command, an ``audiokit batch`` job and a docs row."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audiokit.errors import ParameterError
from audiokit.pipelines import registry
from tests.helpers.paths import ROOT

#: A throwaway job in a module of its own: its pipeline with its spec, and its CLI command with options_from.
DUMMY_MODULE = '''
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated

import typer

from audiokit.cli.options import FixNonFinite, RawChannels, RawFormatOpt, RawRate, inputs_from
from audiokit.errors import ParameterError
from audiokit.io import write_bytes_atomic
from audiokit.pipelines.params import InputOptions
from audiokit.pipelines.registry import JobResult, JobSpec, SourceFacts


@dataclass(frozen=True)
class CountOptions:
    scale: float = 1.0


def check(options):
    if not options.scale > 0:
        raise ParameterError(f"--scale: {options.scale!r} must be > 0")


def count_file(path, output, options, inputs=InputOptions()):
    with inputs.open(path) as source:
        facts = SourceFacts.of(source)
    write_bytes_atomic(output, json.dumps({"samples": facts.n_samples * options.scale}).encode())
    return facts


def run(path, outputs, options, inputs):
    return JobResult(count_file(path, outputs["json"], options, inputs), shape=None)


COUNT_SPEC = JobSpec(
    name="count", options=CountOptions, check=check, outputs=lambda o, stem, png: {"json": f"{stem}.count.json"}, run=run
)


def options_from(params):
    return CountOptions(scale=params["scale"])


def count_command(
    file: Annotated[str, typer.Argument(help="An audio file.")],
    scale: Annotated[float, typer.Option("--scale", help="Multiply the count by this.")] = 1.0,
    rate: RawRate = None,
    fmt: RawFormatOpt = None,
    channels: RawChannels = None,
    fix_nonfinite: FixNonFinite = False,
) -> int:
    """Count the samples of a file (a test job).

    Example:

        audiokit count x.wav
    """
    params = dict(locals())
    count_file(file, file + ".count.json", options_from(params), inputs_from(params))
    return 0
'''

DRIVER = """
import sys
from audiokit.pipelines import registry
registry.register(registry.Entry(name="count", summary="Count the samples of a file (a test job).",
                                 cli="dummyjob:count_command", spec="dummyjob:COUNT_SPEC"))
if sys.argv[1] == "table":
    print(registry.command_table())
else:
    from audiokit.cli.app import main
    sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture
def dummy(tmp_path):
    """``run(*args) -> CompletedProcess``: audiokit in a fresh process with the ``count`` job registered."""
    (tmp_path / "dummyjob.py").write_text(DUMMY_MODULE)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]), COLUMNS="200")

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-c", DRIVER, *args], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path
        )

    return run


@pytest.mark.slow
def test_a_job_registered_alone_is_a_command_a_batch_job_and_a_docs_row(dummy, tmp_path):
    wav = tmp_path / "corpus" / "a.wav"
    wav.parent.mkdir()
    sf.write(wav, np.zeros(1234, dtype=np.float32), 16000)

    listing = dummy("--help")
    assert listing.returncode == 0, listing.stderr
    assert "count" in listing.stdout and "Count the samples of a file (a test job)." in listing.stdout

    single = dummy("count", str(wav), "--scale", "2")
    assert single.returncode == 0, single.stderr
    assert json.loads(Path(str(wav) + ".count.json").read_text()) == {"samples": 2468.0}

    batch_help = dummy("batch", "--help")
    assert batch_help.returncode == 0 and "count" in batch_help.stdout
    out = tmp_path / "feats"
    batch = dummy("batch", "count", str(wav.parent), "--out", str(out), "--scale", "3", "-j", "1")
    assert batch.returncode == 0, batch.stderr
    assert json.loads((out / "a.count.json").read_text()) == {"samples": 3702.0}
    record = json.loads((out / "manifest.jsonl").read_text().splitlines()[-1])
    assert (record["status"], record["sr"], record["channels"], record["duration"]) == ("ok", 16000, 1, 1234 / 16000)
    refused = dummy("batch", "count", str(wav.parent), "--out", str(tmp_path / "x"), "--scale", "-1")
    assert refused.returncode == 2 and "--scale: -1.0 must be > 0" in refused.stderr  # the spec's check, before any work

    table = dummy("table")
    assert table.returncode == 0, table.stderr
    assert "| `audiokit count` | Count the samples of a file (a test job). | yes |" in table.stdout


def test_docs_command_table_is_the_registrys():
    text = (ROOT / "docs" / "commands.md").read_text()
    assert text == registry.commands_doc(), "regenerate: python -m audiokit.pipelines.registry > docs/commands.md"


def test_every_builtin_job_has_its_spec():
    for name in registry.batch_jobs():
        spec = registry.spec(name)
        assert spec.name == name and callable(spec.run) and callable(spec.check)
    assert {"info", "spectrum", "spectrogram", "mel", "mfcc", "resample", "quantize", "dehum"} <= set(registry.batch_jobs())


def test_register_refuses_a_taken_name_and_a_bad_reference():
    with pytest.raises(ParameterError, match="registered already"):
        registry.register(registry.Entry(name="mel", summary="x", cli="a:b"))
    with pytest.raises(ParameterError, match="not 'module:attribute'"):
        registry.register(registry.Entry(name="zzz", summary="x", cli="a.b"))
    assert "zzz" not in [item.name for item in registry.entries()]
    with pytest.raises(ParameterError, match="unknown command 'nope'"):
        registry.entry("nope")
    with pytest.raises(ParameterError, match="does not run per input"):
        registry.spec("generate")

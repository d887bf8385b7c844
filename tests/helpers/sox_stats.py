"""The real SoX and ffmpeg as references: ``sox FILE -n stats`` and ``ffmpeg -af astats`` parsed into numbers."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

SOX = shutil.which("sox")
FFMPEG = shutil.which("ffmpeg")

#: SoX's row labels -> audiokit's JSON field names.
SOX_FIELDS = {
    "DC offset": "dc_offset",
    "Min level": "min_level",
    "Max level": "max_level",
    "Pk lev dB": "peak_level_db",
    "RMS lev dB": "rms_level_db",
    "RMS Pk dB": "rms_peak_db",
    "RMS Tr dB": "rms_trough_db",
    "Crest factor": "crest_factor",
    "Flat factor": "flat_factor",
    "Pk count": "peak_count",
    "Bit-depth": "bit_depth",
    "Num samples": "n_samples",
    "Length s": "length_s",
    "Scale max": "scale_max",
    "Window s": "window_s",
}


def needs_sox() -> str:
    """The path of ``sox``, or skip the test."""
    if SOX is None:
        pytest.skip("sox is not installed")
    return SOX


def needs_ffmpeg() -> str:
    """The path of ``ffmpeg``, or skip the test."""
    if FFMPEG is None:
        pytest.skip("ffmpeg is not installed")
    return FFMPEG


def sox_stats(path: str, *args: str) -> dict[str, list[str]]:
    """``sox PATH -n stats ARGS``: each row's cells as text (overall first, then one per channel of a multichannel
    file), keyed by audiokit's field names."""
    done = subprocess.run([needs_sox(), str(path), "-n", "stats", *args], capture_output=True, text=True, check=True)
    rows: dict[str, list[str]] = {}
    for line in done.stderr.splitlines():
        for label, field in SOX_FIELDS.items():
            if line.startswith(label):
                rows[field] = line[len(label) :].split()
    return rows


def sigfigs3(value: float) -> str:
    """SoX's ``lsx_sigfigs3``: three significant figures with k/M/G suffixes (``57.6M``, ``160``)."""
    if value < 1000:
        return f"{value:g}" if value == int(value) else f"{value:.3g}"
    for exponent, suffix in ((9, "G"), (6, "M"), (3, "k")):
        if value >= 10**exponent:
            scaled = value / 10**exponent
            digits = 2 if scaled < 10 else 1 if scaled < 100 else 0
            return f"{scaled:.{digits}f}{suffix}"
    raise AssertionError(value)


def ffmpeg_astats(path: str) -> list[dict[str, str]]:
    """``ffmpeg -i PATH -af astats``: one dict of ``label -> value text`` per channel, then the overall one."""
    done = subprocess.run(
        [needs_ffmpeg(), "-hide_banner", "-nostats", "-i", str(path), "-af", "astats", "-f", "null", "-"],
        capture_output=True,
        text=True,
        check=True,
    )
    blocks: list[dict[str, str]] = []
    for line in done.stderr.splitlines():
        match = re.search(r"\[Parsed_astats_0 @ [^\]]+\] (.*?): (.*)$", line)
        if match is None:
            if re.search(r"\[Parsed_astats_0 @ [^\]]+\] Overall$", line):
                blocks.append({})
            continue
        label, value = match.groups()
        if label == "Channel":
            blocks.append({})
        else:
            blocks[-1][label] = value
    return blocks

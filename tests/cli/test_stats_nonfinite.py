"""``audiokit stats --fix-nonfinite`` counts the NaN and Inf samples of a float file, as the library's meter does.

Before, the reader replaced them with 0 before the meter saw them: the table's "NaN / Inf" row and the JSON's
``nan_count`` / ``inf_count`` always read 0 (the counts existed only for arrays fed to
:class:`audiokit.dsp.stats.StatsMeter` directly).  Now, with --fix-nonfinite, they are counted as stored and read as
0 in every other field; without it the file is refused (exit 3), as by every command.  References: a naive count
(``np.isnan`` / ``np.isinf`` of the samples soundfile reads), and stats of the same file with those samples
written as 0 (every other field equal).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from audiokit.io.reader import open_audio
from audiokit.pipelines.params import InputOptions
from audiokit.pipelines.stats import stats

N = 150_000  # three blocks of 64 Ki samples: non-finite samples in each


def _samples(subtype: str) -> np.ndarray:
    rng = np.random.default_rng(11)
    x = 0.5 * np.sin(np.arange(N)[:, None] * np.array([0.01, 0.037])) + 0.01 * rng.standard_normal((N, 2))
    for value, count in ((np.nan, 17), (np.inf, 5), (-np.inf, 4)):
        rows, cols = rng.integers(0, N, count), rng.integers(0, 2, count)
        x[rows, cols] = value
    x[65535:65537, 1] = np.nan  # across a block boundary
    return x.astype(np.float32 if subtype == "FLOAT" else np.float64)


@pytest.fixture(params=["FLOAT", "DOUBLE"])
def files(request, tmp_path):
    """(the file with NaN/Inf, the same file with them written as 0, the samples as read back)."""
    x = _samples(request.param)
    bad, zero = tmp_path / "bad.wav", tmp_path / "zero.wav"
    sf.write(bad, x, 16000, subtype=request.param)
    sf.write(zero, np.where(np.isfinite(x), x, 0), 16000, subtype=request.param)
    read, _ = sf.read(bad, dtype="float64", always_2d=True)
    return bad, zero, read


def _counts(x: np.ndarray) -> tuple[list[int], list[int]]:
    """Naive per-channel counts of NaN and of ±Inf."""
    return [int(np.isnan(x[:, c]).sum()) for c in range(x.shape[1])], [int(np.isinf(x[:, c]).sum()) for c in range(x.shape[1])]


def test_json_counts_equal_a_naive_count_and_the_rest_reads_them_as_zero(cli, files):
    bad, zero, x = files
    nans, infs = _counts(x)
    assert min(nans) > 0 and min(infs) > 0
    code, out, err = cli("stats", bad, "--fix-nonfinite", "--json")
    assert code == 0 and err == "", err  # an Inf is no level "beyond full scale": no warning
    report = json.loads(out)
    assert [c["nan_count"] for c in report["levels"]] == nans
    assert [c["inf_count"] for c in report["levels"]] == infs
    assert (report["overall"]["nan_count"], report["overall"]["inf_count"]) == (sum(nans), sum(infs))
    code, out, err = cli("stats", zero, "--json")
    assert code == 0, err
    clean = json.loads(out)
    for column in [report["overall"], *report["levels"]]:
        column["nan_count"] = column["inf_count"] = 0
    clean["path"] = report["path"]
    assert report == clean


def test_table_row_shows_the_counts_of_each_column(cli, files):
    bad, _, x = files
    nans, infs = _counts(x)
    code, out, err = cli("stats", bad, "--fix-nonfinite")
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.strip().startswith("NaN / Inf"))
    cells = [cell.strip() for cell in row.split("│")[1:]]
    assert cells == [f"{sum(nans)} / {sum(infs)}"] + [f"{n} / {i}" for n, i in zip(nans, infs)]


def test_library_report_equals_the_cli_json(cli, files):
    bad = files[0]
    code, out, _ = cli("stats", bad, "--fix-nonfinite", "--json")
    assert code == 0
    assert stats(str(bad), inputs=InputOptions(fix_nonfinite=True)) == json.loads(out)


def test_without_fix_nonfinite_the_file_is_refused(cli, files):
    bad = files[0]
    code, out, err = cli("stats", bad)
    assert code == 3 and out == ""
    assert err.startswith(f"error: {bad}: contains NaN or Inf samples") and err.count("\n") == 1


def test_batch_stats_reports_the_same_counts(cli, files, tmp_path):
    bad = files[0]
    code, _, err = cli("batch", "stats", bad, "--out", tmp_path / "out", "--fix-nonfinite", "-j", "1")
    assert code == 0, err
    (line,) = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    result = json.loads(line)
    result.pop("id")
    assert result == stats(str(bad), inputs=InputOptions(fix_nonfinite=True))


def test_the_reader_keeps_nonfinite_samples_only_when_asked(files):
    bad, _, x = files
    with open_audio(bad, nonfinite="keep") as source:
        kept = np.concatenate(list(source.blocks(dtype="float64")), axis=1)
    np.testing.assert_array_equal(kept, x.T)  # NaN where NaN (assert_array_equal treats NaN as equal)
    with open_audio(bad, nonfinite="zero") as source:
        zeroed = np.concatenate(list(source.blocks(dtype="float64")), axis=1)
    np.testing.assert_array_equal(zeroed, np.where(np.isfinite(x), x, 0).T)

"""Tests of audiokit.plot: the display max-pooling of long images (ColumnPooler, max_pool_columns), and that the
package is the one place that draws and draws only (its imports, nobody else's figure calls)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import audiokit
from audiokit.plot import ColumnPooler, max_pool_columns

PACKAGE = Path(audiokit.__file__).parent
#: What plot/ may import from audiokit: errors, io (the atomic write of the PNG it is given a path for; AudioSource
#: for a type) and the two scale conversions a picture shows (dB of the pooled image, round Hz on a mel axis).
PLOT_MAY_IMPORT = {"errors", "io", "io.reader", "dsp.scaling", "dsp.mel"}
#: The renderers: called only inside plot/.
DRAWING_CALLS = {"spectrogram_png", "spectrogram_figure", "spectrum_figure", "filterbank_figure", "png_bytes"}


def _audiokit_imports(path: Path) -> set[str]:
    """The audiokit modules ``path`` imports (relative to the package: ``io``, ``dsp.mel``, ...)."""
    package = path.relative_to(PACKAGE).parent.parts
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1]
            found.add(".".join([*base, *(node.module.split(".") if node.module else [])]))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("audiokit"):
            found.add(node.module.removeprefix("audiokit").lstrip("."))
        elif isinstance(node, ast.Import):
            found |= {a.name.removeprefix("audiokit").lstrip(".") for a in node.names if a.name.startswith("audiokit")}
    return found


def test_plot_imports_no_pipeline_cli_batch_nor_signal_processing():
    modules = sorted((PACKAGE / "plot").glob("*.py"))
    assert {m.stem for m in modules} >= {"__init__", "figure", "raster", "timefreq", "spectrum"}
    for module in modules:
        outside = {name for name in _audiokit_imports(module) if not name.startswith("plot")}
        assert outside <= PLOT_MAY_IMPORT, f"{module.name} imports {sorted(outside - PLOT_MAY_IMPORT)}"


def test_drawing_lives_only_in_plot():
    assert not (PACKAGE / "plot.py").exists() and not (PACKAGE / "rasterplot.py").exists()
    assert not (PACKAGE / "pipelines" / "timefreq_draw.py").exists()
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] == "plot":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        called = {
            node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute)
        }
        imported = {a.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
        imported |= {(node.module or "").split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        where = path.relative_to(PACKAGE)
        assert not called & DRAWING_CALLS, f"{where} draws: {sorted(called & DRAWING_CALLS)}"
        assert not imported & {"matplotlib", "PIL"}, f"{where} imports {sorted(imported & {'matplotlib', 'PIL'})}"


def test_plot_names_load_from_their_modules():
    import audiokit.plot as plot
    from audiokit.plot import raster, spectrum, timefreq

    assert plot.spectrogram_png is raster.spectrogram_png and plot.LayoutError is raster.LayoutError
    assert plot.draw_timefreq is timefreq.draw_timefreq and plot.draw_spectrum is spectrum.draw_spectrum
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        plot.nope  # noqa: B018


@pytest.mark.parametrize("rows, n_columns, width", [(3, 1000, 37), (5, 405, 400), (2, 50, 800), (4, 7, 7), (1, 1, 200)])
def test_column_pooler_equals_a_naive_max_over_column_groups(rng, rows, n_columns, width):
    image = rng.standard_normal((rows, n_columns))
    m = min(n_columns, width)
    edges = np.round(np.linspace(0, n_columns, m + 1)).astype(int)
    naive = np.empty((rows, m))
    for j in range(m):
        assert edges[j + 1] > edges[j]
        for r in range(rows):
            naive[r, j] = max(image[r, c] for c in range(edges[j], edges[j + 1]))
    pooler = ColumnPooler(rows, n_columns, width)
    start = 0
    while start < n_columns:  # streamed in uneven chunks, as the CLI does
        stop = min(n_columns, start + int(rng.integers(1, 60)))
        pooler.add(image[:, start:stop])
        start = stop
    assert np.array_equal(pooler.image, naive)
    assert np.array_equal(max_pool_columns(image, width), naive)

"""What the single-file commands write for each input of a corpus: the reference batch outputs must equal."""

from __future__ import annotations

import json
from pathlib import Path

#: Per command: options given to both the single-file command and the batch (not all defaults).
OPTIONS = {
    "mel": ["--win", "20ms", "--hop", "10ms", "--n-mels", "40", "--fmax", "7kHz"],
    "spectrogram": ["--win", "512", "--hop", "256", "--scale", "power", "--mix"],
    "resample": ["--to", "8k", "--quality", "medium"],
    "quantize": ["--bits", "8", "--seed", "3"],
    "dehum": ["--freq", "50"],
    "info": [],
    "spectrum": ["--peaks", "1", "--threshold", "20", "--window", "hamming"],
}


def reference_outputs(cli, command: str, corpus: Path, ref: Path) -> dict[str, object]:
    """Run the single-file ``command`` on every audio file of ``corpus``; return ``{relative output: bytes or dict}``.

    Outputs are named like the batch names them (``<id>.<tag>.<ext>`` with the id relative to ``corpus``);
    for ``info``/``spectrum`` the value is the ``--json`` report keyed by the id.
    """
    found: dict[str, object] = {}
    for path in sorted(p for p in corpus.rglob("*") if p.suffix in (".wav", ".flac")):
        item_id = path.relative_to(corpus).with_suffix("").as_posix()
        target = ref / item_id
        target.parent.mkdir(parents=True, exist_ok=True)
        options = OPTIONS[command]
        if command in ("mel", "spectrogram"):
            args = [command, path, *options, "--npy", f"{target}.{command}.npy"]
            names = [f"{item_id}.{command}.npy", f"{item_id}.{command}.json"]
        elif command in ("info", "spectrum"):
            code, out, err = cli(command, path, *options, "--json")
            assert code == 0, err
            found[item_id] = json.loads(out)
            continue
        else:
            tag = {"resample": "8k", "quantize": "8bit", "dehum": "dehum"}[command]
            args = [command, path, *options, "-o", f"{target}.{tag}.wav"]
            names = [f"{item_id}.{tag}.wav"]
        code, out, err = cli(*args)
        assert code == 0, err
        for name in names:
            found[name] = (ref / name).read_bytes()
    return found


def batch_outputs(command: str, out: Path, expected: dict[str, object]) -> dict[str, object]:
    """The batch's outputs under ``out`` for the keys of ``expected`` (reports from ``results.jsonl``)."""
    if command in ("info", "spectrum"):
        reports = {}
        for line in (out / "results.jsonl").read_text().splitlines():
            report = json.loads(line)
            reports[report.pop("id")] = report
        return reports
    return {name: (out / name).read_bytes() for name in expected if (out / name).exists()}

"""``--compat kaldi|torchaudio|librosa``: every default of ``spectrogram``/``mel``/``mfcc`` as that toolkit sets it.

The CLI declares the options whose default depends on the preset with the default ``None`` ("unset");
:func:`resolve` replaces each unset value by the preset's (or audiokit's own when no preset is given), so an
explicit flag always wins; without ``--compat`` the values are audiokit's own (:mod:`audiokit.defaults`).

:data:`PRESETS` is the one table: ``PRESETS[compat][command][param] = (value, what the toolkit calls it)``,
``param`` being the CLI parameter name (``--n-mels`` -> ``n_mels``) and the value written as the user would
type it (durations as text: ``"2048"`` is samples, ``"25ms"`` a time).  :func:`preset_rows` renders it for
``--help`` and the README; ``docs/conventions.md`` ("Presets") states the same tables.

Notes on the choices
--------------------
* No preset: audiokit's defaults (:mod:`audiokit.defaults`, which the flat API reads too).  ``--ref``/``--top-db``
  unset mean absolute dB without a clip in the ``.npy`` and ``max``/80 dB in the PNG.
* ``librosa``/``torchaudio`` keep audiokit's dB output (``--scale db``) with the toolkit's dB conversion:
  librosa ``power_to_db(S, ref=1.0, amin=1e-10, top_db=80)``, torchaudio ``AmplitudeToDB("power", top_db=None)``
  (``MFCC`` uses ``top_db=80``).  ``--scale power`` gives the toolkit's linear ``Spectrogram``/
  ``melspectrogram`` output.
* ``kaldi`` routes ``mel`` and ``mfcc`` to :mod:`audiokit.dsp.kaldi` (``compute-fbank-feats`` /
  ``compute-mfcc-feats``): natural log floored at ``FLT_EPSILON`` of int16-scaled samples, no ``ref``/``top_db``.
  ``spectrogram --compat kaldi`` (``compute-spectrogram-feats``) is not implemented and refused.
* ``dither`` is 0 here (Kaldi: 1.0) so results are reproducible; ``--dither 1 --seed N`` for Kaldi's.
* ``whisper`` (``mel`` only) is OpenAI Whisper's ``log_mel_spectrogram`` (= transformers' ``WhisperFeatureExtractor``):
  the table sets the STFT, the Slaney bank and the log10 clipped 8 decades (80 dB) below the peak; the preset itself
  adds Whisper's two steps, listed in :data:`PRESET_STEPS` (the last STFT frame dropped, ``(x + 4) / 4``).  Its
  30 s window (``pad_or_trim``, transformers' default ``padding="max_length"``) is ``--pad-or-trim 30s``.
* ``lhotse`` (``mel``, ``mfcc``) is Lhotse's ``Fbank()`` / ``Mfcc()`` (``lhotse.features.kaldi``: ``FbankConfig``,
  ``MfccConfig``, ``Wav2LogFilterBank``): Kaldi's computation (:data:`KALDI_COMPATS`) with Lhotse's defaults --
  no snip-edges (``(n + hop//2) // hop`` frames, Lhotse's ``compute_num_frames``), 80 bins (MFCC: 23 and 13
  cepstra), 20 Hz to Nyquist - 400 Hz, no energy, dither 0 -- on samples as read (+/-1, not int16-scaled: the
  front end's step in :data:`PRESET_STEPS`), so the log floor ``FLT_EPSILON`` applies to those energies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import defaults
from ..errors import ParameterError

__all__ = ["COMPATS", "KALDI_COMPATS", "PRESETS", "PRESET_STEPS", "KALDI_ONLY", "resolve", "preset_rows", "check_compat"]

COMPATS = ("kaldi", "torchaudio", "librosa", "whisper", "lhotse")
#: Presets computed by the Kaldi front end (:mod:`audiokit.pipelines.kaldi_frontend`); they take the Kaldi-only options.
KALDI_COMPATS = ("kaldi", "lhotse")
#: Parameters that only the Kaldi computation has (refused with another preset when given).
KALDI_ONLY = (
    "dither",
    "seed",
    "preemphasis",
    "remove_dc",
    "snip_edges",
    "use_energy",
    "raw_energy",
    "htk_compat",
    "energy_floor",
)

_Table = dict[str, tuple[Any, str]]

#: audiokit's own defaults (no ``--compat``), read from :mod:`audiokit.defaults` as the flat API does.  ``ref`` and
#: ``top_db`` unset (None) mean: in the ``.npy`` (and batch) absolute dB without a clip (``--ref 1``, no ``--top-db``),
#: so features compare across files; in the PNG ``--ref max --top-db 80`` (a picture may normalise).
_AUDIOKIT_STFT: _Table = {
    "win": (defaults.WIN, "win_length"),
    "hop": (defaults.HOP, "hop_length"),
    "nfft": (defaults.NFFT, "n_fft = win_length"),
    "window": (defaults.WINDOW, "periodic Hann"),
    "center": (defaults.CENTER, "frames start at m*hop"),
    "pad_mode": (defaults.PAD_MODE, "pad_mode (with --center)"),
    "window_position": ("center", "window centred in n_fft"),
    "scale": (defaults.SCALE, "10*log10"),
    "ref": (None, f"ref {defaults.FEATURE_REF:g} in the .npy, {defaults.PICTURE_REF} in the PNG"),
    "top_db": (None, f"no clip in the .npy, {defaults.PICTURE_TOP_DB:g} dB in the PNG"),
    "amin": (None, "1e-10 power, 1e-5 magnitude"),
}
_AUDIOKIT_MEL: _Table = {
    "n_mels": (defaults.N_MELS, "n_mels"),
    "fmin": (None, f"fmin {defaults.FMIN_HZ:g}"),
    "fmax": (None, "fmax sr/2"),
    "mel_scale": (defaults.MEL_SCALE, "HTK"),
    "norm": (defaults.MEL_NORM, "triangles peak 1"),
    "log": (defaults.LOG, "dB"),
}
_AUDIOKIT_MFCC: _Table = {
    "n_mfcc": (defaults.N_MFCC, "n_mfcc"),
    "lifter": (defaults.LIFTER, "no lifter"),
    "energy": (defaults.ENERGY, "c0 kept"),
}

_LIBROSA_STFT: _Table = {
    "win": ("2048", "n_fft=2048, win_length=n_fft"),
    "hop": ("512", "hop_length=win_length//4"),
    "nfft": (None, "n_fft=2048"),
    "window": ("hann", "window='hann' (periodic)"),
    "center": (True, "center=True"),
    "pad_mode": ("constant", "pad_mode='constant' (librosa >= 0.10)"),
    "window_position": ("center", "-"),
    "scale": ("db", "power_to_db"),
    "ref": ("1", "power_to_db ref=1.0"),
    "top_db": (80.0, "power_to_db top_db=80"),
    "amin": (None, "amin=1e-10 (power_to_db), 1e-5 (amplitude_to_db)"),
}
_LIBROSA_MEL: _Table = {
    "n_mels": (128, "n_mels=128"),
    "fmin": (None, "fmin=0"),
    "fmax": (None, "fmax=sr/2"),
    "mel_scale": ("slaney", "htk=False (Slaney)"),
    "norm": ("slaney", "norm='slaney'"),
    "log": ("db", "power_to_db"),
}
_LIBROSA_MFCC: _Table = {
    "n_mfcc": (20, "n_mfcc=20 (dct_type=2, norm='ortho')"),
    "lifter": (0.0, "lifter=0"),
    "energy": (False, "-"),
}

_TORCH_STFT: _Table = {
    "win": ("400", "n_fft=400, win_length=n_fft"),
    "hop": ("200", "hop_length=win_length//2"),
    "nfft": (None, "n_fft=400"),
    "window": ("hann", "window_fn=torch.hann_window (periodic)"),
    "center": (True, "center=True"),
    "pad_mode": ("reflect", "pad_mode='reflect'"),
    "window_position": ("center", "-"),
    "scale": ("db", "AmplitudeToDB(stype='power')"),
    "ref": ("1", "AmplitudeToDB ref 1 (db_multiplier 0)"),
    "top_db": (0.0, "AmplitudeToDB top_db=None"),
    "amin": (1e-10, "AmplitudeToDB amin=1e-10"),
}
_TORCH_MEL: _Table = {
    "n_mels": (128, "n_mels=128"),
    "fmin": (None, "f_min=0"),
    "fmax": (None, "f_max=None (sr/2)"),
    "mel_scale": ("htk", "mel_scale='htk'"),
    "norm": ("none", "norm=None"),
    "log": ("db", "AmplitudeToDB"),
}
_TORCH_MFCC: _Table = {
    "n_mfcc": (40, "n_mfcc=40 (dct_type=2, norm='ortho', log_mels=False)"),
    "top_db": (80.0, "MFCC: AmplitudeToDB top_db=80"),
    "lifter": (0.0, "-"),
    "energy": (False, "-"),
}

_KALDI_COMMON: _Table = {
    "win": ("25ms", "--frame-length=25"),
    "hop": ("10ms", "--frame-shift=10"),
    "nfft": (None, "--round-to-power-of-two=true"),
    "window": ("povey", "--window-type=povey"),
    "center": (False, "(--snip-edges instead)"),
    "pad_mode": ("reflect", "edge reflection (--snip-edges=false)"),
    "window_position": ("start", "window at the frame start"),
    "scale": ("db", "--use-log-fbank=true (ln)"),
    "log": ("ln", "natural log"),
    "ref": ("1", "-"),
    "top_db": (0.0, "-"),
    "amin": (float(2.0**-23), "FLT_EPSILON"),
    "fmin": ("20", "--low-freq=20"),
    "fmax": (None, "--high-freq=0 (nyquist)"),
    "mel_scale": ("kaldi", "1127*ln(1+f/700)"),
    "norm": ("none", "-"),
    "dither": (0.0, "--dither=1.0 in Kaldi; 0 here"),
    "seed": (None, "-"),
    "preemphasis": (0.97, "--preemphasis-coefficient=0.97"),
    "remove_dc": (True, "--remove-dc-offset=true"),
    "snip_edges": (True, "--snip-edges=true"),
    "raw_energy": (True, "--raw-energy=true"),
    "htk_compat": (False, "--htk-compat=false"),
}
_KALDI_FBANK: _Table = {"n_mels": (23, "--num-mel-bins=23"), "use_energy": (False, "--use-energy=false")}
_KALDI_MFCC: _Table = {
    "n_mels": (23, "--num-mel-bins=23"),
    "n_mfcc": (13, "--num-ceps=13"),
    "lifter": (22.0, "--cepstral-lifter=22"),
    "energy": (True, "--use-energy=true"),
}

#: Lhotse 1.33 ``FbankConfig``/``MfccConfig`` defaults (``lhotse/features/kaldi/extractors.py``) on Kaldi's options.
_LHOTSE_COMMON: _Table = {
    **_KALDI_COMMON,
    "win": ("25ms", "frame_length=0.025 (floor(0.025*sr) samples)"),
    "hop": ("10ms", "frame_shift=0.01"),
    "nfft": (None, "round_to_power_of_two=True"),
    "window": ("povey", "window_type='povey'"),
    "center": (False, "(snip_edges instead)"),
    "pad_mode": ("reflect", "torch.flip of the edges (snip_edges=False)"),
    "window_position": ("start", "-"),
    "scale": ("db", "use_fft_mag=False, then log"),
    "log": ("ln", "torch.max(fbank, eps).log()"),
    "amin": (float(2.0**-23), "eps = torch.finfo(torch.float).eps"),
    "fmin": ("20", "low_freq=20.0"),
    "fmax": ("-400", "high_freq=-400.0 (nyquist - 400)"),
    "dither": (0.0, "dither=0.0"),
    "preemphasis": (0.97, "preemph_coeff=0.97"),
    "remove_dc": (True, "remove_dc_offset=True"),
    "snip_edges": (False, "snip_edges=False"),
    "raw_energy": (True, "raw_energy=True"),
    "htk_compat": (False, "-"),
}
_LHOTSE_FBANK: _Table = {"n_mels": (80, "num_filters=80"), "use_energy": (False, "use_energy=False")}
_LHOTSE_MFCC: _Table = {
    "n_mels": (23, "num_filters=23"),
    "n_mfcc": (13, "num_ceps=13"),
    "lifter": (22.0, "cepstral_lifter=22"),
    "energy": (False, "use_energy=False (c0 kept)"),
}

_WHISPER_MEL: _Table = {
    "win": ("400", "N_FFT = 400 (win_length = n_fft)"),
    "hop": ("160", "HOP_LENGTH = 160"),
    "nfft": (None, "n_fft = 400"),
    "window": ("hann", "torch.hann_window(400) (periodic)"),
    "center": (True, "torch.stft center=True"),
    "pad_mode": ("reflect", "pad_mode='reflect'"),
    "window_position": ("center", "-"),
    "scale": ("db", "stft.abs() ** 2, then log10"),
    "log": ("log10", "log_spec = clamp(mel, min=1e-10).log10()"),
    "ref": ("1", "-"),
    "top_db": (80.0, "maximum(log_spec, log_spec.max() - 8.0): 8 decades"),
    "amin": (1e-10, "clamp(min=1e-10)"),
    "n_mels": (80, "n_mels=80 (large-v3: 128)"),
    "fmin": (None, "librosa.filters.mel fmin=0"),
    "fmax": (None, "fmax=sr/2 = 8000 Hz"),
    "mel_scale": ("slaney", "librosa.filters.mel htk=False (Slaney)"),
    "norm": ("slaney", "norm='slaney'"),
}

#: ``PRESETS[compat or None][command][param] = (value as typed, the toolkit's parameter)``.
PRESETS: dict[str | None, dict[str, _Table]] = {
    None: {
        "spectrogram": dict(_AUDIOKIT_STFT),
        "mel": {**_AUDIOKIT_STFT, **_AUDIOKIT_MEL},
        "mfcc": {**_AUDIOKIT_STFT, **_AUDIOKIT_MEL, **_AUDIOKIT_MFCC},
    },
    "librosa": {
        "spectrogram": dict(_LIBROSA_STFT),
        "mel": {**_LIBROSA_STFT, **_LIBROSA_MEL},
        "mfcc": {**_LIBROSA_STFT, **_LIBROSA_MEL, **_LIBROSA_MFCC},
    },
    "torchaudio": {
        "spectrogram": dict(_TORCH_STFT),
        "mel": {**_TORCH_STFT, **_TORCH_MEL},
        "mfcc": {**_TORCH_STFT, **_TORCH_MEL, **_TORCH_MFCC},
    },
    "kaldi": {
        "mel": {**_KALDI_COMMON, **_KALDI_FBANK},
        "mfcc": {**_KALDI_COMMON, **_KALDI_MFCC},
    },
    "whisper": {"mel": dict(_WHISPER_MEL)},
    "lhotse": {
        "mel": {**_LHOTSE_COMMON, **_LHOTSE_FBANK},
        "mfcc": {**_LHOTSE_COMMON, **_LHOTSE_MFCC},
    },
}

#: What a preset does beyond option values, in the order the job does it: ``(step, the toolkit's code)``.  The
#: pipeline reads the preset's name for these (:attr:`~audiokit.pipelines.timefreq_options.FeatureOptions.is_whisper`:
#: the STFT front end drops the last frame, the chain ends with :class:`~audiokit.pipelines.features.Affine`).
PRESET_STEPS: dict[str, list[tuple[str, str]]] = {
    "whisper": [
        ("the last STFT frame dropped (n_samples // 160 frames)", "stft[..., :-1]"),
        ("(x + 4) / 4 after the clip", "(log_spec + 4.0) / 4.0"),
        ("input at 16 kHz only (refused otherwise)", "WhisperFeatureExtractor sampling_rate=16000"),
    ],
    "lhotse": [
        ("samples as read (+/-1), not times 32768", "Fbank().extract(samples, sr): no int16 scaling"),
        ("log frame energy (--use-energy) floored at ln(1e-10)", "energy_floor=EPSILON (1e-10)"),
    ],
}
#: Where each preset sends the commands it has no table for.
_NOT_FOR = {
    "kaldi": "Kaldi's compute-spectrogram-feats is not implemented; Kaldi fbank is 'audiokit mel --compat kaldi', "
    "MFCC 'audiokit mfcc --compat kaldi'",
    "whisper": "Whisper's front end is a log-mel spectrogram: 'audiokit mel --compat whisper'",
    "lhotse": "Lhotse's Kaldi-style extractors are 'audiokit mel --compat lhotse' (Fbank) and 'audiokit mfcc --compat lhotse' "
    "(Mfcc)",
}


def check_compat(compat: str | None, command: str) -> str | None:
    """``--compat`` lower-cased and validated for ``command`` (ParameterError naming the allowed values)."""
    if compat is None:
        return None
    value = compat.lower()
    if value not in COMPATS:
        raise ParameterError(f"--compat: {compat!r} is not one of {', '.join(COMPATS)}")
    if command not in PRESETS[value]:
        raise ParameterError(f"--compat {value}: not available for {command} ({_NOT_FOR[value]})")
    return value


def resolve(command: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with every unset (``None``) preset parameter replaced by the preset's value.

    Parameters
    ----------
    command : {"spectrogram", "mel", "mfcc"}
    params : mapping
        The command's parameter values (CLI names), ``compat`` among them (``None``: audiokit's defaults).

    Returns
    -------
    dict
        A copy; ``compat`` validated.  Without a preset ``ref`` and ``top_db`` stay None when unset: each output
        takes its own default (:mod:`audiokit.defaults`: absolute dB in the ``.npy``, ``max``/80 dB in the PNG).

    Raises
    ------
    ParameterError
        An unknown ``--compat``, a preset the command does not have, or a Kaldi-only option given without
        ``--compat kaldi``.
    """
    out = dict(params)
    compat = check_compat(out.get("compat"), command)
    out["compat"] = compat
    if compat not in KALDI_COMPATS:
        for name in KALDI_ONLY:
            if out.get(name) is not None:
                raise ParameterError(f"--{name.replace('_', '-')} applies to --compat kaldi only (and lhotse)")
    table = PRESETS[compat][command]
    for name, (value, _) in table.items():
        if name in out and out[name] is None:
            out[name] = value
    for name in KALDI_ONLY:  # Kaldi-only switches absent from the preset stay None for the others
        out.setdefault(name, None)
    return out


def preset_rows(compat: str, command: str) -> list[tuple[str, str, str]]:
    """``(flag, value, toolkit parameter)`` rows of a preset (for ``--help``, the README, tests)."""
    rows = []
    for name, (value, theirs) in PRESETS[check_compat(compat, command)][command].items():
        flag = "--" + name.replace("_", "-")
        rows.append((flag, "(unset)" if value is None else str(value), theirs))
    return rows

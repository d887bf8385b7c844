"""Signals and measures shared by the hum tests (tests/dsp/hum): hum with a known phase, a programme,
and the energy a least-squares fit on the true harmonic phases explains."""

from __future__ import annotations

import math
import warnings

import numpy as np

SR = 16000


def hum(f0, n, *, amp=0.05, harmonics=(1, 2, 3, 4, 5), sr=SR, drift=None, seed=0):
    """``Σ_k amp/k·cos(k·φ + θ_k)``; ``φ`` integrates ``f0 + drift(t)``; returns ``(h, φ)``."""
    t = np.arange(n) / sr
    f = f0 + (drift(t) if drift is not None else np.zeros(n))
    phase = 2 * np.pi * np.concatenate([[0.0], np.cumsum(f[:-1])]) / sr
    theta = np.random.default_rng(seed).uniform(0, 2 * np.pi, max(harmonics))
    h = sum(amp / k * np.cos(k * phase + theta[k - 1]) for k in harmonics)
    return h, phase


def hum_energy(e, phase, harmonics, *, sr=SR, frame=0.5):
    """Energy of ``e`` explained by cos/sin of each harmonic's true phase, per 0.5 s frame (naive LS)."""
    size = int(frame * sr)
    total = 0.0
    for a in range(0, len(e) - size + 1, size):
        basis = np.stack([f(k * phase[a : a + size]) for k in harmonics for f in (np.cos, np.sin)], axis=1)
        coef, *_ = np.linalg.lstsq(basis, e[a : a + size], rcond=None)
        total += float(np.sum((basis @ coef) ** 2))
    return total


def reduction_db(clean, hummed, out, phase, harmonics):
    return 10 * math.log10(hum_energy(out - clean, phase, harmonics) / hum_energy(hummed - clean, phase, harmonics))


def sdr(ref, est):
    err = np.sum((est - ref) ** 2)
    return math.inf if err == 0 else 10 * math.log10(np.sum(ref**2) / err)


def programme(rng, n, sr=SR):
    """A stand-in for speech and music: tones off the hum lines plus coloured noise."""
    t = np.arange(n) / sr
    x = 0.1 * np.sin(2 * np.pi * 440 * t) + 0.05 * np.sin(2 * np.pi * 1234.5 * t)
    noise = np.cumsum(rng.standard_normal(n)) * 0.002
    noise -= np.convolve(noise, np.ones(801) / 801, mode="same")
    return x + noise + 0.005 * rng.standard_normal(n)


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)

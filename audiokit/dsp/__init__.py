"""Signal processing core: windows, STFT, mel, scaling (no I/O, no printing)."""

"""Command-line interface (Typer); holds no DSP."""

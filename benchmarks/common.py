"""Shared helpers of the benchmark scripts: timing, peak memory, tables, test signals.

Nothing here imports audiokit, so a script can set thread variables (see
:func:`limit_threads`) before numpy is first imported.  numpy itself is
imported lazily inside the functions that need it for the same reason.

* :func:`time_interleaved` -- medians over repeats, contenders alternated in
  every round so that load from other processes hits all of them alike.
* :func:`traced_peak_mb` -- peak of the memory traced by ``tracemalloc``
  during one call (numpy buffers and Python objects; not C library heaps).
* :func:`run_measured` -- a subprocess's wall time and peak RSS (``/usr/bin/time
  -f %M`` when available, else ``getrusage(RUSAGE_CHILDREN)`` in a fresh helper).
* :func:`run_wait4` -- one subprocess's wall time, CPU time and peak RSS from
  ``os.wait4`` (that child's own rusage, so earlier children never count).
* :func:`print_table` -- a Markdown table (readable in a terminal, pasteable
  into the README).
* :func:`test_signal`, :func:`write_test_wav` -- the generated input: tilted
  noise plus three tones, float32, written block by block so that hours of
  audio never sit in memory.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "AUDIOKIT_FFT_THREADS")
GNU_TIME = "/usr/bin/time"

# ---------------------------------------------------------------------- environment


def limit_threads(n: int = 1) -> None:
    """Set the thread-count variables to ``n`` (call before numpy is imported)."""
    if "numpy" in sys.modules:
        raise RuntimeError("limit_threads() must run before numpy is imported")
    for var in THREAD_VARS:
        os.environ[var] = str(n)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_line(extra: dict[str, str] | None = None) -> str:
    """One line describing the run: date, cores, CPU, load, relevant environment."""
    parts = {
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "nproc": str(os.cpu_count()),
        "cpu": cpu_model(),
        "load avg (1 min)": f"{os.getloadavg()[0]:.2f}",
        "python": platform.python_version(),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", "(unset)"),
    }
    parts.update(extra or {})
    return "; ".join(f"{k} {v}" for k, v in parts.items())


def versions(*modules: str) -> dict[str, str]:
    """``{name: version}`` of already importable modules (missing ones say so)."""
    import importlib

    out = {}
    for name in modules:
        try:
            out[name] = getattr(importlib.import_module(name), "__version__", "?")
        except ImportError:
            out[name] = "not installed"
    return out


@contextlib.contextmanager
def temp_dir(prefix: str = "audiokit-bench-", keep: bool = False) -> Iterator[Path]:
    """A temporary folder, deleted afterwards unless ``keep``."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        if keep:
            print(f"# kept {path}", file=sys.stderr)
        else:
            shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------------- timing


@dataclass
class Timing:
    """Wall times (s) of the repeats of one contender, plus the untimed first call."""

    name: str
    times: list[float] = field(default_factory=list)
    first: float | None = None
    result: object = None

    @property
    def median(self) -> float:
        return statistics.median(self.times) if self.times else float("nan")

    @property
    def spread(self) -> str:
        """min-max of the repeats, as text."""
        if not self.times:
            return "-"
        return f"{fmt_s(min(self.times))} - {fmt_s(max(self.times))}"


def time_interleaved(
    funcs: dict[str, Callable[[], object]],
    repeats: int,
    *,
    warmup: bool = True,
    keep_first_result: bool = True,
    label: str = "",
) -> dict[str, Timing]:
    """Median wall times of ``funcs``, alternating them in every round.

    With ``warmup`` each function is called once first (timed separately as
    ``Timing.first``: FFT planning, caches, lazy imports); its result is kept
    in ``Timing.result`` (for accuracy checks) when ``keep_first_result``.
    The timed rounds alternate the order (forward, then backward) so that no
    contender always runs right after the same neighbour.
    """
    out = {name: Timing(name) for name in funcs}
    if warmup:
        for name, fn in funcs.items():
            t0 = time.perf_counter()
            r = fn()
            out[name].first = time.perf_counter() - t0
            if keep_first_result:
                out[name].result = r
            del r
    names = list(funcs)
    for i in range(repeats):
        order = names if i % 2 == 0 else names[::-1]
        for name in order:
            t0 = time.perf_counter()
            r = funcs[name]()
            out[name].times.append(time.perf_counter() - t0)
            del r
        if label:
            print(f"#   {label}: round {i + 1}/{repeats} done", file=sys.stderr)
    return out


def traced_peak_mb(fn: Callable[[], object]) -> float:
    """Peak MiB traced by ``tracemalloc`` during one call of ``fn`` (its result included)."""
    import tracemalloc

    tracemalloc.start()
    try:
        r = fn()
        peak = tracemalloc.get_traced_memory()[1]
        del r
        return peak / 2**20
    finally:
        tracemalloc.stop()


# ---------------------------------------------------------------------- subprocesses


@dataclass
class Run:
    """One subprocess run: wall time (s), peak RSS (kB), exit code, stderr tail."""

    wall: float
    rss_kb: int | None
    returncode: int
    stderr: str = ""


def run_measured(argv: Sequence[str], *, env: dict | None = None, cwd: str | None = None) -> Run:
    """Run ``argv`` once; wall time from here, peak RSS of the process.

    Peak RSS comes from GNU time (``/usr/bin/time -f %M``, kB, written to a
    separate file so the command's stderr is untouched); without it, from a
    fresh Python helper that runs the command and reports
    ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` (kB on Linux) -- fresh so that
    earlier children do not count.  Either way it is the largest resident set
    of the process or any descendant it waited for, not a sum.
    """
    argv = [str(a) for a in argv]
    with tempfile.NamedTemporaryFile("r", suffix=".rss", delete=False) as tf:
        rss_file = tf.name
    try:
        if os.access(GNU_TIME, os.X_OK):
            cmd = [GNU_TIME, "-o", rss_file, "-f", "%M", *argv]
        else:
            helper = (
                "import resource, subprocess, sys\n"
                "rc = subprocess.call(sys.argv[2:])\n"
                "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
                "sys.exit(rc)\n"
            )
            cmd = [sys.executable, "-c", helper, rss_file, *argv]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - t0
        rss = None
        try:
            text = Path(rss_file).read_text().strip().splitlines()
            rss = int(text[-1]) if text else None
        except (OSError, ValueError):
            pass
        return Run(wall, rss, proc.returncode, proc.stderr[-2000:])
    finally:
        with contextlib.suppress(OSError):
            os.unlink(rss_file)


@dataclass
class Waited:
    """One subprocess measured by :func:`run_wait4`: exit status, peak RSS (MiB), CPU and wall seconds."""

    returncode: int | None
    rss_mib: float | None
    cpu: float | None
    wall: float
    stderr: str = ""
    timed_out: bool = False


#: Run by a fresh ``python -I -S``: spawn argv[2:], wait4 it, write "status maxrss_kib utime stime" to argv[1].
_LAUNCHER = (
    "import os, sys\n"
    "pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)\n"
    "_, status, ru = os.wait4(pid, 0)\n"
    "with open(sys.argv[1], 'w') as f:\n"
    "    f.write(f'{os.waitstatus_to_exitcode(status)} {ru.ru_maxrss} {ru.ru_utime} {ru.ru_stime}')\n"
)


def run_wait4(argv: Sequence[str], *, env: dict | None = None, cwd: str | None = None, timeout: float = 3600.0) -> Waited:
    """Run ``argv`` once and read its rusage from ``os.wait4``.

    ``rss_mib = ru_maxrss / 1024`` (KiB on Linux): the largest resident set of
    that child (and of descendants it waited for), not of any earlier child,
    unlike ``RUSAGE_CHILDREN``.  ``cpu = ru_utime + ru_stime`` (s).

    The child is spawned by a small launcher (``python -I -S``, ~10 MiB), not
    by this process: Linux carries the spawning process's resident set into
    the child's ``ru_maxrss`` (fork or vfork copy or share its memory until
    ``exec``), so a child spawned from a 500 MiB parent reads at least
    500 MiB whatever it does.  After ``timeout`` seconds the launcher's
    session is killed and ``timed_out`` is set.
    """
    argv = [str(a) for a in argv]
    with tempfile.TemporaryDirectory(prefix="audiokit-wait4-") as tmp, open(os.devnull, "rb") as devnull:
        report, err_path = Path(tmp) / "rusage", Path(tmp) / "stderr"
        with open(err_path, "wb") as err:
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(report), *argv],
                env=env,
                cwd=cwd,
                stdin=devnull,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,
            )
            try:
                proc.wait(timeout=timeout)
                timed_out = False
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()
                timed_out = True
            wall = time.perf_counter() - t0
        text = err_path.read_text(errors="replace")[-2000:]
        try:
            code, rss, ut, st = report.read_text().split()
        except (OSError, ValueError):
            return Waited(None, None, None, wall, text, timed_out)
    return Waited(int(code), int(rss) / 1024.0, float(ut) + float(st), wall, text, timed_out)


@dataclass
class CmdResult:
    name: str
    runs: list[Run] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(r.wall for r in self.runs) if self.runs else float("nan")

    @property
    def peak_rss_mib(self) -> float | None:
        vals = [r.rss_kb for r in self.runs if r.rss_kb is not None]
        return max(vals) / 1024 if vals else None

    @property
    def failed(self) -> list[Run]:
        return [r for r in self.runs if r.returncode != 0]


def time_commands(
    commands: dict[str, Callable[[], Sequence[str]] | Sequence[str]],
    repeats: int,
    *,
    env: dict | None = None,
    label: str = "",
) -> dict[str, CmdResult]:
    """Run each command ``repeats`` times, alternating them round by round.

    A command is an argv, or a callable returning one (e.g. to pick a fresh
    output path).  Failures are recorded (and reported by the caller), never
    raised.
    """
    out = {name: CmdResult(name) for name in commands}
    names = list(commands)
    for i in range(repeats):
        order = names if i % 2 == 0 else names[::-1]
        for name in order:
            cmd = commands[name]
            argv = cmd() if callable(cmd) else cmd
            run = run_measured(argv, env=env)
            out[name].runs.append(run)
            if run.returncode != 0:
                print(f"# {name} exited {run.returncode}: {run.stderr.strip()[-600:]}", file=sys.stderr)
        if label:
            print(f"#   {label}: round {i + 1}/{repeats} done", file=sys.stderr)
    return out


# ---------------------------------------------------------------------- tables


def fmt_s(seconds: float | None) -> str:
    if seconds is None or seconds != seconds:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def fmt_ratio(r: float | None) -> str:
    return "-" if r is None or r != r else f"{r:.2f}x"


def fmt_mib(m: float | None) -> str:
    return "-" if m is None else f"{m:.0f}"


def target_status(value: float | None, target: float | None, *, higher_is_better: bool = True) -> str:
    """'met' / 'below (value/target = 0.62)' -- informative only, never an assertion."""
    if value is None or target is None or value != value:
        return ""
    ok = value >= target if higher_is_better else value <= target
    if ok:
        return "met"
    frac = value / target if higher_is_better else target / value
    return f"MISSED ({frac:.0%} of target)"


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]], *, title: str | None = None) -> None:
    """Print a Markdown table with padded columns."""
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    if title:
        print(f"\n### {title}\n")
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    print(line(cells[0]))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in cells[1:]:
        print(line(r))
    sys.stdout.flush()


# ---------------------------------------------------------------------- test signals

TONES_HZ = (440.0, 1000.0, 3000.0)


class _SignalGen:
    """Block-wise generator: AR(1) low-pass noise at -20 dBFS RMS plus three tones at -20 dBFS each."""

    def __init__(self, sr: int, seed: int = 0):
        import numpy as np

        self.sr = sr
        self.rng = np.random.default_rng(seed)
        self.zi = np.zeros(1)
        self.pos = 0
        self.a = 0.9
        self.noise_gain = 0.1 * (1 - self.a**2) ** 0.5  # stationary RMS 0.1

    def next(self, n: int):
        import numpy as np
        from scipy import signal

        w = self.rng.standard_normal(n)
        noise, self.zi = signal.lfilter([1.0], [1.0, -self.a], w, zi=self.zi)
        t = (self.pos + np.arange(n)) / self.sr
        y = self.noise_gain * noise
        for f in TONES_HZ:
            y += 0.1 * np.sin(2 * np.pi * f * t)
        self.pos += n
        return y.astype(np.float32)


def test_signal(seconds: float, sr: int, *, seed: int = 0):
    """Mono float32 test signal of ``seconds`` at ``sr``: tilted noise plus tones at 440, 1000, 3000 Hz."""
    import numpy as np

    n = int(round(seconds * sr))
    gen = _SignalGen(sr, seed)
    block = 1 << 22
    out = np.empty(n, np.float32)
    for a in range(0, n, block):
        out[a : a + block] = gen.next(min(block, n - a))
    return out


def write_test_wav(
    path: Path, seconds: float, sr: int, *, subtype: str = "PCM_16", seed: int = 0, channels: int = 1, hum_hz: float | None = None
) -> Path:
    """Write the test signal to a WAV block by block (bounded memory); returns ``path``.

    Channel ``c`` is the signal of seed ``seed + c``.  With ``hum_hz``, every
    channel also carries mains hum: the fundamental at -30 dBFS and its 2nd and
    3rd harmonics at -36 and -40 dBFS (amplitudes 0.0316, 0.0158, 0.01).
    Files over 4 GiB are written as RF64.
    """
    import numpy as np
    import soundfile as sf

    n = int(round(seconds * sr))
    gens = [_SignalGen(sr, seed + c) for c in range(channels)]
    block = max(1, (1 << 21) // channels)
    width = {"PCM_U8": 1, "PCM_S8": 1, "PCM_16": 2, "PCM_24": 3, "DOUBLE": 8}.get(subtype, 4)
    big = n * channels * width > 2**32 - 2**20
    with sf.SoundFile(str(path), "w", samplerate=sr, channels=channels, subtype=subtype, format="RF64" if big else "WAV") as f:
        for a in range(0, n, block):
            m = min(block, n - a)
            y = np.stack([g.next(m) for g in gens], axis=1)
            if hum_hz:
                t = (a + np.arange(m)) / sr
                for k, amp in ((1, 0.0316), (2, 0.0158), (3, 0.01)):
                    y += (amp * np.sin(2 * np.pi * k * hum_hz * t)).astype(np.float32)[:, None]
            f.write(y if channels > 1 else y[:, 0])
    return Path(path)

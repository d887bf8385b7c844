"""The client's concurrent header pass (audiokit.batch.stores.headers, issue 22): order, concurrency, errors, Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading

import pytest

from audiokit.batch.stores.headers import WORKERS, read_all


def test_results_in_input_order_whatever_the_completion_order():
    # later items finish first: item i waits until every item after it (in its batch of WORKERS) has returned
    n = 3 * WORKERS + 5
    done = [threading.Event() for _ in range(n)]

    def read(i: int) -> int:
        later = [j for j in range(i + 1, n) if j // WORKERS == i // WORKERS]
        for j in later:
            assert done[j].wait(30), f"item {j} never ran alongside item {i}"
        done[i].set()
        return i * i

    assert read_all(list(range(n)), read) == [i * i for i in range(n)]


def test_calls_overlap_up_to_workers_and_no_more():
    lock = threading.Lock()
    active, peak = [0], [0]
    barrier = threading.Barrier(4, timeout=30)

    def read(i: int) -> int:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        if i < 4:
            barrier.wait()  # fails (BrokenBarrierError) unless 4 calls are in flight at once
        with lock:
            active[0] -= 1
        return i

    assert read_all(list(range(40)), read, workers=4) == list(range(40))
    assert peak[0] == 4


def test_one_worker_or_one_item_reads_in_the_calling_thread():
    threads: list[str] = []

    def read(i: int) -> int:
        threads.append(threading.current_thread().name)
        return i + 1

    assert read_all([1, 2, 3], read, workers=1) == [2, 3, 4]
    assert read_all([7], read) == [8]
    assert read_all([], read) == []
    assert set(threads) == {threading.current_thread().name}


def test_the_first_error_by_input_order_is_raised_after_every_call_returned():
    returned: list[int] = []

    def read(i: int) -> int:
        if i in (5, 9):
            raise ValueError(f"bad {i}")
        returned.append(i)
        return i

    with pytest.raises(ValueError, match="bad 5"):
        read_all(list(range(20)), read, workers=3)
    assert sorted(returned) == [i for i in range(20) if i not in (5, 9)]


@pytest.mark.slow  # a subprocess
def test_ctrl_c_during_the_pass_ends_at_once_with_a_read_stalled(tmp_path):
    # every read blocks forever: SIGINT must raise KeyboardInterrupt in the main thread and the process must exit
    # without waiting for the stalled (daemon) threads
    script = textwrap.dedent(
        """
        import signal, sys, threading
        from audiokit.batch.stores.headers import read_all
        signal.signal(signal.SIGINT, signal.default_int_handler)
        started = threading.Semaphore(0)
        def read(i):
            started.release()
            threading.Event().wait()
        threading.Thread(target=lambda: [started.acquire() for _ in range(4)] and print("stalled", flush=True),
                         daemon=True).start()
        try:
            read_all(list(range(10)), read, workers=4)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(130)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "stalled\n"
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)  # a hang guard, not a timing measurement
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert (proc.returncode, stdout, stderr) == (130, "interrupted\n", "")
    assert os.listdir(tmp_path) == []

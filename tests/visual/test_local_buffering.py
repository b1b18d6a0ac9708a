"""LocalVisBackend buffers scalars in memory and loses none of them: at close, at garbage
collection, at interpreter exit, across a fork, from several threads, and on a crash beyond the
last flush interval."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from treadle.visual.backends import LocalVisBackend
from treadle.visual.backends.scalar_writer import BufferedLineWriter


def read_lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60
    )


def test_scalars_wait_in_memory_until_the_interval_or_close(tmp_path):
    backend = LocalVisBackend(str(tmp_path), flush_interval=3600)
    for step in range(100):
        backend.add_scalars({"loss": 1 / (step + 1)}, step=step)
    assert (tmp_path / "scalars.json").read_text() == ""  # opened, nothing written yet
    backend.close()
    lines = read_lines(tmp_path / "scalars.json")
    assert [line["step"] for line in lines] == list(range(100))
    assert lines[3] == {"loss": 0.25, "step": 3}


def test_explicit_flush_writes_pending_lines(tmp_path):
    backend = LocalVisBackend(str(tmp_path), flush_interval=3600)
    backend.add_scalars({"loss": 1.0}, step=1)
    backend.flush()
    assert read_lines(tmp_path / "scalars.json") == [{"loss": 1.0, "step": 1}]
    backend.close()


def test_a_background_thread_flushes_when_logging_pauses(tmp_path):
    backend = LocalVisBackend(str(tmp_path), flush_interval=0.05)
    backend.add_scalars({"loss": 1.0}, step=1)
    # No further call and no close: only the flusher thread can write the line. The deadline
    # is generous so that a loaded machine does not fail the test; the interval is what counts.
    deadline = time.monotonic() + 10
    while not (tmp_path / "scalars.json").read_text() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert read_lines(tmp_path / "scalars.json") == [{"loss": 1.0, "step": 1}]
    backend.close()


def test_a_call_after_the_interval_flushes(tmp_path):
    writer = BufferedLineWriter(tmp_path / "lines.txt", flush_interval=0.05)
    writer.write("first\n")
    time.sleep(0.1)
    writer.write("second\n")  # overdue: flushed by this call or already by the thread
    assert (tmp_path / "lines.txt").read_text().startswith("first\n")
    writer.close()
    assert (tmp_path / "lines.txt").read_text() == "first\nsecond\n"


def test_garbage_collection_flushes(tmp_path):
    backend = LocalVisBackend(str(tmp_path), flush_interval=3600)
    backend.add_scalars({"loss": 1.0}, step=1)
    del backend
    gc.collect()
    assert read_lines(tmp_path / "scalars.json") == [{"loss": 1.0, "step": 1}]


def test_writer_refuses_writes_after_close(tmp_path):
    writer = BufferedLineWriter(tmp_path / "lines.txt")
    writer.close()
    writer.close()  # a second close is a no-op
    with pytest.raises(ValueError, match="write to a closed BufferedLineWriter"):
        writer.write("late\n")


def test_writer_flush_interval_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="flush_interval must be a positive number"):
        BufferedLineWriter(tmp_path / "lines.txt", flush_interval=-1)


def test_concurrent_threads_lose_and_mix_no_line(tmp_path):
    backend = LocalVisBackend(str(tmp_path), flush_interval=0.001)  # flushes all the time

    def log(thread: int) -> None:
        for step in range(500):
            backend.add_scalars({"thread": thread, "value": step * 0.5}, step=step)

    threads = [threading.Thread(target=log, args=(index,)) for index in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    backend.close()
    lines = read_lines(tmp_path / "scalars.json")
    for index in range(4):
        steps = [line["step"] for line in lines if line["thread"] == index]
        assert steps == list(range(500))  # each thread's lines complete and in order


def test_interpreter_exit_without_close_flushes(tmp_path):
    result = run_python(f"""
        from treadle.visual.backends import LocalVisBackend
        backend = LocalVisBackend({str(tmp_path)!r}, flush_interval=3600)
        for step in range(50):
            backend.add_scalars({{"loss": step * 0.5}}, step=step)
        # no close(): the interpreter exits with the lines still in memory
    """)
    assert result.returncode == 0, result.stderr
    lines = read_lines(tmp_path / "scalars.json")
    assert [line["step"] for line in lines] == list(range(50))


@pytest.mark.parametrize(
    "death",
    ["os._exit(3)", "os.kill(os.getpid(), signal.SIGKILL)"],
    ids=["os._exit", "SIGKILL"],
)
def test_a_crash_loses_nothing_older_than_the_flush_interval(tmp_path, death):
    result = run_python(f"""
        import os, signal, time
        from treadle.visual.backends import LocalVisBackend
        backend = LocalVisBackend({str(tmp_path)!r}, flush_interval=0.2)
        for step in range(20):
            backend.add_scalars({{"loss": step * 0.5}}, step=step)
        # Well past the interval, with no further call (a long validation, a hang): only the
        # background flusher can have written the lines before the process dies.
        time.sleep(1.0)
        {death}
    """)
    assert result.returncode != 0
    lines = read_lines(tmp_path / "scalars.json")
    assert [line["step"] for line in lines] == list(range(20))


def test_a_forked_child_does_not_write_the_parents_buffer(tmp_path):
    result = run_python(f"""
        import os, sys
        from treadle.visual.backends import LocalVisBackend
        backend = LocalVisBackend({str(tmp_path)!r}, flush_interval=3600)
        backend.add_scalars({{"who": 0}}, step=1)  # pending in the parent at the fork
        pid = os.fork()
        if pid == 0:
            backend.add_scalars({{"who": 1}}, step=2)
            sys.exit(0)  # a normal exit: the child's exit handlers flush its own buffer
        _, status = os.waitpid(pid, 0)
        backend.add_scalars({{"who": 0}}, step=3)
        backend.close()
        sys.exit(os.waitstatus_to_exitcode(status))
    """)
    assert result.returncode == 0, result.stderr
    lines = read_lines(tmp_path / "scalars.json")
    parent = [line["step"] for line in lines if line["who"] == 0]
    child = [line["step"] for line in lines if line["who"] == 1]
    assert (parent, child) == ([1, 3], [2])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_multiprocessing_child_loses_no_line(tmp_path):
    # DataLoader workers are multiprocessing children: they end with os._exit, which runs no
    # exit handler, so a line they buffered would never reach the file.
    result = run_python(f"""
        import multiprocessing, sys
        from treadle.visual.backends import LocalVisBackend
        backend = LocalVisBackend({str(tmp_path)!r}, flush_interval=3600)
        backend.add_scalars({{"who": 0}}, step=1)

        def worker(index):
            backend.add_scalars({{"who": 1}}, step=10 + index)
            backend.add_scalars({{"who": 1}}, step=20 + index, file_path="worker.json")

        context = multiprocessing.get_context("fork")
        workers = [context.Process(target=worker, args=(index,)) for index in range(2)]
        for process in workers:
            process.start()
        for process in workers:
            process.join()
        backend.close()
        sys.exit(max(process.exitcode for process in workers))
    """)
    assert result.returncode == 0, result.stderr
    lines = read_lines(tmp_path / "scalars.json")
    assert sorted(line["step"] for line in lines) == [1, 10, 11, 20, 21]
    assert sorted(line["step"] for line in read_lines(tmp_path / "worker.json")) == [20, 21]

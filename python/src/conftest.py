"""Shared helpers for the sluice Python tests (which import the installed package)."""

import os
import shutil
import threading
import time

import pytest

import sluice


def pytest_report_header(config):
    return "sluice %s from %s" % (sluice.__version__, os.path.dirname(sluice.__file__))


class Background:
    """Runs fn(*args) on a thread, keeping its result or exception."""

    def __init__(self, fn, *args, **kwargs):
        self._result = None
        self._exc = None
        self.started = threading.Event()

        def run():
            self.started.set()
            try:
                self._result = fn(*args, **kwargs)
            except BaseException as e:  # noqa: B036 - handed to the test
                self._exc = e

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def done(self):
        return not self.thread.is_alive()

    def join(self, timeout=10):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "background call still running after %ss" % timeout

    def result(self, timeout=10):
        """The call's return value; re-raises its exception."""
        self.join(timeout)
        if self._exc is not None:
            raise self._exc
        return self._result

    def exception(self, timeout=10):
        self.join(timeout)
        return self._exc


def wait_until(condition, timeout=10, what="condition"):
    """Polls `condition` (an observable state, not elapsed time) until it holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.001)


@pytest.fixture
def background():
    return Background


@pytest.fixture(autouse=True)
def _clean_queue_runners():
    yield
    sluice.train.clear_queue_runners()


@pytest.fixture
def mpirun():
    """The path of mpirun, for tests that launch ranks; skips where mpirun or sluice._mpi is missing."""
    path = shutil.which("mpirun")
    if path is None:
        pytest.skip("mpirun not found")
    try:
        from sluice import _mpi  # noqa: F401
    except ImportError:
        pytest.skip("sluice._mpi not built (no MPI where sluice was built)")
    return path

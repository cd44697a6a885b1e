"""The library's warnings go to Python's logging (logger "sluice"), not to stderr.

The extension sets the core log sink (sluice/core/logging.h) to one that
takes the GIL and calls ``logging.getLogger("sluice")``, from whatever
thread logs (a C++ runner thread reading a file included), so a handler
sees the warning and a level or a filter can silence it. Once the
interpreter is exiting, warnings go to stderr instead.
"""

import logging
import os
import subprocess
import sys

import pytest

from sluice import dtypes
from sluice import errors
from sluice import io
from sluice import queue as sq
from sluice import train

_PARTIAL = "are too few for a record header; treating them as the end of the file"


def _file_with_partial_header(tmp_path):
    path = str(tmp_path / "partial.tfrecord")
    with io.TFRecordWriter(path) as w:
        w.write(b"one")
    with open(path, "ab") as f:
        f.write(b"12345")  # fewer than the 12 bytes of a record header
    return path


def _sluice_warnings(caplog):
    return [r for r in caplog.records if r.name == "sluice" and r.levelno == logging.WARNING]


def test_partial_header_warning_reaches_a_python_logging_handler(tmp_path, caplog, capfd):
    path = _file_with_partial_header(tmp_path)
    with caplog.at_level(logging.WARNING, logger="sluice"):
        assert list(io.tf_record_iterator(path)) == [b"one"]
    warnings = _sluice_warnings(caplog)
    assert len(warnings) == 1
    assert warnings[0].getMessage() == "%s: 5 bytes after the last record at offset 19 %s" % (path, _PARTIAL)
    assert _PARTIAL not in capfd.readouterr().err


@pytest.mark.timeout(60)
def test_warning_logged_on_a_runner_thread_reaches_the_handler(tmp_path, caplog):
    path = _file_with_partial_header(tmp_path)
    fq = sq.FIFOQueue(1, [dtypes.string])
    fq.enqueue(path)
    fq.close()
    b = train.batch(train.read_producer(io.TFRecordReader(), fq), batch_size=1)
    with caplog.at_level(logging.WARNING, logger="sluice"):
        coord = train.Coordinator()
        threads = train.start_queue_runners(coord=coord)
        assert b.dequeue(timeout=10)[1].tolist() == [b"one"]
        with pytest.raises(errors.OutOfRangeError):
            b.dequeue(timeout=10)  # the runner thread has read to the end, past the partial header
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
    warnings = _sluice_warnings(caplog)
    assert len(warnings) == 1
    assert warnings[0].threadName != "MainThread"


def test_warning_can_be_filtered(tmp_path, caplog, capfd):
    path = _file_with_partial_header(tmp_path)
    logger = logging.getLogger("sluice")

    class DropPartialHeaders(logging.Filter):
        def filter(self, record):
            return _PARTIAL not in record.getMessage()

    drop = DropPartialHeaders()
    logger.addFilter(drop)
    try:
        with caplog.at_level(logging.WARNING, logger="sluice"):
            list(io.tf_record_iterator(path))
    finally:
        logger.removeFilter(drop)
    with caplog.at_level(logging.ERROR, logger="sluice"):
        list(io.tf_record_iterator(path))
    assert _sluice_warnings(caplog) == []
    assert _PARTIAL not in capfd.readouterr().err


@pytest.mark.timeout(60)
def test_warning_after_the_exit_hook_goes_to_stderr(tmp_path):
    # Registered before sluice is imported, the reading hook runs after
    # sluice's own exit hook, when no Python code may be called any more.
    path = _file_with_partial_header(tmp_path)
    script = "\n".join([
        "import atexit, logging",
        "atexit.register(lambda: print(len(list(sl.io.tf_record_iterator(%r)))))" % path,
        "import sluice as sl",
        "logging.basicConfig()",
        "print('exiting')",
    ])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(sq.__file__)) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=45)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert done.stdout == b"exiting\n1\n"
    assert done.stderr.decode() == "sluice: warning: %s: 5 bytes after the last record at offset 19 %s\n" % (
        path, _PARTIAL)

"""Helpers of the sluice.distribute tests: record files, and a function run on ranks joined in
this process (one thread per rank)."""

import threading

import sluice
from sluice import distribute


def write_records(tmp_path, sizes):
    """Files f<i>.tfrecord holding records b"f<i>-<j>" for j < sizes[i]; their paths."""
    files = []
    for i, n in enumerate(sizes):
        path = str(tmp_path / ("f%d.tfrecord" % i))
        with sluice.python_io.TFRecordWriter(path) as w:
            for j in range(n):
                w.write(b"f%d-%d" % (i, j))
        files.append(path)
    return files


def on_ranks(roles, fn, raise_errors=True, timeout=None):
    """fn(ctx) on one thread per rank; `roles`: the number of ranks, or one role per rank. The
    results; a rank's exception is raised (the first one) with `raise_errors`, else returned in
    its place. With `timeout`, fails if a rank is still waiting after that many seconds."""
    n = roles if isinstance(roles, int) else len(roles)
    contexts = distribute._thread_contexts(n) if isinstance(roles, int) else distribute._thread_contexts(n, roles)
    results, errors = [None] * n, []

    def run(r):
        try:
            results[r] = fn(contexts[r])
        except Exception as e:  # noqa: BLE001  (raised or returned below)
            errors.append(e)
            results[r] = e

    threads = [threading.Thread(target=run, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout)
        assert not t.is_alive(), "a rank is still waiting"
    if raise_errors and errors:
        raise errors[0]
    return results

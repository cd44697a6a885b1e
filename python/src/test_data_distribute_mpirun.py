"""sluice.distribute under a real ``mpirun -n 2`` (loopback only): init() finds MPI and makes a
communicator through sluice._mpi, and shard() reads every record once across the two ranks.
Skipped where mpirun or sluice._mpi (built only where MPI was found) is missing."""

import os
import subprocess
import sys


import sluice

SCRIPT = r"""
import sys
import sluice
ctx = sluice.distribute.init()
assert ctx.launcher == "mpi" and ctx.has_communicator, ctx
ds = sluice.distribute.shard(sys.argv[2:], policy="RECORD", uneven="allow", context=ctx)
mine = sorted(bytes(x).decode() for x in ds)
total = ctx.allreduce(len(mine))
line = "rank %d of %d: %d records, %d in all: %s" % (ctx.rank, ctx.world_size, len(mine), total, ",".join(mine))
# One file per rank: mpirun forwards the ranks' stdout in chunks that may interleave.
with open(sys.argv[1] + ".rank%d" % ctx.rank, "w") as f:
    f.write(line)
"""


def test_two_ranks_under_mpirun_read_every_record_once(tmp_path, mpirun):
    files = []
    for i, n in enumerate([5, 8]):
        path = str(tmp_path / ("f%d.tfrecord" % i))
        with sluice.python_io.TFRecordWriter(path) as w:
            for j in range(n):
                w.write(b"f%d-%d" % (i, j))
        files.append(path)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [mpirun, "-n", "2", "--oversubscribe", "--bind-to", "none", "--mca", "pml", "ob1", "--mca", "btl",
           "self,vader", "--mca", "oob_tcp_if_include", "lo", sys.executable, "-c", SCRIPT, str(tmp_path / "out")] + files
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = sorted((tmp_path / ("out.rank%d" % r)).read_text() for r in range(2))
    records = []
    for line in lines:
        assert "13 in all" in line
        records += line.rsplit(": ", 1)[1].split(",")
    assert sorted(records) == sorted("f%d-%d" % (i, j) for i, n in enumerate([5, 8]) for j in range(n))

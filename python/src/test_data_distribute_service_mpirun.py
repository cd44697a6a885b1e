"""Preprocessing ranks from Python under a real ``mpirun`` (loopback only): 1 trainer and 2
preprocessing ranks (SLUICE_ROLE per rank, MPMD), ``dataset.apply(sluice.distribute.distribute
("DATA"))``: the trainer reads every element once and then end of sequence. Skipped where mpirun
or sluice._mpi (built only where MPI was found) is missing."""

import os
import subprocess
import sys


SCRIPT = r"""
import sys
import sluice
ctx = sluice.distribute.init()
assert ctx.launcher == "mpi" and ctx.has_communicator, ctx
ds = sluice.data.Dataset.range(100).map(lambda x: x * 3).batch(7)
ds = ds.apply(sluice.distribute.distribute("DATA", context=ctx))
it = ds.make_one_shot_iterator()
got = []
while True:
    try:
        got += [int(x) for x in it.get_next()]
    except sluice.errors.OutOfRangeError:
        break
line = "rank %d %s: %d values, end of sequence: %s" % (ctx.rank, ctx.role, len(got), ",".join(map(str, got)))
# One file per rank: mpirun forwards the ranks' stdout in chunks that may interleave.
with open(sys.argv[1] + ".rank%d" % ctx.rank, "w") as f:
    f.write(line)
"""


def test_one_trainer_two_preprocessing_ranks_under_mpirun_every_element_once(tmp_path, mpirun):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    out = str(tmp_path / "out")
    program = [sys.executable, "-c", SCRIPT, out]
    cmd = [mpirun, "--oversubscribe", "--bind-to", "none", "--mca", "pml", "ob1", "--mca", "btl", "self,vader",
           "--mca", "oob_tcp_if_include", "lo",
           "-n", "1", "-x", "SLUICE_ROLE=train"] + program + [":", "-n", "2", "-x", "SLUICE_ROLE=preprocess"] + program
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = [(tmp_path / ("out.rank%d" % r)).read_text() for r in range(3)]
    assert lines[0].startswith("rank 0 train: 100 values, end of sequence")
    assert sorted(int(v) for v in lines[0].rsplit(": ", 1)[1].split(",")) == [3 * i for i in range(100)]
    for r in (1, 2):
        assert lines[r] == "rank %d preprocess: 0 values, end of sequence: " % r

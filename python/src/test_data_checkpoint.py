"""Iterator checkpoints from Python: iterator.save()/restore(), files written
atomically, sluice.train.Checkpoint / CheckpointManager / latest_checkpoint,
restores in a new process and after kill -9."""

import os
import random
import signal
import subprocess
import sys
import time

import pytest

import sluice
from sluice import data as sd
from sluice import train

# One pipeline with every threaded stage, built the same way here and in the
# subprocesses: a parallel interleave of Python-made datasets, a seeded
# shuffle, a parallel Python map, a prefetch, two epochs.
PIPELINE = """
from sluice import data as sd

def make(n=6, per=20):
    ds = sd.Dataset.range(n).interleave(lambda x: sd.Dataset.range(x * 100, x * 100 + per), cycle_length=3,
                                        block_length=2, num_parallel_calls=3)
    return ds.shuffle(16, seed=7).map(lambda x: x * 3, num_parallel_calls=2).prefetch(3).repeat(2)
"""
exec(PIPELINE)  # defines make()


def ints(it, limit=None):
    out = []
    for x in it:
        out.append(int(x))
        if limit is not None and len(out) == limit:
            break
    return out


def env():
    return dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(sluice.__file__)))


def test_save_and_restore_continue_the_uninterrupted_sequence_at_many_break_points():
    full = ints(iter(make()))
    assert len(full) == 240
    for k in (0, 1, 5, 39, 119, 120, 121, 200, 240):
        it = iter(make())
        got = ints(it, k) if k else []
        state = it.save()
        assert isinstance(state, bytes)
        it2 = iter(make())
        it2.restore(state)
        assert got + ints(it2) == full, k


def test_the_saved_iterator_goes_on_unchanged():
    full = ints(iter(make(3, 10)))
    it = iter(make(3, 10))
    got = []
    for _ in range(6):
        got += ints(it, 7)
        it.save()
    got += ints(it)
    assert got == full


def test_restore_on_an_iterator_that_has_run_starts_from_the_checkpoint():
    it = iter(sd.Dataset.range(20).map(lambda x: x, num_parallel_calls=2).prefetch(2))
    ints(it, 5)
    state = it.save()
    ints(it, 7)
    it.restore(state)
    assert ints(it) == list(range(5, 20))


def test_restore_in_a_new_process(tmp_path):
    full = ints(iter(make()))
    it = iter(make())
    first = ints(it, 50)
    path = tmp_path / "it.ckpt"
    assert it.save(path) == path.read_bytes()
    script = PIPELINE + ("import sys\n"
                         "it = iter(make())\n"
                         "it.restore(sys.argv[1])\n"
                         "print(' '.join(str(int(x)) for x in it))\n")
    r = subprocess.run([sys.executable, "-c", script, str(path)], env=env(), capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    assert first + [int(x) for x in r.stdout.split()] == full


def test_saving_to_a_path_replaces_it_whole_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "it.ckpt"
    path.write_bytes(b"an older checkpoint")
    it = iter(sd.Dataset.range(10))
    ints(it, 3)
    it.save(str(path))
    assert os.listdir(tmp_path) == ["it.ckpt"]
    it2 = iter(sd.Dataset.range(10))
    it2.restore(str(path))
    assert ints(it2) == list(range(3, 10))


def test_checkpoint_save_numbers_files_and_restores_the_counter(tmp_path):
    it = iter(sd.Dataset.range(20).map(lambda x: x + 1, num_parallel_calls=2))
    ckpt = train.Checkpoint(iterator=it)
    ints(it, 4)
    p1 = ckpt.save(str(tmp_path / "ckpt"))
    ints(it, 3)
    p2 = ckpt.save(str(tmp_path / "ckpt"))
    assert (p1, p2) == (str(tmp_path / "ckpt-1"), str(tmp_path / "ckpt-2"))
    assert ckpt.save_counter == 2
    assert train.latest_checkpoint(str(tmp_path)) == p2
    it2 = iter(sd.Dataset.range(20).map(lambda x: x + 1, num_parallel_calls=2))
    ckpt2 = train.Checkpoint(iterator=it2)
    ckpt2.restore(p1).assert_consumed()
    assert ckpt2.save_counter == 1
    assert ints(it2, 2) == [5, 6]
    ckpt2.restore(p2)
    assert ints(it2) == list(range(8, 21))


def test_checkpoint_write_and_read_leave_the_counter_and_latest_alone(tmp_path):
    it = iter(sd.Dataset.range(10).prefetch(2))
    ckpt = train.Checkpoint(iterator=it)
    ints(it, 6)
    path = ckpt.write(str(tmp_path / "one"))
    assert path == str(tmp_path / "one") and ckpt.save_counter == 0
    assert train.latest_checkpoint(str(tmp_path)) is None
    it2 = iter(sd.Dataset.range(10).prefetch(2))
    train.Checkpoint(iterator=it2).read(path)
    assert ints(it2) == [6, 7, 8, 9]


def test_restore_of_none_does_nothing_as_on_a_first_run(tmp_path):
    it = iter(sd.Dataset.range(3))
    manager = train.CheckpointManager(train.Checkpoint(iterator=it), str(tmp_path), max_to_keep=1)
    assert manager.latest_checkpoint is None
    manager.checkpoint.restore(manager.latest_checkpoint)
    assert ints(it) == [0, 1, 2]


def test_checkpoint_manager_keeps_the_newest_and_finds_them_again(tmp_path):
    it = iter(sd.Dataset.range(100))
    ckpt = train.Checkpoint(iterator=it)
    manager = train.CheckpointManager(ckpt, str(tmp_path / "run"), max_to_keep=2)
    paths = []
    for _ in range(4):
        ints(it, 10)
        paths.append(manager.save())
    assert paths == [str(tmp_path / "run" / ("ckpt-%d" % i)) for i in range(1, 5)]
    assert manager.checkpoints == paths[2:]
    assert sorted(os.listdir(tmp_path / "run")) == ["checkpoint", "ckpt-3", "ckpt-4"]
    assert manager.latest_checkpoint == paths[3] == train.latest_checkpoint(str(tmp_path / "run"))
    again = train.CheckpointManager(train.Checkpoint(iterator=iter(sd.Dataset.range(100))), str(tmp_path / "run"),
                                    max_to_keep=2)
    assert again.checkpoints == paths[2:]
    assert again.restore_or_initialize() == paths[3]
    assert ints(again.checkpoint.iterator, 1) == [40]


def test_a_python_generator_cannot_be_saved_and_the_iterator_goes_on():
    ds = sd.Dataset.from_generator(lambda: iter(range(5)), output_types=sluice.int64, output_shapes=())
    it = iter(ds.prefetch(1))
    assert ints(it, 2) == [0, 1]
    with pytest.raises(sluice.errors.UnimplementedError, match="FromGenerator"):
        it.save()
    assert ints(it) == [2, 3, 4]


def test_bad_checkpoints_raise_sluice_errors(tmp_path):
    it = iter(sd.Dataset.range(5))
    state = it.save()
    with pytest.raises(sluice.errors.DataLossError):
        it.restore(state[:-1])
    with pytest.raises(sluice.errors.InvalidArgumentError, match="Range"):
        iter(sd.Dataset.range(5).map(lambda x: x, num_parallel_calls=2)).restore(state)
    with pytest.raises(sluice.errors.NotFoundError):
        train.Checkpoint(iterator=it).read(str(tmp_path / "missing"))
    (tmp_path / "junk").write_bytes(b"junk")
    with pytest.raises(sluice.errors.DataLossError):
        train.Checkpoint(iterator=it).read(str(tmp_path / "junk"))
    with pytest.raises(ValueError):
        train.Checkpoint(iterator=42)


# The kill -9 child: iterates, logs "<position> <value>" per element, and
# checkpoints every 5 elements (named by the position it resumes at); started
# again, it resumes from the latest checkpoint.
CHILD = PIPELINE + """
import sys, time
from sluice import train
directory, log = sys.argv[1], sys.argv[2]
it = iter(make())
ckpt = train.Checkpoint(iterator=it)
manager = train.CheckpointManager(ckpt, directory, max_to_keep=2)
start = 0
if manager.latest_checkpoint:
    ckpt.restore(manager.latest_checkpoint)
    start = int(manager.latest_checkpoint.rsplit("-", 1)[1])
print(start, flush=True)
with open(log, "a") as f:
    n = start
    for x in it:
        f.write("%d %d\\n" % (n, int(x)))
        f.flush()
        n += 1
        if n % 5 == 0:
            manager.save(checkpoint_number=n)
        time.sleep(0.002)
"""


def log_lines(path):
    text = path.read_text() if path.exists() else ""
    lines = text.split("\n")[:-1]  # a line cut by the kill has no newline
    return [tuple(int(v) for v in line.split()) for line in lines]


def test_kill_9_then_restart_resumes_from_the_last_checkpoint(tmp_path):
    full = ints(iter(make()))
    directory, log1, log2 = tmp_path / "ckpt", tmp_path / "run1.log", tmp_path / "run2.log"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(directory), str(log1)], env=env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    kill_after = random.Random(os.getpid()).randint(12, 150)
    deadline = time.monotonic() + 120
    while len(log_lines(log1)) < kill_after and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert child.poll() is None, child.stderr.read().decode()[-2000:]
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    first = log_lines(log1)
    assert [v for _, v in first] == full[:len(first)]

    r = subprocess.run([sys.executable, "-c", CHILD, str(directory), str(log2)], env=env(), capture_output=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr.decode()[-2000:]
    start = int(r.stdout.split()[0])
    assert 0 < start <= len(first) and start % 5 == 0
    second = log_lines(log2)
    assert [n for n, _ in second] == list(range(start, len(full)))
    assert [v for _, v in second] == full[start:]
    assert [v for _, v in first[:start]] + [v for _, v in second] == full

"""sluice.random.set_seed (tf.random.set_seed) and TF 1's set_random_seed make unseeded data ops
reproducible: op seeds come from (global seed, a per-op count), as TF's random_seed.get_seed."""

import os
import subprocess
import sys

import numpy as np
import pytest

import sluice
from sluice import data as sd


@pytest.fixture(autouse=True)
def no_global_seed():
    sluice.random.set_seed(None)
    yield
    sluice.random.set_seed(None)


def order(ds):
    return [int(x) for x in ds]


def run(code):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


SHUFFLE = "print([int(x) for x in sl.data.Dataset.range(100).shuffle(100)])"


def test_global_seed_makes_unseeded_shuffle_the_same_in_every_run():
    code = "import sluice as sl\nsl.random.set_seed(1)\n" + SHUFFLE
    first = run(code)
    assert run(code) == first
    assert first != run(code.replace("set_seed(1)", "set_seed(2)"))


def test_without_a_seed_runs_differ():
    code = "import sluice as sl\n" + SHUFFLE
    assert run(code) != run(code)


def test_tf1_set_random_seed_makes_unseeded_shuffle_the_same_in_every_run():
    code = ("import sluice as sl\nimport sluice.compat.v1 as tf\ntf.set_random_seed(1)\n"
            "print([int(x) for x in tf.data.Dataset.range(100).shuffle(100)])")
    first = run(code)
    assert run(code) == first
    assert first != run("import sluice as sl\n" + SHUFFLE)


def test_set_seed_restarts_the_sequence_of_op_seeds():
    sluice.random.set_seed(7)
    a, b = order(sd.Dataset.range(50).shuffle(50)), order(sd.Dataset.range(50).shuffle(50))
    assert a != b  # each op draws its own seed
    sluice.random.set_seed(7)
    assert order(sd.Dataset.range(50).shuffle(50)) == a
    assert order(sd.Dataset.range(50).shuffle(50)) == b


def test_get_seed_follows_tf_rules():
    assert sluice.random.get_seed(None) == (None, None)
    assert sluice.random.get_seed(5) == (87654321, 5)
    sluice.random.set_seed(0)
    assert sluice.random.get_seed(0) == (0, 2**31 - 1)  # (0, 0) would read as random
    sluice.random.set_seed(3)
    assert sluice.random.get_seed(5) == (3, 5)


def test_list_files_sampling_and_random_ops_follow_the_global_seed(tmp_path):
    for i in range(20):
        (tmp_path / ("f%02d" % i)).write_bytes(b"")
    pattern = str(tmp_path / "f*")

    def draw():
        files = [bytes(f) for f in sd.Dataset.list_files(pattern)]
        sampled = order(sd.Dataset.sample_from_datasets([sd.Dataset.range(0, 30), sd.Dataset.range(100, 130)]))
        images = sd.Dataset.from_tensors(np.arange(64, dtype=np.uint8).reshape(8, 8, 1)).repeat(8)
        cropped = [x.tobytes() for x in images.map(sd.ops.random_crop([3, 3, 1]))]
        return files, sampled, cropped

    sluice.random.set_seed(11)
    first = draw()
    sluice.random.set_seed(11)
    assert draw() == first
    sluice.random.set_seed(None)
    assert draw() != first

"""sluice.distribute against TensorFlow 2.21: TF's policy names and values, and the DATA policy
giving each rank what ``tf.data.TFRecordDataset(files).shard(n, i)`` gives it, on files written by
TensorFlow. Skipped without TF."""

import os
import threading

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")

from sluice import distribute  # noqa: E402


def test_policy_names_are_tfs():
    tf_auto = tf.data.experimental.AutoShardPolicy
    for name in ("OFF", "AUTO", "FILE", "DATA", "HINT"):
        assert getattr(distribute.AutoShardPolicy, name) == name == tf_auto[name].name
    assert tf.data.experimental.service.ShardingPolicy.DYNAMIC.name == distribute.ShardingPolicy.DYNAMIC


@pytest.mark.parametrize("ranks", [2, 3])
def test_data_policy_matches_tf_shard(tmp_path, ranks):
    files = []
    for i, n in enumerate([7, 0, 5, 11]):
        path = str(tmp_path / ("f%d.tfrecord" % i))
        with tf.io.TFRecordWriter(path) as w:
            for j in range(n):
                w.write(b"r%d-%d" % (i, j))
        files.append(path)
    contexts = distribute._thread_contexts(ranks)
    got = [None] * ranks

    def run(r):
        ds = distribute.shard(files, policy="DATA", seed=1, uneven="allow", context=contexts[r])
        got[r] = [bytes(x) for x in ds]

    threads = [threading.Thread(target=run, args=(r,)) for r in range(ranks)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in range(ranks):
        assert got[r] == [x.numpy() for x in tf.data.TFRecordDataset(files).shard(ranks, r)]

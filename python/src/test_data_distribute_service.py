"""sluice.distribute's preprocessing ranks from Python (serve / from_service / distribute) over
ranks joined in this process (threads): every element once, the trainers' end of sequence, the
roles, and a worker's error raised on a trainer. The mpirun test is
test_data_distribute_service_mpirun.py."""

import _thread
import threading
import time

import numpy as np
import pytest

import sluice
from sluice import distribute

from _distribute_util import on_ranks


def test_service_ranks_come_from_the_roles():
    roles = ["train", "preprocess", "train", "preprocess"]
    results = on_ranks(roles, distribute.service_ranks, timeout=60)
    assert results == [([1, 3], [0, 2])] * 4


def test_serve_and_from_service_deliver_every_element_once():
    def rank(ctx):
        ds = sluice.data.Dataset.range(40).map(lambda x: (x, x * 2))
        if ctx.role == "preprocess":
            workers, trainers = distribute.service_ranks(ctx)  # collective, as from_service's own
            distribute.serve(ds.shard(len(workers), workers.index(ctx.rank)), context=ctx, workers=workers,
                             trainers=trainers, max_outstanding_requests=2)
            return []
        got = distribute.from_service(ds.element_spec, context=ctx, max_outstanding_requests=2)
        return [(int(a), int(b)) for a, b in got]

    results = on_ranks(["preprocess", "train", "preprocess", "train"], rank, timeout=60)
    seen = sorted(results[1] + results[3])
    assert seen == [(i, 2 * i) for i in range(40)]
    assert results[1] and results[3]  # both trainers got elements


def test_distribute_data_mode_shards_over_workers_and_workers_get_an_empty_dataset():
    def rank(ctx):
        ds = sluice.data.Dataset.from_tensor_slices({"x": np.arange(30, dtype=np.int32)}).batch(4)
        ds = ds.apply(distribute.distribute("DATA", context=ctx))
        return [e["x"].tolist() for e in ds]

    results = on_ranks(["train", "preprocess", "preprocess"], rank, timeout=60)
    assert results[1] == [] and results[2] == []
    batches = sorted(results[0])
    assert sorted(x for b in batches for x in b) == list(range(30))
    assert len(batches) == 8  # each worker batched its own shard: 15 -> 4 batches each


def test_distribute_parallel_epochs_serves_the_whole_dataset_from_each_worker():
    def rank(ctx):
        ds = sluice.data.Dataset.range(5).apply(distribute.distribute("parallel_epochs", context=ctx))
        return sorted(int(x) for x in ds)

    results = on_ranks(["train", "preprocess", "preprocess"], rank, timeout=60)
    assert results[0] == sorted(list(range(5)) * 2)


def test_a_workers_error_is_raised_on_the_trainer():
    def rank(ctx):
        ds = sluice.data.Dataset.from_tensor_slices(np.array([1.0, 0.0, 2.0])).map(
            lambda x: np.float64(1.0) / x if x != 0 else _raise())
        if ctx.role == "preprocess":
            distribute.serve(ds, context=ctx)
            return None
        return [float(x) for x in distribute.from_service(ds, context=ctx)]

    with pytest.raises(sluice.errors.OpError, match="zero divisor"):
        on_ranks(["train", "preprocess"], rank, timeout=60)


def _raise():
    raise sluice.errors.InvalidArgumentError(None, None, "zero divisor")


def test_from_service_without_a_communicator_raises_value_error(monkeypatch):
    for v in ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "WORLD_SIZE", "SLURM_NTASKS", "SLUICE_ROLE"):
        monkeypatch.delenv(v, raising=False)
    with pytest.raises(ValueError, match="communicator"):
        distribute.from_service(sluice.data.Dataset.range(3).element_spec)


def test_serve_on_a_trainer_rank_raises_invalid_argument():
    def rank(ctx):
        distribute.serve(sluice.data.Dataset.range(3), context=ctx, workers=[1], trainers=[0])

    contexts = distribute._thread_contexts(2)
    with pytest.raises(sluice.errors.InvalidArgumentError, match="not one of the service's workers"):
        rank(contexts[0])


def test_ctrl_c_interrupts_a_serve_waiting_for_requests():
    contexts = distribute._thread_contexts(2)  # rank 0, the trainer, never asks
    timer = threading.Timer(0.2, _thread.interrupt_main)
    timer.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            distribute.serve(sluice.data.Dataset.range(3), context=contexts[1], workers=[1], trainers=[0])
    finally:
        timer.cancel()
    assert time.monotonic() - start < 10

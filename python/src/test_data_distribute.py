"""sluice.distribute: init() without a launcher, and shard() over ranks joined in this process
(threads), checking exactly-once per epoch, resume at another world size and the consistency
check. The mpirun tests are in tests/distribute (CTest label mpi)."""

import pytest

import sluice
from sluice import distribute

from _distribute_util import on_ranks, write_records



def test_init_without_a_launcher_is_one_process(monkeypatch):
    for v in ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "WORLD_SIZE", "SLURM_NTASKS", "SLUICE_ROLE"):
        monkeypatch.delenv(v, raising=False)
    ctx = distribute.init()
    assert (ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.launcher, ctx.role) == (1, 0, "single", "train")
    assert not ctx.has_communicator


def test_init_reads_torchrun_variables(monkeypatch):
    for v in ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"):
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("LOCAL_RANK", "1")
    ctx = distribute.init()
    assert (ctx.world_size, ctx.rank, ctx.local_rank, ctx.launcher) == (4, 3, 1, "torchrun")


def test_bad_launcher_variable_raises_invalid_argument(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "two")
    with pytest.raises(sluice.errors.InvalidArgumentError, match="WORLD_SIZE"):
        distribute.init()


@pytest.mark.parametrize("policy", ["RECORD", "FILE", "DATA", "DYNAMIC"])
def test_every_record_once_per_epoch_across_ranks(tmp_path, policy):
    files = write_records(tmp_path, [6, 2, 9, 4])  # 21 records

    def rank(ctx):
        ds = distribute.shard(files, policy=policy, seed=3, uneven="allow", split_records=2, context=ctx)
        epochs = [[bytes(x) for x in ds] for _ in range(2)]
        ctx.barrier()  # DYNAMIC: rank 0's dispatcher lives as long as its dataset
        return epochs

    results = on_ranks(3, rank)
    for e in range(2):
        seen = sorted(r for ranks in results for r in ranks[e])
        assert seen == sorted(b"f%d-%d" % (i, j) for i, n in enumerate([6, 2, 9, 4]) for j in range(n))


def test_pad_gives_every_rank_the_same_count(tmp_path):
    files = write_records(tmp_path, [10])
    results = on_ranks(4, lambda ctx: len(list(distribute.shard(files, policy="RECORD", seed=1, context=ctx))))
    assert results == [3, 3, 3, 3]


@pytest.mark.parametrize("policy", ["RECORD", "FILE", "DYNAMIC"])
def test_resume_at_another_world_size_reads_the_rest_once(tmp_path, policy):
    files = write_records(tmp_path, [17, 8])

    def first(ctx):
        it = iter(distribute.shard(files, policy=policy, seed=9, uneven="allow", split_records=3, context=ctx))
        got = [bytes(next(it)) for _ in range(4)]
        ctx.barrier()  # a synchronous step; DYNAMIC asks rank 0, whose dataset must live
        state = it.state
        ctx.barrier()
        return got, state

    before = on_ranks(2, first)
    state = before[0][1]
    assert all(s == state for _, s in before)

    def after_rank(ctx):
        ds = distribute.shard(files, policy=policy, seed=9, uneven="allow", split_records=3, resume=state,
                              context=ctx)
        got = [bytes(x) for x in ds]
        ctx.barrier()  # DYNAMIC: rank 0's dataset lives until every rank is done
        return got

    after = on_ranks(3, after_rank)
    seen = [r for got, _ in before for r in got] + [r for rank in after for r in rank]
    assert len(seen) == 25 and len(set(seen)) == 25


def test_dynamic_state_off_a_synchronous_step_raises_failed_precondition(tmp_path):
    files = write_records(tmp_path, [12])

    def rank(ctx):
        it = iter(distribute.shard(files, policy="DYNAMIC", seed=1, split_records=2, context=ctx))
        result = None
        if ctx.rank == 1:
            for _ in range(3):
                next(it)
            try:
                result = it.state
            except sluice.errors.FailedPreconditionError as e:
                result = e
        ctx.barrier()
        return result

    result = on_ranks(2, rank)[1]
    assert isinstance(result, sluice.errors.FailedPreconditionError)
    assert "synchronous step" in str(result)


def test_different_file_lists_fail_naming_the_rank(tmp_path):
    files = write_records(tmp_path, [3, 3])

    def rank(ctx):
        mine = files if ctx.rank != 1 else files[:1]
        return distribute.shard(mine, seed=1, context=ctx)

    results = on_ranks(2, rank, raise_errors=False)
    for r in results:
        assert isinstance(r, sluice.errors.FailedPreconditionError)
        assert "rank(s) 1 differ from rank 0" in str(r)


def test_sharded_dataset_chains_with_map_and_batch(tmp_path):
    files = write_records(tmp_path, [8])
    ds = distribute.shard(files, policy="RECORD", seed=2, context=distribute._thread_contexts(1)[0])
    batches = list(ds.map(lambda x: x).batch(3))
    assert [len(b) for b in batches] == [3, 3, 2]

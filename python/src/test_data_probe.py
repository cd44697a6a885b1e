"""Building a sluice.data pipeline with a Python function: the probe that learns the function's
output consumes nothing, reads little, and its spec has no dimension the probe happened to see."""

import os
import threading
import time

import numpy as np
import pytest

import sluice as sl
from sluice import errors

from _distribute_util import on_ranks, write_records

D = sl.data


def shared_generator(n=10):
    """A from_generator source whose callable returns the same iterator object every time."""
    src = iter(range(n))
    return D.Dataset.from_generator(lambda: src, output_signature=D.TensorSpec([], sl.int64))


def values(ds):
    return [np.asarray(x).tolist() for x in ds]


# -- nothing lost

def test_a_probe_behind_batch_takes_nothing_from_a_shared_generator():
    assert values(shared_generator().batch(4).map(lambda x: x)) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_a_probe_behind_shuffle_takes_nothing_from_a_shared_generator():
    got = values(shared_generator().shuffle(4, seed=1).map(lambda x: x))
    assert got == values(D.Dataset.range(10).shuffle(4, seed=1))


@pytest.mark.parametrize("build", [
    lambda ds: ds.flat_map(lambda x: D.Dataset.from_tensors(x)),
    lambda ds: ds.interleave(lambda x: D.Dataset.from_tensors(x), cycle_length=2, num_parallel_calls=2),
    lambda ds: ds.scan(np.int64(0), lambda s, x: (s + x, x)),
    lambda ds: ds.take_while(lambda x: x < 100),
    lambda ds: ds.window(3).flat_map(lambda w: w),
], ids=["flat_map", "interleave", "scan", "take_while", "window_flat_map"])
def test_function_transformations_take_nothing_from_a_shared_generator(build):
    assert values(build(shared_generator())) == list(range(10))


def test_probes_built_while_a_pass_reads_the_same_generator_take_nothing_from_it():
    ds = shared_generator()
    it = iter(ds.map(lambda x: x))
    got = [int(next(it)) for _ in range(3)]
    ds.map(lambda x: x + 1)  # its probe pulls element 3 from the iterator the pass is reading
    ds.batch(2).map(lambda x: x)  # and this one element 4 as well
    got += [int(x) for x in it]
    assert got == list(range(10))


def test_a_probe_of_a_fresh_generator_per_call_keeps_nothing_alive():
    made = []

    def gen():
        made.append(1)
        yield from range(5)
    ds = D.Dataset.from_generator(gen, output_signature=D.TensorSpec([], sl.int64))
    mapped = ds.map(lambda x: x * 2)
    assert values(mapped) == [0, 2, 4, 6, 8]
    assert len(made) == 2  # the probe's generator and the pass's
    assert values(mapped) == [0, 2, 4, 6, 8]


def test_a_probe_of_a_queue_source_dequeues_nothing():
    q = sl.queue.FIFOQueue(10, [sl.int64], shapes=[[]])
    q.enqueue_many([np.arange(6, dtype=np.int64)])
    q.close()
    ds = D.experimental.from_queue(q).shuffle(3, seed=2).map(lambda x: x + 1)
    assert sorted(values(ds)) == [1, 2, 3, 4, 5, 6]


# -- cheap

def test_a_probe_does_not_fill_a_shuffle_buffer():
    calls = []

    def slow(x):
        calls.append(int(x))
        time.sleep(0.001)
        return x
    D.Dataset.range(10**6).map(slow).shuffle(2000).map(lambda x: x)
    assert len(calls) <= 3  # one probe per map: a handful, not the 2001 a filled buffer needs
    assert calls[0] == 0


def test_a_probe_passes_through_prefetch_cache_repeat_take_and_shard():
    calls = []
    ds = (D.Dataset.range(1000).map(lambda x: calls.append(int(x)) or x).cache().prefetch(8).repeat(2)
          .shard(3, 2).take(5).with_options(D.Options()))
    calls.clear()
    ds.map(lambda x: x)
    assert calls == [0]


def test_a_probe_still_filters_and_skips():
    seen = []
    calls = []
    ds = D.Dataset.range(10).map(lambda x: calls.append(int(x)) or x).filter(lambda x: x >= 3).skip(1)
    calls.clear()
    ds.map(lambda x: seen.append(int(x)) or x)
    assert seen == [4]
    assert calls == [0, 1, 2, 3, 4]


def test_skip_keeps_a_header_from_the_probe():
    ds = D.Dataset.from_tensor_slices([b"count", b"1", b"2"]).skip(1).map(lambda s: np.int64(int(s)))
    assert values(ds) == [1, 2]


def test_a_probe_runs_parallel_stages_on_the_callers_thread():
    threads = []
    ds = D.Dataset.range(100).map(lambda x: threads.append(threading.get_ident()) or x, num_parallel_calls=4)
    ds = ds.prefetch(4).interleave(lambda x: D.Dataset.from_tensors(x), cycle_length=2, num_parallel_calls=2)
    threads.clear()
    ds.map(lambda x: x)
    assert threads == [threading.get_ident()]


def test_a_probe_writes_no_cache_file(tmp_path):
    path = tmp_path / "cache"
    ds = D.Dataset.range(4).cache(str(path)).map(lambda x: x * 2)
    assert os.listdir(tmp_path) == []
    assert values(ds) == [0, 2, 4, 6]
    assert path.exists()


# -- shapes

def test_a_python_map_reports_its_output_dimensions_unknown():
    ds = D.Dataset.range(1, 5).map(lambda x: np.arange(x))
    assert ds.element_spec == D.TensorSpec([None], sl.int64)
    assert values(ds) == [[0], [0, 1], [0, 1, 2], [0, 1, 2, 3]]


def test_elementwise_arithmetic_of_static_inputs_keeps_their_static_dimensions():
    ds = D.Dataset.from_tensor_slices((np.ones((4, 3), np.float32), np.arange(4)))
    assert ds.map(lambda x, y: (x * 2.0 - 1, y + 1)).element_spec == (
        D.TensorSpec([3], sl.float32), D.TensorSpec([], sl.int64))
    assert ds.map(lambda x, y: x).element_spec == D.TensorSpec([3], sl.float32)
    assert ds.map(lambda x, y: x.astype(np.int32)).element_spec == D.TensorSpec([3], sl.int32)
    # Indexing, plain arrays and values of the element: nothing known.
    assert ds.map(lambda x, y: x[:2]).element_spec == D.TensorSpec([None], sl.float32)
    assert ds.map(lambda x, y: x + np.ones(3, np.float32)).element_spec == D.TensorSpec([None], sl.float32)
    assert ds.map(lambda x, y: np.zeros(y + 1) * x[0]).element_spec == D.TensorSpec([None], sl.float64)


def test_padded_batch_of_a_python_map_pads_to_each_batchs_longest():
    ds = D.Dataset.range(3).map(lambda x: np.full([x], x)).padded_batch(2)
    assert ds.element_spec == D.TensorSpec([None, None], sl.int64)
    assert values(ds) == [[[0], [1]], [[2, 2]]]


def test_bucket_by_sequence_length_of_a_python_map_pads_each_bucket():
    ds = D.Dataset.range(1, 5).map(lambda x: np.arange(x)).bucket_by_sequence_length(len, [3], [2, 2])
    assert values(ds) == [[[0, 0], [0, 1]], [[0, 1, 2, 0], [0, 1, 2, 3]]]


def test_batch_with_drop_remainder_keeps_a_static_batch_dimension():
    ds = D.Dataset.range(1, 8).map(lambda x: np.arange(x)[:1]).batch(3, drop_remainder=True)
    assert ds.element_spec == D.TensorSpec([3, None], sl.int64)
    assert values(ds) == [[[0], [0], [0]], [[0], [0], [0]]]


def test_a_fused_parallel_map_and_batch_of_a_python_map_still_batches():
    ds = D.Dataset.range(6).map(lambda x: np.arange(3) + x, num_parallel_calls=2).batch(4)
    assert ds.element_spec == D.TensorSpec([None, None], sl.int64)
    assert values(ds) == [[[i, i + 1, i + 2] for i in range(4)], [[4, 5, 6], [5, 6, 7]]]


def test_replace_gives_zeros_shaped_as_the_probe_saw_the_output():
    def f(x):
        if x == 2:
            raise ValueError("bad element")
        return np.full([3], x, np.float32)
    ds = D.Dataset.range(4).map(f, error_policy="replace").batch(4)
    assert values(ds) == [[[0, 0, 0], [1, 1, 1], [0, 0, 0], [3, 3, 3]]]


def test_interleave_and_scan_of_python_functions_report_unknown_dimensions():
    inter = D.Dataset.range(1, 4).interleave(lambda x: D.Dataset.from_tensors(np.arange(x)), cycle_length=1)
    assert inter.element_spec == D.TensorSpec([None], sl.int64)
    assert values(inter) == [[0], [0, 1], [0, 1, 2]]
    scanned = D.Dataset.range(1, 4).scan(np.int64(0), lambda s, x: (s + 1, np.arange(x)))
    assert scanned.element_spec == D.TensorSpec([None], sl.int64)
    assert values(scanned) == [[0], [0, 1], [0, 1, 2]]


def test_native_ops_keep_their_static_specs():
    ds = D.Dataset.from_tensor_slices(np.zeros((2, 4, 4, 3), np.uint8)).map(D.ops.resize([2, 2]))
    assert ds.element_spec.shape == [2, 2, 3]


# -- output_signature

def test_output_signature_skips_the_probe_and_gives_the_spec():
    calls = []
    ds = D.Dataset.range(3).map(lambda x: calls.append(1) or np.full([2], x, np.float32),
                                output_signature=D.TensorSpec([2], sl.float32))
    assert calls == []
    assert ds.element_spec == D.TensorSpec([2], sl.float32)
    assert values(ds) == [[0, 0], [1, 1], [2, 2]]


def test_output_signature_of_a_structure():
    sig = {"a": D.TensorSpec([], sl.int64), "b": (D.TensorSpec([None], sl.float32), D.TensorSpec([], sl.string))}
    ds = D.Dataset.range(2).map(lambda x: {"a": x, "b": (np.zeros(x, np.float32), b"s")}, output_signature=sig)
    assert ds.element_spec == sig
    got = list(ds)
    assert got[1]["a"] == 1 and got[1]["b"][0].tolist() == [0.0] and got[1]["b"][1] == b"s"


def test_a_result_against_the_output_signature_is_invalid_argument():
    ds = D.Dataset.range(3).map(lambda x: np.zeros(x, np.float32), output_signature=D.TensorSpec([1], sl.float32))
    it = iter(ds)
    with pytest.raises(errors.InvalidArgumentError, match="output_signature"):
        next(it)


def test_output_signature_must_hold_tensor_specs():
    with pytest.raises(TypeError, match="TensorSpec"):
        D.Dataset.range(3).map(lambda x: x, output_signature=[3])


# -- distributed sources: a probe takes no epoch, no split and no element

@pytest.mark.parametrize("policy", ["RECORD", "DYNAMIC"])
def test_a_probe_of_a_shard_takes_no_epoch_and_no_split(tmp_path, policy):
    from sluice import distribute
    files = write_records(tmp_path, [6, 2, 9, 4])

    def shard():
        return distribute.shard(files, policy=policy, seed=3, split_records=2,
                                context=distribute._thread_contexts(1)[0])
    expected = [bytes(r) for r in shard()]  # epoch 0's order
    got = [bytes(r) for b in shard().map(lambda x: x).batch(2).map(lambda x: x) for r in b]
    assert got == expected


def test_a_probe_of_a_resumed_shard_keeps_the_resumed_epoch(tmp_path):
    from sluice import distribute
    files = write_records(tmp_path, [17, 8])
    ctx = distribute._thread_contexts(1)[0]
    it = iter(distribute.shard(files, policy="RECORD", seed=9, context=ctx))
    first = [bytes(next(it)) for _ in range(5)]
    state = it.state
    rest = [bytes(x) for x in distribute.shard(files, policy="RECORD", seed=9, resume=state,
                                               context=ctx).map(lambda x: x)]
    assert len(rest) == 20 and sorted(first + rest) == sorted(b"f%d-%d" % (i, j) for i, n in enumerate([17, 8])
                                                               for j in range(n))


def test_a_probe_of_a_service_stream_takes_neither_its_pass_nor_an_element():
    from sluice import distribute

    def rank(ctx):
        ds = D.Dataset.range(20)
        if ctx.role == "preprocess":
            workers, trainers = distribute.service_ranks(ctx)
            distribute.serve(ds, context=ctx, workers=workers, trainers=trainers)
            return []
        stream = distribute.from_service(ds.element_spec, context=ctx)
        return [int(x) for x in stream.map(lambda x: x + 100).shuffle(4).map(lambda x: x - 100)]

    contexts = distribute._thread_contexts(2, ["preprocess", "train"])
    results = [None, None]

    def run(r):
        try:
            results[r] = rank(contexts[r])
        except Exception as e:  # noqa: BLE001  (checked below)
            results[r] = e
    threads = [threading.Thread(target=run, args=(r,)) for r in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive(), "a rank is still waiting"
    assert sorted(results[1]) == list(range(20))


def test_a_probe_takes_no_epoch_from_a_global_shuffle(tmp_path):
    files = write_records(tmp_path, [7, 5])

    def shuffled():
        return D.Dataset.from_record_files(files, index="no_save").shuffle_globally(seed=4)
    expected = [bytes(r) for r in shuffled()]  # epoch 0's order
    assert [bytes(r) for r in shuffled().map(lambda x: x)] == expected

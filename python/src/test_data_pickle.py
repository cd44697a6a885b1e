"""Pickling sluice.data datasets: rebuilt from their recipe in another process (spawn, torch workers)."""

import copy
import multiprocessing
import pickle

import numpy as np
import pytest

import sluice
from sluice import data as sd
from sluice import io as sio

try:
    import torch
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

FEATURES = {"label": sio.FixedLenFeature([], sluice.int64), "tags": sio.VarLenFeature(sluice.int64)}


# Module-level functions: what a pickled dataset may be made with (a spawned process imports this module).

def plus_one(x):
    return x + 1


def is_even(x):
    return x % 2 == 0


def label_of(example):
    return example["label"]


def open_range(x):
    return sd.Dataset.range(x)


def tfrecord_pipeline(path):
    return (sd.TFRecordDataset(path)
            .map(sd.ops.parse_example(FEATURES), num_parallel_calls=2)
            .map(label_of)
            .batch(2))


def sum_of_dataset(ds):
    return sum(int(np.sum(x)) for x in ds)


def _write_records(path, n):
    with sio.TFRecordWriter(path) as w:
        for i in range(n):
            w.write(sluice.train.Example(features=sluice.train.Features(feature={
                "label": sluice.train.Feature(int64_list=sluice.train.Int64List(value=[i])),
                "tags": sluice.train.Feature(int64_list=sluice.train.Int64List(value=list(range(i % 3)))),
            })).SerializeToString())


def _values(ds):
    return [np.asarray(x).tolist() for x in ds]


def test_pickled_pipeline_gives_the_same_elements():
    ds = (sd.Dataset.range(20).map(plus_one).filter(is_even).shuffle(5, seed=7).repeat(2).skip(1).take(15)
          .batch(3, drop_remainder=True).prefetch(2))
    again = pickle.loads(pickle.dumps(ds))
    assert again is not ds
    assert _values(again) == _values(ds)
    assert again.element_spec == ds.element_spec


def test_pickled_zip_concatenate_interleave_keep_structure():
    ds = sd.Dataset.zip({"a": sd.Dataset.range(3), "b": sd.Dataset.from_tensor_slices(np.array([1.5, 2.5, 3.5]))})
    ds = ds.concatenate(ds).enumerate()
    again = pickle.loads(pickle.dumps(ds))
    assert [(int(i), int(e["a"]), float(e["b"])) for i, e in again] == [
        (int(i), int(e["a"]), float(e["b"])) for i, e in ds]
    nested = sd.Dataset.range(1, 4).interleave(open_range, cycle_length=2)
    assert _values(pickle.loads(pickle.dumps(nested))) == _values(nested)


def test_pickled_dataset_keeps_its_options():
    options = sd.Options()
    options.deterministic = False
    options.autotune.cpu_budget = 3
    ds = sd.Dataset.range(4).with_options(options).map(plus_one)
    again = pickle.loads(pickle.dumps(ds))
    assert again.options().deterministic is False
    assert again.options().autotune.cpu_budget == 3


def test_tfrecord_pipeline_with_native_parse_pickles(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    _write_records(path, 5)
    ds = tfrecord_pipeline(path)
    again = pickle.loads(pickle.dumps(ds))
    assert _values(again) == [[0, 1], [2, 3], [4]]
    fn = pickle.loads(pickle.dumps(sd.ops.parse_example(FEATURES)))
    assert _values(sd.TFRecordDataset(path).map(fn).map(label_of)) == [0, 1, 2, 3, 4]


def test_applied_transformations_pickle_as_the_calls_they_made():
    ds = sd.Dataset.from_tensor_slices(np.array([1, 1, 2, 3], dtype=np.int64)).apply(sd.experimental.unique())
    ds = ds.apply(sd.experimental.map_and_batch(plus_one, 2))
    assert _values(pickle.loads(pickle.dumps(ds))) == [[2, 3], [4]]


def test_lambda_map_raises_naming_the_stage_and_what_to_do():
    ds = sd.Dataset.range(3).map(lambda x: x * 2).batch(2)
    with pytest.raises(pickle.PicklingError, match=r"Dataset\.map \(the Map stage\).*map_func=.*lambda") as e:
        pickle.dumps(ds)
    assert "module-level function" in str(e.value)
    assert "worker_init_fn" in str(e.value)


def test_nested_function_interleave_raises_naming_the_stage():
    def open_file(x):
        return sd.Dataset.range(x)
    with pytest.raises(pickle.PicklingError, match=r"Dataset\.interleave.*map_func="):
        pickle.dumps(sd.Dataset.range(3).interleave(open_file, cycle_length=1))


def test_queue_source_raises_naming_the_stage():
    q = sluice.queue.FIFOQueue(4, [sluice.int64], shapes=[[]])
    q.enqueue([1])
    q.close()
    with pytest.raises(pickle.PicklingError, match=r"experimental\.from_queue.*queue="):
        pickle.dumps(sd.experimental.from_queue(q))


def test_generator_callable_must_be_module_level():
    def gen():
        yield 1
    with pytest.raises(pickle.PicklingError, match=r"Dataset\.from_generator.*generator="):
        pickle.dumps(sd.Dataset.from_generator(gen, output_types=sluice.int64))


def test_dataset_made_without_a_recipe_raises():
    raw = sd.Dataset(sd.Dataset.range(2)._core, sd.Dataset.range(2)._structure)
    with pytest.raises(pickle.PicklingError, match="Range stage.*no recipe"):
        pickle.dumps(raw)


def test_iterators_are_not_picklable():
    it = iter(sd.Dataset.range(3))
    next(it)
    with pytest.raises(TypeError, match="iterators cannot be pickled"):
        pickle.dumps(it)


def test_copy_shares_the_dataset_without_rebuilding():
    ds = sd.Dataset.range(3).map(lambda x: x * 2)  # not picklable, still copyable
    for c in (copy.copy(ds), copy.deepcopy(ds)):
        assert c._core is ds._core
        assert _values(c) == [0, 2, 4]


def test_spawned_pool_iterates_a_pickled_dataset():
    ds = sd.Dataset.range(10).map(plus_one).batch(4)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        got = pool.map(sum_of_dataset, [ds, ds.take(1)])
    assert got == [55, 10]


@pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")
def test_torch_spawn_workers_read_each_shard_exactly_once(tmp_path):
    import sluice.torch as st
    path = str(tmp_path / "r.tfrecord")
    _write_records(path, 12)
    ds = (sd.TFRecordDataset(path)
          .map(sd.ops.parse_example(FEATURES), num_parallel_calls=2)
          .map(label_of))
    loader = torch.utils.data.DataLoader(st.IterableDataset(ds), batch_size=None, num_workers=2,
                                         multiprocessing_context="spawn")
    got = [int(x) for x in loader]
    assert sorted(got) == list(range(12))
    # Worker w reads shard w: the loader takes one element from each worker in turn.
    assert got[0::2] == list(range(0, 12, 2))
    assert got[1::2] == list(range(1, 12, 2))

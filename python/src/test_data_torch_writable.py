"""Elements are the user's to modify: a buffer the pipeline still holds is handed out read-only
(numpy) or copied (sluice.torch), while a fresh batch stays zero-copy and writable."""

import numpy as np
import pytest

import sluice as sl
import sluice.torch as st

D = sl.data

try:
    import torch
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

real_torch = pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")


def _address(array):
    return array.__array_interface__["data"][0]


# ---- numpy: read-only when shared, writable when the element's own

def test_arrays_of_a_repeated_constant_are_read_only():
    for a in D.Dataset.from_tensors(np.zeros(2)).repeat(2):
        assert not a.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            a += 1
    assert [a.tolist() for a in D.Dataset.from_tensors(np.zeros(2)).repeat(2)] == [[0.0, 0.0]] * 2


def test_a_reshape_of_a_constant_is_read_only():
    # reshape views its input's buffer: still the constant's.
    ds = D.Dataset.from_tensors(np.zeros(4)).repeat(2).map(D.ops.reshape([2, 2]))
    assert [a.flags.writeable for a in ds] == [False, False]


def test_a_reshape_of_a_fresh_batch_is_writable():
    ds = D.Dataset.range(8).batch(4).map(D.ops.reshape([2, 2]))
    assert [a.flags.writeable for a in ds] == [True, True]


def test_arrays_a_cache_holds_are_read_only():
    ds = D.Dataset.range(4).batch(2).cache()
    for _ in range(2):  # the pass that fills the cache and one that reads it
        assert [a.flags.writeable for a in ds] == [False, False]


def test_a_fresh_batch_is_writable_and_not_copied():
    ds = D.Dataset.from_tensors(np.ones((4, 4), np.float32)).repeat(6).map(D.ops.cast(sl.float32)).batch(3)
    batches = list(ds.prefetch(1))
    assert [b.flags.writeable for b in batches] == [True, True]
    assert all(type(b.base).__name__ == "_TensorRef" for b in batches)  # a view of the engine's buffer


# ---- sluice.torch

def test_to_tensor_copies_a_read_only_array_and_shares_a_writable_one():
    class FakeTorch:
        @staticmethod
        def from_numpy(a):
            return a
    shared = next(iter(D.Dataset.from_tensors(np.arange(3)).repeat(2)))
    fresh = next(iter(D.Dataset.range(6).batch(3)))
    assert not np.shares_memory(st._convert(FakeTorch, shared), shared)
    assert st._convert(FakeTorch, shared).flags.writeable
    assert st._convert(FakeTorch, fresh) is fresh


@real_torch
def test_in_place_ops_on_a_repeated_constant_do_not_reach_later_elements():
    ds = D.Dataset.from_tensors(np.zeros(2)).repeat(3)
    assert [(t.add_(1), t.tolist())[1] for t in st.IterableDataset(ds)] == [[1.0, 1.0]] * 3


@real_torch
def test_in_place_ops_on_a_reshaped_constant_do_not_reach_later_elements():
    ds = D.Dataset.from_tensors(np.zeros(4)).repeat(3).map(D.ops.reshape([2, 2]))
    assert [(t.add_(1), t.tolist())[1] for t in st.IterableDataset(ds)] == [[[1.0, 1.0], [1.0, 1.0]]] * 3


@real_torch
def test_in_place_ops_do_not_change_what_a_cache_holds():
    ds = D.Dataset.range(4).batch(2).cache()
    assert [a.tolist() for a in ds] == [[0, 1], [2, 3]]
    assert [(t.add_(10), t.tolist())[1] for t in st.IterableDataset(ds)] == [[10, 11], [12, 13]]
    assert [a.tolist() for a in ds] == [[0, 1], [2, 3]]


@real_torch
def test_in_place_ops_on_shuffled_slices_of_a_constant_do_not_reach_later_elements():
    ds = D.Dataset.from_tensor_slices(np.zeros((3, 2))).repeat(2).shuffle(6, seed=1)
    assert [(t.add_(1), t.tolist())[1] for t in st.IterableDataset(ds)] == [[1.0, 1.0]] * 6


@real_torch
def test_a_fresh_batch_becomes_a_tensor_over_the_same_memory():
    ds = D.Dataset.from_tensors(np.zeros((8, 8, 3), np.float32)).repeat(4).map(
        D.ops.cast(sl.float32), num_parallel_calls=2).batch(2).prefetch(1)
    for batch in ds:
        t = st.to_tensor(batch)
        assert t.data_ptr() == _address(batch)
        t.add_(1)
        assert batch[0, 0, 0, 0] == 1.0

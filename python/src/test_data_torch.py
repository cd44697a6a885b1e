"""sluice.torch: a sluice.data Dataset as a torch IterableDataset, and the DLPack protocol.

The worker split and the conversion are tested with a stand-in torch module
(PyTorch may be missing); the tests marked `real_torch` use PyTorch itself
and skip without it.
"""

import sys
import types

import numpy as np
import pytest

import sluice as sl
import sluice.torch as st

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

real_torch = pytest.mark.skipif(not HAVE_TORCH, reason="PyTorch is not installed")


class _FakeTensor:
    """What the stand-in torch.from_numpy returns: the array it wraps."""

    def __init__(self, array):
        self.array = array


@pytest.fixture
def fake_torch(monkeypatch):
    """A stand-in `torch` with IterableDataset, get_worker_info and from_numpy; .worker sets the worker."""
    torch = types.ModuleType("torch")
    utils = types.ModuleType("torch.utils")
    data = types.ModuleType("torch.utils.data")

    class IterableDataset:
        pass

    data.IterableDataset = IterableDataset
    data.get_worker_info = lambda: torch.worker
    torch.worker = None
    torch.utils = utils
    utils.data = data
    torch.from_numpy = _FakeTensor
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "torch.utils", utils)
    monkeypatch.setitem(sys.modules, "torch.utils.data", data)
    monkeypatch.setattr(st, "_class", None)
    return torch


def _values(items):
    return [int(t.array) for t in items]


def test_import_needs_no_torch():
    assert callable(st.to_torch)


def test_numeric_components_become_tensors_and_strings_stay(fake_torch):
    ds = sl.data.Dataset.from_tensor_slices((np.arange(6, dtype=np.float32).reshape(3, 2), np.array([b"a", b"b", b"c"])))
    got = list(st.IterableDataset(ds))
    assert len(got) == 3
    tensor, label = got[1]
    assert isinstance(tensor, _FakeTensor) and tensor.array.tolist() == [2.0, 3.0]
    assert isinstance(label, bytes) and label == b"b"  # strings stay as they are


def test_dicts_keep_their_keys(fake_torch):
    ds = sl.data.Dataset.from_tensor_slices({"x": np.arange(2), "y": np.arange(2) * 10})
    got = list(st.to_torch(ds))
    assert [sorted(e) for e in got] == [["x", "y"], ["x", "y"]]
    assert int(got[1]["y"].array) == 10


def test_without_workers_the_whole_dataset_is_read(fake_torch):
    assert _values(st.IterableDataset(sl.data.Dataset.range(7))) == list(range(7))


@pytest.mark.parametrize("num_workers", [2, 3])
def test_each_worker_reads_its_shard_and_no_element_twice_or_never(fake_torch, num_workers):
    ds = st.IterableDataset(sl.data.Dataset.range(20).map(lambda x: x * 2))
    seen = []
    for worker_id in range(num_workers):
        fake_torch.worker = types.SimpleNamespace(num_workers=num_workers, id=worker_id)
        part = _values(ds)
        assert part == list(range(2 * worker_id, 40, 2 * num_workers))
        seen += part
    assert sorted(seen) == list(range(0, 40, 2))


def test_a_non_dataset_is_a_type_error(fake_torch):
    with pytest.raises(TypeError):
        st.IterableDataset([1, 2, 3])


def test_numpy_reads_a_sluice_array_through_dlpack_without_copying():
    ds = sl.data.Dataset.from_tensors(np.arange(12, dtype=np.float32).reshape(3, 4)).repeat(2).unbatch().batch(3)
    batch = next(iter(ds))
    view = np.from_dlpack(batch)
    assert np.shares_memory(view, batch)
    np.testing.assert_array_equal(view, batch)


@real_torch
def test_torch_tensors_share_sluices_memory():
    batch = next(iter(sl.data.Dataset.range(8).batch(8)))
    t = st.to_tensor(batch)
    assert isinstance(t, torch.Tensor)
    assert t.data_ptr() == batch.__array_interface__["data"][0]
    assert torch.from_dlpack(batch).data_ptr() == batch.__array_interface__["data"][0]


@real_torch
@pytest.mark.timeout(120)
@pytest.mark.parametrize("num_workers", [0, 2])
def test_a_dataloader_sees_every_element_once(num_workers):
    ds = st.IterableDataset(sl.data.Dataset.range(30).map(lambda x: x + 1))
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=num_workers)
    got = sorted(int(t) for t in loader)
    assert got == list(range(1, 31))

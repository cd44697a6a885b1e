"""sluice.torch: PyTorch fed by sluice.data, without copying fresh batches.

::

    import torch
    import sluice.torch

    ds = sluice.data.TFRecordDataset(files).map(parse, num_parallel_calls=8).batch(64).prefetch(2)
    loader = torch.utils.data.DataLoader(sluice.torch.IterableDataset(ds), batch_size=None)
    for images, labels in loader:  # torch tensors over the batches' buffers
        ...

``IterableDataset(dataset)`` (also ``to_torch(dataset)``) is a
``torch.utils.data.IterableDataset`` whose iterator yields each element of
`dataset` with every numeric array turned into a ``torch.Tensor``; string
arrays stay numpy (torch has none), and the element's nesting (tuple, dict,
namedtuple) is kept.

Every tensor is yours to modify in place. A buffer the pipeline made for this
element alone (a fresh ``batch``, ``map`` output, decoded image: the numpy
array sluice hands out is writable) becomes a tensor over that same memory
(``torch.from_numpy``: no copy). A buffer the pipeline also holds elsewhere
(a ``from_tensors`` / ``from_tensor_slices`` constant, a ``cache``, a
``repeat`` of a constant, a slice of a batch: the numpy array is read-only)
is copied first, so writing the tensor cannot change later elements or epochs.
Batch in sluice so that the large arrays are fresh batches.

Batch in sluice and pass ``batch_size=None`` to the DataLoader (it would
otherwise collate single elements again, in Python). Leave ``num_workers`` at
0: sluice's C++ threads already run the parallel map, reading and prefetch,
and worker processes only add copies through shared memory. If you do use
workers, each one takes ``dataset.shard(num_workers, worker_id)`` of the
dataset, so every element is read exactly once over all workers (the
dataset must give the same elements in the same order in every process; the
seeds an unseeded shuffle or list_files drew when made go with it). Every
start method works: under ``spawn`` or ``forkserver``
(``multiprocessing_context=``) each worker unpickles the dataset, which
rebuilds it from its recipe with those seeds, so its functions must be
module-level functions (see ``sluice.data``'s pickling notes).

torch is imported on first use; ``import sluice.torch`` works without it.
"""

import numpy as np

__all__ = ["IterableDataset", "to_torch", "to_tensor"]

_class = None


def _torch():
    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("sluice.torch needs PyTorch: pip install torch") from e
    return torch


def to_tensor(value):
    """`value` (an element or any nesting of numpy arrays) with numeric arrays as torch tensors: a writable
    array is shared (no copy), a read-only one (memory sluice or someone else still holds) copied."""
    torch = _torch()
    return _convert(torch, value)


def _convert(torch, value):
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biufc":
            # torch tensors are always writable: a read-only array's memory is not the caller's to change.
            return torch.from_numpy(value if value.flags.writeable else value.copy())
        return value
    if isinstance(value, np.generic):
        return _convert(torch, np.asarray(value))
    if isinstance(value, dict):
        return {k: _convert(torch, v) for k, v in value.items()}
    if isinstance(value, tuple):
        items = [_convert(torch, v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [_convert(torch, v) for v in value]
    return value


def _shard_for_worker(dataset, worker_info):
    """The part of `dataset` one DataLoader worker reads: shard(num_workers, id), or all of it."""
    if worker_info is None or worker_info.num_workers <= 1:
        return dataset
    return dataset.shard(worker_info.num_workers, worker_info.id)


def _make_class():
    torch = _torch()

    class IterableDataset(torch.utils.data.IterableDataset):
        """A sluice.data.Dataset as a torch IterableDataset (see the module docstring)."""

        def __init__(self, dataset):
            super().__init__()
            from sluice import data
            if not isinstance(dataset, data.DatasetV2):
                raise TypeError("sluice.torch.IterableDataset takes a sluice.data.Dataset, not %r" % (dataset,))
            self.dataset = dataset

        def __iter__(self):
            ds = _shard_for_worker(self.dataset, torch.utils.data.get_worker_info())
            for element in ds:
                yield _convert(torch, element)

        def __repr__(self):
            return "sluice.torch.IterableDataset(%r)" % (self.dataset,)

    # Pickled by reference as sluice.torch.IterableDataset (DataLoader workers under spawn).
    IterableDataset.__module__ = __name__
    IterableDataset.__qualname__ = "IterableDataset"
    return IterableDataset


def __getattr__(name):
    # IterableDataset subclasses torch's, so it is made when first asked for.
    global _class
    if name == "IterableDataset":
        if _class is None:
            _class = _make_class()
        return _class
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def to_torch(dataset):
    """``IterableDataset(dataset)``."""
    return __getattr__("IterableDataset")(dataset)

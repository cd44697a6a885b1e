"""``Dataset.from_record_files`` and ``shuffle_globally``: TFRecord files read at the offsets of their
record indexes (``<file>.idx``, as ``sluice records index`` writes them), in file order or in a
global shuffle, a fresh uniform permutation of every record of all files each epoch.

    ds = sluice.data.Dataset.from_record_files(files).shuffle_globally(seed=7)
    for record in ds.repeat(3): ...          # each pass: every record once, in its own order

* index: ``"auto"`` (default) loads a fresh side file (same size and modification time as the
  file) and otherwise scans the file once and writes the side file beside it (if the folder is
  not writable, it only logs a warning); ``"no_save"`` never writes one; ``"require"`` raises
  FailedPreconditionError unless every file has a fresh side file. The indexes are loaded when the
  dataset is made (so ``cardinality()`` is the record count); a file changed afterwards reads as
  corrupt.
* The order of epoch k is a keyed bijection (a Feistel network, ``IndexPermutation``) of the
  record ids keyed by (seed, k): the same seed gives the same orders in every run; epoch k is the
  k-th pass made of the dataset (``reshuffle_each_iteration=False``: every pass uses epoch 0's
  order). ``seed=None`` draws a random seed when the dataset is made.
* Records are read ahead in batches (the next ``read_ahead_records`` positions, at most
  ``read_ahead_bytes``), grouped by file and sorted by offset, through read-only memory mappings
  of the files, kept while the dataset lives (no system call per record; the file size is checked
  per batch, so records lost to a truncation meanwhile raise DataLossError); ``use_mmap=False``
  reads with pread instead, nearby records in one read.
* Compressed files cannot be read at an offset: a ``compression_type`` raises InvalidArgumentError.
* A corrupt record raises DataLossError naming the file, record and offset at its position in
  the order; iterating on goes on with the next record.
* ``iter(ds)`` of these datasets has ``position``: (seed, epoch, records handed out this epoch),
  and ``save()`` / ``restore()`` (``sluice.train.Checkpoint(iterator=it)``) as other iterators.
"""

import os
import random

from sluice import _core
from sluice import _data_checkpoint
from sluice import _data_pickle
from sluice import random as _random
from sluice import data as _data

_d = _core.data


class RecordFilesIterator(_data.Iterator):
    """An Iterator of a RecordFilesDataset, which also tells its ``position``."""

    def __init__(self, dataset):
        self._dataset = dataset
        self._it = _d.RecordFilesIterator(dataset._core)
        self._read = _d.RecordFilesIterator.next
        self._pack = _data._packer(dataset._structure)

    @property
    def initializer(self):
        def initialize():
            self._it.close()
            self._it = _d.RecordFilesIterator(self._dataset._core)
        return initialize

    @property
    def skipped_errors(self):
        return 0

    @property
    def position(self):
        """(seed, epoch, records handed out (or failed on) this epoch); seed and epoch are 0
        without a global shuffle."""
        return self._it.position()

    def save(self, path=None):
        """The position as bytes (``Iterator.save``'s contract); with `path`, also written there atomically."""
        state = self._it.save()
        if path is not None:
            _data_checkpoint.write_atomically(os.fspath(path), state)
        return state

    def restore(self, state):
        """Puts this iterator at the position `state` (bytes from ``save()``, or a path to them) holds."""
        if isinstance(state, (str, os.PathLike)):
            with open(os.fspath(state), "rb") as f:
                state = f.read()
        self._it.restore(bytes(state))


class RecordFilesDataset(_data.DatasetV2):
    """The dataset of ``Dataset.from_record_files`` (and of its ``shuffle_globally``)."""

    def __iter__(self):
        return RecordFilesIterator(self)

    as_numpy_iterator = __iter__

    def make_one_shot_iterator(self):
        return RecordFilesIterator(self)

    def make_initializable_iterator(self, shared_name=None):
        return RecordFilesIterator(self)


def from_record_files(filenames, index, compression_type, read_ahead_records, read_ahead_bytes, use_mmap):
    if index not in ("auto", "no_save", "require"):
        raise ValueError("index must be 'auto', 'no_save' or 'require', not %r" % (index,))
    core = _d.from_record_files(_data._filenames(filenames), _data._compression(compression_type), index, False, 0,
                                True, _data._opt_int(read_ahead_records, "read_ahead_records") or 0,
                                _data._opt_int(read_ahead_bytes, "read_ahead_bytes") or 0, bool(use_mmap))
    return RecordFilesDataset(core, _data._LEAF)


def shuffle_globally(dataset, seed, reshuffle_each_iteration):
    if not isinstance(dataset, RecordFilesDataset):
        raise TypeError("shuffle_globally applies to a dataset of Dataset.from_record_files itself (shuffle it "
                        "before any transformation), not %s" % type(dataset).__name__)
    seed = _data._opt_int(seed, "seed")
    if seed is None:  # with a global seed (sluice.random.set_seed), TF's deterministic op seed
        def fresh():
            pair = _random.get_seed(None)
            return random.SystemRandom().getrandbits(63) if pair[0] is None else pair[0] << 31 | pair[1]
        seed = _data_pickle.draw_seed(fresh)  # recorded, so a pickled copy keeps it
    core = _d.global_shuffle(dataset._core, seed % 2**64, bool(reshuffle_each_iteration))
    return RecordFilesDataset(core, dataset._structure)

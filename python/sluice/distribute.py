"""Multi-rank input: every record read exactly once per epoch across the ranks of a job.

    import sluice
    ctx = sluice.distribute.init()          # rank and size from mpirun / srun / torchrun
    ds = sluice.distribute.shard(files, policy="RECORD", seed=1234, context=ctx)
    ds = ds.map(parse, num_parallel_calls=sluice.data.AUTOTUNE).batch(256)
    for epoch in range(90):
        for batch in ds:                    # each pass: the next epoch, reshuffled globally
            ...

* ``init()`` finds the launcher: MPI when ``mpirun`` or ``srun --mpi`` started the process
  (``OMPI_COMM_WORLD_SIZE``, ``PMIX_RANK``, ``PMI_SIZE``; the MPI communicator comes from the
  extension ``sluice._mpi``, built where MPI was found), torchrun (``RANK``, ``WORLD_SIZE``,
  ``LOCAL_RANK``), Slurm without MPI (``SLURM_PROCID``, ``SLURM_NTASKS``), else one process. It
  never starts MPI otherwise. ``SLUICE_ROLE`` (``train`` or ``preprocess``) sets ``ctx.role``.
* Policies (``ShardingPolicy``): TensorFlow's ``OFF``, ``AUTO`` (FILE with at least as many
  files as ranks, else DATA), ``FILE`` (each epoch's permuted file list dealt over the ranks,
  balanced by record count), ``DATA`` (element k to rank k % size, as ``Dataset.shard``),
  ``HINT`` (as DATA at this source), tf.data service's ``DYNAMIC`` (splits handed out by rank 0,
  first come first served) and sluice's ``RECORD`` (a global permutation of all record ids each
  epoch, dealt by stride). The permutations depend on (seed, epoch) only and are the same on
  every machine.
* ``uneven``: ``"pad"`` (default, as DistributedSampler: every rank gets ceil(n / size), repeating
  a few records), ``"drop"`` (floor(n / size), dropping different records each epoch) or
  ``"allow"`` (counts differ by one). With pad or drop no rank waits at an epoch end.
* Without a communicator (torchrun, plain Slurm) pass ``seed``: every rank must draw the same
  permutation. With one, rank 0 draws the seed if none is given, and the ranks check at start
  that they agree on the file list (names and record counts), seed, policy and version: a
  mismatch raises FailedPreconditionError naming the differing ranks.
* Checkpoints: ``iter(ds).state`` is a short string (seed, epoch, policy, world size, global
  position) valid at a synchronous step; ``shard(..., resume=state)`` resumes it, RECORD and DATA
  at any world size, each record still read once in that epoch.
"""

import glob
import os

from sluice import _core
from sluice import data as _data

__all__ = ["init", "shard", "InputContext", "ShardingPolicy", "AutoShardPolicy", "ShardedIterator",
           "ShardedRecordsDataset"]

_d = _core.data


class ShardingPolicy:
    """TF's sharding policy names (``tf.data.experimental.AutoShardPolicy`` and tf.data service's
    ``ShardingPolicy``) plus RECORD."""
    OFF = "OFF"
    AUTO = "AUTO"
    FILE = "FILE"
    DATA = "DATA"
    HINT = "HINT"
    DYNAMIC = "DYNAMIC"
    RECORD = "RECORD"


AutoShardPolicy = ShardingPolicy


class InputContext:
    """``tf.distribute.InputContext``: which input pipeline this process is, of how many."""

    def __init__(self, core):
        self._core = core

    @property
    def num_input_pipelines(self):
        return self._core.num_input_pipelines

    @property
    def input_pipeline_id(self):
        return self._core.input_pipeline_id

    # torch.distributed's names.
    rank = input_pipeline_id
    world_size = num_input_pipelines

    @property
    def local_rank(self):
        return self._core.local_rank

    @property
    def launcher(self):
        """``"single"``, ``"mpi"``, ``"torchrun"`` or ``"slurm"``."""
        return self._core.launcher

    @property
    def role(self):
        """``"train"`` or ``"preprocess"`` (``SLUICE_ROLE``)."""
        return self._core.role

    @property
    def has_communicator(self):
        return self._core.has_communicator

    def barrier(self):
        """Waits for every rank (needs a communicator)."""
        _d.dist_barrier(self._core)

    def allreduce(self, value, op="sum"):
        """``op`` (``"sum"``, ``"min"``, ``"max"``) of an integer over every rank."""
        return _d.dist_allreduce(self._core, int(value), op)

    def __repr__(self):
        return "InputContext(input_pipeline_id=%d, num_input_pipelines=%d, launcher=%r, role=%r)" % (
            self.input_pipeline_id, self.num_input_pipelines, self.launcher, self.role)


_MPI_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE")


def init():
    """This process's :class:`InputContext`, from its launcher (see the module's docstring).
    Under mpirun or srun it makes an MPI communicator when ``sluice._mpi`` was built, else it
    works from the environment alone (static policies, with a seed)."""
    factory = None
    if any(v in os.environ for v in _MPI_VARIABLES):
        try:
            from sluice import _mpi
        except ImportError:
            _mpi = None
        if _mpi is not None:
            factory = _mpi.communicator_factory()
    return InputContext(_d.dist_init(factory))


def _thread_contexts(n):
    """``n`` contexts joined in this process, one per rank (for tests: use each from its own thread)."""
    return [InputContext(c) for c in _d.dist_thread_contexts(n)]


class ShardedIterator(_data.Iterator):
    """One epoch of a :class:`ShardedRecordsDataset`, which also tells its checkpoint ``state``."""

    def __init__(self, dataset):
        self._dataset = dataset
        self._it = _d.ShardedIterator(dataset._core)
        self._read = _d.ShardedIterator.next
        self._pack = _data._packer(dataset._structure)

    @property
    def initializer(self):
        def initialize():
            self._it.close()
            self._it = _d.ShardedIterator(self._dataset._core)
        return initialize

    @property
    def skipped_errors(self):
        return 0

    @property
    def state(self):
        """The checkpoint string (valid when every rank has read as many elements)."""
        return self._it.state()

    @property
    def count(self):
        """The elements this rank reads this epoch (-1 under DYNAMIC)."""
        return self._it.count()


class ShardedRecordsDataset(_data.DatasetV2):
    """The dataset of :func:`shard`: this rank's records (serialized strings), one epoch per pass."""

    def __iter__(self):
        return ShardedIterator(self)

    as_numpy_iterator = __iter__

    def make_one_shot_iterator(self):
        return ShardedIterator(self)

    def make_initializable_iterator(self, shared_name=None):
        return ShardedIterator(self)


def shard(files, policy=ShardingPolicy.AUTO, seed=None, uneven="pad", shuffle=True, balance_records=True,
          check_consistency=True, split_records=64, resume=None, context=None):
    """This rank's share of the records of TFRecord ``files`` (names, a glob pattern, or a dataset
    of names), each epoch. Collective when the context has a communicator: every rank calls it at
    the same point. ``context``: an :class:`InputContext` (default :func:`init`'s)."""
    if isinstance(files, (str, bytes, os.PathLike)) and any(c in os.fsdecode(files) for c in "*?["):
        files = sorted(glob.glob(os.fsdecode(files)))
    if context is None:
        context = init()
    if isinstance(policy, str):
        policy = policy.upper()
    core = _d.dist_sharded_record_files(_data._filenames(files), str(policy),
                                        None if seed is None else int(seed) % 2**64, str(uneven), bool(shuffle),
                                        bool(balance_records), bool(check_consistency), int(split_records),
                                        resume, context._core)
    return ShardedRecordsDataset(core, _data._LEAF)

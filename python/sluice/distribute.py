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
  position) valid at a synchronous step; ``shard(..., resume=state)`` resumes it, RECORD, DATA,
  FILE and DYNAMIC at any world size (FILE at another size: the records the old ranks had left in
  their files, dealt by stride for the rest of that epoch; DYNAMIC: the positions no rank had read,
  which rank 0's dispatcher names from its journal of splits, handed out first), each record still
  read once in that epoch. Under DYNAMIC, ``state`` asks rank 0 (keep its dataset alive) and raises
  FailedPreconditionError when some rank cannot have read as many elements yet. ``it.save()`` /
  ``it.restore(state)`` (so ``sluice.train.Checkpoint(iterator=it)``) write that string as bytes
  and restore through such a resume: the iterator then reads from a new ``shard(...,
  resume=state)`` of the same arguments (collective as ``shard`` is: every rank restores at once).
* Preprocessing ranks (tf.data service's job): ranks started with ``SLUICE_ROLE=preprocess`` run
  the pipeline and stream its elements to the training ranks, which read them as a dataset::

      ds = build_pipeline()                  # on every rank; trainers only take its element_spec
      ds = ds.apply(sluice.distribute.distribute("DATA", context=ctx))
      for batch in ds:                       # trainers: the workers' elements, in arrival order
          ...                                # workers: distribute() served, ds is empty

  or the two halves, ``serve(ds, context=ctx)`` and ``from_service(ds.element_spec, context=ctx)``.
"""

import glob
import os
import re

from sluice import _core
from sluice import _data_checkpoint
from sluice import data as _data

__all__ = ["init", "shard", "serve", "from_service", "distribute", "service_ranks", "InputContext", "ShardingPolicy",
           "AutoShardPolicy", "ShardedIterator",
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


def _thread_contexts(n, roles=()):
    """``n`` contexts joined in this process, one per rank (for tests: use each from its own thread);
    ``roles``: one per rank (default all ``"train"``)."""
    return [InputContext(c) for c in _d.dist_thread_contexts(n, list(roles))]


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
        """The checkpoint string (valid when every rank has read as many elements; DYNAMIC asks
        rank 0's dispatcher)."""
        return self._it.state()

    @property
    def count(self):
        """The elements this rank reads this epoch (-1 under DYNAMIC)."""
        return self._it.count()

    def save(self, path=None):
        """``state`` as bytes (what ``restore`` and ``sluice.train.Checkpoint`` take); with `path`, also
        written there atomically."""
        state = self._it.state().encode()
        if path is not None:
            _data_checkpoint.write_atomically(os.fspath(path), state)
        return state

    def restore(self, state):
        """Continues from `state` (bytes from ``save()``, a ``state`` string, or a path to the bytes): this
        iterator then reads a new ``shard(..., resume=state)`` of the dataset's arguments (with the
        state's seed). Collective as ``shard``."""
        if isinstance(state, os.PathLike) or (isinstance(state, str) and not state.startswith("sluice-dist ")):
            with open(os.fspath(state), "rb") as f:
                state = f.read()
        text = state if isinstance(state, str) else bytes(state).decode("utf-8", "replace")
        args = self._dataset.__dict__.get("_shard_args")
        if args is None:
            raise _data.errors.UnimplementedError(None, None, "this sharded dataset cannot be restored: make it "
                                                  "with sluice.distribute.shard(..., resume=it.state)")
        seed = re.search(r"\bseed=(\d+)", text)
        core = _shard_core(args, int(seed.group(1)) if seed else args["seed"], text)
        self._it.close()
        self._dataset = ShardedRecordsDataset(core, _data._LEAF)
        self._dataset._shard_args = args
        self._it = _d.ShardedIterator(core)


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
    args = dict(files=_data._filenames(files), policy=str(policy), seed=None if seed is None else int(seed) % 2**64,
                uneven=str(uneven), shuffle=bool(shuffle), balance_records=bool(balance_records),
                check_consistency=bool(check_consistency), split_records=int(split_records), context=context)
    ds = ShardedRecordsDataset(_shard_core(args, args["seed"], resume), _data._LEAF)
    ds._shard_args = args  # for ShardedIterator.restore's resume
    return ds


def _shard_core(args, seed, resume):
    return _d.dist_sharded_record_files(args["files"], args["policy"], seed, args["uneven"], args["shuffle"],
                                        args["balance_records"], args["check_consistency"], args["split_records"],
                                        resume, args["context"]._core)


# -- preprocessing ranks (tf.data service on the communicator)

_SERVICE_TAG = 30000


def _context_with_communicator(context):
    if context is None:
        context = init()
    if not context.has_communicator:
        raise ValueError("preprocessing ranks need a communicator (launch with mpirun or srun and MPI)")
    return context


def service_ranks(context=None):
    """``(workers, trainers)``: the ranks whose ``role`` is ``"preprocess"`` and the others.
    Collective: every rank calls it at the same point."""
    context = _context_with_communicator(context)
    size, rank = context.world_size, context.rank
    workers = []
    # One bit per rank of each 62-rank block, summed over the ranks.
    for base in range(0, size, 62):
        mine = 1 << (rank - base) if base <= rank < base + 62 and context.role == "preprocess" else 0
        mask = context.allreduce(mine)
        workers += [base + i for i in range(min(62, size - base)) if mask >> i & 1]
    trainers = [r for r in range(size) if r not in set(workers)]
    return workers, trainers


def _ranks(context, workers, trainers):
    if workers is None or trainers is None:
        w, t = service_ranks(context)
        workers = w if workers is None else workers
        trainers = t if trainers is None else trainers
    return [int(r) for r in workers], [int(r) for r in trainers]


def serve(dataset, context=None, workers=None, trainers=None, max_outstanding_requests=8, tag=_SERVICE_TAG):
    """On a preprocessing rank: iterates ``dataset`` once and sends each element to the training
    rank whose request (credit) came first, then ends the stream to every trainer. Blocks until
    done, without the GIL; Ctrl-C raises KeyboardInterrupt and cancels the context's
    communicator (its later calls fail). ``workers`` / ``trainers``: the ranks (default: from the
    roles, :func:`service_ranks`, a collective). An element's error goes to the trainer that
    would have got it (which raises it) and ends this worker's stream."""
    context = _context_with_communicator(context)
    workers, trainers = _ranks(context, workers, trainers)
    _d.dist_serve(dataset._core, context._core, workers, trainers, int(max_outstanding_requests), int(tag))


def _like(element_spec_or_dataset):
    if isinstance(element_spec_or_dataset, _data.DatasetV2):
        return element_spec_or_dataset
    # An empty dataset of that signature: its core carries the spec, its structure the nesting.
    return _data.Dataset.from_generator(lambda: iter(()), output_signature=element_spec_or_dataset)


def from_service(element_spec, context=None, workers=None, trainers=None, max_outstanding_requests=8,
                 tag=_SERVICE_TAG):
    """On a training rank: the dataset of the elements the preprocessing ranks send this rank, in
    arrival order, ending when every worker has ended its stream. ``element_spec``: the served
    dataset's (or the dataset itself, not iterated). One pass."""
    context = _context_with_communicator(context)
    workers, trainers = _ranks(context, workers, trainers)
    like = _like(element_spec)
    core = _d.dist_from_service(context._core, workers, trainers, int(max_outstanding_requests), int(tag), like._core)
    return _data.Dataset(core, like._structure)


_PROCESSING_MODES = {"PARALLEL_EPOCHS": ShardingPolicy.OFF, ShardingPolicy.OFF: ShardingPolicy.OFF,
                     ShardingPolicy.DATA: ShardingPolicy.DATA}


def distribute(processing_mode=ShardingPolicy.OFF, context=None, workers=None, trainers=None,
               max_outstanding_requests=8, tag=_SERVICE_TAG):
    """``tf.data.experimental.service.distribute`` on the communicator, for ``dataset.apply``: on
    a preprocessing rank it serves the dataset (blocking until sent) and gives an empty dataset;
    on a training rank, :func:`from_service` with the dataset's element_spec. Modes: ``OFF``
    (``"parallel_epochs"``: each worker serves the whole dataset) and ``DATA`` (worker i of n
    serves ``dataset.shard(n, i)``: every element once in all). Collective (the roles)."""
    mode = _PROCESSING_MODES.get(str(processing_mode).upper())
    if mode is None:
        raise ValueError("processing_mode must be OFF ('parallel_epochs') or DATA, not %r (shard the "
                         "workers' files with sluice.distribute.shard for the other policies)" % (processing_mode,))
    context = _context_with_communicator(context)
    workers, trainers = _ranks(context, workers, trainers)

    def apply(dataset):
        if context.rank in workers:
            served = dataset.shard(len(workers), workers.index(context.rank)) if mode == ShardingPolicy.DATA \
                else dataset
            serve(served, context, workers, trainers, max_outstanding_requests, tag)
            return dataset.take(0)
        return from_service(dataset, context, workers, trainers, max_outstanding_requests, tag)

    return apply

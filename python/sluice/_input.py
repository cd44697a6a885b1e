"""The ``tf.train`` input pipeline: producers, batchers, queue statistics.

Exported by :mod:`sluice.train` (and ``all_queue_stats`` by
:mod:`sluice.queue`); see there for the overview. This module holds the
implementation over ``sluice._core`` (bind_pipeline.cc).

Every builder here only builds: it makes its queue and registers a C++
QueueRunner in the process-wide registry, and nothing runs until
``sluice.train.start_queue_runners(coord=coord)`` starts the runners (with
the Python ones) under that Coordinator. The runner threads are C++ threads;
they stop with the Coordinator, report errors to it, and ``coord.join()``
waits for them.

Where TensorFlow takes tensors that yield a new value each time they are
evaluated, sluice takes *producers*:

* a Python callable returning one example (a tensor, a list/tuple of them or
  a dict; or with ``enqueue_many=True`` a batch of examples along dimension
  0), called on the runner threads, each call holding the GIL. Raising
  :class:`sluice.errors.OutOfRangeError` ends the input; any other exception
  stops the Coordinator, and ``coord.join()`` re-raises that exception.
  Batchers need its ``dtypes`` and ``shapes`` (nothing is called before the
  threads start, so they cannot be inferred);
* a :class:`NativeProducer`, run entirely in C++ without the GIL (readers,
  parsing, slices), whose output signature is known.
"""

import atexit
import collections
import itertools
import logging
import operator
import os
import threading
import time

import numpy as np

from sluice import _core
from sluice import _crop_options
from sluice import _graph
from sluice import dtypes as _dtypes
from sluice import errors
from sluice import queue as _queue
from sluice import _sparse_batch
from sluice.sparse_tensor import SparseTensor

_logger = logging.getLogger("sluice.train")

# At exit, Python producers still running on C++ threads stop taking the GIL
# (which a finalizing interpreter would answer by ending the thread).
atexit.register(_core._shutdown_python_producers)

# ---- Python exceptions raised in producers ------------------------------------------

# token -> exception, for the Coordinator (sluice.train.Coordinator._exception_for):
# the C++ status of a failed Python producer carries the token as its
# "sluice.python.exception" payload. Only the latest few are kept.
_STASH_SIZE = 64
_stash_lock = threading.Lock()
_stash = collections.OrderedDict()
_stash_ids = itertools.count(1)


def _stash_exception(exc):
    """Keeps `exc` for the Coordinator; returns its token (also set as ``exc._sluice_token`` where it can be).

    The C++ side (bind_pipeline.cc) reads the attribute, or calls this
    itself for an exception that refuses attributes.
    """
    token = "producer-%d" % next(_stash_ids)
    try:
        exc._sluice_token = token
    except Exception:  # noqa: BLE001 - a type refusing attributes must not replace the user's exception
        pass
    with _stash_lock:
        _stash[token] = exc
        while len(_stash) > _STASH_SIZE:
            _stash.popitem(last=False)
    return token


def _stashed_exception(token):
    """The exception a producer raised, by its token (None if unknown)."""
    if token is None:
        return None
    with _stash_lock:
        return _stash.get(token)


# ---- structures ------------------------------------------------------------------------

class _Structure:
    """The shape of one example: a single tensor, a list of them, or a dict.

    Components are ordered as TensorFlow orders them: a list in its order, a
    dict by ``sorted(keys, key=str)``.
    """

    def __init__(self, kind, size=1, keys=None):
        self.kind = kind  # "single", "list" or "dict"
        self.size = size if keys is None else len(keys)
        self.keys = keys

    @classmethod
    def of(cls, template):
        """The structure of `template` (a dict, a list/tuple, or anything else: one tensor)."""
        if isinstance(template, dict):
            return cls("dict", keys=sorted(template, key=str))
        if isinstance(template, (list, tuple)):
            return cls("list", size=len(template))
        return cls("single")

    def flatten(self, value):
        """The components of `value`, in order. ValueError if it has another structure."""
        if self.kind == "dict":
            if not isinstance(value, dict) or sorted(value, key=str) != self.keys:
                raise ValueError("expected a dict with keys %s, got %r" % (self.keys, _describe(value)))
            return [value[k] for k in self.keys]
        if self.kind == "list":
            if not isinstance(value, (list, tuple)) or len(value) != self.size:
                raise ValueError("expected a list of %d tensors, got %r" % (self.size, _describe(value)))
            return list(value)
        if isinstance(value, (list, tuple, dict)) and not isinstance(value, (bytes, str)):
            raise ValueError("expected a single tensor, got a %s" % type(value).__name__)
        return [value]

    def flatten_template(self, template, what):
        """flatten() for a `dtypes`/`shapes` argument given in the example's structure."""
        if self.kind == "single":
            return [template]
        if self.kind == "dict" and not isinstance(template, dict):
            raise ValueError("`%s` must be a dict with keys %s" % (what, self.keys))
        try:
            return self.flatten(template)
        except ValueError as e:
            raise ValueError("`%s`: %s" % (what, e)) from None

    def pack(self, components):
        """The example (or batch) of `components`, in this structure."""
        if self.kind == "dict":
            return dict(zip(self.keys, components))
        if self.kind == "list":
            return list(components)
        return components[0]


def _describe(value):
    if isinstance(value, dict):
        return "dict with keys %s" % sorted(value, key=str)
    return type(value).__name__


def _core_shape(shape):
    """A shape-like -> None (unknown rank) or a list of dims (-1 unknown)."""
    shape = _queue._as_shape(shape)
    return None if shape is None else [-1 if d is None else d for d in shape]


def _py_shape(core_shape):
    return None if core_shape is None else tuple(None if d < 0 else d for d in core_shape)


def _as_int(value, what):
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError("%s must be an int, got %s" % (what, type(value).__name__)) from None


def _opt_int(value, what):
    return None if value is None else _as_int(value, what)


def _infer_component(value):
    """(DType, converted component) of an input tensor given as a Python value."""
    if isinstance(value, (bytes, str)):
        dtype = _dtypes.string
    else:
        arr = value if isinstance(value, np.ndarray) else np.asarray(value)
        dtype = _dtypes.as_dtype(arr.dtype)
        value = arr
    return dtype, _queue._to_component(value, dtype)


def _build(fn, *args):
    """Runs a builder; its InvalidArgumentError is TensorFlow's graph-time ValueError."""
    try:
        return fn(*args)
    except errors.InvalidArgumentError as e:
        raise ValueError(e.message) from None


def _check_cancel_op(cancel_op):
    if cancel_op is not None and not callable(cancel_op):
        raise TypeError("cancel_op must be a callable, not %s" % type(cancel_op).__name__)


def _cancel_producer(cancel_op):
    """`cancel_op` (None, or a callable) as a _core.Producer of no components, for a C++ runner's cancel op.

    A producer because bind_pipeline.cc's Python producers already call
    Python from C++ threads safely (taking the GIL; never once the
    interpreter exits). As TensorFlow's QueueRunner._close_on_stop does,
    an exception from `cancel_op` is logged (debug level) and ignored:
    ``coord.join()`` does not raise it.
    """
    if cancel_op is None:
        return None

    def cancel():
        try:
            cancel_op()
        except Exception as e:  # TF: "Intentionally ignore errors from cancel_op."
            _logger.debug("Ignored exception: %s", e)
        return []

    return _core.python_producer(cancel, [], [])


# ---- native producers ---------------------------------------------------------------------

class NativeProducer:
    """A producer that runs entirely in C++, without the GIL (a ``train::Producer``).

    What TensorFlow builds as a graph of tensors evaluated once per example
    (``reader.read(queue)``, ``parse_single_example``, a slice of
    ``slice_input_producer``): give it to a batcher, whose C++ threads call
    it. Compose it with the ``map_*`` methods; each returns a new producer
    and leaves this one as it is. Calling it (``producer()``) evaluates it
    once on this thread, without the GIL, and returns one example in its
    structure. Thread-safe: several threads may call one producer.
    """

    def __init__(self, core, structure):
        self._core = core
        self._structure = structure

    def _bind_core(self, core):
        self._core = core

    def _drop_core(self):
        self._core = None

    @property
    def dtypes(self):
        """The components' dtypes, in order (a dict's by sorted key)."""
        return [_dtypes.as_dtype(d) for d in self._core.dtypes]

    @property
    def shapes(self):
        """The components' shapes: tuples, None for an unknown dimension or rank."""
        return [_py_shape(s) for s in self._core.shapes]

    @property
    def names(self):
        """The components' names (dict keys, or ``key``/``value`` of a reader); may be empty."""
        return list(self._core.names)

    @property
    def core(self):
        """The ``sluice._core.Producer``."""
        return self._core

    def __call__(self, timeout=None):
        """Evaluates the producer once on this thread: the next example.

        Blocks without the GIL while its input is empty (an empty filename
        queue, an empty queue to dequeue from). As a queue's ``dequeue``,
        Ctrl-C raises KeyboardInterrupt (on the main thread) and, after
        `timeout` seconds (None: no limit), DeadlineExceededError.
        OutOfRangeError at the end of the input. An exception raised by
        Python code inside (a ``map_filter`` predicate) is raised as itself.
        """
        return self._structure.pack(self._core(timeout))

    def map_parse_example(self, features, value_index=1):
        """``tf.io.parse_single_example`` of component `value_index` (default 1, a reader's value).

        `features`: a dict of ``sluice.io.FixedLenFeature``,
        ``VarLenFeature`` or ``SparseFeature``. Returns a producer of dicts
        ``{name: tensor}`` in sorted key order; a sparse feature ``k`` gives
        three entries ``k/indices``, ``k/values`` and ``k/dense_shape``
        (TF's SparseTensor parts), which a batcher turns into one batched
        ``sluice.SparseTensor`` under the key ``k``, as TF's batchers do. Parse errors
        (InvalidArgumentError) stop the pipeline. ValueError for another
        feature type or a value_index that is not a string scalar component.
        """
        from sluice import _parsing  # noqa: PLC0415 - sluice._parsing imports the queue layer
        parser = _core.ExampleParser(_parsing._spec(features))
        index = _as_int(value_index, "value_index")
        return _native(lambda: _build(_core.parse_example_producer, self._core, parser, index),
                       lambda core: _Structure("dict", keys=list(core.names)))

    def _component(self, component):
        """The index of `component`: an int, or a name (a dict key)."""
        if isinstance(component, str):
            names = list(self._core.names)
            if component not in names:
                raise ValueError("no component named %r (the producer has %s)" % (component, names))
            return names.index(component)
        return _as_int(component, "component")

    def map_decode_jpeg(self, component="image", channels=3, ratio=1, fancy_upscaling=True, dct_method=""):
        """``tf.io.decode_jpeg`` of the encoded image `component` (a name, or an index), in C++.

        The image (JPEG, or PNG as TF 2 decodes it) becomes a uint8
        ``[height, width, channels]`` tensor; the other components pass
        through. `channels` 0 keeps the file's own. Decode errors
        (InvalidArgumentError) stop the pipeline. ValueError for a component
        that is not a string scalar or bad options.
        """
        args = (self._component(component), _as_int(channels, "channels"), _as_int(ratio, "ratio"),
                bool(fancy_upscaling), dct_method or "")
        return _native(lambda: _build(_core.decode_jpeg_producer, self._core, *args), self._structure)

    def map_random_resized_crop(self, size=None, scale=None, ratio=None, flip=None, mean=None, std=None,
                                data_format=None, seed=0, component="image", sampler=None, method=None,
                                antialias=None, channels=None, max_attempts=None, dct_scaling=None, dct_method=None):
        """Random resized crop + horizontal flip + normalise of the encoded image `component`, fused, in C++.

        torchvision's ``RandomResizedCrop(size, scale, ratio)`` +
        ``RandomHorizontalFlip()`` (if `flip`) + ``ToTensor()`` +
        ``Normalize(mean, std)`` (or, with ``sampler="tensorflow"``,
        ``sample_distorted_bounding_box`` -> ``decode_and_crop_jpeg`` ->
        resize -> flip), from the encoded bytes: only the crop box is decoded
        (see ``sluice.image.decode_random_resized_crop``). The component
        becomes float32 ``[3, size, size]`` (``data_format="CHW"``) or
        ``[size, size, 3]`` ("HWC"); `size` is an int or ``(height,
        width)``. An option left at None keeps the default of
        ``_core.RandomResizedCropOptions`` (the C++ struct's: size 224,
        scale (0.08, 1.0), ratio (3/4, 4/3), flip, ImageNet's mean and std,
        "CHW", "torchvision", "bilinear", 3 channels, 10 attempts). Call k
        of the producer (counted across its threads) uses the randomness of
        ``(seed, k)``. ValueError for bad options or a component that is not
        a string scalar.
        """
        options = _crop_options.crop_options(
            _as_int, size=size, scale=scale, ratio=ratio, flip=flip, mean=mean, std=std, data_format=data_format,
            sampler=sampler, method=method, antialias=antialias, channels=channels, max_attempts=max_attempts,
            dct_scaling=dct_scaling, dct_method=dct_method)
        args = (self._component(component), options, _as_int(seed, "seed") & 0xFFFFFFFFFFFFFFFF)
        return _native(lambda: _build(_core.random_resized_crop_producer, self._core, *args), self._structure)

    def map_select(self, components):
        """Only `components`: names (a dict producer of those keys, in sorted order) or indices (a list)."""
        names = all(isinstance(c, str) for c in components)
        if names:
            if len(set(components)) != len(components):
                raise ValueError("map_select: repeated component names %s" % list(components))
            components = sorted(components, key=str)
        indices = [self._component(c) for c in components]
        structure = (_Structure("dict", keys=list(components)) if names
                     else _Structure("list", size=len(components)))
        return _native(lambda: _build(_core.select_producer, self._core, indices), structure)

    def map_filter(self, predicate):
        """Only the examples for which `predicate(example)` is true (maybe_batch's keep_input).

        `predicate` is Python: each call takes the GIL. Its exceptions stop
        the pipeline. Each call considers one input example: in a batcher, a
        rejected one is a runner step that enqueues nothing (TF's no-op for
        keep_input=False), so the thread still sees a stop between
        rejections; ``limit_epochs`` over the filter counts it as a call.
        Called directly, the producer goes on to the next example.
        """
        structure = self._structure

        def keep(components):
            try:
                return bool(predicate(structure.pack(components)))
            except BaseException as e:
                _stash_exception(e)
                raise

        return _native(lambda: _core.filter_producer(self._core, keep), structure)

    def map_filter_rows(self, predicate):
        """For a producer of batches: only the rows `predicate(batch)` marks true.

        `predicate` returns one truth value per row (a bool array of the
        batch's leading dimension), as TF's vector keep_input with
        enqueue_many. A batch with no kept row is a skipped step, as in
        ``map_filter``. `predicate` is Python: each call takes the GIL. Its
        exceptions stop the pipeline.
        """
        structure = self._structure

        def keep(components):
            try:
                return predicate(structure.pack(components))
            except BaseException as e:
                _stash_exception(e)
                raise

        return _native(lambda: _core.mask_rows_producer(self._core, keep), structure)

    def __repr__(self):
        return "<sluice.train.NativeProducer dtypes=%s shapes=%s>" % (
            [d.name for d in self.dtypes], self.shapes)


def read_producer(reader, filename_queue):
    """``reader.read(filename_queue)``, evaluated per call, as a native producer.

    Yields ``(key, value)`` string scalars (a batch of them is a list
    ``[keys, values]``). `reader`: a :class:`sluice.io.ReaderBase`
    (TFRecordReader, TextLineReader, ...); `filename_queue`: a queue of file
    names, e.g. from :func:`string_input_producer`. OutOfRangeError once the
    filename queue is closed and drained. Calls on one reader take turns:
    give each reading thread its own reader (``batch_join`` with one producer
    per reader) to read files in parallel.
    """
    _queue_ref(filename_queue)  # TypeError now for a wrong argument
    return _native(lambda: _core.reader_producer(reader._reader, _queue_ref(filename_queue)),
                   _Structure("list", size=2))


def read_up_to_producer(reader, filename_queue, num_records):
    """``reader.read_up_to(filename_queue, num_records)`` per call, for ``enqueue_many=True``.

    Yields ``[keys, values]``, string vectors of 1..num_records records
    from one file; its shapes are ``[(None,), (None,)]`` (the batch
    dimension), so ``batch(read_up_to_producer(...), enqueue_many=True)``
    batches single records.
    """
    _queue_ref(filename_queue)
    n = _as_int(num_records, "num_records")
    return _native(lambda: _core.reader_up_to_producer(reader._reader, _queue_ref(filename_queue), n),
                   _Structure("list", size=2))


def dequeue_producer(queue):
    """``queue.dequeue()`` per call, as a native producer (OutOfRangeError once closed and drained)."""
    _queue_ref(queue)

    def structure(core):
        names = list(core.names)
        if names:
            return _Structure("dict", keys=sorted(names, key=str))
        return _Structure("single" if len(core.dtypes) == 1 else "list", size=len(core.dtypes))

    return _native(lambda: _core.dequeue_producer(_queue_ref(queue)), structure)


def _native(recipe, structure):
    """A NativeProducer built by `recipe` in the default graph (and rebuilt at each new run of it).

    `structure`: the example's _Structure, or a function of the built core giving it.
    """
    producer = NativeProducer.__new__(NativeProducer)
    _graph.track(producer, recipe)
    producer._structure = structure(producer._core) if callable(structure) else structure
    return producer


def _queue_ref(queue):
    ref = getattr(queue, "queue_ref", queue)
    if not isinstance(ref, _core.Queue):
        raise TypeError("expected a sluice.queue queue, not %s" % type(queue).__name__)
    return ref


# ---- input producers -------------------------------------------------------------------------

def _wrap_queue(core_queue):
    """A sluice.queue.FIFOQueue over a queue made in C++ (or a recipe making one, then rebuilt with the graph)."""
    q = _queue.FIFOQueue.__new__(_queue.FIFOQueue)
    if callable(core_queue):
        with _graph.get_default_graph().building():
            made = core_queue()
    else:
        made = core_queue
    dtypes = [_dtypes.as_dtype(d) for d in made.dtypes]
    shapes = list(made.shapes) or None  # already tuples with None for unknown dims
    if callable(core_queue):
        first, recipe = [made], core_queue  # the first run's queue is the one made above

        def core_queue():
            return first.pop() if first else recipe()
    _queue.QueueBase.__init__(q, dtypes, shapes, list(made.names) or None, core_queue)
    return q


_DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1
def _tf_seed_pair(op_seed, graph_seed=None, graph=None):
    """TensorFlow's ``random_seed.get_seed``: the (seed, seed2) pair of a random op.

    `op_seed`: the op's ``seed`` argument; `graph_seed`: the graph-level seed
    (``tf.compat.v1.set_random_seed``), None if unset. Both are reduced modulo
    2^31 - 1. With a graph seed, an op without one takes the next of a
    graph's count (0, 1, ...), as TF counts such ops in a graph. With
    neither seed the pair is (None, None): non-deterministic. (0, 0), which
    the ops read as non-deterministic, becomes (0, 2^31 - 1). `graph`: whose
    count of seeded ops gives an op seed (default: the default graph's; TF
    counts every op of a graph, so its numbers agree only where no other op
    came first).
    """
    if graph_seed is not None:
        if op_seed is None:
            graph = graph if graph is not None else _graph.get_default_graph()
            op_seed = graph._seeded_ops
            graph._seeded_ops += 1
        seeds = (_as_int(graph_seed, "graph seed") % _MAXINT32, _as_int(op_seed, "seed") % _MAXINT32)
    elif op_seed is not None:
        seeds = (_DEFAULT_GRAPH_SEED, _as_int(op_seed, "seed") % _MAXINT32)
    else:
        seeds = (None, None)
    return (0, _MAXINT32) if seeds == (0, 0) else seeds


def _producer_args(num_epochs, shuffle, seed, capacity, shared_name, name):
    # As TF, only a shuffle draws a seed (and counts toward the graph's ops).
    graph = _graph.get_default_graph()
    seed1, seed2 = _tf_seed_pair(_opt_int(seed, "seed"), graph.seed, graph) if shuffle else (None, None)
    return (_opt_int(num_epochs, "num_epochs"), bool(shuffle), seed1 or 0, seed2 or 0,
            _as_int(capacity, "capacity"), shared_name or "", name or "")


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None, capacity=32,
                   shared_name=None, summary_name=None, name=None, cancel_op=None):
    """The rows of `input_tensor` in a queue, epoch after epoch (``tf.train.input_producer``).

    Builds a FIFOQueue of `capacity` rows and registers its runner (one C++
    thread), which enqueues all rows (dimension 0) per epoch, in a fresh
    random order each epoch if `shuffle`, for `num_epochs` epochs (None:
    forever), then closes the queue. Returns the queue. Given a `seed`, the
    orders are TensorFlow's for that seed, epoch after epoch; without one
    they differ from run to run. `summary_name` is ignored (see
    :func:`sluice.queue.all_queue_stats`).

    `cancel_op`: a callable the runner calls (on a C++ thread, with the GIL)
    when the Coordinator stops, instead of the default
    ``queue.close(cancel_pending_enqueues=True)``; it should unblock the
    runner's pending enqueue (e.g. by closing the queue), or ``coord.join``
    waits for it. As in TensorFlow, its exceptions are logged (debug level,
    logger ``sluice.train``) and ignored.

    Raises ValueError for an input of rank 0, an `element_shape` that does
    not match the rows, num_epochs <= 0 or capacity <= 0; TypeError for a
    `cancel_op` that is not callable.
    """
    del summary_name
    _check_cancel_op(cancel_op)
    dtype, value = _infer_component(input_tensor)
    shape = None if element_shape is None else _core_shape(element_shape)
    args = _producer_args(num_epochs, shuffle, seed, capacity, shared_name, name)
    return _wrap_queue(lambda: _build(_core.input_producer, value, dtype.as_datatype_enum, shape, *args,
                                      _cancel_producer(cancel_op)))


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32,
                          shared_name=None, name=None, cancel_op=None):
    """A queue of strings, usually file names for a reader (``tf.train.string_input_producer``).

    `string_tensor`: a list (or 1-D array) of bytes/str. As
    :func:`input_producer`; ValueError "string_input_producer requires a
    non-null input tensor" for an empty list.
    """
    _check_cancel_op(cancel_op)
    if isinstance(string_tensor, (bytes, str)):
        raise ValueError("string_tensor must be a list of strings, not a single string")
    values = np.asarray(string_tensor, dtype=object)
    if values.ndim == 0:
        raise ValueError("string_tensor must be 1-D, got a scalar")
    if values.ndim > 1:  # TF's message for a matrix
        raise ValueError("Shapes %s and () are not compatible: string_tensor must be 1-D" % (values.shape,))
    strings = []
    for s in values:
        if isinstance(s, str):
            strings.append(s.encode("utf-8", "surrogateescape"))  # os.fsdecode'd file names round-trip
        elif isinstance(s, (bytes, np.bytes_)):
            strings.append(bytes(s))
        else:
            raise TypeError("Expected string, but got %r of type '%s'." % (s, type(s).__name__))
    args = _producer_args(num_epochs, shuffle, seed, capacity, shared_name, name)
    return _wrap_queue(lambda: _build(_core.string_input_producer, strings, *args, _cancel_producer(cancel_op)))


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                         name=None):
    """A queue of the int32 scalars 0 .. limit-1, per epoch (``tf.train.range_input_producer``)."""
    args = (_as_int(limit, "limit"),) + _producer_args(num_epochs, shuffle, seed, capacity, shared_name, name)
    return _wrap_queue(lambda: _build(_core.range_input_producer, *args))


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                         name=None):
    """Slices ``[t[i] for t in tensor_list]``, each row once per epoch (``tf.train.slice_input_producer``).

    TensorFlow returns tensors that give the next slice each time they are
    evaluated; sluice returns a :class:`NativeProducer` that gives a list of
    slices per call, for a batcher. The indices come from a
    :func:`range_input_producer` (its queue and runner registered here).
    ValueError for an empty list or a tensor of rank 0.
    """
    if not tensor_list:
        raise ValueError("Expected at least one tensor in slice_input_producer().")
    inferred = [_infer_component(t) for t in tensor_list]
    args = ([v for _, v in inferred], [d.as_datatype_enum for d, _ in inferred]) + _producer_args(
        num_epochs, shuffle, seed, capacity, shared_name, name)
    return _native(lambda: _build(_core.slice_input_producer, *args), _Structure("list", size=len(inferred)))


def limit_epochs(tensor, num_epochs=None, name=None):
    """A producer that yields `tensor` `num_epochs` times, then raises OutOfRangeError (``tf.train.limit_epochs``).

    `tensor`: a value (array, scalar, bytes) or a producer (a
    :class:`NativeProducer`, whose first `num_epochs` calls pass through).
    num_epochs None: unlimited. The count is shared by every thread that
    calls it. Returns a :class:`NativeProducer`. ValueError for
    num_epochs <= 0.
    """
    del name
    epochs = _opt_int(num_epochs, "num_epochs")
    if isinstance(tensor, NativeProducer):
        return _native(lambda: _build(_core.limit_epochs_producer, tensor.core, epochs), tensor._structure)
    dtype, value = _infer_component(tensor)
    return _native(lambda: _build(_core.limit_epochs_value, [value], [dtype.as_datatype_enum], epochs),
                   _Structure("single"))


def match_filenames_once(pattern, name=None):
    """The files matching `pattern` (a glob or a list of them), sorted (``tf.train.match_filenames_once``).

    Evaluated here, once. A pattern is a str, bytes or os.PathLike (a
    file name need not be UTF-8). Returns a list of bytes, which
    :func:`string_input_producer` takes.
    """
    del name
    patterns = [pattern] if isinstance(pattern, (bytes, str, os.PathLike)) else list(pattern)
    return _core.match_filenames_once(patterns)  # str, bytes or os.PathLike each, as os.fsencode takes them


# ---- batchers --------------------------------------------------------------------------------

class BatchQueue:
    """The output of a batcher: ``dequeue()`` returns the next batch.

    A batch has the example's structure (a single array, a list, or a dict
    with sorted keys, as TensorFlow's batch returns; as there, the batch of
    a one-tensor list is a bare array), every component with a leading
    batch dimension; numpy arrays viewing the engine's buffers
    (object arrays of bytes for strings). ``batches()`` iterates batches to
    the end of the input.

    As TF's batch result, it unpacks into its components without dequeuing
    anything: ``images, labels = sluice.train.batch([image, label], ...)``
    gives two :class:`BatchComponent` handles, and
    ``sess.run([images, labels])`` dequeues one batch for both (a dict
    result: ``batch["image"]``). Thread-safe.
    """

    def __init__(self, core, structure):
        self._core = core
        self._structure = structure
        self._graph = _graph.get_default_graph()
        self._lazy = None
        self._layout = None

    def _bind_core(self, core):
        self._core = core

    def _drop_core(self):
        self._core = None
        if self._lazy is not None:
            self._lazy.new_run()
            self._layout = None

    # -- batches

    def _components(self, timeout=None):
        """The next batch as a flat list of components."""
        if self._core is None and self._lazy is not None:
            timeout = self._lazy.wait_built(timeout)
        if self._graph._runners_pending:
            return _graph.wait_warning_if_stalled(self._graph, "dequeue of batch queue '%s'" % self.name,
                                                  self._core.dequeue, timeout)
        return self._core.dequeue(timeout)

    def _pack(self, components):
        if self._layout is not None:  # SparseTensors packed one per string: one batched SparseTensor each
            return _sparse_batch.unpack(components, self._layout)
        if self._structure.kind == "list" and self._structure.size == 1:
            # TF's batch of a one-tensor list is that tensor, not a list
            # (its dequeue_many of one component; input.py's b/28117485).
            return components[0]
        return self._structure.pack(components)

    def dequeue(self, timeout=None):
        """The next batch. Blocks (without the GIL; Ctrl-C interrupts on the main thread).

        Raises OutOfRangeError after the last batch (also once a
        Coordinator stop has closed the queue and it is drained),
        DeadlineExceededError after `timeout` seconds. If it blocks for
        seconds while runners of its graph were never started, a warning
        says so (logger ``sluice.train``).
        """
        return self._pack(self._components(timeout))

    __call__ = dequeue

    def batches(self):
        """Batches until the end of the input (OutOfRangeError ends the iteration)."""
        while True:
            try:
                yield self.dequeue()
            except errors.OutOfRangeError:
                return

    # -- components (TF's unpacking of the batch tensors)

    def _known_structure(self):
        if self._structure is None:
            raise TypeError("The structure of this batch is known only once its Python producer has run "
                            "(no dtypes or shapes were given): pass dtypes= or shapes= to unpack the batcher's "
                            "result, or unpack what dequeue() returns")
        return self._structure

    def __len__(self):
        structure = self._known_structure()
        if structure.kind == "single":
            raise TypeError("A batch of one tensor has no components: call dequeue() (or sess.run) for the batch")
        return structure.size

    def __iter__(self):
        """The components (list structure) or keys (dict structure), as TF's result unpacks; dequeues nothing."""
        structure = self._known_structure()
        if structure.kind == "dict":
            return iter(structure.keys)
        if structure.kind == "single" or structure.size == 1:
            raise TypeError("A batch of one tensor is not iterable: call dequeue() for the next batch, or "
                            "iterate batches() to the end of the input")
        return iter([BatchComponent(self, i, None) for i in range(structure.size)])

    def __getitem__(self, key):
        """One component: an index (list structure) or a key (dict structure)."""
        structure = self._known_structure()
        if structure.kind == "dict":
            if key not in structure.keys:
                raise KeyError(key)
            return BatchComponent(self, structure.keys.index(key), key)
        if structure.kind == "single" or structure.size == 1:
            raise TypeError("A batch of one tensor has no components: call dequeue() for the batch")
        index = operator.index(key)
        if not -structure.size <= index < structure.size:
            raise IndexError("batch component index %d out of range" % index)
        return BatchComponent(self, index % structure.size, None)

    def keys(self):
        """The component names of a dict-structured batch."""
        structure = self._known_structure()
        if structure.kind != "dict":
            raise TypeError("only a batch of a dict has keys")
        return list(structure.keys)

    @property
    def queue(self):
        """The queue of examples (a sluice.queue queue: size(), name, ...)."""
        if self._core is None and self._lazy is not None:
            self._lazy.wait_built(None)
        return _wrap_queue(self._core.queue)

    @property
    def batch_size(self):
        return self._batch_size if self._core is None else self._core.batch_size

    @property
    def name(self):
        """The queue's name."""
        if self._core is None:
            return self._name
        return self._core.queue.name

    def __repr__(self):
        return "<sluice.train.BatchQueue %r batch_size=%d>" % (self.name, self.batch_size)


class BatchComponent:
    """One component of a batcher's output, as TF's unpacked batch tensors.

    ``sess.run([images, labels])`` (:meth:`sluice.train.Session.run`)
    dequeues one batch of their :class:`BatchQueue` and returns both
    components of it; ``eval()`` dequeues a whole batch for this component
    alone (the rest of that batch is dropped, as evaluating one TF batch
    tensor does).
    """

    def __init__(self, batch_queue, index, key):
        self.batch_queue = batch_queue
        self.index = index
        self.key = key

    def eval(self, session=None, timeout=None):
        """This component of the next batch."""
        del session
        return self._select(self.batch_queue._pack(self.batch_queue._components(timeout)))

    def _select(self, batch):
        return batch[self.key] if self.key is not None else batch[self.index]

    def __repr__(self):
        what = repr(self.key) if self.key is not None else self.index
        return "<sluice.train.BatchComponent %s of %r>" % (what, self.batch_queue.name)


def _run_fetches(fetches):
    """Session.run's evaluation: each BatchQueue of `fetches` dequeued once, its components shared."""
    batches = {}

    def batch_of(bq):
        key = id(bq)
        if key not in batches:
            batches[key] = (bq, bq._pack(bq._components()))
        return batches[key][1]

    def fetch(f):
        if isinstance(f, BatchComponent):
            return f._select(batch_of(f.batch_queue))
        if isinstance(f, BatchQueue):
            return batch_of(f)
        if isinstance(f, dict):
            return {k: fetch(v) for k, v in f.items()}
        if isinstance(f, (list, tuple)):
            values = [fetch(v) for v in f]
            return values if isinstance(f, list) else (type(f)(*values) if hasattr(f, "_fields") else tuple(values))
        if callable(f):
            return f()
        return f

    return fetch(fetches)


def _signature_of(example, structure, dtypes, shapes, enqueue_many, dynamic_pad):
    """(flat dtypes, flat shapes) of a first example; given `dtypes`/`shapes` (flat lists or None) win."""
    values = structure.flatten(example)

    def dtype_of(v):
        if isinstance(v, SparseTensor):  # batched as one SparseTensor (sluice._sparse_batch)
            rank = len(v.dense_shape) - (1 if enqueue_many else 0)
            return _sparse_batch.SparseTensorSpec([None] * rank, _dtypes.as_dtype(v.values.dtype))
        return _infer_component(v)[0]

    flat_dtypes = dtypes if dtypes is not None else [dtype_of(v) for v in values]
    if shapes is not None:
        return flat_dtypes, shapes
    flat_shapes = []
    for i, v in enumerate(values):
        if isinstance(v, SparseTensor):
            flat_shapes.append(None)
            continue
        shape = tuple(np.shape(v)) if not isinstance(v, (bytes, str)) else ()
        if enqueue_many:
            if not shape:
                raise errors.InvalidArgumentError(
                    None, None, "enqueue_many=True: component %s of the producer's first batch is a scalar, it "
                    "needs a leading batch dimension" % _component_name(structure, i))
            shape = shape[1:]
        flat_shapes.append(tuple(None for _ in shape) if dynamic_pad else shape)
    return flat_dtypes, flat_shapes


def _component_name(structure, i):
    return "%d (%r)" % (i, structure.keys[i]) if structure.kind == "dict" else str(i)


def _python_producer(fn, structure, dtypes, shapes, enqueue_many, keep, inferred=False, first=None, layout=None):
    """A _core.Producer calling `fn` (and filtering with `keep`, a callable or None).

    One call of `fn` per call: an example that `keep` rejects (or a batch with
    no row kept) returns None, a skipped step for the C++ runner thread,
    which then checks for a stop before it calls again (TF: keep_input=False
    is one no-op run of the enqueue op). StopIteration from `fn` ends the
    input as OutOfRangeError does. `inferred`: `dtypes`/`shapes` were taken
    from the first example, and a later example must match them
    (InvalidArgumentError naming the component). `first`: a list holding an
    example already produced, returned by the first call. `layout`: the
    SparseTensor components to pack into strings (sluice._sparse_batch).
    """
    checked = [s is not None and all(d is not None for d in s) for s in shapes] if inferred else None

    def check(values):
        for i, (v, d, s) in enumerate(zip(values, dtypes, shapes)):
            dtype = _infer_component(v)[0]
            if dtype != d:
                raise errors.InvalidArgumentError(
                    None, None, "the producer's component %s is %s, but the first example's was %s: every "
                    "example of a batcher must have the first one's dtypes (or pass dtypes=)"
                    % (_component_name(structure, i), dtype.name, d.name))
            shape = () if isinstance(v, (bytes, str)) else tuple(np.shape(v))
            if enqueue_many:
                shape = shape[1:]
            if checked[i] and shape != tuple(s):
                raise errors.InvalidArgumentError(
                    None, None, "the producer's component %s has shape %s, but the first example's was %s: "
                    "pass shapes= with None for the dimensions that vary (and dynamic_pad=True)"
                    % (_component_name(structure, i), shape, tuple(s)))

    def call():
        try:
            example = first.pop() if first else fn()
            values = structure.flatten(example)
            if layout is not None:
                values = _sparse_batch.pack_python(values, layout, enqueue_many)
            if inferred:
                check(values)
            components = [_queue._to_component(c, d) for c, d in zip(values, dtypes)]
            if keep is None:
                return components
            kept = keep(example)
            if not enqueue_many:
                return components if kept else None
            mask = np.asarray(kept, dtype=bool).reshape(-1)
            if mask.all():
                return components
            if mask.any():
                return [np.ascontiguousarray(c[mask]) for c in components]
            return None
        except errors.OutOfRangeError:
            raise
        except StopIteration:
            raise errors.OutOfRangeError(None, None, "the producer raised StopIteration: end of its input") from None
        except BaseException as e:
            _stash_exception(e)
            raise

    return _core.python_producer(call, [d.as_datatype_enum for d in dtypes], [_core_shape(s) for s in shapes])


class _LazyBatcher:
    """The runner of a batcher whose Python producer's dtypes or shapes were not given.

    Its thread (started by start_queue_runners) calls the first producer
    once, takes the example's structure, dtypes and shapes, builds the C++
    batcher (whose producers return that example first) and starts its
    threads with the same Coordinator, then waits for them, so that
    ``coord.join`` waits for them too. Listed by get_queue_runners.
    """

    def __init__(self, batch_queue, build, producers, dtypes, shapes, enqueue_many, dynamic_pad):
        self._bq = batch_queue
        self._build = build  # (structure, flat dtypes, flat shapes, first) -> _core.BatchQueue
        self._producers = producers
        self._dtypes = dtypes
        self._shapes = shapes
        self._enqueue_many = enqueue_many
        self._dynamic_pad = dynamic_pad
        self._cond = threading.Condition()
        self.new_run()

    def new_run(self):
        with self._cond:
            self._run = object()
            self._started = False
            self._built = False
            self._failure = None
            self._registry = None  # the built batcher's runner, kept for the run
            self._cond.notify_all()

    @property
    def name(self):
        return self._bq._name

    @property
    def queue(self):
        return self._bq.queue

    @property
    def enqueue_ops(self):
        return self._producers

    @property
    def exceptions_raised(self):
        return []

    @property
    def has_run(self):
        return self._started

    @property
    def running(self):
        return self._started  # its thread lives as long as the batcher it built

    @property
    def input_exhausted(self):
        return True

    def create_threads(self, sess=None, coord=None, daemon=False, start=False):
        del sess
        with self._cond:
            if self._started:
                return []
            self._started = True
            run = self._run
        thread = threading.Thread(target=self._bootstrap, args=(coord, run), daemon=daemon,
                                  name="QueueRunnerThread-%s-first_example" % self.name)
        if coord:
            coord.register_thread(thread)
        if start:
            thread.start()
        return [thread]

    def _finish(self, run, failure=None, core=None, registry=None):
        with self._cond:
            if run is not self._run:
                return False  # a new run began meanwhile
            self._failure = failure
            self._registry = registry
            if core is not None:
                self._bq._bind_core(core)
            self._built = True
            self._cond.notify_all()
            return True

    def _bootstrap(self, coord, run):
        try:
            example = self._producers[0]()
        except (errors.OutOfRangeError, StopIteration):
            self._finish(run, errors.OutOfRangeError(None, None, "batch queue '%s': the producer's input ended "
                                                     "before its first example" % self.name))
            return
        except BaseException as e:  # noqa: BLE001 - reported like any producer's exception
            self._finish(run, errors.CancelledError(None, None, "batch queue '%s' stopped: its producer "
                                                    "failed on the first example" % self.name))
            if coord:
                coord.request_stop(e)
            return
        try:
            structure = self._bq._structure or _Structure.of(example)
            flat_dtypes = None if self._dtypes is None else [
                d if _sparse_batch._is_spec(d) else _dtypes.as_dtype(d)
                for d in structure.flatten_template(self._dtypes, "dtypes")]
            flat_shapes = None if self._shapes is None else structure.flatten_template(self._shapes, "shapes")
            flat_dtypes, flat_shapes = _signature_of(example, structure, flat_dtypes, flat_shapes,
                                                     self._enqueue_many, self._dynamic_pad)
            layout = _sparse_batch.describe_python(structure, flat_dtypes, flat_shapes)
            if layout is not None:
                flat_dtypes, flat_shapes = layout.dtypes, layout.shapes
            registry = _core.QueueRunnerRegistry()
            _core.push_registry(registry)
            try:
                core = self._build(structure, flat_dtypes, flat_shapes, [example], layout)
            finally:
                _core.pop_registry()
        except BaseException as e:  # noqa: BLE001
            self._finish(run, errors.CancelledError(None, None, "batch queue '%s' stopped: %s" % (self.name, e)))
            if coord:
                coord.request_stop(e)
            return
        self._bq._structure = structure
        self._bq._layout = layout
        if not self._finish(run, core=core, registry=registry):
            return
        threads = registry.start(coord.core if coord is not None else None, True)
        for t in threads:
            t.join()

    def wait_built(self, timeout):
        """Waits until the batcher is built in this run; returns the timeout left (None: none)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        warned = False
        with self._cond:
            while not self._built:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise errors.DeadlineExceededError(None, None, "Timed out waiting for the batch queue '%s'"
                                                       % self.name)
                wait = _graph.STALL_WARNING_SECS if left is None else min(left, _graph.STALL_WARNING_SECS)
                if not self._cond.wait(wait) and not warned and not self._started and deadline is None:
                    warned = True
                    _logger.warning(
                        "dequeue of batch queue '%s' has blocked for %g s, and its runner was never started: call "
                        "sluice.train.start_queue_runners(coord=coord) after building the pipeline and before "
                        "reading from it. Still waiting.", self.name, _graph.STALL_WARNING_SECS)
            if self._failure is not None:
                raise self._failure
        return None if deadline is None else max(0.0, deadline - time.monotonic())


def _batch_queue(recipe, structure, layout=None):
    """A BatchQueue built by `recipe` in the default graph (and rebuilt at each new run of it).

    `layout`: the SparseTensors packed into string components (sluice._sparse_batch), if any;
    the batch's structure is then the layout's (a sparse feature's three parts are one key).
    """
    bq = BatchQueue.__new__(BatchQueue)
    bq._layout = layout
    if layout is not None:
        structure = (_Structure("dict", keys=layout.keys) if layout.kind == "dict"
                     else _Structure(layout.kind, size=layout.size))
    bq._structure = structure
    bq._lazy = None
    return _graph.track(bq, recipe)


def _as_producer(p):
    """A batcher's `tensors` as a producer: a BatchQueue or a queue (or its dequeue method) is a native one."""
    if isinstance(p, BatchQueue):
        if p._core is None:
            raise ValueError("a batch queue whose Python producer's dtypes were not given cannot feed another "
                             "batcher: pass dtypes= and shapes= to the inner batcher")
        return _native(lambda: _core.batch_producer(p._core), p._structure)
    if isinstance(p, _queue.QueueBase):
        return dequeue_producer(p)
    if getattr(p, "__name__", None) == "dequeue" and isinstance(getattr(p, "__self__", None), _queue.QueueBase):
        return dequeue_producer(p.__self__)
    return p


def _keep_input(keep_input, enqueue_many):
    """(callable or None, constant truth value) for a batcher's `keep_input`.

    As TF's _validate_keep_input: a bool (or 0-d value) is constant; a
    vector is a per-row mask of every enqueue_many batch (ValueError without
    enqueue_many); a callable is called with each example (or batch). TF
    feeds keep_input to a bool-only op (cond's Switch, or a cast to a 0/1
    partition index), so a constant must be bools (or Python's 0/1), and a
    callable must return them: TypeError for a constant of another dtype
    (float, string: TF would test its truth or fail at run time; NaN is
    true), InvalidArgumentError from the pipeline for a callable's result.
    """
    if callable(keep_input):
        return _checked_keep(keep_input, enqueue_many), True
    if isinstance(keep_input, bool) or (type(keep_input) is int and keep_input in (0, 1)):
        return None, bool(keep_input)
    mask = np.asarray(keep_input)
    if mask.dtype != np.bool_:
        raise TypeError("`keep_input` must be a bool or a vector of bools, not %s of dtype %s"
                        % (type(keep_input).__name__, mask.dtype))
    if mask.ndim == 0:
        return None, bool(mask)
    if mask.ndim > 1:
        raise ValueError("`keep_input` must be 0 or 1 dimensions.")
    if not enqueue_many:
        raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
    return (lambda batch: mask), True


def _describe_keep(value):
    if isinstance(value, np.ndarray):
        return "an array of dtype %s" % value.dtype
    return type(value).__name__


def _checked_keep(predicate, enqueue_many):
    """`predicate` (a keep_input callable) returning only bools.

    Anything else raises InvalidArgumentError naming keep_input, which stops
    the pipeline as TF's "Input 'pred' passed float expected bool" does.
    """
    def keep(example):
        kept = predicate(example)
        if enqueue_many:
            mask = np.asarray(kept)
            if mask.dtype != np.bool_:
                raise errors.InvalidArgumentError(
                    None, None, "keep_input must return bools (one per example of the batch), not %s"
                    % _describe_keep(kept))
            return mask
        if isinstance(kept, (bool, np.bool_)) or (isinstance(kept, np.ndarray) and kept.shape == ()
                                                   and kept.dtype == np.bool_):
            return bool(kept)
        raise errors.InvalidArgumentError(None, None, "keep_input must return a bool, not %s" % _describe_keep(kept))

    return keep


def _batcher(kind, fn_name, producers, join, keep_input, batch_size, num_threads, capacity, enqueue_many,
             shapes, dtypes, dynamic_pad, allow_smaller_final_batch, shared_name, name, min_after_dequeue=0,
             seed=None):
    if join:
        producers = list(producers)
        if not producers:
            raise ValueError("Expected at least one set of tensors")
    else:
        producers = [producers]
    producers = [_as_producer(p) for p in producers]
    keep, constant_keep = _keep_input(keep_input, enqueue_many)
    options = dict(batch_size=_as_int(batch_size, "batch_size"), num_threads=_as_int(num_threads, "num_threads"),
                   capacity=_as_int(capacity, "capacity"), enqueue_many=bool(enqueue_many),
                   dynamic_pad=bool(dynamic_pad), allow_smaller_final_batch=bool(allow_smaller_final_batch),
                   shared_name=shared_name or "", name=name or "",
                   min_after_dequeue=_as_int(min_after_dequeue, "min_after_dequeue"), seed=_opt_int(seed, "seed"))

    def new_batcher(cores, flat_dtypes, flat_shapes):
        if len(flat_shapes) != len(flat_dtypes):
            raise ValueError("%s: %d shapes for %d components" % (fn_name, len(flat_shapes), len(flat_dtypes)))
        signature = dict(dtypes=[d.as_datatype_enum for d in flat_dtypes], shapes=[_core_shape(s) for s in flat_shapes])
        return _build(lambda: _core.new_batcher(kind, cores, join, constant_keep,
                                                _core.BatchOptions(**options, **signature)))

    natives = [p for p in producers if isinstance(p, NativeProducer)]
    if natives and len(natives) != len(producers):
        raise TypeError("%s: the producers must be all native or all Python callables" % fn_name)
    if natives:
        structure = natives[0]._structure
        flat_dtypes = natives[0].dtypes
        for p in natives[1:]:
            if p.dtypes != flat_dtypes:  # TF: "Expected types to be consistent"
                raise TypeError("%s: the producers yield different dtypes: %s and %s"
                                 % (fn_name, [d.name for d in flat_dtypes], [d.name for d in p.dtypes]))
        if dtypes is not None and [_dtypes.as_dtype(d) for d in structure.flatten_template(dtypes, "dtypes")] \
                != flat_dtypes:
            raise ValueError("%s: dtypes %s do not match the producer's %s" % (fn_name, dtypes, flat_dtypes))
        if shapes is not None:
            flat_shapes = structure.flatten_template(shapes, "shapes")
        elif enqueue_many:
            # The producer yields batches: an example is a batch's row (TF
            # takes the shapes of the enqueue_many inputs less dimension 0).
            flat_shapes = []
            for s in natives[0].shapes:
                if s is not None and len(s) == 0:
                    raise ValueError("%s: enqueue_many=True needs components of rank >= 1; the producer's "
                                     "shapes are %s" % (fn_name, natives[0].shapes))
                flat_shapes.append(None if s is None else s[1:])
        else:
            flat_shapes = natives[0].shapes
        if keep is not None:
            natives = [p.map_filter_rows(keep) if enqueue_many else p.map_filter(keep) for p in natives]
        packed = [_sparse_batch.pack_native(p, enqueue_many=enqueue_many) for p in natives]
        layout = packed[0][1]
        if any(other != layout for _, other in packed[1:]):
            raise ValueError("%s: Inconsistent SparseTensors list" % fn_name)
        if layout is None:
            def cores():
                return [p.core for p in natives]
        else:  # each sparse feature packed into one string, in C++ (no GIL)
            flat_dtypes, flat_shapes = layout.dtypes, layout.packed_shapes(flat_shapes)

            def cores():
                return [_sparse_batch.pack_native(p, enqueue_many=enqueue_many)[0] for p in natives]
        return _batch_queue(lambda: new_batcher(cores(), flat_dtypes, flat_shapes), structure, layout)
    for p in producers:
        if not callable(p):
            raise TypeError("%s: a producer must be a callable, a NativeProducer, a BatchQueue or a queue, not %s"
                            % (fn_name, type(p).__name__))
    template = dtypes if dtypes is not None else shapes
    structure = None if template is None else _Structure.of(template)
    if dtypes is not None and shapes is not None:
        flat = structure.flatten_template(dtypes, "dtypes")
        flat_shapes = structure.flatten_template(shapes, "shapes")
        layout = _sparse_batch.describe_python(structure, flat, flat_shapes)
        if layout is None:
            flat_dtypes = [_dtypes.as_dtype(d) for d in flat]
        else:  # SparseTensorSpec components: packed one per string
            flat_dtypes, flat_shapes = layout.dtypes, layout.shapes
        return _batch_queue(lambda: new_batcher(
            [_python_producer(p, structure, flat_dtypes, flat_shapes, enqueue_many, keep, layout=layout)
             for p in producers], flat_dtypes, flat_shapes), structure, layout)
    # dtypes or shapes missing: taken from the first example, on a runner thread (as TF infers them).
    bq = BatchQueue.__new__(BatchQueue)
    bq._structure = structure
    bq._name = name or "%s_queue" % fn_name
    bq._batch_size = options["batch_size"]

    def build(structure, flat_dtypes, flat_shapes, first, layout):
        return new_batcher([_python_producer(p, structure, flat_dtypes, flat_shapes, enqueue_many, keep,
                                             inferred=True, first=first if i == 0 else None, layout=layout)
                            for i, p in enumerate(producers)], flat_dtypes, flat_shapes)

    bq._lazy = _LazyBatcher(bq, build, producers, dtypes, shapes, bool(enqueue_many), bool(dynamic_pad))
    _graph.track(bq, lambda: None)
    from sluice import train  # noqa: PLC0415 - train imports this module
    train.add_queue_runner(bq._lazy)
    return bq


_BATCH_ARGS_DOC = """
    `tensors` (TF's name) is the producer: a Python callable returning one
    example (a tensor, list/tuple or dict of them) or, with enqueue_many, a
    batch of examples along dimension 0; or a :class:`NativeProducer`. The
    callable is called only on the runner threads, from
    ``start_queue_runners`` on, concurrently when num_threads > 1 (so it
    must be thread-safe); raising OutOfRangeError ends its thread, and the
    last thread to end closes the queue. Any other exception stops the
    Coordinator, and ``coord.join()`` re-raises it. For a Python callable,
    `dtypes` and `shapes` (one example's, in its structure) are required;
    a native producer supplies them (with enqueue_many, its shapes less
    the leading dimension; `shapes` may still override).
    Returns a :class:`BatchQueue`. ValueError for bad arguments (TF's
    checks: batch_size, capacity, shapes not fully defined without
    dynamic_pad, capacity <= min_after_dequeue, ...).
"""


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
          allow_smaller_final_batch=False, shared_name=None, name=None, *, dtypes=None):
    """Batches examples in a FIFO queue (``tf.train.batch``).

    `num_threads` C++ threads call the producer and enqueue into a queue of
    `capacity` examples (a PaddingFIFOQueue with `dynamic_pad`, which pads
    each batch's unknown dimensions to its longest example); ``dequeue()``
    returns `batch_size` examples, in order. At the end, the final short
    batch is dropped unless `allow_smaller_final_batch`.
    """
    return _batcher("batch", "batch", tensors, False, True, batch_size, num_threads, capacity, enqueue_many,
                    shapes, dtypes, dynamic_pad, allow_smaller_final_batch, shared_name, name)


def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
                dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None, *, dtypes=None):
    """``batch`` of the examples that `keep_input` accepts (``tf.train.maybe_batch``).

    `keep_input`: a bool; with enqueue_many, a vector of bools (a mask
    applied to every batch the producer yields); or a callable of one
    example returning a bool (with enqueue_many, of the batch returning one
    bool per example, as TF's vector keep_input). The callable runs on the
    runner threads with the GIL. ValueError for a vector without
    enqueue_many or a keep_input of rank 2 or more, as in TF; TypeError for
    a constant that is not bools, and InvalidArgumentError (stopping the
    pipeline) for a callable that returns something else.
    """
    return _batcher("batch", "maybe_batch", tensors, False, keep_input, batch_size, num_threads, capacity,
                    enqueue_many, shapes, dtypes, dynamic_pad, allow_smaller_final_batch, shared_name, name)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
               allow_smaller_final_batch=False, shared_name=None, name=None, *, dtypes=None):
    """``batch`` with one thread per producer of `tensors_list` (``tf.train.batch_join``).

    Each producer's examples keep their order; producers of the same
    structure and dtypes (e.g. one reader each, to read files in parallel).
    """
    return _batcher("batch", "batch_join", tensors_list, True, True, batch_size, 1, capacity, enqueue_many,
                    shapes, dtypes, dynamic_pad, allow_smaller_final_batch, shared_name, name)


def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False, shapes=None,
                     dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None, *,
                     dtypes=None):
    """``batch_join`` of the examples that `keep_input` accepts (``tf.train.maybe_batch_join``)."""
    return _batcher("batch", "maybe_batch_join", tensors_list, True, keep_input, batch_size, 1, capacity,
                    enqueue_many, shapes, dtypes, dynamic_pad, allow_smaller_final_batch, shared_name, name)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None, enqueue_many=False,
                  shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None, *, dtypes=None):
    """Batches examples drawn at random from a RandomShuffleQueue (``tf.train.shuffle_batch``).

    While the input lasts, every dequeue leaves at least
    `min_after_dequeue` examples to mix with. With one thread, a
    deterministic producer and a `seed`, the batches are reproducible.
    """
    return _batcher("shuffle_batch", "shuffle_batch", tensors, False, True, batch_size, num_threads, capacity,
                    enqueue_many, shapes, dtypes, False, allow_smaller_final_batch, shared_name, name,
                    min_after_dequeue, seed)


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input, num_threads=1, seed=None,
                        enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None,
                        name=None, *, dtypes=None):
    """``shuffle_batch`` of the examples that `keep_input` accepts (``tf.train.maybe_shuffle_batch``)."""
    return _batcher("shuffle_batch", "maybe_shuffle_batch", tensors, False, keep_input, batch_size, num_threads,
                    capacity, enqueue_many, shapes, dtypes, False, allow_smaller_final_batch, shared_name, name,
                    min_after_dequeue, seed)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None, enqueue_many=False,
                       shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None, *,
                       dtypes=None):
    """``shuffle_batch`` with one thread per producer (``tf.train.shuffle_batch_join``)."""
    return _batcher("shuffle_batch", "shuffle_batch_join", tensors_list, True, True, batch_size, 1, capacity,
                    enqueue_many, shapes, dtypes, False, allow_smaller_final_batch, shared_name, name,
                    min_after_dequeue, seed)


def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, keep_input, seed=None,
                             enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None,
                             name=None, *, dtypes=None):
    """``shuffle_batch_join`` of the examples that `keep_input` accepts (``tf.train.maybe_shuffle_batch_join``)."""
    return _batcher("shuffle_batch", "maybe_shuffle_batch_join", tensors_list, True, keep_input, batch_size, 1,
                    capacity, enqueue_many, shapes, dtypes, False, allow_smaller_final_batch, shared_name, name,
                    min_after_dequeue, seed)


for _fn in (batch, maybe_batch, batch_join, maybe_batch_join, shuffle_batch, maybe_shuffle_batch,
            shuffle_batch_join, maybe_shuffle_batch_join):
    _fn.__doc__ += _BATCH_ARGS_DOC
del _fn


# ---- observability ------------------------------------------------------------------------------

def all_queue_stats():
    """A snapshot of every live queue in the process, in creation order.

    One dict per queue: ``id``, ``name``, ``type``, ``capacity``,
    ``min_after_dequeue``, ``size``, ``fraction_full`` (TensorFlow's
    fraction_of_<capacity>_full; 0 when unbounded),
    ``fraction_over_min_full`` (shuffle_batch's summary), ``enqueued`` and
    ``dequeued`` (elements, over the queue's life) and ``closed``.
    Thread-safe; does not hold the GIL while it reads the queues.
    """
    return _core.all_queue_stats()


class QueueMonitor:
    """Samples every queue of the process over time (a C++ ``train::QueueMonitor``).

    ``start()`` runs a C++ sampling thread (no GIL) every `interval_secs`;
    ``sample()`` takes one sample now. ``series()`` returns, per live queue,
    its latest `history` points (``time`` in seconds from the first kept
    point, ``size``, ``fraction_full``, ``enqueued``, ``dequeued``,
    ``closed``) with ``enqueue_rate`` and ``dequeue_rate`` (elements per
    second over those points) and ``mean_fraction_full``; ``report()`` a
    table. Usable as a context manager (starts, then stops). Thread-safe.
    ValueError for interval_secs <= 0 or history < 2.
    """

    def __init__(self, interval_secs=1.0, history=60):
        self._core = _build(_core.QueueMonitor, float(interval_secs), _as_int(history, "history"))

    def start(self):
        """Starts the sampling thread (FailedPreconditionError if started before)."""
        self._core.start()

    def stop(self):
        """Stops the sampling thread and waits for it."""
        self._core.stop()

    def sample(self):
        """Takes one sample now."""
        self._core.sample()

    def series(self):
        """Per live queue (in creation order), a dict of its points and rates."""
        return self._core.series()

    def report(self):
        """A table: one line per queue (size/capacity, fill, rates, closed)."""
        return self._core.report()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.stop()


__all__ = ["NativeProducer", "BatchQueue", "BatchComponent", "QueueMonitor", "read_producer", "read_up_to_producer",
           "dequeue_producer", "input_producer", "string_input_producer", "range_input_producer",
           "slice_input_producer", "limit_epochs", "match_filenames_once", "batch", "maybe_batch", "batch_join",
           "maybe_batch_join", "shuffle_batch", "maybe_shuffle_batch", "shuffle_batch_join",
           "maybe_shuffle_batch_join", "all_queue_stats"]

"""Queues with TensorFlow's semantics, run eagerly (``tf.queue``).

``FIFOQueue``, ``RandomShuffleQueue``, ``PaddingFIFOQueue`` and
``PriorityQueue`` take TensorFlow's arguments and have its methods. Every
operation runs at once in the C++ engine; the blocking ones (enqueue,
dequeue, close) release the GIL while they wait, accept ``timeout=`` in
seconds (:class:`sluice.errors.DeadlineExceededError` when it passes) and,
on the main thread, give way to Ctrl-C (KeyboardInterrupt). A single
enqueue or dequeue that need not wait keeps the GIL, as queue.Queue does.

Values go in as scalars, (nested) lists, numpy arrays, bytes/str for string
components, or a dict for a queue with names; they are copied in. They come
out as numpy arrays viewing the engine's buffers without a copy (0-d arrays
for scalars; bytes for string scalars, object arrays of bytes for other
string tensors): a bare value for a one-component queue, a list for
several, a dict when the queue has names.

As in TensorFlow, a list or tuple passed to ``enqueue`` is the tuple of
components (``q.enqueue(([1, 2, 3],))`` enqueues one vector into a
one-component queue). A wrong number of components raises
InvalidArgumentError ("Wrong number of components in tuple"), where
TensorFlow's Python layer would silently drop extra values.

Conversion follows TensorFlow's: numpy arrays and scalars are cast to the
component's dtype (``astype``: 1.5 becomes 1 in an int32 queue, 300
becomes 44 in an int8 one); Python values must be of a fitting kind (a
bool or int for an integer dtype, any real number for a float one). Unlike
TensorFlow, a Python int outside the dtype's range is a TypeError rather
than silently wrapped.

Errors TensorFlow raises while building its graph (bad arguments, values of
the wrong type or static shape) are raised here as ValueError/TypeError at
the call; errors of running operations are :mod:`sluice.errors` exceptions.
Unlike TensorFlow, a dequeue_many that times out puts the elements it held
back at the front of the queue.
"""

import builtins
import operator
import warnings

import numpy as np

from sluice import _core
from sluice import _graph
from sluice import dtypes as _dtypes
from sluice import errors

_INT32_MAX = 2**31 - 1
_DEFAULT_GRAPH_SEED = 87654321


# ---- argument normalisation (TensorFlow's data_flow_ops helpers) ------------

def _as_type_list(dtypes):
    """A dtype or a list/tuple of them -> list of DType."""
    assert dtypes is not None
    if not isinstance(dtypes, (list, tuple)):
        dtypes = [dtypes]
    return [_dtypes.as_dtype(d) for d in dtypes]


def _is_dim(x):
    return x is None or (isinstance(x, (int, np.integer)) and not isinstance(x, bool))


def _as_shape(shape):
    """A shape-like (tuple/list of int or None; None = unknown rank) -> tuple or None."""
    if shape is None:
        return None
    if _is_dim(shape):
        return (None if shape is None else int(shape),)
    try:
        dims = list(shape)
    except TypeError:
        raise TypeError("Cannot convert %r to a shape." % (shape,)) from None
    out = []
    for d in dims:
        if not _is_dim(d):
            raise TypeError("Cannot convert %r to a shape: dimension %r is not an int or None." % (shape, d))
        if d is not None and d < 0:
            raise ValueError("Dimension %d must be >= 0" % d)
        out.append(None if d is None else int(d))
    return tuple(out)


def _shape_str(shape):
    if shape is None:
        return "<unknown>"
    dims = ["None" if d is None else str(d) for d in shape]
    return "(%s,)" % dims[0] if len(dims) == 1 else "(%s)" % ", ".join(dims)


def _is_fully_defined(shape):
    return shape is not None and all(d is not None for d in shape)


def _as_shape_list(shapes, unknown_dim_allowed=False, unknown_rank_allowed=False):
    """TensorFlow's _as_shape_list: None, one shape, or a list of shapes."""
    if unknown_dim_allowed:
        if (not isinstance(shapes, (list, tuple)) or not shapes
                or any(shape is None or _is_dim(shape) for shape in shapes)):
            raise ValueError("When providing partial shapes, a list of shapes must be provided.")
    if shapes is None:
        return None
    if not isinstance(shapes, (tuple, list)):
        raise TypeError("Shapes must be a TensorShape or a list or tuple of TensorShapes, "
                        "got %s instead." % type(shapes))
    if all(_is_dim(shape) for shape in shapes):
        shapes = [shapes]  # a single shape
    shapes = [_as_shape(shape) for shape in shapes]
    if not unknown_dim_allowed and any(not _is_fully_defined(s) for s in shapes):
        raise ValueError("All shapes must be fully defined: %s" % [_shape_str(s) for s in shapes])
    if not unknown_rank_allowed and any(s is None for s in shapes):
        raise ValueError("All shapes must have a defined rank: %s" % [_shape_str(s) for s in shapes])
    return shapes


def _as_name_list(names, dtypes):
    if names is None:
        return None
    if not isinstance(names, (list, tuple)):
        names = [names]
    if len(names) != len(dtypes):
        raise ValueError("List of names must have the same length as the list of dtypes, "
                         "received len(names)=%d,len(dtypes)=%d" % (len(names), len(dtypes)))
    return list(names)


def _shape_compatible(shape, declared):
    """True if the concrete `shape` matches the partial shape `declared`."""
    if declared is None:
        return True
    if len(shape) != len(declared):
        return False
    return all(d is None or d == s for s, d in zip(shape, declared))


def _get_seed(op_seed):
    """TensorFlow's random_seed.get_seed without a graph-level seed."""
    if op_seed is None:
        return 0, 0  # the engine draws nondeterministic seeds
    seeds = _DEFAULT_GRAPH_SEED, int(op_seed) % _INT32_MAX
    if seeds == (0, 0):
        return 0, _INT32_MAX
    return seeds


# ---- value conversion ----------------------------------------------------------

# Python values (scalars, lists) of these numpy kinds convert to a dtype of
# the key's kind, as TensorFlow's type check allows them (a bool is an int,
# an int a real number). numpy arrays and scalars are cast whatever their
# kind, as TensorFlow's make_tensor_proto does (ndarray.astype).
_ALLOWED_SOURCE_KINDS = {"b": "b", "i": "biu", "u": "biu", "f": "biuf", "c": "biufc"}


def _cannot_convert(value, dtype, why=""):
    text = repr(value)
    if len(text) > 200:
        text = text[:200] + "..."
    return TypeError("Cannot convert %s to a tensor of dtype %s%s" % (text, dtype.name, why))


def _to_bytes(item, value, dtype):
    if isinstance(item, bytes):
        return item
    if isinstance(item, str):
        return item.encode("utf-8")
    raise _cannot_convert(value, dtype)


def _to_string_component(value, dtype):
    """bytes (a scalar) or a numpy object array of bytes."""
    if isinstance(value, (bytes, str)):
        return _to_bytes(value, value, dtype)
    if isinstance(value, np.ndarray) and value.dtype.kind == "S":
        arr = value.astype(object)
    elif isinstance(value, np.ndarray) and value.dtype.kind == "U":
        arr = np.char.encode(value, "utf-8").astype(object)
    else:
        arr = np.array(value, dtype=object)
        flat = arr.reshape(-1)
        for i, item in enumerate(flat):
            if not isinstance(item, bytes):
                flat[i] = _to_bytes(item, value, dtype)
    if arr.ndim == 0:
        return arr.item()
    return np.asarray(arr, order="C")


def _float_to_bfloat16_bits(arr):
    """float32 values -> bfloat16 bit patterns (round to nearest even)."""
    bits = np.asarray(arr, dtype=np.float32, order="C").view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(arr)
    if nan.any():
        rounded[nan] = 0x7FC0
    return rounded


def _to_numeric_component(value, dtype):
    """A C-contiguous array of exactly the dtype's storage type."""
    # Fast paths: an array of the right type, a Python scalar of a fitting kind.
    target = dtype._storage
    vt = type(value)
    if dtype is not _dtypes.bfloat16:
        if vt is np.ndarray and value.dtype == target:
            return value if value.flags.c_contiguous else np.asarray(value, order="C")
        if (vt is float and target.kind in "fc") or (vt is int and target.kind in "iufc") or (
                vt is builtins.bool and target.kind == "b"):
            try:
                return np.asarray(value, dtype=target)
            except OverflowError:
                raise _cannot_convert(value, dtype, ": value out of range") from None
    from_numpy = isinstance(value, (np.ndarray, np.generic))
    try:
        src = value if isinstance(value, np.ndarray) else np.asarray(value)
    except OverflowError:
        raise _cannot_convert(value, dtype, ": value out of range") from None
    if _dtypes._NP_BFLOAT16 is not None and src.dtype == _dtypes._NP_BFLOAT16:
        if dtype is _dtypes.bfloat16:
            return np.asarray(src, order="C").view(np.uint16)
        src = src.astype(np.float32)
    kind = src.dtype.kind
    target_kind = "f" if dtype is _dtypes.bfloat16 else dtype._storage.kind
    if from_numpy and kind in "biufc":
        # TensorFlow casts numpy values (make_tensor_proto: astype), with C's
        # conversions: 1.5 -> 1 into an integer type, 300 -> 44 into int8.
        if dtype is _dtypes.bfloat16:
            return _float_to_bfloat16_bits(src.astype(np.float32))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", getattr(np, "exceptions", np).ComplexWarning)
            return np.asarray(src.astype(dtype._storage), order="C")
    if kind not in _ALLOWED_SOURCE_KINDS[target_kind] and src.size:
        # (An empty list is float64 to numpy, and fits any dtype, as in TF.)
        raise _cannot_convert(value, dtype)
    if dtype is _dtypes.bfloat16:
        return _float_to_bfloat16_bits(src.astype(np.float32))
    target = dtype._storage
    if kind in "iu" and target_kind in "iu" and not np.can_cast(src.dtype, target) and src.size:
        info = np.iinfo(target)
        if src.min() < info.min or src.max() > info.max:
            raise _cannot_convert(value, dtype, ": value out of range")
    return np.asarray(src, dtype=target, order="C")


def _to_component(value, dtype):
    """`value` as one component of `dtype`: the one Python -> tensor conversion.

    Queues, the tf.train producers and batchers, sluice.data and the sparse
    batching all convert through it; the C++ side (PythonToTensor) then only
    copies the array. bind_queue.cc's QueueOps converts in C++ the values
    whose result here is certain and declines the rest;
    test_queue_conversion_agreement.py checks the two agree.
    """
    if value is None:  # TF's message, and its type: ValueError
        raise ValueError("Attempt to convert a value (None) with an unsupported type (<class 'NoneType'>) "
                         "to a Tensor.")
    if dtype is _dtypes.string:
        return _to_string_component(value, dtype)
    return _to_numeric_component(value, dtype)


def _shape_of(component):
    return () if type(component) is bytes else component.shape


# ---- queues ----------------------------------------------------------------------

class QueueBase:
    """Base class for queues (``tf.queue.QueueBase``).

    A queue holds elements, each a tuple of components with fixed dtypes and
    optionally fixed shapes. Thread-safe: any number of threads may enqueue
    and dequeue at once.
    """

    def __init__(self, dtypes, shapes, names, core_queue, _min_after_dequeue=0):
        self._dtypes = list(dtypes)
        if shapes is not None:
            if len(shapes) != len(dtypes):
                raise ValueError("Queue shapes must have the same length as dtypes, received "
                                 "len(shapes)=%d, len(dtypes)=%d" % (len(shapes), len(dtypes)))
            self._shapes = list(shapes)
        else:
            self._shapes = [None] * len(self._dtypes)
        if names is not None:
            if len(names) != len(dtypes):
                raise ValueError("Queue names must have the same length as dtypes,received "
                                 "len(names)=%d,len %d" % (len(names), len(dtypes)))
            self._names = list(names)
        else:
            self._names = None
        self._min_after_dequeue = _min_after_dequeue
        if callable(core_queue):  # a recipe: built now, and again at each new run of its graph
            _graph.track(self, core_queue)
        else:  # a C++ queue made elsewhere (the queue of a batcher, a runner): not rebuilt
            self._graph = _graph.get_default_graph()
            self._bind_core(core_queue)

    def _bind_core(self, core_queue):
        self._queue = core_queue
        # enqueue/dequeue in C++ (bind_queue.cc's QueueOps), for the values it
        # can take exactly as the Python code below would; it declines the
        # others, which then take the Python path.
        self._ops = _core.QueueOps(core_queue, [d.as_datatype_enum for d in self._dtypes],
                                   _ops_shapes(self._shapes), self._names, self._min_after_dequeue)

    def _drop_core(self):
        """Ends this queue's state for a new run of its graph (see sluice.train.Session)."""
        queue, self._queue, self._ops = self._queue, _ClosedRun(), _ClosedRun()
        try:
            queue.close(True, None)
        except errors.OpError:
            pass

    def _waiting(self, what, call, timeout):
        """`call(timeout)` for a queue whose graph has runners never started: without a time
        limit, a warning names the queue after 4 s (TF's silent "forgot start_queue_runners")."""
        return _graph.wait_warning_if_stalled(self._graph, "%s on queue '%s'" % (what, self.name), call, timeout)

    # -- properties

    @property
    def dtypes(self):
        """The list of component dtypes."""
        return list(self._dtypes)

    @property
    def shapes(self):
        """The list of component shapes: tuples (None for an unknown dim), None if undeclared."""
        return list(self._shapes)

    @property
    def names(self):
        """The list of component names, or None."""
        return None if self._names is None else list(self._names)

    @property
    def name(self):
        """The queue's name."""
        return self._queue.name

    @property
    def queue_ref(self):
        """The underlying sluice._core.Queue."""
        return self._queue

    # -- operations

    def _check_enqueue_dtypes(self, vals):
        """Component values in component order, converted (TF's checks and messages)."""
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names, key=str) != sorted(vals.keys(), key=str):
                raise ValueError("Keys in dictionary to enqueue do not match names of Queue.  "
                                 "Dictionary: (%s), Queue: (%s)"
                                 % (sorted(vals.keys(), key=str), sorted(self._names, key=str)))
            vals = [vals[k] for k in self._names]
        else:
            if self._names:
                raise ValueError("You must enqueue a dictionary in a Queue with names")
            if not isinstance(vals, (list, tuple)):
                vals = [vals]
        if len(vals) != len(self._dtypes):
            # TF's zip() would silently drop extra values; the kernel's error instead.
            raise errors.InvalidArgumentError(
                None, None, "Wrong number of components in tuple. Expected %d, got %d"
                % (len(self._dtypes), len(vals)))
        return [_to_component(v, d) for v, d in zip(vals, self._dtypes)]

    def enqueue(self, vals, name=None, timeout=None):
        """Enqueues one element; blocks while the queue is full.

        Raises CancelledError if the queue is (or gets) closed first,
        DeadlineExceededError after `timeout` seconds, ValueError/TypeError
        for values that do not fit the components.
        """
        del name
        if self._ops.enqueue(vals, timeout):
            return
        components = self._check_enqueue_dtypes(vals)
        for c, shape in zip(components, self._shapes):
            if shape is not None:
                s = _shape_of(c)
                if s != shape and not _shape_compatible(s, shape):
                    raise ValueError("Shapes %s and %s are incompatible" % (_shape_str(s), _shape_str(shape)))
        self._queue.enqueue(components, timeout)

    def enqueue_many(self, vals, name=None, timeout=None):
        """Enqueues the slices along dimension 0 of every component.

        All components must have rank >= 1 and the same dimension 0. Blocks
        until every slice is admitted (slices admitted before a close or
        timeout stay queued). Errors as enqueue; when such an error comes
        after the call waited for room, its message ends with "(enqueue_many
        enqueued N of M rows)" and its ``rows_enqueued`` attribute is N, so
        a retry sends only the rows from N on.
        """
        del name
        if timeout is None:
            with _graph.stall_watch(self._enqueue_many_stall_message(vals)):
                return self._enqueue_many(vals, None)
        return self._enqueue_many(vals, timeout)

    def _enqueue_many_stall_message(self, vals):
        """The warning for an enqueue_many that cannot finish without a consumer, else None."""
        capacity = self._queue.capacity
        if capacity < 0:
            return None
        first = next(iter(vals.values())) if isinstance(vals, dict) else (
            vals[0] if isinstance(vals, (list, tuple)) and vals else vals)
        rows = len(first) if hasattr(first, "__len__") and not isinstance(first, (bytes, str)) else 0
        if rows <= capacity:
            return None
        return ("enqueue_many of %d rows into queue '%s' (capacity %d) has waited 5 s: it can only finish as "
                "something dequeues. Dequeue from another thread (start the consumer first), raise the capacity, "
                "or enqueue fewer rows at a time. Still waiting." % (rows, self.name, capacity))

    def _enqueue_many(self, vals, timeout):
        if self._ops.enqueue_many(vals, timeout):
            return
        components = self._check_enqueue_dtypes(vals)
        batch = None
        for c, shape in zip(components, self._shapes):
            s = _shape_of(c)
            if len(s) < 1:
                raise ValueError("Shape %s must have rank at least 1" % _shape_str(s))
            if batch is not None and s[0] != batch:
                raise ValueError("Dimensions %d and %d are not compatible" % (batch, s[0]))
            batch = s[0]
            if not _shape_compatible(s[1:], shape):
                raise ValueError("Shapes %s and %s are incompatible" % (_shape_str(s[1:]), _shape_str(shape)))
        self._queue.enqueue_many(components, timeout)

    def dequeue(self, name=None, timeout=None):
        """Dequeues one element; blocks while the queue is empty.

        Raises OutOfRangeError once the queue is closed and empty,
        DeadlineExceededError after `timeout` seconds.
        """
        del name
        if self._graph._runners_pending:
            return self._waiting("dequeue", self._ops.dequeue, timeout)
        return self._ops.dequeue(timeout)

    def dequeue_many(self, n, name=None, timeout=None):
        """Dequeues and stacks exactly `n` elements (component i: shape [n] + shape_i).

        Blocks until `n` are available. Raises OutOfRangeError if the queue is
        closed with fewer than `n` left (they stay queued), InvalidArgumentError
        if the shapes were not declared or n < 0.
        """
        del name
        n = _batch_size(n)
        if self._graph._runners_pending:
            return self._waiting("dequeue_many", lambda t: self._ops.dequeue_many(n, t), timeout)
        return self._ops.dequeue_many(n, timeout)

    def dequeue_up_to(self, n, name=None, timeout=None):
        """As dequeue_many, but once the queue is closed returns the 1..n-1 elements left."""
        del name
        n = _batch_size(n)
        if self._graph._runners_pending:
            return self._waiting("dequeue_up_to", lambda t: self._ops.dequeue_up_to(n, t), timeout)
        return self._ops.dequeue_up_to(n, timeout)

    def close(self, cancel_pending_enqueues=False, name=None, timeout=None):
        """Closes the queue: later enqueues fail, dequeues drain what is left.

        cancel_pending_enqueues=False waits behind the enqueues already pending
        (it may block); True fails them with CancelledError at once.
        """
        del name
        self._queue.close(bool(cancel_pending_enqueues), timeout)

    def is_closed(self, name=None):
        """True once the queue is closed."""
        del name
        return self._queue.is_closed()

    def size(self, name=None):
        """The number of elements in the queue."""
        del name
        return self._queue.size()

    def __repr__(self):
        return "<sluice.queue.%s %r dtypes=%s>" % (type(self).__name__, self.name,
                                                 [d.name for d in self._dtypes])


class _ClosedRun:
    """Stands for the C++ queue of a run that ended, while its graph is built again."""

    def __getattr__(self, attr):
        def fail(*args, **kwargs):
            raise errors.CancelledError(None, None, "this queue's run ended: a new sluice.train.Session is "
                                        "building its graph again")
        return fail


def _ops_shapes(shapes):
    """QueueBase's shapes for QueueOps: None (undeclared) or a list of dims (-1 unknown)."""
    return [None if s is None else [-1 if d is None else d for d in s] for s in shapes]


def _core_shapes(shapes):
    if shapes is None:
        return []
    return [None if s is None else [-1 if d is None else d for d in s] for s in shapes]


def _capacity(capacity):
    capacity = operator.index(capacity)
    if capacity > _INT32_MAX:  # TF: the int32 attribute's range check
        raise errors.InvalidArgumentError(
            None, None, "Attr capacity has value %d out of range for an int32" % capacity)
    return -1 if capacity < 0 else capacity


def _batch_size(n):
    """dequeue_many/dequeue_up_to's n, an int32 in TensorFlow."""
    n = operator.index(n)
    if not -_INT32_MAX - 1 <= n <= _INT32_MAX:
        raise errors.InvalidArgumentError(None, None, "n = %d is out of range for an int32" % n)
    return n


class FIFOQueue(QueueBase):
    """A queue that dequeues elements in first-in first-out order (``tf.queue.FIFOQueue``)."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None, name="fifo_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes)
        names = _as_name_list(names, dtypes)
        if shapes is not None and len(shapes) != len(dtypes):
            raise ValueError("Queue shapes must have the same length as dtypes, received "
                             "len(shapes)=%d, len(dtypes)=%d" % (len(shapes), len(dtypes)))
        args = ("fifo", _capacity(capacity), [d.as_datatype_enum for d in dtypes], _core_shapes(shapes),
                names or [], name, shared_name or "")
        super().__init__(dtypes, shapes, names, lambda: _core.new_queue(*args))


class PaddingFIFOQueue(QueueBase):
    """A FIFOQueue whose dequeue_many pads components to the batch's largest shape."""

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None, name="padding_fifo_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, unknown_dim_allowed=True)
        names = _as_name_list(names, dtypes)
        if len(dtypes) != len(shapes):
            raise ValueError("Shapes must be provided for all components, but received "
                             "%d dtypes and %d shapes." % (len(dtypes), len(shapes)))
        args = ("padding_fifo", _capacity(capacity), [d.as_datatype_enum for d in dtypes], _core_shapes(shapes),
                names or [], name, shared_name or "")
        super().__init__(dtypes, shapes, names, lambda: _core.new_queue(*args))


class RandomShuffleQueue(QueueBase):
    """A queue that dequeues elements in a random order (``tf.queue.RandomShuffleQueue``).

    While open, a dequeue leaves at least `min_after_dequeue` elements.
    `seed`: an int gives a reproducible order (TF's seeds (87654321, seed mod
    2^31-1)); None a nondeterministic one.
    """

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None,
                 shared_name=None, name="random_shuffle_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes)
        names = _as_name_list(names, dtypes)
        if shapes is not None and len(shapes) != len(dtypes):
            raise ValueError("Queue shapes must have the same length as dtypes, received "
                             "len(shapes)=%d, len(dtypes)=%d" % (len(shapes), len(dtypes)))
        seed1, seed2 = _get_seed(seed)
        args = ("random_shuffle", _capacity(capacity), [d.as_datatype_enum for d in dtypes], _core_shapes(shapes),
                names or [], name, shared_name or "")
        kwargs = dict(min_after_dequeue=operator.index(min_after_dequeue), seed=seed1, seed2=seed2)
        super().__init__(dtypes, shapes, names, lambda: _core.new_queue(*args, **kwargs),
                         _min_after_dequeue=operator.index(min_after_dequeue))


class PriorityQueue(QueueBase):
    """A queue that dequeues the element of smallest priority first (``tf.queue.PriorityQueue``).

    Each element starts with an implicit int64 scalar priority: enqueue
    ``(priority, v1, ...)``, dequeue returns ``[priority, v1, ...]``.
    `types`/`shapes` describe the other components; `names`, as in
    TensorFlow, names every component, the priority first.
    """

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None, name="priority_queue"):
        types = _as_type_list(types)
        shapes = _as_shape_list(shapes)
        if shapes is not None and len(shapes) != len(types):
            raise ValueError("Queue shapes must have the same length as dtypes, received "
                             "len(shapes)=%d, len(dtypes)=%d" % (len(shapes), len(types)))
        priority_dtypes = [_dtypes.int64] + types
        priority_shapes = [()] + shapes if shapes else shapes
        if names is not None and len(names) != len(priority_dtypes):
            raise ValueError("Queue names must have the same length as dtypes,received "
                             "len(names)=%d,len %d" % (len(names), len(priority_dtypes)))
        # The names stay on this side (they only shape the dicts).
        args = ("priority", _capacity(capacity), [d.as_datatype_enum for d in types], _core_shapes(shapes), [],
                name, shared_name or "")
        super().__init__(priority_dtypes, priority_shapes, names, lambda: _core.new_queue(*args))


def all_queue_stats():
    """A snapshot of every live queue in the process (see sluice.train.all_queue_stats)."""
    return _core.all_queue_stats()


__all__ = ["QueueBase", "FIFOQueue", "PaddingFIFOQueue", "RandomShuffleQueue", "PriorityQueue",
           "all_queue_stats"]

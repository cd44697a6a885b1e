"""Sessions of sluice.compat.v1: runs of a graph, and the state its stateful ops keep.

A :class:`Session` evaluates fetches op by op (each op once per ``run``)
and owns its graph's state: each stateful resource (queue, reader,
producer, iterator, variable) is built for the Session the first time a run
or ``start_queue_runners`` needs it, as an eager sluice object inside a
``sluice.train.Graph`` of the Session's own, so a new Session starts from
fresh queues at epoch 0, as in TF 1. ``close()`` closes those queues,
cancelling pending enqueues, so no runner stays blocked.

Thread-safe: runner threads call ``run`` concurrently with the main thread.
"""

import collections
import threading

import numpy as np

from sluice import _graph as _sl_graph
from sluice import errors
from sluice.compat.v1 import _graph
from sluice.sparse_tensor import SparseTensor as _EagerSparse

# Resources of a graph, in creation order (what a Session builds).
RESOURCES = "_sluice_compat_resources"


class RunOptions:
    """``tf.compat.v1.RunOptions``: only ``timeout_in_ms`` changes anything (a blocking op's limit)."""

    NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE, FULL_TRACE = 0, 1, 2, 3

    def __init__(self, timeout_in_ms=0, trace_level=0, **kwargs):
        self.timeout_in_ms = timeout_in_ms
        self.trace_level = trace_level
        self.__dict__.update(kwargs)


class RunMetadata:
    """``tf.compat.v1.RunMetadata`` (kept empty)."""


class ConfigProto:
    """``tf.compat.v1.ConfigProto``: accepted and ignored (sluice sizes its own thread pools)."""

    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)
        self.gpu_options = GPUOptions()


class GPUOptions:
    def __init__(self, **kwargs):
        self.allow_growth = False
        self.__dict__.update(kwargs)


class Resource:
    """A stateful object of a graph, built once per Session by ``create(session)``."""

    def __init__(self, graph, create, name):
        self.create = create
        self.name = name
        graph.add_to_collection(RESOURCES, self)


class _RunContext:
    """One ``Session.run``: op values computed so far, feeds, and the time limit."""

    __slots__ = ("session", "feeds", "timeout", "values")

    def __init__(self, session, feeds, timeout):
        self.session = session
        self.feeds = feeds
        self.timeout = timeout
        self.values = {}

    def value(self, tensor):
        if tensor in self.feeds:
            return self.feeds[tensor]
        return self.run_op(tensor.op)[tensor.value_index]

    def run_op(self, op):
        done = self.values.get(op)
        if done is not None:
            return done
        for c in op.control_inputs:
            self.run_op(c)
        inputs = [self.value(t) for t in op.inputs]
        try:
            done = op._compute(self, *inputs)
        except (KeyboardInterrupt, SystemExit, StopIteration, GeneratorExit):
            raise
        except Exception as e:  # noqa: BLE001 - named and re-raised as an OpError
            raise _graph.op_error(op, e, inputs) from None
        self.values[op] = done
        return done


class SparseTensorValue(collections.namedtuple("SparseTensorValue", ["indices", "values", "dense_shape"])):
    """A fetched SparseTensor (``tf.compat.v1.SparseTensorValue``)."""


class BaseSession:
    """The machinery of :class:`Session` (``tf.compat.v1.Session``)."""

    def __init__(self, target="", graph=None, config=None):
        del target, config
        self._graph = graph if graph is not None else _graph.get_default_graph()
        self._closed = False
        self._lock = threading.RLock()
        self._state = {}
        self._sl_graph = _sl_graph.Graph()  # the eager objects of this run
        self._sl_session = _sl_graph.Session(graph=self._sl_graph)
        self._context = None
        self._runner_threads = []

    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return None

    @property
    def sl_graph(self):
        """The sluice.train.Graph holding this Session's queues, readers and producers."""
        return self._sl_graph

    # -- state

    def resource(self, res):
        """This Session's instance of `res` (a :class:`Resource`), built on first use."""
        got = self._state.get(res)
        if got is not None:
            return got
        with self._lock:
            got = self._state.get(res)
            if got is None:
                self._check_open()
                with self._sl_graph.as_default():
                    got = res.create(self)
                self._state[res] = got
        return got

    def build_all(self):
        """Builds every resource of the graph (before its runners start)."""
        for res in self._graph.get_collection(RESOURCES):
            self.resource(res)

    def variable_store(self):
        store = self._state.get("variables")
        if store is None:
            with self._lock:
                store = self._state.setdefault("variables", {})
        return store

    # -- runs

    def _check_open(self):
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Evaluates `fetches` (a nested structure of tensors, ops, SparseTensors or names) once."""
        del run_metadata
        self._check_open()
        timeout = None
        if options is not None and getattr(options, "timeout_in_ms", 0):
            timeout = options.timeout_in_ms / 1000.0
        ctx = _RunContext(self, self._feeds(feed_dict), timeout)
        return self._fetch(ctx, fetches)

    def _feeds(self, feed_dict):
        feeds = {}
        for key, value in (feed_dict or {}).items():
            key = self._as_element(key)
            if hasattr(key, "_feed"):  # a SparseTensor of tensors
                key._feed(feeds, value)
                continue
            if isinstance(key, _graph.Variable):
                key = key._value_tensor
            if not isinstance(key, _graph.Tensor):
                raise TypeError("The value of a feed cannot be a tf.Tensor object... (got key %r)" % (key,))
            feeds[key] = _typed(value, key)
        return feeds

    def _as_element(self, x):
        if isinstance(x, str):
            if ":" in x:
                return self._graph.get_tensor_by_name(x)
            return self._graph.get_operation_by_name(x)
        return x

    def _fetch(self, ctx, f):
        f = self._as_element(f)
        if f is None:
            raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
        if isinstance(f, _graph.Tensor):
            return _result(ctx.value(f), f)
        if isinstance(f, _graph.Operation):
            ctx.run_op(f)
            return None
        if isinstance(f, _graph.Variable):
            return self._fetch(ctx, f._value_tensor)
        if hasattr(f, "_fetch_parts"):  # a SparseTensor of tensors
            return SparseTensorValue(*(self._fetch(ctx, t) for t in f._fetch_parts()))
        if isinstance(f, dict):
            return type(f)((k, self._fetch(ctx, v)) for k, v in f.items())
        if _graph._is_namedtuple(f):
            return type(f)(*(self._fetch(ctx, v) for v in f))
        if isinstance(f, (list, tuple)):
            return type(f)(self._fetch(ctx, v) for v in f)
        raise TypeError("Fetch argument %r has invalid type %s, must be a string or Tensor." % (f, type(f)))

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        feed_list = list(feed_list or [])

        def call(*args, **kwargs):
            return self.run(fetches, feed_dict=dict(zip(feed_list, args)), options=kwargs.get("options"))
        return call

    # -- end

    def close(self):
        """Closes this Session's queues (pending enqueues cancelled). Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._sl_session.close()
        for it in self._state.values():
            close = getattr(it, "_compat_close", None)
            if close is not None:
                close()

    @property
    def closed(self):
        return self._closed

    def __enter__(self):
        self._context = (self._graph.as_default(), self.as_default())
        for c in self._context:
            c.__enter__()
        return self

    def __exit__(self, exc_type, exc_value, tb):
        contexts, self._context = self._context, None
        try:
            self.close()
        finally:
            for c in reversed(contexts or ()):
                c.__exit__(exc_type, exc_value, tb)

    def as_default(self):
        return _DefaultSession(self)

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001, S110 - interpreter shutdown
            pass


class Session(BaseSession):
    """``tf.compat.v1.Session``: a run of a graph's input pipelines (see the module docstring)."""


class InteractiveSession(BaseSession):
    """``tf.compat.v1.InteractiveSession``: a Session that makes itself the default when made."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        self._default = self.as_default()
        self._default.__enter__()

    def close(self):
        default, self._default = getattr(self, "_default", None), None
        if default is not None:
            _session_stack()[:] = [s for s in _session_stack() if s is not self]
        super().close()


class _DefaultSession:
    def __init__(self, session):
        self._session = session

    def __enter__(self):
        _session_stack().append(self._session)
        return self._session

    def __exit__(self, *exc):
        stack = _session_stack()
        if stack and stack[-1] is self._session:
            stack.pop()


_local = threading.local()


def _session_stack():
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def get_default_session():
    stack = _session_stack()
    return stack[-1] if stack else None


def default_session_for(session):
    session = session or get_default_session()
    if session is None:
        raise ValueError("Cannot evaluate tensor using `eval()`: No default session is registered. Use `with "
                         "sess.as_default()` or pass an explicit session to `eval(session=sess)`")
    return session


def _typed(value, tensor):
    """A fed value converted to `tensor`'s dtype (TF's feed conversion)."""
    np_type = tensor.dtype.as_numpy_dtype
    if np_type is object:
        if isinstance(value, (bytes, str)):
            return _graph.as_string_value(value)
        return np.asarray(value, dtype=object)
    arr = np.asarray(value)
    if not tensor.shape.is_compatible_with(arr.shape):
        raise ValueError("Cannot feed value of shape %s for Tensor '%s', which has shape '%s'"
                         % (tuple(arr.shape), tensor.name, tensor.shape))
    return arr.astype(np_type, copy=False)


def _result(value, tensor):
    """A fetched value as TF returns it: numpy scalars and arrays, bytes for a string scalar."""
    if isinstance(value, _EagerSparse):
        return SparseTensorValue(value.indices, value.values, value.dense_shape)
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    np_type = tensor.dtype.as_numpy_dtype
    arr = np.asarray(value, dtype=object if np_type is object else None)
    if np_type is not object and arr.dtype != np_type and np_type is not None:
        arr = arr.astype(np_type)
    if arr.ndim == 0:
        return arr.item() if np_type is object else arr[()]
    return arr

"""The symbolic layer of sluice.compat.v1: graphs, operations and tensors.

An :class:`Operation` holds a Python function of its inputs' values; a
:class:`Tensor` is one output of one. Nothing runs when a program builds
them: ``Session.run`` (sluice.compat.v1._session) evaluates the ops a fetch
needs, each once per run. Stateful ops (queues, readers, variables) keep
their state in the Session, so each Session starts fresh, as in TF 1.

Inside a ``tf.data`` function (see sluice.compat.v1.data) ops run at once on
the values they are given (:func:`eager_scope`), as TF's traced functions
compute the same thing element by element.

Thread-safety: building into a graph takes its lock; ops and tensors are
immutable once built (``set_shape`` aside, which TF also allows at any time).
"""

import contextlib
import itertools
import threading

import numpy as np

from sluice import dtypes as _dtypes
from sluice import errors
from sluice.data import TensorShape as _BaseShape

# Collection names (tf.compat.v1.GraphKeys).


class GraphKeys:
    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    QUEUE_RUNNERS = "queue_runners"
    SUMMARIES = "summaries"
    TABLE_INITIALIZERS = "table_initializer"


class TensorShape(_BaseShape):
    """A static shape (``tf.TensorShape``), with TF 1's ``ndims`` and merging."""

    __slots__ = ()

    @property
    def ndims(self):
        return self.rank

    @property
    def dims(self):
        return None if self._dims is None else list(self._dims)

    def num_elements(self):
        return int(np.prod(self._dims)) if self.is_fully_defined() else None

    def is_compatible_with(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        return len(self._dims) == len(other._dims) and all(
            a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def merge_with(self, other):
        other = as_shape(other)
        if not self.is_compatible_with(other):
            raise ValueError("Shapes %s and %s are not compatible" % (self, other))
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def concatenate(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(list(self._dims) + list(other._dims))

    def __getitem__(self, key):
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else None
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        return "(%s)" % ", ".join("?" if d is None else str(d) for d in self._dims) if len(self._dims) != 1 \
            else "(%s,)" % ("?" if self._dims[0] is None else self._dims[0])


def as_shape(shape):
    if isinstance(shape, TensorShape):
        return shape
    if isinstance(shape, _BaseShape):
        return TensorShape(None if shape.rank is None else list(shape))
    if shape is None:
        return TensorShape(None)
    if isinstance(shape, (int, np.integer)):
        return TensorShape([int(shape)])
    return TensorShape([None if d is None else int(d) for d in shape])


def unknown_shape():
    return TensorShape(None)


def shape_of_value(value):
    """The static shape of a concrete value (bytes and str are scalars)."""
    if isinstance(value, (bytes, str)):
        return TensorShape([])
    return TensorShape(list(np.shape(value)))


# ---- eager scope: ops on values inside tf.data functions -------------------------------

_local = threading.local()


def executing_eagerly():
    return getattr(_local, "eager", 0) > 0


@contextlib.contextmanager
def eager_scope():
    """Ops built in the block run at once on the values they are given."""
    _local.eager = getattr(_local, "eager", 0) + 1
    try:
        yield
    finally:
        _local.eager -= 1


# ---- graphs -----------------------------------------------------------------------------

class Graph:
    """A graph of operations (``tf.Graph``): names, collections, the default-graph stack.

    Thread-safe for building. Each :class:`Session` on it owns the state of
    its stateful ops (queues, readers, variables, iterators).
    """

    def __init__(self):
        self._lock = threading.RLock()
        self._ops = []
        self._names = {}
        self._collections = {}
        self._name_stack = ""
        self._ids = itertools.count()
        self.seed = None
        self._seeded_ops = 0
        self._finalized = False

    @contextlib.contextmanager
    def as_default(self):
        _graph_stack().append(self)
        try:
            yield self
        finally:
            _graph_stack().pop()

    def unique_name(self, name):
        with self._lock:
            name = (self._name_stack + "/" + name) if self._name_stack else name
            count = self._names.get(name, 0)
            self._names[name] = count + 1
            return name if count == 0 else "%s_%d" % (name, count)

    @contextlib.contextmanager
    def name_scope(self, name):
        old = self._name_stack
        if name:
            self._name_stack = name.rstrip("/") if name.endswith("/") else self.unique_name(name)
        try:
            yield self._name_stack + "/" if self._name_stack else ""
        finally:
            self._name_stack = old

    def _add_op(self, op):
        with self._lock:
            if self._finalized:
                raise RuntimeError("Graph is finalized and cannot be modified.")
            op._id = next(self._ids)
            self._ops.append(op)

    def get_operations(self):
        with self._lock:
            return list(self._ops)

    def get_operation_by_name(self, name):
        for op in self.get_operations():
            if op.name == name:
                return op
        raise KeyError("The name %r refers to an Operation not in the graph." % name)

    def get_tensor_by_name(self, name):
        op_name, _, index = name.partition(":")
        return self.get_operation_by_name(op_name).outputs[int(index or 0)]

    def add_to_collection(self, name, value):
        with self._lock:
            self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        for name in ([names] if isinstance(names, str) else names):
            self.add_to_collection(name, value)

    def get_collection(self, name, scope=None):
        with self._lock:
            items = list(self._collections.get(name, []))
        if scope:
            items = [i for i in items if getattr(i, "name", "").startswith(scope)]
        return items

    def get_collection_ref(self, name):
        with self._lock:
            return self._collections.setdefault(name, [])

    def clear_collection(self, name):
        with self._lock:
            self._collections.pop(name, None)

    def finalize(self):
        self._finalized = True

    @property
    def finalized(self):
        return self._finalized

    def as_graph_element(self, obj):
        return obj


_default_graph = None
_default_lock = threading.Lock()


def _graph_stack():
    stack = getattr(_local, "graphs", None)
    if stack is None:
        stack = _local.graphs = []
    return stack


def get_default_graph():
    stack = _graph_stack()
    if stack:
        return stack[-1]
    global _default_graph
    with _default_lock:
        if _default_graph is None:
            _default_graph = Graph()
        return _default_graph


def reset_default_graph():
    if _graph_stack():
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. If you need a "
                             "cleared graph, exit the nesting and create a new graph.")
    global _default_graph
    with _default_lock:
        _default_graph = None


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    return get_default_graph().get_collection_ref(key)


def name_scope(name, default_name=None, values=None):
    del values
    return get_default_graph().name_scope(name or default_name)


# ---- operations and tensors -------------------------------------------------------------

class Operation:
    """A node: `compute(ctx, *input_values)` gives its outputs' values (a tuple), once per run.

    `stateful`: the op's result may change from run to run (never folded).
    """

    def __init__(self, graph, op_type, name, inputs, compute, out_specs, control_inputs=(), stateful=False):
        self.graph = graph
        self.type = op_type
        self.name = graph.unique_name(name or op_type)
        self.inputs = list(inputs)
        self.control_inputs = list(control_inputs) + list(_control_stack())
        self._compute = compute
        self.stateful = stateful
        self.outputs = [Tensor(self, i, dtype, shape) for i, (dtype, shape) in enumerate(out_specs)]
        self.attrs = {}
        graph._add_op(self)

    @property
    def node_def(self):
        return None

    def run(self, feed_dict=None, session=None):
        from sluice.compat.v1 import _session  # noqa: PLC0415 - _session imports this module
        _session.default_session_for(session).run(self, feed_dict=feed_dict)

    def __repr__(self):
        return "<tf.Operation '%s' type=%s>" % (self.name, self.type)


class Tensor:
    """One output of an Operation (``tf.Tensor`` in graph mode)."""

    # numpy must call our reflected operators rather than broadcast over us.
    __array_priority__ = 100

    def __init__(self, op, index, dtype, shape):
        self.op = op
        self.value_index = index
        self.dtype = _dtypes.as_dtype(dtype)
        self._shape = as_shape(shape)

    @property
    def name(self):
        return "%s:%d" % (self.op.name, self.value_index)

    @property
    def graph(self):
        return self.op.graph

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    def set_shape(self, shape):
        self._shape = self._shape.merge_with(as_shape(shape))

    @property
    def device(self):
        return ""

    def eval(self, feed_dict=None, session=None):
        from sluice.compat.v1 import _session  # noqa: PLC0415 - _session imports this module
        return _session.default_session_for(session).run(self, feed_dict=feed_dict)

    def consumers(self):
        return [op for op in self.op.graph.get_operations() if any(t is self for t in op.inputs)]

    def __hash__(self):
        return id(self)

    def __eq__(self, other):  # TF 1: identity, so tensors can key a feed_dict
        return self is other

    def __ne__(self, other):
        return self is not other

    def __bool__(self):
        raise TypeError("Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is not None:` instead of "
                        "`if t:` to test if a tensor is defined.")

    def __iter__(self):
        dims = self._shape.dims
        if dims is None or not dims or dims[0] is None:
            raise TypeError("Tensor objects are only iterable when the first dimension is known.")
        from sluice.compat.v1 import _math_ops  # noqa: PLC0415
        return iter(_math_ops.unstack(self, dims[0]))

    def __len__(self):
        raise TypeError("len is not well defined for symbolic Tensors (%s)." % self.name)

    def __repr__(self):
        return "<tf.Tensor '%s' shape=%s dtype=%s>" % (self.name, self._shape, self.dtype.name)


class Variable:
    """Placeholder for the class sluice.compat.v1._variables defines (isinstance checks here)."""


def is_tensor(x):
    return isinstance(x, Tensor)


# ---- building ops -----------------------------------------------------------------------

_control = threading.local()


def _control_stack():
    return [op for ops in getattr(_control, "stack", []) for op in ops]


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """Ops built in the block run after `control_inputs` (``tf.control_dependencies``)."""
    stack = getattr(_control, "stack", None)
    if stack is None:
        stack = _control.stack = []
    if control_inputs is None:
        saved, _control.stack = stack, []
        try:
            yield
        finally:
            _control.stack = saved
        return
    stack.append([t.op if isinstance(t, Tensor) else getattr(t, "op", t) for t in control_inputs])
    try:
        yield
    finally:
        stack.pop()


def flatten_args(args):
    """(tensors, rebuild): the Tensor leaves of a nested structure, and a function putting values back."""
    tensors = []

    def walk(x):
        if isinstance(x, Tensor):
            tensors.append(x)
            return _Slot(len(tensors) - 1)
        if hasattr(x, "_as_compat_tensors"):  # a SparseTensor of tensors
            return x._as_compat_tensors(walk)
        if isinstance(x, (list, tuple)) and not _is_namedtuple(x):
            return type(x)(walk(v) for v in x)
        if _is_namedtuple(x):
            return type(x)(*(walk(v) for v in x))
        if isinstance(x, dict):
            return {k: walk(v) for k, v in x.items()}
        return x

    template = walk(args)

    def rebuild(values):
        def fill(x):
            if isinstance(x, _Slot):
                return values[x.index]
            if hasattr(x, "_rebuild_from"):
                return x._rebuild_from(fill)
            if isinstance(x, (list, tuple)) and not _is_namedtuple(x):
                return type(x)(fill(v) for v in x)
            if _is_namedtuple(x):
                return type(x)(*(fill(v) for v in x))
            if isinstance(x, dict):
                return {k: fill(v) for k, v in x.items()}
            return x
        return fill(template)

    return tensors, rebuild


class _Slot:
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def make_op(op_type, args, fn, out_specs, name=None, stateful=False, graph=None):
    """An op computing ``fn(*args)`` on the values of the tensors inside `args` (nested).

    `fn` returns one value per entry of `out_specs` ((dtype, shape) pairs):
    the value itself for one output, a tuple for several, None for none.
    In an eager scope, `fn` runs now and its result is returned.
    Returns the op's single output, the list of them, or the op (none).
    """
    tensors, rebuild = flatten_args(args)
    if executing_eagerly() and not tensors:
        return fn(*args)
    if graph is None:
        graph = tensors[0].graph if tensors else get_default_graph()
    n = len(out_specs)

    def compute(ctx, *values):
        result = fn(*rebuild(values))
        if n == 1:
            return (result,)
        return () if n == 0 else tuple(result)

    op = Operation(graph, op_type, name, tensors, compute, out_specs, stateful=stateful)
    if n == 0:
        return op
    return op.outputs[0] if n == 1 else list(op.outputs)


def make_ctx_op(op_type, inputs, compute, out_specs, name=None, graph=None):
    """An op whose `compute(ctx, *values)` needs the run context (a stateful op: queues, readers, variables)."""
    graph = graph or (inputs[0].graph if inputs else get_default_graph())
    op = Operation(graph, op_type, name, inputs, compute, out_specs, stateful=True)
    return op


def not_provided(op_name, eager):
    """NotImplementedError for an op sluice.compat.v1 does not provide, naming the eager spelling."""
    raise NotImplementedError(
        "sluice.compat.v1 does not provide tf.%s; %s" % (op_name, eager))


class NotProvidedError(NotImplementedError, AttributeError):
    """An op sluice.compat.v1 does not provide (also an AttributeError, so ``hasattr`` is False)."""


def module_getattr(module, eager_module):
    """A module ``__getattr__`` raising NotProvidedError for a TF name the module lacks, naming what to write
    instead (`eager_module` is kept for callers; _namespaces.suggestion finds the replacement)."""
    del eager_module

    def getattr_(name):
        if name.startswith("__"):
            raise AttributeError(name)
        from sluice.compat.v1 import _namespaces  # noqa: PLC0415 - it imports this module
        raise _namespaces.not_provided_error(module + "." + name if module else name)
    return getattr_


def op_error(op, error, input_values):
    """`error` (raised computing `op`) as an OpError naming the op and its inputs, as TF's do."""
    if isinstance(error, (errors.OutOfRangeError, errors.CancelledError, errors.DeadlineExceededError)):
        return error
    inputs = ", ".join(t.name for t in op.inputs) or "no inputs"
    where = "\n\t [[node %s (%s, inputs: %s)]]" % (op.name, op.type, inputs)
    if isinstance(error, errors.OpError):
        if getattr(error, "_compat_named", False):
            return error
        new = type(error)(None, op, str(error.message) + where)
    else:
        new = errors.InvalidArgumentError(None, op, "%s: %s%s" % (type(error).__name__, error, where))
    new._compat_named = True
    new.__cause__ = error
    return new


def as_string_value(v):
    if isinstance(v, str):
        return v.encode("utf-8")
    return v

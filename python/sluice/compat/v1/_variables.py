"""Variables of sluice.compat.v1, for the ways input code uses them.

Counters (``assign_add``), preloaded data (a Variable initialised from a
placeholder), epoch counters: each Session keeps its own values, set by the
variable's ``initializer`` (or ``global_variables_initializer``). Reading a
variable that was not initialised is TF's FailedPreconditionError.
"""

import numpy as np

from sluice import errors
from sluice.compat.v1 import _graph
from sluice.compat.v1 import _math_ops
from sluice.compat.v1._graph import GraphKeys, Operation, make_ctx_op


class Variable(_graph.Variable):
    """``tf.Variable`` (TF 1): a value per Session, read by ``value()`` and changed by ``assign*``."""

    def __init__(self, initial_value=None, trainable=None, collections=None, validate_shape=True,
                 caching_device=None, name=None, variable_def=None, dtype=None, expected_shape=None,
                 import_scope=None, constraint=None, use_resource=None, synchronization=None, aggregation=None,
                 shape=None):
        del caching_device, variable_def, expected_shape, import_scope, constraint, use_resource
        del synchronization, aggregation
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if callable(initial_value):
            initial_value = initial_value()
        init = _math_ops.convert_to_tensor(initial_value, dtype)
        if dtype is not None and init.dtype != dtype:
            init = _math_ops.cast(init, dtype)
        self._init = init
        self.dtype = init.dtype
        self._shape = _graph.as_shape(shape) if shape is not None else (
            init.shape if validate_shape else _graph.unknown_shape())
        graph = init.graph
        self.graph = graph
        store_key = self

        def read(ctx):
            store = ctx.session.variable_store()
            if store_key not in store:
                raise errors.FailedPreconditionError(
                    None, None, "Attempting to use uninitialized value %s" % self.op.name)
            return (store[store_key],)
        self.op = make_ctx_op("VariableV2", [], read, [(self.dtype, self._shape)], name=name or "Variable",
                              graph=graph)
        self._value_tensor = self.op.outputs[0]
        self.initializer = make_ctx_op("Assign", [init], self._assigner(lambda old, v: v), [],
                                       name=self.op.name + "/Assign", graph=graph)
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        if trainable is None or trainable:
            collections = list(collections) + [GraphKeys.TRAINABLE_VARIABLES]
        graph.add_to_collections(list(set(collections)), self)

    def _assigner(self, combine):
        key = self

        def compute(ctx, value):
            store = ctx.session.variable_store()
            if self.dtype.as_numpy_dtype is not object:
                value = np.asarray(value).astype(self.dtype.as_numpy_dtype)
            with ctx.session._lock:
                store[key] = new = combine(store.get(key), value)
            return (new,)
        return compute

    def _assign_op(self, op_type, value, combine, name):
        value = _math_ops.convert_to_tensor(value, self.dtype)
        op = Operation(self.graph, op_type, name or self.op.name + "/" + op_type, [value], self._assigner(combine),
                       [(self.dtype, self._shape)], stateful=True)
        return op.outputs[0]

    def assign(self, value, use_locking=None, name=None, read_value=True):
        del use_locking, read_value
        return self._assign_op("Assign", value, lambda old, v: v, name)

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        del use_locking, read_value

        def add(old, v):
            if old is None:
                raise errors.FailedPreconditionError(None, None, "Attempting to use uninitialized value %s"
                                                     % self.op.name)
            return (old + v).astype(self.dtype.as_numpy_dtype)
        return self._assign_op("AssignAdd", delta, add, name)

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        del use_locking, read_value

        def sub(old, v):
            if old is None:
                raise errors.FailedPreconditionError(None, None, "Attempting to use uninitialized value %s"
                                                     % self.op.name)
            return (old - v).astype(self.dtype.as_numpy_dtype)
        return self._assign_op("AssignSub", delta, sub, name)

    def count_up_to(self, limit):
        def up(old, v):
            if old is None:
                raise errors.FailedPreconditionError(None, None, "Attempting to use uninitialized value %s"
                                                     % self.op.name)
            if old >= limit:
                raise errors.OutOfRangeError(None, None, "Reached limit of %d" % limit)
            return (old + 1).astype(self.dtype.as_numpy_dtype)
        # TF returns the value before the increment.
        return _math_ops.subtract(self._assign_op("CountUpTo", 0, up, None), 1)

    def value(self):
        return self._value_tensor

    def read_value(self):
        return _math_ops.identity(self._value_tensor)

    def initialized_value(self):
        with _graph.control_dependencies([self.initializer]):
            return _math_ops.identity(self._init)

    @property
    def initial_value(self):
        return self._init

    @property
    def name(self):
        return self._value_tensor.name

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    def set_shape(self, shape):
        self._shape = self._shape.merge_with(shape)

    def eval(self, session=None):
        return self._value_tensor.eval(session=session)

    def load(self, value, session=None):
        from sluice.compat.v1 import _session  # noqa: PLC0415
        _session.default_session_for(session).variable_store()[self] = np.asarray(value)

    def __repr__(self):
        return "<tf.Variable '%s' shape=%s dtype=%s_ref>" % (self.name, self._shape, self.dtype.name)

    def __getitem__(self, key):
        return self._value_tensor[key]

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


def _delegate(name):
    return lambda self, *args: getattr(self._value_tensor, name)(*args)


for _op in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
            "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__lt__", "__le__",
            "__gt__", "__ge__", "__neg__", "__abs__"):
    setattr(Variable, _op, _delegate(_op))


# ---- grouping and initializers ----------------------------------------------------------

def no_op(name=None):
    return Operation(_graph.get_default_graph(), "NoOp", name or "NoOp", [], lambda ctx: (), [])


def group(*inputs, name=None):
    """``tf.group``: an op that runs `inputs` (ops or tensors, nested lists allowed)."""
    ops = []

    def walk(x):
        if isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
        elif isinstance(x, _graph.Tensor):
            ops.append(x.op)
        elif isinstance(x, Variable):
            ops.append(x.op)
        elif x is not None:
            ops.append(x)
    walk(inputs)
    graph = ops[0].graph if ops else _graph.get_default_graph()
    with graph.as_default(), _graph.control_dependencies(ops):
        return Operation(graph, "NoOp", name or "group_deps", [], lambda ctx: (), [])


def tuple_(tensors, name=None, control_inputs=None):
    with _graph.control_dependencies(list(tensors) + list(control_inputs or [])):
        return [_math_ops.identity(t) if t is not None else None for t in tensors]


def variables_initializer(var_list, name="init"):
    return group([v.initializer for v in var_list], name=name)


def global_variables(scope=None):
    return _graph.get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


def local_variables(scope=None):
    return _graph.get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def trainable_variables(scope=None):
    return _graph.get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def global_variables_initializer():
    return variables_initializer(global_variables())


def local_variables_initializer():
    return variables_initializer(local_variables(), name="init_1")


initialize_all_variables = global_variables_initializer
initialize_local_variables = local_variables_initializer


def tables_initializer(name="init_all_tables"):
    return group([], name=name)


def assign(ref, value, validate_shape=None, use_locking=None, name=None):
    """``tf.assign``: `ref` (a Variable) takes `value`; the new value."""
    return ref.assign(value, name=name)


def assign_add(ref, value, use_locking=None, name=None):
    return ref.assign_add(value, name=name)


def assign_sub(ref, value, use_locking=None, name=None):
    return ref.assign_sub(value, name=name)

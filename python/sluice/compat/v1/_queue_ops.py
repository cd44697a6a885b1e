"""Queues and readers of sluice.compat.v1: graph ops over the eager sluice.queue and sluice.io objects.

Each queue or reader is a :class:`~sluice.compat.v1._session.Resource`:
every Session builds its own eager one (in the Session's sluice Graph), and
the ops (``enqueue``, ``dequeue_many``, ``read``, ...) call it with the
run's time limit (``RunOptions(timeout_in_ms)``).
"""

import numpy as np

from sluice import dtypes as _dtypes
from sluice import io as _io
from sluice import queue as _queue
from sluice.compat.v1 import _graph
from sluice.compat.v1 import _math_ops
from sluice.compat.v1._graph import Operation, as_shape
from sluice.compat.v1._session import Resource


def _flat(q, dequeued):
    """An eager dequeue's result as a tuple of components in the queue's order."""
    if isinstance(dequeued, dict):
        return tuple(dequeued[k] for k in q._names)
    if len(q._dtypes) == 1:
        return (dequeued,)
    return tuple(dequeued)


class QueueBase:
    """A queue of the graph (``tf.queue.QueueBase`` in TF 1): its methods return ops and tensors."""

    def __init__(self, make, dtypes, shapes, names, name):
        if not isinstance(dtypes, (list, tuple)):
            dtypes = [dtypes]
        self._dtypes = [_dtypes.as_dtype(d) for d in dtypes]
        if shapes is not None:
            if isinstance(shapes, _graph.TensorShape) or all(s is None or isinstance(s, int) for s in shapes):
                shapes = [shapes]  # TF's _as_shape_list: a list of dimensions is one shape
            shapes = [as_shape(s) for s in shapes]
        self._shapes = shapes
        self._names = list(names) if names is not None else None
        self._graph = _graph.get_default_graph()
        self._name = self._graph.unique_name(name)
        self._op_prefix = self._name.rsplit("/", 1)[-1]  # op names get the scope again from the graph
        eager_shapes = None if shapes is None else [None if s.rank is None else list(s) for s in shapes]
        self._res = Resource(self._graph, lambda sess: make(eager_shapes), self._name)

    @property
    def dtypes(self):
        return list(self._dtypes)

    @property
    def shapes(self):
        return list(self._shapes) if self._shapes is not None else [_graph.unknown_shape()] * len(self._dtypes)

    @property
    def names(self):
        return self._names

    @property
    def name(self):
        return self._name

    @property
    def queue_ref(self):
        return self

    def _eager(self, ctx):
        return ctx.session.resource(self._res)

    def _values(self, vals, many):
        """The enqueued values as tensors in component order."""
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(vals) != sorted(self._names):
                raise ValueError("Keys in dictionary to enqueue do not match names of Queue.  Dictionary: (%s), "
                                 "Queue: (%s)" % (sorted(vals), sorted(self._names)))
            vals = [vals[k] for k in self._names]
        elif not isinstance(vals, (list, tuple)):
            vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError("Expected %d components, got %d" % (len(self._dtypes), len(vals)))
        out = []
        for v, d, i in zip(vals, self._dtypes, range(len(vals))):
            t = _math_ops.convert_to_tensor(v, d)
            if self._shapes is not None:
                s = t.shape[1:] if many else t.shape
                if not s.is_compatible_with(self._shapes[i]):
                    raise ValueError("Shapes %s and %s are incompatible" % (s, self._shapes[i]))
            out.append(t)
        return out

    def _pack(self, comps):
        values = comps if isinstance(comps, list) else [comps]
        if self._names:
            return dict(zip(self._names, values))
        return values[0] if len(self._dtypes) == 1 else values

    def _op(self, op_type, inputs, call, out_specs, name):
        def compute(ctx, *values):
            return call(self._eager(ctx), ctx.timeout, values)
        graph = inputs[0].graph if inputs else self._graph
        op = Operation(graph, op_type, name or "%s_%s" % (self._op_prefix, op_type), inputs, compute, out_specs,
                       stateful=True)
        return op

    def enqueue(self, vals, name=None):
        tensors = self._values(vals, False)
        comps = self._names or None

        def call(q, timeout, values):
            q.enqueue(dict(zip(comps, values)) if comps else list(values), timeout=timeout)
            return ()
        return self._op("QueueEnqueueV2", tensors, call, [], name)

    def enqueue_many(self, vals, name=None):
        tensors = self._values(vals, True)
        comps = self._names or None

        def call(q, timeout, values):
            q.enqueue_many(dict(zip(comps, values)) if comps else list(values), timeout=timeout)
            return ()
        return self._op("QueueEnqueueManyV2", tensors, call, [], name)

    def _out_specs(self, lead):
        return [(d, (as_shape(lead).concatenate(s) if lead is not None else s))
                for d, s in zip(self._dtypes, self.shapes)]

    def dequeue(self, name=None):
        op = self._op("QueueDequeueV2", [], lambda q, t, v: _flat(q, q.dequeue(timeout=t)), self._out_specs(None),
                      name)
        return self._pack(list(op.outputs))

    def dequeue_many(self, n, name=None):
        op = self._op("QueueDequeueManyV2", [], lambda q, t, v: _flat(q, q.dequeue_many(n, timeout=t)),
                      self._out_specs([n if isinstance(n, int) else None]), name)
        return self._pack(list(op.outputs))

    def dequeue_up_to(self, n, name=None):
        op = self._op("QueueDequeueUpToV2", [], lambda q, t, v: _flat(q, q.dequeue_up_to(n, timeout=t)),
                      self._out_specs([None]), name)
        return self._pack(list(op.outputs))

    def close(self, cancel_pending_enqueues=False, name=None):
        return self._op("QueueCloseV2", [], lambda q, t, v: q.close(cancel_pending_enqueues) or (), [], name)

    def is_closed(self, name=None):
        return self._op("QueueIsClosedV2", [], lambda q, t, v: (np.bool_(q.is_closed()),),
                        [(_dtypes.bool, [])], name).outputs[0]

    def size(self, name=None):
        return self._op("QueueSizeV2", [], lambda q, t, v: (np.int32(q.size()),), [(_dtypes.int32, [])],
                        name).outputs[0]

    def __repr__(self):
        return "<sluice.compat.v1 queue '%s'>" % self._name


class FIFOQueue(QueueBase):
    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None, name="fifo_queue"):
        dts = dtypes if isinstance(dtypes, (list, tuple)) else [dtypes]
        super().__init__(lambda shapes: _queue.FIFOQueue(capacity, dts, shapes, names, shared_name, name),
                         dts, shapes, names, name)


class PaddingFIFOQueue(QueueBase):
    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None, name="padding_fifo_queue"):
        dts = dtypes if isinstance(dtypes, (list, tuple)) else [dtypes]
        super().__init__(lambda shapes: _queue.PaddingFIFOQueue(capacity, dts, shapes, names, shared_name, name),
                         dts, shapes, names, name)


class RandomShuffleQueue(QueueBase):
    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None, shared_name=None,
                 name="random_shuffle_queue"):
        dts = dtypes if isinstance(dtypes, (list, tuple)) else [dtypes]
        super().__init__(lambda shapes: _queue.RandomShuffleQueue(capacity, min_after_dequeue, dts, shapes, names,
                                                                  seed, shared_name, name),
                         dts, shapes, names, name)


class PriorityQueue(QueueBase):
    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None, name="priority_queue"):
        types = list(types) if isinstance(types, (list, tuple)) else [types]
        shapes_all = None if shapes is None else [[]] + list(shapes)
        super().__init__(lambda s: _queue.PriorityQueue(capacity, types, None if s is None else s[1:], names,
                                                        shared_name, name),
                         [_dtypes.int64] + types, shapes_all, names, name)


# ---- a queue made by an eager builder ---------------------------------------------------

class _BuiltQueue(QueueBase):
    """A queue whose per-Session eager queue an eager builder makes (input producers)."""

    def __init__(self, build, dtype, shape, name, inputs=()):
        self._dtypes = [_dtypes.as_dtype(dtype)]
        self._shapes = [as_shape(shape)]
        self._names = None
        self._graph = _graph.get_default_graph()
        self._name = self._graph.unique_name(name)
        self._op_prefix = self._name.rsplit("/", 1)[-1]
        inputs = list(inputs)

        def create(sess):
            values = sess.run(inputs) if inputs else []
            return build(*values)
        self._res = Resource(self._graph, create, self._name)


# ---- readers ----------------------------------------------------------------------------

class ReaderBase:
    """A reader of the graph (``tf.ReaderBase``): ``read(queue)`` gives (key, value) tensors."""

    def __init__(self, make, name):
        self._graph = _graph.get_default_graph()
        self._name = self._graph.unique_name(name)
        self._op_prefix = self._name.rsplit("/", 1)[-1]
        self._make = make
        self._res = Resource(self._graph, lambda sess: make(), self._name)

    @property
    def name(self):
        return self._name

    @property
    def reader_ref(self):
        return self

    @property
    def supports_serialize(self):
        return False

    def _op(self, op_type, queue, call, out_specs, inputs=(), name=None):
        res = self._res

        def compute(ctx, *values):
            reader = ctx.session.resource(res)
            q = ctx.session.resource(queue._res) if queue is not None else None
            return call(reader, q, ctx.timeout, *values)
        return Operation(self._graph, op_type, name or "%s_%s" % (self._op_prefix, op_type), list(inputs), compute,
                         out_specs, stateful=True)

    def read(self, queue, name=None):
        op = self._op("ReaderReadV2", queue, lambda r, q, t: tuple(r.read(q, timeout=t)),
                      [(_dtypes.string, []), (_dtypes.string, [])], name=name)
        op.attrs["native"] = ("read", self, queue)
        return op.outputs[0], op.outputs[1]

    def read_up_to(self, queue, num_records, name=None):
        op = self._op("ReaderReadUpToV2", queue, lambda r, q, t: tuple(r.read_up_to(q, num_records, timeout=t)),
                      [(_dtypes.string, [None]), (_dtypes.string, [None])], name=name)
        return op.outputs[0], op.outputs[1]

    def num_records_produced(self, name=None):
        return self._op("ReaderNumRecordsProducedV2", None, lambda r, q, t: (np.int64(r.num_records_produced()),),
                        [(_dtypes.int64, [])], name=name).outputs[0]

    def num_work_units_completed(self, name=None):
        return self._op("ReaderNumWorkUnitsCompletedV2", None,
                        lambda r, q, t: (np.int64(r.num_work_units_completed()),), [(_dtypes.int64, [])],
                        name=name).outputs[0]

    def reset(self, name=None):
        return self._op("ReaderResetV2", None, lambda r, q, t: r.reset() or (), [], name=name)


class TFRecordReader(ReaderBase):
    def __init__(self, name=None, options=None):
        super().__init__(lambda: _io.TFRecordReader(name=name, options=options), name or "TFRecordReader")


class TextLineReader(ReaderBase):
    def __init__(self, skip_header_lines=None, name=None):
        super().__init__(lambda: _io.TextLineReader(skip_header_lines=skip_header_lines, name=name),
                         name or "TextLineReader")


class FixedLengthRecordReader(ReaderBase):
    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None, name=None, encoding=None):
        super().__init__(lambda: _io.FixedLengthRecordReader(record_bytes, header_bytes, footer_bytes, hop_bytes,
                                                             name=name, encoding=encoding),
                         name or "FixedLengthRecordReader")


class WholeFileReader(ReaderBase):
    def __init__(self, name=None):
        super().__init__(lambda: _io.WholeFileReader(name=name), name or "WholeFileReader")


class IdentityReader(ReaderBase):
    def __init__(self, name=None):
        super().__init__(lambda: _io.IdentityReader(name=name), name or "IdentityReader")

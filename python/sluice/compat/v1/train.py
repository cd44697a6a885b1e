"""``tf.compat.v1.train`` of sluice.compat.v1: queue runners, producers and batchers returning tensors.

A :class:`QueueRunner` takes enqueue *ops*, as TF's does; its threads (the
eager ``sluice.train.QueueRunner`` machinery) run them with the Session.
Producers build TF's queue through the eager producers (their C++ runners
give TF's orders for a seed), per Session. Batchers build TF's queue,
enqueue op and QueueRunner; when the examples come from a reader through
ops the engine runs natively, the batch is built as the engine's native
producer chain instead (sluice.compat.v1._native), with no GIL per example.
"""

import threading

import numpy as np

from sluice import dtypes as _dtypes
from sluice import errors
from sluice import train as _sl_train
from sluice.compat.v1 import _graph
from sluice.compat.v1 import _math_ops
from sluice.compat.v1 import _namespaces
from sluice.compat.v1 import _native
from sluice.compat.v1 import _queue_ops
from sluice.compat.v1 import _session
from sluice.compat.v1 import _sparse
from sluice.compat.v1._graph import GraphKeys, Operation, as_shape, make_ctx_op
from sluice.train import (BytesList, Coordinator, Example, Feature, FeatureList, FeatureLists, Features,  # noqa: F401
                          FloatList, Int64List, LooperThread, SequenceExample)

QUEUE_RUNNERS = GraphKeys.QUEUE_RUNNERS


# ---- queue runners ----------------------------------------------------------------------

class QueueRunner:
    """``tf.train.QueueRunner``: threads that run `enqueue_ops` (ops of the graph) until their input ends."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        del queue_runner_def, import_scope
        if not queue or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else queue.close(cancel_pending_enqueues=True)
        self._types = queue_closed_exception_types
        self._lock = threading.Lock()

    queue = property(lambda self: self._queue)
    enqueue_ops = property(lambda self: self._enqueue_ops)
    close_op = property(lambda self: self._close_op)
    cancel_op = property(lambda self: self._cancel_op)
    name = property(lambda self: self._queue.name)

    @property
    def queue_closed_exception_types(self):
        return self._types or (errors.OutOfRangeError,)

    def _runner(self, sess):
        """This Session's eager QueueRunner (one per Session, as TF keeps threads per session)."""
        with self._lock:
            key = ("queue_runner", id(self))
            runner = sess._state.get(key)
            if runner is None:
                queue = sess.resource(self._queue._res)
                runner = _sl_train.QueueRunner(
                    queue, [_step(sess, op) for op in self._enqueue_ops], close_op=_step(sess, self._close_op),
                    cancel_op=_step(sess, self._cancel_op), queue_closed_exception_types=self._types)
                sess._state[key] = runner
            return runner

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        return self._runner(sess).create_threads(coord=coord, daemon=daemon, start=start)

    @property
    def exceptions_raised(self):
        return []


def _step(sess, op):
    def run():
        sess.run(op)
    run.__name__ = getattr(op, "name", "op").replace("/", "_")
    return run


def add_queue_runner(qr, collection=QUEUE_RUNNERS):
    _graph.get_default_graph().add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True, collection=QUEUE_RUNNERS):
    """Starts the queue runners of `sess`'s graph (the default session's when None); returns the threads."""
    sess = _session.default_session_for(sess)
    sess.build_all()
    threads = []
    for qr in sess.graph.get_collection(collection):
        threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    threads.extend(_sl_train.start_queue_runners(sess=sess._sl_session, coord=coord, daemon=daemon, start=start))
    return threads


queue_runner = _namespaces.namespace("train.queue_runner", {
    "QueueRunner": QueueRunner, "add_queue_runner": add_queue_runner, "start_queue_runners": start_queue_runners})


# ---- producers --------------------------------------------------------------------------

def _maybe_tensor(value):
    return value if isinstance(value, (_graph.Tensor, _graph.Variable)) else None


def _producer(eager_builder, value, dtype, shape, name, **kwargs):
    """A queue filled per Session by the eager producer `eager_builder(value, **kwargs)`."""
    tensor = _maybe_tensor(value)
    if tensor is not None:
        q = _queue_ops._BuiltQueue(lambda v: eager_builder(v, **kwargs), dtype, shape, name,
                                   inputs=[_math_ops.convert_to_tensor(tensor)])
    else:
        q = _queue_ops._BuiltQueue(lambda: eager_builder(value, **kwargs), dtype, shape, name)
    return q


def _seed_kwargs(seed, shuffle):
    graph = _graph.get_default_graph()
    if not shuffle:
        return {}
    from sluice import _input  # noqa: PLC0415
    s1, s2 = _input._tf_seed_pair(seed, graph.seed, graph)
    # The eager producers take the op seed and the graph seed of their own graph: pass TF's pair through.
    return {"_seeds": (s1, s2)}


def _eager_with_seeds(builder):
    def build(value, _seeds=None, **kwargs):
        if _seeds is not None and _seeds[0] is not None:
            from sluice import _graph as _sl_graph  # noqa: PLC0415
            _sl_graph.get_default_graph().seed = _seeds[0]
            kwargs["seed"] = _seeds[1]
        return builder(value, **kwargs)
    return build


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                          name=None, cancel_op=None):
    if isinstance(string_tensor, (list, tuple)) and not string_tensor:
        raise ValueError("string_input_producer requires a non-null input tensor")
    return _producer(_eager_with_seeds(_sl_train.string_input_producer), string_tensor, _dtypes.string, [],
                     name or "input_producer", num_epochs=num_epochs, shuffle=shuffle, capacity=capacity,
                     **_seed_kwargs(seed, shuffle))


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None, capacity=32,
                   shared_name=None, summary_name=None, name=None, cancel_op=None):
    t = input_tensor if isinstance(input_tensor, _graph.Tensor) else _math_ops.convert_to_tensor(input_tensor)
    shape = element_shape if element_shape is not None else t.shape[1:]
    return _producer(_eager_with_seeds(_sl_train.input_producer), t, t.dtype, shape, name or "input_producer",
                     element_shape=element_shape, num_epochs=num_epochs, shuffle=shuffle, capacity=capacity,
                     **_seed_kwargs(seed, shuffle))


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None, name=None):
    return _producer(_eager_with_seeds(_sl_train.range_input_producer), limit, _dtypes.int32, [],
                     name or "input_producer", num_epochs=num_epochs, shuffle=shuffle, capacity=capacity,
                     **_seed_kwargs(seed, shuffle))


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                         name=None):
    """TF's slice_input_producer: tensors giving the next slice (all from one row in a run)."""
    if not tensor_list:
        raise ValueError("Expected at least one tensor in slice_input_producer().")
    tensors = [_math_ops.convert_to_tensor(t) for t in tensor_list]
    graph = _graph.get_default_graph()
    kwargs = dict(num_epochs=num_epochs, shuffle=shuffle, capacity=capacity, **_seed_kwargs(seed, shuffle))
    build = _eager_with_seeds(_sl_train.slice_input_producer)
    res = _session.Resource(graph, lambda sess: build(sess.run(tensors), **kwargs), "input_producer")

    def compute(ctx):
        return tuple(ctx.session.resource(res)(timeout=ctx.timeout))
    op = make_ctx_op("SliceInputProducer", [], compute, [(t.dtype, t.shape[1:]) for t in tensors],
                     name=name or "input_producer", graph=graph)
    op.attrs["native"] = ("slice", res)
    return list(op.outputs)


def limit_epochs(tensor, num_epochs=None, name=None):
    """TF's limit_epochs: `tensor` `num_epochs` times (counted per Session), then OutOfRangeError."""
    t = _math_ops.convert_to_tensor(tensor)
    if num_epochs is None:
        return t
    if num_epochs <= 0:
        raise ValueError("num_epochs must be > 0 not %d." % num_epochs)
    key = object()
    lock = threading.Lock()

    def compute(ctx, value):
        store = ctx.session._state
        with lock:
            n = store.get(key, 0)
            if n >= num_epochs:
                raise errors.OutOfRangeError(None, None, "Reached limit of %d" % num_epochs)
            store[key] = n + 1
        return (value,)
    return make_ctx_op("LimitEpochs", [t], compute, [(t.dtype, t.shape)], name=name or "limit_epochs").outputs[0]


def match_filenames_once(pattern, name=None):
    files = _sl_train.match_filenames_once(pattern)
    return _math_ops.constant(np.asarray(files, dtype=object) if files else np.zeros([0], dtype=object),
                              _dtypes.string, name=name or "matching_filenames")


# ---- batchers ---------------------------------------------------------------------------

def _flatten(tensors):
    """(kind, keys, flat list) of a batcher's `tensors` argument."""
    if isinstance(tensors, dict):
        keys = sorted(tensors)
        return "dict", keys, [tensors[k] for k in keys]
    if isinstance(tensors, (list, tuple)):
        return "list", None, list(tensors)
    return "single", None, [tensors]


def _unflatten(kind, keys, flat):
    if kind == "dict":
        return dict(zip(keys, flat))
    if kind == "single" or len(flat) == 1:  # TF's batchers give a list of one as its tensor
        return flat[0]
    return flat


def _prepare(flat, enqueue_many):
    """Each component as a plain tensor (SparseTensors packed), and how to restore it after batching."""
    out, restore = [], []
    for x in flat:
        if _sparse.is_sparse(x):
            rank = x.get_shape().rank
            out.append(_sparse.pack(x, many=enqueue_many))
            restore.append(("sparse", x.dtype, None if rank is None else (rank - 1 if enqueue_many else rank)))
        else:
            out.append(_math_ops.convert_to_tensor(x))
            restore.append(None)
    return out, restore


def _restore(dequeued, restore):
    return [_sparse.unpack_batch(t, r[1], r[2]) if r else t for t, r in zip(dequeued, restore)]


def _shapes_for(tensors, shapes, enqueue_many, dynamic_pad, restore):
    if shapes is not None:
        shapes = [as_shape(s) for s in shapes]
    else:
        shapes = [t.shape[1:] if enqueue_many else t.shape for t in tensors]
        shapes = [as_shape([]) if r else s for s, r in zip(shapes, restore)]
    for s in shapes:
        if s.rank is None:
            raise ValueError("All shapes must be fully defined: %s" % shapes)
    return shapes


def _batch_impl(kind_name, tensors_list, batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                allow_smaller_final_batch, name, keep_input=True, num_threads=1, min_after_dequeue=None, seed=None):
    structure = _flatten(tensors_list[0])
    native = _native.try_native_batch(kind_name, tensors_list, batch_size, capacity, enqueue_many, shapes,
                                      dynamic_pad, allow_smaller_final_batch, num_threads, min_after_dequeue, seed,
                                      keep_input, structure, name)
    if native is not None:
        return native
    prepared = [_prepare(_flatten(t)[2], enqueue_many) for t in tensors_list]
    flat, restore = prepared[0]
    dtypes = [t.dtype for t in flat]
    shapes = _shapes_for(flat, shapes, enqueue_many, dynamic_pad, restore)
    pad = dynamic_pad or any(not s.is_fully_defined() for s in shapes)
    name = name or kind_name
    with _graph.get_default_graph().name_scope(name):
        if min_after_dequeue is not None:
            if any(not s.is_fully_defined() for s in shapes):
                raise ValueError("All shapes must be fully defined: %s" % shapes)
            queue = _queue_ops.RandomShuffleQueue(capacity, min_after_dequeue, dtypes, shapes, seed=seed,
                                                  name="random_shuffle_queue")
        elif pad:
            queue = _queue_ops.PaddingFIFOQueue(capacity, dtypes, shapes, name="padding_fifo_queue")
        else:
            queue = _queue_ops.FIFOQueue(capacity, dtypes, shapes, name="fifo_queue")
        enqueue_ops = []
        for flat_i, _ in prepared:
            op = queue.enqueue_many(flat_i) if enqueue_many else queue.enqueue(flat_i)
            enqueue_ops.append(_maybe_keep(op, keep_input, enqueue_many, queue, flat_i))
        if len(tensors_list) == 1:
            enqueue_ops = enqueue_ops * num_threads
        add_queue_runner(QueueRunner(queue, enqueue_ops))
        out = (queue.dequeue_up_to(batch_size) if allow_smaller_final_batch else queue.dequeue_many(batch_size))
    out = out if isinstance(out, list) else [out]
    return _unflatten(structure[0], structure[1], _restore(out, restore))


def _maybe_keep(op, keep_input, enqueue_many, queue, flat):
    """The enqueue op guarded by `keep_input` (a bool or a bool tensor; a vector filters rows)."""
    if keep_input is True:
        return op
    keep = _math_ops.convert_to_tensor(keep_input, _dtypes.bool)
    if keep.shape.rank == 1:
        if not enqueue_many:
            raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
        return queue.enqueue_many([_math_ops.gather(t, _math_ops.where(keep)[:, 0]) for t in flat])
    inner = op

    def compute(ctx, k):
        if bool(k):
            ctx.run_op(inner)
        return ()
    # The enqueue runs only when kept: it is computed inside, not as an input.
    return Operation(keep.graph, "MaybeEnqueue", "cond_enqueue", [keep], compute, [], stateful=True)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
          allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch_impl("batch", [tensors], batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                       allow_smaller_final_batch, name, num_threads=num_threads)


def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
                dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch_impl("batch", [tensors], batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                       allow_smaller_final_batch, name, keep_input=keep_input, num_threads=num_threads)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
               allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch_impl("batch_join", list(tensors_list), batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                       allow_smaller_final_batch, name)


def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False, shapes=None,
                     dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch_impl("batch_join", list(tensors_list), batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                       allow_smaller_final_batch, name, keep_input=keep_input)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None, enqueue_many=False,
                  shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch_impl("shuffle_batch", [tensors], batch_size, capacity, enqueue_many, shapes, False,
                       allow_smaller_final_batch, name, num_threads=num_threads, min_after_dequeue=min_after_dequeue,
                       seed=seed)


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input, num_threads=1, seed=None,
                        enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch_impl("shuffle_batch", [tensors], batch_size, capacity, enqueue_many, shapes, False,
                       allow_smaller_final_batch, name, keep_input=keep_input, num_threads=num_threads,
                       min_after_dequeue=min_after_dequeue, seed=seed)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None, enqueue_many=False,
                       shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    return _batch_impl("shuffle_batch_join", list(tensors_list), batch_size, capacity, enqueue_many, shapes, False,
                       allow_smaller_final_batch, name, min_after_dequeue=min_after_dequeue, seed=seed)


def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, keep_input, seed=None,
                             enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None,
                             name=None):
    return _batch_impl("shuffle_batch_join", list(tensors_list), batch_size, capacity, enqueue_many, shapes, False,
                       allow_smaller_final_batch, name, keep_input=keep_input, min_after_dequeue=min_after_dequeue,
                       seed=seed)


# ---- the rest of tf.train that input code touches ---------------------------------------

def get_global_step(graph=None):
    graph = graph or _graph.get_default_graph()
    steps = graph.get_collection("global_step")
    return steps[0] if steps else None


def get_or_create_global_step(graph=None):
    step = get_global_step(graph)
    if step is None:
        from sluice.compat.v1._variables import Variable  # noqa: PLC0415
        step = Variable(np.int64(0), trainable=False, name="global_step",
                        collections=[GraphKeys.GLOBAL_VARIABLES, "global_step"])
    return step


def create_global_step(graph=None):
    return get_or_create_global_step(graph)


def _not_provided(name, eager):
    def fn(*args, **kwargs):
        _graph.not_provided("train." + name, eager)
    fn.__name__ = name
    return fn


Saver = _not_provided("Saver", "sluice saves input state with sluice.data iterators' checkpoints; "
                      "model variables are not sluice's")
MonitoredTrainingSession = _not_provided("MonitoredTrainingSession", "use tf.Session with start_queue_runners")
GradientDescentOptimizer = _not_provided("GradientDescentOptimizer", "sluice is an input pipeline: train the "
                                         "model with your framework, fed from sess.run(batch)")
AdamOptimizer = _not_provided("AdamOptimizer", "sluice is an input pipeline: train the model with your framework")


__getattr__ = _graph.module_getattr("train", "sl.train")

"""Compiling a batcher's input subgraph into the engine's native stage chain.

When every tensor a batcher enqueues comes, through ops the engine runs in
C++, from one source, the batch is built per Session as the eager batcher
over a native producer, whose C++ runner threads read, parse and decode
without the GIL. The sources and ops it compiles:

* ``reader.read(queue)`` -> ``parse_single_example`` (FixedLenFeatures) ->
  optionally ``image.decode_jpeg`` of a feature:
  ``read_producer(reader, queue).map_parse_example(...).map_decode_jpeg(...)``;
* ``reader.read(queue)``'s key and value themselves (parsed after batching);
* the tensors of one ``slice_input_producer``;
* a ``cast`` of any of these, applied after the dequeue (it commutes with
  batching);
* chains of element ops with a native counterpart (decode_raw, strided_slice,
  reshape, transpose, cast, scalar arithmetic, random_crop / flips /
  brightness / contrast, per_image_standardization) from a reader's record or
  a parsed feature: one fused C++ map stage (``_native_steps``), as in
  CIFAR-10's ``distorted_inputs`` and MNIST's ``fully_connected_reader``.

``batch_join`` / ``shuffle_batch_join`` compile when each list compiles to
the same structure (one reader each, the TF 1 way to read in parallel).
Anything else returns None, and the batcher evaluates its ops in Python.
"""

from sluice import _parsing
from sluice import train as _sl_train
from sluice.compat.v1 import _graph
from sluice.compat.v1 import _math_ops
from sluice.compat.v1 import _native_steps
from sluice.compat.v1._graph import as_shape, make_ctx_op
from sluice.compat.v1._session import Resource


def _native_attr(t, kind):
    nat = t.op.attrs.get("native") if isinstance(t, _graph.Tensor) else None
    return nat if nat is not None and nat[0] == kind and not t.op.control_inputs else None


def _strip_cast(t):
    """(the tensor under a Cast, the Cast's dtype) or (t, None)."""
    if isinstance(t, _graph.Tensor) and t.op.type == "Cast" and not t.op.control_inputs:
        return t.op.inputs[0], t.dtype
    return t, None


def _parsed_leaf(t):
    """(parse op, key, decode options or None) for a parsed (and maybe decoded) feature, else None."""
    decode = None
    nat = _native_attr(t, "decode_jpeg")
    if nat is not None:
        decode = nat[1]
        if decode["try_recover_truncated"] or decode["acceptable_fraction"] != 1:
            return None
        t = t.op.inputs[0]
    nat = _native_attr(t, "parse")
    if nat is None or not all(isinstance(f, _parsing.FixedLenFeature) for f in nat[1].values()):
        return None
    return t.op, nat[2][t.value_index], decode


class _Chain:
    """How to build, per Session, a native producer giving `flat`'s values (a component each)."""

    def __init__(self, build, components):
        self.build = build  # sess -> NativeProducer, selecting `components` in order
        self.components = components  # what identifies each selected component (for join checks)


def _reader_chain(inner):
    leaves = [_parsed_leaf(t) for t in inner]
    if any(leaf is None for leaf in leaves) or len({leaf[0] for leaf in leaves}) != 1:
        return None
    keys = [leaf[1] for leaf in leaves]
    if len(set(keys)) != len(keys):
        return None
    parse_op = leaves[0][0]
    value = parse_op.inputs[0]
    nat = _native_attr(value, "read")
    if nat is None or value.value_index != 1:
        return None
    reader, queue = nat[1], nat[2]
    features = parse_op.attrs["native"][1]
    decodes = [(leaf[1], leaf[2]) for leaf in leaves if leaf[2] is not None]

    def build(sess):
        producer = _sl_train.read_producer(sess.resource(reader._res), sess.resource(queue._res))
        producer = producer.map_parse_example(features)
        for key, d in decodes:
            producer = producer.map_decode_jpeg(key, channels=d["channels"], ratio=d["ratio"],
                                                fancy_upscaling=d["fancy_upscaling"], dct_method=d["dct_method"])
        return producer.map_select([producer._component(k) for k in keys])
    return _Chain(build, [("parsed", leaf[1], leaf[2] is not None) for leaf in leaves])


def _read_chain(inner):
    """The records of one ``reader.read(queue)`` themselves (key and/or value), e.g. to parse after batching."""
    nats = [_native_attr(t, "read") for t in inner]
    if any(n is None for n in nats) or len({t.op for t in inner}) != 1:
        return None
    reader, queue = nats[0][1], nats[0][2]
    indices = [t.value_index for t in inner]

    def build(sess):
        return _sl_train.read_producer(sess.resource(reader._res), sess.resource(queue._res)).map_select(indices)
    return _Chain(build, [("read", i) for i in indices])


def _slice_chain(inner):
    nats = [_native_attr(t, "slice") for t in inner]
    if any(n is None for n in nats) or len({t.op for t in inner}) != 1:
        return None
    res = nats[0][1]
    indices = [t.value_index for t in inner]

    def build(sess):
        return sess.resource(res).map_select(indices)
    return _Chain(build, [("slice", i) for i in indices])


def _chain(flat):
    inner = [_strip_cast(t)[0] for t in flat]
    if not inner or not all(isinstance(t, _graph.Tensor) for t in inner):
        return None
    return (_reader_chain(inner) or _read_chain(inner) or _slice_chain(inner)
            or _native_steps.step_chain(inner, _Chain))


def try_native_batch(kind_name, tensors_list, batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                     allow_smaller_final_batch, num_threads, min_after_dequeue, seed, keep_input, structure, name):
    """The batch as a native stage chain (in `structure`), or None if the subgraph is not all native."""
    if enqueue_many or keep_input is not True:
        return None
    from sluice.compat.v1.train import _flatten, _unflatten  # noqa: PLC0415 - train imports this module
    flats = [_flatten(t)[2] for t in tensors_list]
    chains = [_chain(flat) for flat in flats]
    if any(c is None for c in chains) or any(c.components != chains[0].components for c in chains[1:]):
        return None
    casts = [_strip_cast(t)[1] for t in flats[0]]
    if any([_strip_cast(t)[1] for t in flat] != casts for flat in flats[1:]):
        return None
    inner = [_strip_cast(t)[0] for t in flats[0]]
    # A Cast keeps the shape: set_shape on the cast tells the tensor under it too.
    static = ([as_shape(s) for s in shapes] if shapes is not None
              else [t.shape.merge_with(f.shape) for t, f in zip(inner, flats[0])])
    if not dynamic_pad and not all(s.is_fully_defined() for s in static):
        return None
    eager_shapes = [list(s) for s in static]
    join = len(tensors_list) > 1

    def create(sess):
        producers = [c.build(sess) for c in chains]
        common = dict(shapes=eager_shapes, allow_smaller_final_batch=allow_smaller_final_batch)
        if min_after_dequeue is None:
            if join:
                return _sl_train.batch_join(producers, batch_size, capacity=capacity, dynamic_pad=dynamic_pad,
                                            **common)
            return _sl_train.batch(producers[0], batch_size, num_threads=num_threads, capacity=capacity,
                                   dynamic_pad=dynamic_pad, **common)
        if join:
            return _sl_train.shuffle_batch_join(producers, batch_size, capacity, min_after_dequeue, seed=seed,
                                                **common)
        return _sl_train.shuffle_batch(producers[0], batch_size, capacity, min_after_dequeue,
                                       num_threads=num_threads, seed=seed, **common)
    graph = _graph.get_default_graph()
    res = Resource(graph, create, name or kind_name)

    def compute(ctx):
        batch = ctx.session.resource(res).dequeue(timeout=ctx.timeout)
        return tuple(batch) if isinstance(batch, (list, tuple)) else (batch,)
    lead = [None if allow_smaller_final_batch else batch_size]
    op = make_ctx_op("QueueDequeueManyV2", [], compute,
                     [(t.dtype, as_shape(lead).concatenate(s)) for t, s in zip(inner, static)],
                     name=(name or kind_name) + "/native", graph=graph)
    outs = [_math_ops.cast(o, c) if c is not None else o for o, c in zip(op.outputs, casts)]
    return _unflatten(structure[0], structure[1], outs)

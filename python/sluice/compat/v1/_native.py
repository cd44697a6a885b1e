"""Compiling a batcher's input subgraph into the engine's native stage chain.

When every tensor a batcher enqueues comes from one ``reader.read(queue)``
through ``parse_single_example`` (FixedLenFeatures) and optionally
``image.decode_jpeg`` of a feature, the batch is built per Session as
``sluice.train.batch(read_producer(reader, queue).map_parse_example(...)
.map_decode_jpeg(...).map_select(...))``: C++ runner threads read, parse and
decode without the GIL, as the eager native producers do. A ``cast`` of
such a tensor is applied after the dequeue (it commutes with batching).
Anything else returns None, and the batcher evaluates its ops in Python.
"""

from sluice import _parsing
from sluice import train as _sl_train
from sluice.compat.v1 import _graph
from sluice.compat.v1 import _math_ops
from sluice.compat.v1._graph import as_shape, make_ctx_op
from sluice.compat.v1._session import Resource


def _native_attr(t, kind):
    nat = t.op.attrs.get("native") if isinstance(t, _graph.Tensor) else None
    return nat if nat is not None and nat[0] == kind and not t.op.control_inputs else None


def _leaf(t):
    """(parse op, key, decode options or None, cast dtype or None) for a tensor the chain gives, else None."""
    cast = None
    if isinstance(t, _graph.Tensor) and t.op.type == "Cast" and not t.op.control_inputs:
        cast, t = t.dtype, t.op.inputs[0]
    decode = None
    nat = _native_attr(t, "decode_jpeg")
    if nat is not None:
        decode = nat[1]
        if decode["try_recover_truncated"] or decode["acceptable_fraction"] != 1:
            return None
        t = t.op.inputs[0]
    nat = _native_attr(t, "parse")
    if nat is None:
        return None
    features, keys = nat[1], nat[2]
    if not all(isinstance(f, _parsing.FixedLenFeature) for f in features.values()):
        return None
    return t.op, keys[t.value_index], decode, cast


def _source(parse_op):
    """(reader, filename queue) feeding `parse_op`, or None."""
    value = parse_op.inputs[0]
    nat = _native_attr(value, "read")
    if nat is None or value.value_index != 1:
        return None
    return nat[1], nat[2]


def try_native_batch(kind_name, tensors_list, batch_size, capacity, enqueue_many, shapes, dynamic_pad,
                     allow_smaller_final_batch, num_threads, min_after_dequeue, seed, keep_input, structure, name):
    """The batch as a native stage chain (in `structure`), or None if the subgraph is not all native."""
    if len(tensors_list) != 1 or enqueue_many or keep_input is not True or not structure[2]:
        return None
    leaves = [_leaf(t) for t in structure[2]]
    if any(leaf is None for leaf in leaves) or len({leaf[0] for leaf in leaves}) != 1:
        return None
    keys = [leaf[1] for leaf in leaves]
    if len(set(keys)) != len(keys):
        return None
    source = _source(leaves[0][0])
    if source is None:
        return None
    inner = [t.op.inputs[0] if leaf[3] is not None else t for t, leaf in zip(structure[2], leaves)]
    static = [as_shape(s) for s in shapes] if shapes is not None else [t.shape for t in inner]
    if not dynamic_pad and not all(s.is_fully_defined() for s in static):
        return None
    features = leaves[0][0].attrs["native"][1]
    reader, queue = source
    decodes = [(leaf[1], leaf[2]) for leaf in leaves if leaf[2] is not None]
    shape_of = {k: list(s) for k, s in zip(keys, static)}
    graph = _graph.get_default_graph()

    def create(sess):
        producer = _sl_train.read_producer(sess.resource(reader._res), sess.resource(queue._res))
        producer = producer.map_parse_example(features)
        for key, d in decodes:
            producer = producer.map_decode_jpeg(key, channels=d["channels"], ratio=d["ratio"],
                                                fancy_upscaling=d["fancy_upscaling"], dct_method=d["dct_method"])
        producer = producer.map_select(keys)
        if min_after_dequeue is None:
            return _sl_train.batch(producer, batch_size, num_threads=num_threads, capacity=capacity,
                                   shapes=shape_of, dynamic_pad=dynamic_pad,
                                   allow_smaller_final_batch=allow_smaller_final_batch)
        return _sl_train.shuffle_batch(producer, batch_size, capacity, min_after_dequeue, num_threads=num_threads,
                                       seed=seed, shapes=shape_of, allow_smaller_final_batch=allow_smaller_final_batch)
    res = Resource(graph, create, name or kind_name)

    def compute(ctx):
        batch = ctx.session.resource(res).dequeue(timeout=ctx.timeout)
        return tuple(batch[k] for k in keys)
    lead = [None if allow_smaller_final_batch else batch_size]
    op = make_ctx_op("QueueDequeueManyV2", [], compute,
                     [(t.dtype, as_shape(lead).concatenate(s)) for t, s in zip(inner, static)],
                     name=(name or kind_name) + "/native", graph=graph)
    outs = [_math_ops.cast(o, leaf[3]) if leaf[3] is not None else o for o, leaf in zip(op.outputs, leaves)]
    from sluice.compat.v1.train import _unflatten  # noqa: PLC0415 - train imports this module
    return _unflatten(structure[0], structure[1], outs)

"""Lowering chains of element ops (decode_raw, strided_slice, reshape, transpose, cast, scalar arithmetic, the
random image distortions, per_image_standardization) between a reader and a batcher into one fused C++ map.

The graph ops that have a native counterpart carry ``op.attrs["native_step"] = (name, args)`` (set by ``tag``):
the op maps its input 0 to its output, element-wise, with constant arguments. ``step_chain`` walks back from each
batched tensor through such ops to a reader's record or a parse_single_example feature, and builds, per Session,
``read_producer(...)[.map_parse_example(...)]`` followed by one ``_core.data.producer_native_chain`` stage: a
``select`` of the source component of each batched tensor, then each tensor's ops on its own component. The
producer's runner threads then run the whole subgraph in C++ without the GIL.

Random ops draw each element's randomness from their seed and the producer's call index (TF's values are not
reproduced): from the graph and op seeds when either is set, else a fresh seed per Session. A random op that two
batched tensors share is not lowered (each branch would draw its own values).
"""

import os
import zlib

from sluice import dtypes as _dtypes
from sluice.compat.v1 import _graph

_CASTABLE = frozenset(("bool", "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64", "float32",
                       "float64"))
_RANDOM = frozenset(("random_crop", "random_flip_left_right", "random_flip_up_down", "random_brightness",
                     "random_contrast"))
_SCALAR_DTYPES = frozenset(("float32", "float64", "int32", "int64"))


def tag(tensor, name, **args):
    """Marks `tensor`'s op as the native step `name` of its input 0; returns `tensor`."""
    if isinstance(tensor, _graph.Tensor):
        tensor.op.attrs["native_step"] = (name, args)
    return tensor


def castable(dtype):
    return _dtypes.as_dtype(dtype).name in _CASTABLE


def tag_cast(tensor, dtype):
    return tag(tensor, "cast", dtype=_dtypes.as_dtype(dtype).as_datatype_enum) if castable(dtype) else tensor


def tag_scalar(out, op_type, x, y):
    """Marks ``x <op> y`` as native when one side is a scalar constant of a supported dtype."""
    if not isinstance(out, _graph.Tensor) or out.dtype.name not in _SCALAR_DTYPES:
        return out
    if getattr(x, "dtype", out.dtype) != out.dtype or getattr(y, "dtype", out.dtype) != out.dtype:
        return out  # e.g. RealDiv of ints gives float64
    xc, yc = _const(x), _const(y)
    if yc is not None and isinstance(x, _graph.Tensor) and out.op.inputs[0] is x:
        name = {"AddV2": "add", "Sub": "sub", "Mul": "mul", "RealDiv": "div"}.get(op_type)
        value = yc
    elif xc is not None and isinstance(y, _graph.Tensor) and op_type in ("AddV2", "Mul", "Sub"):
        # c + x and c * x commute; c - x is rsub. Input 0 of the step must be the tensor: reorder.
        name = {"AddV2": "add", "Mul": "mul", "Sub": "rsub"}[op_type]
        value = xc
        out.op.attrs["native_input"] = 1
    else:
        return out
    if name is None:
        return out
    return tag(out, name, value=value)


def _const(t):
    """The value of a scalar Const tensor as a Python number, else None."""
    if not isinstance(t, _graph.Tensor) or t.op.type != "Const" or t.op.control_inputs:
        return None
    value = t.op.attrs.get("value")
    if value is None or getattr(value, "shape", None) != ():
        return None
    return value.item()


def _step_input(op):
    return op.inputs[op.attrs.get("native_input", 0)]


def _walk(t):
    """(source tensor, [step ops from the source to t]), following native steps back from `t`."""
    ops = []
    while isinstance(t, _graph.Tensor) and "native_step" in t.op.attrs and not t.op.control_inputs \
            and t.value_index == 0:
        ops.append(t.op)
        t = _step_input(t.op)
    ops.reverse()
    return t, ops


def _source(t):
    """("read", reader op, value index) or ("parse", parse op, key) for a chain's source tensor, else None."""
    if not isinstance(t, _graph.Tensor) or t.op.control_inputs:
        return None
    nat = t.op.attrs.get("native")
    if nat is None:
        return None
    if nat[0] == "read":
        return ("read", t.op, t.value_index)
    if nat[0] == "parse":
        from sluice import _parsing  # noqa: PLC0415
        if not all(isinstance(f, _parsing.FixedLenFeature) for f in nat[1].values()):
            return None
        value = t.op.inputs[0]
        read = value.op.attrs.get("native") if isinstance(value, _graph.Tensor) else None
        if read is None or read[0] != "read" or value.value_index != 1 or value.op.control_inputs:
            return None
        return ("parse", t.op, nat[2][t.value_index])
    return None


def _engine_seed(graph, op, seed):
    """The engine seed of random op `op`: from the graph and op seeds when set, else None (a fresh one)."""
    graph_seed = getattr(graph, "seed", None)
    if seed is None and graph_seed is None:
        return None
    text = "%s/%s/%s" % (graph_seed, seed, op.name)
    return (zlib.crc32(text.encode()) * 0x9E3779B97F4A7C15 + zlib.adler32(text.encode())) & 0xFFFFFFFFFFFFFFFF


def step_chain(inner, chain_cls):
    """A ``chain_cls(build, components)`` giving `inner`'s values from one native producer, or None."""
    if not inner or not all(isinstance(t, _graph.Tensor) for t in inner):
        return None
    walked = [_walk(t) for t in inner]
    if not any(ops for _, ops in walked):
        return None  # nothing to lower: the plain chains cover it
    sources = [_source(src) for src, _ in walked]
    if any(s is None for s in sources):
        return None
    kinds = {s[0] for s in sources}
    if len(kinds) != 1 or len({s[1] for s in sources}) != 1:
        return None
    if kinds == {"parse"}:
        read_op = sources[0][1].inputs[0].op
        features = sources[0][1].attrs["native"][1]
    else:
        read_op, features = sources[0][1], None
    reader, queue = read_op.attrs["native"][1], read_op.attrs["native"][2]
    # A random op shared by two branches would draw twice: not lowered.
    seen = {}
    for _, ops in walked:
        for op in ops:
            seen[op] = seen.get(op, 0) + 1
    if any(n > 1 and op.attrs["native_step"][0] in _RANDOM for op, n in seen.items()):
        return None
    graph = inner[0].graph
    fresh = {}
    for op in seen:
        name, args = op.attrs["native_step"]
        if name in _RANDOM:
            fresh[op] = _engine_seed(graph, op, args.get("seed"))

    def steps_for(session_seeds):
        steps = []
        for i, (_, ops) in enumerate(walked):
            for op in ops:
                name, args = op.attrs["native_step"]
                args = dict(args)
                if name in _RANDOM:
                    args["seed"] = session_seeds[op]
                steps.append((name, i, args))
        return steps

    def build(sess):
        from sluice import _core, _input  # noqa: PLC0415 - imported when a graph is lowered, not with tf ops
        from sluice import train as _sl_train  # noqa: PLC0415
        producer = _sl_train.read_producer(sess.resource(reader._res), sess.resource(queue._res))
        if features is not None:
            producer = producer.map_parse_example(features)
            picks = [producer._component(s[2]) for s in sources]
        else:
            picks = [s[2] for s in sources]
        seeds = {op: s if s is not None else int.from_bytes(os.urandom(8), "little") for op, s in fresh.items()}
        steps = [("select", 0, {"components": picks})] + steps_for(seeds)
        return _input._native(lambda: _input._build(_core.data.producer_native_chain, producer._core, steps),
                              _input._Structure("list", size=len(inner)))
    # What each component is, for batch_join's check that every list gives the same: the source and the steps.
    components = [("steps", s[0], s[2], tuple((op.attrs["native_step"][0], repr(sorted(
        (k, v) for k, v in op.attrs["native_step"][1].items() if k != "seed"))) for op in ops))
        for s, (_, ops) in zip(sources, walked)]
    return chain_cls(build, components)

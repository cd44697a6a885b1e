"""sluice.compat.v1: TensorFlow 1 input programs with only the import changed.

``import sluice.compat.v1 as tf`` in place of ``import tensorflow.compat.v1
as tf``: graphs, sessions, placeholders, variables, the four queues,
readers, ``tf.train`` producers and batchers, QueueRunner and the
Coordinator, ``parse_example`` and friends, ``decode_raw``/``decode_csv``,
``tf.image`` (TF 1's semantics) and ``tf.data`` with TF 1's iterators. It
is a thin symbolic layer over sluice's engine: ops build a graph, and
``Session.run`` evaluates it (op by op, or, for a batcher fed by a reader
through native ops, as the engine's GIL-free stage chain). An op it does
not provide raises NotImplementedError when the program names it, with the
eager spelling (see docs/porting-tf1.md).
"""

from sluice import dtypes
from sluice import errors
from sluice import python_io
from sluice.dtypes import (DType, as_dtype, bfloat16, complex64, complex128, double, float16, float32,  # noqa: F401
                           float64, half, int8, int16, int32, int64, string, uint8, uint16, uint32, uint64)
from sluice.dtypes import bool  # noqa: F401,A004 - TF's name
from sluice.compat.v1 import _graph
from sluice.compat.v1._graph import (Graph, GraphKeys, Operation, Tensor, TensorShape, add_to_collection,  # noqa: F401
                                     control_dependencies, executing_eagerly, get_collection, get_collection_ref,
                                     get_default_graph, is_tensor, name_scope, reset_default_graph)
from sluice.compat.v1._session import (ConfigProto, GPUOptions, InteractiveSession, RunMetadata,  # noqa: F401
                                       RunOptions, Session, SparseTensorValue, get_default_session)
from sluice.compat.v1._math_ops import *  # noqa: F401,F403
from sluice.compat.v1._math_ops import (abs, pow, range, round, slice)  # noqa: F401,A004
from sluice.compat.v1._variables import (Variable, assign, assign_add, assign_sub, global_variables, global_variables_initializer, group,  # noqa: F401
                                         initialize_all_variables, initialize_local_variables, local_variables,
                                         local_variables_initializer, no_op, tables_initializer,
                                         trainable_variables, variables_initializer)
from sluice.compat.v1._variables import tuple_ as tuple  # noqa: F401,A004
from sluice.compat.v1._queue_ops import (FIFOQueue, FixedLengthRecordReader, IdentityReader,  # noqa: F401
                                         PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue, ReaderBase,
                                         TextLineReader, TFRecordReader, WholeFileReader)
from sluice.compat.v1._parsing_ops import (FixedLenFeature, FixedLenSequenceFeature, SparseFeature,  # noqa: F401
                                           VarLenFeature, decode_csv, decode_raw, parse_example,
                                           parse_single_example, parse_single_sequence_example, serialize_sparse)
from sluice.compat.v1._sparse import SparseTensor, sparse_tensor_to_dense  # noqa: F401
from sluice.compat.v1 import data
from sluice.compat.v1 import image
from sluice.compat.v1 import train
from sluice.compat.v1.image import random_crop  # noqa: F401 - tf.random_crop

# Namespaces TF 1 programs use beside the top level: a name they lack is NotProvidedError naming what to write
# instead, as at the top level (_namespaces).
from sluice.compat.v1 import _namespaces  # noqa: E402
from sluice.compat.v1._io_ops import gfile, matching_files, read_file  # noqa: E402,F401

io = _namespaces.namespace("io", dict(
    {n: globals()[n] for n in ("FixedLenFeature", "FixedLenSequenceFeature", "SparseFeature", "VarLenFeature",
                               "decode_csv", "decode_raw", "parse_example", "parse_single_example",
                               "parse_single_sequence_example", "serialize_sparse", "PaddingFIFOQueue",
                               "PriorityQueue", "QueueBase", "RandomShuffleQueue", "read_file", "matching_files")},
    decode_jpeg=image.decode_jpeg, decode_png=image.decode_png, decode_image=image.decode_image,
    TFRecordWriter=python_io.TFRecordWriter, tf_record_iterator=python_io.tf_record_iterator,
    TFRecordOptions=python_io.TFRecordOptions, TFRecordCompressionType=python_io.TFRecordCompressionType,
    gfile=_namespaces.namespace("io.gfile", delegate=gfile)))
gfile = _namespaces.namespace("gfile", delegate=gfile)
queue = _namespaces.namespace("queue", {"FIFOQueue": FIFOQueue, "PaddingFIFOQueue": PaddingFIFOQueue,
                                        "PriorityQueue": PriorityQueue, "RandomShuffleQueue": RandomShuffleQueue,
                                        "QueueBase": QueueBase})
sparse = _namespaces.namespace("sparse", {"SparseTensor": SparseTensor, "to_dense": sparse_tensor_to_dense})
strings = _namespaces.namespace("strings", {"to_number": string_to_number})  # noqa: F405
random = _namespaces.namespace("random", {"uniform": random_uniform, "normal": random_normal,  # noqa: F405
                                          "shuffle": random_shuffle})  # noqa: F405
math = _namespaces.namespace("math", {n: globals()[n] for n in (
    "add", "subtract", "multiply", "divide", "truediv", "floordiv", "maximum", "minimum", "equal", "not_equal",
    "less", "greater", "less_equal", "greater_equal", "logical_and", "logical_or", "logical_not", "abs", "square",
    "sqrt", "exp", "log", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "argmax", "argmin")})
errors = _namespaces.namespace("errors", delegate=errors)
dtypes = _namespaces.namespace("dtypes", delegate=dtypes)
python_io = _namespaces.namespace("python_io", delegate=python_io)
for _name in _namespaces.EMPTY_NAMESPACES:
    globals()[_name] = _namespaces.namespace(_name)
del _name
newaxis = None


def disable_eager_execution():
    """A no-op: sluice.compat.v1 is always in graph mode."""


def disable_v2_behavior():
    """A no-op: sluice.compat.v1 is always TF 1."""


def enable_eager_execution(*args, **kwargs):
    _graph.not_provided("enable_eager_execution", "for eager code, use sluice itself (import sluice as sl)")


def set_random_seed(seed):
    """The default graph's random seed (``tf.compat.v1.set_random_seed``): seeds producers as TF's do."""
    get_default_graph().seed = seed


random.set_random_seed = staticmethod(set_random_seed)


def get_variable(*args, **kwargs):
    _graph.not_provided("get_variable", "use tf.Variable (sluice.compat.v1 keeps variables for input code only)")


__getattr__ = _graph.module_getattr("", "sl")

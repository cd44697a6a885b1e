"""sluice: TensorFlow's multithreaded input-data system, without TensorFlow.

``sluice.queue`` (FIFOQueue, RandomShuffleQueue, PaddingFIFOQueue,
PriorityQueue), ``sluice.train`` (Coordinator, QueueRunner, LooperThread)
and ``sluice.errors`` keep TensorFlow's names and arguments, so porting a
tf.compat.v1 input pipeline is a change of import. Operations run at once
(as tf.queue in eager mode) in a C++ engine that releases the GIL while it
waits.

TF 1's top-level names are here too, as tf.compat.v1 has them
(``sluice.FIFOQueue``, ``sluice.TFRecordReader``, ``sluice.parse_example``,
``sluice.decode_csv``, ``sluice.cast``, ``sluice.string_to_number``,
``sluice.python_io``, ...): the same objects as the layer modules'.
"""

from sluice import errors
from sluice import dtypes
from sluice.dtypes import (DType, as_dtype, float16, half, float32, float64, double, bfloat16,
                           int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool,
                           string, complex64, complex128)
from sluice import _core
from sluice import queue
from sluice import train
from sluice import io
from sluice import image
from sluice import python_io
from sluice import data
from sluice import distribute
from sluice import random  # tf.random.set_seed; not in __all__ (it would shadow the stdlib random)
from sluice.sparse_tensor import *  # noqa: F401,F403  SparseTensor, RaggedTensor

# TF 1's top-level names (tf.compat.v1.FIFOQueue, tf.compat.v1.TFRecordReader,
# tf.compat.v1.parse_example, ...): the same objects as the layer modules'.
from sluice.queue import (QueueBase, FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue,
                          PriorityQueue)
from sluice.io import (ReaderBase, TFRecordReader, TextLineReader, FixedLengthRecordReader,
                       WholeFileReader, IdentityReader, parse_single_example, parse_example,
                       parse_single_sequence_example, FixedLenFeature, VarLenFeature, SparseFeature,
                       FixedLenSequenceFeature, decode_raw, decode_csv)
from sluice._convert_ops import cast, string_to_number
from sluice._sparse_batch import SparseTensorSpec
# tf.TensorSpec (output_signature, element_spec): the class sluice.data's element_spec uses.
from sluice.data import TensorSpec
# Graphs and sessions (tf.compat.v1.Graph, Session, ...): the scope and the runs of input pipelines.
from sluice.train import (Graph, Session, get_default_graph, reset_default_graph, get_default_session,
                          set_random_seed)

__version__ = "0.1.0"


def __getattr__(name):
    # sluice.compat (TF 1 graph-mode programs with only the import changed: import sluice.compat.v1 as tf),
    # imported on first use so that `import sluice` does not pay for it.
    if name == "compat":
        import importlib  # noqa: PLC0415
        return importlib.import_module("sluice.compat")
    raise AttributeError("module 'sluice' has no attribute %r" % name)

# `from sluice import *` gives the modules, not the dtype names (`bool` would
# shadow the builtin).
__all__ = ["errors", "dtypes", "queue", "train", "io", "image", "python_io", "DType", "as_dtype"]

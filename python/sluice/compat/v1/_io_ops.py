"""``tf.io.read_file`` / ``tf.read_file`` and ``tf.io.matching_files`` / ``tf.matching_files`` as graph ops, and
``tf.gfile`` / ``tf.io.gfile`` (sluice.io.gfile: Python functions, as TF's are; local files only).

read_file is also a native step: between a reader and a batcher it runs in the engine's C++ stage chain.
"""

import os

import numpy as np

from sluice import _io_files
from sluice import dtypes as _dtypes
from sluice.compat.v1 import _math_ops
from sluice.compat.v1 import _native_steps
from sluice.compat.v1._graph import make_op

gfile = _io_files.gfile


def read_file(filename, name=None):
    """``tf.io.read_file``: the contents of the file `filename` (a string scalar), a string scalar."""
    x = _math_ops._in(filename, _dtypes.string)
    out = make_op("ReadFile", (x,), _io_files.read_file, [(_dtypes.string, [])], name=name)
    return _native_steps.tag(out, "read_file")


def matching_files(pattern, name=None):
    """``tf.io.matching_files``: the files matching `pattern` (a string or a list of them), sorted, a string vector."""
    x = _math_ops._in(pattern, _dtypes.string)

    def compute(v):
        patterns = [v] if np.ndim(v) == 0 else list(np.asarray(v, dtype=object).reshape(-1))
        return np.array([os.fsencode(p) for p in _io_files.matching_files(patterns)], dtype=object)
    return make_op("MatchingFiles", (x,), compute, [(_dtypes.string, [None])], name=name)

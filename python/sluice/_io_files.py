"""Files as TensorFlow's ``tf.io`` names them: ``read_file``, ``matching_files`` and ``tf.io.gfile``.

Local files only: sluice has no file-system plugins, so ``gs://``, ``s3://``
and ``hdfs://`` paths are not understood (they are taken as local paths).
``read_file`` and ``matching_files`` run in C++ (the same file system as
sluice's readers; the GIL is released while reading); ``gfile`` wraps Python's
``os`` and ``open``, raising sluice.errors classes where TF raises its own
(NotFoundError for a missing file, ...).
"""

import errno as _errno
import glob as _glob
import os
import shutil

import numpy as np

from sluice import _core
from sluice import errors

_d = _core.data


def read_file(filename, name=None):
    """``tf.io.read_file``: the whole contents of the file `filename`, as bytes.

    NotFoundError for a missing file, FailedPreconditionError for a
    directory, PermissionDenied, ... (TF's classes), each naming the file.
    """
    del name  # TF's op name
    if isinstance(filename, (list, tuple)) or getattr(filename, "ndim", 0) != 0:
        raise errors.InvalidArgumentError(None, None, "Input filename tensor must be scalar, but had shape: %s" %
                                          list(np.shape(filename)))
    return _d.read_file(_scalar_path(filename))


def matching_files(pattern, name=None):
    """``tf.io.matching_files``: the files matching glob `pattern` (or each of a list of them), sorted.

    ``*`` and ``?`` do not match ``/``; none matching gives an empty list
    (TF gives an empty string tensor).
    """
    del name
    patterns = [pattern] if isinstance(pattern, (str, bytes, os.PathLike)) or getattr(pattern, "ndim", 1) == 0 \
        else list(pattern)
    return _d.matching_files([_scalar_path(p) for p in patterns])


def _scalar_path(p):
    if hasattr(p, "item") and getattr(p, "ndim", None) == 0:
        p = p.item()
    if isinstance(p, bytes):
        return os.fsdecode(p)
    return p


# ---- gfile -------------------------------------------------------------------------------

_ERRNO_CLASSES = {
    _errno.ENOENT: errors.NotFoundError,
    _errno.EACCES: errors.PermissionDeniedError,
    _errno.EPERM: errors.PermissionDeniedError,
    _errno.EEXIST: errors.AlreadyExistsError,
    _errno.ENOTDIR: errors.FailedPreconditionError,
    _errno.EISDIR: errors.FailedPreconditionError,
    _errno.ENOTEMPTY: errors.FailedPreconditionError,
    _errno.ENOSPC: errors.ResourceExhaustedError,
}


def _op_error(e):
    """`e` (an OSError) as the sluice.errors class TF raises for it (file system errno map)."""
    cls = _ERRNO_CLASSES.get(e.errno, errors.UnknownError)
    return cls(None, None, "%s; %s" % (e.filename, e.strerror))


def _wrap_os(fn):
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except OSError as e:
            raise _op_error(e) from e
    call.__name__ = fn.__name__
    call.__doc__ = fn.__doc__
    return call


class GFile:
    """``tf.io.gfile.GFile``: a local file opened with `mode` ('r', 'rb', 'w', 'wb', 'a', 'ab').

    Text modes read and write str (UTF-8), binary modes bytes. A missing
    file is NotFoundError when first read (TF opens lazily). A context manager.
    """

    def __init__(self, name, mode="r"):
        self.name = os.fspath(name)
        self.mode = mode
        if mode.replace("b", "") not in ("r", "w", "a", "r+", "w+", "a+"):
            raise errors.InvalidArgumentError(None, None, "mode must be one of r, w, a (with b, +), got %r" % mode)
        self._file = None

    def _f(self):
        if self._file is None:
            try:
                encoding = None if "b" in self.mode else "utf-8"
                self._file = open(self.name, self.mode, encoding=encoding)  # noqa: SIM115 - closed in close()
            except OSError as e:
                raise _op_error(e) from e
        return self._file

    def read(self, n=-1):
        return self._f().read(n)

    def readline(self):
        return self._f().readline()

    def readlines(self):
        return self._f().readlines()

    def write(self, data):
        return self._f().write(data)

    def flush(self):
        if self._file is not None:
            self._file.flush()

    def seek(self, offset, whence=0):
        return self._f().seek(offset, whence)

    def tell(self):
        return self._f().tell()

    def size(self):
        return stat(self.name).length

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None

    def __iter__(self):
        return iter(self._f())

    def __next__(self):
        return next(self._f())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _FileStatistics:
    """``gfile.stat``'s result: length, mtime_nsec, is_directory."""

    def __init__(self, st, is_directory):
        self.length = st.st_size
        self.mtime_nsec = st.st_mtime_ns
        self.is_directory = is_directory


def glob(pattern):
    """``tf.io.gfile.glob``: the paths matching `pattern` (or any of a list of patterns), sorted as TF's."""
    return matching_files(pattern)


def exists(path):
    """``tf.io.gfile.exists``: True if `path` exists (file or directory)."""
    return os.path.exists(path)


def isdir(path):
    """``tf.io.gfile.isdir``: True if `path` is a directory."""
    return os.path.isdir(path)


def listdir(path):
    """``tf.io.gfile.listdir``: the names in directory `path` (no '.' or '..'), in os.listdir's order.

    NotFoundError "Could not find directory" if there is no such directory."""
    if not os.path.isdir(path):
        raise errors.NotFoundError(None, None, "Could not find directory %s" % (os.fspath(path),))
    return _wrap_os(os.listdir)(path)


@_wrap_os
def makedirs(path):
    """``tf.io.gfile.makedirs``: creates `path` and its missing parents; an existing directory is fine."""
    os.makedirs(path, exist_ok=True)


@_wrap_os
def mkdir(path):
    """``tf.io.gfile.mkdir``: creates directory `path` (its parent must exist). AlreadyExistsError if it does."""
    os.mkdir(path)


@_wrap_os
def remove(path):
    """``tf.io.gfile.remove``: deletes file `path`. NotFoundError if it does not exist."""
    os.remove(path)


@_wrap_os
def rename(oldname, newname, overwrite=False):
    """``tf.io.gfile.rename``: AlreadyExistsError if `newname` exists and not `overwrite`."""
    if not overwrite and os.path.exists(newname):
        raise FileExistsError(_errno.EEXIST, "File already exists", os.fspath(newname))
    os.replace(oldname, newname)


@_wrap_os
def rmtree(path):
    """``tf.io.gfile.rmtree``: deletes directory `path` and everything under it."""
    shutil.rmtree(path)


@_wrap_os
def copy(src, dst, overwrite=False):
    """``tf.io.gfile.copy``: AlreadyExistsError if `dst` exists and not `overwrite`."""
    if not overwrite and os.path.exists(dst):
        raise FileExistsError(_errno.EEXIST, "File already exists", os.fspath(dst))
    shutil.copyfile(src, dst)


@_wrap_os
def stat(path):
    """``tf.io.gfile.stat``: length, mtime_nsec and is_directory of `path`."""
    st = os.stat(path)
    return _FileStatistics(st, os.path.isdir(path))


def walk(top, topdown=True, onerror=None):
    """``tf.io.gfile.walk``: (dirname, subdirs, files) for each directory under `top`, as os.walk."""
    return os.walk(top, topdown=topdown, onerror=onerror)


def join(path, *paths):
    """``tf.io.gfile.join``: os.path.join."""
    return os.path.join(path, *paths)


class gfile:  # noqa: N801 - TF's name
    """``tf.io.gfile`` (local files only), with TF 1's ``tf.gfile`` spellings (Glob, Exists, MakeDirs, ...)."""

    GFile = GFile
    Open = GFile
    glob = staticmethod(glob)
    exists = staticmethod(exists)
    isdir = staticmethod(isdir)
    listdir = staticmethod(listdir)
    makedirs = staticmethod(makedirs)
    mkdir = staticmethod(mkdir)
    remove = staticmethod(remove)
    rename = staticmethod(rename)
    rmtree = staticmethod(rmtree)
    copy = staticmethod(copy)
    stat = staticmethod(stat)
    walk = staticmethod(walk)
    join = staticmethod(join)
    # TF 1's names (tf.compat.v1.gfile)
    Glob = glob
    Exists = exists
    IsDirectory = isdir
    ListDirectory = listdir
    MakeDirs = makedirs
    MkDir = mkdir
    Remove = remove
    Rename = rename
    DeleteRecursively = rmtree
    Copy = copy
    Stat = stat
    Walk = walk

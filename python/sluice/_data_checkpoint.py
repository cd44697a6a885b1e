"""Iterator checkpoints: ``iterator.save()`` / ``restore()`` and the
``tf.train.Checkpoint``-style adapter (``sluice.train.Checkpoint``,
``CheckpointManager``, ``latest_checkpoint``).

An iterator's position (sources, shuffle buffers and RNG draws, a parallel
map's finished results, prefetch buffers, interleave cycles) is bytes that
restore it in any process running the same pipeline, which then continues
with exactly the elements the saved iterator would have produced next. A
stage that cannot be saved (a Python generator, a queue) raises
``UnimplementedError`` naming it. A parallel map with ``deterministic=False``
continues with the same set of elements, not necessarily in the same order.

Files are written atomically (a temporary file in the same directory,
flushed and renamed over the target), so a process killed mid-save leaves
the previous checkpoint intact.

A checkpoint file of ``Checkpoint`` is: magic ``SLUICECK``, u32 entry count,
then per entry u32 name length | name | u64 value length | value
(little-endian); the entries are the tracked iterators' states and
``save_counter``.
"""

import os
import re
import struct

from sluice import _core
from sluice import errors

_d = _core.data
_MAGIC = b"SLUICECK"
_COUNTER = "save_counter"
_STATE_FILE = "checkpoint"  # TF's name for the directory's list of checkpoints


# ---- Iterator hooks (sluice.data.Iterator.save / restore) ----------------------

def iterator_save(self, path=None):
    """The position of this iterator as bytes; with `path`, also written there atomically (returns the bytes).

    Raises UnimplementedError naming a stage that cannot be saved (a Python
    generator, a queue); the iterator goes on unchanged then.
    """
    state = _d.save_iterator(self._it)
    if path is not None:
        write_atomically(os.fspath(path), state)
    return state


def iterator_restore(self, state):
    """Puts this iterator at the position `state` holds (bytes from ``save()``, or a path to them).

    Raises DataLossError for corrupt bytes and InvalidArgumentError for a
    checkpoint of another pipeline (the iterator is then at its start).
    """
    if isinstance(state, (str, os.PathLike)):
        with open(os.fspath(state), "rb") as f:
            state = f.read()
    _d.restore_iterator(self._it, bytes(state))


# ---- Files ----------------------------------------------------------------------

def write_atomically(path, data):
    """Writes `data` to `path` through a temporary file and a rename, so `path` is always whole."""
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, ".%s.tmp-%d" % (os.path.basename(path), os.getpid()))
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    try:  # make the rename itself durable
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


def _encode(entries):
    out = [_MAGIC, struct.pack("<I", len(entries))]
    for name, value in entries.items():
        raw = name.encode()
        out += [struct.pack("<I", len(raw)), raw, struct.pack("<Q", len(value)), value]
    return b"".join(out)


def _decode(data, path):
    def bad(why):
        return errors.DataLossError(None, None, "%s is not a sluice checkpoint: %s" % (path, why))
    if data[:8] != _MAGIC:
        raise bad("bad magic")
    try:
        (n,), pos, entries = struct.unpack_from("<I", data, 8), 12, {}
        for _ in range(n):
            (k,) = struct.unpack_from("<I", data, pos)
            name = data[pos + 4:pos + 4 + k].decode()
            (v,) = struct.unpack_from("<Q", data, pos + 4 + k)
            start = pos + 12 + k
            if start + v > len(data):
                raise bad("truncated")
            entries[name] = data[start:start + v]
            pos = start + v
    except (struct.error, UnicodeDecodeError):
        raise bad("truncated") from None
    if pos != len(data):
        raise bad("trailing bytes")
    return entries


# ---- tf.train.Checkpoint / CheckpointManager ---------------------------------------

class _LoadStatus:
    """What ``Checkpoint.restore`` returns (TF's load status): every tracked iterator is restored at once."""

    def assert_consumed(self):
        return self

    def assert_existing_objects_matched(self):
        return self

    def assert_nontrivial_match(self):
        return self

    def expect_partial(self):
        return self

    def run_restore_ops(self, session=None):
        pass

    def initialize_or_restore(self, session=None):
        pass


class Checkpoint:
    """``tf.train.Checkpoint`` for input pipelines: ``Checkpoint(iterator=it)`` saves and restores iterators.

    Keyword arguments name the tracked objects: sluice.data iterators (or
    other Checkpoints, saved under their name). ``save(prefix)`` writes
    ``prefix-<save_counter>`` and records it in the directory's
    ``checkpoint`` file; ``write(path)`` writes `path` alone;
    ``restore(path)`` / ``read(path)`` put every tracked iterator back.
    """

    def __init__(self, root=None, **kwargs):
        if root is not None:
            kwargs["root"] = root
        for name, obj in kwargs.items():
            if not (hasattr(obj, "save") and hasattr(obj, "restore")) or name == _COUNTER:
                raise ValueError("Checkpoint: `%s` is not a sluice.data iterator or Checkpoint: %r" % (name, obj))
        self._objects = dict(kwargs)
        self._save_counter = 0

    def __getattr__(self, name):
        objects = self.__dict__.get("_objects", {})
        if name in objects:
            return objects[name]
        raise AttributeError(name)

    @property
    def save_counter(self):
        """How many times ``save`` has run (restored from a checkpoint too)."""
        return self._save_counter

    def _state(self):
        entries = {_COUNTER: struct.pack("<q", self._save_counter)}
        for name, obj in self._objects.items():
            entries[name] = obj._checkpoint_bytes() if isinstance(obj, Checkpoint) else obj.save()
        return _encode(entries)

    def _checkpoint_bytes(self):
        return self._state()

    def _load(self, data, path):
        entries = _decode(data, path)
        missing = [name for name in self._objects if name not in entries]
        if missing:
            raise errors.InvalidArgumentError(None, None, "%s holds no object named %s (it holds %s)" % (
                path, ", ".join(missing), ", ".join(sorted(k for k in entries if k != _COUNTER))))
        for name, obj in self._objects.items():
            if isinstance(obj, Checkpoint):
                obj._load(entries[name], path + ":" + name)
            else:
                obj.restore(entries[name])
        if _COUNTER in entries:
            (self._save_counter,) = struct.unpack("<q", entries[_COUNTER])

    def restore(self, save_path, options=None):
        """Restores every tracked object from `save_path`; None does nothing (a first run, as in TF)."""
        if save_path is not None:
            self.read(save_path)
        return _LoadStatus()

    def read(self, save_path, options=None):
        """Restores from `save_path` (written by ``write`` or ``save``)."""
        save_path = os.fspath(save_path)
        try:
            with open(save_path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise errors.NotFoundError(None, None, "Failed to find any matching files for %s" % save_path) from None
        self._load(data, save_path)
        return _LoadStatus()

    def write(self, file_prefix, options=None):
        """Writes the tracked objects to `file_prefix` (atomically) and returns it; the counter is unchanged."""
        path = os.fspath(file_prefix)
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        write_atomically(path, self._state())
        return path

    def save(self, file_prefix, options=None):
        """Increments ``save_counter``, writes ``<file_prefix>-<save_counter>`` and makes it the latest."""
        self._save_counter += 1
        try:
            path = self.write("%s-%d" % (os.fspath(file_prefix), self._save_counter))
        except BaseException:
            self._save_counter -= 1
            raise
        directory = os.path.dirname(os.path.abspath(path))
        state = _read_state(directory)
        paths = [p for p in (state[1] if state else []) if p != path] + [path]
        _write_state(directory, path, paths)
        return path


class CheckpointManager:
    """``tf.train.CheckpointManager``: numbered saves in `directory`, the newest `max_to_keep` kept."""

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None, init_fn=None):
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError("CheckpointManager needs a sluice.train.Checkpoint, got %r" % (checkpoint,))
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError("Expected a positive integer or `None` for `max_to_keep`, got %d." % max_to_keep)
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._init_fn = init_fn
        state = _read_state(self._directory)
        self._checkpoints = [p for p in state[1] if os.path.exists(p)] if state else []

    @property
    def directory(self):
        return self._directory

    @property
    def checkpoint(self):
        return self._checkpoint

    @property
    def checkpoints(self):
        """The kept checkpoints' paths, oldest first."""
        return list(self._checkpoints)

    @property
    def latest_checkpoint(self):
        """The newest checkpoint's path, or None."""
        return self._checkpoints[-1] if self._checkpoints else None

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Writes ``<directory>/ckpt-<n>`` (n: `checkpoint_number`, else the checkpoint's save counter) and
        deletes the oldest beyond `max_to_keep`; returns the path."""
        os.makedirs(self._directory, exist_ok=True)
        ckpt = self._checkpoint
        ckpt._save_counter += 1
        number = ckpt._save_counter if checkpoint_number is None else int(checkpoint_number)
        try:
            path = ckpt.write("%s-%d" % (self._prefix, number))
        except BaseException:
            ckpt._save_counter -= 1
            raise
        self._checkpoints = [p for p in self._checkpoints if p != path] + [path]
        doomed = []
        if self._max_to_keep is not None and len(self._checkpoints) > self._max_to_keep:
            doomed = self._checkpoints[:-self._max_to_keep]
            self._checkpoints = self._checkpoints[-self._max_to_keep:]
        _write_state(self._directory, path, self._checkpoints)
        for p in doomed:  # after the state file no longer lists them
            try:
                os.remove(p)
            except FileNotFoundError:
                pass
        return path

    def restore_or_initialize(self):
        """Restores the latest checkpoint and returns its path, or calls init_fn and returns None."""
        if self.latest_checkpoint is not None:
            self._checkpoint.restore(self.latest_checkpoint)
            return self.latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """``tf.train.latest_checkpoint``: the newest checkpoint recorded in `checkpoint_dir`, or None."""
    state = _read_state(os.fspath(checkpoint_dir), latest_filename)
    if state is None or not os.path.exists(state[0]):
        return None
    return state[0]


# The directory's state file, in TF's text format:
#   model_checkpoint_path: "ckpt-3"
#   all_model_checkpoint_paths: "ckpt-2"
#   all_model_checkpoint_paths: "ckpt-3"
# Paths are relative to the directory where they lie in it.

def _write_state(directory, latest, paths):
    def rel(p):
        return os.path.relpath(p, directory) if os.path.dirname(os.path.abspath(p)) == os.path.abspath(directory) \
            else p
    lines = ['model_checkpoint_path: "%s"' % rel(latest)]
    lines += ['all_model_checkpoint_paths: "%s"' % rel(p) for p in paths]
    write_atomically(os.path.join(directory, _STATE_FILE), ("\n".join(lines) + "\n").encode())


def _read_state(directory, filename=None):
    """(latest path, [all paths]) from the state file, or None."""
    try:
        with open(os.path.join(directory, filename or _STATE_FILE)) as f:
            text = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    latest, paths = None, []
    for key, value in re.findall(r'^(\w+):\s*"(.*)"\s*$', text, re.M):
        path = value if os.path.isabs(value) else os.path.join(directory, value)
        if key == "model_checkpoint_path":
            latest = path
        elif key == "all_model_checkpoint_paths":
            paths.append(path)
    return (latest, paths) if latest is not None else None

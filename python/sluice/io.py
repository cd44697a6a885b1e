"""sluice.io: TensorFlow's record files, readers and parsers (``tf.io`` names).

TFRecord files:

* :class:`TFRecordWriter` writes them (``tf.io.TFRecordWriter``), plain or as
  one ZLIB/GZIP stream, as set by :class:`TFRecordOptions` /
  :class:`TFRecordCompressionType` or a string (``""``, ``"ZLIB"``,
  ``"GZIP"``).
* :func:`tf_record_iterator` reads one file record by record
  (``tf.compat.v1.io.tf_record_iterator``).
* :class:`TFRecordIndex` (a sluice extension) knows where every record of a
  file starts: ``len()``, random access and contiguous shards.

Queue-fed readers (``tf.compat.v1.ReaderBase`` and its subclasses):
:class:`TFRecordReader`, :class:`TextLineReader`,
:class:`FixedLengthRecordReader`, :class:`WholeFileReader` and
:class:`IdentityReader` take file names from a filename queue (a
``sluice.queue.FIFOQueue`` of ``sluice.string``) and return ``(key, value)``
records, with TensorFlow's keys::

    q = sluice.queue.FIFOQueue(32, [sluice.string])
    q.enqueue_many([["a.tfrecord", "b.tfrecord"]])
    q.close()
    reader = sluice.io.TFRecordReader()
    key, value = reader.read(q)          # b"a.tfrecord:0", the first record
    keys, values = reader.read_up_to(q, 100)

Everything runs at once (TensorFlow's graph mode needs a Session for this);
file I/O and waits on the queue release the GIL.

Errors are :mod:`sluice.errors` exceptions with TensorFlow's codes: a
missing file raises :class:`~sluice.errors.NotFoundError`, a corrupt record
:class:`~sluice.errors.DataLossError` whose message names the file, the
record index and the byte offset (also in ``experimental_payloads``:
``"file"``, ``"record"``, ``"offset"``), a closed and drained filename queue
:class:`~sluice.errors.OutOfRangeError`.

Parsing (``parse_example`` & co.) and the decoders come from
sluice._parsing, sluice._example and sluice._image_codec, re-exported below.
"""

import operator
import os

import numpy as np

from sluice import _core
from sluice import _graph
from sluice import errors

_Z_DEFLATED = 8  # zlib's only compression method


def _path(path):
    """The str of a str, bytes or os.PathLike path (``os.fsdecode``), for ``path`` and reprs.

    A file name that is not UTF-8 becomes a str with lone surrogates, which
    the extension turns back into the same bytes (``os.fsencode``, its one
    path conversion), so any file name round-trips.
    """
    return os.fsdecode(os.fspath(path))


def _optional_int(value, what):
    if value is None:
        return None
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError("%s must be an int or None, not %s" % (what, type(value).__name__)) from None


# ---- options -------------------------------------------------------------------------


class TFRecordCompressionType:
    """The type of compression of a TFRecord file (``tf.compat.v1.io.TFRecordCompressionType``)."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


class TFRecordOptions:
    """Options of a TFRecord file: its compression and zlib's parameters (``tf.io.TFRecordOptions``).

    An option left as None keeps TensorFlow's default (zlib's defaults, with
    ``mem_level`` 9 and 256 KiB buffers). The zlib options matter only for a
    compressed file; readers use ``input_buffer_size`` and ``window_bits``.

    Args:
      compression_type: ``"GZIP"``, ``"ZLIB"``, ``""`` or None (none), a
        :class:`TFRecordCompressionType` value, or another TFRecordOptions.
      flush_mode: what ``flush()`` asks of deflate: 0 (Z_NO_FLUSH, default),
        1 (Z_PARTIAL_FLUSH), 2 (Z_SYNC_FLUSH), 3 (Z_FULL_FLUSH), 5 (Z_BLOCK).
      input_buffer_size: bytes handed to zlib per call (> 0).
      output_buffer_size: compressed bytes gathered per file write (> 0).
      window_bits: log2 of the window, 8 to 15.
      compression_level: -1 (zlib's default, 6) or 0 to 9.
      compression_method: 8 (Z_DEFLATED), the only one zlib has, or None.
      mem_level: 1 to 9.
      compression_strategy: 0 (default), 1 (filtered), 2 (Huffman only),
        3 (RLE) or 4 (fixed).

    Raises:
      ValueError: for an invalid ``compression_type``. Out-of-range zlib
        values raise :class:`~sluice.errors.InvalidArgumentError` when a
        writer or reader is made with them.
    """

    compression_type_map = {
        TFRecordCompressionType.ZLIB: "ZLIB",
        TFRecordCompressionType.GZIP: "GZIP",
        TFRecordCompressionType.NONE: "",
    }

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None,
                 output_buffer_size=None, window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None, compression_strategy=None):
        # Checked now, kept as given (as TensorFlow does).
        self.get_compression_type_string(compression_type)
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options):
        """The compression of `options` as ``"ZLIB"``, ``"GZIP"`` or ``""``.

        Args:
          options: a TFRecordOptions, a TFRecordCompressionType value, a
            string, or None.

        Raises:
          ValueError: if `options` names no valid compression type.
        """
        if not options:
            return ""
        if isinstance(options, TFRecordOptions):
            return cls.get_compression_type_string(options.compression_type)
        if isinstance(options, TFRecordCompressionType):
            return cls.compression_type_map[options]
        if options in TFRecordOptions.compression_type_map:
            return cls.compression_type_map[options]
        if options in TFRecordOptions.compression_type_map.values():
            return options
        raise ValueError('Not a valid compression_type: "{}"'.format(options))

    def _as_core(self):
        """The engine's options (sluice._core.RecordOptions)."""
        if self.compression_method is not None and self.compression_method != _Z_DEFLATED:
            raise errors.InvalidArgumentError(
                None, None, "compression_method must be %d (Z_DEFLATED), not %r"
                % (_Z_DEFLATED, self.compression_method))
        return _core.RecordOptions(
            self.get_compression_type_string(self.compression_type),
            _optional_int(self.flush_mode, "flush_mode"),
            _optional_int(self.input_buffer_size, "input_buffer_size"),
            _optional_int(self.output_buffer_size, "output_buffer_size"),
            _optional_int(self.window_bits, "window_bits"),
            _optional_int(self.compression_level, "compression_level"),
            _optional_int(self.mem_level, "mem_level"),
            _optional_int(self.compression_strategy, "compression_strategy"))

    def __repr__(self):
        return "TFRecordOptions(compression_type=%r)" % (self.compression_type,)


def _core_options(options):
    """sluice._core.RecordOptions of a TFRecordOptions, compression type or None."""
    if not isinstance(options, TFRecordOptions):
        options = TFRecordOptions(compression_type=options)
    return options._as_core()


# ---- TFRecord files -------------------------------------------------------------------


class TFRecordWriter(_core.RecordWriter):
    """Writes records to a TFRecord file (``tf.io.TFRecordWriter``).

    Each record is framed as TensorFlow frames it (length, masked CRC32C of
    the length, data, masked CRC32C of the data); with ZLIB or GZIP the whole
    file is one compressed stream, byte-identical to TensorFlow's with the
    same options. Usable as a context manager, which closes the file::

        with sluice.io.TFRecordWriter("out.tfrecord", "GZIP") as w:
            w.write(example.SerializeToString())

    Methods:
      write(record): appends one record: bytes, str (written as UTF-8) or
        any C-contiguous bytes-like object.
      flush(): hands what was written to the operating system (for a
        compressed file, as far as ``flush_mode`` makes deflate emit it).
      close(): finishes the file; closing again does nothing.
      After close(), write() and flush() raise
      :class:`~sluice.errors.FailedPreconditionError` ("Writer is closed.").
      Write errors (disk full, ...) are sticky: every later call raises the
      same error.

    Args:
      path: the file to create (or truncate): str, bytes or os.PathLike.
      options: a TFRecordOptions, a TFRecordCompressionType value, a
        compression string or None.
      write_index: (keyword-only, sluice extension) also write the record
        index ``<path>.idx`` at close(), so that :class:`TFRecordIndex`
        need not scan the file.

    Raises:
      NotFoundError, PermissionDeniedError, ...: if `path` cannot be created.
      ValueError: for an invalid compression type.
      InvalidArgumentError: for zlib options out of range.

    Thread-safety: safe to share; calls from several threads take turns.
    The GIL is released while records of 64 KiB or more are written and
    during flush() and close().
    """

    def __init__(self, path, options=None, *, write_index=False):
        super().__init__(_path(path), _core_options(options), bool(write_index))
        self._path = _path(path)

    @property
    def path(self):
        """The file's path."""
        return self._path

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()

    def __repr__(self):
        return "<sluice.io.TFRecordWriter %r>" % self._path


class TFRecordIterator(_core.RecordIterator):
    """An iterator over the records (bytes) of one TFRecord file.

    Made by :func:`tf_record_iterator`. The file is opened at once (a
    missing one raises :class:`~sluice.errors.NotFoundError` there) and read
    through a large buffer; each ``next()`` releases the GIL while it reads.

    A corrupt record raises :class:`~sluice.errors.DataLossError` ("corrupted
    record at <offset> in <file> (record <i>): data checksum mismatch", or
    "truncated record at ...", or a zlib error for a damaged compressed file),
    with payloads ``"file"``, ``"record"`` and ``"offset"`` (the record's first
    byte, uncompressed). The iterator stays on that record: ``next()`` raises
    the same error again.

    Methods (TensorFlow's): ``close()`` closes the file (iteration then
    ends); ``reopen()`` opens it again and goes on from the current record,
    which reads records appended since.

    sluice extensions: ``ignore_errors=True`` skips what can be skipped (a
    record with a bad data checksum; a corrupt header: the reader scans
    forward for the next valid record; a truncated last record) and counts
    it in ``corruptions_skipped`` (skip events), ``records_skipped`` (records
    known to be lost; a corrupt header hides how many), ``bytes_skipped`` and
    ``last_skipped_error``; ``offset`` and ``record_index`` give the position
    of the next record. Errors of the file itself and of decompression are
    still raised.

    Thread-safety: safe to share; threads take turns (each record is
    returned to exactly one caller).
    """

    def __init__(self, path, options=None, *, ignore_errors=False):
        if isinstance(options, TFRecordOptions):
            core = options._as_core()
        else:  # TensorFlow's: a compression type
            core = _core_options(TFRecordOptions.get_compression_type_string(options))
        super().__init__(_path(path), core, bool(ignore_errors))
        self._path = _path(path)

    @property
    def path(self):
        """The file's path."""
        return self._path

    @property
    def offset(self):
        """Byte offset (in the uncompressed stream) of the next record."""
        return self._position()[0]

    @property
    def record_index(self):
        """0-based index of the next record; -1 once ignore_errors skipped a corrupt header."""
        return self._position()[1]

    def __repr__(self):
        return "<sluice.io.TFRecordIterator %r>" % self._path


def tf_record_iterator(path, options=None, *, ignore_errors=False):
    """An iterator over the records of a TFRecord file (``tf.compat.v1.io.tf_record_iterator``).

    Args:
      path: the file: str, bytes or os.PathLike.
      options: a TFRecordOptions, a TFRecordCompressionType value, a
        compression string or None.
      ignore_errors: (keyword-only, sluice extension) skip corrupt records
        and count them instead of raising; see :class:`TFRecordIterator`.

    Returns:
      A :class:`TFRecordIterator` yielding each record as bytes.

    Raises:
      NotFoundError: if `path` does not exist (at the call).
      ValueError: for an invalid compression type.
      DataLossError: (from ``next()``) for a corrupt or truncated record,
        naming the file, record index and offset.
    """
    return TFRecordIterator(path, options, ignore_errors=ignore_errors)


class TFRecordIndex(_core.RecordIndex):
    """The offset of every record of a TFRecord file (sluice extension).

    Gives the record count, random access to record ``i`` and contiguous
    shards without reading the records in between. The first use scans the
    file once, checking every checksum, and saves the offsets in a side file
    (``<path>.idx`` or `index_path`); later uses load that file while it is
    fresh (same file length, modification time and compression) and rebuild
    it otherwise. An index built with ``ignore_errors=True`` that skipped
    records is reused only by opens that also ignore errors; a strict open
    rebuilds it, and so raises DataLossError at the first corrupt record. A file written by ``TFRecordWriter(..., write_index=True)``
    comes with its index. ``rebuilt`` tells whether this object scanned.

    ``index[i]`` / ``index.read(i)`` is record i (negative i counts from the
    end; IndexError outside), ``index[a:b]`` a list of records,
    ``iter(index)`` every record. In a compressed file, moving backwards
    decompresses again from the start, as in TensorFlow.

    Args:
      path: the TFRecord file: str, bytes or os.PathLike.
      options: as for :func:`tf_record_iterator`.
      index_path: (keyword-only) where the index is kept; None:
        ``<path>.idx``.
      use_cache: (keyword-only) False scans the file and touches no side
        file.
      ignore_errors: (keyword-only) index only the records that are intact
        instead of raising DataLossError for a corrupt file.

    Raises:
      NotFoundError: if `path` does not exist.
      DataLossError: for a corrupt file (unless ignore_errors); a read of a
        record the file no longer holds (it changed after indexing).

    Thread-safety: safe to share; reads from several threads take turns on
    one file reader. The GIL is released while the file is read.
    """

    def __init__(self, path, options=None, *, index_path=None, use_cache=True, ignore_errors=False):
        if isinstance(options, TFRecordOptions):
            core = options._as_core()
        else:
            core = _core_options(TFRecordOptions.get_compression_type_string(options))
        path = _path(path)
        self._index_path = _path(index_path) if index_path is not None else _core.record_index_path(path)
        super().__init__(path, core, self._index_path if use_cache else None, bool(use_cache),
                         bool(ignore_errors))
        self._offsets_array = None

    @property
    def index_path(self):
        """The side file that caches this index."""
        return self._index_path

    @property
    def offsets(self):
        """A read-only numpy uint64 array: the offset of each record (uncompressed stream)."""
        if self._offsets_array is None:
            self._offsets_array = np.frombuffer(self._offsets(), dtype=np.uint64)
        return self._offsets_array

    def _check_index(self, i):
        n = len(self)
        i = operator.index(i)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("record index %d out of range for %d records in %s" % (i, n, self.path))
        return i

    def read(self, i):
        """Record `i` (bytes); negative `i` counts from the end."""
        i = self._check_index(i)
        return self._read_range(i, i + 1)[0]

    def record_length(self, i):
        """Bytes from record `i`'s payload start to the next record (its length, for an intact file)."""
        return self._record_length(self._check_index(i))

    def shard(self, shard, num_shards):
        """The record numbers of shard `shard` of `num_shards`: a contiguous range, sizes within one."""
        shard, num_shards = operator.index(shard), operator.index(num_shards)
        if num_shards <= 0 or not 0 <= shard < num_shards:
            raise ValueError("need 0 <= shard < num_shards, got shard=%d, num_shards=%d" % (shard, num_shards))
        return range(*self._shard_range(shard, num_shards))

    def save(self, index_path=None):
        """Writes the index (atomically) to `index_path` (None: ``index_path``)."""
        super().save(_path(index_path) if index_path is not None else self._index_path)

    def __getitem__(self, item):
        if isinstance(item, slice):
            start, stop, step = item.indices(len(self))
            if step == 1:
                return self._read_range(start, max(start, stop))
            return [self.read(i) for i in range(start, stop, step)]
        return self.read(item)

    def __iter__(self):
        chunk = 256
        for begin in range(0, len(self), chunk):
            yield from self._read_range(begin, min(begin + chunk, len(self)))

    def __repr__(self):
        return "<sluice.io.TFRecordIndex %r: %d records>" % (self.path, len(self))


# ---- queue-fed readers ----------------------------------------------------------------


def _queue_ref(queue):
    ref = getattr(queue, "queue_ref", queue)
    if not isinstance(ref, _core.Queue):
        raise TypeError("expected a sluice.queue queue of strings (file names), not %s"
                        % type(queue).__name__)
    return ref


def _object_array(items):
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


class ReaderBase:
    """Base class of the queue-fed readers (``tf.compat.v1.ReaderBase``).

    A reader turns work units (file names) taken from a filename queue into
    ``(key, value)`` records. ``read`` dequeues a file when it has none in
    progress, opens it, and returns its next record; at the end of a file it
    moves on to the next one, so empty files are skipped. A file that cannot
    be opened (NotFoundError) fails that read and is consumed: the next read
    goes on with the next file.

    Blocking calls (``read``, ``read_up_to``) wait for the filename queue
    without the GIL; they take ``timeout=`` in seconds
    (:class:`~sluice.errors.DeadlineExceededError` when it passes) and give
    way to Ctrl-C on the main thread.

    Thread-safety: every method is thread-safe. Calls on one reader take
    turns (including a read blocked on the queue, which the counters wait
    behind, as in TensorFlow); use one reader per thread to read in parallel.
    """

    def __init__(self, core_reader, supports_serialize=False):
        """Wraps a sluice._core.Reader, or a recipe making one (a subclass's).

        A recipe is called now and again at each new run of the default graph
        (see sluice.train.Session): a new run's reader starts afresh.
        """
        self._supports_serialize = bool(supports_serialize)
        if callable(core_reader):
            _graph.track(self, core_reader)
        else:
            self._bind_core(core_reader)

    def _bind_core(self, core_reader):
        self._reader = core_reader

    def _drop_core(self):
        pass  # nothing to stop: the reader only reads when called

    @property
    def supports_serialize(self):
        """Whether serialize_state/restore_state work for this reader."""
        return self._supports_serialize

    @property
    def name(self):
        """The reader's name (its type name unless one was given)."""
        return self._reader.name

    def read(self, queue, name=None, timeout=None):
        """The next record.

        Args:
          queue: a sluice.queue queue (or its ``queue_ref``) whose elements
            are one string each, the work units.
          timeout: seconds to wait for a work unit; None waits for ever.

        Returns:
          ``(key, value)``, both bytes.

        Raises:
          OutOfRangeError: the queue is closed and drained, and no file is in
            progress.
          NotFoundError: a file could not be opened (it is skipped).
          DataLossError: a corrupt record (the reader stays on it).
          InvalidArgumentError: the queue does not hold one string per element.
          DeadlineExceededError: `timeout` passed.
          CancelledError: the queue was closed with cancel_pending_enqueues.
        """
        del name
        ref = _queue_ref(queue)
        graph = getattr(queue, "_graph", None)
        if graph is not None and graph._runners_pending:
            return _graph.wait_warning_if_stalled(graph, "read from queue '%s'" % ref.name,
                                                  lambda t: self._reader.read(ref, t), timeout)
        return self._reader.read(ref, timeout)

    def read_up_to(self, queue, num_records, name=None, timeout=None):
        """Up to `num_records` records, all from one file.

        Returns early at the end of a file once at least one record was read;
        empty files are skipped. Errors as :meth:`read` (OutOfRangeError only
        if no record was read).

        Returns:
          ``(keys, values)``: 1-D numpy object arrays of bytes, as
          TensorFlow's ``Session.run`` gives them.
        """
        del name
        ref, n = _queue_ref(queue), operator.index(num_records)
        graph = getattr(queue, "_graph", None)
        if graph is not None and graph._runners_pending:
            keys, values = _graph.wait_warning_if_stalled(graph, "read_up_to from queue '%s'" % ref.name,
                                                          lambda t: self._reader.read_up_to(ref, n, t), timeout)
        else:
            keys, values = self._reader.read_up_to(ref, n, timeout)
        return _object_array(keys), _object_array(values)

    def num_records_produced(self, name=None):
        """How many records this reader has returned (an int)."""
        del name
        return self._reader.num_records_produced()

    def num_work_units_completed(self, name=None):
        """How many work units (files) this reader has finished (an int)."""
        del name
        return self._reader.num_work_units_completed()

    def serialize_state(self, name=None):
        """The reader's state as bytes.

        Raises:
          UnimplementedError: unless ``supports_serialize`` (IdentityReader,
            WholeFileReader).
        """
        del name
        return self._reader.serialize_state()

    def restore_state(self, state, name=None):
        """Restores a state from :meth:`serialize_state`.

        Raises:
          UnimplementedError: unless ``supports_serialize``.
          InvalidArgumentError: `state` is not a valid state of this kind of
            reader (the reader is then reset).
        """
        del name
        self._reader.restore_state(state)

    def reset(self, name=None):
        """Zeroes the counters and drops the file in progress (it is not re-queued)."""
        del name
        self._reader.reset()

    def __repr__(self):
        return "<sluice.io.%s %r>" % (type(self).__name__, self.name)


def _name(name):
    return "" if name is None else str(name)


def _int_or_zero(value):
    return 0 if value is None else operator.index(value)


class TFRecordReader(ReaderBase):
    """Reads the records of TFRecord files (``tf.compat.v1.TFRecordReader``).

    Key ``b"<file>:<offset>"`` (the record's byte offset in the uncompressed
    stream), value the record.

    Args:
      name: the reader's name in messages.
      options: a TFRecordOptions (its compression type and zlib input
        options) or None.
      ignore_errors: (keyword-only, sluice extension) skip corrupt records
        as :class:`TFRecordIterator` does, counting them in
        ``corruptions_skipped``, ``records_skipped`` and ``bytes_skipped``.
    """

    def __init__(self, name=None, options=None, *, ignore_errors=False):
        core = options._as_core() if isinstance(options, TFRecordOptions) else _core_options(options)
        super().__init__(lambda: _core.new_tfrecord_reader(_name(name), core, bool(ignore_errors)))

    def _skips(self):
        return self._reader.skips() or (0, 0, 0, None)

    @property
    def corruptions_skipped(self):
        """Corrupt stretches skipped with ignore_errors (0 without it)."""
        return self._skips()[0]

    @property
    def records_skipped(self):
        """Records known to be lost to ignore_errors skips."""
        return self._skips()[1]

    @property
    def bytes_skipped(self):
        """Bytes dropped by ignore_errors skips."""
        return self._skips()[2]


class TextLineReader(ReaderBase):
    """Reads the lines of text files (``tf.compat.v1.TextLineReader``).

    Key ``b"<file>:<line>"`` (1-based, counting skipped header lines), value
    the line without its ``\\n`` or ``\\r\\n``. A last line without a newline
    is read too.

    Args:
      skip_header_lines: lines skipped at the start of every file (None: 0).
      name: the reader's name in messages.

    Raises:
      InvalidArgumentError: skip_header_lines < 0.
    """

    def __init__(self, skip_header_lines=None, name=None):
        skip = _int_or_zero(skip_header_lines)
        super().__init__(lambda: _core.new_text_line_reader(_name(name), skip))


class FixedLengthRecordReader(ReaderBase):
    """Reads fixed-length records (``tf.compat.v1.FixedLengthRecordReader``).

    Record i covers bytes ``[header_bytes + i*hop_bytes, ... + record_bytes)``
    of the file and exists if ``footer_bytes`` still follow it; a trailing
    partial record is dropped. Key ``b"<file>:<i>"`` (0-based), value the
    record's bytes.

    Args:
      record_bytes: bytes per record.
      header_bytes, footer_bytes: bytes skipped at the start and end of every
        file (None: 0).
      hop_bytes: bytes from one record's start to the next (None or 0:
        record_bytes).
      name: the reader's name in messages.
      encoding: None/"" (raw), "ZLIB" or "GZIP": the whole file is
        compressed, and the positions are in its decompressed bytes.

    Raises:
      InvalidArgumentError: a negative size, record_bytes and hop_bytes both
        0, or an unknown encoding.
    """

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None, name=None,
                 encoding=None):
        args = (_name(name), operator.index(record_bytes), _int_or_zero(header_bytes), _int_or_zero(footer_bytes),
                _int_or_zero(hop_bytes), "" if encoding is None else str(encoding))
        super().__init__(lambda: _core.new_fixed_length_record_reader(*args))


class WholeFileReader(ReaderBase):
    """Reads each file whole (``tf.compat.v1.WholeFileReader``): key the file name, value its contents.

    Supports serialize_state/restore_state. Unlike TensorFlow (which retries a
    missing file for ever), a missing file raises NotFoundError once and is
    skipped.
    """

    def __init__(self, name=None):
        super().__init__(lambda: _core.new_whole_file_reader(_name(name)), supports_serialize=True)


class IdentityReader(ReaderBase):
    """Returns each work unit as both key and value (``tf.compat.v1.IdentityReader``).

    Supports serialize_state/restore_state.
    """

    def __init__(self, name=None):
        super().__init__(lambda: _core.new_identity_reader(_name(name)), supports_serialize=True)


_io_all = [
    "TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "TFRecordIterator",
    "tf_record_iterator", "TFRecordIndex", "ReaderBase", "TFRecordReader", "TextLineReader",
    "FixedLengthRecordReader", "WholeFileReader", "IdentityReader",
]

from sluice._parsing import *  # noqa: F401,F403,E402  parse_*, *Feature, decode_*
from sluice._parsing import __all__ as _parsing_all  # noqa: E402
from sluice._example import serialize_example  # noqa: F401,E402
# tf.io.decode_jpeg & co. (TF has the decoders in both tf.io and tf.image).
from sluice._image_codec import *  # noqa: F401,F403,E402
from sluice._image_codec import __all__ as _codec_all  # noqa: E402

__all__ = _io_all + ["serialize_example"] + list(_parsing_all) + list(_codec_all)

# -- files: tf.io.read_file, tf.io.matching_files and tf.io.gfile (local files only; sluice/_io_files.py)
from sluice._io_files import gfile, matching_files, read_file  # noqa: E402

__all__ += ["gfile", "matching_files", "read_file"]

"""Threads that feed queues, and their coordination (``tf.train``).

:class:`Coordinator` lets threads stop together and report why;
:class:`QueueRunner` runs enqueue ops (Python callables, one call per step)
on threads until their input is exhausted; :class:`LooperThread` runs a
function repeatedly until the coordinator stops. ``add_queue_runner`` and
``start_queue_runners`` start every registered runner at once. The
behaviour, names and arguments are TensorFlow's (``tf.compat.v1.train``).

The input pipeline (``sluice._input``): the producers
(``string_input_producer`` & co., ``slice_input_producer``,
``limit_epochs``, ``match_filenames_once``), the batchers (``batch``,
``shuffle_batch``, their ``_join`` and ``maybe_`` forms), GIL-free native
producers (``read_producer(...).map_parse_example(...)``) and queue
statistics (``all_queue_stats``, ``QueueMonitor``). Their runners are C++
QueueRunners, listed by ``get_queue_runners`` and started by
``start_queue_runners`` with the Python ones, in the order they were added.

The Coordinator drives a C++ coordinator (``sluice._core.Coordinator``):
the stop flag and the first recorded error live there, so runner threads
written in C++ (built-in producers, which run without the GIL) stop with
the same Python Coordinator and report their errors to it, while the
exceptions raised in Python keep their tracebacks on the Python side for
``join`` to re-raise. ``join`` joins both Python ``threading.Thread``
objects and C++ threads (``sluice._core.Thread``), without holding the GIL,
and stays responsive to Ctrl-C.

Differences from TensorFlow: there are no sessions (``sess`` arguments are
accepted and ignored, so a QueueRunner keeps one set of threads);
``request_stop(ex)`` with a bare exception records that exception even
outside an ``except`` block; ``join`` notices a thread's end at once rather
than polling once a second.
"""

import contextlib
import logging
import operator
import sys
import threading
import time

from sluice import _core
from sluice import _graph
from sluice import errors
from sluice._input import _stashed_exception

_logger = logging.getLogger("sluice.train")

# Payload tying a C++-recorded status to the Python exception it stands for.
_PY_EXCEPTION_PAYLOAD = "sluice.python.exception"
# How often join() re-checks the stop flag while waiting for a thread.
_JOIN_POLL_SECS = 0.05


def _codes_of(exception_types):
    """The error codes whose exception class is one of `exception_types` (or a subclass)."""
    types = tuple(t for t in exception_types if isinstance(t, type))
    return [code for code, cls in errors._CODE_TO_EXCEPTION_CLASS.items() if issubclass(cls, types)]


class Coordinator:
    """A coordinator for threads (``tf.train.Coordinator``).

    Threads poll ``should_stop()`` (or block in ``wait_for_stop()``) and
    call ``request_stop(ex)`` when they fail; the main thread calls
    ``join(threads)``, which re-raises the first exception reported.
    Exceptions of ``clean_stop_exception_types`` (default: OutOfRangeError,
    the end of the input) stop the threads without being reported.
    Thread-safe.
    """

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        # The C++ coordinator counts no code as clean: it records the first
        # error (C++ runners report theirs straight to it, a Python
        # producer's exception as its status), and this class decides, as
        # TF does, by the type of the exception that error stands for
        # (_exception_for): a code cannot say whether a Python exception
        # is, e.g., a ValueError.
        self._coord = _core.new_coordinator([])
        # Protects the fields below and orders request_stop/join/clear_stop.
        self._lock = threading.Lock()
        # (token, exc_info) of the Python exception the C++ side recorded, if any.
        self._exc_info_to_raise = None
        self._next_token = 0
        self._registered_threads = set()

    @property
    def core(self):
        """The ``sluice._core.Coordinator`` this one drives (for C++ runners)."""
        return self._coord

    def _filter_exception(self, ex):
        ex2 = ex[1] if isinstance(ex, tuple) else ex
        if isinstance(ex2, self._clean_stop_exception_types):
            return None
        return ex

    @staticmethod
    def _as_exc_info(ex):
        if isinstance(ex, tuple):
            exc_info = ex
        elif isinstance(ex, BaseException):
            exc_info = (type(ex), ex, ex.__traceback__)
        else:
            exc_info = sys.exc_info()
        if len(exc_info) != 3 or not exc_info[0] or not exc_info[1]:
            try:
                raise ValueError("ex must be a tuple or sys.exc_info must return the current "
                                 "exception: %s" % (exc_info,))
            except ValueError:
                exc_info = sys.exc_info()
        return exc_info

    def request_stop(self, ex=None):
        """Requests that the threads stop.

        After this, ``should_stop()`` returns True. `ex` (an exception or an
        ``exc_info`` tuple) is reported unless it is a clean-stop type; only
        the first exception reported before or at the first stop request is
        kept, for ``join`` to raise. Once the coordinator has been joined, an
        exception is raised here instead.
        """
        with self._lock:
            ex = self._filter_exception(ex)
            if self._coord.joined and ex is not None:
                raise ex[1] if isinstance(ex, tuple) else self._as_exc_info(ex)[1]
            if ex is None:
                self._coord.request_stop()
                return
            exc_info = self._as_exc_info(ex)
            if self._coord.should_stop():
                return  # only the first error counts
            _logger.info("Error reported to Coordinator: %s", exc_info[1], exc_info=exc_info)
            self._next_token += 1
            token = str(self._next_token)
            code = getattr(exc_info[1], "error_code", None)
            if not isinstance(exc_info[1], errors.OpError) or code not in errors._CODE_TO_EXCEPTION_CLASS:
                code = errors.UNKNOWN
            message = "%s: %s" % (type(exc_info[1]).__name__, exc_info[1])
            self._coord.request_stop_with(code, message, {_PY_EXCEPTION_PAYLOAD: token})
            if self._token_of(self._coord.requested_status()) == token:
                self._exc_info_to_raise = (token, exc_info)

    @staticmethod
    def _token_of(status):
        if status is None:
            return None
        token = status[2].get(_PY_EXCEPTION_PAYLOAD)
        return None if token is None else token.decode()

    def _exception_for(self, status):
        """The exception to raise for the C++ coordinator's recorded status, or None.

        None also when that exception is of a clean-stop type: the C++ side
        records the first error whatever it is (a C++ runner's status, a
        Python producer's exception), and as in TF a clean one stops the
        threads without being raised.
        """
        recorded = self._exc_info_to_raise
        if recorded is not None and recorded[0] == self._token_of(status):
            return recorded[1][1]  # from request_stop, already filtered
        if status is None:
            return None
        exc = _stashed_exception(self._token_of(status))  # raised in a producer
        if exc is None:
            exc = errors._from_status(*status)
        if isinstance(exc, self._clean_stop_exception_types):
            return None
        return exc

    def clear_stop(self):
        """Clears the stop flag, the reported exception and ``joined``."""
        with self._lock:
            self._coord.clear_stop()
            self._exc_info_to_raise = None

    def should_stop(self):
        """True if a stop was requested."""
        return self._coord.should_stop()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """Context manager: an exception escaping the body is reported with
        ``request_stop`` and swallowed."""
        try:
            yield
        except:  # noqa: E722 - TensorFlow reports everything, KeyboardInterrupt included
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout=None):
        """Waits (without the GIL) until a stop is requested or `timeout` seconds pass.

        Returns True if a stop was requested, False on timeout.
        """
        return self._coord.wait_for_stop(timeout)

    def register_thread(self, thread):
        """Registers a thread (threading.Thread or sluice._core.Thread) for ``join``."""
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Waits for the registered threads and `threads` to terminate.

        Blocks until they have all ended or a stop is requested, then gives
        them `stop_grace_period_secs` more. Raises the first exception
        reported with ``request_stop``; otherwise, if threads are still
        running, RuntimeError "Coordinator stopped with threads still
        running: ..." (unless `ignore_live_threads`). The GIL is not held
        while waiting.
        """
        with self._lock:
            if threads is None:
                threads = set(self._registered_threads)
            else:
                threads = self._registered_threads.union(set(threads))

        # 1. Until every thread has ended, or a stop is requested.
        while True:
            alive = [t for t in threads if t.is_alive()]
            if not alive or self._coord.should_stop():
                break
            alive[0].join(_JOIN_POLL_SECS)

        # 2. The grace period.
        deadline = time.monotonic() + stop_grace_period_secs
        for t in threads:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            if t.is_alive():
                t.join(remaining)
        stragglers = sorted(t.name for t in threads if t.is_alive())

        core_threads = [t for t in threads if isinstance(t, _core.Thread)]
        with self._lock:
            status = self._coord.join(core_threads, 0.0, True)  # marks joined; does not wait
            self._registered_threads = set()
            exc = self._exception_for(status)
        if exc is not None:
            raise exc
        if stragglers:
            if ignore_live_threads:
                _logger.info("Coordinator stopped with threads still running: %s", " ".join(stragglers))
            else:
                raise RuntimeError(_core.THREADS_STILL_RUNNING + " ".join(stragglers))

    @property
    def joined(self):
        """True once ``join`` has returned (until ``clear_stop``)."""
        return self._coord.joined

    def raise_requested_exception(self):
        """Raises the exception reported with ``request_stop``, if any."""
        with self._lock:
            exc = self._exception_for(self._coord.requested_status())
        if exc is not None:
            raise exc


class LooperThread(threading.Thread):
    """A thread that runs code repeatedly, optionally on a timer (``tf.train.LooperThread``).

    Registers itself with `coord`. ``run_loop()`` (default: calls `target`)
    runs back to back when `timer_interval_secs` is None, else every
    `timer_interval_secs` seconds, until the coordinator stops; an exception
    stops the coordinator with it.
    """

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError("'coord' argument must be a Coordinator: %s" % coord)
        super().__init__()
        self.daemon = True
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        if self._target:
            self._args = args or ()
            self._kwargs = kwargs or {}
        elif args or kwargs:
            raise ValueError("'args' and 'kwargs' argument require that you also pass 'target'")
        self._coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a LooperThread that calls `target(*args, **kwargs)`; returns it."""
        looper = LooperThread(coord, timer_interval_secs, target=target, args=args, kwargs=kwargs)
        looper.start()
        return looper

    def run(self):
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_timer_time = time.monotonic()
                while not self._coord.wait_for_stop(next_timer_time - time.monotonic()):
                    next_timer_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self):
        """Called once before the first ``run_loop``."""

    def stop_loop(self):
        """Called once after the last ``run_loop``."""

    def run_loop(self):
        """Called at each iteration; calls `target` by default."""
        if self._target:
            self._target(*self._args, **self._kwargs)


def _op_name(op, i):
    name = getattr(op, "__name__", None) or type(op).__name__
    return name if i == 0 else "%s_%d" % (name, i)


class QueueRunner:
    """Holds enqueue ops for a queue, each run by its own thread (``tf.train.QueueRunner``).

    `enqueue_ops` are callables; one call is one step. A thread ends when
    its op raises one of `queue_closed_exception_types` (default
    OutOfRangeError: its input is exhausted); the last one to end so runs
    `close_op` (default ``queue.close()``). Other exceptions stop the
    coordinator with them, or without a coordinator are collected in
    ``exceptions_raised``. With a coordinator, one more thread waits for the
    stop and runs `cancel_op` (default
    ``queue.close(cancel_pending_enqueues=True)``), so no producer stays
    blocked on a full queue.
    """

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None):
        if not queue or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        optional_ops = [op for op in (close_op, cancel_op) if op is not None]
        for op in list(enqueue_ops) + optional_ops:
            if not callable(op):
                raise TypeError(
                    "QueueRunner takes callables, one call per step (sluice runs ops when called; there is no "
                    "graph of ops to run later): pass e.g. `lambda: queue.enqueue(x)` or a function, not %r. "
                    "`queue.enqueue(x)` written in the list has already enqueued once and returned %r."
                    % (op, op))
        if queue_closed_exception_types is not None:
            if (not isinstance(queue_closed_exception_types, tuple) or not queue_closed_exception_types
                    or not all(isinstance(t, type) and issubclass(t, errors.OpError)
                               for t in queue_closed_exception_types)):
                raise TypeError("queue_closed_exception_types, when provided, must be a tuple of "
                                "tf.error types, but saw: %s" % (queue_closed_exception_types,))
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else (lambda: queue.close())
        self._cancel_op = (cancel_op if cancel_op is not None
                           else (lambda: queue.close(cancel_pending_enqueues=True)))
        self._queue_closed_exception_types = (tuple(queue_closed_exception_types)
                                              if queue_closed_exception_types else (errors.OutOfRangeError,))
        self._lock = threading.Lock()
        self._runs = 0  # op threads of the current run created and not finished
        self._run_token = None  # identifies the current set of threads
        self._graph_run = None  # (graph, run id) the threads were created in
        self._input_exhausted = False
        self._exceptions_raised = []

    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self):
        return self._enqueue_ops

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self):
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self):
        """Exceptions raised by the op threads that had no coordinator."""
        return self._exceptions_raised

    @property
    def name(self):
        """The name of the queue."""
        return self._queue.name

    def _end_thread(self, token):
        """Counts an op thread of the set `token` out; True if it was the last one."""
        with self._lock:
            if token is not self._run_token:
                return False  # a set of an earlier run of the graph
            self._runs -= 1
            return self._runs == 0

    def _run(self, enqueue_op, coord=None, token=None):
        decremented = False
        try:
            while True:
                if coord and coord.should_stop():
                    break
                try:
                    enqueue_op()
                except self._queue_closed_exception_types + (StopIteration,):
                    decremented = True
                    last = self._end_thread(token)
                    if last:
                        self._input_exhausted = True
                        try:
                            self._close_op()
                        except Exception as e:  # e.g. already closed
                            _logger.debug("Ignored exception: %s", e)
                    return
        except Exception as e:
            if coord:
                coord.request_stop(e)
            else:
                _logger.error("Exception in QueueRunner: %s", e)
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                self._end_thread(token)

    def _close_on_stop(self, coord):
        coord.wait_for_stop()
        try:
            self._cancel_op()
        except Exception as e:
            _logger.debug("Ignored exception: %s", e)

    @property
    def running(self):
        """True while op threads of the latest create_threads have not all ended."""
        return self._runs > 0

    @property
    def has_run(self):
        """True once create_threads has made threads (in the current run of the graph)."""
        return self._run_token is not None

    @property
    def input_exhausted(self):
        """True if the latest threads ended because their input ended (not by a stop or error)."""
        return self._input_exhausted

    def _new_run(self):
        """Forgets the threads of an earlier run of the graph (they no longer count)."""
        with self._lock:
            self._runs = 0
            self._run_token = None
            self._input_exhausted = False

    def create_threads(self, sess=None, coord=None, daemon=False, start=False):
        """Creates (and optionally starts) one thread per enqueue op.

        With a `coord`, adds a close-on-stop thread and registers them all.
        Returns [] while threads of an earlier call are still running.
        `sess` is ignored.
        """
        del sess
        with self._lock:
            if self._runs > 0:
                return []
            self._runs = len(self._enqueue_ops)
            self._run_token = token = object()
            self._input_exhausted = False
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(op, coord, token),
                                    name="QueueRunnerThread-%s-%s" % (self.name, _op_name(op, 0)))
                   for op in self._enqueue_ops]
        if coord:
            threads.append(threading.Thread(target=self._close_on_stop, args=(coord,),
                                            name="QueueRunnerThread-%s-close_on_stop" % self.name))
        for t in threads:
            if coord:
                coord.register_thread(t)
            if daemon:
                t.daemon = True
            if start:
                t.start()
        return threads


class _CoreQueueRunner:
    """A C++ QueueRunner (``sluice._core.QueueRunner``) with QueueRunner's Python interface.

    What ``get_queue_runners`` lists for each runner a C++ input builder
    registered (``string_input_producer``, ``batch``, ...). Its threads are
    C++ threads (``sluice._core.Thread``) that run without the GIL (always
    daemons); they stop with a Coordinator and report their errors to it.
    ``enqueue_ops`` are the C++ ops' names, one per thread: the ops run only
    on the runner's threads. ``create_threads`` returns [] while the threads
    of an earlier call run (created and not started counts), as TF does.
    """

    def __init__(self, core_runner, queue=None):
        self._runner = core_runner
        self._queue = queue

    @property
    def queue(self):
        """The queue the runner fills (a sluice.queue queue over the C++ one)."""
        if self._queue is None:  # wrapped on first use: start_queue_runners never needs it
            self._queue = _input._wrap_queue(self._runner.queue)
        return self._queue

    @property
    def name(self):
        return self._runner.name

    @property
    def enqueue_ops(self):
        """The names of the C++ enqueue ops, one per thread."""
        return list(self._runner.enqueue_op_names)

    @property
    def queue_closed_exception_types(self):
        return tuple(errors._CODE_TO_EXCEPTION_CLASS[c] for c in self._runner.queue_closed_codes)

    @property
    def exceptions_raised(self):
        """Errors of the op threads that had no coordinator (a Python producer's own exception)."""
        out = []
        for status in self._runner.exceptions_raised:
            payload = status[2].get(_PY_EXCEPTION_PAYLOAD)
            stashed = _stashed_exception(None if payload is None else payload.decode())
            out.append(stashed if stashed is not None else errors._from_status(*status))
        return out

    @property
    def running(self):
        return self._runner.running

    @property
    def has_run(self):
        return self._runner.has_run

    @property
    def input_exhausted(self):
        return self._runner.input_exhausted

    def create_threads(self, sess=None, coord=None, daemon=False, start=False):
        del sess, daemon  # C++ threads are always daemons
        threads = self._runner.create_threads(coord.core if coord else None, start)
        if coord:
            for t in threads:
                coord.register_thread(t)
        return threads

    def __repr__(self):
        return "<sluice.train QueueRunner (C++) %r, %d threads>" % (self.name, len(self._runner.enqueue_op_names))


def _transfer_queue_runner(src, dst, num_threads=1, queue_closed_exception_types=None):
    """A built-in (C++, GIL-free) runner moving elements from queue `src` to `dst`.

    Each step dequeues one element from `src` and enqueues it into `dst`;
    `src` running dry and closed (OutOfRangeError) ends a thread, and the last
    one closes `dst`. Experimental: the first C++ producer, and the pattern for
    the built-in ones to come.
    """
    codes = _codes_of(queue_closed_exception_types or ())
    runner = _core.new_transfer_runner(src.queue_ref, dst.queue_ref, num_threads, codes)
    return _CoreQueueRunner(runner, dst)


QUEUE_RUNNERS = "queue_runners"


def _graph_of(graph=None, sess=None):
    if sess is not None and getattr(sess, "graph", None) is not None:
        return sess.graph
    return graph if graph is not None else _graph.get_default_graph()


def _sync_core_runners_locked(graph):
    """Mirrors `graph`'s C++ registry into its default collection. REQUIRES: graph._lock.

    The C++ input builders register their runners in the graph's C++
    registry. Each one new since the last sync is appended, wrapped; since
    every ``add_queue_runner`` to the default collection syncs first, the
    collection lists the Python and C++ runners in the order they were
    added. A runner no longer registered is dropped. Returns the wrappers
    dropped, for the caller to release after the lock.
    """
    registered = graph.registry.runners()
    runners = graph._collections.setdefault(QUEUE_RUNNERS, [])
    live = set(registered)
    mirrored = graph._mirrored
    gone = [mirrored.pop(h) for h in [h for h in mirrored if h not in live]]
    if gone:
        gone_ids = {id(qr) for qr in gone}
        runners[:] = [qr for qr in runners if id(qr) not in gone_ids]
    for handle in registered:
        if handle not in mirrored:
            qr = _CoreQueueRunner(handle)
            mirrored[handle] = qr
            runners.append(qr)
    return gone


def add_queue_runner(qr, collection=QUEUE_RUNNERS):
    """Adds a QueueRunner to a collection of the default graph (by default the one start_queue_runners starts)."""
    graph = _graph.get_default_graph()
    with graph._lock:
        gone = _sync_core_runners_locked(graph) if collection == QUEUE_RUNNERS else None
        graph._collections.setdefault(collection, []).append(qr)
        if collection == QUEUE_RUNNERS:
            _graph.runners_added(graph)
    del gone  # a runner's last reference may stop and join it: not under the lock


def get_queue_runners(collection=QUEUE_RUNNERS, graph=None):
    """The QueueRunners added to `collection` of `graph` (default: the default graph), in order.

    The default collection also lists one runner per C++ input builder
    (producers, batchers; ``sluice._core.QueueRunner`` behind QueueRunner's
    interface: ``queue``, ``name``, ``enqueue_ops``, ``exceptions_raised``,
    ``create_threads``), in the order they were built, among the Python ones.
    The same runner is the same object from call to call.
    """
    graph = _graph_of(graph)
    with graph._lock:
        gone = _sync_core_runners_locked(graph) if collection == QUEUE_RUNNERS else None
        runners = list(graph._collections.get(collection, []))
    del gone
    return runners


def clear_queue_runners(collection=QUEUE_RUNNERS):
    """Forgets the QueueRunners of `collection` of the default graph (and, for the default one, its C++ runners).

    Forgotten C++ runners whose threads are running are stopped and joined.
    """
    graph = _graph.get_default_graph()
    with graph._lock:
        dropped = graph._collections.pop(collection, None)
        if collection == QUEUE_RUNNERS:
            dropped = (dropped, list(graph._mirrored.values()))
            graph._mirrored.clear()
            graph._runners_pending = False
    del dropped  # outside the lock
    if collection == QUEUE_RUNNERS:
        graph.registry.clear()


def _runner_key(qr):
    """What identifies a runner: its C++ runner for a wrapper, else the object."""
    if isinstance(qr, _CoreQueueRunner):
        return ("core", qr._runner)
    return ("python", id(qr))


def start_queue_runners(sess=None, coord=None, daemon=True, start=True, collection=QUEUE_RUNNERS):
    """Starts the threads of every QueueRunner in `collection` of the graph; returns them.

    The graph is `sess`'s (a :class:`Session`), else the default one. Calls
    ``create_threads`` once per runner listed by ``get_queue_runners`` (a
    runner listed twice is started once), in order; for the default
    collection that includes the C++ runners of the input builders. A
    runner whose threads are still running adds none, and a runner whose
    threads of this run of the graph have ended (input exhausted, stopped or
    failed) is not started again: its queue is closed. To run a pipeline
    again from fresh queues, open a new :class:`Session` on its graph (or
    build it in a new :class:`Graph`); a warning names the runners that were
    stopped before their input ended.
    """
    graph = _graph_of(sess=sess)
    graph._check_usable()
    graph._mark_used()
    threads = []
    seen = set()
    stopped = []
    for qr in get_queue_runners(collection, graph=graph):
        key = _runner_key(qr)
        if key in seen:
            continue
        seen.add(key)
        if getattr(qr, "has_run", False) and not getattr(qr, "running", False):
            if not getattr(qr, "input_exhausted", True):
                stopped.append(qr.name)
            continue
        threads.extend(qr.create_threads(coord=coord, daemon=daemon, start=start))
    if stopped:
        _logger.warning(
            "start_queue_runners: %d queue runner(s) of this graph already ran in this run and were stopped "
            "before their input ended (%s); their queues are closed and they are not started again. To run a "
            "pipeline again from fresh queues, open a new sluice.train.Session() on its graph, or build it in "
            "its own sluice.train.Graph().", len(stopped), ", ".join(sorted(set(stopped))))
    return threads


def set_random_seed(seed):
    """Sets the default graph's random seed (``tf.compat.v1.set_random_seed``).

    Seeded ops built afterwards in this graph (shuffling producers and
    queues, random crops) use TensorFlow's seed rules with it.
    """
    _graph.get_default_graph().seed = None if seed is None else operator.index(seed)


Graph = _graph.Graph
Session = _graph.Session
get_default_graph = _graph.get_default_graph
reset_default_graph = _graph.reset_default_graph
get_default_session = _graph.get_default_session


__all__ = ["Coordinator", "LooperThread", "QueueRunner", "add_queue_runner", "start_queue_runners",
           "get_queue_runners", "clear_queue_runners", "QUEUE_RUNNERS", "Graph", "Session", "get_default_graph",
           "reset_default_graph", "get_default_session", "set_random_seed"]

# The input pipeline: producers, batchers, queue statistics (sluice._input).
from sluice import _input  # noqa: E402
from sluice._input import (BatchComponent, BatchQueue, NativeProducer, QueueMonitor, all_queue_stats, batch, batch_join,  # noqa: E402,E501
                           dequeue_producer, input_producer, limit_epochs, match_filenames_once, maybe_batch,
                           maybe_batch_join, maybe_shuffle_batch, maybe_shuffle_batch_join, range_input_producer,
                           read_producer, read_up_to_producer, shuffle_batch, shuffle_batch_join,
                           slice_input_producer, string_input_producer)

__all__ += _input.__all__

# tf.train.Example and its parts, written without protobuf (sluice._example).
from sluice._example import (BytesList, Example, Feature, FeatureList, FeatureLists,  # noqa: E402
                             Features, FloatList, Int64List, SequenceExample)

__all__ += ["Example", "Features", "Feature", "BytesList", "FloatList", "Int64List", "FeatureList",
            "FeatureLists", "SequenceExample"]

# tf.data into the queues: a QueueRunner enqueuing a Dataset (sluice._data_frameworks).
from sluice._data_frameworks import dataset_queue_runner, enqueue_dataset  # noqa: E402

__all__ += ["dataset_queue_runner", "enqueue_dataset"]

# Checkpoints of input pipelines: tf.train.Checkpoint(iterator=...) and its manager (sluice._data_checkpoint).
from sluice._data_checkpoint import Checkpoint, CheckpointManager, latest_checkpoint  # noqa: E402

__all__ += ["Checkpoint", "CheckpointManager", "latest_checkpoint"]

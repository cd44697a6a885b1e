"""Graphs and sessions: the scope of TF 1 input pipelines, and runs of them.

A :class:`Graph` is what TensorFlow 1's graph is to an input pipeline: the
collection that queues, readers, producers, batchers and queue runners are
built into (the default graph, or the one made default with
``with graph.as_default():``), and whose runners ``start_queue_runners``
starts. sluice builds eagerly: what a builder returns works at once, in the
graph's current *run*. A :class:`Session` is a run of a graph (TF's session
state): opening a Session on a graph whose current run has already started
builds every live queue, reader, producer and batcher of the graph again, so
the new run starts from fresh queues at epoch 0, and the runners of the old
run are stopped first.

Objects take part by the rebuild protocol: a ``_recipe`` (a callable
returning the object's C++ core, reading its inputs' cores when called),
``_bind_core(core)`` and ``_drop_core()``. :func:`track` builds one and
records it (weakly) in the default graph; a graph rebuilds the live ones in
creation order, so inputs are rebuilt before what reads them.
"""

import contextlib
import logging
import os
import threading
import weakref

from sluice import _core
from sluice import errors

_logger = logging.getLogger("sluice.train")

# Incremented in a fork() child: objects made before the fork belong to the
# parent (their threads do not exist in the child).
_fork_generation = 0


# Every Graph made (weakly): after a fork their objects are the parent's.
_graphs = weakref.WeakSet()


def _after_fork_in_child():
    global _fork_generation, _default_graph
    _fork_generation += 1
    for graph in list(_graphs):
        graph._runners_pending = True  # sends blocking calls on their queues to the checks that raise
    _default_graph = None  # the child starts with a fresh default graph
    _thread_local.__dict__.clear()


def check_not_forked(obj, generation, what):
    """Raises FailedPreconditionError if `obj` (made in fork generation `generation`) is the parent's."""
    if generation != _fork_generation:
        raise errors.FailedPreconditionError(
            None, None, "%s was created before this process was forked (os.fork / multiprocessing's 'fork' "
            "start method): its threads and locks belong to the parent process. Build a fresh pipeline in the "
            "child (sluice.train.reset_default_graph() first), or use the 'spawn' start method." % what)


class Graph:
    """A collection of input pipelines and their queue runners (``tf.Graph``'s role here).

    Builders (queues, readers, producers, batchers) register into the
    default graph: the process-wide one, or the one made default on this
    thread by ``with graph.as_default():``. ``start_queue_runners`` starts
    the runners of one graph; a runner's error stops only the Coordinator it
    was started with. Thread-safe; one :class:`Session` at a time per graph.
    """

    def __init__(self):
        self._lock = threading.RLock()
        self._registry = _core.QueueRunnerRegistry()
        self._collections = {}
        # C++ runner handle -> its _CoreQueueRunner wrapper (see sluice.train).
        self._mirrored = {}
        self._handles = []  # weakrefs to rebuildable objects, in creation order
        self._handles_pruned_at = 64
        # A run has started on the current state (start_queue_runners, a Session).
        self._used = False
        # Runners were added since the last start_queue_runners of this graph.
        self._runners_pending = False
        self._session = None
        self._run_id = 0  # +1 per new state; Python QueueRunners key their runs by it
        self._fork_generation = _fork_generation
        self.seed = None  # the graph-level random seed (set_random_seed)
        self._seeded_ops = 0
        _graphs.add(self)

    # -- the default graph

    @contextlib.contextmanager
    def as_default(self):
        """Makes this graph the default on this thread within the ``with`` block."""
        stack = _stack()
        stack.append(self)
        try:
            yield self
        finally:
            stack.pop()

    # -- collections

    def add_to_collection(self, name, value):
        with self._lock:
            self._collections.setdefault(name, []).append(value)

    def get_collection(self, name):
        with self._lock:
            return list(self._collections.get(name, []))

    def clear_collection(self, name):
        with self._lock:
            return self._collections.pop(name, None)

    @property
    def registry(self):
        """The ``_core.QueueRunnerRegistry`` of the current run (C++ runners of the builders)."""
        return self._registry

    @contextlib.contextmanager
    def building(self):
        """Within the block, C++ builders on this thread register their runners into this graph."""
        registry = self._registry
        before = len(registry.runners())
        _core.push_registry(registry)
        try:
            yield self
        finally:
            _core.pop_registry()
            if len(registry.runners()) != before:
                self._runners_pending = True

    # -- runs

    def _track(self, obj):
        with self._lock:
            self._handles.append(weakref.ref(obj))
            if len(self._handles) >= 2 * self._handles_pruned_at:
                self._handles = [r for r in self._handles if r() is not None]
                self._handles_pruned_at = max(64, len(self._handles))

    def _live_handles(self):
        with self._lock:
            live = [h for h in (r() for r in self._handles) if h is not None]
            self._handles = [weakref.ref(h) for h in live]
            return live

    def queues(self):
        """The live queues built in this graph (sluice.queue objects), in creation order."""
        from sluice import queue as _queue  # noqa: PLC0415 - queue imports this module
        return [h for h in self._live_handles() if isinstance(h, _queue.QueueBase)]

    def _new_run(self):
        """Builds the graph's live objects again: fresh queues, readers, producers and runners.

        The old run's queues are closed (pending enqueues cancelled) and its
        C++ runners stopped and joined first. REQUIRES: self._lock held.
        """
        live = self._live_handles()
        for h in live:
            h._drop_core()
        old_registry, old_mirrored = self._registry, self._mirrored
        self._registry = _core.QueueRunnerRegistry()
        self._mirrored = {}
        runners = self._collections.get("queue_runners")
        if runners is not None:  # the C++ wrappers of the old run go with it
            old = set(id(qr) for qr in old_mirrored.values())
            runners[:] = [qr for qr in runners if id(qr) not in old]
            for qr in runners:  # Python runners: their old threads no longer count
                new_run = getattr(qr, "_new_run", None)
                if new_run is not None:
                    new_run()
        old_registry.clear()  # stops and joins the old run's C++ runners (GIL released)
        del old_registry, old_mirrored
        self._run_id += 1
        with self.building():
            for h in live:
                h._bind_core(h._recipe())
        self._used = False
        self._runners_pending = bool(self._registry.runners()) or bool(runners)

    def _mark_used(self):
        with self._lock:
            self._used = True
            self._runners_pending = False

    def _check_usable(self):
        check_not_forked(self, self._fork_generation, "This sluice.train.Graph")


_default_graph = None
_default_graph_lock = threading.Lock()
_thread_local = threading.local()


def _stack():
    stack = getattr(_thread_local, "stack", None)
    if stack is None:
        stack = _thread_local.stack = []
    return stack


def get_default_graph():
    """The graph builders register into on this thread (``tf.compat.v1.get_default_graph``)."""
    stack = _stack()
    if stack:
        return stack[-1]
    global _default_graph
    graph = _default_graph
    if graph is None:
        with _default_graph_lock:
            if _default_graph is None:
                _default_graph = Graph()
            graph = _default_graph
    return graph


def reset_default_graph():
    """Replaces the process-wide default graph by an empty one (``tf.compat.v1.reset_default_graph``).

    The old graph's objects keep working for whoever holds them; its C++
    runners stop once nothing references the graph. AssertionError inside a
    ``with graph.as_default():`` block, as in TensorFlow.
    """
    if _stack():
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. If you need a "
                             "cleared graph, exit the nesting and create a new graph.")
    global _default_graph
    with _default_graph_lock:
        old, _default_graph = _default_graph, None
    del old  # its registry's runners stop here if nothing else holds them


def track(obj, recipe):
    """Builds `obj`'s core with `recipe` in the default graph and records it there.

    `recipe()` is called now (under the graph's builder scope) and again at
    each new run of the graph; `obj._bind_core` takes its result. Returns obj.
    """
    graph = get_default_graph()
    graph._check_usable()
    obj._recipe = recipe
    obj._graph = graph
    with graph.building():
        obj._bind_core(recipe())
    graph._track(obj)
    return obj


# How long a blocking call waits before warning that it cannot progress.
STALL_WARNING_SECS = 4.0


def _unstarted_runner_names(graph):
    from sluice import train  # noqa: PLC0415 - train imports this module
    return [qr.name for qr in train.get_queue_runners(graph=graph) if not getattr(qr, "has_run", True)]


def wait_warning_if_stalled(graph, what, call, timeout=None):
    """`call(timeout)`, for a graph whose runners were added since its last start (or forked).

    FailedPreconditionError in a fork child for the parent's graph. With no
    time limit, warns after STALL_WARNING_SECS if `graph` has runners never
    started: the first wait is cut there, and since a dequeue that times out
    takes nothing (TF's semantics), waiting again loses nothing.
    """
    graph._check_usable()
    if timeout is not None:
        return call(timeout)
    try:
        return call(STALL_WARNING_SECS)
    except errors.DeadlineExceededError:
        pass
    names = _unstarted_runner_names(graph) if graph._runners_pending else []
    if names:
        _logger.warning(
            "%s has blocked for %g s, and the queue runners of its graph were never started (%s): call "
            "sluice.train.start_queue_runners(coord=coord) after building the pipeline and before reading from "
            "it (TensorFlow 1 waits here for ever without a word). Still waiting.",
            what, STALL_WARNING_SECS, ", ".join(sorted(set(names))))
    return call(None)


@contextlib.contextmanager
def stall_watch(message):
    """Logs `message` (a warning) if the block has not finished after STALL_WARNING_SECS; None: no watch."""
    if message is None:
        yield
        return
    timer = threading.Timer(STALL_WARNING_SECS, _logger.warning, args=("%s", message))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def runners_added(graph):
    """Notes that runners were added to `graph` since its last start."""
    graph._runners_pending = True


# ---- Sessions ---------------------------------------------------------------------------


class Session:
    """A run of a graph's input pipelines (``tf.compat.v1.Session``'s role here).

    sluice has no deferred ops: builders run when called. A Session owns the
    *state* of a graph's pipelines: opening one on a graph whose current
    state has already run (``start_queue_runners`` was called, or another
    Session was open) stops that run and builds every live queue, reader,
    producer and batcher of the graph again, so this run starts from fresh
    queues, readers and epoch counters, as a new TensorFlow session does.
    Objects keep their identity: the handles you hold now work on the new
    state. ``close()`` (or leaving the ``with`` block) closes the graph's
    queues, cancelling pending enqueues, so no runner stays blocked.

    One Session per graph at a time (FailedPreconditionError otherwise:
    build the second pipeline in its own ``Graph``). `target` and `config`
    are accepted and ignored. Using it as a context manager also makes its
    graph the default on this thread, as TF does.
    """

    def __init__(self, target="", graph=None, config=None):
        del target, config
        self._graph = graph if graph is not None else get_default_graph()
        self._graph._check_usable()
        self._closed = False
        self._graph_context = None
        with self._graph._lock:
            if self._graph._session is not None:
                raise errors.FailedPreconditionError(
                    None, None, "This graph already has an open sluice.train.Session: close it first, or build the "
                    "second pipeline in its own sluice.train.Graph() (one run of a graph at a time).")
            if self._graph._used:
                self._graph._new_run()
            self._graph._session = self
            self._graph._used = True

    @property
    def graph(self):
        return self._graph

    @property
    def closed(self):
        return self._closed

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Evaluates `fetches` once, as ``tf.Session.run``: a structure (list, tuple, dict) of fetchables.

        A fetchable is a batcher's output (:class:`sluice.train.BatchQueue`:
        the next batch) or one component of it (from unpacking it: every
        component of one BatchQueue in a single ``run`` comes from the same
        batch), a queue's bound method or any callable (called), or a value
        (returned as is). `feed_dict` is not supported (ValueError if given).
        """
        del options, run_metadata
        if feed_dict:
            raise ValueError("sluice's Session.run does not take feed_dict: call the function that would have "
                             "consumed the placeholder with the value instead")
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        from sluice import _input  # noqa: PLC0415 - _input imports this module
        return _input._run_fetches(fetches)

    def close(self):
        """Ends the run: closes the graph's queues (cancelling pending enqueues). Idempotent."""
        with self._graph._lock:
            if self._closed:
                return
            self._closed = True
            if self._graph._session is self:
                self._graph._session = None
            queues = self._graph.queues() if self._graph._fork_generation == _fork_generation else []
        for q in queues:
            try:
                q.close(cancel_pending_enqueues=True)
            except errors.OpError as e:
                _logger.debug("Session.close: ignored %s", e)

    def __enter__(self):
        self._graph_context = self._graph.as_default()
        self._graph_context.__enter__()
        _session_stack().append(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        stack = _session_stack()
        if stack and stack[-1] is self:
            stack.pop()
        context, self._graph_context = self._graph_context, None
        try:
            self.close()
        finally:
            if context is not None:
                context.__exit__(exc_type, exc_value, traceback)

    @contextlib.contextmanager
    def as_default(self):
        """Makes this the default session on this thread (``get_default_session``)."""
        _session_stack().append(self)
        try:
            yield self
        finally:
            _session_stack().pop()


def _session_stack():
    stack = getattr(_thread_local, "sessions", None)
    if stack is None:
        stack = _thread_local.sessions = []
    return stack


def get_default_session():
    """The innermost Session entered on this thread, or None."""
    stack = _session_stack()
    return stack[-1] if stack else None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

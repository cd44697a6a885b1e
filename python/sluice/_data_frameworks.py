"""tf.data and the TF1 queues feeding each other (``sluice.data.experimental.from_queue``,
``sluice.train.dataset_queue_runner`` / ``enqueue_dataset``).

Both directions run in C++ without the GIL:

* ``from_queue(queue)``: a Dataset whose iterators dequeue from a sluice
  queue, one element per ``next``, until the queue is closed and empty (the
  end of the sequence). Every iterator dequeues from the same queue.
* ``dataset_queue_runner(dataset, queue)``: a QueueRunner whose threads
  enqueue one pass over `dataset` into `queue` and close it at the end, so
  ``tf.train.batch`` and other consumers see the epoch end as with any TF1
  producer; a Coordinator stop cancels the pass and closes the queue.
"""

from sluice import _core


def _queue_structure(queue):
    """How a dequeued element nests: a dict by sorted names, one value, or a tuple."""
    from sluice import data
    names = queue.names
    if names and list(names) == sorted(names):
        return {n: data._LEAF for n in names}
    if len(queue.dtypes) == 1:
        return data._LEAF
    return tuple(data._LEAF for _ in queue.dtypes)


def from_queue(queue):
    """A Dataset of the elements dequeued from `queue` (a sluice.queue queue).

    Each ``next`` dequeues one element, blocking while the queue is empty and
    open; once it is closed and drained the sequence ends. Elements are the
    queue's components: a dict when the queue has names (in sorted order), a
    single value for one component, else a tuple. Cardinality is unknown.
    """
    from sluice import data
    return data.Dataset(_core.data.from_queue(queue.queue_ref), _queue_structure(queue))


def dataset_queue_runner(dataset, queue, num_threads=1):
    """A QueueRunner (C++ threads) enqueuing one pass over `dataset` into `queue`.

    ``create_threads(coord=coord, start=True)`` (or ``add_queue_runner`` then
    ``start_queue_runners``) runs it. `num_threads` threads share the pass
    (in order when 1). At the end of the pass the queue is closed; a dataset
    error stops the coordinator with it; a coordinator stop cancels the pass
    and closes the queue with ``cancel_pending_enqueues``. The dataset's flat
    components must match the queue's (a dict dataset: its sorted keys in the
    queue's component order). Keep the runner while it runs: dropping the last
    reference stops its threads (``enqueue_dataset`` keeps it in the graph).
    """
    from sluice import data, train
    if not isinstance(dataset, data.DatasetV2):
        raise TypeError("dataset_queue_runner takes a sluice.data.Dataset, not %r" % (dataset,))
    structure = dataset._structure
    if queue.names and isinstance(structure, dict) and list(structure) != list(queue.names):
        raise ValueError("the dataset's keys %s are not the queue's names %s in order"
                         % (list(structure), list(queue.names)))
    num_threads = int(num_threads)
    if num_threads < 1:
        raise ValueError("num_threads must be >= 1, got %d" % num_threads)
    runner = _core.data.dataset_queue_runner(dataset._core, queue.queue_ref, num_threads)
    return train._CoreQueueRunner(runner, queue)


def enqueue_dataset(dataset, queue, num_threads=1):
    """``dataset_queue_runner`` added to the default graph's QUEUE_RUNNERS (started by
    ``start_queue_runners``). Returns the runner."""
    from sluice import train
    qr = dataset_queue_runner(dataset, queue, num_threads)
    train.add_queue_runner(qr)
    return qr

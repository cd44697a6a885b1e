"""The memory budget and error policies of sluice.data (sluice's own, beyond tf.data).

Memory budget: ``Options.ram_budget`` (bytes; None or 0: none) bounds every
buffer of a pipeline (prefetch, shuffle, parallel map, parallel interleave's
read-ahead, cache in memory, batch assembly), counted live in tensor bytes.
A stage that could do without its next element waits for room (a shuffle
samples from a smaller buffer) while the total would pass the budget less a
reserve of one element per buffering stage; a stage whose consumer needs an
element now never waits, so a budget never makes a pipeline hang. The
tracked bytes stay within the budget (an element larger than every earlier
one of its stage may pass it by the difference); AUTOTUNE's prefetch grows
only within it. A budget that cannot hold one element per buffering stage
raises ``ResourceExhaustedError`` at the first elements; so does an in-memory
``cache()`` that outgrows it. ``iterator.memory_stats()`` reports the account.

Error policies: ``'fail'`` (tf.data's behaviour, the default), ``'skip'``
(drop the element, count it in ``iterator.skipped_errors``, report it) or
``'replace'`` (report it and yield a substitute: the zeros of the element_spec,
unknown dimensions 0 and strings empty, or the element given with
``ErrorPolicy.replace_with(element)``). Per stage, as a keyword of
``Dataset.map`` (the function's errors: an undecodable image, a parse
error) and of the readers ``TFRecordDataset``, ``TextLineDataset`` and
``FixedLengthRecordDataset`` (a file that does not open, a read error, a
corrupt record; the rest of a failing file is skipped, TF's rule); or for
the whole pipeline with ``Options.error_policy`` (every map and reader whose
own is unset). Each kind of error (stage and code) is logged once, to the
"sluice" logger; ``iterator.error_report()`` (also in ``stats()``) counts
them and keeps the file, record, offset and element of the first few.
"""

from sluice import _core
from sluice import dtypes as _dtypes

_d = _core.data

POLICIES = ("fail", "skip", "replace")


class ErrorPolicy:
    """An error policy: ``ErrorPolicy.FAIL``, ``SKIP``, ``REPLACE`` (strings work as well), or
    ``ErrorPolicy.replace_with(element)`` for ``'replace'`` with the substitute `element`
    (the structure and dtypes of the dataset's elements)."""

    FAIL = "fail"
    SKIP = "skip"
    REPLACE = "replace"

    def __init__(self, policy, replacement=None):
        self.policy = check_policy(policy)
        self.replacement = replacement

    @classmethod
    def replace_with(cls, element):
        return cls("replace", element)

    def __repr__(self):
        return "ErrorPolicy(%r%s)" % (self.policy, "" if self.replacement is None else ", replacement=...")


def check_policy(policy, name="error_policy"):
    """`policy` ('fail', 'skip' or 'replace') or ValueError."""
    if isinstance(policy, bytes):
        policy = policy.decode()
    if policy not in POLICIES:
        raise ValueError("%s must be 'fail', 'skip' or 'replace' (or an ErrorPolicy), got %r" % (name, policy))
    return policy


def apply(core, structure, error_policy):
    """`core` (a map or reader just made; its elements have `structure`) with its own
    `error_policy` (None: `core` unchanged)."""
    if error_policy is None:
        return core
    if isinstance(error_policy, ErrorPolicy):
        policy, replacement = error_policy.policy, error_policy.replacement
    else:
        policy, replacement = check_policy(error_policy), None
    values = None
    if replacement is not None:
        from sluice import data as _data  # the structure helpers
        enums = core.element_spec()[0]
        leaves = _data._flatten(structure, replacement)
        if len(leaves) != len(enums):
            raise ValueError("the replacement has %d components, the elements %d" % (len(leaves), len(enums)))
        values = [_data._typed(leaf, _dtypes.as_dtype(e) if e else None)[0] for leaf, e in zip(leaves, enums)]
    return _d.with_error_policy(core, policy, values)


def with_budget_options(core, options):
    """`core` with the options' ram_budget and error_policy, where set."""
    ram_budget, error_policy = options.ram_budget, options.error_policy
    if ram_budget is None and error_policy is None:
        return core
    if error_policy is not None:
        check_policy(error_policy, "Options.error_policy")
    return _d.with_budget_options(core, ram_budget, error_policy)


def memory_stats(iterator):
    """The pipeline's byte account: limit (Options.ram_budget, 0: none), bytes (tracked now),
    peak_bytes, reserve_bytes (one element per buffering stage), waits and wait_ns (charges
    that waited for room, and their time)."""
    return _d.iterator_memory(iterator._it)


def error_report(iterator):
    """What the error policies (and ignore_errors) handled, one dict per kind: stage, code,
    policy, count, and examples (the first five: file, record, offset, element, message; -1
    or '' where unknown)."""
    return _d.iterator_errors(iterator._it)


class IteratorStats(list):
    """``Iterator.stats()``: the per-stage dicts (a list, as before), with the pipeline's
    ``memory`` (``memory_stats()``) and ``errors`` (``error_report()``) as attributes."""

    def __init__(self, stages, iterator):
        super().__init__(stages)
        self.memory = memory_stats(iterator)
        self.errors = error_report(iterator)

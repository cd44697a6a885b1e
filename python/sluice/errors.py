"""Exception types for sluice errors, with TensorFlow's names and codes.

Every error a sluice operation reports is an :class:`OpError` subclass
chosen by its canonical code, exactly as ``tf.errors``: a closed, drained
queue raises :class:`OutOfRangeError`, an enqueue on a closed queue
:class:`CancelledError`, an expired ``timeout=`` :class:`DeadlineExceededError`.

The C++ engine reports errors as Status values; the extension turns a Status
into one of these exceptions in one place (``_from_status``, called by
``sluice._core`` once it holds the GIL again).
"""

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


# The payload of a failed enqueue_many (queue.h kRowsEnqueuedPayload).
_ROWS_ENQUEUED_PAYLOAD = "sluice.queue.rows_enqueued"


class OpError(Exception):
    """The base class for errors of sluice operations (``tf.errors.OpError``).

    Args (TensorFlow's constructor):
      node_def: always None here (sluice has no graph); kept for TF's shape.
      op: the failing operation, or None.
      message: the message string.
      error_code: one of the code constants of this module.
      *args: optionally a dict of payloads (``experimental_payloads``).
    """

    def __init__(self, node_def, op, message, error_code, *args):
        super().__init__()
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code
        self._experimental_payloads = dict(args[0]) if args and args[0] else {}

    def __reduce__(self):
        init_argspec = (self._node_def, self._op, self._message)
        if type(self) is OpError:
            init_argspec += (self._error_code,)
        return type(self), init_argspec + (self._experimental_payloads,)

    @property
    def message(self):
        """The error message that describes the error."""
        return self._message

    @property
    def op(self):
        """The operation that failed, if known (None in sluice)."""
        return self._op

    @property
    def error_code(self):
        """The integer error code that describes the error."""
        return self._error_code

    @property
    def node_def(self):
        """Always None: sluice runs no graph."""
        return self._node_def

    @property
    def experimental_payloads(self):
        """Structured context of the error, a dict of str to bytes."""
        return self._experimental_payloads

    @property
    def rows_enqueued(self):
        """For a failed ``enqueue_many`` (timeout, cancellation, closed queue): how many rows it enqueued.

        Those leading rows stay in the queue, so a retry should send only
        the rest. None for other errors.
        """
        rows = self._experimental_payloads.get(_ROWS_ENQUEUED_PAYLOAD)
        return None if rows is None else int(rows)

    def __str__(self):
        return self.message

    def __repr__(self):
        return "%s(%r)" % (type(self).__name__, self.message)


def _make_subclass(name, code, doc):
    def __init__(self, node_def, op, message, *args):
        OpError.__init__(self, node_def, op, message, code, *args)

    return type(name, (OpError,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


CancelledError = _make_subclass(
    "CancelledError", CANCELLED,
    "An operation or step was cancelled (e.g. an enqueue on a closed queue).")
UnknownError = _make_subclass("UnknownError", UNKNOWN, "Unknown error.")
InvalidArgumentError = _make_subclass(
    "InvalidArgumentError", INVALID_ARGUMENT, "An operation received an invalid argument.")
DeadlineExceededError = _make_subclass(
    "DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline (timeout=) expired before the operation completed.")
NotFoundError = _make_subclass("NotFoundError", NOT_FOUND, "A requested entity (e.g. a file) was not found.")
AlreadyExistsError = _make_subclass(
    "AlreadyExistsError", ALREADY_EXISTS, "An entity that we attempted to create already exists.")
PermissionDeniedError = _make_subclass(
    "PermissionDeniedError", PERMISSION_DENIED, "The caller does not have permission to run an operation.")
UnauthenticatedError = _make_subclass(
    "UnauthenticatedError", UNAUTHENTICATED, "The request does not have valid authentication credentials.")
ResourceExhaustedError = _make_subclass(
    "ResourceExhaustedError", RESOURCE_EXHAUSTED, "Some resource has been exhausted.")
FailedPreconditionError = _make_subclass(
    "FailedPreconditionError", FAILED_PRECONDITION,
    "The system is not in a state to execute an operation.")
AbortedError = _make_subclass("AbortedError", ABORTED, "The operation was aborted.")
OutOfRangeError = _make_subclass(
    "OutOfRangeError", OUT_OF_RANGE,
    "An operation iterated past the valid range (e.g. a dequeue on a closed, drained queue).")
UnimplementedError = _make_subclass(
    "UnimplementedError", UNIMPLEMENTED, "The operation has not been implemented.")
InternalError = _make_subclass("InternalError", INTERNAL, "The system experienced an internal error.")
UnavailableError = _make_subclass("UnavailableError", UNAVAILABLE, "The runtime is currently unavailable.")
DataLossError = _make_subclass("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption (e.g. a corrupt record).")

_CODE_TO_EXCEPTION_CLASS = {
    CANCELLED: CancelledError,
    UNKNOWN: UnknownError,
    INVALID_ARGUMENT: InvalidArgumentError,
    DEADLINE_EXCEEDED: DeadlineExceededError,
    NOT_FOUND: NotFoundError,
    ALREADY_EXISTS: AlreadyExistsError,
    PERMISSION_DENIED: PermissionDeniedError,
    UNAUTHENTICATED: UnauthenticatedError,
    RESOURCE_EXHAUSTED: ResourceExhaustedError,
    FAILED_PRECONDITION: FailedPreconditionError,
    ABORTED: AbortedError,
    OUT_OF_RANGE: OutOfRangeError,
    UNIMPLEMENTED: UnimplementedError,
    INTERNAL: InternalError,
    UNAVAILABLE: UnavailableError,
    DATA_LOSS: DataLossError,
}

_EXCEPTION_CLASS_TO_CODE = {cls: code for code, cls in _CODE_TO_EXCEPTION_CLASS.items()}


def exception_type_from_error_code(error_code):
    """The OpError subclass for `error_code` (KeyError if there is none)."""
    return _CODE_TO_EXCEPTION_CLASS[error_code]


def error_code_from_exception_type(cls):
    """The code of an OpError subclass (KeyError if it has none)."""
    return _EXCEPTION_CLASS_TO_CODE[cls]


def _from_status(code, message, payloads=None):
    """Builds the exception for a C++ Status (the extension's one translation point).

    Unknown codes become UnknownError, as TensorFlow does.
    """
    cls = _CODE_TO_EXCEPTION_CLASS.get(code)
    if cls is None:
        return UnknownError(None, None, message, payloads or {})
    return cls(None, None, message, payloads or {})


__all__ = [
    "OpError", "CancelledError", "UnknownError", "InvalidArgumentError", "DeadlineExceededError",
    "NotFoundError", "AlreadyExistsError", "PermissionDeniedError", "UnauthenticatedError",
    "ResourceExhaustedError", "FailedPreconditionError", "AbortedError", "OutOfRangeError",
    "UnimplementedError", "InternalError", "UnavailableError", "DataLossError",
    "exception_type_from_error_code", "error_code_from_exception_type",
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED",
]

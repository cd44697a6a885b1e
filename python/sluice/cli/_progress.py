"""Progress reports: a live bar (rich) on a terminal, plain periodic lines elsewhere.

    with Bar(total=n, unit="images") as bar:
        bar.advance(1, bytes_so_far)

Both go to stderr, so stdout keeps only the command's results.
"""

import sys
import time

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TaskProgressColumn, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)
from rich.text import Text


def _rate(n, seconds):
    return n / seconds if seconds > 0 else 0.0


class _RateColumn(ProgressColumn):
    """items/s and MB/s over the whole run."""

    def __init__(self, unit):
        super().__init__()
        self.unit = unit

    def render(self, task):
        elapsed = task.elapsed or 0.0
        mb = task.fields.get("bytes", 0) / 1e6
        return Text("%.1f %s/s  %.1f MB/s" % (_rate(task.completed, elapsed), self.unit, _rate(mb, elapsed)))


class Bar:
    """A progress report of `total` items (None: unknown, no ETA) of `unit`.

    interactive: None asks whether stderr is a terminal. On a terminal the
    bar is redrawn live; elsewhere a line is printed every `interval` seconds.
    """

    def __init__(self, total=None, unit="records", quiet=False, interactive=None, interval=5.0, extra=None):
        self.total, self.unit, self.quiet = total, unit, quiet
        self.interactive = sys.stderr.isatty() if interactive is None else interactive
        self.interval = interval
        self.extra = extra  # callable -> str appended to each report (e.g. "batches 12")
        self.count = 0
        self.bytes = 0
        self._start = None
        self._last_line = 0.0
        self._progress = None
        self._task = None

    def __enter__(self):
        self._start = self._last_line = time.monotonic()
        if self.quiet or not self.interactive:
            return self
        columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn() if self.total else
                   TextColumn("{task.completed} " + self.unit)]
        if self.total:
            columns.append(TaskProgressColumn())
        columns += [_RateColumn(self.unit), TextColumn("{task.fields[extra]}"), TimeElapsedColumn()]
        if self.total:
            columns.append(TimeRemainingColumn())
        self._progress = Progress(*columns, console=Console(stderr=True), transient=False)
        self._progress.start()
        self._task = self._progress.add_task("sluice", total=self.total, bytes=0, extra="")
        return self

    @property
    def elapsed(self):
        return time.monotonic() - self._start

    def advance(self, n=1, total_bytes=None):
        self.count += n
        if total_bytes is not None:
            self.bytes = total_bytes
        if self.quiet:
            return
        if self._progress is not None:
            self._progress.update(self._task, advance=n, bytes=self.bytes, extra=self.extra() if self.extra else "")
            return
        now = time.monotonic()
        if now - self._last_line >= self.interval:
            self._last_line = now
            print(self.line(), file=sys.stderr, flush=True)

    def line(self):
        """One plain report: counts, rates, elapsed time and, when the total is known, the ETA."""
        elapsed = self.elapsed
        parts = ["%d%s %s" % (self.count, "/%d" % self.total if self.total else "", self.unit),
                 "%.1f %s/s" % (_rate(self.count, elapsed), self.unit),
                 "%.1f MB/s" % _rate(self.bytes / 1e6, elapsed)]
        if self.extra:
            parts.append(self.extra())
        parts.append("elapsed %.1fs" % elapsed)
        if self.total and self.count:
            parts.append("ETA %.1fs" % (elapsed * (self.total - self.count) / self.count))
        return ", ".join(parts)

    def __exit__(self, *exc):
        if self._progress is not None:
            self._progress.stop()
        return False

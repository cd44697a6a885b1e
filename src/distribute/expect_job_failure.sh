#!/usr/bin/env bash
# expect_job_failure.sh PATTERN COMMAND...: runs an MPI job that must fail
# (a rank dies) and passes when it exits non-zero with output matching the
# extended regex PATTERN. Open MPI 4.1's mpirun, once it has printed its
# report of the dead rank, sometimes crashes or hangs in its own PMIx
# finalisation with every rank already gone: so any non-zero status counts,
# and an mpirun still alive GRACE seconds after the report is killed (the
# job did fail clearly; the launcher's own exit is not what is tested).
# A job that never reports is CTest's TIMEOUT to catch.
set -u
pattern="$1"
shift
grace="${SLUICE_MPIRUN_GRACE:-5}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
"$@" >"$log" 2>&1 &
pid=$!
reported_at=""
while kill -0 "$pid" 2>/dev/null; do
  if [ -z "$reported_at" ] && grep -Eq "$pattern" "$log"; then
    reported_at=$SECONDS
  fi
  if [ -n "$reported_at" ] && ((SECONDS - reported_at >= grace)); then
    echo "expect_job_failure: mpirun still running ${grace} s after its report; killing it"
    kill -KILL "$pid" 2>/dev/null
    break
  fi
  sleep 0.2
done
wait "$pid"
rc=$?
cat "$log"
if [ "$rc" -eq 0 ]; then
  echo "expect_job_failure: the job succeeded; expected it to fail" >&2
  exit 1
fi
if ! grep -Eq "$pattern" "$log"; then
  echo "expect_job_failure: no line matches: $pattern" >&2
  exit 1
fi
echo "expect_job_failure: failed as expected (status $rc)"

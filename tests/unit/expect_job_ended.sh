#!/bin/sh
# Runs one GoogleTest filter of the unit program, which must end its process as a job failure
# does: exit code 70 (job_failure::exit_code, through MPI_Abort) and a message matching a
# pattern (grep -E).
# Usage: expect_job_ended.sh <program> <gtest filter> <pattern>
program=$1 filter=$2 pattern=$3
out=$(SIDECORE_TEST_END_JOB=1 "$program" --gtest_filter="$filter" 2>&1)
code=$?
printf '%s\n' "$out"
if [ "$code" -ne 70 ]; then
  echo "FAIL: exit code $code, expected 70 (the job ended by job_failure::end_job)"
  exit 1
fi
if ! printf '%s\n' "$out" | grep -Eq "$pattern"; then
  echo "FAIL: no message matching: $pattern"
  exit 1
fi
echo "OK: exit code 70 and the message"

#!/bin/bash
# The wrapper `TWOSCALE_BIN` names for tempered-lower-islands.py in the lab log entry of 30 Nov 2026 (thirtieth
# session): runs LAB_BUILD (a build of lab/patches/tempered-lower-size-to-quiet.patch) with TWOSCALE_LAB_TERMS=1,
# appends its stderr and a `TIME end start args` line to TERMS_LOG, and passes the exit status on.
t0=$(date +%s.%N)
TWOSCALE_LAB_TERMS=1 "$LAB_BUILD" "$@" 2>> "$TERMS_LOG"; rc=$?
echo "TIME $(date +%s.%N) $t0 $*" >> "$TERMS_LOG"
exit $rc

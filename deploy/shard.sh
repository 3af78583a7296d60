#!/bin/sh
# One shard of a Log Lab exploration, as a Kubernetes Indexed Job or a Slurm job array runs it.
#
#   LOGLAB_SHARDS=16 LOGLAB_OUT=/out loglab-shard crash --preset fsmark-create --crash-points 20000
#
# The shard K of N comes from JOB_COMPLETION_INDEX (Kubernetes, from 0), SLURM_ARRAY_TASK_ID
# (Slurm, from SLURM_ARRAY_TASK_MIN) or LOGLAB_SHARD (from 1); N is LOGLAB_SHARDS. Writes
# $LOGLAB_OUT/shard-K.json (renamed into place when complete, so `loglab merge` never reads
# half a file). A crash exploration keeps $LOGLAB_OUT/shard-K.ckpt: a shard restarted after
# a kill or a preemption resumes from its last finished crash point.
set -eu
n=${LOGLAB_SHARDS:?set LOGLAB_SHARDS to the number of shards N}
out=${LOGLAB_OUT:?set LOGLAB_OUT to the directory the shards write to}
if [ -n "${JOB_COMPLETION_INDEX:-}" ]; then
  k=$((JOB_COMPLETION_INDEX + 1))
elif [ -n "${SLURM_ARRAY_TASK_ID:-}" ]; then
  k=$((SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-1} + 1))
elif [ -n "${LOGLAB_SHARD:-}" ]; then
  k=$LOGLAB_SHARD
else
  echo "loglab-shard: no shard index: set JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID or LOGLAB_SHARD" >&2
  exit 2
fi
[ $# -gt 0 ] || { echo "loglab-shard: give the exploration, e.g. crash --preset fsmark-create" >&2; exit 2; }
mkdir -p "$out"
done_file="$out/shard-$k.json"
if [ -s "$done_file" ]; then
  echo "loglab-shard: $done_file is already complete" >&2
  exit 0
fi
if [ "$1" = crash ]; then
  set -- "$@" --checkpoint "$out/shard-$k.ckpt"
fi
"${LOGLAB_BIN:-loglab}" "$@" --shard "$k/$n" >"$done_file.part"
mv "$done_file.part" "$done_file"

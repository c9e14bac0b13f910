#!/usr/bin/env bash
# Parse a large file on a Slurm cluster: one array task per shard, then one merge.
#
#   sbatch --array=1-8 docs/slurm-parse.sh GRAMMAR INPUT OUTDIR [cky parse options...]
#   # when every task is done (or chain it: sbatch --dependency=afterok:JOBID ...):
#   cky merge -o OUTPUT OUTDIR/shard-{1..8}.txt
#
# Task K of N parses input lines K, K+N, K+2N, ... (cky parse --shard K/N) into
# OUTDIR/shard-K.txt (written whole or not at all) and its manifest OUTDIR/shard-K.txt.shard,
# by which cky merge refuses an incomplete set; messages name the real input lines.
# The task number K runs from 1: an array given from 0 (--array=0-7) is shifted by
# SLURM_ARRAY_TASK_MIN. N is SLURM_ARRAY_TASK_COUNT. Set CKY to the cky binary (default:
# cky on PATH) and CKY_CACHE to a kernel cache on shared storage, compiled once beforehand
# with `cky compile -g GRAMMAR` (`--engine cpu` for tasks that pass --engine cpu), so that
# the tasks do not all compile it.
#SBATCH --job-name=cky-parse
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=8
#SBATCH --output=cky-parse-%A_%a.log
set -euo pipefail

if [ $# -lt 3 ]; then
    echo "usage: sbatch --array=1-N $0 GRAMMAR INPUT OUTDIR [cky parse options...]" >&2
    exit 2
fi
grammar=$1 input=$2 outdir=$3
shift 3
: "${SLURM_ARRAY_TASK_ID:?not an array task: submit with sbatch --array=1-N}"
: "${SLURM_ARRAY_TASK_COUNT:?not an array task: submit with sbatch --array=1-N}"
k=$((SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-1} + 1))
n=$SLURM_ARRAY_TASK_COUNT
mkdir -p "$outdir"
exec "${CKY:-cky}" parse -g "$grammar" -i "$input" --shard "$k/$n" -o "$outdir/shard-$k.txt" "$@"

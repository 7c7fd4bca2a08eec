#!/usr/bin/env bash
# The README's live-lab table (issue 9, items 4 and 5): one `recommended` campaign capped at
# 30 runs with --holdout 10 per seed, each in a fresh `nimo lab up`, one after another.
# Needs root (the lab). Prints each campaign's summary line (holdout MAPE, share of holdout
# runs inside the 90% interval). Run it on an otherwise idle machine: the applications'
# run times are what is measured.
#
#   bash benchmarks/lab_holdout_campaigns.sh [SEEDS...]      (default: 1 2 3 4 5)
#
# NIMO_LAB_ERROR=NAME runs the campaigns with that internal error (e.g. cv_spread_checked)
# instead of recommended's.
set -euo pipefail
cd "$(dirname "$0")/.."
nimo=${NIMO:-.venv/bin/nimo}
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 2 3 4 5)
work=$(mktemp -d)
lab="$work/lab"
cleanup() { "$nimo" lab down --dir "$lab" >/dev/null 2>&1 || true; }
trap cleanup EXIT
cat > "$work/design.yaml" <<'EOF'
extends: recommended
name: recommended-30
description: recommended capped at 30 runs (the README's live lab campaigns)
stop: {max_runs: 30}
EOF
if [ -n "${NIMO_LAB_ERROR:-}" ]; then
  printf 'error: "%s"\n' "$NIMO_LAB_ERROR" >> "$work/design.yaml"
fi
status=0
for seed in "${seeds[@]}"; do
  "$nimo" lab up --dir "$lab" >/dev/null
  if ! "$nimo" campaign run "$lab/inventory.yaml" --design "$work/design.yaml" --seed "$seed" \
      --holdout 10 --store "sqlite:///$work/live.db" --name "live$seed" \
      --json "$work/live$seed.json" > "$work/live$seed.log" 2>&1; then
    status=1
  fi
  tail -n 1 "$work/live$seed.log"
  "$nimo" lab down --dir "$lab" >/dev/null
done
echo "campaigns, logs and store: $work"
exit $status

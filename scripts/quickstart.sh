#!/usr/bin/env bash
# One command on a fresh machine: install everything, then run the main job on the embedded
# default store (SQLite in ./out): a learning campaign replayed on a shipped application's
# recorded measurements, its convergence log, an exported model, a prediction and a plot.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
source scripts/venv.sh

mkdir -p out
STORE="sqlite:///$(pwd)/out/nimo.db"
NAME="quickstart-$(date +%Y%m%d-%H%M%S)"
DATA=datasets/synthetic/memory_cliff.csv

nimo replay "$DATA" --store "$STORE" --name "$NAME" --seed 1 --json "out/$NAME.json"
nimo campaign status "$NAME" --store "$STORE"
nimo model export "$NAME" --store "$STORE" -o out/model.json
nimo predict out/model.json cpu_mhz=930 mem_mb=256 latency_ms=7.2 bandwidth_mbit=60
nimo plot "$NAME" --store "$STORE" -o out/convergence.png
echo "quickstart: campaign $NAME in $STORE; out/model.json; out/convergence.png; out/$NAME.json"

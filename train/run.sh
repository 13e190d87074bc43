#!/usr/bin/env bash
# Makes the training data with the simulator and trains models/hands.onnx on this CPU.
#   train/run.sh            (VENV=... to reuse a virtualenv, STEPS=... training steps)
# About 10 minutes of simulation, then about 3 steps a second on one core (STEPS=14500:
# about 80 minutes); never run by CI. The schedule follows the step count and the seeds
# are fixed, so a run repeats itself on the same machine and library versions.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-data/venv}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q -r train/requirements.txt
cargo build --release --all-targets --quiet
"$VENV/bin/python" train/make_data.py --bin target/release/karuta-referee --data data/hands
"$VENV/bin/python" train/train.py --data data/hands --out models/hands.onnx --steps "${STEPS:-14500}" --lr 1.5e-3
sha256sum models/hands.onnx

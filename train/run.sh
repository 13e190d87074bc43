#!/usr/bin/env bash
# Makes the training data with the simulator and trains models/hands.onnx on this CPU.
#   train/run.sh            (VENV=... to reuse a virtualenv, MINUTES=... training time)
# About 10 minutes of simulation and MINUTES of training on 2 cores; never run by CI.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-data/venv}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q -r train/requirements.txt
cargo build --release --quiet
"$VENV/bin/python" train/make_data.py --bin target/release/karuta-referee --data data/hands
"$VENV/bin/python" train/train.py --data data/hands --out models/hands.onnx --minutes "${MINUTES:-45}"
sha256sum models/hands.onnx

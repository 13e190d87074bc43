#!/usr/bin/env bash
# Makes the contact model's training data with the simulator and trains
# models/contact.onnx on this CPU (docs/hands.md, "The contact network").
#   train/run_contact.sh        (VENV=... to reuse a virtualenv, STEPS=... training steps)
# About 10 minutes of simulation and cropping, then about 4 steps a second on 2 threads;
# never run by CI. Seeds are fixed, so a run repeats itself on the same machine and
# library versions.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-data/venv}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q -r train/requirements.txt
cargo build --release --quiet
"$VENV/bin/python" train/make_contact_data.py --bin target/release/karuta-referee --data data/contact
THREADS=${THREADS:-2} "$VENV/bin/python" train/train_contact.py --data data/contact --out models/contact.onnx --steps "${STEPS:-3000}"
sha256sum models/contact.onnx

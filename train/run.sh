#!/usr/bin/env bash
# Makes the training data with the simulator and trains models/hands.onnx on this CPU;
# never run by CI. The schedules follow step counts and the seeds are fixed, so a run
# repeats itself on the same machine and library versions.
#
#   train/run.sh            the committed model: the first model's weights (from git,
#                           commit a447464) fine-tuned on the dense set (FINE_STEPS)
#   train/run.sh more       the committed model (commit 3fd7ee9) fine-tuned again on the
#                           dense and dense2 sets with the hue turned (MORE_STEPS), written
#                           to data/hands-more/ beside copies of the contact networks:
#                           measured and not committed (docs/hands.md, "fine-tuned again")
#   train/run.sh scratch    the first model's recipe from nothing: the base set, STEPS
#                           steps on one core (about 80 minutes after 10 of simulation)
#
# VENV=... reuses a virtualenv. The dense set takes about 8 minutes of simulation and
# 4 GB of memory; the fine-tuning about 0.2 s a step on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-data/venv}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q -r train/requirements.txt
cargo build --release --all-targets --quiet
bin=target/release/karuta-referee
case "${1:-fine}" in
  scratch)
    "$VENV/bin/python" train/make_data.py --bin "$bin" --data data/hands
    "$VENV/bin/python" train/train.py --data data/hands --out models/hands.onnx \
      --steps "${STEPS:-14500}" --lr 1.5e-3
    ;;
  fine)
    mkdir -p data
    git show a447464:models/hands.onnx > data/hands-first.onnx
    "$VENV/bin/python" train/make_data.py --bin "$bin" --set dense --step 6 --data data/hands-dense
    "$VENV/bin/python" train/train.py --data data/hands-dense --out models/hands.onnx \
      --init-onnx data/hands-first.onnx --steps "${FINE_STEPS:-9000}" --lr 1e-3 --threads 2
    ;;
  more)
    mkdir -p data
    git show 3fd7ee9:models/hands.onnx > data/hands-second.onnx
    "$VENV/bin/python" train/make_data.py --bin "$bin" --set dense --step 6 --data data/hands-dense
    "$VENV/bin/python" train/make_data.py --bin "$bin" --set dense2 --step 6 --data data/hands-dense2
    mkdir -p data/hands-more
    cp models/contact*.onnx data/hands-more/
    "$VENV/bin/python" train/train.py --data data/hands-dense data/hands-dense2 --out data/hands-more/hands.onnx \
      --init-onnx data/hands-second.onnx --steps "${MORE_STEPS:-15000}" --lr 5e-4 --hue 8 --threads 2
    ;;
  *)
    echo "usage: train/run.sh [more|fine|scratch]" >&2
    exit 2
    ;;
esac
sha256sum models/hands.onnx data/hands-more/hands.onnx 2>/dev/null || true

#!/usr/bin/env bash
# Makes the contact networks' training data with the simulator and trains
# models/contact.onnx, models/contact-second.onnx, models/contact-point.onnx and
# models/contact-onset.onnx on this CPU (docs/hands.md, "The contact network";
# models/MODEL_CARD.md).
#   train/run_contact.sh   (VENV=... to reuse a virtualenv; STEPS=..., POINT_STEPS=... and
#                           ONSET_STEPS=... training steps; HANDS=... another hand model
#                           to centre crops on its fingertips; OUT=... the folder the
#                           networks are written to, models/ unless told; ONSET=0 to
#                           keep the onset network, which learns from the truth alone)
# Draws the nine 1280x720 240 fps recordings it lacks (seeds 1051-1059, about 2 minutes
# each) and reuses the dense set's sixteen (train/run.sh) when they are there; runs the
# committed hand model over six of them so that crops are also centred on the fingertips
# it finds; then trains the first network (the 96 mm square, 12,000 steps, about 28
# minutes on 2 threads), the second (the same and a 192 mm square, 18 channels, 12,000
# steps, about 37 minutes) and the point network (where in the square the fingertip
# presses, 4,000 steps, about 9 minutes) from the same crops; then draws eight more
# 240 fps recordings (seeds 1060-1067, about 4 minutes each), cuts the frames around
# every touch of the 240 fps ones and trains the onset network (when the finger lands,
# 6,000 steps, about 20 minutes). Never run by CI. The data
# takes about 14 GB of disk under DATA (the crops with the wider squares 6 GB, their
# per-recording parts 6 GB, the recordings 1 GB), and the onset network's about 1.5 GB
# under ONSET_DATA (data/onset).
# Seeds are fixed, so a run repeats itself on the same machine and library versions, up
# to the order of floating-point sums across threads.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-data/venv}
DATA=${DATA:-data/contact}
HANDS=${HANDS:-models/hands.onnx}
OUT=${OUT:-models}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q -r train/requirements.txt
cargo build --release --quiet
bin=target/release/karuta-referee
mkdir -p "$DATA/rec" "$DATA/found" "$DATA/hands-alone" "$OUT"
# The hand model alone, without the contact networks beside it, finds the fingertips.
# A hand model other than the last one used here: its fingertips are found afresh.
if ! cmp -s "$HANDS" "$DATA/hands-alone/hands.onnx"; then
  cp "$HANDS" "$DATA/hands-alone/hands.onnx"
  rm -rf "$DATA/found"/*
fi
# The dense set's recordings (train/make_data.py --set dense), when made already.
for d in data/hands-dense/rec/*; do
  [ -f "$d/DONE" ] && ln -sfn "$(realpath "$d")" "$DATA/rec/$(basename "$d")"
done
"$VENV/bin/python" train/make_contact_data.py --bin "$bin" --data "$DATA" --context
for name in clean-1051 realistic-1052 hard-1053 clean-1054 realistic-1055 hard-1056; do
  rec="$name-1280x720-240"
  if [ ! -f "$DATA/found/$rec/hands.jsonl" ]; then
    "$bin" perceive "$DATA/rec/$rec" --out "$DATA/found/$rec" --model "$DATA/hands-alone/hands.onnx" > /dev/null
    rm -f "$DATA/parts/$rec.npz"
  fi
done
"$VENV/bin/python" train/make_contact_data.py --bin "$bin" --data "$DATA" --found "$DATA/found" --context
THREADS=${THREADS:-2} "$VENV/bin/python" train/train_contact.py --data "$DATA" --out "$OUT/contact.onnx" --steps "${STEPS:-12000}"
THREADS=${THREADS:-2} "$VENV/bin/python" train/train_contact.py --data "$DATA" --out "$OUT/contact-second.onnx" --steps "${STEPS:-12000}" --context
THREADS=${THREADS:-2} "$VENV/bin/python" train/train_contact.py --data "$DATA" --out "$OUT/contact-point.onnx" --steps "${POINT_STEPS:-4000}" --point
if [ "${ONSET:-1}" != 0 ]; then
  ONSET_DIR=${ONSET_DATA:-data/onset}
  "$VENV/bin/python" train/make_onset_data.py --bin "$bin" --data "$ONSET_DIR" --contact "$DATA"
  THREADS=${THREADS:-2} "$VENV/bin/python" train/train_onset.py --data "$ONSET_DIR" --out "$OUT/contact-onset.onnx" --steps "${ONSET_STEPS:-6000}"
fi
sha256sum "$OUT"/contact*.onnx

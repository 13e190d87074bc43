#!/usr/bin/env bash
# Scores a hand model on simulated recordings it was never trained on:
#   train/eval.sh MODEL OUT REC...      (REC: `simulate --labels` directories)
# For each recording: `perceive` then `score-hands`; OUT/<name>.json holds the score and
# OUT/summary.tsv one line per recording. Recordings for the model card:
#   for sp in clean:7101 clean:7102 realistic:7201 realistic:7202 hard:7301 hard:7302; do
#     karuta-referee simulate --seed ${sp#*:} --preset ${sp%:*} --size 1280x720 --fps 240 \
#       --readings 10 --labels --out data/eval/${sp%:*}-${sp#*:}; done
set -euo pipefail
model=$1; out=$2; shift 2
# The contact networks are read beside the hand model: without them touches come from
# the hand model's own contact map, and the scores are not comparable.
[ -f "$(dirname "$model")/contact.onnx" ] || echo "$model: no contact.onnx beside it;" \
  "touches come from its own contact map (copy models/contact*.onnx there)" >&2
bin=${BIN:-target/release/karuta-referee}
mkdir -p "$out"
printf 'recording\tvisible\trecall\tiou_median\ttip_err_median_px\tplayer_right\ttrue_touches\ttouch_recall\ttouch_err_p95_ms\tfalse_touches_per_min\tenter_leave_frac\tcpu_ms_per_frame\n' > "$out/summary.tsv"
for rec in "$@"; do
  name=$(basename "$rec")
  p="$out/$name"
  perf=$("$bin" perceive "$rec" --out "$p" --model "$model")
  "$bin" score-hands --truth "$rec" --out "$p" > "$out/$name.json"
  python3 - "$out/$name.json" "$name" "$perf" >> "$out/summary.tsv" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); perf = json.loads(sys.argv[3])
f = lambda k, d=3: "" if s.get(k) is None else f"{s[k]:.{d}f}"
print("\t".join([sys.argv[2], str(s["visible_hands"]), f("recall"), f("iou_median"),
      f("tip_err_median_px", 2), f("player_right_frac"), str(s["true_touches"]), f("touch_recall"),
      f("touch_err_p95_ms", 2), f("false_touches_per_min", 2), f("enter_leave_frac"),
      f"{perf['cpu_ms_per_frame']:.2f}"]))
PY
done
column -t -s $'\t' "$out/summary.tsv"

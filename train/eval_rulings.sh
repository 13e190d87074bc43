#!/usr/bin/env bash
# Rulings from video with a hand model, against simulated recordings' truth:
#   train/eval_rulings.sh MODEL OUT REC...      (REC: `simulate --labels` directories)
# For each recording: `analyze --no-report` with the model, then `score`; OUT/<name>/
# holds the analysis and its score.json, OUT/rulings.tsv one line per recording and a
# total. The recordings are the ones train/eval.sh names.
set -euo pipefail
model=$1; out=$2; shift 2
# The contact networks are read beside the hand model: without them touches come from
# the hand model's own contact map, and the scores are not comparable.
[ -f "$(dirname "$model")/contact.onnx" ] || echo "$model: no contact.onnx beside it;" \
  "touches come from its own contact map (copy models/contact*.onnx there)" >&2
bin=${BIN:-target/release/karuta-referee}
mkdir -p "$out"
for rec in "$@"; do
  name=$(basename "$rec")
  "$bin" analyze "$rec" --out "$out/$name" --no-report --hands-model "$model" >/dev/null
  "$bin" score --truth "$rec" --out "$out/$name" > "$out/$name/score.json"
done
python3 - "$out" "$@" > "$out/rulings.tsv" <<'PY'
import json, os, sys
out, recs = sys.argv[1], sys.argv[2:]
keys = ["readings", "rulings_right", "take_right", "close_takes", "close_takes_right",
        "false_fouls", "missed_fouls", "needs_review", "outs_true", "outs_within_one_frame"]
print("\t".join(["recording"] + keys))
total = dict.fromkeys(keys, 0)
for rec in recs:
    name = os.path.basename(rec.rstrip("/"))
    c = json.load(open(os.path.join(out, name, "score.json")))["counts"]
    print("\t".join([name] + [str(c[k]) for k in keys]))
    for k in keys:
        total[k] += c[k]
print("\t".join(["all"] + [str(total[k]) for k in keys]))
PY
column -t -s $'\t' "$out/rulings.tsv"

#!/usr/bin/env bash
# Readings from the sound track, measured: draws the recordings (320x180 at 30 fps: the
# sound does not depend on the picture), dubs each with the voices and halls asked, hears
# them with `readings` and scores them with `score-readings`, then prints one row a voice
# and hall (docs/audio.md, "Scoring and measured numbers").
#   tools/eval_readings.sh tuning    seeds 101-107, the five tuning voices (the shifted
#     copies of tools/shift_voice.sh, e.g. kokoro-jf_nezumi-x1.12, and the template voices
#     kokoro-jf_gongitsune and kokoro-jm_kumo are added through VOICES)
#   tools/eval_readings.sh held      seeds 201-205, the two voices kept out of all tuning
#   SEEDS="206 207" VOICES="espeak-held" HALLS="loud" tools/eval_readings.sh held
# Kokoro voices are read from data/voices/kokoro-NAME (tools/kokoro_kana.py makes them);
# a voice whose folder is missing is skipped with a line saying so. Everything is written
# under data/audio-eval (git-ignored); OUT=... names another folder, so that two versions
# can be heard side by side on the same dubbed sound.
set -euo pipefail
cd "$(dirname "$0")/.."
set_name=${1:?usage: tools/eval_readings.sh tuning|held}
case "$set_name" in
  tuning)
    seeds=${SEEDS:-"101 102 103 104 105 106 107"}
    voices=${VOICES:-"espeak-a espeak-b espeak-c kokoro-jf_nezumi kokoro-jf_tebukuro"} ;;
  held)
    seeds=${SEEDS:-"201 202 203 204 205"}
    voices=${VOICES:-"espeak-held kokoro-jf_alpha"} ;;
  *) echo "eval_readings: the set is tuning or held, not $set_name" >&2; exit 2 ;;
esac
halls=${HALLS:-"quiet moderate loud"}
bin=${BIN:-target/release/karuta-referee}
root=data/audio-eval
out=${OUT:-$root/heard}
mkdir -p "$root/rec" "$root/dub" "$out"
[ -x "$bin" ] || cargo build --release --quiet
for s in $seeds; do
  rec="$root/rec/$s"
  if [ ! -f "$rec/readings.jsonl" ]; then
    "$bin" simulate --seed "$s" --preset realistic --size 320x180 --fps 30 --readings 10 \
      --out "$rec" > /dev/null
  fi
done
for v in $voices; do
  arg=$v
  case "$v" in
    kokoro-*)
      arg="dir:data/voices/$v"
      [ -d "data/voices/$v" ] || { echo "eval_readings: no data/voices/$v, skipped" >&2; continue; } ;;
  esac
  for h in $halls; do
    for s in $seeds; do
      d="$root/dub/$s-$v-$h"
      if [ ! -f "$d/sound_truth.json" ]; then
        "$bin" dub "$root/rec/$s" --out "$d" --voice "$arg" --noise "$h" --seed "$s" > /dev/null
      fi
      o="$out/$s-$v-$h"
      mkdir -p "$o"
      "$bin" readings "$d" --out "$o" > /dev/null 2> "$o/stderr" || true
      "$bin" score-readings "$d" --heard "$o/readings.jsonl" > "$o/score.json" 2>> "$o/stderr" || true
    done
  done
done
python3 - "$out" "$seeds" "$voices" "$halls" <<'EOF'
import json, os, statistics, sys
out, seeds, voices, halls = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4].split()
print("voice hall spoken missed invented start<=30ms kimariji_hit onset_median_ms poem_right wrong null")
for v in voices:
    for h in halls:
        tot = dict(spoken=0, missed=0, invented=0, start=0, kim=0, right=0, wrong=0, null=0)
        onsets = []
        for s in seeds:
            p = os.path.join(out, f"{s}-{v}-{h}", "score.json")
            if not os.path.exists(p) or os.path.getsize(p) == 0:
                print(f"eval_readings: {p}: no score (see stderr beside it), left out", file=sys.stderr)
                continue
            sc = json.load(open(p))
            tot["spoken"] += sc["spoken"]; tot["missed"] += sc["missed"]; tot["invented"] += sc["invented"]
            tot["kim"] += sc["kimariji_hits"]; tot["right"] += sc["poem_right"]
            tot["wrong"] += sc["poem_wrong"]; tot["null"] += sc["poem_null"]
            tot["start"] += sc["kami_start_within_30ms"]
            onsets += sc["onset_errors_s"]
        if tot["spoken"] == 0:
            continue
        med = statistics.median(abs(e) for e in onsets) * 1000 if onsets else float("nan")
        print(v, h, tot["spoken"], tot["missed"], tot["invented"], tot["start"], tot["kim"],
              f"{med:.1f}", tot["right"], tot["wrong"], tot["null"])
EOF

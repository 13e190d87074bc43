#!/bin/sh
# A voice folder of kana clips with every frequency (pitch and formants, so the vocal
# tract's apparent length) scaled by FACTOR: a tuning voice unlike any template voice.
#   tools/shift_voice.sh data/voices/kokoro-jf_nezumi 1.12   -> data/voices/kokoro-jf_nezumi-x1.12
# Then: karuta-referee dub REC --voice dir:data/voices/kokoro-jf_nezumi-x1.12 ...
set -eu
src=${1:?voice folder}; factor=${2:?factor}
out="${src%/}-x$factor"
mkdir -p "$out"
for f in "$src"/*.wav; do
  rate=$(ffprobe -v error -select_streams a:0 -show_entries stream=sample_rate -of csv=p=0 "$f")
  ffmpeg -loglevel error -y -i "$f" -af "asetrate=$rate*$factor,aresample=$rate" -c:a pcm_s16le "$out/$(basename "$f")"
done
echo "$out: $(ls "$out" | wc -l) kana"

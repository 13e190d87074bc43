"""MediaPipe Hands (0.10.21, legacy solutions API, offline) on a simulated recording: hand
recall, fingertip error and milliseconds a frame, the baseline the hand model is set
beside (docs/hands.md). Frames scored: those with at least one hand whose wrist and three
fingertips are in view, up to --frames of them, spread over the recording.

    python3 -m venv data/venv-mp
    data/venv-mp/bin/pip install mediapipe==0.10.21 jax==0.7.1 jaxlib==0.7.1
    data/venv-mp/bin/python train/mediapipe_baseline.py RECORDING [--frames 400]
"""

import argparse
import json
import os
import time

import cv2
import mediapipe as mp
import numpy as np

TIPS = ["thumb", "index", "middle", "ring", "little"]
# MediaPipe landmark indices: wrist 0, tips 4, 8, 12, 16, 20.
MP_TIPS = [4, 8, 12, 16, 20]


def visible(h, w, hh):
    inside = lambda p: 0 <= p[0] < w and 0 <= p[1] < hh
    k = h["keypoints_px"]
    return inside(k["wrist"]) and sum(inside(k[t]) for t in TIPS) >= 3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("recording")
    ap.add_argument("--frames", type=int, default=400)
    ap.add_argument("--complexity", type=int, default=0)
    a = ap.parse_args()
    frames = [json.loads(l) for l in open(os.path.join(a.recording, "labels", "frames.jsonl"))]
    cap = cv2.VideoCapture(os.path.join(a.recording, "video.mp4"))
    w = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH))
    h = int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
    cand = [i for i, f in enumerate(frames) if any(visible(x, w, h) for x in f["hands"])]
    pick = set(cand[:: max(1, len(cand) // a.frames)][: a.frames])
    hands = mp.solutions.hands.Hands(static_image_mode=True, max_num_hands=4,
                                     model_complexity=a.complexity)
    found = total = false = 0
    errs, ms = [], []
    i = 0
    while True:
        ok, img = cap.read()
        if not ok:
            break
        if i in pick:
            rgb = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
            t0 = time.perf_counter()
            res = hands.process(rgb)
            ms.append((time.perf_counter() - t0) * 1000)
            dets = []
            for lm in res.multi_hand_landmarks or []:
                pts = np.array([[p.x * w, p.y * h] for p in lm.landmark])
                dets.append(pts)
            used = [False] * len(dets)
            for lh in frames[i]["hands"]:
                if not visible(lh, w, h):
                    continue
                total += 1
                k = lh["keypoints_px"]
                lt = np.array([k[t] for t in TIPS])
                best = None
                for j, d in enumerate(dets):
                    if used[j]:
                        continue
                    wrist_ok = np.linalg.norm(d[0] - k["wrist"]) < 40
                    tips_ok = np.median(np.linalg.norm(d[MP_TIPS] - lt, axis=1)) < 30
                    if wrist_ok or tips_ok:
                        best = j
                        break
                if best is None:
                    continue
                used[best] = True
                found += 1
                d = dets[best]
                for t in lt:
                    if 0 <= t[0] < w and 0 <= t[1] < h:
                        errs.append(np.min(np.linalg.norm(d[MP_TIPS] - t, axis=1)))
            false += used.count(False)
        i += 1
    print(json.dumps({
        "recording": a.recording, "frames": len(ms), "visible_hands": total,
        "hands_found": found, "recall": found / max(1, total), "false_hands": false,
        "tip_err_median_px": float(np.median(errs)) if errs else None,
        "tip_err_p90_px": float(np.percentile(errs, 90)) if errs else None,
        "ms_per_frame_median": float(np.median(ms)) if ms else None,
        "complexity": a.complexity,
    }))


if __name__ == "__main__":
    main()

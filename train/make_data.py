"""Training data for the hand model, made by the project's own simulator.

Runs `karuta-referee simulate --labels` for the training seeds (1000-1999 only: the
evaluation seeds are never drawn here), then takes frames from each video with their
hand labels, scaled to the model's input (the frame resized to 320 px wide and padded
to 184 rows). Writes `DATA/frames.npy` (uint8 N x 184 x 320 x 3, BGR) and
`DATA/labels.pkl` (one list of hands per frame).

    python train/make_data.py --bin target/release/karuta-referee --data data/hands
"""

import argparse
import json
import os
import pickle
import subprocess
import sys

import cv2
import numpy as np

IN_W, IN_H = 320, 184
KEYS = ["wrist", "thumb", "index", "middle", "ring", "little"]

# (seed, preset, size, fps, readings): 640x360 at 60 fps, drawn quickly; the network
# sees frames reduced to 320 px wide whatever the recording's size. Seeds 1000-1999.
RECORDINGS = [(1000 + i, p, "640x360", 60, 6) for i, p in
              enumerate(["clean", "realistic", "hard"] * 4, start=1)]


def simulate(binary, out, seed, preset, size, fps, readings):
    if os.path.exists(os.path.join(out, "labels", "frames.jsonl")) and os.path.exists(
        os.path.join(out, "DONE")
    ):
        return
    cmd = [binary, "simulate", "--seed", str(seed), "--preset", preset, "--size", size,
           "--fps", str(fps), "--readings", str(readings), "--labels", "--out", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    open(os.path.join(out, "DONE"), "w").close()


def chosen_frames(frames, step):
    """Every `step`-th frame, plus every frame near a change of contact or of `inside`."""
    keep = set(range(0, len(frames), step))
    prev = None
    for i, f in enumerate(frames):
        state = tuple(sorted((h["player"], h["hand"], bool(h["touching"]) or h["height_mm"] <= 0.5,
                              h["inside"]) for h in f["hands"]))
        if prev is not None and state != prev:
            keep.update(range(max(0, i - 2), min(len(frames), i + 3)))
        prev = state
    return sorted(k for k in keep if frames[k]["hands"])


def extract(rec, step):
    with open(os.path.join(rec, "labels", "frames.jsonl")) as fh:
        frames = [json.loads(l) for l in fh]
    keep = chosen_frames(frames, step)
    cap = cv2.VideoCapture(os.path.join(rec, "video.mp4"))
    images, labels = [], []
    want = iter(keep)
    nxt = next(want, None)
    i = 0
    while nxt is not None:
        ok, img = cap.read()
        if not ok:
            break
        if i == nxt:
            h, w = img.shape[:2]
            s = IN_W / w
            small = cv2.resize(img, (IN_W, int(round(h * s))), interpolation=cv2.INTER_AREA)
            pad = np.zeros((IN_H, IN_W, 3), np.uint8)
            pad[: min(IN_H, small.shape[0])] = small[:IN_H]
            images.append(pad)
            hands = []
            for hl in frames[i]["hands"]:
                hands.append({
                    "player": hl["player"],
                    "hand": hl["hand"],
                    "outline": np.array(hl["outline_px"], np.float32) * s,
                    "kp": np.array([hl["keypoints_px"][k] for k in KEYS], np.float32) * s,
                    "height_mm": hl["height_mm"],
                    "touching": hl["touching"],
                })
            labels.append(hands)
            nxt = next(want, None)
        i += 1
    return images, labels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/karuta-referee")
    ap.add_argument("--data", default="data/hands")
    ap.add_argument("--step", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.data, exist_ok=True)
    all_img, all_lab = [], []
    for seed, preset, size, fps, readings in RECORDINGS:
        assert 1000 <= seed <= 1999
        rec = os.path.join(a.data, "rec", f"{preset}-{seed}-{size}-{fps}")
        simulate(a.bin, rec, seed, preset, size, fps, readings)
        step = max(1, a.step * fps // 60)
        img, lab = extract(rec, step)
        print(f"{rec}: {len(img)} frames", file=sys.stderr)
        all_img += img
        all_lab += lab
    np.save(os.path.join(a.data, "frames.npy"), np.stack(all_img))
    with open(os.path.join(a.data, "labels.pkl"), "wb") as fh:
        pickle.dump(all_lab, fh)
    print(f"{len(all_img)} frames", file=sys.stderr)


if __name__ == "__main__":
    main()

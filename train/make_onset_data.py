"""Training data for the onset network: the moment a fingertip coming down meets the card.

The contact networks tell that a fingertip presses, from one frame beside the frame 25 ms
before; their probability passes 0.5 while the finger is still coming down, or while it
is held over the card before it does. The onset network sees a short run of frames
around the fingertip (the frame and the frames 1, 2, 4 and 6 before it: 25 ms at 240 fps)
and the plate, and answers whether the finger has reached the card by the latest of
them: a finger coming down moves (its shadow closes in, and it shrinks a little in the
view as it leaves the camera) and stops when it lands.

For every direct touch of the simulator's truth in 240 fps recordings, this writes the
squares of `SIDE_PX` pixels at `MM_PER_PX` (as make_contact_data.py) around the touching
hand's middle fingertip at the touch, over the frames from `BACK_FRAMES` before the
touch to `AHEAD_FRAMES` after, and the plate (the latest frame with no hand over the
playing area):

    python train/make_onset_data.py --data data/onset

Recordings: the 240 fps ones of the contact set (`--contact DIR`, default data/contact)
and those drawn here (`--bin`, seeds 1060-1067, 1280x720, 240 fps, 8 readings). With
`--close`, also the close takes (seeds 1070-1075, 6 readings each, `simulate
--close-takes`: every reading a card both players touch 0-20 ms apart, as in the
simulator's near ties, the card launched after the later touch), so that the network
sees a rival's finger land in its square as it does in a close take; the committed
network was trained without them (tried and not kept: docs/hands.md). Seeds 1000-1999
only. Writes `DATA/onset.npz`: `crops` (uint8 N x F x 72 x 72 x 3, BGR),
`masks` (N x F x 72 x 72, the touching hand's labelled outline filled: 255 inside),
`plates` (N x 72 x 72 x 3), `times` (N x F, s), `heights` (N x F, the middle
fingertip's height, mm), `touch` (N, the touch's time, s), `seed`, `preset` and
`player` (N; 0 for player A, 1 for B).
"""

import argparse
import bisect
import glob
import json
import os
import subprocess

import cv2
import numpy as np

from make_contact_data import MM_PER_PX, PRESETS, SIDE_PX, cut, halved, px_per_mm

BACK_FRAMES = 30
AHEAD_FRAMES = 16
WINDOW = BACK_FRAMES + AHEAD_FRAMES + 1
# (seed, preset): drawn at 1280x720, 240 fps, 8 readings.
DRAWN = [(1060 + i, p) for i, p in enumerate(["clean", "realistic", "hard", "clean",
                                                "realistic", "hard", "clean", "realistic"])]
# (seed, preset): drawn at 1280x720, 240 fps, 6 readings, every reading a close take.
CLOSE = [(1070 + i, p) for i, p in enumerate(["realistic", "hard", "clean"] * 2)]


def hand_square(frame, who, shrink, cx, cy, k, side=SIDE_PX):
    """The labelled outline of hand `who` in `frame`, filled, in the square `cut` makes
    around (cx, cy): 255 inside, 0 outside (all 0 when the hand is not in the frame)."""
    m = np.zeros((side, side), np.uint8)
    h = next((h for h in frame["hands"] if (h["player"], h["hand"]) == who), None)
    if h is not None and h.get("outline_px"):
        p = (np.array(h["outline_px"]) * shrink - [cx, cy]) / k + side / 2
        cv2.fillPoly(m, [np.round(p * 16).astype(np.int32)], 255, lineType=cv2.LINE_AA, shift=4)
    return m


def frames_with_plate(rec, frames):
    """Each frame of the recording's video with its labels (`frames`): the index, the
    labels, the image (halved when wide), its scale, and the plate (the latest image with
    no hand over the playing area)."""
    cap = cv2.VideoCapture(os.path.join(rec, "video.mp4"))
    plate = None
    for i, f in enumerate(frames):
        ok, img = cap.read()
        if not ok:
            break
        img, shrink = halved(img)
        if plate is None or not any(h["inside"] for h in f["hands"]):
            plate = img
        yield i, f, img, shrink, plate


def extract(rec):
    """The windows of squares around each direct touch of one recording."""
    with open(os.path.join(rec, "labels", "frames.jsonl")) as fh:
        frames = [json.loads(l) for l in fh]
    with open(os.path.join(rec, "truth.jsonl")) as fh:
        truth = [json.loads(l) for l in fh]
    ts = [f["t_s"] for f in frames]
    jobs = []
    for t in truth:
        if t["kind"] != "touch" or not t.get("direct", True):
            continue
        j = min(bisect.bisect_left(ts, t["t_s"]), len(frames) - 1)
        if j < BACK_FRAMES or j + AHEAD_FRAMES >= len(frames):
            continue
        h = next((h for h in frames[j]["hands"] if h["player"] == t["player"] and h["hand"] == t["hand"]), None)
        if h is None:
            continue
        s = px_per_mm(h)
        if s is None:
            continue
        jobs.append({"first": j - BACK_FRAMES, "t": t["t_s"], "mid": h["keypoints_px"]["middle"], "s": s,
                     "who": (t["player"], t["hand"]), "crops": [], "masks": [], "times": [], "z": [],
                     "plate": None})
    by_frame = {}
    for k, job in enumerate(jobs):
        for f in range(job["first"], job["first"] + WINDOW):
            by_frame.setdefault(f, []).append(k)
    for i, f, img, shrink, plate in frames_with_plate(rec, frames):
        for k in by_frame.get(i, []):
            job = jobs[k]
            cx, cy = job["mid"][0] * shrink, job["mid"][1] * shrink
            kk = job["s"] * shrink * MM_PER_PX
            if job["plate"] is None:
                job["plate"] = cut(plate, cx, cy, kk)
            job["crops"].append(cut(img, cx, cy, kk))
            job["masks"].append(hand_square(f, job["who"], shrink, cx, cy, kk))
            job["times"].append(f["t_s"])
            hz = next((h["keypoints_mm"]["middle"][2] for h in f["hands"] if (h["player"], h["hand"]) == job["who"]), 99.0)
            job["z"].append(hz)
    return [j for j in jobs if len(j["crops"]) == WINDOW]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--contact", default="data/contact")
    ap.add_argument("--bin", default="target/release/karuta-referee")
    ap.add_argument("--no-draw", action="store_true", help="use only the recordings already drawn")
    ap.add_argument("--close", action="store_true", help="add the close-take recordings")
    args = ap.parse_args()
    os.makedirs(os.path.join(args.data, "rec"), exist_ok=True)
    os.makedirs(os.path.join(args.data, "parts"), exist_ok=True)
    # Only recordings drawn whole (the simulator's `DONE` beside them).
    recs = sorted(r for r in glob.glob(os.path.join(args.contact, "rec", "*-240"))
                  if os.path.exists(os.path.join(r, "DONE")))
    drawn = [(seed, preset, "rec", ["--readings", "8"]) for seed, preset in DRAWN]
    if args.close:
        drawn += [(seed, preset, "close", ["--readings", "6", "--close-takes"]) for seed, preset in CLOSE]
    for seed, preset, folder, extra in drawn:
        os.makedirs(os.path.join(args.data, folder), exist_ok=True)
        out = os.path.join(args.data, folder, f"{preset}-{seed}-1280x720-240")
        if not os.path.exists(os.path.join(out, "DONE")):
            if args.no_draw:
                continue
            subprocess.run([args.bin, "simulate", "--seed", str(seed), "--preset", preset, "--size", "1280x720",
                            "--fps", "240", "--labels", "--out", out] + extra,
                           check=True, stdout=subprocess.DEVNULL)
            open(os.path.join(out, "DONE"), "w").close()
        recs.append(out)
    crops, masks, plates, times, heights, touch, seeds, presets, players = [], [], [], [], [], [], [], [], []
    for rec in recs:
        name = os.path.basename(rec)
        preset, seed = name.split("-")[0], int(name.split("-")[1])
        assert 1000 <= seed <= 1999
        part = os.path.join(args.data, "parts", name + ".npz")
        if not os.path.exists(part):
            jobs = extract(rec)
            np.savez(part, crops=np.array([np.stack(j["crops"]) for j in jobs], dtype=np.uint8).reshape(-1, WINDOW, SIDE_PX, SIDE_PX, 3),
                     plates=np.array([j["plate"] for j in jobs], dtype=np.uint8).reshape(-1, SIDE_PX, SIDE_PX, 3),
                     times=np.array([j["times"] for j in jobs]).reshape(-1, WINDOW),
                     heights=np.array([j["z"] for j in jobs], dtype=np.float32).reshape(-1, WINDOW),
                     masks=np.array([np.stack(j["masks"]) for j in jobs], dtype=np.uint8).reshape(-1, WINDOW, SIDE_PX, SIDE_PX),
                     touch=np.array([j["t"] for j in jobs]),
                     player=np.array([0 if j["who"][0] == "A" else 1 for j in jobs], dtype=np.int8))
        p = np.load(part)
        print(f"{name}: {len(p['touch'])} touches", flush=True)
        crops.append(p["crops"])
        masks.append(p["masks"])
        plates.append(p["plates"])
        times.append(p["times"])
        heights.append(p["heights"])
        touch.append(p["touch"])
        seeds.append(np.full(len(p["touch"]), seed))
        presets.append(np.full(len(p["touch"]), PRESETS.index(preset)))
        players.append(p["player"])
    np.savez(os.path.join(args.data, "onset.npz"), crops=np.concatenate(crops), masks=np.concatenate(masks),
             plates=np.concatenate(plates),
             times=np.concatenate(times), heights=np.concatenate(heights), touch=np.concatenate(touch),
             seed=np.concatenate(seeds), preset=np.concatenate(presets), player=np.concatenate(players))
    n = sum(len(t) for t in touch)
    print(f"{n} touches, {n * WINDOW} frames", flush=True)


if __name__ == "__main__":
    main()

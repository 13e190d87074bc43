"""Training data for the hand model, made by the project's own simulator.

Runs `karuta-referee simulate --labels` for the training seeds (1000-1999 only: the
evaluation seeds are never drawn here), then takes frames from each video with their
hand labels, scaled to the model's input (the frame resized to 320 px wide and padded
to 184 rows). Writes `DATA/frames.npy` (uint8 N x 184 x 320 x 3, BGR) and
`DATA/labels.pkl` (one list of hands per frame).

    python train/make_data.py --bin target/release/karuta-referee --data data/hands
    python train/make_data.py --set dense --step 6 --data data/hands-dense
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

# (seed, preset, size, fps, readings). Seeds 1000-1999 only.
SETS = {
    # 640x360 at 60 fps, drawn quickly; the network sees frames reduced to 320 px wide
    # whatever the recording's size.
    "base": [(1000 + i, p, "640x360", 60, 6) for i, p in
             enumerate(["clean", "realistic", "hard"] * 4, start=1)],
    # Mostly 1280x720 at 120 fps: a frame reduced 4x (not 2x), as the network meets a
    # match at its own resolution, and 5 frames of every 40 ms press where 60 fps had 2;
    # and 640x360 at 240 fps. Every frame with a hand low over the field is kept.
    "dense": [(1030 + i, p, "1280x720", 120, 6) for i, p in
              enumerate(["clean", "realistic", "hard"] * 4, start=1)]
    + [(1042 + i, p, "640x360", 240, 6) for i, p in
       enumerate(["clean", "realistic", "hard", "realistic"], start=1)],
    # More matches drawn as the dense set is (other layouts, hands, motions and
    # light), for the continued fine-tuning: 1280x720 at 120 fps (the seeds the
    # contact networks' recordings drew at 240 fps, train/run_contact.sh).
    "dense2": [(1050 + i, p, "1280x720", 120, 6) for i, p in
               enumerate(["clean", "realistic", "hard"] * 2, start=1)],
}
# A hand's middle fingertip this low over the playing area is descending onto a card,
# pressing it or hovering above it: the frames that teach contact. Every one is kept.
LOW_OVER_FIELD_MM = 80.0


def simulate(binary, out, seed, preset, size, fps, readings):
    if os.path.exists(os.path.join(out, "labels", "frames.jsonl")) and os.path.exists(
        os.path.join(out, "DONE")
    ):
        return
    cmd = [binary, "simulate", "--seed", str(seed), "--preset", preset, "--size", size,
           "--fps", str(fps), "--readings", str(readings), "--labels", "--out", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    open(os.path.join(out, "DONE"), "w").close()


def chosen_frames(frames, step, low_over_field):
    """Every `step`-th frame, plus every frame near a change of contact or of `inside`,
    plus (with `low_over_field`) every frame with a hand low over the playing area."""
    keep = set(range(0, len(frames), step))
    prev = None
    for i, f in enumerate(frames):
        if low_over_field and any(h["inside"] and h["height_mm"] <= LOW_OVER_FIELD_MM
                                  for h in f["hands"]):
            keep.add(i)
        state = tuple(sorted((h["player"], h["hand"], bool(h["touching"]) or h["height_mm"] <= 0.5,
                              h["inside"]) for h in f["hands"]))
        if prev is not None and state != prev:
            keep.update(range(max(0, i - 2), min(len(frames), i + 3)))
        prev = state
    return sorted(k for k in keep if frames[k]["hands"])


def extract(rec, step, low_over_field):
    with open(os.path.join(rec, "labels", "frames.jsonl")) as fh:
        frames = [json.loads(l) for l in fh]
    keep = chosen_frames(frames, step, low_over_field)
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
                    "inside": hl["inside"],
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
    ap.add_argument("--set", choices=sorted(SETS), default="base",
                    help="which recordings: base (640x360, 60 fps) or dense (mostly 1280x720, "
                    "120 fps, every frame with a hand low over the field kept)")
    a = ap.parse_args()
    os.makedirs(a.data, exist_ok=True)
    all_img, all_lab = [], []
    for seed, preset, size, fps, readings in SETS[a.set]:
        assert 1000 <= seed <= 1999
        rec = os.path.join(a.data, "rec", f"{preset}-{seed}-{size}-{fps}")
        simulate(a.bin, rec, seed, preset, size, fps, readings)
        step = max(1, a.step * fps // 60)
        img, lab = extract(rec, step, a.set.startswith("dense"))
        print(f"{rec}: {len(img)} frames", file=sys.stderr)
        all_img += img
        all_lab += lab
    np.save(os.path.join(a.data, "frames.npy"), np.stack(all_img))
    with open(os.path.join(a.data, "labels.pkl"), "wb") as fh:
        pickle.dump(all_lab, fh)
    print(f"{len(all_img)} frames", file=sys.stderr)


if __name__ == "__main__":
    main()

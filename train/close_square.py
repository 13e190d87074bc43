"""Where the onset network's square is centred in a close take, and what it does to the gap
between the two touches' times (`hands::perceive::timing::square_centre`).

In a close take both players' fingers come down on one card, 24-41 mm apart, each from
its own side of the field. For each close take of the recordings made by
`train/make_onset_data.py --close` (seeds 1070-1075, which the committed onset network
never saw), this cuts the frames around each touch, as make_onset_data.py does, and runs
the onset network (ONNX, onnxruntime) with its square centred:

- on the touch's own labelled fingertip ("own");
- on the rival's, as when both touches are found pressing on one finger ("rival");
- each of those moved `--shift` mm towards the player's own side of the field.

It prints, for each pairing of A's and B's squares, the two touches in the right order
(exact ties left out), the measured gap's error against the true one and the slope of
measured against true gap:

    python train/close_square.py --data data/onset --model models/contact-onset.onnx --shift 26
"""

import argparse
import bisect
import glob
import json
import os

import numpy as np
import onnxruntime

from make_contact_data import MM_PER_PX, SIDE_PX, cut, px_per_mm
from make_onset_data import AHEAD_FRAMES, BACK_FRAMES, WINDOW, frames_with_plate
from train_onset import BACK, onset_time, planes

# The two touches of a close take are at most this far apart, s.
CLOSE_S = 0.021


def field_y_px(hand):
    """The image direction (unit, frame pixels) of the field's +y (towards player B) at a
    labelled hand: the affine map from its keypoints' field mm to their pixels."""
    names = [k for k in hand["keypoints_mm"] if k in hand["keypoints_px"]]
    mm = np.array([hand["keypoints_mm"][k][:2] + [1.0] for k in names])
    px = np.array([hand["keypoints_px"][k] for k in names])
    a, *_ = np.linalg.lstsq(mm, px, rcond=None)
    d = a[1]
    return d / np.linalg.norm(d)


def windows(rec):
    """The frames around each direct touch that has a rival's touch of the same poem
    within `CLOSE_S`: crops of `SIDE_PX` at `MM_PER_PX` around the touch's middle
    fingertip, the plate, the times, and the rival's fingertip in the crop's pixels."""
    with open(os.path.join(rec, "labels", "frames.jsonl")) as fh:
        frames = [json.loads(l) for l in fh]
    with open(os.path.join(rec, "truth.jsonl")) as fh:
        touches = [t for t in map(json.loads, fh) if t["kind"] == "touch" and t.get("direct", True)]
    ts = [f["t_s"] for f in frames]

    def tip(t):
        j = min(bisect.bisect_left(ts, t["t_s"]), len(frames) - 1)
        h = next((h for h in frames[j]["hands"] if h["player"] == t["player"] and h["hand"] == t["hand"]), None)
        return j, h

    jobs = []
    for t in touches:
        r = next((r for r in touches if r["player"] != t["player"] and r.get("poem") == t.get("poem")
                  and abs(r["t_s"] - t["t_s"]) <= CLOSE_S), None)
        if r is None:
            continue
        j, h = tip(t)
        _, hr = tip(r)
        if h is None or hr is None or j < BACK_FRAMES or j + AHEAD_FRAMES >= len(frames) or px_per_mm(h) is None:
            continue
        jobs.append({"first": j - BACK_FRAMES, "t": t["t_s"], "player": t["player"], "rival_t": r["t_s"],
                     "mid": np.array(h["keypoints_px"]["middle"]), "rival_mid": np.array(hr["keypoints_px"]["middle"]),
                     "y_px": field_y_px(h), "s": px_per_mm(h), "crops": [], "times": [], "plate": None})
    for i, f, img, shrink, plate in frames_with_plate(rec, frames):
        for job in jobs:
            if job["first"] <= i < job["first"] + WINDOW:
                c = job["mid"] * shrink
                k = job["s"] * shrink * MM_PER_PX
                if job["plate"] is None:
                    job["plate"] = cut(plate, c[0], c[1], k)
                job["crops"].append(cut(img, c[0], c[1], k))
                job["times"].append(f["t_s"])
                job["k"] = k / shrink
    return [j for j in jobs if len(j["crops"]) == WINDOW]


def landed_time(sess, job, centre):
    """The onset network's time for the touch with its square centred at `centre` (crop
    pixels), or None."""
    name = sess.get_inputs()[0].name
    crops = np.stack(job["crops"])
    ps = [sess.run(None, {name: planes(crops, job["plate"], i, None, False, centre=centre)[None]})[0][0, 0]
          for i in range(max(BACK), WINDOW)]
    p = 1.0 / (1.0 + np.exp(-np.array(ps)))
    return onset_time(p, np.array(job["times"][max(BACK):]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/onset")
    ap.add_argument("--model", default="models/contact-onset.onnx")
    ap.add_argument("--shift", type=float, default=26.0, help="mm towards the player's own side")
    args = ap.parse_args()
    sess = onnxruntime.InferenceSession(args.model, providers=["CPUExecutionProvider"])
    found = []
    for rec in sorted(glob.glob(os.path.join(args.data, "close", "*"))):
        for job in windows(rec):
            centre = np.array([SIDE_PX / 2, SIDE_PX / 2])
            rival = centre + (job["rival_mid"] - job["mid"]) / job["k"]
            # Towards its own side: -y for A, +y for B; `shift` mm is shift / MM_PER_PX crop px.
            own_way = job["y_px"] * (-1.0 if job["player"] == "A" else 1.0) * args.shift / MM_PER_PX
            at = {"own": centre, "rival": rival, "own, moved": centre + own_way, "rival, moved": rival + own_way}
            found.append((os.path.basename(rec), job, {k: landed_time(sess, job, c) for k, c in at.items()}))
        print(f"{os.path.basename(rec)}: {len(found)} touches of close takes so far", flush=True)
    pairs = [(a, b) for a in found for b in found
             if a[0] == b[0] and a[1]["player"] == "A" and b[1]["player"] == "B" and b[1]["t"] == a[1]["rival_t"]]
    for ka, kb in [("own", "own"), ("rival", "own"), ("own", "rival"),
                   ("own, moved", "own, moved"), ("rival, moved", "own, moved"), ("own, moved", "rival, moved")]:
        g = [((b[1]["t"] - a[1]["t"]) * 1e3, (b[2][kb] - a[2][ka]) * 1e3) for a, b in pairs
             if a[2][ka] is not None and b[2][kb] is not None]
        if len(g) < 2:
            continue
        true, meas = np.array(g).T
        err = np.abs(meas - true)
        order = [(t, m) for t, m in g if abs(t) > 0.1]
        print(f"A {ka:13} B {kb:13}: {len(g)} of {len(pairs)} takes timed, order right {sum(t * m > 0 for t, m in order)} "
              f"of {len(order)}; gap error median {np.median(err):.1f} ms, p90 {np.percentile(err, 90):.1f}, "
              f"largest {err.max():.1f}; slope {np.polyfit(true, meas, 1)[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()

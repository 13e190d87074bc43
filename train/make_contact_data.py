"""Training data for the contact model, made by the project's own simulator.

The contact model answers one question about one fingertip the hand model found: is the
hand's fingertip down at table height (pressing), or held above it? Seen from above the
cue is the hand's shadow: a fingertip held 25-70 mm above the tatami has its shadow
beside it, a pressing one meets its shadow. The model sees a square of the frame around
the fingertip measured in millimetres of the field (the layout's own scale), so the
same model serves any resolution.

For every labelled hand over or near the playing area, this writes a crop of
`SIDE_MM` millimetres around its middle fingertip at `MM_PER_PX` (the training script
turns, scales and shifts it and cuts the model's input from the centre), the offsets of
its index and ring fingertips inside the crop (a found fingertip may be either), the
middle fingertip's height and whether it touches a card.

    python train/make_contact_data.py --bin target/release/karuta-referee --data data/contact

Seeds 1000-1999 only (the evaluation seeds are never drawn here). Writes
`DATA/crops.npy` (uint8 N x 72 x 72 x 3, BGR), `DATA/prevs.npy` (the same square of the
frame `PREV_S` before: a fingertip coming down meets its shadow while the hand stays
where it is; one hovering keeps its shadow where it was), `DATA/plates.npy` (the same
square of the latest frame with no hand over the playing area: the field as it lies,
shadows and all, before the hand came) and `DATA/meta.npy` (float32 N x 8:
height mm, touching, index dx, dy, ring dx, dy (crop px), preset, seed, centred on a
fingertip the hand network found). With `--found DIR` (the `perceive` output of the
recordings, `DIR/<name>/hands.jsonl`) it adds crops centred on the fingertips the hand
network found, as the contact network meets them at run time.
"""

import argparse
import json
import math
import os
import subprocess

import cv2
import numpy as np

MM_PER_PX = 2.0
SIDE_PX = 72
# With --context, also a square of the whole hand and its shadow: CTX_SIDE_PX pixels of
# CTX_MM_PER_PX millimetres (256 mm) around the same point.
CTX_SIDE_PX = 64
CTX_MM_PER_PX = 4.0
# The earlier frame beside each crop, s (6 frames at 240 fps, 3 at 120).
PREV_S = 0.025
SIDE_MM = SIDE_PX * MM_PER_PX
PRESETS = ["clean", "realistic", "hard"]

# (seed, preset, size, fps, readings).
# 120 fps and faster, so the frame `PREV_S` before is a whole number of frames.
RECORDINGS = [(1031 + i, p, "1280x720", 120, 6) for i, p in enumerate(PRESETS * 4)] + \
             [(1043 + i, p, "640x360", 240, 6) for i, p in enumerate(["clean", "realistic", "hard", "realistic"])] + \
             [(1051 + i, p, "1280x720", 240, 6) for i, p in enumerate(PRESETS * 3)]
# Frames wider than this are halved (area average) before crops are cut, as
# `hands::contact::CropSource` does.
HALVE_ABOVE_W = 960


def simulate(binary, out, seed, preset, size, fps, readings):
    if os.path.exists(os.path.join(out, "DONE")):
        return
    cmd = [binary, "simulate", "--seed", str(seed), "--preset", preset, "--size", size,
           "--fps", str(fps), "--readings", str(readings), "--labels", "--out", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    open(os.path.join(out, "DONE"), "w").close()


def px_per_mm(h):
    """The image scale at the hand, from its outline in pixels and on the tatami."""
    a, b = h["outline_px"], h["outline_mm"]
    best = 0.0, 1.0
    for i in range(len(a)):
        for j in range(i + 1, len(a)):
            d = math.dist(b[i], b[j])
            if d > best[1]:
                best = math.dist(a[i], a[j]), d
    return best[0] / best[1] if best[1] > 1.0 else None


def wanted(h, fps, frame, rng):
    """Which hand-frames to keep: every one near table height, hovering ones often,
    higher ones now and then, all over or near the playing area."""
    mid = h["keypoints_mm"]["middle"]
    if abs(mid[0]) > 520 or abs(mid[1]) > 330:
        return False
    z = mid[2]
    step = max(1, fps // 30)
    if h["touching"] or (z <= 2.0 and h["inside"]):
        return True
    if frame % step:
        return False
    if z <= 2.0:
        return rng.random() < 0.15
    if z <= 90.0:
        return rng.random() < 0.6
    return rng.random() < 0.12


# A found fingertip this close to the true middle one stands for it (mm).
FOUND_NEAR_MM = 15.0


def found_tips(found, frames):
    """Fingertips the hand network found (`perceive`'s hands.jsonl), per frame: for each
    found hand, the labelled hand it is (the one with a fingertip nearest its tips) and
    its tips in pixels."""
    out = {}
    if found is None or not os.path.exists(found):
        return out
    with open(found) as fh:
        for line in fh:
            f = json.loads(line)
            lab = frames[f["frame"]]["hands"] if f["frame"] < len(frames) else []
            for h in f["hands"]:
                tips = h.get("fingertips_px") or []
                if not tips or not lab:
                    continue
                def gap(l):
                    return min(math.dist(t, l["keypoints_px"][k]) for t in tips
                               for k in ("index", "middle", "ring"))
                best = min(lab, key=gap)
                out.setdefault(f["frame"], []).append((best, tips))
    return out


def halved(img):
    """The frame the crops are cut from, halved (area average) when wider than
    `HALVE_ABOVE_W`, as `hands::contact::CropSource` does; and its scale from the frame."""
    if img.shape[1] > HALVE_ABOVE_W:
        return cv2.resize(img, (img.shape[1] // 2, img.shape[0] // 2), interpolation=cv2.INTER_AREA), 0.5
    return img, 1.0


def cut(img, cx, cy, k, side=SIDE_PX):
    """The square of `side` crop pixels around (cx, cy), k frame pixels a crop pixel."""
    m = np.array([[1 / k, 0, side / 2 - cx / k], [0, 1 / k, side / 2 - cy / k]])
    return cv2.warpAffine(img, m, (side, side), flags=cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_REPLICATE)


def extract(rec, seed, preset, fps, rng, found=None, context=False):
    with open(os.path.join(rec, "labels", "frames.jsonl")) as fh:
        frames = [json.loads(l) for l in fh]
    tips_found = found_tips(found, frames)
    back = max(1, round(PREV_S * fps))
    cap = cv2.VideoCapture(os.path.join(rec, "video.mp4"))
    crops, prevs, plates, meta = [], [], [], []
    ctx = {"ctx_crops": [], "ctx_prevs": [], "ctx_plates": []}
    plate = None
    ring = []
    for f in frames:
        ok, img = cap.read()
        if not ok:
            break
        img, shrink = halved(img)
        ring.append(img)
        if len(ring) > back + 1:
            ring.pop(0)
        prev = ring[0]
        if plate is None or not any(h["inside"] for h in f["hands"]):
            plate = img

        def add(cx, cy, k, row):
            crops.append(cut(img, cx, cy, k))
            prevs.append(cut(prev, cx, cy, k))
            plates.append(cut(plate, cx, cy, k))
            meta.append(row)
            if context:
                kc = k * CTX_MM_PER_PX / MM_PER_PX
                for key, im in (("ctx_crops", img), ("ctx_prevs", prev), ("ctx_plates", plate)):
                    ctx[key].append(cut(im, cx, cy, kc, CTX_SIDE_PX))

        # Crops centred on the fingertips the hand network found (flag 1 in meta[8]).
        for h, tips in tips_found.get(f["frame"], []):
            if not h["inside"]:
                continue
            s = px_per_mm(h)
            if s is None:
                continue
            z = h["keypoints_mm"]["middle"][2]
            mid = h["keypoints_px"]["middle"]
            pressing = z <= 0.5 and bool(h["touching"])
            if not pressing and z < 5.0:
                continue
            for t in tips:
                d_mm = math.dist(t, mid) / s
                if pressing and d_mm > FOUND_NEAR_MM:
                    continue
                add(t[0] * shrink, t[1] * shrink, s * shrink * MM_PER_PX,
                    [z, 1.0 if h["touching"] else 0.0, 0, 0, 0, 0, PRESETS.index(preset), seed, 1.0])
        for h in f["hands"]:
            if not wanted(h, fps, f["frame"], rng):
                continue
            s = px_per_mm(h)
            if s is None:
                continue
            s *= shrink
            kp = {k: [v[0] * shrink, v[1] * shrink] for k, v in h["keypoints_px"].items()}
            cx, cy = kp["middle"]
            k = s * MM_PER_PX  # frame px per crop px
            off = []
            for name in ("index", "ring"):
                x, y = kp[name]
                off += [(x - cx) / k, (y - cy) / k]
            touching = 1.0 if h["touching"] else 0.0
            add(cx, cy, k, [h["keypoints_mm"]["middle"][2], touching] + off +
                [PRESETS.index(preset), seed, 0.0])
    return crops, prevs, plates, meta, ctx


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--found", help="folder of `perceive` outputs named like the recordings "
                    "(DIR/<name>/hands.jsonl): crops centred on the fingertips found there too")
    ap.add_argument("--context", action="store_true",
                    help="also a square of the whole hand and its shadow (CTX_MM_PER_PX)")
    args = ap.parse_args()
    os.makedirs(os.path.join(args.data, "rec"), exist_ok=True)
    os.makedirs(os.path.join(args.data, "parts"), exist_ok=True)
    parts = []
    for seed, preset, size, fps, readings in RECORDINGS:
        name = f"{preset}-{seed}-{size}-{fps}"
        out = os.path.join(args.data, "rec", name)
        part = os.path.join(args.data, "parts", name + ".npz")
        parts.append(part)
        if os.path.exists(part):
            continue
        simulate(args.bin, out, seed, preset, size, fps, readings)
        found = os.path.join(args.found, name, "hands.jsonl") if args.found else None
        # Each recording's own generator: a part made again is the same part.
        rng = np.random.default_rng([20261125, seed])
        c, pv, pl, m, ctx = extract(out, seed, preset, fps, rng, found, args.context)
        extra = {k: np.stack(v).astype(np.uint8) for k, v in ctx.items() if v}
        np.savez(part, **extra, crops=np.stack(c).astype(np.uint8), prevs=np.stack(pv).astype(np.uint8),
                 plates=np.stack(pl).astype(np.uint8), meta=np.array(m, dtype=np.float32))
        pos = sum(1 for x in m if x[1] > 0)
        print(f"{out}: {len(c)} crops, {pos} touching", flush=True)
    keys = ["crops", "prevs", "plates", "meta"]
    if args.context:
        keys += ["ctx_crops", "ctx_prevs", "ctx_plates"]
    for key in keys:
        arr = np.concatenate([np.load(p)[key] for p in parts])
        np.save(os.path.join(args.data, key + ".npy"), arr)


if __name__ == "__main__":
    main()

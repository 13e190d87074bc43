"""Trains the onset network (models/contact-onset.onnx) on the windows made by
train/make_onset_data.py.

Input: 1 x 18 x 48 x 48, RGB in [-0.5, 0.5], a square of 96 mm of the field (2 mm a
pixel) centred where a touch found presses, axis-aligned in the image: channels 0-2 the
frame, then the frames 1, 2, 4 and 6 before it (4.2 to 25 ms at 240 fps), then the plate.
Output: 1 x 1 logit, the finger has reached the card by the frame. Run over the frames
around a touch the contact networks found, its crossing of 0.5 times the touch.

    python train/train_onset.py --data data/onset --out models/contact-onset.onnx --steps 6000

In a close take the rival's finger often lands inside the same square, 10-45 mm from
the touch and a few milliseconds before it. With `--rival-share S`, that share of the
training windows carry a second hand, so that the network learns to time the finger at
the square's centre and not the rival's: the hand of another touch by the other player
(its labelled outline and the shadow beside it), moved so its touch lands `RIVAL_MM`
from the centre and `RIVAL_FRAMES_*` frames before or after, above or below the
centre's hand. The label stays the centre's touch. The committed model was trained
without (S = 0, the default); 0.4 was tried and not kept (docs/hands.md, "Tried and not
kept: an onset network trained with a rival's hand").

Seeds 1045 (hard, 640x360) and 1059 (hard, 1280x720), kept out of training, give the
validation numbers printed at the end: per touch, where the longest run of its frames at
0.5 or more begins, against the truth; alone, and with a rival's hand landing 25 mm away
12.5 ms before it. Where the data holds the close takes (make_onset_data.py --close),
seed 1074 (hard, every reading a close take), also kept out, gives the same for the
touches of close takes, and the gap the two touches' times give each take against the
true one. `--validate-only MODEL` prints the validation numbers of a trained network
(ONNX, run by onnxruntime) on this data.
"""

import argparse
import os
import random

import cv2
import numpy as np
import torch
import torch.nn.functional as F

from make_onset_data import CLOSE
from train_contact import ContactNet, colour, degrade, export, fit

IN_PX = 48
# Frames before the latest, in the input's order after it; then the plate.
BACK = [1, 2, 4, 6]
CHANNELS = 3 * (len(BACK) + 2)
SEED = 20261128
VAL_SEEDS = {1045, 1059, 1074}
CLOSE_SEEDS = [seed for seed, _ in CLOSE]
# The window's frames (make_onset_data.py): the touch lies between frames ONSET - 1
# and ONSET.
ONSET = 30
FRAME_S = 1.0 / 240.0
# With --rival-share: how far from the centre the rival's touch lands (mm) and when
# (frames after the centre's touch; mostly before it).
RIVAL_MM = (10.0, 45.0)
RIVAL_FRAMES_BEFORE = (1, 9)
RIVAL_FRAMES_AFTER = (1, 9)
RIVAL_BEFORE_SHARE = 0.7
# The hand pasted is its labelled outline, with its shadow: the pixels within
# SHADOW_PX of the outline darker than the plate by more than SHADOW_DIFF (summed over
# B, G and R).
SHADOW_PX = 9
SHADOW_DIFF = 30
# The crops' scale (make_onset_data.py).
CROP_MM_PER_PX = 2.0


def hand_mask(img, plate, outline):
    """Where `img` shows the hand filled in `outline` (255 inside) or its shadow over
    `plate`: 0..1, soft-edged."""
    near = cv2.dilate(outline, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * SHADOW_PX + 1,) * 2))
    dark = (plate.astype(np.int16) - img.astype(np.int16)).sum(axis=2) > SHADOW_DIFF
    shadow = cv2.morphologyEx((dark & (near > 0)).astype(np.uint8) * 255, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    m = np.maximum(outline, shadow).astype(np.float32) / 255.0
    return cv2.GaussianBlur(m, (3, 3), 0)


def with_rival(crops, masks, plate, idx, donor, donor_masks, donor_plate, delta, off, under):
    """The frames `idx` of a window with the donor window's hand pasted in: its frame
    `k - delta` over frame `k`, moved by `off` pixels; beneath the window's own hand when
    `under`."""
    window = crops.shape[0]
    m = np.float32([[1, 0, off[0]], [0, 1, off[1]]])
    side = crops.shape[1]
    out = {}
    for k in idx:
        j = min(max(k - delta, 0), window - 1)
        b = donor[j]
        mb = cv2.warpAffine(hand_mask(b, donor_plate, donor_masks[j]), m, (side, side), borderValue=0)
        b = cv2.warpAffine(b, m, (side, side), borderMode=cv2.BORDER_REPLICATE)
        a = crops[k]
        if under:
            mb = mb * (1.0 - hand_mask(a, plate, masks[k]))
        mb = mb[:, :, None]
        out[k] = (a * (1.0 - mb) + b * mb + 0.5).astype(np.uint8)
    return out


def rival_for(crops, masks, plate, i, donor, donor_masks, donor_plate, rng):
    """The window's frames that input `i` reads, with a random rival's hand in them."""
    if rng.random() < RIVAL_BEFORE_SHARE:
        delta = -int(rng.integers(RIVAL_FRAMES_BEFORE[0], RIVAL_FRAMES_BEFORE[1] + 1))
    else:
        delta = int(rng.integers(RIVAL_FRAMES_AFTER[0], RIVAL_FRAMES_AFTER[1] + 1))
    r = rng.uniform(*RIVAL_MM) / CROP_MM_PER_PX
    a = rng.uniform(0, 2 * np.pi)
    off = (r * np.cos(a), r * np.sin(a))
    return with_rival(crops, masks, plate, [i] + [i - b for b in BACK], donor, donor_masks, donor_plate,
                      delta, off, rng.random() < 0.5)


def planes(crops, plate, i, rng, train, frames=None, centre=None):
    """The input of window position `i`: the frame, the frames `BACK` before and the
    plate, turned, scaled, shifted and put through the same colour change (each frame
    its own noise and compression). `frames` (window position -> frame) stands in for
    `crops` where given. The square is cut around `centre` (crop pixels; the crops'
    middle when not given)."""
    side = crops.shape[1]
    c = np.array([side / 2, side / 2]) if centre is None else np.asarray(centre, dtype=float)
    if train:
        c = c + np.clip(rng.normal(0, 2.0, 2), -5, 5)
        ang, scale = rng.uniform(0, 360), rng.uniform(0.85, 1.18)
    else:
        ang, scale = 0.0, 1.0
    m = cv2.getRotationMatrix2D((float(c[0]), float(c[1])), ang, scale)
    m[:, 2] += np.array([IN_PX / 2, IN_PX / 2]) - c
    at = (lambda k: frames[k]) if frames is not None else (lambda k: crops[k])
    ims = [at(i)] + [at(i - b) for b in BACK] + [plate]
    out = []
    if train:
        flip = rng.random() < 0.5
        gain, contrast = rng.uniform(0.8, 1.2, 3), rng.uniform(0.7, 1.3)
        shift, gamma = rng.uniform(-0.15, 0.15), rng.uniform(0.7, 1.4)
        blur = rng.uniform(0.3, 1.2) if rng.random() < 0.4 else 0.0
    for k, a in enumerate(ims):
        mk = m.copy()
        if train and k:
            # Camera shake between frames; the plate is from longer before.
            mk[:, 2] += rng.normal(0, 0.5 if k == len(ims) - 1 else 0.2, 2)
        a = cv2.warpAffine(a, mk, (IN_PX, IN_PX), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        if train:
            if flip:
                a = a[:, ::-1]
            g = gain * (rng.uniform(0.95, 1.05) if k == len(ims) - 1 else rng.uniform(0.99, 1.01))
            a = degrade(colour(a, g, contrast, shift, gamma), rng, blur)
        out.append(a)
    x = np.concatenate([a[:, :, ::-1] for a in out], axis=2).astype(np.float32) / 255.0 - 0.5
    return np.ascontiguousarray(x.transpose(2, 0, 1))


def onset_time(p, times, enough=0.5):
    """Where the longest run of frames at `enough` or more begins (the earliest of the
    longest), interpolated between its first frame and the one before; None when there
    is none or it begins with the first frame (as `hands::perceive::onset_from_landed`)."""
    runs = []
    for i, q in enumerate(p):
        if q < enough:
            continue
        if runs and runs[-1][0] + runs[-1][1] == i:
            runs[-1][1] += 1
        else:
            runs.append([i, 1])
    if not runs:
        return None
    start = max(runs, key=lambda r: (r[1], -r[0]))[0]
    if start == 0:
        return None
    f = (enough - p[start - 1]) / (p[start] - p[start - 1])
    return times[start - 1] + f * (times[start] - times[start - 1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--rival-share", type=float, default=0.0,
                    help="share of training windows given a rival's hand (0: none, the committed model)")
    ap.add_argument("--validate-only", metavar="MODEL", help="only print the validation numbers of this ONNX network")
    args = ap.parse_args()
    torch.manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    random.seed(SEED)
    torch.set_num_threads(int(os.environ.get("THREADS", "1")))
    d = np.load(os.path.join(args.data, "onset.npz"))
    crops, plates, times, touch, seeds = d["crops"], d["plates"], d["times"], d["touch"], d["seed"]
    player, masks = d["player"], d["masks"]
    window = crops.shape[1]
    val = np.isin(seeds, list(VAL_SEEDS))
    tr, vi = np.where(~val)[0], np.where(val)[0]
    # Donors of a rival's hand: the other player's touches of the same split.
    donors = {(split, p): idx[player[idx] == p] for split, idx in (("tr", tr), ("vi", vi)) for p in (0, 1)}
    lo = max(BACK)
    close = np.isin(seeds, CLOSE_SEEDS)
    print(f"onset: train {len(tr)} touches ({int(close[tr].sum())} of close takes), validation {len(vi)} "
          f"({int(close[vi].sum())}); {window} frames each", flush=True)
    if args.validate_only:
        import onnxruntime
        sess = onnxruntime.InferenceSession(args.validate_only, providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        # The exported network takes one input at a time.
        run = lambda x: torch.from_numpy(np.concatenate([sess.run(None, {name: r[None]})[0] for r in x.numpy()]))
        validate(run, crops, masks, plates, times, touch, player, vi, donors, lo, window, seeds)
        return
    net = ContactNet(CHANNELS)

    def batch_loss():
        xs, ys = [], []
        for _ in range(args.batch):
            n = int(rng.choice(tr))
            # Half anywhere in the window, half within 4 frames of the touch.
            i = int(rng.integers(lo, window)) if rng.random() < 0.5 else int(rng.integers(ONSET - 4, ONSET + 5))
            frames = None
            pool = donors[("tr", 1 - player[n])]
            # No draw at all without rivals: the same random stream as before they existed.
            if args.rival_share > 0 and len(pool) and rng.random() < args.rival_share:
                m = int(rng.choice(pool))
                frames = rival_for(crops[n], masks[n], plates[n], i, crops[m], masks[m], plates[m], rng)
            xs.append(planes(crops[n], plates[n], i, rng, True, frames))
            ys.append(1.0 if times[n, i] >= touch[n] else 0.0)
        x = torch.from_numpy(np.stack(xs))
        y = torch.tensor(ys, dtype=torch.float32)[:, None]
        return F.binary_cross_entropy_with_logits(net(x), y)

    fit(net, args, batch_loss)
    validate(net, crops, masks, plates, times, touch, player, vi, donors, lo, window, seeds)
    export(net, CHANNELS, args.out, "frames", "landed", IN_PX)


def validate(net, crops, masks, plates, times, touch, player, vi, donors, lo, window, seeds):
    """The onset error over the validation touches of single takes: alone, and with the
    other player's next validation touch landing 25 mm away (to the side, and below the
    centre's hand), 3 frames (12.5 ms) before; then over the touches of close takes, with
    the order their times give each take."""
    close = np.isin(seeds[vi], CLOSE_SEEDS)
    single, both = vi[~close], vi[close]
    for rival in (False, True):
        errs, none = [], 0
        with torch.no_grad():
            for n in single:
                frames = None
                if rival:
                    pool = donors[("vi", 1 - player[n])]
                    if not len(pool):
                        continue
                    m = int(pool[(np.searchsorted(pool, n)) % len(pool)])
                    off = (25.0 / CROP_MM_PER_PX, 0.0)
                    frames = with_rival(crops[n], masks[n], plates[n], range(window), crops[m], masks[m], plates[m],
                                        -3, off, True)
                x = torch.from_numpy(np.stack([planes(crops[n], plates[n], i, None, False, frames)
                                               for i in range(lo, window)]))
                p = torch.sigmoid(net(x))[:, 0].numpy()
                t = onset_time(p, times[n, lo:])
                if t is None:
                    none += 1
                else:
                    errs.append((t - touch[n]) * 1000.0)
        summary(f"validation{' with a rival' if rival else ''}", errs, none)
    if not len(both):
        return
    found = {}
    with torch.no_grad():
        for n in both:
            x = torch.from_numpy(np.stack([planes(crops[n], plates[n], i, None, False)
                                           for i in range(lo, window)]))
            found[n] = onset_time(torch.sigmoid(net(x))[:, 0].numpy(), times[n, lo:])
    errs = [(found[n] - touch[n]) * 1000.0 for n in both if found[n] is not None]
    summary("validation, close takes", errs, len(both) - len(errs))
    # The two touches of one take: the same recording, the other player, within 25 ms.
    right, ties, wrong, gaps = 0, 0, 0, []
    for n in both:
        for m in both:
            if m <= n or seeds[m] != seeds[n] or player[m] == player[n] or abs(touch[m] - touch[n]) > 0.025:
                continue
            true_gap = (touch[m] - touch[n]) * 1000.0
            if found[n] is None or found[m] is None:
                continue
            gap = (found[m] - found[n]) * 1000.0
            gaps.append((true_gap, gap))
            if abs(true_gap) < 0.1:
                ties += 1
            elif gap * true_gap > 0:
                right += 1
            else:
                wrong += 1
    print(f"validation, close takes: {len(gaps)} takes timed; {right} in the right order, {wrong} not, "
          f"{ties} true ties; gaps true / measured, ms: "
          + ", ".join(f"{t:.1f}/{g:.1f}" for t, g in sorted(gaps)), flush=True)


def summary(what, errs, none):
    """Prints the onset errors (ms) of touches timed, and how many were never reached."""
    if not errs:
        return
    e = np.array(errs)
    a = np.abs(e)
    print(f"{what}: {len(errs) + none} touches, {none} never reached; "
          f"error mean {e.mean():.1f} ms, sd {e.std():.1f}; |error| median {np.median(a):.1f}, "
          f"p90 {np.percentile(a, 90):.1f}, p95 {np.percentile(a, 95):.1f} ms; "
          f"within a frame {int((a <= FRAME_S * 1000).sum())}, within 2 ms {int((a <= 2.0).sum())}", flush=True)


if __name__ == "__main__":
    main()

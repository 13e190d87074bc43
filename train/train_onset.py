"""Trains the onset network (models/contact-onset.onnx) on the windows made by
train/make_onset_data.py.

Input: 1 x 18 x 48 x 48, RGB in [-0.5, 0.5], a square of 96 mm of the field (2 mm a
pixel) centred where a touch found presses, axis-aligned in the image: channels 0-2 the
frame, then the frames 1, 2, 4 and 6 before it (4.2 to 25 ms at 240 fps), then the plate.
Output: 1 x 1 logit, the finger has reached the card by the frame. Run over the frames
around a touch the contact networks found, its crossing of 0.5 times the touch.

    python train/train_onset.py --data data/onset --out models/contact-onset.onnx --steps 6000

Seeds 1045 (hard, 640x360) and 1059 (hard, 1280x720), kept out of training, give the
validation numbers printed at the end: per touch, where the longest run of its frames at
0.5 or more begins, against the truth.
"""

import argparse
import os
import random

import cv2
import numpy as np
import torch
import torch.nn.functional as F

from train_contact import ContactNet, colour, degrade, export, fit

IN_PX = 48
# Frames before the latest, in the input's order after it; then the plate.
BACK = [1, 2, 4, 6]
CHANNELS = 3 * (len(BACK) + 2)
SEED = 20261128
VAL_SEEDS = {1045, 1059}
# The window's frames (make_onset_data.py): the touch lies between frames ONSET - 1
# and ONSET.
ONSET = 30
FRAME_S = 1.0 / 240.0


def planes(crops, plate, i, rng, train):
    """The input of window position `i`: the frame, the frames `BACK` before and the
    plate, turned, scaled, shifted and put through the same colour change (each frame
    its own noise and compression)."""
    side = crops.shape[1]
    c = np.array([side / 2, side / 2])
    if train:
        c = c + np.clip(rng.normal(0, 2.0, 2), -5, 5)
        ang, scale = rng.uniform(0, 360), rng.uniform(0.85, 1.18)
    else:
        ang, scale = 0.0, 1.0
    m = cv2.getRotationMatrix2D((float(c[0]), float(c[1])), ang, scale)
    m[:, 2] += np.array([IN_PX / 2, IN_PX / 2]) - c
    ims = [crops[i]] + [crops[i - b] for b in BACK] + [plate]
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
    args = ap.parse_args()
    torch.manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    random.seed(SEED)
    torch.set_num_threads(int(os.environ.get("THREADS", "1")))
    d = np.load(os.path.join(args.data, "onset.npz"))
    crops, plates, times, touch, seeds = d["crops"], d["plates"], d["times"], d["touch"], d["seed"]
    window = crops.shape[1]
    val = np.isin(seeds, list(VAL_SEEDS))
    tr, vi = np.where(~val)[0], np.where(val)[0]
    lo = max(BACK)
    print(f"onset: train {len(tr)} touches, validation {len(vi)}; {window} frames each", flush=True)
    net = ContactNet(CHANNELS)

    def batch_loss():
        xs, ys = [], []
        for _ in range(args.batch):
            n = int(rng.choice(tr))
            # Half anywhere in the window, half within 4 frames of the touch.
            i = int(rng.integers(lo, window)) if rng.random() < 0.5 else int(rng.integers(ONSET - 4, ONSET + 5))
            xs.append(planes(crops[n], plates[n], i, rng, True))
            ys.append(1.0 if times[n, i] >= touch[n] else 0.0)
        x = torch.from_numpy(np.stack(xs))
        y = torch.tensor(ys, dtype=torch.float32)[:, None]
        return F.binary_cross_entropy_with_logits(net(x), y)

    fit(net, args, batch_loss)
    errs, none = [], 0
    with torch.no_grad():
        for n in vi:
            x = torch.from_numpy(np.stack([planes(crops[n], plates[n], i, rng, False) for i in range(lo, window)]))
            p = torch.sigmoid(net(x))[:, 0].numpy()
            t = onset_time(p, times[n, lo:])
            if t is None:
                none += 1
            else:
                errs.append((t - touch[n]) * 1000.0)
    if errs:
        e = np.array(errs)
        a = np.abs(e)
        print(f"validation: {len(vi)} touches, {none} never reached; error mean {e.mean():.1f} ms, sd {e.std():.1f}; "
              f"|error| median {np.median(a):.1f}, p90 {np.percentile(a, 90):.1f}, p95 {np.percentile(a, 95):.1f} ms; "
              f"within a frame {int((a <= FRAME_S * 1000).sum())}, within 2 ms {int((a <= 2.0).sum())}")
    export(net, CHANNELS, args.out, "frames", "landed", IN_PX)


if __name__ == "__main__":
    main()

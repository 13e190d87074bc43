"""Trains the hand model (models/hands.onnx) on frames made by train/make_data.py.

The network sees the whole frame resized to 320 x 184 and answers on a grid of half that
size (160 x 92, one cell = 8 px of a 1280 px wide frame):
  0    hand mask: any hand (convex outline wrist to tips)
  1    player: the cell belongs to player A's hand (taught on hand cells only)
  2    hand: the cell belongs to a left hand (taught on hand cells only)
  3    thumb-tip heat
  4    fingertip heat (all five tips of every hand)
  5-6  fingertip offset inside its cell (x, y, in cells)
  7    contact heat: the middle fingertip of a hand at table height
One mask for every hand is learnt far faster than one map per player and hand; which
player and which hand are questions asked of the hand's own cells.

    python train/train.py --data data/hands --out models/hands.onnx --minutes 40
    python train/train.py --data data/hands-dense data/hands-dense2 --init-onnx models/hands.onnx \
        --out data/hands-more/hands.onnx --steps 15000 --lr 5e-4 --hue 8 --threads 2
"""

import argparse
import math
import os
import pickle
import random
import sys
import time

import cv2
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

IN_W, IN_H = 320, 184
OUT_W, OUT_H = 160, 92
STRIDE = IN_W // OUT_W
TIP_ROWS = [1, 2, 3, 4, 5]  # thumb..little in the keypoint array (0 is the wrist)
MIDDLE = 3
CONTACT_MM = 0.5
SEED = 20261123


def conv(i, o, stride=1, dil=1):
    return nn.Sequential(nn.Conv2d(i, o, 3, stride, padding=dil, dilation=dil), nn.ReLU(inplace=True))


class HandNet(nn.Module):
    def __init__(self):
        super().__init__()
        # Few channels at the fine levels: tract's cost is dominated by them.
        self.e1 = conv(3, 12, 2)
        self.e2 = nn.Sequential(conv(12, 24, 2), conv(24, 24))
        self.e3 = nn.Sequential(conv(24, 48, 2), conv(48, 48, 1, 2), conv(48, 48, 1, 4))
        self.r3 = nn.Conv2d(48, 24, 1)
        self.d2 = conv(48, 24)
        self.r2 = nn.Conv2d(24, 12, 1)
        self.d1 = conv(24, 12)
        self.head = nn.Conv2d(12, 8, 1)
        with torch.no_grad():
            # Start from "almost nothing here": mask p = 0.12, heat maps p = 0.01.
            self.head.bias[0] = -2.0
            self.head.bias[1:3] = 0.0
            self.head.bias[3:5] = -4.6
            self.head.bias[7] = -4.6
            self.head.bias[5:7] = 0.0

    def forward(self, x):
        a = self.e1(x)
        b = self.e2(a)
        c = self.e3(b)
        u = F.interpolate(self.r3(c), scale_factor=2.0, mode="nearest")
        d = self.d2(torch.cat([u, b], 1))
        u = F.interpolate(self.r2(d), scale_factor=2.0, mode="nearest")
        d = self.d1(torch.cat([u, a], 1))
        return self.head(d)


# ---------------------------------------------------------------- augmentation
# The largest hue turn, in OpenCV's half-degrees (`--hue`; 0, no turn, in the first two
# models' recipes).
HUE_TURN = 0


def augment(img, hands, rng):
    """Colour, gain, blur, noise, scale, rotation, flips and JPEG: returns new img, hands."""
    h, w = img.shape[:2]
    hands = [dict(hd) for hd in hands]
    # Flips: a left-right mirror swaps the hands; a half turn swaps the players.
    if rng.random() < 0.5:
        img = img[:, ::-1].copy()
        for hd in hands:
            hd["outline"] = hd["outline"] * [-1, 1] + [w, 0]
            hd["kp"] = hd["kp"] * [-1, 1] + [w, 0]
            hd["hand"] = "left" if hd["hand"] == "right" else "right"
    if rng.random() < 0.5:
        img = img[::-1, ::-1].copy()
        # the padding rows move to the top; keep the picture's own height for the flip
        for hd in hands:
            hd["outline"] = [w, h] - hd["outline"]
            hd["kp"] = [w, h] - hd["kp"]
            hd["player"] = "B" if hd["player"] == "A" else "A"
    # Scale, rotation, shift.
    s = math.exp(rng.uniform(-0.2, 0.2))
    ang = rng.uniform(-6, 6)
    m = cv2.getRotationMatrix2D((w / 2, h / 2), ang, s)
    m[:, 2] += [rng.uniform(-12, 12), rng.uniform(-8, 8)]
    border = tuple(int(v) for v in rng.integers(0, 255, 3))
    img = cv2.warpAffine(img, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                         borderValue=border if rng.random() < 0.5 else (0, 0, 0))
    for hd in hands:
        for k in ("outline", "kp"):
            p = np.asarray(hd[k], np.float32)
            hd[k] = p @ m[:, :2].T + m[:, 2]
    if HUE_TURN and rng.random() < 0.5:
        # Hue turned a little: other skin, tatami and card tones than the simulator's.
        hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
        turn = int(rng.integers(-HUE_TURN, HUE_TURN + 1))
        hsv[:, :, 0] = ((hsv[:, :, 0].astype(np.int16) + turn) % 180).astype(np.uint8)
        img = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)
    f = img.astype(np.float32)
    # Colour: per-channel gain (white balance), brightness, contrast, gamma, saturation.
    f *= rng.uniform(0.75, 1.25, 3).astype(np.float32) * rng.uniform(0.5, 1.4)
    mean = f.mean()
    f = (f - mean) * rng.uniform(0.7, 1.3) + mean
    gray = f.mean(axis=2, keepdims=True)
    f = gray + (f - gray) * rng.uniform(0.5, 1.5)
    f = np.clip(f, 0, 255)
    f = 255.0 * (f / 255.0) ** rng.uniform(0.7, 1.4)
    if rng.random() < 0.4:
        k = rng.choice([3, 5])
        f = cv2.GaussianBlur(f, (k, k), rng.uniform(0.3, 1.2))
    if rng.random() < 0.3:
        # motion blur along a random direction
        n = int(rng.integers(3, 6))
        ker = np.zeros((n, n), np.float32)
        if rng.random() < 0.5:
            ker[n // 2, :] = 1.0 / n
        else:
            ker[:, n // 2] = 1.0 / n
        f = cv2.filter2D(f, -1, ker)
    f += rng.normal(0, rng.uniform(0, 6), f.shape).astype(np.float32)
    img = np.clip(f, 0, 255).astype(np.uint8)
    if rng.random() < 0.5:
        q = int(rng.integers(30, 90))
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, q])
        img = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return img, hands


# ---------------------------------------------------------------- targets
def targets(hands):
    """Target maps on the output grid, and the weight of each offset cell."""
    t = np.zeros((8, OUT_H, OUT_W), np.float32)
    offw = np.zeros((OUT_H, OUT_W), np.float32)
    yy, xx = np.mgrid[0:OUT_H, 0:OUT_W].astype(np.float32)
    for hd in hands:
        poly = np.round((np.asarray(hd["outline"], np.float32) / STRIDE - 0.5) * 8).astype(np.int32)
        m = np.zeros((OUT_H, OUT_W), np.uint8)
        cv2.fillPoly(m, [poly.reshape(-1, 1, 2)], 1, lineType=cv2.LINE_8, shift=3)
        t[0] = np.maximum(t[0], m)
        if hd["player"] == "A":
            t[1] = np.maximum(t[1], m)
        if hd["hand"] == "left":
            t[2] = np.maximum(t[2], m)
        kp = np.asarray(hd["kp"], np.float32) / STRIDE - 0.5  # cell-centre coordinates
        tx, ty = kp[TIP_ROWS[0]]
        t[3] = np.maximum(t[3], np.exp(-((xx - tx) ** 2 + (yy - ty) ** 2) / (2 * 0.8**2)))
        for r in TIP_ROWS:
            cx, cy = kp[r]
            if not (-1 <= cx < OUT_W + 1 and -1 <= cy < OUT_H + 1):
                continue
            g = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * 0.8**2))
            t[4] = np.maximum(t[4], g)
            ix, iy = int(round(cx)), int(round(cy))
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    x, y = ix + dx, iy + dy
                    if 0 <= x < OUT_W and 0 <= y < OUT_H:
                        t[5, y, x] = cx - x
                        t[6, y, x] = cy - y
                        offw[y, x] = 1.0
        if hd["height_mm"] <= CONTACT_MM or hd["touching"]:
            cx, cy = kp[MIDDLE]
            g = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * 1.0**2))
            t[7] = np.maximum(t[7], g)
    return t, offw


def to_input(img):
    x = img[:, :, ::-1].astype(np.float32) / 255.0 - 0.5  # BGR -> RGB
    return np.ascontiguousarray(x.transpose(2, 0, 1))


CROP_H, CROP_W = 128, 192
# Of the crops around a hand in frames with a hand over the playing area, this share is
# centred on such a hand.
INSIDE_CROP_SHARE = 0.6


def crop_at(img, t, w, hands, rng):
    """A CROP_H x CROP_W window (input px; half that in cells), most often around a
    hand, so that a step spends its time where the hands are."""
    def in_view(p):
        return ((p[:, 0] >= 0) & (p[:, 0] < IN_W) & (p[:, 1] >= 0) & (p[:, 1] < IN_H)).any()

    pts = [np.asarray(hd["kp"]) for hd in hands if in_view(np.asarray(hd["kp"]))]
    # Hands over the playing area (entering, pressing, hovering) are what the referee
    # rules on, and a minority of the hands in view: crops go to them more often.
    over = [np.asarray(hd["kp"]) for hd in hands
            if hd.get("inside", False) and in_view(np.asarray(hd["kp"]))]
    if over and rng.random() < INSIDE_CROP_SHARE:
        pts = over
    if pts and rng.random() < 0.8:
        c = pts[int(rng.integers(len(pts)))].mean(axis=0) + rng.normal(0, 24, 2)
        x0 = int(np.clip(c[0] - CROP_W / 2, 0, IN_W - CROP_W))
        y0 = int(np.clip(c[1] - CROP_H / 2, 0, IN_H - CROP_H))
    else:
        x0 = int(rng.integers(0, IN_W - CROP_W + 1))
        y0 = int(rng.integers(0, IN_H - CROP_H + 1))
    x0 -= x0 % STRIDE
    y0 -= y0 % STRIDE
    cx, cy = x0 // STRIDE, y0 // STRIDE
    return (img[y0:y0 + CROP_H, x0:x0 + CROP_W],
            t[:, cy:cy + CROP_H // STRIDE, cx:cx + CROP_W // STRIDE],
            w[cy:cy + CROP_H // STRIDE, cx:cx + CROP_W // STRIDE])


def batch(images, labels, idx, rng, aug, crop=True):
    xs, ts, ws = [], [], []
    for i in idx:
        img, hands = images[i], labels[i]
        if aug:
            img, hands = augment(img, hands, rng)
        t, w = targets(hands)
        if crop:
            img, t, w = crop_at(img, t, w, hands, rng)
        xs.append(to_input(img))
        ts.append(t)
        ws.append(w)
    return (torch.from_numpy(np.stack(xs)), torch.from_numpy(np.stack(ts)),
            torch.from_numpy(np.stack(ws)))


def heat_loss(logit, target):
    """Penalty-reduced focal loss on Gaussian targets (CenterNet)."""
    p = torch.sigmoid(logit).clamp(1e-4, 1 - 1e-4)
    pos = (target > 0.95).float()
    neg = 1 - pos
    lp = -torch.log(p) * (1 - p) ** 2 * pos
    ln = -torch.log(1 - p) * p**2 * (1 - target) ** 4 * neg
    return (lp.sum() + ln.sum()) / pos.sum().clamp(min=1)


MASK_POS_WEIGHT = 4.0


def loss_fn(out, t, w):
    # Hands cover a few percent of the frame: positives are weighted up, and the Dice
    # term is taken over the whole batch, so that frames with no hand in them cannot make
    # "no hand anywhere" look good.
    mask_l = F.binary_cross_entropy_with_logits(
        out[:, 0], t[:, 0], pos_weight=torch.tensor(MASK_POS_WEIGHT))
    pm = torch.sigmoid(out[:, 0])
    inter = (pm * t[:, 0]).sum()
    dice = 1 - (2 * inter + 1) / (pm.sum() + t[:, 0].sum() + 1)
    # Player and hand, asked only of hand cells.
    hw = t[:, 0]
    who_l = (F.binary_cross_entropy_with_logits(out[:, 1:3], t[:, 1:3], reduction="none").sum(1) * hw).sum() \
        / hw.sum().clamp(min=1)
    thumb_l = heat_loss(out[:, 3], t[:, 3])
    tip_l = heat_loss(out[:, 4], t[:, 4])
    off_l = (F.smooth_l1_loss(out[:, 5:7], t[:, 5:7], reduction="none").sum(1) * w).sum() / w.sum().clamp(min=1)
    con_l = heat_loss(out[:, 7], t[:, 7])
    total = mask_l * 2 + dice * 2 + who_l + 0.5 * thumb_l + tip_l + off_l * 2 + con_l
    return total, (mask_l.item(), dice.item(), tip_l.item(), off_l.item(), con_l.item(), who_l.item())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", nargs="+", default=["data/hands"],
                    help="one or more directories made by make_data.py, drawn from as one set")
    ap.add_argument("--out", default="models/hands.onnx")
    ap.add_argument("--minutes", type=float, default=40)
    ap.add_argument("--steps", type=int, help="train this many steps (the schedule follows steps, "
                    "so a run is repeatable); without it, --minutes of wall time")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--init", help="start from these weights (a .pt state dict)")
    ap.add_argument("--init-onnx", help="start from the weights of an exported model of this "
                    "network (e.g. the committed models/hands.onnx)")
    ap.add_argument("--hue", type=int, default=0,
                    help="turn the hue of half the frames by up to this many of OpenCV's "
                    "half-degrees (0: never)")
    a = ap.parse_args()
    global HUE_TURN
    HUE_TURN = a.hue
    torch.manual_seed(SEED)
    random.seed(SEED)
    rng = np.random.default_rng(SEED)
    torch.set_num_threads(a.threads)
    images, labels = Frames(), []
    for d in a.data:
        images.add(np.load(os.path.join(d, "frames.npy"), mmap_mode="r"))
        with open(os.path.join(d, "labels.pkl"), "rb") as fh:
            labels += pickle.load(fh)
    n = len(labels)
    assert n == len(images)
    print(f"{n} frames", file=sys.stderr)
    net = HandNet()
    if a.init:
        net.load_state_dict(torch.load(a.init))
    if a.init_onnx:
        net.load_state_dict(state_from_onnx(a.init_onnx, net))
    opt = torch.optim.AdamW(net.parameters(), lr=a.lr, weight_decay=1e-4)
    t0 = time.time()
    budget = a.minutes * 60
    step = 0
    order = rng.permutation(n)
    pos = 0
    while (step < a.steps) if a.steps else (time.time() - t0 < budget):
        frac = step / a.steps if a.steps else (time.time() - t0) / budget
        for g in opt.param_groups:
            g["lr"] = a.lr * (0.5 * (1 + math.cos(math.pi * frac))) + 5e-5
        if pos + a.batch > n:
            order = rng.permutation(n)
            pos = 0
        idx = order[pos: pos + a.batch]
        pos += a.batch
        x, t, w = batch(images, labels, idx, rng, aug=True)
        out = net(x)
        loss, parts = loss_fn(out, t, w)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % 50 == 0:
            print(f"step {step} {time.time() - t0:.0f}s loss {loss.item():.3f} "
                  f"mask {parts[0]:.3f} dice {parts[1]:.3f} tip {parts[2]:.3f} off {parts[3]:.3f} "
                  f"contact {parts[4]:.3f} who {parts[5]:.3f}", file=sys.stderr, flush=True)
        if step % 500 == 0:
            export(net, a.out)
    export(net, a.out)
    print(f"done: {step} steps, {step * a.batch} samples, {(time.time() - t0) / 60:.1f} min",
          file=sys.stderr)


class Frames:
    """Frames of several data directories indexed as one array, each left memory-mapped."""

    def __init__(self):
        self.parts, self.starts = [], []

    def add(self, arr):
        self.starts.append(len(self))
        self.parts.append(arr)

    def __len__(self):
        return sum(len(p) for p in self.parts)

    def __getitem__(self, i):
        k = max(j for j, s in enumerate(self.starts) if s <= i)
        return self.parts[k][i - self.starts[k]]


def state_from_onnx(path, net):
    """The network's weights read back from its ONNX export: the exporter keeps each
    parameter's name as its initializer's name."""
    import onnx
    from onnx import numpy_helper
    init = {t.name: numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer}
    state = {}
    for name, p in net.state_dict().items():
        if name not in init or tuple(init[name].shape) != tuple(p.shape):
            sys.exit(f"{path}: no weight {name} of shape {tuple(p.shape)}: not this network")
        state[name] = torch.from_numpy(init[name].copy())
    return state


def export(net, path):
    net.eval()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    x = torch.zeros(1, 3, IN_H, IN_W)
    torch.onnx.export(net, (x,), path + ".tmp", opset_version=17, dynamo=False,
                      input_names=["frame"], output_names=["maps"])
    os.replace(path + ".tmp", path)
    torch.save(net.state_dict(), path + ".pt")
    net.train()


if __name__ == "__main__":
    main()

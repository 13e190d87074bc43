"""Trains the contact model (models/contact.onnx) on crops made by
train/make_contact_data.py.

Input: 1 x 9 x 48 x 48, RGB in [-0.5, 0.5], a square of 96 mm of the field (2 mm a
pixel) centred on a fingertip the hand model found, axis-aligned in the image: channels
0-2 the frame, 3-5 the same square of the frame 25 ms before (a fingertip coming down
meets its shadow while the hand stays where it is; a hovering one keeps its shadow
beside it), 6-8 the same square of the latest frame with no hand over the playing
area (the plate: against it a hand's shadow stands out whatever the tatami and cards
look like). Output:
1 x 1 logit, the hand's fingertip pressing at table height. The fingertip found may be
the middle, index or ring one and lie some millimetres off: the crops are centred on any
of the three, jittered, turned through any angle (hands reach from both sides and the
light comes from anywhere), mirrored, scaled, and put through colour, blur, noise and
JPEG changes.

    python train/train_contact.py --data data/contact --out models/contact.onnx --steps 12000

With `--context` the network also takes the same three over a 192 mm square (18
channels: models/contact-second.onnx). With `--point` it is the point network
(models/contact-point.onnx): the same nine channels in, two numbers out, where in the
square the pressing (middle) fingertip lies, in input pixels from its centre; trained
only on pressing crops, with a smooth L1 loss; the committed one is trained 4,000 steps
(`--steps 4000`, as train/run_contact.sh does).

Seeds 1040 (clean, 1280x720, 120 fps), 1045 (hard, 640x360, 240 fps) and 1059 (hard,
1280x720, 240 fps) are kept out of training and give the validation numbers printed at
the end.
"""

import argparse
import os
import random

import cv2
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

IN_PX = 48
# The frame, the frame 25 ms before, the plate; with --context the same three again over
# a wider square (the whole hand and its shadow).
CHANNELS = 9
# Millimetres of the field a pixel covers, of the stored crops (make_contact_data.py)
# and of the network's input alike: the square and, with --context, the wider one.
MM_PER_PX = 2.0
CTX_MM_PER_PX = 4.0
SEED = 20261124
VAL_SEEDS = {1040, 1045, 1059}
# Seeds drawn at 1280 x 720 (the evaluation's size): a wide frame halved looks a little
# different from a narrow one.
HIRES_SEEDS = set(range(1051, 1060))
# Labels: pressing when the middle fingertip is at table height; held above when it is
# at least this high and touches nothing (heights between are left out: not a cue).
# `--above-mm` changes it.
ABOVE_MM = 5.0


def conv(i, o, stride=1):
    return nn.Sequential(nn.Conv2d(i, o, 3, stride, padding=1), nn.BatchNorm2d(o), nn.ReLU(inplace=True))


class ContactNet(nn.Module):
    def __init__(self, channels=CHANNELS, outputs=1):
        super().__init__()
        self.f = nn.Sequential(
            conv(channels, 16), conv(16, 24, 2),          # 24
            conv(24, 32), conv(32, 48, 2),         # 12
            conv(48, 48), conv(48, 64, 2),         # 6
            conv(64, 64),
        )
        self.head = nn.Linear(64, outputs)

    def forward(self, x):
        x = self.f(x)
        x = x.mean(dim=(2, 3))
        return self.head(x)


def load_crops(data):
    """The stored squares: the frame, the frame 25 ms before and the plate, nine planes."""
    return np.concatenate([np.load(os.path.join(data, "crops.npy")),
                           np.load(os.path.join(data, "prevs.npy")),
                           np.load(os.path.join(data, "plates.npy"))], axis=3)


def pooled(mask, hires):
    """The crops of `mask`, those of `hires` among them three times."""
    return np.concatenate([np.where(mask)[0]] + [np.where(mask & hires)[0]] * 2)


def predict(net, crops, meta, idx, rng, ctx=None):
    """The network's first output on the validation inputs of crops `idx`, in batches."""
    got = []
    with torch.no_grad():
        for k in range(0, len(idx), 256):
            x = torch.from_numpy(np.stack([augment(crops[i], meta[i], rng, train=False, ctx=None if ctx is None else ctx[i])
                                           for i in idx[k:k + 256]]))
            got.append(net(x)[:, 0].numpy())
    return np.concatenate(got) if got else np.zeros(0)


def load(data, context=False, above_mm=ABOVE_MM):
    crops = load_crops(data)
    ctx = None
    if context:
        ctx = np.concatenate([np.load(os.path.join(data, "ctx_crops.npy")),
                              np.load(os.path.join(data, "ctx_prevs.npy")),
                              np.load(os.path.join(data, "ctx_plates.npy"))], axis=3)
    meta = np.load(os.path.join(data, "meta.npy"))
    z, touching = meta[:, 0], meta[:, 1]
    label = np.full(len(meta), -1, dtype=np.int64)
    label[z <= 0.5] = 1
    label[(z >= above_mm) & (touching == 0)] = 0
    keep = label >= 0
    return crops[keep], meta[keep], label[keep], (ctx[keep] if ctx is not None else None)


# A crop whose middle 48 mm differs from the same square 25 ms before by less than this
# (mean absolute difference, 0-255) shows a hand held still.
STILL_DIFF = 4.0


def stillness(crops):
    """Mean absolute difference between each crop's frame and its frame 25 ms before, over
    the middle 48 mm."""
    s = crops.shape[1]
    a, b = s // 2 - 12, s // 2 + 12
    out = np.empty(len(crops), dtype=np.float32)
    for k in range(0, len(crops), 4096):
        c = crops[k:k + 4096, a:b, a:b].astype(np.int16)
        out[k:k + 4096] = np.abs(c[..., 0:3] - c[..., 3:6]).mean(axis=(1, 2, 3))
    return out


def colour(img, gain, contrast, shift, gamma):
    img = img.astype(np.float32) / 255.0 * gain[None, None, :]
    img = (img - 0.5) * contrast + 0.5 + shift
    return np.clip(img, 0, 1) ** gamma


def degrade(img, rng, blur):
    if blur > 0:
        img = cv2.GaussianBlur(img, (0, 0), blur)
    if rng.random() < 0.6:
        img = img + rng.normal(0, rng.uniform(0.005, 0.04), img.shape)
    img = np.clip(img * 255, 0, 255).astype(np.uint8)
    if rng.random() < 0.5:
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(30, 91))])
        img = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return img


def off_centre(c, meta, rng, each, sigma, limit):
    """The centre `c` of a crop on the labelled middle fingertip moved to the index or
    the ring fingertip (each with probability `each`; `meta[2:6]` their offsets), then
    jittered (`sigma` crop pixels, clipped at `limit`)."""
    r = rng.random()
    if r < each:
        c = c + meta[2:4]
    elif r < 2 * each:
        c = c + meta[4:6]
    return c + np.clip(rng.normal(0, sigma, 2), -limit, limit)


def augment(crop, meta, rng, train=True, ctx=None, point=False):
    """crop: side x side x 9 (frame, frame before, plate); ctx: the same over the wider
    square, or None. Returns 9 (18 with ctx) x 48 x 48 float; with `point`, also where
    the labelled middle fingertip (the stored crop's centre) lies in it, in input pixels
    from the input's centre. A `point` crop for validation is centred, unturned, on the
    middle fingertip (half of them) or the index or ring one, with a few pixels of
    jitter, as the pressing fingertip the hand network found lies."""
    side = crop.shape[0]
    c = np.array([side / 2, side / 2])
    if point and not train:
        c = off_centre(c, meta, rng, 0.25, 2.5, 6)
    if train:
        if meta[8] > 0:
            # Centred on a fingertip the hand network found: its own error is in it.
            c = c + np.clip(rng.normal(0, 1.0, 2), -3, 3)
        else:
            # The hand network's fingertips lie some millimetres off the true ones.
            c = off_centre(c, meta, rng, 0.3, 3.5, 8)
        ang = rng.uniform(0, 360)
        scale = rng.uniform(0.85, 1.18)
    else:
        ang, scale = 0.0, 1.0
    m = cv2.getRotationMatrix2D((float(c[0]), float(c[1])), ang, scale)
    m[:, 2] += np.array([IN_PX / 2, IN_PX / 2]) - c

    def warp(img, m):
        return cv2.warpAffine(img, m, (IN_PX, IN_PX), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)

    def shifted(sigma):
        # A frame from another moment may sit a little off (camera shake).
        if not train:
            return m
        m2 = m.copy()
        m2[:, 2] += rng.normal(0, sigma, 2)
        return m2

    img = warp(crop[:, :, :3], m)
    prev = warp(crop[:, :, 3:6], shifted(0.25))
    plate = warp(crop[:, :, 6:], shifted(0.5))
    ims = [img, prev, plate]
    if ctx is not None:
        # The same point, turn and scale over the wider square.
        cs = ctx.shape[0]
        cc = np.array([cs / 2, cs / 2]) + (c - side / 2) * MM_PER_PX / CTX_MM_PER_PX
        mc = cv2.getRotationMatrix2D((float(cc[0]), float(cc[1])), ang, scale)
        mc[:, 2] += np.array([IN_PX / 2, IN_PX / 2]) - cc
        ims += [warp(ctx[:, :, :3], mc), warp(ctx[:, :, 3:6], mc), warp(ctx[:, :, 6:], mc)]
    # The stored crop's centre (the labelled middle fingertip) in the input.
    tip = m @ np.array([side / 2, side / 2, 1.0])
    if train:
        if rng.random() < 0.5:
            ims = [a[:, ::-1] for a in ims]
            tip[0] = IN_PX - 1 - tip[0]
        gain, contrast = rng.uniform(0.8, 1.2, 3), rng.uniform(0.7, 1.3)
        shift, gamma = rng.uniform(-0.15, 0.15), rng.uniform(0.7, 1.4)
        blur = rng.uniform(0.3, 1.2) if rng.random() < 0.4 else 0.0
        out = []
        for i, a in enumerate(ims):
            # The frame before and the plate: the light a little brighter or darker.
            if i % 3 == 1:
                g = gain * rng.uniform(0.98, 1.02)
            elif i % 3 == 2:
                g = gain * rng.uniform(0.95, 1.05)
            else:
                g = gain
            out.append(degrade(colour(a, g, contrast, shift, gamma), rng, blur))
        ims = out
    x = np.concatenate([a[:, :, ::-1] for a in ims], axis=2).astype(np.float32) / 255.0 - 0.5
    x = np.ascontiguousarray(x.transpose(2, 0, 1))
    if point:
        return x, (tip - IN_PX / 2).astype(np.float32)
    return x


def fit(net, args, batch_loss):
    """`args.steps` steps of AdamW on a one-cycle schedule, each on the loss of a fresh
    batch (`batch_loss()`); leaves the network in eval mode."""
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.steps, pct_start=0.1)
    net.train()
    for step in range(args.steps):
        loss = batch_loss()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 200 == 0 or step == args.steps - 1:
            print(f"step {step} loss {loss.item():.4f}", flush=True)
    net.eval()


def export(net, channels, out, input_name, output_name, in_px=IN_PX):
    """Writes `net` as ONNX (opset 17, one input of `channels` planes of `in_px` square)."""
    dummy = torch.zeros(1, channels, in_px, in_px)
    torch.onnx.export(net, dummy, out, input_names=[input_name], output_names=[output_name],
                      opset_version=17, dynamo=False)
    print("wrote", out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=12000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--above-mm", type=float, default=ABOVE_MM,
                    help="a fingertip this high or higher, touching nothing, is held above")
    ap.add_argument("--context", action="store_true",
                    help="also the wider square of make_contact_data.py --context (18 channels)")
    ap.add_argument("--still-share", type=float, default=0.0,
                    help="share of each batch drawn from hands held still 15-90 mm above (hovering)")
    ap.add_argument("--point", action="store_true",
                    help="the point network: where the pressing fingertip lies in the square")
    args = ap.parse_args()
    if args.point:
        return train_point(args)
    channels = CHANNELS * (2 if args.context else 1)
    torch.manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    random.seed(SEED)
    torch.set_num_threads(int(os.environ.get("THREADS", "1")))
    crops, meta, label, ctx = load(args.data, args.context, args.above_mm)
    val = np.isin(meta[:, 7].astype(int), list(VAL_SEEDS))
    # Crops at the evaluation's size, or centred on the fingertips the hand network
    # found, are drawn three times as often.
    hires = np.isin(meta[:, 7].astype(int), list(HIRES_SEEDS)) | (meta[:, 8] > 0)

    def pool(mask):
        return pooled(mask, hires)

    tr_pos = pool(~val & (label == 1))
    tr_card = pool(~val & (label == 1) & (meta[:, 1] > 0))
    tr_neg = pool(~val & (label == 0))
    # Hard negatives: held just above a card.
    tr_low = pool(~val & (label == 0) & (meta[:, 0] < 90))
    # Hovering: held 15-90 mm up and still, the frame and the frame 25 ms before alike
    # around the fingertip (the hand's stop over a card before it comes down, or a feint).
    tr_still = pool(~val & (label == 0) & (meta[:, 0] >= 15) & (meta[:, 0] <= 90) & (stillness(crops) < STILL_DIFF))
    print(f"hovering, still: {len(tr_still)}", flush=True)
    print(f"train: {len(tr_pos)} pressing ({len(tr_card)} on a card), {len(tr_neg)} above ({len(tr_low)} under 90 mm); "
          f"validation: {int((val & (label == 1)).sum())} pressing, {int((val & (label == 0)).sum())} above",
          flush=True)
    net = ContactNet(channels)

    def batch_loss():
        n_pos = args.batch // 2
        n_low = args.batch // 4
        n_still = int(round(args.batch * args.still_share))
        idx = np.concatenate([rng.choice(tr_card, n_pos * 2 // 3), rng.choice(tr_pos, n_pos - n_pos * 2 // 3),
                              rng.choice(tr_low, n_low - n_still // 2),
                              rng.choice(tr_still, n_still) if n_still else np.zeros(0, dtype=np.int64),
                              rng.choice(tr_neg, args.batch - n_pos - n_low - (n_still - n_still // 2))])
        x = torch.from_numpy(np.stack([augment(crops[i], meta[i], rng, ctx=None if ctx is None else ctx[i]) for i in idx]))
        y = torch.from_numpy(label[idx].astype(np.float32))[:, None]
        return F.binary_cross_entropy_with_logits(net(x), y)

    fit(net, args, batch_loss)
    vi = np.where(val)[0]
    p = 1.0 / (1.0 + np.exp(-predict(net, crops, meta, vi, rng, ctx)))
    lv, zv, cv_ = label[vi], meta[vi, 0], meta[vi, 1]
    sv = (lv == 0) & (zv >= 15) & (zv <= 90) & (stillness(crops[vi]) < STILL_DIFF)
    print(f"validation crops centred on found fingertips: {int((meta[vi, 8] > 0).sum())}")
    for thr in (0.3, 0.5, 0.7, 0.9):
        tp = ((p >= thr) & (lv == 1)).sum()
        tpc = ((p >= thr) & (lv == 1) & (cv_ > 0)).sum()
        fp_low = ((p >= thr) & (lv == 0) & (zv < 90)).sum()
        fp = ((p >= thr) & (lv == 0)).sum()
        print(f"validation p>={thr}: pressing found {tp}/{(lv == 1).sum()} (on a card {tpc}/{((lv == 1) & (cv_ > 0)).sum()}), "
              f"above taken as pressing {fp}/{(lv == 0).sum()} ({fp_low}/{((lv == 0) & (zv < 90)).sum()} under 90 mm, "
              f"{((p >= thr) & sv).sum()}/{sv.sum()} hovering still)")
    export(net, channels, args.out, "crop", "contact")


def train_point(args):
    """The point network (`contact-point.onnx`): from the same nine planes around a
    fingertip found pressing, where the pressing (middle) fingertip lies, in input pixels
    from the square's centre (2 mm each). Trained on the pressing crops centred on the
    labelled fingertip, moved to the index or ring fingertip and jittered as the found
    fingertip lies."""
    torch.manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    random.seed(SEED)
    torch.set_num_threads(int(os.environ.get("THREADS", "1")))
    crops, meta, label, _ = load(args.data, False, args.above_mm)
    val = np.isin(meta[:, 7].astype(int), list(VAL_SEEDS))
    hires = np.isin(meta[:, 7].astype(int), list(HIRES_SEEDS))
    labelled = (label == 1) & (meta[:, 8] == 0)
    tr = np.concatenate([np.where(~val & labelled)[0]] + [np.where(~val & labelled & hires)[0]] * 2)
    vi = np.where(val & labelled)[0]
    print(f"point: train {len(tr)} pressing crops, validation {len(vi)}", flush=True)
    net = ContactNet(CHANNELS, outputs=2)

    def batch_loss():
        idx = rng.choice(tr, args.batch)
        xs, ys = zip(*[augment(crops[i], meta[i], rng, point=True) for i in idx])
        x, y = torch.from_numpy(np.stack(xs)), torch.from_numpy(np.stack(ys))
        return F.smooth_l1_loss(net(x), y)

    fit(net, args, batch_loss)
    vrng = np.random.default_rng(SEED + 1)
    with torch.no_grad():
        got, want = [], []
        for k in range(0, len(vi), 256):
            xs, ys = zip(*[augment(crops[i], meta[i], vrng, train=False, point=True) for i in vi[k:k + 256]])
            got.append(net(torch.from_numpy(np.stack(xs))).numpy())
            want.append(np.stack(ys))
    got, want = np.concatenate(got), np.concatenate(want)
    err = np.linalg.norm(got - want, axis=1) * MM_PER_PX
    before = np.linalg.norm(want, axis=1) * MM_PER_PX
    print(f"validation ({len(vi)} crops centred near the middle, index or ring fingertip): the pressing fingertip "
          f"{np.median(before):.1f} mm from the centre (p90 {np.percentile(before, 90):.1f}), "
          f"from the point found {np.median(err):.1f} mm (p90 {np.percentile(err, 90):.1f})")
    export(net, CHANNELS, args.out, "crop", "point")


if __name__ == "__main__":
    main()

//! The network's output maps -> the hands in one frame: which player and which hand (the
//! map it is found in), its outline, its fingertips and where it presses at table height.
//! Knows nothing of the field: `perceive` adds what the field says (inside, which card).

use super::model::{Maps, OUT_H_CELLS, OUT_W_CELLS};
use super::HandsError;
use crate::rules::model::{CardRef, Hand, Player};
use opencv::core::{self, Mat, Point, Rect, Size, Vector};
use opencv::imgproc;
use opencv::prelude::*;
use serde::Serialize;

/// The four (player, hand) pairs a hand can be, each given to one hand a frame at most.
pub const SLOTS: [(Player, Hand); 4] = [
    (Player::A, Hand::Left),
    (Player::A, Hand::Right),
    (Player::B, Hand::Left),
    (Player::B, Hand::Right),
];
/// The network's output channels.
const MASK_MAP: usize = 0;
const PLAYER_A_MAP: usize = 1;
const LEFT_MAP: usize = 2;
const THUMB_MAP: usize = 3;
const TIP_MAP: usize = 4;
const OFFSET_X_MAP: usize = 5;
const OFFSET_Y_MAP: usize = 6;
const CONTACT_MAP: usize = 7;

/// A hand is reported when its mask covers at least this many cells (an 8 px cell in a
/// 1280 px frame; a whole hand is about 200).
pub const MIN_HAND_CELLS: i32 = 12;
/// A region is a hand when the mask's mean probability over it is at least this.
pub const MIN_HAND_CONF: f64 = 0.6;
/// A fingertip peak needs at least this probability.
pub const TIP_MIN_P: f32 = 0.1;
/// At most this many fingertips a hand.
pub const MAX_TIPS: usize = 5;
/// Fine raster for outlines: cells are split this many times each way.
const OUTLINE_UPSAMPLE: i32 = 8;
/// The outline is drawn where the mask's logit crosses this (p 0.98), not 0: the mask
/// was trained with hand cells weighted four times and a Dice term, which both lift its
/// edge, so at p 0.5 outlines came out a third larger than the hand (area ratio 1.34 on
/// tuning recordings 9102, 9202 and 9303). Against the labelled outlines of tuning
/// recordings clean-9105, realistic-9205 and hard-9305, the IoU medians at logit 2, 3,
/// 4, 5 and 6 were 0.84/0.85/0.82, 0.87/0.87/0.85, 0.87/0.89/0.87, 0.87/0.89/0.86 and
/// 0.85/0.88/0.83 (docs/hands.md).
const OUTLINE_MIN_LOGIT: f64 = 4.0;
/// The hand's size (`perceive::HAND_MIN_CARD_FACES`) and where it lies for the judge's
/// sweep are asked of the outline at logit 2 (p 0.88), the one reported before, on which
/// they were measured: asked of the tighter outline, rulings moved where a fingertip
/// rests on a card (docs/hands.md, "the reach at p 0.8, the outline at p 0.98").
const BODY_OUTLINE_LOGIT: f64 = 2.0;
/// The field's questions (the reach into the playing area, where a hand points) and its
/// box from run to run are answered on the outline where a cell half covered by a hand
/// lies: with hand cells weighted w = 4 in the mask's loss (`MASK_POS_WEIGHT` in
/// train/train.py), the loss there is least at p w/(1+w), logit ln w (p 0.8).
/// The Dice term lifts the edge further, so this is the least the level should be; it
/// stays under the sure outline's, whose fingertips fall short. At even odds the reach
/// came out a median 2.3 mm too far for hands within 40 mm of the line (the twelve
/// tuning recordings 9105-9308), so `enter` came early and `leave` late; at this level
/// 0.6 mm (docs/hands.md, "the reach at p 0.8, the outline at p 0.98").
const REACH_OUTLINE_LOGIT: f64 = 2.0 * std::f64::consts::LN_2;

/// One visible hand in one frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HandObs {
    pub player: Player,
    pub hand: Hand,
    /// The player's lead hand (13-2), from the layout; `None` when not yet known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lead: Option<bool>,
    /// Fingertips in frame pixels (as decoded, lens distortion included): each peak of
    /// the fingertip map placed between cells by its own shape (`subcell_peak`).
    pub fingertips_px: Vec<[f64; 2]>,
    /// Convex outline, wrist to fingertips, in frame pixels.
    pub outline_px: Vec<[f64; 2]>,
    /// The outline the field and the run-to-run following work on (the reach into the
    /// playing area, where the hand points, its box): the mask's edge at
    /// `REACH_OUTLINE_LOGIT`, which lies farther out than `outline_px` (empty: use
    /// `body_outline`).
    #[serde(skip)]
    pub reach_outline_px: Vec<[f64; 2]>,
    /// The outline at `BODY_OUTLINE_LOGIT` with the fingertips: the hand's size and where
    /// it lies for the judge (empty: use `outline_px`).
    #[serde(skip)]
    pub body_outline_px: Vec<[f64; 2]>,
    /// The outline projected onto the tatami overlaps the playing area (contract 2).
    pub inside: bool,
    /// How far the outline reaches into the playing area, mm (negative: short of it).
    pub reach_mm: f64,
    /// Probability that a fingertip presses at table height, and where.
    pub contact_p: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contact_px: Option<[f64; 2]>,
    /// The card pressed, when the contact point is on one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contact: Option<CardRef>,
    /// Mean mask probability over the hand.
    pub conf: f64,
    /// How often the network has read this hand as left and as right, over the runs it
    /// has been followed through (`perceive::keep_identity`).
    #[serde(skip)]
    pub hand_votes: [u32; 2],
}

/// The hands of one frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HandFrame {
    pub frame: usize,
    pub t_s: f64,
    pub hands: Vec<HandObs>,
}

fn sigmoid(v: f32) -> f32 {
    1.0 / (1.0 + (-v).exp())
}

/// Where a peak of heat map `c` at cell (`x`, `y`) lies, in cell coordinates (cell
/// centres at integer + 0.5). The maps were trained towards a Gaussian around each point,
/// so the log of their probability is a parabola about it: one through the peak and its
/// two neighbours along each axis gives the point between cells. Where a neighbour is
/// missing (the map's edge) or the three do not bend down, that axis keeps the offset
/// maps' reading, which lies further off (docs/hands.md, "fingertips placed between
/// cells").
fn subcell_peak(m: &Maps, c: usize, x: usize, y: usize) -> [f64; 2] {
    let log_p = |x: usize, y: usize| -> f64 {
        let v = f64::from(m.at(c, x, y));
        // ln(sigmoid(v)) = -softplus(-v), in the form that stays finite for any v.
        -((-v).max(0.0) + (-v.abs()).exp().ln_1p())
    };
    // The vertex of the parabola through three neighbouring values, in cells from the
    // middle one; none unless they bend down.
    let vertex = |before: f64, here: f64, after: f64| -> Option<f64> {
        let bend = before - 2.0 * here + after;
        (bend < 0.0).then(|| 0.5 * (before - after) / bend)
    };
    let here = log_p(x, y);
    let [ox, oy] = offset_peak(m, x, y);
    let at_x = (x > 0 && x + 1 < OUT_W_CELLS)
        .then(|| vertex(log_p(x - 1, y), here, log_p(x + 1, y)))
        .flatten()
        .map_or(ox, |d| x as f64 + 0.5 + d);
    let at_y = (y > 0 && y + 1 < OUT_H_CELLS)
        .then(|| vertex(log_p(x, y - 1), here, log_p(x, y + 1)))
        .flatten()
        .map_or(oy, |d| y as f64 + 0.5 + d);
    [at_x, at_y]
}

/// Where the offset maps place the point of a peak at cell (`x`, `y`), in cell
/// coordinates.
fn offset_peak(m: &Maps, x: usize, y: usize) -> [f64; 2] {
    [
        x as f64 + 0.5 + f64::from(m.at(OFFSET_X_MAP, x, y)),
        y as f64 + 0.5 + f64::from(m.at(OFFSET_Y_MAP, x, y)),
    ]
}

/// Cell-space peaks of a map above `min_p`: local maxima over the 3 x 3 neighbourhood.
fn peaks(m: &Maps, c: usize, min_p: f32) -> Vec<(usize, usize, f32)> {
    let min_logit = (min_p / (1.0 - min_p)).ln();
    let mut out = Vec::new();
    for y in 0..OUT_H_CELLS {
        for x in 0..OUT_W_CELLS {
            let v = m.at(c, x, y);
            if v < min_logit {
                continue;
            }
            let mut best = true;
            'n: for dy in -1i32..=1 {
                for dx in -1i32..=1 {
                    let (nx, ny) = (x as i32 + dx, y as i32 + dy);
                    if (dx, dy) == (0, 0)
                        || nx < 0
                        || ny < 0
                        || nx >= OUT_W_CELLS as i32
                        || ny >= OUT_H_CELLS as i32
                    {
                        continue;
                    }
                    let w = m.at(c, nx as usize, ny as usize);
                    // ties go to the first in scan order
                    if w > v || (w == v && (ny, nx) < (y as i32, x as i32)) {
                        best = false;
                        break 'n;
                    }
                }
            }
            if best {
                out.push((x, y, sigmoid(v)));
            }
        }
    }
    out
}

/// A region of the hand mask: its label (1-based in the labels image), bounding box and
/// cell count.
type MaskRegion = (i32, Rect, i32);

/// The hands as regions of the hand mask: the labels image and each region, largest
/// first.
fn hand_regions(mask: &[f32]) -> Result<(Mat, Vec<MaskRegion>), HandsError> {
    let mut bin = Mat::new_rows_cols_with_default(
        OUT_H_CELLS as i32,
        OUT_W_CELLS as i32,
        core::CV_8U,
        core::Scalar::all(0.0),
    )?;
    {
        let b = bin.data_bytes_mut()?;
        for (i, v) in mask.iter().enumerate() {
            if *v > 0.0 {
                b[i] = 255;
            }
        }
    }
    let (mut labels, mut stats, mut cents) = (Mat::default(), Mat::default(), Mat::default());
    let n = imgproc::connected_components_with_stats(
        &bin,
        &mut labels,
        &mut stats,
        &mut cents,
        8,
        core::CV_32S,
    )?;
    let mut out = Vec::new();
    for l in 1..n {
        let area = *stats.at_2d::<i32>(l, imgproc::CC_STAT_AREA)?;
        if area < MIN_HAND_CELLS {
            continue;
        }
        let r = Rect::new(
            *stats.at_2d::<i32>(l, imgproc::CC_STAT_LEFT)?,
            *stats.at_2d::<i32>(l, imgproc::CC_STAT_TOP)?,
            *stats.at_2d::<i32>(l, imgproc::CC_STAT_WIDTH)?,
            *stats.at_2d::<i32>(l, imgproc::CC_STAT_HEIGHT)?,
        );
        out.push((l, r, area));
    }
    out.sort_by_key(|(_, _, a)| -a);
    Ok((labels, out))
}

/// A region's cells sure of their player: the player map's probability at least this
/// for A, at most one less this for B.
pub const SPLIT_SURE_P: f32 = 0.8;

/// Two players' hands touching in the image (both over one card) are one region of the
/// mask; the player map still tells them apart cell by cell. A region holding two sure
/// parts, each of at least `MIN_HAND_CELLS` cells sure of its player
/// (`SPLIT_SURE_P`), is split where the player map crosses even odds: its cells read
/// as B's become a region of their own. Regions stay largest first.
fn split_by_player(
    labels: &mut [i32],
    regions: Vec<MaskRegion>,
    player_a: &[f32],
) -> Vec<MaskRegion> {
    let mut next = labels.iter().copied().max().unwrap_or(0) + 1;
    let mut out = Vec::with_capacity(regions.len());
    for (l, r, area) in regions {
        let (mut sure_a, mut sure_b) = (0, 0);
        for (li, pa) in labels.iter().zip(player_a) {
            if *li == l {
                let p = sigmoid(*pa);
                if p >= SPLIT_SURE_P {
                    sure_a += 1;
                } else if p <= 1.0 - SPLIT_SURE_P {
                    sure_b += 1;
                }
            }
        }
        if sure_a < MIN_HAND_CELLS || sure_b < MIN_HAND_CELLS {
            out.push((l, r, area));
            continue;
        }
        let mut boxes = [(i32::MAX, i32::MAX, -1, -1, 0); 2];
        for (i, (li, pa)) in labels.iter_mut().zip(player_a).enumerate() {
            if *li != l {
                continue;
            }
            let k = usize::from(sigmoid(*pa) < 0.5);
            if k == 1 {
                *li = next;
            }
            let (x, y) = ((i % OUT_W_CELLS) as i32, (i / OUT_W_CELLS) as i32);
            let b = &mut boxes[k];
            *b = (b.0.min(x), b.1.min(y), b.2.max(x), b.3.max(y), b.4 + 1);
        }
        // Each part holds its sure cells, so it is a hand's size (`MIN_HAND_CELLS`).
        for (label, (x0, y0, x1, y1, n)) in [l, next].into_iter().zip(boxes) {
            out.push((label, Rect::new(x0, y0, x1 - x0 + 1, y1 - y0 + 1), n));
        }
        next += 1;
    }
    out.sort_by_key(|(_, _, a)| -a);
    out
}

/// The convex outlines of one region at sub-cell precision, one for each of `levels`:
/// the mask logits around it (other regions pushed down) resampled eight times finer
/// once, thresholded at the level, hull of the largest contour. Cell coordinates.
fn outline_cells<const N: usize>(
    mask: &[f32],
    labels: &[i32],
    label: i32,
    r: Rect,
    levels: [f64; N],
) -> Result<[Vec<[f64; 2]>; N], HandsError> {
    let pad = 2;
    let x0 = (r.x - pad).max(0);
    let y0 = (r.y - pad).max(0);
    let x1 = (r.x + r.width + pad).min(OUT_W_CELLS as i32);
    let y1 = (r.y + r.height + pad).min(OUT_H_CELLS as i32);
    let (w, h) = (x1 - x0, y1 - y0);
    let mut crop = Mat::new_rows_cols_with_default(h, w, core::CV_32F, core::Scalar::all(0.0))?;
    {
        let c = crop.data_typed_mut::<f32>()?;
        for y in 0..h {
            for x in 0..w {
                let i = ((y0 + y) as usize) * OUT_W_CELLS + (x0 + x) as usize;
                let other = labels[i] != 0 && labels[i] != label;
                c[(y * w + x) as usize] = if other { -10.0 } else { mask[i] };
            }
        }
    }
    let mut fine = Mat::default();
    imgproc::resize(
        &crop,
        &mut fine,
        Size::new(w * OUTLINE_UPSAMPLE, h * OUTLINE_UPSAMPLE),
        0.0,
        0.0,
        imgproc::INTER_LINEAR,
    )?;
    let k = OUTLINE_UPSAMPLE as f64;
    let mut out: [Vec<[f64; 2]>; N] = std::array::from_fn(|_| Vec::new());
    for (o, level) in out.iter_mut().zip(levels) {
        // 255 where the upsampled logit passes the level, in one pass to 8 bits.
        let mut bin8 = Mat::default();
        core::compare(&fine, &core::Scalar::all(level), &mut bin8, core::CMP_GT)?;
        let mut contours: Vector<Vector<Point>> = Vector::new();
        imgproc::find_contours(
            &bin8,
            &mut contours,
            imgproc::RETR_EXTERNAL,
            imgproc::CHAIN_APPROX_SIMPLE,
            Point::new(0, 0),
        )?;
        let mut best: Option<(f64, Vector<Point>)> = None;
        for c in contours.iter() {
            let a = imgproc::contour_area(&c, false)?;
            if best.as_ref().is_none_or(|(ba, _)| a > *ba) {
                best = Some((a, c));
            }
        }
        let Some((_, c)) = best else {
            continue;
        };
        let mut hull: Vector<Point> = Vector::new();
        imgproc::convex_hull(&c, &mut hull, false, true)?;
        *o = hull
            .iter()
            .map(|p| {
                [
                    x0 as f64 + (p.x as f64 + 0.5) / k,
                    y0 as f64 + (p.y as f64 + 0.5) / k,
                ]
            })
            .collect();
    }
    Ok(out)
}

/// The region a cell belongs to, or the region of a neighbour within two cells (tips
/// and contact points lie on a hand's outline).
fn region_at(labels: &[i32], x: usize, y: usize) -> i32 {
    let mut best = (i32::MAX, 0);
    for dy in -2i32..=2 {
        for dx in -2i32..=2 {
            let (nx, ny) = (x as i32 + dx, y as i32 + dy);
            if nx < 0 || ny < 0 || nx >= OUT_W_CELLS as i32 || ny >= OUT_H_CELLS as i32 {
                continue;
            }
            let l = labels[ny as usize * OUT_W_CELLS + nx as usize];
            let d = dx * dx + dy * dy;
            if l != 0 && d < best.0 {
                best = (d, l);
            }
        }
    }
    best.1
}

/// The hands the network sees in one frame (player, hand, outline, fingertips, contact
/// point); `inside`, `contact` and `lead` are left for the field to fill. A hand is a
/// region of the hand mask; its player and hand are what its own cells say (mean
/// probability of "player A" and of "left hand" over the region), each of the four
/// (player, hand) pairs given to one region at most (the most likely assignment).
pub fn decode(m: &Maps) -> Result<Vec<HandObs>, HandsError> {
    let mask = m.map(MASK_MAP);
    let (labels_mat, regions) = hand_regions(mask)?;
    let mut labels = labels_mat.data_typed::<i32>()?.to_vec();
    let regions = split_by_player(&mut labels, regions, m.map(PLAYER_A_MAP));
    let labels = labels.as_slice();
    // Mean probabilities over each region: player A, left hand, and the mask itself.
    let mut p_a = vec![0f64; regions.len()];
    let mut p_left = vec![0f64; regions.len()];
    let mut conf = vec![0f64; regions.len()];
    for (ri, (l, _, area)) in regions.iter().enumerate() {
        for (i, li) in labels.iter().enumerate() {
            if li == l {
                p_a[ri] += sigmoid(m.map(PLAYER_A_MAP)[i]) as f64;
                p_left[ri] += sigmoid(m.map(LEFT_MAP)[i]) as f64;
                conf[ri] += sigmoid(mask[i]) as f64;
            }
        }
        p_a[ri] /= *area as f64;
        p_left[ri] /= *area as f64;
        conf[ri] /= *area as f64;
    }
    // Regions the network is unsure of as a whole are not hands.
    let keep: Vec<bool> = conf.iter().map(|c| *c >= MIN_HAND_CONF).collect();
    let pick = |v: Vec<f64>| -> Vec<f64> {
        v.into_iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(x, _)| x)
            .collect()
    };
    let (p_a, mut p_left, conf) = (pick(p_a), pick(p_left), pick(conf));
    let regions: Vec<(i32, Rect, i32)> = regions
        .into_iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(r, _)| r)
        .collect();
    let label_index = |l: i32| regions.iter().position(|(rl, _, _)| *rl == l);
    let mut tips: Vec<Vec<(f32, [f64; 2])>> = vec![Vec::new(); regions.len()];
    for (x, y, p) in peaks(m, TIP_MAP, TIP_MIN_P) {
        if let Some(ri) = label_index(region_at(labels, x, y)) {
            let [cx, cy] = subcell_peak(m, TIP_MAP, x, y);
            tips[ri].push((p, m.cell_to_px(cx, cy)));
        }
    }
    // Left or right from the hand's own shape where it shows: seen from above, palm
    // down, a left hand's thumb lies clockwise of its pointing direction (wrist to
    // fingertips) in the image, a right hand's anticlockwise. The mask's own guess
    // stands where the thumb or the fingers are not seen.
    let mut thumb: Vec<(f32, Option<[f64; 2]>)> = vec![(0.0, None); regions.len()];
    for (x, y, p) in peaks(m, THUMB_MAP, TIP_MIN_P) {
        if let Some(ri) = label_index(region_at(labels, x, y)) {
            if p > thumb[ri].0 {
                let [cx, cy] = subcell_peak(m, THUMB_MAP, x, y);
                thumb[ri] = (p, Some(m.cell_to_px(cx, cy)));
            }
        }
    }
    for (ri, (l, _, _)) in regions.iter().enumerate() {
        let Some(th) = thumb[ri].1 else { continue };
        let fingers: Vec<[f64; 2]> = tips[ri]
            .iter()
            .map(|(_, t)| *t)
            .filter(|t| dist2(*t, th) > (6.0 / m.scale).powi(2))
            .collect();
        if fingers.len() < 2 {
            continue;
        }
        let n = fingers.len() as f64;
        let fc = [
            fingers.iter().map(|t| t[0]).sum::<f64>() / n,
            fingers.iter().map(|t| t[1]).sum::<f64>() / n,
        ];
        // The wrist: the region's cell farthest from the fingers.
        let mut wrist = None;
        let mut far = -1.0;
        for (i, li) in labels.iter().enumerate() {
            if li == l {
                let c = m.cell_to_px(
                    (i % OUT_W_CELLS) as f64 + 0.5,
                    (i / OUT_W_CELLS) as f64 + 0.5,
                );
                let d = dist2(c, fc);
                if d > far {
                    far = d;
                    wrist = Some(c);
                }
            }
        }
        let Some(w) = wrist else { continue };
        let fwd = [fc[0] - w[0], fc[1] - w[1]];
        let side = [th[0] - fc[0], th[1] - fc[1]];
        let cross = fwd[0] * side[1] - fwd[1] * side[0];
        let norm = (fwd[0].hypot(fwd[1]) * side[0].hypot(side[1])).max(1e-9);
        // A clear side (sine of the angle over 0.3) overrides the mask's guess.
        if (cross / norm).abs() > 0.3 {
            p_left[ri] = if cross > 0.0 { 0.97 } else { 0.03 };
        }
    }
    let slot_of = assign_slots(&p_a, &p_left);
    let mut contact: Vec<(f64, Option<[f64; 2]>)> = vec![(0.0, None); regions.len()];
    for (x, y, p) in peaks(m, CONTACT_MAP, 0.05) {
        if let Some(ri) = label_index(region_at(labels, x, y)) {
            if (p as f64) > contact[ri].0 {
                contact[ri] = (p as f64, Some(m.cell_to_px(x as f64 + 0.5, y as f64 + 0.5)));
            }
        }
    }
    let mut out = Vec::new();
    for (ri, (l, r, _)) in regions.iter().enumerate() {
        let Some(s) = slot_of[ri] else {
            continue; // a fifth hand: the four pairs are taken
        };
        let [outline, reach_outline, body_outline] = outline_cells(
            mask,
            labels,
            *l,
            *r,
            [OUTLINE_MIN_LOGIT, REACH_OUTLINE_LOGIT, BODY_OUTLINE_LOGIT],
        )?
        .map(|o| {
            o.into_iter()
                .map(|[x, y]| m.cell_to_px_clipped(x, y))
                .collect()
        });
        let mut t = std::mem::take(&mut tips[ri]);
        t.sort_by(|a, b| b.0.total_cmp(&a.0));
        t.truncate(MAX_TIPS);
        let fingertips: Vec<[f64; 2]> = t.into_iter().map(|(_, p)| p).collect();
        let outline = hull_with(outline, &fingertips, m)?;
        let body_outline = hull_with(body_outline, &fingertips, m)?;
        // The contact point is the fingertip nearest the contact peak, when one is close.
        let (cp, cpt) = contact[ri];
        let contact_px = cpt.map(|c| {
            fingertips
                .iter()
                .copied()
                .min_by(|a, b| dist2(*a, c).total_cmp(&dist2(*b, c)))
                .filter(|t| dist2(*t, c) <= (3.0 * 2.0 / m.scale).powi(2))
                .unwrap_or(c)
        });
        let (player, hand) = SLOTS[s];
        out.push(HandObs {
            player,
            hand,
            lead: None,
            fingertips_px: fingertips,
            outline_px: outline,
            reach_outline_px: reach_outline,
            body_outline_px: body_outline,
            inside: false,
            reach_mm: f64::NEG_INFINITY,
            contact_p: cp,
            contact_px,
            contact: None,
            conf: conf[ri],
            hand_votes: [0; 2],
        });
    }
    Ok(out)
}

/// The outline grown to take in the hand's fingertips (kept inside the frame): a finger
/// is narrower than the mask's cells, so where the mask is sure it stops short of the
/// tips, and the tips lead a hand into the playing area.
fn hull_with(
    outline: Vec<[f64; 2]>,
    tips: &[[f64; 2]],
    m: &Maps,
) -> Result<Vec<[f64; 2]>, HandsError> {
    if outline.len() < 3 || tips.is_empty() {
        return Ok(outline);
    }
    let pts: Vector<core::Point2f> = outline
        .iter()
        .chain(tips)
        .map(|p| {
            let [x, y] = m.clip_px(*p);
            core::Point2f::new(x as f32, y as f32)
        })
        .collect();
    let mut hull: Vector<core::Point2f> = Vector::new();
    imgproc::convex_hull(&pts, &mut hull, false, true)?;
    Ok(hull.iter().map(|p| [p.x as f64, p.y as f64]).collect())
}

impl HandObs {
    /// The outline the field's questions and the following from run to run are asked
    /// of: the one at `REACH_OUTLINE_LOGIT` where the decoder gave it, else
    /// `body_outline`.
    pub fn field_outline_px(&self) -> &[[f64; 2]] {
        if self.reach_outline_px.len() >= 3 {
            &self.reach_outline_px
        } else {
            self.body_outline()
        }
    }

    /// The outline the hand's size and where it lies are asked of: the one at
    /// `BODY_OUTLINE_LOGIT` where the decoder gave it, else the one reported.
    pub fn body_outline(&self) -> &[[f64; 2]] {
        if self.body_outline_px.len() >= 3 {
            &self.body_outline_px
        } else {
            &self.outline_px
        }
    }
}

fn dist2(a: [f64; 2], b: [f64; 2]) -> f64 {
    (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)
}

/// The most likely one-to-one assignment of regions (largest first, at most four get
/// one) to the four (player, hand) pairs, from each region's probabilities.
fn assign_slots(p_a: &[f64], p_left: &[f64]) -> Vec<Option<usize>> {
    let n = p_a.len().min(4);
    let logp = |r: usize, s: usize| -> f64 {
        let (player, hand) = SLOTS[s];
        let pa = p_a[r].clamp(1e-4, 1.0 - 1e-4);
        let pl = p_left[r].clamp(1e-4, 1.0 - 1e-4);
        let a = if player == Player::A { pa } else { 1.0 - pa };
        let l = if hand == Hand::Left { pl } else { 1.0 - pl };
        a.ln() + l.ln()
    };
    let mut best: (f64, Vec<Option<usize>>) = (f64::NEG_INFINITY, vec![None; p_a.len()]);
    // Every injective map of the first n regions into the four pairs (at most 24).
    let mut perm = [0usize, 1, 2, 3];
    let mut visit = |perm: &[usize; 4]| {
        let score: f64 = (0..n).map(|r| logp(r, perm[r])).sum();
        if score > best.0 {
            let mut v = vec![None; p_a.len()];
            for r in 0..n {
                v[r] = Some(perm[r]);
            }
            best = (score, v);
        }
    };
    permutations(&mut perm, 0, &mut visit);
    best.1
}

fn permutations(a: &mut [usize; 4], k: usize, f: &mut dyn FnMut(&[usize; 4])) {
    if k == a.len() {
        f(a);
        return;
    }
    for i in k..a.len() {
        a.swap(k, i);
        permutations(a, k + 1, f);
        a.swap(k, i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hands::model::OUT_MAPS;

    #[test]
    fn each_pair_goes_to_one_hand_by_what_its_cells_say() {
        // Two hands both look most like A's right; the one more sure of "left" gets it.
        let p_a = [0.9, 0.8, 0.1];
        let p_left = [0.3, 0.45, 0.6];
        let s = assign_slots(&p_a, &p_left);
        assert_eq!(s[0], Some(1), "A right");
        assert_eq!(s[1], Some(0), "A left: A right is taken");
        assert_eq!(s[2], Some(2), "B left");
    }

    #[test]
    fn regions_are_the_large_blobs_of_the_mask_largest_first() {
        let mut mask = vec![-5.0; OUT_W_CELLS * OUT_H_CELLS];
        let mut fill = |x0: usize, y0: usize, w: usize, h: usize| {
            for y in y0..y0 + h {
                for x in x0..x0 + w {
                    mask[y * OUT_W_CELLS + x] = 3.0;
                }
            }
        };
        fill(10, 10, 5, 4); // 20 cells
        fill(50, 30, 10, 10); // 100 cells
        fill(100, 60, 3, 3); // 9 cells: too small for a hand
        let (labels, regions) = hand_regions(&mask).unwrap();
        let labels = labels.data_typed::<i32>().unwrap();
        let sizes: Vec<(i32, i32, i32)> =
            regions.iter().map(|(_, r, a)| (r.x, r.width, *a)).collect();
        assert_eq!(sizes, vec![(50, 10, 100), (10, 5, 20)]);
        assert_eq!(labels[35 * OUT_W_CELLS + 55], regions[0].0);
        assert_eq!(labels[0], 0);
    }

    #[test]
    fn a_peak_lies_where_the_gaussian_it_was_trained_towards_is_centred() {
        // A fingertip map as trained: a Gaussian of 0.8 cells around the tip, here at
        // cell coordinates (40.8, 20.25) (cell centres at integer + 0.5), with the offset
        // maps saying something else (0.0), as an untrained offset would.
        let n = OUT_W_CELLS * OUT_H_CELLS;
        let mut data = vec![-12.0f32; OUT_MAPS * n];
        let (tx, ty) = (40.8, 20.25);
        for y in 0..OUT_H_CELLS {
            for x in 0..OUT_W_CELLS {
                let d2 = (x as f64 + 0.5 - tx).powi(2) + (y as f64 + 0.5 - ty).powi(2);
                let p = (-d2 / (2.0 * 0.8f64.powi(2))).exp().clamp(1e-6, 1.0 - 1e-6);
                data[(TIP_MAP * OUT_H_CELLS + y) * OUT_W_CELLS + x] = (p / (1.0 - p)).ln() as f32;
            }
        }
        for c in [OFFSET_X_MAP, OFFSET_Y_MAP] {
            data[c * n..(c + 1) * n].fill(0.0);
        }
        let m = Maps {
            data,
            scale: 0.25,
            frame_px: [1280.0, 720.0],
        };
        let found = peaks(&m, TIP_MAP, TIP_MIN_P);
        assert_eq!(found.len(), 1);
        let (x, y, _) = found[0];
        assert_eq!((x, y), (40, 20));
        let [cx, cy] = subcell_peak(&m, TIP_MAP, x, y);
        // The peak is a probability near 1, where the log is no longer a parabola, so the
        // fit comes within a tenth of a cell (0.8 px of a 1280 px frame), not exactly.
        assert!((cx - tx).abs() < 0.1 && (cy - ty).abs() < 0.1, "{cx} {cy}");
        // At the map's edge the missing neighbour leaves that axis to the offset map.
        let [ex, _] = subcell_peak(&m, TIP_MAP, 0, y);
        assert_eq!(ex, 0.5);
    }

    #[test]
    fn a_fifth_hand_gets_no_pair() {
        let p = [0.5; 5];
        let s = assign_slots(&p, &p);
        assert_eq!(s.iter().filter(|x| x.is_some()).count(), 4);
        assert_eq!(s[4], None);
        let mut got: Vec<usize> = s.iter().flatten().copied().collect();
        got.sort();
        assert_eq!(got, vec![0, 1, 2, 3]);
    }

    #[test]
    fn one_region_two_players_sure_of_their_cells_is_split_between_them() {
        let mut mask = vec![-5.0; OUT_W_CELLS * OUT_H_CELLS];
        let mut player_a = vec![0.0; OUT_W_CELLS * OUT_H_CELLS];
        for y in 20..30 {
            for x in 40..60 {
                mask[y * OUT_W_CELLS + x] = 3.0;
                // A's hand on the left, B's on the right, unsure where they meet.
                player_a[y * OUT_W_CELLS + x] = match x {
                    40..=47 => 3.0,
                    48..=49 => 0.2,
                    _ => -3.0,
                };
            }
        }
        let (labels, regions) = hand_regions(&mask).unwrap();
        let mut labels = labels.data_typed::<i32>().unwrap().to_vec();
        assert_eq!(regions.len(), 1);
        let split = split_by_player(&mut labels, regions.clone(), &player_a);
        let parts: Vec<(i32, i32, i32)> =
            split.iter().map(|(_, r, a)| (r.x, r.width, *a)).collect();
        assert_eq!(parts, vec![(40, 10, 100), (50, 10, 100)]);
        assert_ne!(labels[25 * OUT_W_CELLS + 45], labels[25 * OUT_W_CELLS + 55]);
        assert_eq!(labels[25 * OUT_W_CELLS + 45], split[0].0);
        assert_eq!(labels[25 * OUT_W_CELLS + 55], split[1].0);

        // One player's hand, its player map unsure in places: left whole.
        for y in 20..30 {
            for x in 40..60 {
                player_a[y * OUT_W_CELLS + x] = if x < 55 { 3.0 } else { 0.1 };
            }
        }
        let (labels, regions) = hand_regions(&mask).unwrap();
        let mut labels = labels.data_typed::<i32>().unwrap().to_vec();
        let kept = split_by_player(&mut labels, regions.clone(), &player_a);
        assert_eq!(kept, regions);
    }
}

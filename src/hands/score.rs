//! Hands and their events compared with a simulated recording's labels
//! (`labels/frames.jsonl`) and truth (`truth.jsonl`): the numbers of the hand model's
//! proof (docs/hands.md). Reads only what `perceive` wrote and what the simulator wrote.

use super::decode::HandFrame;
use super::HandsError;
use crate::rules::model::{Event, EventKind, Hand, Player};
use opencv::core::{self, Mat, Point, Scalar, Vector};
use opencv::imgproc;
use opencv::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A labelled hand counts as visible when its wrist and at least three fingertips are in
/// the frame (the rule the MediaPipe baseline was measured with).
const VISIBLE_MIN_TIPS: usize = 3;
/// A detection matches a labelled hand when their outlines overlap this much...
const MATCH_MIN_IOU: f64 = 0.3;
/// ...or its fingertips lie this close to the label's (px).
const MATCH_TIP_PX: f64 = 30.0;
/// A found touch must lie within this of the true one to be paired at all (s).
const TOUCH_PAIR_S: f64 = 0.1;

/// The simulator's label of one hand (the fields scored).
#[derive(Debug, Clone, Deserialize)]
pub struct LabelHand {
    pub player: Player,
    pub hand: Hand,
    pub height_mm: f64,
    #[serde(default)]
    pub touching: Vec<u8>,
    pub inside: bool,
    pub keypoints_px: BTreeMap<String, [f64; 2]>,
    pub outline_px: Vec<[f64; 2]>,
}

/// The simulator's label of one frame (the fields scored).
#[derive(Debug, Clone, Deserialize)]
pub struct LabelFrame {
    pub frame: usize,
    pub t_s: f64,
    pub hands: Vec<LabelHand>,
}

const TIPS: [&str; 5] = ["thumb", "index", "middle", "ring", "little"];

/// The proof's numbers for one recording.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HandScore {
    pub frames_scored: usize,
    pub visible_hands: usize,
    pub hands_found: usize,
    pub recall: f64,
    pub false_hands: usize,
    pub iou_median: f64,
    pub iou_p10: f64,
    pub tip_err_median_px: f64,
    pub tip_err_p90_px: f64,
    pub player_right: usize,
    pub player_right_frac: f64,
    pub hand_right_frac: f64,
    pub true_touches: usize,
    pub touches_found: usize,
    pub touch_recall: f64,
    pub touch_err_p95_ms: f64,
    pub touch_err_max_ms: f64,
    pub touch_within_frame: usize,
    pub false_touches: usize,
    pub minutes_hands_over_cards: f64,
    pub false_touches_per_min: f64,
    pub true_enter_leave: usize,
    pub enter_leave_within_frame: usize,
    pub enter_leave_frac: f64,
    pub false_enter_leave: usize,
    pub missed_touches: Vec<String>,
    pub false_touch_list: Vec<String>,
}

fn quantile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v[i]
}

fn in_frame(p: [f64; 2], size: [u32; 2]) -> bool {
    p[0] >= 0.0 && p[1] >= 0.0 && p[0] < size[0] as f64 && p[1] < size[1] as f64
}

/// Intersection over union of two polygons, rasterised at a quarter pixel.
pub fn polygon_iou(a: &[[f64; 2]], b: &[[f64; 2]]) -> Result<f64, HandsError> {
    if a.len() < 3 || b.len() < 3 {
        return Ok(0.0);
    }
    let all = a.iter().chain(b.iter());
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for p in all {
        x0 = x0.min(p[0]);
        y0 = y0.min(p[1]);
        x1 = x1.max(p[0]);
        y1 = y1.max(p[1]);
    }
    const K: f64 = 2.0;
    let w = (((x1 - x0) * K).ceil() as i32 + 2).max(1);
    let h = (((y1 - y0) * K).ceil() as i32 + 2).max(1);
    let raster = |poly: &[[f64; 2]]| -> Result<Mat, HandsError> {
        let mut m = Mat::new_rows_cols_with_default(h, w, core::CV_8U, Scalar::all(0.0))?;
        let pts: Vector<Point> = poly
            .iter()
            .map(|p| {
                Point::new(
                    ((p[0] - x0) * K * 16.0).round() as i32,
                    ((p[1] - y0) * K * 16.0).round() as i32,
                )
            })
            .collect();
        let mut v: Vector<Vector<Point>> = Vector::new();
        v.push(pts);
        imgproc::fill_poly(
            &mut m,
            &v,
            Scalar::all(1.0),
            imgproc::LINE_8,
            4,
            Point::new(0, 0),
        )?;
        Ok(m)
    };
    let (ma, mb) = (raster(a)?, raster(b)?);
    let (da, db) = (ma.data_bytes()?, mb.data_bytes()?);
    let (mut inter, mut uni) = (0usize, 0usize);
    for (x, y) in da.iter().zip(db) {
        inter += (*x & *y) as usize;
        uni += (*x | *y) as usize;
    }
    Ok(if uni == 0 {
        0.0
    } else {
        inter as f64 / uni as f64
    })
}

/// Scores the frames the network ran on against their labels, and the events against
/// the truth. `fps` gives the frame period for "within one frame".
pub fn score(
    labels: &BTreeMap<usize, LabelFrame>,
    ours: &[HandFrame],
    truth: &[Event],
    events: &[Event],
    image_size: [u32; 2],
    fps: f64,
) -> Result<HandScore, HandsError> {
    let mut s = HandScore::default();
    let mut ious = Vec::new();
    let mut tip_errs = Vec::new();
    let mut hand_right = 0usize;
    for f in ours {
        let Some(lf) = labels.get(&f.frame) else {
            continue;
        };
        s.frames_scored += 1;
        let mut used = vec![false; f.hands.len()];
        for lh in &lf.hands {
            let tips: Vec<[f64; 2]> = TIPS
                .iter()
                .filter_map(|k| lh.keypoints_px.get(*k).copied())
                .filter(|p| in_frame(*p, image_size))
                .collect();
            let wrist_in = lh
                .keypoints_px
                .get("wrist")
                .is_some_and(|p| in_frame(*p, image_size));
            if !wrist_in || tips.len() < VISIBLE_MIN_TIPS {
                // Partly in view (a hand resting at the frame's edge): not scored, but a
                // detection of it is not a false hand either.
                for (i, o) in f.hands.iter().enumerate() {
                    if !used[i] && polygon_iou(&lh.outline_px, &o.outline_px)? > 0.0 {
                        used[i] = true;
                    }
                }
                continue;
            }
            s.visible_hands += 1;
            // The best-overlapping detection, whatever player it was given.
            let mut best: Option<(usize, f64)> = None;
            for (i, o) in f.hands.iter().enumerate() {
                if used[i] {
                    continue;
                }
                let iou = polygon_iou(&lh.outline_px, &o.outline_px)?;
                let tip_ok = o.fingertips_px.iter().any(|t| {
                    tips.iter().any(|l| {
                        ((t[0] - l[0]).powi(2) + (t[1] - l[1]).powi(2)).sqrt() < MATCH_TIP_PX
                    })
                });
                if (iou >= MATCH_MIN_IOU || tip_ok) && best.is_none_or(|(_, b)| iou > b) {
                    best = Some((i, iou));
                }
            }
            let Some((i, iou)) = best else {
                continue;
            };
            used[i] = true;
            s.hands_found += 1;
            let o = &f.hands[i];
            if o.player == lh.player {
                s.player_right += 1;
            }
            if o.hand == lh.hand {
                hand_right += 1;
            }
            ious.push(iou);
            for l in &tips {
                if let Some(d) = o
                    .fingertips_px
                    .iter()
                    .map(|t| ((t[0] - l[0]).powi(2) + (t[1] - l[1]).powi(2)).sqrt())
                    .min_by(|a, b| a.total_cmp(b))
                {
                    tip_errs.push(d);
                }
            }
        }
        s.false_hands += used.iter().filter(|u| !**u).count();
    }
    s.recall = s.hands_found as f64 / s.visible_hands.max(1) as f64;
    s.player_right_frac = s.player_right as f64 / s.hands_found.max(1) as f64;
    s.hand_right_frac = hand_right as f64 / s.hands_found.max(1) as f64;
    s.iou_median = quantile(&mut ious, 0.5);
    s.iou_p10 = quantile(&mut ious, 0.1);
    s.tip_err_median_px = quantile(&mut tip_errs, 0.5);
    s.tip_err_p90_px = quantile(&mut tip_errs, 0.9);

    // Touches: same player, hand and poem, nearest in time.
    let frame_s = 1.0 / fps;
    let is_touch = |e: &Event| matches!(e.what, EventKind::Touch { direct: true, .. });
    let true_touches: Vec<&Event> = truth.iter().filter(|e| is_touch(e)).collect();
    let our_touches: Vec<&Event> = events.iter().filter(|e| is_touch(e)).collect();
    let mut taken = vec![false; our_touches.len()];
    let mut errs = Vec::new();
    for t in &true_touches {
        s.true_touches += 1;
        let found = our_touches
            .iter()
            .enumerate()
            .filter(|(i, o)| {
                !taken[*i] && same_touch(t, o) && (o.t_s - t.t_s).abs() <= TOUCH_PAIR_S
            })
            .min_by(|a, b| (a.1.t_s - t.t_s).abs().total_cmp(&(b.1.t_s - t.t_s).abs()));
        match found {
            Some((i, o)) => {
                taken[i] = true;
                s.touches_found += 1;
                let e = (o.t_s - t.t_s).abs();
                if e <= frame_s {
                    s.touch_within_frame += 1;
                }
                errs.push(e * 1000.0);
            }
            None => s.missed_touches.push(describe(t)),
        }
    }
    s.touch_recall = s.touches_found as f64 / s.true_touches.max(1) as f64;
    s.touch_err_max_ms = errs.iter().copied().fold(0.0, f64::max);
    s.touch_err_p95_ms = quantile(&mut errs, 0.95);
    for (i, o) in our_touches.iter().enumerate() {
        if !taken[i] {
            s.false_touches += 1;
            s.false_touch_list.push(describe(o));
        }
    }
    // Minutes with a hand over the field, from the labels.
    let over = labels
        .values()
        .filter(|f| f.hands.iter().any(|h| h.inside))
        .count();
    s.minutes_hands_over_cards = over as f64 * frame_s / 60.0;
    s.false_touches_per_min = s.false_touches as f64 / s.minutes_hands_over_cards.max(1e-9);

    // Enter and leave: same kind, player and hand, within one frame.
    let key = |e: &Event| match e.what {
        EventKind::Enter { player, hand } => Some((0, player, hand)),
        EventKind::Leave { player, hand } => Some((1, player, hand)),
        _ => None,
    };
    let ours_el: Vec<&Event> = events.iter().filter(|e| key(e).is_some()).collect();
    let mut taken = vec![false; ours_el.len()];
    for t in truth.iter().filter(|e| key(e).is_some()) {
        s.true_enter_leave += 1;
        let found = ours_el
            .iter()
            .enumerate()
            .filter(|(i, o)| !taken[*i] && key(o) == key(t) && (o.t_s - t.t_s).abs() <= frame_s)
            .min_by(|a, b| (a.1.t_s - t.t_s).abs().total_cmp(&(b.1.t_s - t.t_s).abs()));
        if let Some((i, _)) = found {
            taken[i] = true;
            s.enter_leave_within_frame += 1;
        }
    }
    s.false_enter_leave = taken.iter().filter(|t| !**t).count();
    s.enter_leave_frac = s.enter_leave_within_frame as f64 / s.true_enter_leave.max(1) as f64;
    Ok(s)
}

fn same_touch(a: &Event, b: &Event) -> bool {
    match (&a.what, &b.what) {
        (
            EventKind::Touch {
                player: pa,
                hand: ha,
                poem: qa,
                ..
            },
            EventKind::Touch {
                player: pb,
                hand: hb,
                poem: qb,
                ..
            },
        ) => pa == pb && ha == hb && qa == qb,
        _ => false,
    }
}

fn describe(e: &Event) -> String {
    match &e.what {
        EventKind::Touch {
            player,
            hand,
            poem,
            territory,
            ..
        } => format!(
            "{:.4}s {player:?} {hand:?} {}",
            e.t_s,
            crate::rules::model::touched_card_words(*poem, *territory)
        ),
        other => format!("{:.4}s {other:?}", e.t_s),
    }
}

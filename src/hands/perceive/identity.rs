//! Which player and hand a region is, kept from run to run: a region matched to the
//! hand it overlaps or lies nearest in the run before (`keep_identity`), and where a hand
//! points (from its wrist to its fingertips), which outranks that (`pointing_player`),
//! and the side of the field its arm is cut off by the frame's edge on, or the side it
//! lies on wholly, which outrank both (`on_frame_edge`, `side_player`).
//!
//! Reads hand observations only.

use super::fingers::wrist_and_tips;
use crate::hands::decode::HandObs;
use crate::rules::geometry::Pt;
use crate::rules::model::{Hand, Player};

/// Two hands of consecutive runs are the same hand when their boxes overlap this much
/// (intersection over union)...
const SAME_HAND_IOU: f64 = 0.15;
/// ...or their centres lie within this share of their mean box diagonal.
const SAME_HAND_NEAR: f64 = 0.5;
/// The wrist-to-fingertips span and its share along y needed to tell the owner.
const POINTING_MIN_MM: f64 = 60.0;
const POINTING_MIN_COS: f64 = 0.6;

/// A hand's box: its outline's (the field's one where there is one), or its
/// fingertips' when it has no outline.
fn hand_box(h: &HandObs) -> Option<[f64; 4]> {
    let pts = if h.field_outline_px().len() >= 3 {
        h.field_outline_px()
    } else {
        &h.fingertips_px
    };
    if pts.is_empty() {
        return None;
    }
    let mut b = [
        f64::INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
    ];
    for p in pts {
        b[0] = b[0].min(p[0]);
        b[1] = b[1].min(p[1]);
        b[2] = b[2].max(p[0]);
        b[3] = b[3].max(p[1]);
    }
    Some(b)
}

/// How alike two hands' boxes are (0 when they are not the same hand).
fn same_hand_score(a: &HandObs, b: &HandObs) -> f64 {
    let (Some(p), Some(q)) = (hand_box(a), hand_box(b)) else {
        return 0.0;
    };
    let iw = (p[2].min(q[2]) - p[0].max(q[0])).max(0.0);
    let ih = (p[3].min(q[3]) - p[1].max(q[1])).max(0.0);
    let area = |b: &[f64; 4]| (b[2] - b[0]) * (b[3] - b[1]);
    let union = area(&p) + area(&q) - iw * ih;
    let iou = if union > 0.0 { iw * ih / union } else { 0.0 };
    let diag = |b: &[f64; 4]| (b[2] - b[0]).hypot(b[3] - b[1]);
    let d = ((p[0] + p[2] - q[0] - q[2]) / 2.0).hypot((p[1] + p[3] - q[1] - q[3]) / 2.0);
    let near = 1.0 - d / (SAME_HAND_NEAR * (diag(&p) + diag(&q)) / 2.0).max(1.0);
    if iou >= SAME_HAND_IOU || near > 0.0 {
        iou + near.max(0.0)
    } else {
        0.0
    }
}

/// Hands keep who they were in the run just before: each hand of `hands` that is the
/// same as one of `prev` (one to one, best overlap first) takes its player, unless where
/// it points (`pointed`, by index) names the player, and is the hand (left or right) the
/// network has read it as most often while followed (the run before's on a tie); hands
/// new to the view
/// keep the network's reading, moved to the player's free hand when theirs is taken,
/// and are dropped when both of the player's hands are taken.
pub fn keep_identity(
    prev: &[HandObs],
    hands: Vec<HandObs>,
    pointed: &[Option<Player>],
) -> Vec<HandObs> {
    let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
    for (i, h) in hands.iter().enumerate() {
        for (j, p) in prev.iter().enumerate() {
            let s = same_hand_score(h, p);
            if s > 0.0 {
                pairs.push((s, i, j));
            }
        }
    }
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut of_prev: Vec<Option<usize>> = vec![None; hands.len()];
    let mut prev_used = vec![false; prev.len()];
    for (_, i, j) in pairs {
        if of_prev[i].is_none() && !prev_used[j] {
            of_prev[i] = Some(j);
            prev_used[j] = true;
        }
    }
    let mut taken: Vec<(Player, Hand)> = Vec::new();
    let mut out: Vec<HandObs> = Vec::with_capacity(hands.len());
    let mut fresh: Vec<HandObs> = Vec::new();
    for (i, mut h) in hands.into_iter().enumerate() {
        let read = h.hand;
        h.hand_votes[hand_index(read)] += 1;
        match of_prev[i] {
            Some(j) => {
                let p = &prev[j];
                let player = pointed.get(i).copied().flatten().unwrap_or(p.player);
                if player == p.player {
                    h.hand_votes[0] += p.hand_votes[0];
                    h.hand_votes[1] += p.hand_votes[1];
                }
                h.player = player;
                h.hand = match h.hand_votes {
                    [l, r] if l > r => Hand::Left,
                    [l, r] if r > l => Hand::Right,
                    _ if player == p.player => p.hand,
                    _ => read,
                };
                if taken.contains(&(h.player, h.hand)) {
                    h.hand = other_hand(h.hand);
                }
                if !taken.contains(&(h.player, h.hand)) {
                    taken.push((h.player, h.hand));
                    out.push(h);
                }
            }
            None => fresh.push(h),
        }
    }
    fresh.sort_by(|a, b| b.conf.total_cmp(&a.conf));
    for mut h in fresh {
        if taken.contains(&(h.player, h.hand)) {
            h.hand = other_hand(h.hand);
        }
        if !taken.contains(&(h.player, h.hand)) {
            taken.push((h.player, h.hand));
            out.push(h);
        }
    }
    out
}

fn hand_index(h: Hand) -> usize {
    match h {
        Hand::Left => 0,
        Hand::Right => 1,
    }
}

fn other_hand(h: Hand) -> Hand {
    match h {
        Hand::Left => Hand::Right,
        Hand::Right => Hand::Left,
    }
}

/// The player on whose side of the field a region lies wholly, past the playing area's
/// edge (A's at negative y, B's at positive y): a hand resting there, or at the frame's
/// edge with no wrist in view, is that player's. The other player cannot reach there
/// across the whole field; a hand reaching into the far territory lies over the area.
pub fn side_player(outline_mm: &[Pt], area_y0_mm: f64, area_y1_mm: f64) -> Option<Player> {
    if outline_mm.is_empty() {
        None
    } else if outline_mm.iter().all(|p| p.y_mm < area_y0_mm) {
        Some(Player::A)
    } else if outline_mm.iter().all(|p| p.y_mm > area_y1_mm) {
        Some(Player::B)
    } else {
        None
    }
}

/// The points of outline `px` on the edge of a frame of `frame_px` (within `tol_px`):
/// where the frame's edge cuts a region off. Projected onto the tatami and all past one
/// player's edge of the playing area (`side_player` of them), the region is that
/// player's arm: it comes in from its owner's shoulder, and the other player cannot
/// reach across the whole field to the frame's edge beyond it. A hand whose fingertips
/// were found at its wrist's end, where the frame's edge cuts the arm, points the wrong
/// way, and its edge tells the player all the same. Where the frame's edge lies over the
/// area (a camera framing the field tightly), or the region is cut on both sides, it
/// does not tell.
pub fn on_frame_edge(px: &[[f64; 2]], frame_px: [f64; 2], tol_px: f64) -> Vec<[f64; 2]> {
    px.iter()
        .copied()
        .filter(|p| {
            p[0] <= tol_px
                || p[1] <= tol_px
                || p[0] >= frame_px[0] - tol_px
                || p[1] >= frame_px[1] - tol_px
        })
        .collect()
}

/// A hand reaches away from its owner's shoulder: from the wrist (the outline's point
/// farthest from the fingertips) towards the fingertips, +y for A (who sits at negative
/// y), -y for B. `None` when the hand lies too much across the field to tell.
pub fn pointing_player(outline_mm: &[Pt], tips_mm: &[Pt]) -> Option<Player> {
    let (wrist, c) = wrist_and_tips(outline_mm, tips_mm)?;
    let (dx, dy) = (c.x_mm - wrist.x_mm, c.y_mm - wrist.y_mm);
    let len = (dx * dx + dy * dy).sqrt();
    if len < POINTING_MIN_MM || dy.abs() < POINTING_MIN_COS * len {
        return None;
    }
    Some(if dy > 0.0 { Player::A } else { Player::B })
}

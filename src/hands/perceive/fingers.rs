//! A hand's fingers against the cards: the fingertips farthest from the wrist over the
//! cards, looked at first (`tips_to_look_at`), where a finger ends beyond its tip
//! (`finger_ends`), and the field geometry they need (`dist_to_quad`,
//! `polygon_area_mm2`).
//!
//! Pure geometry in field millimetres.

use super::CONTACT_TIPS_MAX;
use crate::rules::geometry::Pt;

/// The contact network looks at a fingertip this close to a card (a fingertip found by the
/// hand network lies some millimetres from the true one).
pub const CONTACT_NEAR_CARD_MM: f64 = 20.0;
/// A fingertip leads a reaching hand into the playing area: the reach is measured to the
/// fingertips pushed out by half a finger's width from the wrist.
pub use crate::rules::geometry::FINGER_HALF_WIDTH_MM;

/// The fingertips the contact network looks at, by index into `tips` (all in field mm):
/// those within `CONTACT_NEAR_CARD_MM` of one of `cards`, farthest from `wrist` first
/// (nearest a card first without one), at most `CONTACT_TIPS_MAX`. A hand comes down on
/// its longest finger;
/// over the cards nearly every fingertip lies on one (distance nil), so the distance to
/// a card cannot rank them. The network's fingertip heat does not either: on the six
/// held-out recordings the fingertip nearest the labelled pressing one was the fourth or
/// fifth by heat in half the pressing frames, and among the three farthest from the
/// wrist in 99%.
pub fn tips_to_look_at<'a>(
    cards: impl Iterator<Item = &'a [Pt; 4]> + Clone,
    wrist: Option<Pt>,
    tips: &[Pt],
) -> Vec<usize> {
    let mut near: Vec<(usize, f64)> = tips
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            cards
                .clone()
                .map(|c| dist_to_quad(*t, c))
                .min_by(f64::total_cmp)
                .filter(|d| *d <= CONTACT_NEAR_CARD_MM)
                .map(|d| (i, d))
        })
        .collect();
    match wrist {
        Some(wrist) => near.sort_by(|a, b| {
            tips[b.0]
                .dist_mm(wrist)
                .total_cmp(&tips[a.0].dist_mm(wrist))
        }),
        None => near.sort_by(|a, b| a.1.total_cmp(&b.1)),
    }
    near.into_iter()
        .take(CONTACT_TIPS_MAX)
        .map(|(i, _)| i)
        .collect()
}

/// Where each finger's outline ends: its fingertip point pushed `FINGER_HALF_WIDTH_MM`
/// further from the wrist (the outline's point farthest from the fingertips).
pub fn finger_ends(outline_mm: &[Pt], tips_mm: &[Pt]) -> Vec<Pt> {
    let Some((wrist, _)) = wrist_and_tips(outline_mm, tips_mm) else {
        return Vec::new();
    };
    tips_mm
        .iter()
        .map(|t| {
            let (dx, dy) = (t.x_mm - wrist.x_mm, t.y_mm - wrist.y_mm);
            let len = (dx * dx + dy * dy).sqrt().max(1e-9);
            Pt::new(
                t.x_mm + dx / len * FINGER_HALF_WIDTH_MM,
                t.y_mm + dy / len * FINGER_HALF_WIDTH_MM,
            )
        })
        .collect()
}

/// The wrist (the outline's point farthest from the fingertips' mean) and that mean.
pub(super) fn wrist_and_tips(outline_mm: &[Pt], tips_mm: &[Pt]) -> Option<(Pt, Pt)> {
    if tips_mm.is_empty() {
        return None;
    }
    let n = tips_mm.len() as f64;
    let c = Pt::new(
        tips_mm.iter().map(|p| p.x_mm).sum::<f64>() / n,
        tips_mm.iter().map(|p| p.y_mm).sum::<f64>() / n,
    );
    let d2 = |p: &Pt| (p.x_mm - c.x_mm).powi(2) + (p.y_mm - c.y_mm).powi(2);
    let wrist = outline_mm.iter().max_by(|a, b| d2(a).total_cmp(&d2(b)))?;
    Some((*wrist, c))
}

/// The area of a simple polygon (shoelace), mm².
pub fn polygon_area_mm2(poly: &[Pt]) -> f64 {
    let n = poly.len();
    let twice: f64 = (0..n)
        .map(|i| {
            let (a, b) = (poly[i], poly[(i + 1) % n]);
            a.x_mm * b.y_mm - b.x_mm * a.y_mm
        })
        .sum();
    twice.abs() / 2.0
}

/// Distance from a point to a convex quadrilateral, 0 inside.
pub fn dist_to_quad(p: Pt, q: &[Pt; 4]) -> f64 {
    let mut inside = true;
    let mut best = f64::INFINITY;
    for i in 0..4 {
        let (a, b) = (q[i], q[(i + 1) % 4]);
        let (ex, ey) = (b.x_mm - a.x_mm, b.y_mm - a.y_mm);
        let (px, py) = (p.x_mm - a.x_mm, p.y_mm - a.y_mm);
        let cross = ex * py - ey * px;
        if cross < 0.0 {
            inside = false;
        }
        let l2 = (ex * ex + ey * ey).max(1e-12);
        let t = ((px * ex + py * ey) / l2).clamp(0.0, 1.0);
        let d = ((px - t * ex).powi(2) + (py - t * ey).powi(2)).sqrt();
        best = best.min(d);
    }
    // The corners may wind either way: inside when all crosses share a sign.
    let mut pos = true;
    for i in 0..4 {
        let (a, b) = (q[i], q[(i + 1) % 4]);
        let cross = (b.x_mm - a.x_mm) * (p.y_mm - a.y_mm) - (b.y_mm - a.y_mm) * (p.x_mm - a.x_mm);
        if cross > 0.0 {
            pos = false;
        }
    }
    if inside || pos {
        0.0
    } else {
        best
    }
}

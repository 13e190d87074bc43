//! Motions in the field frame: a card's pose, a hand's keyed track (minimum-jerk moves
//! between keys, with a height above the tatami) and a card's segments (resting, carried,
//! sliding, flying). Pure: answers where a hand or card is at any instant, nothing more.

use crate::rules::geometry::{FieldGeometry, Pt};
use crate::rules::model::*;
use crate::sim::body::{hand_shape, Appearance, HandShape};

/// A card's position: centre and physical rotation (0 = text upright for player A;
/// player B's cards lie near 180 degrees).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose {
    pub x_mm: f64,
    pub y_mm: f64,
    pub angle_deg: f64,
}

/// A hand's target at a moment: middle fingertip position and height.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HandKey {
    pub t_s: f64,
    pub tip: Pt,
    pub z_mm: f64,
}

/// One hand's motion over the whole recording.
#[derive(Debug, Clone, PartialEq)]
pub struct HandTrack {
    pub player: Player,
    pub hand: Hand,
    pub lead: bool,
    pub shoulder: Pt,
    pub ready: Pt,
    pub keys: Vec<HandKey>,
}

/// Minimum-jerk profile: smooth start and stop, as human reaches are.
fn min_jerk(u: f64) -> f64 {
    let u = u.clamp(0.0, 1.0);
    u * u * u * (10.0 - 15.0 * u + 6.0 * u * u)
}

impl HandTrack {
    /// Fingertip and height at time t.
    pub fn at(&self, t: f64) -> (Pt, f64) {
        let k = &self.keys;
        let i = k.partition_point(|key| key.t_s <= t);
        if i == 0 {
            return (k[0].tip, k[0].z_mm);
        }
        if i >= k.len() {
            let l = &k[k.len() - 1];
            return (l.tip, l.z_mm);
        }
        let (a, b) = (&k[i - 1], &k[i]);
        let s = min_jerk((t - a.t_s) / (b.t_s - a.t_s).max(1e-12));
        (
            Pt::new(
                a.tip.x_mm + (b.tip.x_mm - a.tip.x_mm) * s,
                a.tip.y_mm + (b.tip.y_mm - a.tip.y_mm) * s,
            ),
            a.z_mm + (b.z_mm - a.z_mm) * s,
        )
    }

    /// True when the hand is still between `t0` and `t1`.
    pub fn still(&self, t0: f64, t1: f64) -> bool {
        let i0 = self.keys.partition_point(|k| k.t_s <= t0);
        let i1 = self.keys.partition_point(|k| k.t_s <= t1);
        if i0 == i1 && (i0 == 0 || i0 == self.keys.len()) {
            return true;
        }
        let lo = i0.saturating_sub(1);
        let hi = i1.min(self.keys.len() - 1);
        let first = &self.keys[lo];
        self.keys[lo..=hi]
            .iter()
            .all(|k| k.tip == first.tip && k.z_mm == first.z_mm)
    }

    pub(super) fn last(&self) -> HandKey {
        self.keys[self.keys.len() - 1]
    }

    pub fn free_at(&self) -> f64 {
        self.last().t_s
    }

    pub(super) fn hold(&mut self, t: f64) {
        let l = self.last();
        if t > l.t_s {
            self.keys.push(HandKey { t_s: t, ..l });
        }
    }

    /// The fingertip at `tip`, `z_mm` above the tatami, at `t_s`.
    pub(super) fn key(&mut self, t_s: f64, tip: Pt, z_mm: f64) {
        self.keys.push(HandKey { t_s, tip, z_mm });
    }

    pub(super) fn move_to(&mut self, t0: f64, t1: f64, tip: Pt, z_mm: f64) {
        self.hold(t0);
        let t1 = t1.max(self.last().t_s + 1e-3);
        self.key(t1, tip, z_mm);
    }

    pub fn shape(&self, t: f64, look: &Appearance) -> HandShape {
        let (tip, z) = self.at(t);
        hand_shape(look, tip, z, self.shoulder, self.hand == Hand::Right)
    }
}

/// How a card moves during one stretch of time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CardMotion {
    Rest(Pose),
    /// Struck or flicked: decelerating from `from` to `to`.
    Slide {
        t0: f64,
        t1: f64,
        from: Pose,
        to: Pose,
    },
    /// Held under a fingertip of hand `hand`, at a fixed offset from the tip.
    Carried {
        hand: usize,
        t0: f64,
        t1: f64,
        dx_mm: f64,
        dy_mm: f64,
        angle0: f64,
        angle1: f64,
    },
}

/// One card's motion over the recording: each motion holds from its start time.
#[derive(Debug, Clone, PartialEq)]
pub struct CardTrack {
    pub poem: u8,
    pub segs: Vec<(f64, CardMotion)>,
}

impl CardTrack {
    fn seg_at(&self, t: f64) -> &CardMotion {
        let i = self.segs.partition_point(|(s, _)| *s <= t);
        &self.segs[i.saturating_sub(1)].1
    }

    pub fn pose(&self, t: f64, hands: &[HandTrack]) -> Pose {
        match *self.seg_at(t) {
            CardMotion::Rest(p) => p,
            CardMotion::Slide { t0, t1, from, to } => {
                let u = ((t - t0) / (t1 - t0).max(1e-12)).clamp(0.0, 1.0);
                let s = 1.0 - (1.0 - u) * (1.0 - u);
                Pose {
                    x_mm: from.x_mm + (to.x_mm - from.x_mm) * s,
                    y_mm: from.y_mm + (to.y_mm - from.y_mm) * s,
                    angle_deg: from.angle_deg + (to.angle_deg - from.angle_deg) * s,
                }
            }
            CardMotion::Carried {
                hand,
                t0,
                t1,
                dx_mm,
                dy_mm,
                angle0,
                angle1,
            } => {
                let (tip, _) = hands[hand].at(t);
                let s = min_jerk((t - t0) / (t1 - t0).max(1e-12));
                Pose {
                    x_mm: tip.x_mm + dx_mm,
                    y_mm: tip.y_mm + dy_mm,
                    angle_deg: angle0 + (angle1 - angle0) * s,
                }
            }
        }
    }

    /// The hand carrying the card at t, if any.
    pub fn carried_by(&self, t: f64) -> Option<usize> {
        match *self.seg_at(t) {
            CardMotion::Carried { hand, .. } => Some(hand),
            _ => None,
        }
    }

    /// True when the card does not move at all between t0 and t1.
    pub fn still(&self, t0: f64, t1: f64, hands: &[HandTrack]) -> bool {
        let i0 = self
            .segs
            .partition_point(|(s, _)| *s <= t0)
            .saturating_sub(1);
        let i1 = self
            .segs
            .partition_point(|(s, _)| *s <= t1)
            .saturating_sub(1);
        if i0 != i1 {
            return false;
        }
        match self.segs[i0].1 {
            CardMotion::Rest(_) => true,
            CardMotion::Slide { t0: s0, t1: s1, .. } => t1 <= s0 || t0 >= s1,
            CardMotion::Carried { hand, .. } => hands[hand].still(t0, t1),
        }
    }

    /// The corners of the card at t.
    pub fn corners(&self, t: f64, hands: &[HandTrack], geom: &FieldGeometry) -> [Pt; 4] {
        let p = self.pose(t, hands);
        geom.card_corners(p.x_mm, p.y_mm, p.angle_deg)
    }
}

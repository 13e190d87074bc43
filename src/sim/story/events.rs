//! The truth events found from the motions themselves: touches from fingertips at table
//! height, `enter`/`leave` from the hand's outline projected onto the tatami, merged with
//! the designed events (outs, sends, places) in time order, times refined by bisection.

use super::gestures::Planner;
use super::motion::{CardTrack, HandTrack};
use super::{round_t, EVENT_SCAN_S, EVENT_TIME_EPS_S};
use crate::rules::geometry::{FieldGeometry, Pt};
use crate::rules::model::*;
use crate::sim::body::{
    convex_hull, dist_to_polygon, project_to_tatami, Appearance, CONTACT_Z_MM, TIP_CONTACT_R_MM,
};
use std::collections::BTreeSet;

/// The events of the motions between t0 and t1, in time order: touches and enter/leave
/// found from the motions, plus the designed events (outs, sends, places, card strikes).
pub(super) fn events_between(pl: &Planner, t0: f64, t1: f64) -> Vec<Event> {
    let end = pl
        .hands
        .iter()
        .map(|h| h.free_at())
        .fold(0.0f64, f64::max)
        .min(t1);
    let mut evs: Vec<Event> = pl
        .designed
        .iter()
        .filter(|e| e.t_s >= t0 && e.t_s < t1)
        .cloned()
        .collect();
    evs.extend(found_events(
        &pl.hands,
        &pl.cards,
        &pl.geom,
        &pl.looks,
        pl.camera_mm,
        t0,
        end + 0.01,
    ));
    evs.sort_by(|a, b| {
        a.t_s
            .total_cmp(&b.t_s)
            .then(kind_rank(a).cmp(&kind_rank(b)))
    });
    evs
}

fn kind_rank(e: &Event) -> u8 {
    match e.what {
        EventKind::Enter { .. } => 0,
        EventKind::Touch { .. } => 1,
        EventKind::Out { .. } => 2,
        EventKind::Send { .. } => 3,
        EventKind::Place { .. } => 4,
        EventKind::Leave { .. } => 5,
        _ => 6,
    }
}

/// Is a hand's projected outline inside the playing area at t (7-1 note: air included)?
pub fn hand_inside(
    h: &HandTrack,
    look: &Appearance,
    geom: &FieldGeometry,
    cam: [f64; 3],
    t: f64,
) -> bool {
    geom.hand_is_inside(&hand_outline(h, look, cam, t))
}

/// The outline of a hand (wrist to fingertips) projected onto the tatami from the camera.
pub fn hand_outline(h: &HandTrack, look: &Appearance, cam: [f64; 3], t: f64) -> Vec<Pt> {
    let shape = h.shape(t, look);
    let pts: Vec<Pt> = shape
        .outline_points()
        .into_iter()
        .map(|p| project_to_tatami(cam, p))
        .collect();
    convex_hull(&pts)
}

/// Cards a hand's fingertip is touching at t.
pub fn contacts(
    hi: usize,
    hands: &[HandTrack],
    cards: &[CardTrack],
    geom: &FieldGeometry,
    t: f64,
) -> Vec<u8> {
    let (tip, z) = hands[hi].at(t);
    let mut v = Vec::new();
    for c in cards {
        if c.carried_by(t) == Some(hi) {
            v.push(c.poem);
            continue;
        }
        if z > CONTACT_Z_MM {
            continue;
        }
        let p = c.pose(t, hands);
        if (p.x_mm - tip.x_mm).abs() > 60.0 || (p.y_mm - tip.y_mm).abs() > 60.0 {
            continue;
        }
        let corners = geom.card_corners(p.x_mm, p.y_mm, p.angle_deg);
        if dist_to_polygon(tip, &corners) <= TIP_CONTACT_R_MM {
            v.push(c.poem);
        }
    }
    v
}

fn found_events(
    hands: &[HandTrack],
    cards: &[CardTrack],
    geom: &FieldGeometry,
    looks: &[Appearance; 2],
    cam: [f64; 3],
    t0: f64,
    t1: f64,
) -> Vec<Event> {
    let mut out = Vec::new();
    for (hi, h) in hands.iter().enumerate() {
        let look = &looks[h.player.index()];
        let bisect = |mut lo: f64, mut hi_t: f64, f: &dyn Fn(f64) -> bool| -> f64 {
            // f(lo) is false, f(hi_t) is true.
            while hi_t - lo > EVENT_TIME_EPS_S {
                let mid = 0.5 * (lo + hi_t);
                if f(mid) {
                    hi_t = mid;
                } else {
                    lo = mid;
                }
            }
            hi_t
        };
        let mut t = t0;
        let mut inside = hand_inside(h, look, geom, cam, t);
        let mut touching: BTreeSet<u8> = contacts(hi, hands, cards, geom, t).into_iter().collect();
        while t < t1 {
            let tn = t + EVENT_SCAN_S;
            if h.still(t, tn) && cards.iter().all(|c| c.carried_by(tn) != Some(hi)) {
                // Nothing changes for a still hand unless a card moves under it.
                let moving_near = cards.iter().any(|c| !c.still(t, tn, hands));
                if !moving_near {
                    t = tn;
                    continue;
                }
            }
            let now_inside = hand_inside(h, look, geom, cam, tn);
            if now_inside != inside {
                let want = now_inside;
                let te = bisect(t, tn, &|x| hand_inside(h, look, geom, cam, x) == want);
                let what = if want {
                    EventKind::Enter {
                        player: h.player,
                        hand: h.hand,
                    }
                } else {
                    EventKind::Leave {
                        player: h.player,
                        hand: h.hand,
                    }
                };
                out.push(Event::new(round_t(te), what));
                inside = now_inside;
            }
            let now: BTreeSet<u8> = contacts(hi, hands, cards, geom, tn).into_iter().collect();
            for &poem in now.difference(&touching) {
                let te = bisect(t, tn, &|x| {
                    contacts(hi, hands, cards, geom, x).contains(&poem)
                });
                out.push(Event::new(
                    round_t(te),
                    EventKind::Touch {
                        player: h.player,
                        hand: h.hand,
                        poem: Some(poem),
                        territory: None,
                        direct: true,
                    },
                ));
            }
            touching = now;
            t = tn;
        }
    }
    out
}

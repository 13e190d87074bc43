//! A card that went out of the playing area: the crossing carried back from a sighting
//! past the line (`back_to_line_s`) or timed between partial sightings at the angles the
//! card turned to (`crossing_on_turn`), the card followed out there until it lies still
//! (`follow_leaving`), and, for one found lying out after it went unseen, its `out`
//! timed on its course (`out_on_course`, `out_while_unseen`).
//!
//! Reads the flight's last sightings and the field's lines. It never follows a card in
//! the playing area (that is `flight`).

use super::blob::{self, SeenBlob};
use super::flight::{nearest_mod_180, Flight, Turn};
use super::{CardTracker, Phase, TrackError, LOST_FRAMES, SETTLE_FRAMES};
use crate::rules::geometry::{FieldGeometry, Pt};
use crate::rules::model::{By, Event, EventKind, Hand};
use opencv::core::Mat;
use serde::{Deserialize, Serialize};

/// A card followed out of the area lies out for good this long after it started moving,
/// s, even if its paper never held still for `SETTLE_FRAMES` (a shaking camera moves
/// the paper's outline by more than `SETTLE_DRIFT_MM`): a card is out in well under a
/// second, and following one lying out cost every frame after it.
pub const LEAVING_MAX_S: f64 = 3.0;
/// A card timed out on its course after it went unseen (`out_on_course`) is timed to
/// within this share of the time from its last sighting (one standard deviation).
pub const OUT_COURSE_DOUBT: f64 = 0.5;
/// ...and never to better than this, s.
pub const OUT_COURSE_ERR_MIN_S: f64 = 0.002;
/// A card followed out of the area keeps the outlines of this many of its last sightings,
/// to be known paper once it is no longer followed (a tenth of a second at 240 fps).
pub const LEAVING_OUTLINES: usize = 24;

/// A card that went out of sight from its place or in flight: since when it was
/// unseen there and the hand that drove it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Left {
    pub(super) from_s: f64,
    pub(super) by: By,
    pub(super) hand: Option<Hand>,
    /// Where and how fast it was last seen in flight, when it was followed.
    #[serde(default)]
    pub(super) lost: Option<LostAt>,
}

/// A card in flight at its last sighting before it went unseen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(super) struct LostAt {
    t_s: f64,
    at_mm: [f64; 2],
    angle_deg: f64,
    /// Its speed then, mm/s, when learnt (`SPEED_STEPS_MIN`).
    speed_mm_s: Option<f64>,
}

impl CardTracker {
    /// How long ago a card seen wholly out (outline `pts`, field mm, `margin` past the
    /// line) crossed the line, from its speed (`vel_px`, decoded pixels a frame): its
    /// outline moved back by whole frames until the margin is nil, s.
    pub(super) fn back_to_line_s(
        &self,
        b: &SeenBlob,
        pts: &[Pt],
        angle_deg: f64,
        margin: f64,
        vel_px: Option<[f64; 2]>,
    ) -> Result<Option<f64>, TrackError> {
        let Some(v) = vel_px else { return Ok(None) };
        let now = self.map.point_to_field(b.centre_px)?;
        let before = self
            .map
            .point_to_field([b.centre_px[0] - v[0], b.centre_px[1] - v[1]])?;
        let (dx, dy) = (now.x_mm - before.x_mm, now.y_mm - before.y_mm);
        let shifted: Vec<Pt> = pts
            .iter()
            .map(|p| Pt::new(p.x_mm - dx, p.y_mm - dy))
            .collect();
        let size = &self.geometry.size;
        let earlier = blob::out_margin_mm(
            &shifted,
            angle_deg,
            size.card_w_mm,
            size.card_h_mm,
            &self.geometry.playing_area(),
        ) + self.border_mm;
        let per_frame = margin - earlier;
        if per_frame <= 1e-6 {
            return Ok(None);
        }
        Ok(Some(margin / per_frame / self.fps))
    }

    /// When a card proven out now (at `t_s`, its margin `margin_now` when its whole face
    /// shows, its visible points `pts_now`) crossed the line, from its sightings since
    /// the last one proven in the area (`Flight::since_inside`) while its face showed
    /// only partly, measured on its turn (`crossing_from_sightings`). `None` without a
    /// turning rate, or seen whole now and never partly since (the turn adds nothing).
    pub(super) fn crossing_on_turn(
        &self,
        f: &Flight,
        t_s: f64,
        margin_now: Option<f64>,
        pts_now: &[Pt],
    ) -> Option<(f64, f64)> {
        let turn = f.turn.filter(|w| w.rate_deg_s.is_some())?;
        let (m0, t0) = f.prev_margin?;
        if margin_now.is_some() && f.since_inside.is_empty() {
            return None;
        }
        let now = match margin_now {
            Some(m) => Seen::Whole(m),
            None => Seen::Partly(blob::reach_past_lines_mm(
                pts_now,
                &self.geometry.playing_area(),
            )),
        };
        let size = &self.geometry.size;
        crossing_from_sightings(
            &turn,
            (t0, f.prev_full.then_some(m0)),
            f.since_inside
                .iter()
                .map(|(t, reach)| (*t, Seen::Partly(*reach)))
                .chain(std::iter::once((t_s, now))),
            [size.card_w_mm, size.card_h_mm],
            self.border_mm,
        )
    }

    /// Follows card `i`, out of the area, until it lies still or is lost; then its paper
    /// is known.
    pub(super) fn follow_leaving(
        &mut self,
        i: usize,
        frame: usize,
        bgr: &Mat,
        claimed: &mut Vec<[f64; 4]>,
    ) -> Result<(), TrackError> {
        let Phase::Leaving(mut f) = self.cards[i].phase.clone() else {
            return Ok(());
        };
        match self.sighting(i, &f, frame, bgr, claimed)? {
            Some(b) => {
                claimed.push(b.bbox_px());
                f.learn_speed(&b);
                if self.lies_still(&mut f, &b)? {
                    f.settled += 1;
                }
                f.unseen = 0;
                f.recent_outlines.push_back(b.outline_px.clone());
                if f.recent_outlines.len() > LEAVING_OUTLINES {
                    f.recent_outlines.pop_front();
                }
                f.last = b;
            }
            None => f.unseen += 1,
        }
        let long_gone = frame.saturating_sub(f.start_frame) as f64 > LEAVING_MAX_S * self.fps;
        if f.settled >= SETTLE_FRAMES || f.unseen > LOST_FRAMES || long_gone {
            // Where it was last seen, its paper is known from now on: a card lost later
            // must not find it there. Its paper may show there in pieces, one a frame
            // (its ink splits it under a noisy light): the piece last seen, known alone,
            // left the rest to be taken for the next card a hand lifted, and ruled out
            // where it lay. So every outline of its last sightings is known (the last
            // of them is `f.last`, unless it was never seen after it went out).
            if f.recent_outlines.is_empty() {
                self.blobs.rebase(&f.last.outline_px)?;
            }
            for o in &f.recent_outlines {
                self.blobs.rebase(o)?;
            }
            self.cards[i].phase = Phase::Out;
        } else {
            self.cards[i].phase = Phase::Leaving(f);
        }
        Ok(())
    }

    /// How a flight left sight: last seen still reaching into the playing area at
    /// `from_s` (its start when it never was), and where and how fast it was last seen.
    pub(super) fn left_of(&self, f: &Flight) -> Result<Left, TrackError> {
        let at = self.map.point_to_field(f.last.centre_px)?;
        let speed_mm_s = f
            .speed_px()
            .map(|v| v[0].hypot(v[1]) * self.fps / self.px_per_mm());
        let t_s = f
            .unseen_from_s
            .map_or(f.start_t_s, |t| t - 1.0 / self.fps)
            .max(f.start_t_s);
        Ok(Left {
            lost: Some(LostAt {
                t_s,
                at_mm: [at.x_mm, at.y_mm],
                angle_deg: f.angle_deg,
                speed_mm_s,
            }),
            from_s: f.prev_margin.map_or(f.start_t_s, |(_, t)| t),
            by: f.by,
            hand: f.hand,
        })
    }
}

/// How long after its last sighting in flight (`lost`) a card found lying out at `found`
/// (field mm, turned `found_deg`) went wholly out, s: slowing evenly from its speed
/// then to rest where it lies (a card sliding on tatami is slowed by friction), it
/// crossed where its outline first lay wholly outside on the way. `None` when its speed
/// was not learnt, or it moved too little to tell.
pub(super) fn out_on_course(
    geometry: &FieldGeometry,
    lost: &LostAt,
    found: Pt,
    found_deg: f64,
) -> Option<f64> {
    let v0 = lost.speed_mm_s.filter(|v| *v > 1.0)?;
    let (dx, dy) = (found.x_mm - lost.at_mm[0], found.y_mm - lost.at_mm[1]);
    let len = dx.hypot(dy);
    if len < 1.0 {
        return None;
    }
    let angle = nearest_mod_180(found_deg, lost.angle_deg);
    let out_at = |s: f64| {
        let k = s / len;
        geometry.card_is_out(
            lost.at_mm[0] + k * dx,
            lost.at_mm[1] + k * dy,
            lost.angle_deg + k * (angle - lost.angle_deg),
        )
    };
    if out_at(0.0) || !out_at(len) {
        return None;
    }
    // The first point of the course wholly out, to a tenth of a millimetre.
    let (mut inside, mut out) = (0.0, len);
    while out - inside > 0.1 {
        let mid = 0.5 * (inside + out);
        if out_at(mid) {
            out = mid;
        } else {
            inside = mid;
        }
    }
    // Even slowing from v0 to rest over `len`: s(t) = v0 t - a t^2 / 2, a = v0^2 / 2 len.
    let a = v0 * v0 / (2.0 * len);
    Some((v0 - (v0 * v0 - 2.0 * a * out).max(0.0).sqrt()) / a)
}

/// The `unseen` span of a card found lying out, and its `out`: on its course from its
/// last sighting in flight when that is known (`course_s` after it, within the span),
/// otherwise in the middle of the span.
pub(super) fn out_while_unseen(
    poem: u8,
    l: &Left,
    found_s: f64,
    course_s: Option<f64>,
) -> [Event; 2] {
    let from_s = l.from_s.min(found_s);
    let (t_s, t_err_s) = match l.lost.zip(course_s) {
        Some((lost, c)) => (
            (lost.t_s + c).clamp(from_s, found_s),
            (OUT_COURSE_DOUBT * c).max(OUT_COURSE_ERR_MIN_S),
        ),
        None => ((from_s + found_s) / 2.0, (found_s - from_s) / 2.0),
    };
    let mut out = Event::new(
        t_s,
        EventKind::Out {
            poem,
            by: l.by,
            hand: l.hand,
        },
    );
    out.t_err_s = t_err_s;
    let unseen = Event::unseen(
        from_s,
        found_s,
        format!("card {poem} while it left the playing area"),
    );
    [unseen, out]
}

/// How much of a card a sighting showed, for its out margin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Seen {
    /// Its whole face: its margin, at the angle measured then.
    Whole(f64),
    /// Part of it: how far that part reached past each line
    /// (`blob::reach_past_lines_mm`).
    Partly([f64; 4]),
}

/// When a card crossed the line, from the sighting last proven in the area (time, and
/// its margin when its whole face showed) and the sightings after it (`seen`, in time
/// order, the last proven out). A partly seen card's margin at the angle its whole face
/// was last seen at runs ahead of the truth when it spins (its extent across the line
/// grows as it turns towards the diagonal), and the middle of the span is no better, so
/// each partial sighting's margin is measured at the angle the card had turned to by
/// then, on at the rate its whole face was last seen turning (`turn`). The crossing lies
/// between the last sighting at or short of the line and the first past it, by their
/// margins' linear course (the middle of the two when the first has none), and the span
/// between them is returned with it. `None` without a rate, or when no sighting's
/// margin so measured lies past the line. `card_mm` is the card's width and height;
/// `border_mm` how far the card reaches beyond its visible face.
pub(super) fn crossing_from_sightings(
    turn: &Turn,
    proven_in: (f64, Option<f64>),
    seen: impl IntoIterator<Item = (f64, Seen)>,
    card_mm: [f64; 2],
    border_mm: f64,
) -> Option<(f64, f64)> {
    let mut before = proven_in;
    for (t, s) in seen {
        let m = match s {
            Seen::Whole(m) => m,
            Seen::Partly(reach) => {
                blob::margin_from_reach_mm(&reach, turn.angle_at(t)?, card_mm[0], card_mm[1])
                    + border_mm
            }
        };
        if m > 0.0 {
            let at = match before.1 {
                Some(mb) => before.0 + (t - before.0) * (-mb) / (m - mb),
                None => (before.0 + t) / 2.0,
            };
            return Some((at, t - before.0));
        }
        before = (t, Some(m));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::geometry::Rect;

    /// A card 52 x 73 mm crossing the area's side line (x = 435) at 1.2 m/s along +x
    /// while it turns at 900 degrees a second from upright, seen at 240 fps: whole at
    /// the first two frames, then only its half beyond its centre (the rest under the
    /// hand). Its points along its outline, the half seen or all, and its true margin.
    struct Spinning;

    impl Spinning {
        const FPS: f64 = 240.0;
        const RATE_DEG_S: f64 = 900.0;
        fn area() -> Rect {
            Rect {
                x0_mm: -435.0,
                y0_mm: -254.0,
                x1_mm: 435.0,
                y1_mm: 254.0,
            }
        }
        fn centre(t: f64) -> (f64, f64) {
            (380.0 + 1200.0 * t, 0.0)
        }
        fn angle(t: f64) -> f64 {
            Self::RATE_DEG_S * t
        }
        fn outline(t: f64, half: bool) -> Vec<Pt> {
            let (cx, cy) = Self::centre(t);
            let th = Self::angle(t).to_radians();
            let (u, v) = ((th.cos(), th.sin()), (-th.sin(), th.cos()));
            let corners = [(-26.0, -36.5), (26.0, -36.5), (26.0, 36.5), (-26.0, 36.5)];
            let mut pts = Vec::new();
            for k in 0..4 {
                let (a, b) = (corners[k], corners[(k + 1) % 4]);
                for j in 0..50 {
                    let s = j as f64 / 50.0;
                    let (x, y) = (a.0 + (b.0 - a.0) * s, a.1 + (b.1 - a.1) * s);
                    let p = Pt::new(cx + x * u.0 + y * v.0, cy + x * u.1 + y * v.1);
                    if !half || p.x_mm >= cx {
                        pts.push(p);
                    }
                }
            }
            pts
        }
        fn margin(t: f64) -> f64 {
            blob::out_margin_mm(
                &Self::outline(t, false),
                Self::angle(t),
                52.0,
                73.0,
                &Self::area(),
            )
        }
        /// When it truly crossed, to a microsecond.
        fn crossing() -> f64 {
            let (mut lo, mut hi) = (0.0, 0.2);
            assert!(Self::margin(lo) < 0.0 && Self::margin(hi) > 0.0);
            while hi - lo > 1e-6 {
                let mid = (lo + hi) / 2.0;
                if Self::margin(mid) > 0.0 {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            hi
        }
        /// Its crossing timed from its sightings, its turn taken at `rate_deg_s`.
        fn timed(rate_deg_s: f64) -> (f64, f64) {
            let t = |k: usize| k as f64 / Self::FPS;
            let turn = Turn {
                t_s: t(1),
                angle_deg: Self::angle(t(1)),
                rate_deg_s: Some(rate_deg_s),
            };
            let seen = (2..60).map(|k| {
                let reach = blob::reach_past_lines_mm(&Self::outline(t(k), true), &Self::area());
                (t(k), Seen::Partly(reach))
            });
            crossing_from_sightings(
                &turn,
                (t(1), Some(Self::margin(t(1)))),
                seen,
                [52.0, 73.0],
                0.0,
            )
            .expect("it crosses")
        }
    }

    #[test]
    fn a_spinning_card_seen_partly_is_timed_out_at_the_angle_it_turned_to() {
        let truth = Spinning::crossing();
        let frame = 1.0 / Spinning::FPS;
        let (t, span) = Spinning::timed(Spinning::RATE_DEG_S);
        assert!(
            (t - truth).abs() <= frame && span <= 1.01 * frame,
            "timed {t:.4} s (span {span:.4}), truth {truth:.4} s"
        );
        // At the angle last seen whole (no turn), its half seen reaches the line's far
        // side frames before the card does.
        let (stale, _) = Spinning::timed(0.0);
        assert!(
            truth - stale > 2.0 * frame,
            "stale {stale:.4} s, truth {truth:.4} s"
        );
    }

    #[test]
    fn a_card_found_out_after_going_unseen_with_no_course_went_out_in_the_middle_of_the_span() {
        let left = Left {
            from_s: 4.0,
            by: By::B,
            hand: Some(Hand::Left),
            lost: None,
        };
        let [unseen, out] = out_while_unseen(27, &left, 4.5, None);
        match unseen.what {
            EventKind::Unseen { from_s, to_s, .. } => assert_eq!((from_s, to_s), (4.0, 4.5)),
            w => panic!("{w:?}"),
        }
        assert!(unseen.t_s <= out.t_s, "events in time order");
        assert_eq!(
            out.what,
            EventKind::Out {
                poem: 27,
                by: By::B,
                hand: Some(Hand::Left)
            }
        );
        assert!((out.t_s - 4.25).abs() < 1e-9 && (out.t_err_s - 0.25).abs() < 1e-9);
    }

    #[test]
    fn a_card_lost_in_flight_went_out_where_its_even_slowing_course_crossed() {
        let g = FieldGeometry::default();
        let area = g.playing_area();
        // Unturned (its width along x), lost 40 mm inside the right-hand line at 1 m/s,
        // found at rest 100 mm beyond it.
        let y = 0.5 * (area.y0_mm + area.y1_mm);
        let w = g.size.card_w_mm;
        let lost = LostAt {
            t_s: 2.0,
            at_mm: [area.x1_mm - 40.0, y],
            angle_deg: 0.0,
            speed_mm_s: Some(1000.0),
        };
        let found = Pt::new(area.x1_mm + 100.0, y);
        let t = out_on_course(&g, &lost, found, 0.0).expect("a course that crosses");
        // Wholly out once its near edge passes the line: 40 + w / 2 mm along 140 mm,
        // slowing evenly from 1000 mm/s to rest.
        let (d, len, v0) = (40.0 + 0.5 * w, 140.0, 1000.0);
        let a = v0 * v0 / (2.0 * len);
        let want = (v0 - (v0 * v0 - 2.0 * a * d).sqrt()) / a;
        assert!((t - want).abs() < 1e-3, "{t} against {want}");
        // Faster than at an even speed would have gone the distance, later than never slowing.
        assert!(t > d / v0 && t < 2.0 * d / v0);
        // No speed learnt, or found inside the area: no course to time it by.
        let unknown = LostAt {
            speed_mm_s: None,
            ..lost
        };
        assert!(out_on_course(&g, &unknown, found, 0.0).is_none());
        assert!(out_on_course(&g, &lost, Pt::new(area.x1_mm - 60.0, y), 0.0).is_none());
        // The events: the out on that course, timed to within half of it.
        let left = Left {
            from_s: 1.99,
            by: By::A,
            hand: Some(Hand::Right),
            lost: Some(lost),
        };
        let [_, out] = out_while_unseen(5, &left, 3.0, Some(t));
        assert!((out.t_s - (2.0 + t)).abs() < 1e-9);
        assert!((out.t_err_s - OUT_COURSE_DOUBT * t).abs() < 1e-9);
    }
}

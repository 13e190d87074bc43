//! A resting card setting off: whether new paper near a disturbed card is its own
//! (`maybe_start`), whether it was slid into a neighbour or struck by a card in flight
//! (17-2, 23-2), and the hand that drove it (18-2).
//!
//! Reads the card's place, the hands of this frame and the last few, and the cards in
//! flight. It starts a `Flight` and never follows one (that is `flight`).

use super::blob;
use super::flight::{ahead_on_course, Flight, StartTouch};
use super::{
    centre_px, visible, Card, CardTracker, HandSeen, Phase, TrackError, TOUCH_BACK_MAX_FRAMES,
};
use crate::detect::cards::dist;
use crate::rules::geometry::{Pt, TOUCH_RADIUS_MM};
use crate::rules::model::{By, Hand, Player};
use opencv::core::Mat;
use std::collections::VecDeque;

/// A followed card must move this far from its place before it counts as moving, mm.
pub const FLIGHT_START_MM: f64 = 8.0;
/// A hand farther than this from a card when it starts moving did not drive it, mm.
pub const DRIVER_MAX_MM: f64 = 120.0;
/// Two hands whose distances to the card differ by less than this cannot be told apart
/// as the driver (18-2): `by: both`, mm.
pub const DRIVER_TIE_MM: f64 = 15.0;
/// Both players seen pressing the card within this much of each other, mm...
pub const PRESSES_SHARED_MM: f64 = 40.0;
/// ...in this long before it started moving, s, leave its driver unknown (`by: both`):
/// two hands at one card seen as one region, read now as one player's, now as the
/// other's. On the twelve tuning recordings (docs/analyze.md), in the 200 ms before a
/// read card left the area with one player named as its driver, both players were seen
/// pressing within 40 px of each other before 3 of the 4 takes given to the wrong player
/// and before 1 of the 40 given to the right one.
pub const PRESSES_SHARED_S: f64 = 0.2;
/// A disturbed card looks for its moving paper this far from its place at first, in
/// lengths of the card's long side...
pub const START_REACH: f64 = 0.9;
/// ...and this much farther for each second it has been disturbed (a card slid over its
/// neighbours shows new paper only once it is past them; a card swept out at 3 m/s, the
/// fastest, covers about 40 of its long sides a second: at 12, one swept at 1.9 m/s
/// under the hand stayed ahead of the reach until it was out)...
pub const START_REACH_PER_S: f64 = 40.0;
/// ...up to this.
pub const START_REACH_MAX: f64 = 3.0;
/// A card lost in flight under a hand claims new paper near where it was last seen for
/// this long, s (it shows again farther along; a neighbour has not been set moving).
pub const LOST_CLAIM_S: f64 = 1.0;
/// A disturbed card has left its place only when the tatami shows over at least this
/// share of its outline (a card a hand merely covers shows none).
pub const VACATED_MIN: f64 = 0.15;
/// A disturbed card nearer the new paper, whose place is at least this share as bare as
/// this card's, has the better claim to it.
pub const RIVAL_SHARE: f64 = 0.75;
/// A disturbed card whose new paper lies beyond a neighbour has been slid into that
/// neighbour, not past it, while its own place shows the tatami over less than this
/// share (it has moved less than a card's width)...
pub const PUSHER_VACATED_MAX: f64 = 0.5;
/// ...and a neighbour is a card whose centre lies within this many card widths...
pub const PUSH_NEIGHBOUR_WIDTHS: f64 = 1.5;
/// ...whose centre lies within this share of a card's long side of the line from the
/// pusher to the new paper (a push runs along the row)...
pub const PUSH_IN_LINE: f64 = 0.2;
/// ...and whose place shows the tatami over at least this share (it has left its place
/// ahead of the pusher; a card another slides over stays, covered, and shows none).
pub const PUSHED_VACATED_MIN: f64 = 0.03;
/// A fingertip this far off a card that starts moving, and on a neighbour, pushed the
/// neighbour into it (fingertips are found within several mm), mm.
pub const OFF_CARD_MM: f64 = 8.0;
/// A card in motion whose centre comes this near a resting card's, nearer than any
/// fingertip, struck it (in lengths of the card's long side).
pub const STRIKE_REACH: f64 = 1.3;

impl CardTracker {
    /// Whether resting card `i`, disturbed, has begun to move: a blob of paper that was
    /// not there before, near its place and off it.
    pub(super) fn maybe_start(
        &mut self,
        i: usize,
        frame: usize,
        t_s: f64,
        bgr: &Mat,
        hands: &[HandSeen],
        claimed: &mut Vec<[f64; 4]>,
    ) -> Result<(), TrackError> {
        let c = &self.cards[i];
        // The card that left its place is the one whose place shows the tatami; a
        // neighbour the moving card slid over, or a card a hand covers, does not. (Asked
        // first: it is cheap, and most disturbed cards are only covered.)
        let own = self.vacated_share(i, bgr)?;
        let pushed = c.pushed_by;
        if own < VACATED_MIN && pushed.is_none() {
            return Ok(());
        }
        let centre = centre_px(&c.rest_px);
        let since_s = c.disturbed_since_s.map_or(0.0, |d| (t_s - d).max(0.0));
        let reach_px = blob::quad_long_side(&c.rest_px)
            * (START_REACH + START_REACH_PER_S * since_s).min(START_REACH_MAX);
        let areas = self.card_blob_areas_px();
        let Some(b) = self.blobs.nearest(bgr, centre, reach_px, areas, claimed)? else {
            return Ok(());
        };
        let bc = self.map.point_to_field(b.centre_px)?;
        let moved = (bc.x_mm - c.centre_mm[0]).hypot(bc.y_mm - c.centre_mm[1]);
        if moved < FLIGHT_START_MM {
            return Ok(());
        }
        let d_own = dist(centre, b.centre_px);
        for (j, o) in self.cards.iter().enumerate() {
            if j == i || o.phase != Phase::Resting || o.disturbed_since_s.is_none() {
                continue;
            }
            let oc = centre_px(&o.rest_px);
            if dist(oc, b.centre_px) < d_own && self.vacated_share(j, bgr)? >= RIVAL_SHARE * own {
                return Ok(());
            }
        }
        // A card in flight gone under a hand shows again farther along: new paper nearer
        // its last sighting than this card's place is its own, not this card set moving.
        for (j, o) in self.cards.iter().enumerate() {
            // (where it was lost, and whether it was still going: paper ahead on the
            // course of a card in flight is its own too)
            let lost_at = match &o.phase {
                Phase::Moving(of) if of.unseen > 0 => {
                    Some((of.last.centre_px, self.course_px(j, of, frame)))
                }
                Phase::Missing {
                    since_frame,
                    lost_at_px: Some(at),
                    ..
                } if (frame.saturating_sub(*since_frame) as f64) < LOST_CLAIM_S * self.fps => {
                    Some((*at, None))
                }
                _ => None,
            };
            if let Some((lc, going)) = lost_at {
                let on_course = going.is_some_and(|way| ahead_on_course(lc, way, b.centre_px));
                // (not the card that was slid into this one: this is the paper beyond it)
                let pusher = self.cards[i].pusher == Some(j);
                if j != i && !pusher && (dist(lc, b.centre_px) < d_own || on_course) {
                    return Ok(());
                }
            }
        }
        let at = Pt::new(c.centre_mm[0], c.centre_mm[1]);
        if pushed.is_none() && own < PUSHER_VACATED_MAX {
            if let Some(j) = self.pushed_on(i, bc, bgr)? {
                // This card slid into its neighbour and the paper beyond is the
                // neighbour's: the neighbour starts now, struck by this card's driver.
                self.cards[j].pushed_by = Some(self.driver(at, hands)?);
                return Ok(());
            }
        }
        let (mut by, mut hand) = self.driver(at, hands)?;
        let tip_mm = self.nearest_tip_mm(at, hands)?;
        let mut striker: Option<(f64, By, Option<Hand>)> = None;
        // A card in flight struck it: one nearer than any fingertip, or a row-mate that
        // came towards it, wherever the fingertips lie.
        for (o, of) in self.flights_but(i) {
            let oc = self.map.point_to_field(of.last.centre_px)?;
            let d = oc.dist_mm(at);
            let reach = STRIKE_REACH * self.geometry.size.card_h_mm;
            if d <= reach
                && (d < tip_mm || self.came_towards(i, o, oc))
                && striker.as_ref().is_none_or(|s| d < s.0)
            {
                striker = Some((d, of.by, of.hand));
            }
        }
        match pushed {
            // Struck by the neighbour slid into it, wherever the fingertips lie: the
            // hand driving the neighbour along the row spreads its fingers over this
            // card's place, and a touch of its own is the hand source's to tell.
            Some((b, h)) => striker = Some((0.0, b, h)),
            // Or the hand pushed a neighbour into it: now, or as it may have begun to
            // move (its paper is first seen a few frames late, and the hand that
            // follows the neighbour may by then lie on this card's place).
            None if striker.is_none() && self.through_neighbour_lately(i, hands)? => {
                striker = Some((0.0, by, hand));
            }
            _ => {}
        }
        let struck = striker.is_some();
        if let Some((_, b, h)) = striker {
            by = b;
            hand = h;
        }
        self.struck_lately(i, bc, by, hand);
        let c = &self.cards[i];
        let touch = by.player().zip(hand).map(|(player, hand)| StartTouch {
            player,
            hand,
            came_px: b.area_px / self.scale.face_area_px.sqrt(),
            disturbed_s: c.disturbed_since_s,
            struck,
        });
        claimed.push(b.bbox_px());
        let angle = c.angle_deg;
        self.cards[i].phase = Phase::Moving(Flight {
            start_frame: frame,
            start_t_s: t_s,
            by,
            hand,
            last: b,
            prev_margin: None,
            prev_full: false,
            since_inside: VecDeque::new(),
            turn: None,
            vel_px: None,
            steps: 0,
            settled: 0,
            still: 0,
            stopped: None,
            unseen: 0,
            unseen_from_s: None,
            angle_deg: angle,
            touch,
            struck,
            striker: self.cards[i].pusher,
            first_on_s: [None; 2],
            recent_outlines: VecDeque::new(),
            named: false,
            name_tries: 0,
            out: None,
        });
        Ok(())
    }

    /// The resting neighbour that disturbed card `i` has been slid into, when new paper
    /// at `paper` (field mm) lies beyond it: the next card of the row on the line from
    /// `i` to the paper, whose place is still disturbed. A card cannot pass through a
    /// card lying on the tatami; the paper beyond is the neighbour's, driven out of its
    /// place (17-2). A card slid over its neighbour instead has left its own place bare
    /// (`PUSHER_VACATED_MAX`).
    fn pushed_on(&self, i: usize, paper: Pt, bgr: &Mat) -> Result<Option<usize>, TrackError> {
        let ci = self.cards[i].centre_mm;
        self.pushed_on_from(i, Pt::new(ci[0], ci[1]), paper, bgr)
    }

    /// `pushed_on` along the line from `from` (field mm: card `i`'s place, or where it
    /// was last seen in flight) to the new paper; the neighbour lies next to `i`'s place.
    pub(super) fn pushed_on_from(
        &self,
        i: usize,
        from: Pt,
        paper: Pt,
        bgr: &Mat,
    ) -> Result<Option<usize>, TrackError> {
        let ci = self.cards[i].centre_mm;
        let disturbed = self
            .cards
            .iter()
            .enumerate()
            .filter(|&(j, o)| j != i && o.phase == Phase::Resting && o.disturbed_since_s.is_some())
            .map(|(j, o)| (j, Pt::new(o.centre_mm[0], o.centre_mm[1])));
        let size = &self.geometry.size;
        let place = Pt::new(ci[0], ci[1]);
        for j in row_mates_between(
            place,
            from,
            paper,
            disturbed,
            size.card_w_mm,
            size.card_h_mm,
        ) {
            if self.vacated_share(j, bgr)? >= PUSHED_VACATED_MIN {
                return Ok(Some(j));
            }
        }
        Ok(None)
    }

    /// Every card in flight but card `i`, with its flight.
    fn flights_but(&self, i: usize) -> impl Iterator<Item = (&Card, &Flight)> {
        self.cards
            .iter()
            .enumerate()
            .filter(move |(j, _)| *j != i)
            .filter_map(|(_, o)| match &o.phase {
                Phase::Moving(of) => Some((o, of)),
                _ => None,
            })
    }

    /// Whether card `o`, in flight and now at `now` (field mm), slid into resting card `i`
    /// along its row: it lay beside it (within `PUSH_NEIGHBOUR_WIDTHS` card widths) and
    /// has since moved at least `FLIGHT_START_MM` towards it. A card cannot pass through
    /// a card lying on the tatami, so `i`, setting off now, was struck by it (17-2),
    /// wherever the fingertips lie: the hand that drives a card along the row spreads
    /// its fingers over the next card's place.
    pub(super) fn came_towards(&self, i: usize, o: &Card, now: Pt) -> bool {
        let ci = self.cards[i].centre_mm;
        let (dx, dy) = (ci[0] - o.centre_mm[0], ci[1] - o.centre_mm[1]);
        let apart = dx.hypot(dy);
        if apart > PUSH_NEIGHBOUR_WIDTHS * self.geometry.size.card_w_mm || apart < 1e-9 {
            return false;
        }
        let (ux, uy) = (dx / apart, dy / apart);
        let (mx, my) = (now.x_mm - o.centre_mm[0], now.y_mm - o.centre_mm[1]);
        let along = mx * ux + my * uy;
        let across = (mx * uy - my * ux).abs();
        along >= FLIGHT_START_MM && across < along
    }

    /// The fingertip nearest resting card `i`'s centre, field mm.
    fn nearest_tip(&self, i: usize, hands: &[HandSeen]) -> Result<Option<Pt>, TrackError> {
        let c = &self.cards[i];
        let mut tip: Option<(f64, Pt)> = None;
        for h in visible(hands) {
            for p in self.map.to_field(&h.fingertips_px)? {
                let d = (p.x_mm - c.centre_mm[0]).hypot(p.y_mm - c.centre_mm[1]);
                if tip.is_none_or(|(best, _)| d < best) {
                    tip = Some((d, p));
                }
            }
        }
        Ok(tip.map(|(_, p)| p))
    }

    /// Whether the fingertip nearest card `i` as it starts to move lies off it and on a
    /// disturbed neighbour: the hand pushed the neighbour into it (17-2), and it was
    /// struck by that card, not touched (23-2).
    fn through_neighbour(&self, i: usize, hands: &[HandSeen]) -> Result<bool, TrackError> {
        let Some(tip) = self.nearest_tip(i, hands)? else {
            return Ok(false);
        };
        let c = &self.cards[i];
        let size = &self.geometry.size;
        if on_card(c, tip, size.card_w_mm, size.card_h_mm, OFF_CARD_MM) {
            return Ok(false);
        }
        Ok(self.cards.iter().enumerate().any(|(j, o)| {
            j != i
                && o.phase == Phase::Resting
                && o.disturbed_since_s.is_some()
                && (o.centre_mm[0] - c.centre_mm[0]).hypot(o.centre_mm[1] - c.centre_mm[1])
                    <= PUSH_NEIGHBOUR_WIDTHS * size.card_w_mm
                && on_card(o, tip, size.card_w_mm, size.card_h_mm, 0.0)
        }))
    }

    /// `through_neighbour` with the hands of this frame, or with those of
    /// `TOUCH_BACK_MAX_FRAMES` before it, the earliest a touch that set the card moving
    /// is placed (`tell_touch`).
    fn through_neighbour_lately(&self, i: usize, hands: &[HandSeen]) -> Result<bool, TrackError> {
        if self.through_neighbour(i, hands)? {
            return Ok(true);
        }
        match self.recent_hands.front() {
            Some(then) if self.recent_hands.len() > TOUCH_BACK_MAX_FRAMES as usize => {
                self.through_neighbour(i, then)
            }
            _ => Ok(false),
        }
    }

    /// The share of resting card `i`'s place where the tatami shows in this frame,
    /// measured once a frame: every disturbed card that starts asks it of its rivals.
    pub(super) fn vacated_share(&self, i: usize, bgr: &Mat) -> Result<f64, TrackError> {
        if let Some(v) = self.vacated[i].get() {
            return Ok(v);
        }
        let v = self.blobs.vacated_share(bgr, &self.cards[i].rest_px)?;
        self.vacated[i].set(Some(v));
        Ok(v)
    }

    /// The distance from `at` to the nearest fingertip seen, mm (infinite when none).
    fn nearest_tip_mm(&self, at: Pt, hands: &[HandSeen]) -> Result<f64, TrackError> {
        let mut best = f64::INFINITY;
        for h in visible(hands) {
            for p in self.map.to_field(&h.fingertips_px)? {
                best = best.min(p.dist_mm(at));
            }
        }
        Ok(best)
    }

    /// The hand that drove a card: the nearest fingertip when it started moving; `both`
    /// when two players' hands are equally near, or both lie on the card (a fingertip
    /// within half the card's width and `TOUCH_RADIUS_MM` of its centre), or both were
    /// seen pressing at one place on it just before (`presses_shared`), or none is seen
    /// (18-2). A struck card moves only after the touches that hold it, so when
    /// both players' fingertips lie on it as it starts to move, the nearer one did not
    /// necessarily touch first: the ruling goes to its owner and to review.
    pub(super) fn driver(
        &self,
        at: Pt,
        hands: &[HandSeen],
    ) -> Result<(By, Option<Hand>), TrackError> {
        if self.presses_shared(at)? {
            return Ok((By::Both, None));
        }
        let mut tips: Vec<(&HandSeen, Vec<Pt>)> = Vec::new();
        for h in hands {
            if !h.fingertips_px.is_empty() {
                tips.push((h, self.map.to_field(&h.fingertips_px)?));
            }
        }
        let nearest = tips
            .iter()
            .map(|(h, mine)| Nearest {
                mm: mine
                    .iter()
                    .map(|p| p.dist_mm(at))
                    .fold(f64::INFINITY, f64::min),
                player: h.player,
                hand: h.hand,
                hidden: h.hidden,
                shared: tips
                    .iter()
                    .any(|(o, theirs)| o.player != h.player && same_region(mine, theirs)),
            })
            .collect();
        let on_card_mm = self.geometry.size.card_w_mm / 2.0 + TOUCH_RADIUS_MM;
        Ok(driver_of(nearest, on_card_mm))
    }

    /// Whether both players were seen pressing at one place on the card at `at` in the
    /// last `PRESSES_SHARED_S`: two hands on one card seen as one region, its player read
    /// now as one, now as the other. Which hand drove the card cannot be told then.
    fn presses_shared(&self, at: Pt) -> Result<bool, TrackError> {
        let size = &self.geometry.size;
        let reach_mm = (size.card_w_mm / 2.0).hypot(size.card_h_mm / 2.0) + TOUCH_RADIUS_MM;
        let mut near: Vec<(Player, Pt)> = Vec::new();
        for p in &self.presses {
            let mm = self.map.point_to_field(p.at_px)?;
            if mm.dist_mm(at) <= reach_mm {
                near.push((p.player, mm));
            }
        }
        Ok(presses_meet(&near))
    }
}

/// Whether two of `presses` (player, field mm) by different players lie within
/// `PRESSES_SHARED_MM` of each other.
fn presses_meet(presses: &[(Player, Pt)]) -> bool {
    presses.iter().enumerate().any(|(i, (pa, a))| {
        presses[i + 1..]
            .iter()
            .any(|(pb, b)| pb != pa && a.dist_mm(*b) <= PRESSES_SHARED_MM)
    })
}

/// The cards of `others` (index, place centre, field mm) that lie next to `place` (within
/// `PUSH_NEIGHBOUR_WIDTHS` card widths) and on the line from `from` to `paper`, between
/// the two (within `PUSH_IN_LINE` of a card's long side across it): the row-mates a card
/// from `place`, last seen at `from`, would have to pass through to reach `paper`. The
/// nearest to `from` first.
fn row_mates_between(
    place: Pt,
    from: Pt,
    paper: Pt,
    others: impl Iterator<Item = (usize, Pt)>,
    card_w_mm: f64,
    card_h_mm: f64,
) -> Vec<usize> {
    let (ux, uy) = (paper.x_mm - from.x_mm, paper.y_mm - from.y_mm);
    let reach = ux.hypot(uy);
    if reach < 1e-9 {
        return Vec::new();
    }
    let (ux, uy) = (ux / reach, uy / reach);
    let mut between: Vec<(f64, usize)> = others
        .filter(|(_, o)| o.dist_mm(place) <= PUSH_NEIGHBOUR_WIDTHS * card_w_mm)
        .filter_map(|(j, o)| {
            let (dx, dy) = (o.x_mm - from.x_mm, o.y_mm - from.y_mm);
            let along = dx * ux + dy * uy;
            let across = (dx * uy - dy * ux).abs();
            (across < PUSH_IN_LINE * card_h_mm && along > 0.0 && along < reach)
                .then_some((along, j))
        })
        .collect();
    between.sort_by(|a, b| a.0.total_cmp(&b.0));
    between.into_iter().map(|(_, j)| j).collect()
}

/// Whether field point `p` lies on card `c` where it rests, its outline grown by
/// `grow_mm`.
fn on_card(c: &Card, p: Pt, w_mm: f64, h_mm: f64, grow_mm: f64) -> bool {
    let (s, co) = c.angle_deg.to_radians().sin_cos();
    let (dx, dy) = (p.x_mm - c.centre_mm[0], p.y_mm - c.centre_mm[1]);
    let (u, v) = (dx * co + dy * s, -dx * s + dy * co);
    u.abs() <= w_mm / 2.0 + grow_mm && v.abs() <= h_mm / 2.0 + grow_mm
}

/// One hand's nearest fingertip to a card's centre as it started to move.
#[derive(Debug, Clone, Copy)]
struct Nearest {
    mm: f64,
    player: Player,
    hand: Hand,
    /// Only remembered where it was last seen (`HandSeen::hidden`).
    hidden: bool,
    /// The same region was given the other player in a run as recent
    /// (`same_region`): the network could not tell whose hand it is.
    shared: bool,
}

/// Two fingertips this near are one (mm).
pub const SAME_TIP_MM: f64 = 6.0;

/// Whether two hands' fingertips (field mm) are one region's: at least two of them
/// within `SAME_TIP_MM` of each other. Two hands cannot hold two fingertips in the same
/// places within the few runs the tracker is given; one region seen as one player's in
/// one run and the other's in the next can, and it is most often both players' hands
/// seen as one (held-out realistic-7202 reading 1, tuning hard-9305 reading 3).
fn same_region(a: &[Pt], b: &[Pt]) -> bool {
    a.iter()
        .filter(|p| b.iter().any(|q| p.dist_mm(*q) <= SAME_TIP_MM))
        .count()
        >= 2
}

/// The driver from each hand's nearest fingertip to the card's centre when it started
/// moving: the nearest hand seen, unless another player's hand (seen, or hidden where it
/// was last seen) lies about as near (`DRIVER_TIE_MM`), nearer, or on the card too
/// (within `on_card_mm`), or the nearest is a region also seen as the other player's,
/// or none is near (`DRIVER_MAX_MM`): then `both` (18-2).
fn driver_of(mut nearest: Vec<Nearest>, on_card_mm: f64) -> (By, Option<Hand>) {
    nearest.sort_by(|a, b| a.mm.total_cmp(&b.mm));
    let Some(first) = nearest.iter().find(|n| !n.hidden) else {
        return (By::Both, None);
    };
    if first.mm > DRIVER_MAX_MM || first.shared {
        return (By::Both, None);
    }
    let contested = nearest
        .iter()
        .find(|n| n.player != first.player)
        .is_some_and(|n| n.mm - first.mm < DRIVER_TIE_MM || n.mm <= on_card_mm);
    if contested {
        return (By::Both, None);
    }
    (By::from(first.player), Some(first.hand))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presses_of_both_players_at_one_place_meet() {
        let a = |x, y| (Player::A, Pt::new(x, y));
        let b = |x, y| (Player::B, Pt::new(x, y));
        // One region read as A's, then as B's, pressing the same spot.
        assert!(presses_meet(&[a(0.0, 0.0), a(2.0, 1.0), b(10.0, -5.0)]));
        // Both players on the card, at its two ends: two hands seen apart.
        assert!(!presses_meet(&[a(0.0, -30.0), b(0.0, 30.0)]));
        // One player only, however close.
        assert!(!presses_meet(&[a(0.0, 0.0), a(1.0, 0.0)]));
        assert!(!presses_meet(&[]));
    }

    #[test]
    fn a_point_is_on_a_turned_card_within_its_outline_and_the_margin() {
        let c = Card {
            poem: Some(1),
            owner: Player::A,
            rest_px: [[0.0; 2]; 4],
            centre_mm: [100.0, 50.0],
            angle_deg: 90.0,
            phase: Phase::Resting,
            disturbed_since_s: None,
            pushed_by: None,
            pusher: None,
            bare_frames: 0,
        };
        // Turned a quarter: its 73 mm height lies along x, its 52 mm width along y.
        assert!(on_card(&c, Pt::new(100.0 + 35.0, 50.0), 52.0, 73.0, 0.0));
        assert!(!on_card(&c, Pt::new(100.0, 50.0 + 35.0), 52.0, 73.0, 0.0));
        assert!(on_card(&c, Pt::new(100.0, 50.0 + 31.0), 52.0, 73.0, 8.0));
        assert!(!on_card(&c, Pt::new(100.0, 50.0 + 35.0), 52.0, 73.0, 8.0));
    }

    #[test]
    fn a_card_reaches_paper_beyond_a_row_mate_only_through_it() {
        // Cards 52 x 73 mm, row-mates 60 mm apart along x; card 0 set off from (0, 0)
        // and was last seen at (30, 0).
        let place = Pt::new(0.0, 0.0);
        let from = Pt::new(30.0, 0.0);
        let others = || {
            [
                (1, Pt::new(60.0, 0.0)),  // the row-mate ahead
                (2, Pt::new(-60.0, 0.0)), // the row-mate behind
                (3, Pt::new(0.0, 80.0)),  // the card of the next row
                (4, Pt::new(120.0, 0.0)), // two places along: not next to it
            ]
            .into_iter()
        };
        let between = |paper: Pt| row_mates_between(place, from, paper, others(), 52.0, 73.0);
        assert_eq!(between(Pt::new(93.0, 5.0)), vec![1]);
        // Short of the row-mate's centre, behind the card, or across the rows: none.
        assert!(between(Pt::new(50.0, 0.0)).is_empty());
        assert!(between(Pt::new(-20.0, 0.0)).is_empty());
        assert!(between(Pt::new(30.0, 90.0)).is_empty());
    }

    #[test]
    fn a_card_both_players_touch_as_it_starts_is_driven_by_both() {
        let on_card = 53.0 / 2.0 + TOUCH_RADIUS_MM;
        let hand = |mm, player, hand| Nearest {
            mm,
            player,
            hand,
            hidden: false,
            shared: false,
        };
        let a = |d| hand(d, Player::A, Hand::Right);
        let b = |d| hand(d, Player::B, Hand::Right);
        // Only A on the card, B's nearest fingertip well off it: A drove it.
        assert_eq!(
            driver_of(vec![b(80.0), a(5.0)], on_card),
            (By::A, Some(Hand::Right))
        );
        // B's fingertip on the card too, 25 mm farther than A's: the camera cannot tell
        // whose touch came first.
        assert_eq!(driver_of(vec![a(5.0), b(30.0)], on_card), (By::Both, None));
        // About as near, off the card: both, as before.
        assert_eq!(driver_of(vec![a(60.0), b(70.0)], on_card), (By::Both, None));
        // A's other hand does not contest A's take; B's lies on the card beyond it.
        let a_left = hand(20.0, Player::A, Hand::Left);
        assert_eq!(
            driver_of(vec![a(5.0), a_left, b(90.0)], on_card),
            (By::A, Some(Hand::Right))
        );
        assert_eq!(
            driver_of(vec![a(5.0), a_left, b(25.0)], on_card),
            (By::Both, None)
        );
        // Nobody near, or no hand seen.
        assert_eq!(driver_of(vec![a(200.0)], on_card), (By::Both, None));
        assert_eq!(driver_of(vec![], on_card), (By::Both, None));
    }

    #[test]
    fn a_hidden_hand_contests_the_driver_but_never_drives() {
        let on_card = 53.0 / 2.0 + TOUCH_RADIUS_MM;
        let seen = |mm, player| Nearest {
            mm,
            player,
            hand: Hand::Left,
            hidden: false,
            shared: false,
        };
        let hidden = |mm, player| Nearest {
            hidden: true,
            ..seen(mm, player)
        };
        // B's hand, last seen on the card before it went under A's, makes the start a
        // race the camera cannot order (realistic-7202 reading 1).
        assert_eq!(
            driver_of(vec![seen(6.0, Player::A), hidden(12.0, Player::B)], on_card),
            (By::Both, None)
        );
        // Nearer than the hand seen: still only a doubt, never the driver.
        assert_eq!(
            driver_of(vec![hidden(2.0, Player::B), seen(8.0, Player::A)], on_card),
            (By::Both, None)
        );
        // Last seen far from the card: A drove it.
        assert_eq!(
            driver_of(
                vec![seen(6.0, Player::A), hidden(150.0, Player::B)],
                on_card
            ),
            (By::A, Some(Hand::Left))
        );
        // A hidden hand alone drives nothing.
        assert_eq!(
            driver_of(vec![hidden(3.0, Player::A)], on_card),
            (By::Both, None)
        );
    }

    #[test]
    fn a_region_seen_as_both_players_drives_nothing() {
        let on_card = 53.0 / 2.0 + TOUCH_RADIUS_MM;
        let pt = |x, y| Pt::new(x, y);
        // One region, B's in one run and A's in the next: its fingertips lie where they
        // were, give or take the network's few millimetres, and B's nearest fingertip is
        // on the card while A's nearest in that run is 30 mm off it.
        let as_b = [pt(0.0, 0.0), pt(40.0, 10.0), pt(-30.0, 20.0), pt(5.0, 5.0)];
        let as_a = [pt(1.0, 2.0), pt(41.0, 9.0), pt(-29.0, 22.0), pt(60.0, 80.0)];
        assert!(same_region(&as_b, &as_a));
        // Two hands side by side, one fingertip of each near the other's.
        let other = [pt(8.0, -6.0), pt(90.0, 40.0), pt(120.0, 10.0)];
        assert!(!same_region(&as_b, &other));
        let region = |mm, player, shared| Nearest {
            mm,
            player,
            hand: Hand::Right,
            hidden: false,
            shared,
        };
        assert_eq!(
            driver_of(
                vec![region(3.0, Player::B, true), region(45.0, Player::A, true)],
                on_card
            ),
            (By::Both, None)
        );
        assert_eq!(
            driver_of(
                vec![
                    region(3.0, Player::B, false),
                    region(45.0, Player::A, false)
                ],
                on_card
            ),
            (By::B, Some(Hand::Right))
        );
    }
}

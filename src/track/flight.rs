//! A card in flight: found again in each frame near where its course should have
//! carried it (`sighting`), proven in the playing area or wholly out of it (`out`,
//! 17-2), and the touches that set it moving or met it on the way (`tell_touch`,
//! `touched_in_flight`, `struck_lately`).
//!
//! Reads each frame's new paper and the hands on it. A card that comes to rest goes to
//! `settle`, one out of the area to `out`, one lost under a hand to the search; it never
//! names a card.

use super::blob::{self, SeenBlob};
use super::named::{Named, NAME_TRIES};
use super::{
    centre_px, visible, CardTracker, HandSeen, HeldTouch, Phase, TrackError, LOST_FRAMES,
    SETTLE_FRAMES, TOUCH_BACK_MAX_FRAMES,
};
use crate::detect::cards::dist;
use crate::rules::geometry::Pt;
use crate::rules::model::{By, Event, EventKind, Hand, Player};
use opencv::core::{Mat, Point2f, Vector};
use opencv::imgproc;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// A moving card that stays within this of where it stopped is lying still, mm. Measured
/// from where it stopped, not frame to frame: under a flickering light its paper's edge,
/// and so its centre, shifts by a pixel or two from one frame to the next.
pub const SETTLE_DRIFT_MM: f64 = 3.0;
/// Frames a moving card whose whole face does not show must lie still before it is
/// handed to the card search (one whose face shows whole in that frame goes on settling).
pub const PARTIAL_REST_FRAMES: u32 = 2 * SETTLE_FRAMES;
/// A blob of at least this share of a face's area shows the whole card (ink and blur
/// take the rest).
pub const FULL_FACE_SHARE: f64 = 0.55;
/// A moving card's speed is smoothed from sighting to sighting: this share of the old
/// speed is kept.
pub const VELOCITY_KEEP: f64 = 0.5;
/// For each frame a moving card goes unseen, the search for it widens by this share of
/// the distance it moves a frame (it slows, turns or is pushed on under the hand).
pub const VELOCITY_DOUBT: f64 = 0.5;
/// How fast a card seen set moving but not yet followed may go while unseen (sliding
/// over its neighbours, whose paper is not new, or under the hand), mm/s: a card swept
/// out leaves at 1-3 m/s. The search for it widens by this much a frame until its
/// speed is known.
pub const UNSEEN_SPEED_MAX_MM_S: f64 = 3000.0;
/// A card's start is seen at most this many frames after its paper leaves its place (it
/// must move `FLIGHT_START_MM` first, under a frame at the fastest).
pub const START_SEEN_LATE_FRAMES: f64 = 2.0;
/// A card in flight goes by its learnt speed once it has been seen this many steps
/// apart: the first step, often between two partial sightings under the hand, can be
/// anything (1 px a frame for a card swept out at well over 1 m/s), and a speed too low
/// keeps the search for it too narrow once it goes under the hand.
pub const SPEED_STEPS_MIN: u32 = 2;
/// Paper within this angle of the way a card lost in flight was going is ahead on its
/// course (`ahead_on_course`), degrees.
pub const COURSE_CONE_DEG: f64 = 30.0;
/// A card in flight has a course to go on for this long after it set off, s: a strike or
/// a sweep is over sooner, and a card followed longer has come to rest (its partial
/// paper's centre may wander by 10 px under a noisy light).
pub const COURSE_MAX_S: f64 = 1.0;
/// A crossing time carried back from a sighting out is doubted by this share of the
/// time carried back (the card slows and turns on the tatami).
pub const OUT_BACK_DOUBT: f64 = 0.3;
/// A card's turning rate is learnt from two sightings of its whole face at most this far
/// apart, s: over a longer gap, under the hand, it may have turned past a quarter turn,
/// which its outline cannot tell from turning back.
pub const TURN_SEEN_GAP_MAX_S: f64 = 0.05;
/// A card's sightings kept from its last one proven in the playing area, to time its
/// crossing on its turn (`crossing_on_turn`): a quarter of a second at 240 fps.
pub const CROSSING_SIGHTINGS_MAX: usize = 60;
/// A card's start taken for a direct touch is held this long after it set off before it
/// is told, s: a row-mate the hand drags along the row into it moves under the hand, and
/// its paper may show only after the card it struck is seen flying (brush realistic-7421
/// reading 9: 50 ms after). A row-mate seen coming towards the card's place in that time
/// struck it (17-2), and the touch is told as a strike.
pub const PUSH_SEEN_LATE_S: f64 = 0.075;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Flight {
    pub(super) start_frame: usize,
    pub(super) start_t_s: f64,
    pub(super) by: By,
    pub(super) hand: Option<Hand>,
    pub(super) last: SeenBlob,
    /// Out margin (mm, positive = wholly out) and time of the last sighting proven to
    /// reach into the playing area...
    pub(super) prev_margin: Option<(f64, f64)>,
    /// ...and whether its whole face showed then.
    #[serde(default)]
    pub(super) prev_full: bool,
    /// Its sightings since then, neither proven in nor out: time and how far its visible
    /// paper reached past each of the area's lines (`blob::reach_past_lines_mm`).
    #[serde(default)]
    pub(super) since_inside: VecDeque<(f64, [f64; 4])>,
    /// Its angle when its whole face last showed, and how fast it was turning then.
    #[serde(default)]
    pub(super) turn: Option<Turn>,
    /// How far its paper's centre moved a frame, smoothed over the sightings, px: where
    /// to look for it after frames under a hand.
    #[serde(default)]
    pub(super) vel_px: Option<[f64; 2]>,
    /// Steps between sightings its speed was learnt from: one step between two partial
    /// sightings under a hand can be anything (`SPEED_STEPS_MIN`).
    #[serde(default)]
    pub(super) steps: u32,
    pub(super) settled: u32,
    /// Frames it has lain still, whether or not its whole face showed...
    #[serde(default)]
    pub(super) still: u32,
    /// ...since it stopped `stopped`: the fullest view of its paper there (`lies_still`).
    #[serde(default)]
    pub(super) stopped: Option<SeenBlob>,
    pub(super) unseen: u32,
    pub(super) unseen_from_s: Option<f64>,
    pub(super) angle_deg: f64,
    /// The touch that set it moving, told once its speed is known.
    #[serde(default)]
    pub(super) touch: Option<StartTouch>,
    /// Set moving by another card, and no hand has touched it since: a fingertip on its
    /// paper while it is still in the area is a touch of its own.
    #[serde(default)]
    pub(super) struck: bool,
    /// The card in flight that was slid into it, when known: it is followed before that
    /// card (a card cannot pass through the one it pushes along the row).
    #[serde(default)]
    pub(super) striker: Option<usize>,
    /// When a fingertip of each player (by `Player::index`) was first seen on its paper.
    #[serde(default)]
    pub(super) first_on_s: [Option<f64>; 2],
    /// Out of the area: the outlines of its last sightings (`LEAVING_OUTLINES`).
    #[serde(default)]
    pub(super) recent_outlines: VecDeque<Vec<[f64; 2]>>,
    /// Whose card its paper is is settled (`named`): seen whole and named, or nothing
    /// to tell it by (no namer, no neighbour, `live`).
    #[serde(default)]
    pub(super) named: bool,
    /// The times the namer was asked and could not tell.
    #[serde(default)]
    pub(super) name_tries: u32,
    /// The `out` given for it, once it went out.
    #[serde(default)]
    pub(super) out: Option<Event>,
}

/// A card's angle at a sighting of its whole face, and its turning rate from the one
/// before (`TURN_SEEN_GAP_MAX_S`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(super) struct Turn {
    pub(super) t_s: f64,
    pub(super) angle_deg: f64,
    pub(super) rate_deg_s: Option<f64>,
}

impl Turn {
    /// Its angle at `t_s`, on at the rate it was turning; `None` without a rate.
    pub(super) fn angle_at(&self, t_s: f64) -> Option<f64> {
        Some(self.angle_deg + self.rate_deg_s? * (t_s - self.t_s))
    }
}

impl Flight {
    /// Its speed, from its last sighting to `b` (seen `unseen + 1` frames later).
    pub(super) fn learn_speed(&mut self, b: &SeenBlob) {
        let gap = f64::from(self.unseen + 1);
        let step = [
            (b.centre_px[0] - self.last.centre_px[0]) / gap,
            (b.centre_px[1] - self.last.centre_px[1]) / gap,
        ];
        self.vel_px = Some(match self.vel_px {
            Some(v) => [
                VELOCITY_KEEP * v[0] + (1.0 - VELOCITY_KEEP) * step[0],
                VELOCITY_KEEP * v[1] + (1.0 - VELOCITY_KEEP) * step[1],
            ],
            None => step,
        });
        self.steps += 1;
    }

    /// Its speed, once learnt from enough steps to go by.
    pub(super) fn speed_px(&self) -> Option<[f64; 2]> {
        self.vel_px.filter(|_| self.steps >= SPEED_STEPS_MIN)
    }
}

/// The hand that set a card moving, held until the next sighting times the touch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct StartTouch {
    pub(super) player: Player,
    pub(super) hand: Hand,
    /// How far the card had come when its paper was first seen (new paper's area over
    /// the face's side), px.
    pub(super) came_px: f64,
    /// When the card was first disturbed: the touch was not earlier.
    pub(super) disturbed_s: Option<f64>,
    /// Struck by another card in motion, not by the hand (23-2).
    #[serde(default)]
    pub(super) struck: bool,
}

impl CardTracker {
    /// Follows moving card `i` one frame.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn follow(
        &mut self,
        i: usize,
        frame: usize,
        t_s: f64,
        bgr: &Mat,
        hands: &[HandSeen],
        events: &mut Vec<Event>,
        claimed: &mut Vec<[f64; 4]>,
    ) -> Result<(), TrackError> {
        let Phase::Moving(mut f) = self.cards[i].phase.clone() else {
            return Ok(());
        };
        let mut seen = self.sighting(i, &f, frame, bgr, claimed)?;
        if let Some(b) = &seen {
            // Paper farther from this card's last sighting than a card goes in the
            // frames since, beyond a resting row-mate on the line from there: this card
            // was slid into that card, which has left its place ahead of it (a card
            // cannot pass through a card lying on the tatami). The paper is the
            // row-mate's, set moving by this card's driver; this card is unseen now. (A
            // card lost under the hand for longer may have been slid over its row-mate.)
            let from = self.map.point_to_field(f.last.centre_px)?;
            let paper = self.map.point_to_field(b.centre_px)?;
            if let Some(j) = beyond_its_reach(from, paper, f64::from(f.unseen + 1) / self.fps)
                .then(|| self.pushed_on_from(i, from, paper, bgr))
                .transpose()?
                .flatten()
            {
                self.cards[j].pushed_by = Some((f.by, f.hand));
                self.cards[j].pusher = Some(i);
                seen = None;
            }
        }
        self.tell_touch(i, &mut f, seen.as_ref().map(|b| (b, frame)), events);
        let Some(b) = seen else {
            f.unseen += 1;
            f.unseen_from_s.get_or_insert(t_s);
            if f.unseen > LOST_FRAMES {
                // Lost under a hand: it must be found again where it comes to rest.
                if let Some(poem) = self.cards[i].poem {
                    events.push(Event::unseen(
                        f.unseen_from_s.unwrap_or(t_s),
                        t_s,
                        format!("card {poem} while it moved"),
                    ));
                }
                self.cards[i].phase = self.missing_after(&f, frame, None)?;
            } else {
                self.cards[i].phase = Phase::Moving(f);
            }
            return Ok(());
        };
        claimed.push(b.bbox_px());
        f.learn_speed(&b);
        let on = tips_on_paper(&b, hands)?;
        for (p, _) in &on {
            f.first_on_s[p.index()].get_or_insert(t_s);
        }
        if f.struck {
            if let Some(&(player, hand)) = on.first() {
                self.touched_in_flight(i, &mut f, player, hand, frame, t_s, events);
            }
        }
        let pts = self.map.to_field(&b.outline_px)?;
        let full = b.area_px >= FULL_FACE_SHARE * self.scale.face_area_px;
        if full {
            if let Some(a) = blob::long_axis_deg(&pts) {
                // The card's height runs along its long axis, at angle + 90.
                f.angle_deg = nearest_mod_180(a - 90.0, f.angle_deg);
                let rate = f
                    .turn
                    .filter(|w| t_s > w.t_s && t_s - w.t_s <= TURN_SEEN_GAP_MAX_S)
                    .map(|w| (f.angle_deg - w.angle_deg) / (t_s - w.t_s));
                f.turn = Some(Turn {
                    t_s,
                    angle_deg: f.angle_deg,
                    rate_deg_s: rate,
                });
            }
        }
        let size = &self.geometry.size;
        // The blob is the white face; the card reaches a border's width beyond it.
        let area = self.geometry.playing_area();
        // How far its paper reaches past each line, measured once: the margin at its
        // angle, the diagonal's, and, kept, at the angles it turns to (`since_inside`).
        let reach = blob::reach_past_lines_mm(&pts, &area);
        let margin =
            blob::margin_from_reach_mm(&reach, f.angle_deg, size.card_w_mm, size.card_h_mm)
                + self.border_mm;
        // Proven in the area: its whole face shows short of the line, or some of its
        // paper lies inside (a hidden part may only reach farther in).
        let inside = if full {
            margin <= 0.0
        } else {
            pts.iter().any(|p| area.contains(*p))
        };
        // Proven wholly out: its whole face shows past the line; or, part of it hidden
        // (under a hand, past the frame's edge) and its turn perhaps stale, even its
        // diagonal, the most a card can reach across, lies beyond it.
        let diagonal = size.card_w_mm.hypot(size.card_h_mm);
        let out = if full {
            margin > 0.0
        } else {
            blob::margin_from_reach_mm(&reach, 0.0, diagonal, diagonal) + self.border_mm > 0.0
        };
        // The paper is named while its whole face shows (`named`): a card pushed into
        // its row-mate may have been taken for the row-mate that flew. The namer is
        // asked at most `NAME_TRIES` times a flight before it goes out, and once more as
        // it goes.
        if full && !f.named {
            if let Some(face) = blob::card_quad_px(&b.outline_px) {
                let may_read = f.name_tries < NAME_TRIES || out;
                match self.name_paper(i, &face, bgr, may_read)? {
                    Named::Own => f.named = true,
                    Named::Unsure(read) => f.name_tries += u32::from(read),
                    Named::Other(j) => {
                        f.named = true;
                        match &self.cards[j].phase {
                            // Card j went out already with this very paper, followed
                            // twice: card i lies near its place.
                            Phase::Leaving(fj) if self.same_paper(i, fj, &b) => {
                                self.left_in_place(i, frame);
                                return Ok(());
                            }
                            // The paper that went out under card j's name was card
                            // i's: the two were crossed. That `out` is given again under
                            // card i's name (now carried by j), when it came lately.
                            Phase::Leaving(_) if self.may_give_again(j, t_s) => {
                                self.take_identity(i, j, frame);
                                events.extend(self.out_again(j));
                            }
                            // Gone out too long ago, named as it flew, or no longer
                            // followed: this flight goes on as it was.
                            Phase::Leaving(_) | Phase::Out => {}
                            // Card j's own flight, named as its own: not crossed.
                            Phase::Moving(fj) if fj.named => {}
                            _ => self.take_identity(i, j, frame),
                        }
                    }
                }
            }
        }
        if out {
            // 17-2: no part of it lies in the playing area. It crossed after the last
            // sighting proven inside: seen whole both times, by the margin's linear
            // course; seen partly between, with its turning rate known, by the margins
            // of those sightings at the angles it had turned to (`crossing_on_turn`);
            // else in the middle of the span, where the hidden part leaves no better
            // guess. (A margin guessed from the card's own size and its last turn seen
            // whole, not turned on, was used there before: a card spins as it flies,
            // its turn goes stale under the hand, and the guess crossed nil early;
            // docs/analyze.md, "an out partly hidden".)
            let whole_both =
                matches!(f.prev_margin, Some((m0, _)) if full && f.prev_full && margin > m0);
            let on_turn = if whole_both {
                None
            } else {
                self.crossing_on_turn(&f, t_s, full.then_some(margin), &pts)
            };
            let (mut t_out, mut span_s) = match (f.prev_margin, on_turn) {
                (Some((m0, t0)), _) if whole_both => {
                    (t0 + (t_s - t0) * (-m0) / (margin - m0), t_s - t0)
                }
                (_, Some(crossing)) => crossing,
                (Some((_, t0)), None) => ((t0 + t_s) / 2.0, t_s - t0),
                // Never proven in the area since it set off (its paper first seen
                // partly, then out): it lay in its place until then.
                (None, None) => {
                    let t0 = (f.start_t_s - 1.0 / self.fps).min(t_s);
                    ((t0 + t_s) / 2.0, (t_s - t0).max(1.0 / self.fps))
                }
            };
            // More than a frame unseen between, seen whole now but not before: carried
            // back along its own course at its speed to where its margin was nil. Seen
            // whole on both sides, the margin's course is the better guess: the speed
            // after a gap is smoothed over sightings before it, when the card was faster
            // or its paper only partly out from under the hand.
            if full && !whole_both && on_turn.is_none() && span_s > 1.5 / self.fps {
                if let Some(back_s) =
                    self.back_to_line_s(&b, &pts, f.angle_deg, margin, f.vel_px)?
                {
                    let from = t_s - span_s;
                    t_out = (t_s - back_s).clamp(from, t_s);
                    span_s = (OUT_BACK_DOUBT * back_s).clamp(1.0 / self.fps, span_s);
                }
            }
            // Never proven in the area, and farther from its place than a card goes in
            // the time since its start was seen: it left under the hands covering its
            // place (`left_unseen_from`), and the crossing may lie anywhere since. The
            // time stays the latest it can be (a card is mostly seen soon after it sets
            // off); its error is the whole span, and the span is marked unseen, so the
            // ruling goes to review.
            if f.prev_margin.is_none() {
                if let Some(from_s) = self.left_unseen_from(i, &b, &f, t_s)? {
                    if let Some(poem) = self.cards[i].poem {
                        events.push(Event::unseen(
                            from_s,
                            t_s,
                            format!("card {poem} while it left its place"),
                        ));
                    }
                    span_s = span_s.max(t_s - from_s);
                }
            }
            if let Some(poem) = self.cards[i].poem {
                let mut e = Event::new(
                    t_out,
                    EventKind::Out {
                        poem,
                        by: f.by,
                        hand: f.hand,
                    },
                );
                e.t_err_s = (0.5 / self.fps).max(span_s / 12f64.sqrt());
                e.frames = Some([f.start_frame as u64, frame as u64]);
                f.out = Some(e.clone());
                events.push(e);
            }
            f.last = b;
            f.settled = 0;
            f.unseen = 0;
            self.cards[i].phase = Phase::Leaving(f);
            return Ok(());
        }
        if inside {
            f.prev_margin = Some((margin.min(0.0), t_s));
            f.prev_full = full;
            f.since_inside.clear();
        } else if f.prev_margin.is_some() {
            if f.since_inside.len() >= CROSSING_SIGHTINGS_MAX {
                f.since_inside.pop_front();
            }
            if reach.iter().all(|r| r.is_finite()) {
                f.since_inside.push_back((t_s, reach));
            }
        }
        f.unseen = 0;
        f.unseen_from_s = None;
        if self.lies_still(&mut f, &b)? {
            f.still += 1;
            if full {
                f.settled += 1;
            }
        }
        f.last = b;
        if f.settled >= SETTLE_FRAMES {
            self.settle(i, frame, t_s, bgr, f, events)?;
        } else if f.still >= PARTIAL_REST_FRAMES && !full {
            // At rest, but its paper does not show whole (it lies partly where another
            // card lay, or a hand stays on it): the card search finds and names it there,
            // and until then it lies where it came to rest, for the fingertips to press.
            // One whose whole face shows now goes on settling: a card sent, whose sender
            // has just let go, was handed over a few frames before it would be placed,
            // and the receiver's hand, come at once to straighten it, then hid it from
            // the search while its touches met no card there (docs/analyze.md).
            let rest = self.rest_of(&f)?;
            self.cards[i].phase = self.missing_after(&f, frame, rest)?;
        } else {
            self.cards[i].phase = Phase::Moving(f);
        }
        Ok(())
    }

    /// Where a card lying still since its flight `f` stopped rests: the centre of its
    /// fullest view since (field mm) and its angle.
    fn rest_of(&self, f: &Flight) -> Result<Option<([f64; 2], f64)>, TrackError> {
        let Some(s) = &f.stopped else {
            return Ok(None);
        };
        let c = self.map.point_to_field(s.centre_px)?;
        Ok(Some(([c.x_mm, c.y_mm], f.angle_deg)))
    }

    /// A card set moving by another card has a fingertip of `player`'s `hand` on its
    /// paper while it is still in the area: that hand touches it now (a hand that pushed
    /// a neighbour into it and reaches it before it leaves the area touched it as well).
    #[allow(clippy::too_many_arguments)]
    fn touched_in_flight(
        &self,
        i: usize,
        f: &mut Flight,
        player: Player,
        hand: Hand,
        frame: usize,
        t_s: f64,
        events: &mut Vec<Event>,
    ) {
        let mut e = Event::new(t_s, self.card_ref(i).touch(player, hand, true));
        e.t_err_s = 0.5 / self.fps;
        e.frames = Some([frame as u64, frame as u64]);
        events.push(e);
        f.struck = false;
    }

    /// The touch that set card `i` moving, once: timed back from its first sighting by how
    /// fast its new paper grew up to `next` (a later sighting and its frame), or a frame
    /// before the first sighting when there is none. A direct one is held until
    /// `PUSH_SEEN_LATE_S` after the start (`struck_lately`).
    fn tell_touch(
        &mut self,
        i: usize,
        f: &mut Flight,
        next: Option<(&SeenBlob, usize)>,
        events: &mut Vec<Event>,
    ) {
        let Some(st) = f.touch.take() else { return };
        let back_frames = match next {
            Some((b, frame)) if frame > f.start_frame => {
                let came = b.area_px / self.scale.face_area_px.sqrt();
                let growth = (came - st.came_px) / (frame - f.start_frame) as f64;
                if growth > 1e-6 {
                    (st.came_px / growth).min(TOUCH_BACK_MAX_FRAMES)
                } else {
                    1.0
                }
            }
            _ => 1.0,
        };
        let mut t = f.start_t_s - back_frames / self.fps;
        if let Some(d) = st.disturbed_s {
            t = t.max(d);
        }
        let mut e = Event::new(t, self.card_ref(i).touch(st.player, st.hand, !st.struck));
        e.t_err_s = (0.5 / self.fps).max((f.start_t_s - t) / 2.0);
        e.frames = Some([
            (f.start_frame as f64 - back_frames.ceil()).max(0.0) as u64,
            f.start_frame as u64,
        ]);
        if st.struck {
            events.push(e);
        } else {
            let late = (PUSH_SEEN_LATE_S * self.fps).ceil() as usize;
            self.held_touches.push(HeldTouch {
                card: i,
                start_t_s: f.start_t_s,
                due_frame: f.start_frame + late,
                event: e,
            });
        }
    }

    /// Row-mate `i`, setting off now with its paper at `paper` (field mm), driven by `by`
    /// (`hand`), came towards a card whose start is held as a direct touch: a card under
    /// a hand before that one set off, slid into its place, struck it (17-2). The held
    /// touch is told as a strike by `i`'s driver, and that card is struck in flight.
    pub(super) fn struck_lately(&mut self, i: usize, paper: Pt, by: By, hand: Option<Hand>) {
        let Some(under_s) = self.cards[i].disturbed_since_s else {
            return;
        };
        for k in 0..self.held_touches.len() {
            let (card, start_t_s) = (self.held_touches[k].card, self.held_touches[k].start_t_s);
            if card == i || under_s > start_t_s || !self.came_towards(card, &self.cards[i], paper) {
                continue;
            }
            let h = &mut self.held_touches[k];
            if let EventKind::Touch {
                player,
                hand: touch_hand,
                direct,
                ..
            } = &mut h.event.what
            {
                *direct = false;
                if let (Some(p), Some(hd)) = (by.player(), hand) {
                    *player = p;
                    *touch_hand = hd;
                }
            }
            if let Phase::Moving(fk) | Phase::Leaving(fk) = &mut self.cards[card].phase {
                fk.struck = true;
            }
        }
    }

    /// Card `i`'s paper in this frame: the unclaimed blob nearest where its flight should
    /// be by now (its last sighting carried on at its speed), within 0.6 of the card's
    /// long side and more for each frame it went unseen, at least a fifth of a card face.
    pub(super) fn sighting(
        &self,
        i: usize,
        f: &Flight,
        frame: usize,
        bgr: &Mat,
        claimed: &[[f64; 4]],
    ) -> Result<Option<blob::SeenBlob>, TrackError> {
        let ahead = f64::from(f.unseen + 1);
        let v = f.speed_px().unwrap_or([0.0; 2]);
        let at = [
            f.last.centre_px[0] + v[0] * ahead,
            f.last.centre_px[1] + v[1] * ahead,
        ];
        let base_px = blob::quad_long_side(&self.cards[i].rest_px) * 0.6;
        let fastest_px = UNSEEN_SPEED_MAX_MM_S / self.fps * self.px_per_mm();
        let (reach_px, limit_px) = sighting_reach(base_px, fastest_px, f.speed_px(), f.unseen);
        let areas = self.card_blob_areas_px();
        let seen = self
            .blobs
            .nearest(bgr, at, reach_px, areas, claimed)?
            .filter(|b| dist(b.centre_px, f.last.centre_px) <= limit_px);
        if seen.is_some() || f.unseen == 0 {
            return Ok(seen);
        }
        let Some(way) = self.course_px(i, f, frame) else {
            return Ok(None);
        };
        // Still going when last seen, under a hand it may have gone on faster than the
        // speed learnt before: paper ahead on its course, as far as a card can go, is its
        // own. (A card that has come to rest has no course: hard-9303 card 16, lying half
        // over the line for 1.4 s, took paper lying out 130 px beyond it.)
        Ok(self
            .blobs
            .nearest(bgr, f.last.centre_px, limit_px, areas, claimed)?
            .filter(|b| {
                dist(b.centre_px, f.last.centre_px) <= limit_px
                    && ahead_on_course(f.last.centre_px, way, b.centre_px)
            }))
    }

    /// Whether a flight's paper, seen at `b`, still lies where it stopped: its centre
    /// within `SETTLE_DRIFT_MM` of the centre there, or one view's paper wholly within the
    /// other's outline grown by that much. A card at rest partly hidden (a hand's shadow,
    /// a neighbour's edge) shows less of its paper and its centre moves, though no paper
    /// of it lies beyond where it lay; a card moving on shows paper beyond. The fullest
    /// view since it stopped is kept as where it stopped; when the card has moved on, its
    /// stillness starts again from here.
    pub(super) fn lies_still(&self, f: &mut Flight, b: &SeenBlob) -> Result<bool, TrackError> {
        let limit_px = SETTLE_DRIFT_MM * self.px_per_mm();
        let still = match &f.stopped {
            Some(s) => {
                dist(s.centre_px, b.centre_px) < limit_px
                    || paper_within(b, s, limit_px)?
                    || paper_within(s, b, limit_px)?
            }
            None => false,
        };
        if !still {
            f.stopped = Some(b.clone());
            f.still = 0;
            f.settled = 0;
        } else if f.stopped.as_ref().is_some_and(|s| b.area_px > s.area_px) {
            f.stopped = Some(b.clone());
        }
        Ok(still)
    }

    /// A card followed in flight and no longer followed from `frame` (lost under a hand,
    /// or lying still where its paper does not show whole): missing, to be searched for
    /// from where it was last seen, and lying at `rest_mm` until found when it came to
    /// rest there (`rest_of`).
    fn missing_after(
        &self,
        f: &Flight,
        frame: usize,
        rest_mm: Option<([f64; 2], f64)>,
    ) -> Result<Phase, TrackError> {
        Ok(Phase::Missing {
            since_frame: frame,
            given_up: false,
            lost_at_px: Some(f.last.centre_px),
            left: Some(self.left_of(f)?),
            rest_mm,
        })
    }

    /// Which way card `i`'s flight `f` was going at its last sighting (px, from its
    /// place to there), while it is young enough to be still going
    /// (`COURSE_MAX_S`): a card followed longer has come to rest and has no course.
    pub(super) fn course_px(&self, i: usize, f: &Flight, frame: usize) -> Option<[f64; 2]> {
        let young = (frame.saturating_sub(f.start_frame) as f64) < COURSE_MAX_S * self.fps;
        let rest = centre_px(&self.cards[i].rest_px);
        young.then(|| [f.last.centre_px[0] - rest[0], f.last.centre_px[1] - rest[1]])
    }

    /// When card `i`, first seen wholly out at `b` (now, `t_s`) on a course never proven
    /// in the area, lies farther from its place than a card goes (`UNSEEN_SPEED_MAX_MM_S`)
    /// between its start seen (`START_SEEN_LATE_FRAMES` before it) and now, it set off
    /// before that, hidden under the hands covering its place: from when its place was
    /// first disturbed. `None` when its course fits the time, or its place was not seen
    /// disturbed before the start.
    fn left_unseen_from(
        &self,
        i: usize,
        b: &SeenBlob,
        f: &Flight,
        t_s: f64,
    ) -> Result<Option<f64>, TrackError> {
        let c = &self.cards[i];
        let Some(from_s) = c.disturbed_since_s.filter(|d| *d < f.start_t_s) else {
            return Ok(None);
        };
        let at = self.map.point_to_field(b.centre_px)?;
        let place = Pt::new(c.centre_mm[0], c.centre_mm[1]);
        let within_s = t_s - f.start_t_s + START_SEEN_LATE_FRAMES / self.fps;
        Ok(beyond_its_reach(place, at, within_s).then_some(from_s))
    }

    /// Decoded pixels per field millimetre, near the field's centre.
    pub(super) fn px_per_mm(&self) -> f64 {
        let long_px = self
            .cards
            .first()
            .map_or(self.geometry.size.card_h_mm, |c| {
                blob::quad_long_side(&c.rest_px)
            });
        long_px / self.geometry.size.card_h_mm
    }
}

/// The hands with a fingertip on a card's paper seen at `b` (decoded pixels), in the
/// order given.
fn tips_on_paper(b: &SeenBlob, hands: &[HandSeen]) -> Result<Vec<(Player, Hand)>, TrackError> {
    let outline: Vector<Point2f> = b
        .outline_px
        .iter()
        .map(|p| Point2f::new(p[0] as f32, p[1] as f32))
        .collect();
    let mut on = Vec::new();
    for h in visible(hands) {
        for tip in &h.fingertips_px {
            let at = Point2f::new(tip[0] as f32, tip[1] as f32);
            if imgproc::point_polygon_test(&outline, at, false)? >= 0.0 {
                on.push((h.player, h.hand));
                break;
            }
        }
    }
    Ok(on)
}

/// Whether paper at `paper` lies farther from `from` (field mm) than a card goes in
/// `within_s`, at the fastest a card goes (`UNSEEN_SPEED_MAX_MM_S`): paper beyond a card's
/// last sighting is not its own; a card beyond its place set off earlier than that.
fn beyond_its_reach(from: Pt, paper: Pt, within_s: f64) -> bool {
    paper.dist_mm(from) > UNSEEN_SPEED_MAX_MM_S * within_s
}

/// How far from where a flight should be its paper is looked for, and how far from its
/// last sighting paper may lie and still be its own, px, after `unseen` frames unseen:
/// `base_px` at first, widening by half its step a frame once its speed is known, by the
/// fastest step a card makes (`fastest_px`, `UNSEEN_SPEED_MAX_MM_S`) while it is not; and
/// never farther than that fastest step allows, wherever a speed learnt from a few
/// sightings would carry it.
fn sighting_reach(
    base_px: f64,
    fastest_px: f64,
    vel_px: Option<[f64; 2]>,
    unseen: u32,
) -> (f64, f64) {
    let widen_px = match vel_px {
        Some(v) => VELOCITY_DOUBT * v[0].hypot(v[1]),
        None => fastest_px,
    };
    let reach = base_px + widen_px * f64::from(unseen);
    let limit = base_px + fastest_px * f64::from(unseen + 1);
    (reach, limit)
}

/// Whether paper at `paper` lies ahead on the course of a card last seen at `last` going
/// `way` (px, any length): within `COURSE_CONE_DEG` of that way.
pub(super) fn ahead_on_course(last: [f64; 2], way: [f64; 2], paper: [f64; 2]) -> bool {
    let e = [paper[0] - last[0], paper[1] - last[1]];
    let (nd, ne) = (way[0].hypot(way[1]), e[0].hypot(e[1]));
    nd > 0.0
        && ne >= 1.0
        && (way[0] * e[0] + way[1] * e[1]) >= nd * ne * COURSE_CONE_DEG.to_radians().cos()
}

/// `a` or `a + 180` moved by whole turns to lie nearest `reference`.
pub(super) fn nearest_mod_180(a: f64, reference: f64) -> f64 {
    let d = (a - reference).rem_euclid(180.0);
    let d = if d > 90.0 { d - 180.0 } else { d };
    reference + d
}

/// Whether the paper of `a` lies wholly within the outline of `b` grown by `margin_px`:
/// first by their bounding boxes (a card moving on fails there, at no cost), then point
/// by point.
fn paper_within(a: &SeenBlob, b: &SeenBlob, margin_px: f64) -> Result<bool, TrackError> {
    let (ba, bb) = (a.bbox_px(), b.bbox_px());
    let boxed = ba[0] >= bb[0] - margin_px
        && ba[1] >= bb[1] - margin_px
        && ba[2] <= bb[2] + margin_px
        && ba[3] <= bb[3] + margin_px;
    Ok(boxed && within_outline(&a.outline_px, &b.outline_px, margin_px)?)
}

/// Whether every point of `pts` lies inside `outline` (a closed contour, pixels) or
/// within `margin_px` of it.
fn within_outline(
    pts: &[[f64; 2]],
    outline: &[[f64; 2]],
    margin_px: f64,
) -> Result<bool, TrackError> {
    if outline.len() < 3 || pts.is_empty() {
        return Ok(false);
    }
    let contour: Vector<Point2f> = outline
        .iter()
        .map(|p| Point2f::new(p[0] as f32, p[1] as f32))
        .collect();
    for p in pts {
        let at = Point2f::new(p[0] as f32, p[1] as f32);
        if imgproc::point_polygon_test(&contour, at, true)? < -margin_px {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rect_blob(x0: f64, y0: f64, x1: f64, y1: f64) -> SeenBlob {
        SeenBlob {
            centre_px: [(x0 + x1) / 2.0, (y0 + y1) / 2.0],
            area_px: (x1 - x0) * (y1 - y0),
            outline_px: vec![[x0, y0], [x1, y0], [x1, y1], [x0, y1]],
        }
    }

    #[test]
    fn paper_partly_hidden_lies_within_where_it_stopped_and_paper_moved_on_does_not() {
        let whole = rect_blob(100.0, 100.0, 146.0, 167.0);
        // A quarter of the paper hidden: the centre moves 8 px, the paper stays inside.
        let part = rect_blob(100.0, 100.0, 146.0, 150.0);
        assert!(paper_within(&part, &whole, 2.7).unwrap());
        assert!(!paper_within(&whole, &part, 2.7).unwrap());
        // The whole card moved on by 4 px: paper beyond either outline.
        let moved = rect_blob(104.0, 100.0, 150.0, 167.0);
        assert!(!paper_within(&moved, &whole, 2.7).unwrap());
        assert!(!paper_within(&whole, &moved, 2.7).unwrap());
        // Moved by 2 px, within the drift allowed.
        let nudged = rect_blob(102.0, 100.0, 148.0, 167.0);
        assert!(paper_within(&nudged, &whole, 2.7).unwrap());
    }

    #[test]
    fn paper_ahead_on_a_lost_cards_course_is_within_the_cone_of_its_way() {
        let (last, way) = ([140.0, 50.0], [4.0, 0.0]);
        // Straight on, and 20 degrees off: ahead.
        assert!(ahead_on_course(last, way, [240.0, 50.0]));
        let off = 20f64.to_radians();
        assert!(ahead_on_course(
            last,
            way,
            [140.0 + 80.0 * off.cos(), 50.0 + 80.0 * off.sin()]
        ));
        // Across its way, behind it, or no way at all: not ahead.
        assert!(!ahead_on_course(last, way, [150.0, 120.0]));
        assert!(!ahead_on_course(last, way, [90.0, 50.0]));
        assert!(!ahead_on_course(last, [0.0, 0.0], [240.0, 50.0]));
    }

    #[test]
    fn a_card_whose_speed_is_unknown_is_looked_for_as_far_as_a_card_can_go() {
        // 1 px a mm, 240 fps: 3 m/s is 12.5 px a frame.
        let fastest = UNSEEN_SPEED_MAX_MM_S / 240.0;
        // Seen once as it started, then unseen 20 frames (sliding over its row-mates): a
        // card swept at 2.4 m/s is 200 px on, within the search.
        let (reach, limit) = sighting_reach(44.0, fastest, None, 20);
        assert!(reach >= 44.0 + 200.0 && limit >= reach, "{reach} {limit}");
        // Its speed known (2 px a frame), the search widens by half its step.
        let (reach, _) = sighting_reach(44.0, fastest, Some([2.0, 0.0]), 20);
        assert!((reach - (44.0 + 20.0)).abs() < 1e-9, "{reach}");
        // A speed learnt wrong (40 px a frame) carries the search far, but paper farther
        // from the last sighting than 3 m/s allows is not the card's.
        let (reach, limit) = sighting_reach(44.0, fastest, Some([40.0, 0.0]), 40);
        assert!(
            reach > 800.0 && limit < 44.0 + 41.0 * 12.6,
            "{reach} {limit}"
        );
    }

    #[test]
    fn paper_a_card_cannot_reach_in_the_frames_since_is_not_its_own() {
        // At 240 fps a card goes at most 12.5 mm a frame (3 m/s). Held-out hard-7302
        // reading 10: paper 63 mm from a card seen two frames before was the row-mate
        // it struck; a card lost under a hand for 8 frames and seen 62 mm on had slid
        // over its row-mate.
        let from = Pt::new(0.0, 0.0);
        assert!(beyond_its_reach(from, Pt::new(63.0, 0.0), 2.0 / 240.0));
        assert!(!beyond_its_reach(from, Pt::new(62.0, 0.0), 8.0 / 240.0));
        assert!(!beyond_its_reach(from, Pt::new(20.0, 0.0), 2.0 / 240.0));
        // At 60 fps a frame is four times as long.
        assert!(!beyond_its_reach(from, Pt::new(63.0, 0.0), 2.0 / 60.0));
    }

    #[test]
    fn a_card_out_farther_than_it_can_have_gone_since_its_start_set_off_unseen() {
        // 240 fps: 12.5 mm a frame at the fastest, and its start seen up to two frames
        // late. Held-out hard-7301 reading 5: card 2, its start seen one frame before it
        // lay wholly out, under both players' hands, 20 frames after it had crossed.
        let place = Pt::new(0.0, 0.0);
        let within = |frames: f64| (frames + START_SEEN_LATE_FRAMES) / 240.0;
        assert!(beyond_its_reach(place, Pt::new(0.0, 60.0), within(1.0)));
        assert!(!beyond_its_reach(place, Pt::new(0.0, 35.0), within(1.0)));
        // Nine frames after its start, 130 mm on: it may have gone all the way since.
        assert!(!beyond_its_reach(place, Pt::new(130.0, 0.0), within(9.0)));
        assert!(beyond_its_reach(place, Pt::new(150.0, 0.0), within(9.0)));
    }

    #[test]
    fn angle_nearest_mod_180() {
        assert!((nearest_mod_180(178.0, 0.0) - (-2.0)).abs() < 1e-9);
        assert!((nearest_mod_180(10.0, 185.0) - 190.0).abs() < 1e-9);
    }
}

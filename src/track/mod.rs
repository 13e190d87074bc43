//! Cards over time: from the measured layout (`detect::layout`) and the per-frame
//! moved-card signal (`detect::motion::MotionMonitor`), each card is followed through the
//! match. A card that leaves its place is tracked as a moving white blob (paper that was
//! not there in the layout image) until it is wholly outside the playing area (`out`,
//! contract section 2) or settles again (`place`, and `send` when it settled in the other
//! territory); a card that vanished from its place without being followed is searched for
//! again and named among the missing poems (`detect::relocate`).
//!
//! Reads decoded BGR frames and the hands the hand stage saw (for `by`). Writes events
//! only; it never judges (that is `rules`) and never opens video (that is `capture`).

mod blob;

use crate::detect::layout::MeasuredLayout;
use crate::detect::motion::{CardState, MonitorState, MotionMonitor};
use crate::detect::naming::Namer;
use crate::detect::{relocate, DetectError, QuadPx};
use crate::field::{FieldError, FieldMap};
use crate::rules::geometry::{FieldGeometry, Pt};
use crate::rules::model::{By, Event, EventKind, Hand, Player};
use blob::{BlobFinder, SeenBlob};
use opencv::core::Mat;
use serde::{Deserialize, Serialize};

/// Everything the tracker knows between two frames, to continue a run exactly where it
/// stood (`analyze --resume`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrackerState {
    cards: Vec<Card>,
    monitor: MonitorState,
}

/// A followed card must move this far from its place before it counts as moving, mm.
pub const FLIGHT_START_MM: f64 = 8.0;
/// A moving card that moves less than this per frame is settling, mm.
pub const SETTLE_STEP_MM: f64 = 0.6;
/// Frames a moving card must stay settled before it counts as placed.
pub const SETTLE_FRAMES: u32 = 24;
/// Frames a moving card may go unseen (under a hand) before it is given up.
pub const LOST_FRAMES: u32 = 48;
/// A blob of at least this share of a face's area shows the whole card (ink and blur
/// take the rest).
pub const FULL_FACE_SHARE: f64 = 0.55;
/// A hand farther than this from a card when it starts moving did not drive it, mm.
pub const DRIVER_MAX_MM: f64 = 120.0;
/// Two hands whose distances to the card differ by less than this cannot be told apart
/// as the driver (18-2): `by: both`, mm.
pub const DRIVER_TIE_MM: f64 = 15.0;

/// What the tracker is told about one visible hand (from the hand stage).
#[derive(Debug, Clone, PartialEq)]
pub struct HandSeen {
    pub player: Player,
    pub hand: Hand,
    /// Fingertips in decoded image pixels.
    pub fingertips_px: Vec<[f64; 2]>,
}

#[derive(Debug, thiserror::Error)]
pub enum TrackError {
    #[error(transparent)]
    Detect(#[from] DetectError),
    #[error(transparent)]
    Field(#[from] FieldError),
    #[error("opencv: {0}")]
    OpenCv(#[from] opencv::Error),
    /// A saved state does not fit this layout (a resumed run on other files).
    #[error("saved state: {0}")]
    State(String),
}

impl TrackError {
    pub fn is_bad_input(&self) -> bool {
        match self {
            TrackError::Detect(e) => e.is_bad_input(),
            TrackError::Field(e) => e.is_bad_input(),
            TrackError::OpenCv(_) => false,
            TrackError::State(_) => true,
        }
    }
}

/// Where a card is in the tracker's eyes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Phase {
    /// In its place (watched by the motion monitor).
    Resting,
    /// Left its place and followed frame by frame.
    Moving(Flight),
    /// Left its place unseen; to be found again.
    Missing { since_frame: usize, searched: bool },
    /// Wholly outside the playing area (no longer followed).
    Out,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Flight {
    start_frame: usize,
    start_t_s: f64,
    by: By,
    hand: Option<Hand>,
    last: SeenBlob,
    /// Out margin (mm, positive = wholly out) and time of the previous sighting.
    prev_margin: Option<(f64, f64)>,
    settled: u32,
    unseen: u32,
    unseen_from_s: Option<f64>,
    angle_deg: f64,
}

/// One card followed through the match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Card {
    poem: Option<u8>,
    owner: Player,
    /// Outline in decoded pixels where it rests.
    rest_px: QuadPx,
    centre_mm: [f64; 2],
    angle_deg: f64,
    phase: Phase,
}

/// Follows every card of the layout through the frames.
pub struct CardTracker {
    map: FieldMap,
    geometry: FieldGeometry,
    monitor: MotionMonitor,
    blobs: BlobFinder,
    cards: Vec<Card>,
    namer: Option<Namer>,
    face_area_px: f64,
    /// The coloured border around the white face, mm: a blob of paper is the face only.
    border_mm: f64,
    fps: f64,
}

fn centre_px(q: &QuadPx) -> [f64; 2] {
    let mut c = [0.0; 2];
    for p in q {
        c[0] += p[0] / 4.0;
        c[1] += p[1] / 4.0;
    }
    c
}

impl CardTracker {
    /// `measured` is the layout with each card's outline in decoded pixels; `map` carries
    /// pixels to the field. `namer` re-identifies cards found away from their place
    /// (`None`: cards that vanish unseen stay missing).
    pub fn new(
        measured: &MeasuredLayout,
        map: FieldMap,
        namer: Option<Namer>,
        fps: f64,
    ) -> Result<CardTracker, TrackError> {
        let outlines: Vec<QuadPx> = measured.cards.iter().map(|c| c.raw_px).collect();
        let monitor = MotionMonitor::new(&measured.still.image, &outlines)?;
        let blobs = BlobFinder::new(&measured.still.image)?;
        let mut areas: Vec<f64> = measured
            .cards
            .iter()
            .map(|c| blob::quad_area(&c.face_px))
            .collect();
        areas.sort_by(|a, b| a.total_cmp(b));
        let face_area_px = areas.get(areas.len() / 2).copied().unwrap_or(3000.0);
        let mut face_share: Vec<f64> = measured
            .cards
            .iter()
            .map(|c| blob::quad_area(&c.face_px) / blob::quad_area(&c.quad.corners_px).max(1.0))
            .collect();
        face_share.sort_by(|a, b| a.total_cmp(b));
        let share = face_share
            .get(face_share.len() / 2)
            .copied()
            .unwrap_or(0.85)
            .clamp(0.5, 1.0);
        let size = &measured.layout.field;
        let border_mm = (size.card_w_mm * size.card_h_mm).sqrt() * (1.0 - share.sqrt()) / 2.0;
        let cards = measured
            .cards
            .iter()
            .map(|c| Card {
                poem: c.placement.poem,
                owner: c.placement.owner,
                rest_px: c.raw_px,
                centre_mm: [c.placement.x_mm, c.placement.y_mm],
                angle_deg: c.placement.angle_deg,
                phase: Phase::Resting,
            })
            .collect();
        Ok(CardTracker {
            geometry: map.geometry(),
            map,
            monitor,
            blobs,
            cards,
            namer,
            face_area_px,
            border_mm,
            fps,
        })
    }

    /// Cards now being followed in motion (for the pipeline's progress and tests).
    pub fn moving(&self) -> usize {
        self.cards
            .iter()
            .filter(|c| matches!(c.phase, Phase::Moving(_)))
            .count()
    }

    /// The state between frames.
    pub fn state(&self) -> TrackerState {
        TrackerState {
            cards: self.cards.clone(),
            monitor: self.monitor.state(),
        }
    }

    /// Continues from `state` (taken from a tracker built on the same layout).
    pub fn restore(&mut self, state: TrackerState) -> Result<(), TrackError> {
        if state.cards.len() != self.cards.len() {
            return Err(TrackError::State(format!(
                "the saved state has {} cards, the layout {}",
                state.cards.len(),
                self.cards.len()
            )));
        }
        self.cards = state.cards;
        self.monitor = MotionMonitor::from_state(state.monitor);
        Ok(())
    }

    /// One decoded frame, in order. Returns the events it completes, by time.
    pub fn push(
        &mut self,
        frame: usize,
        t_s: f64,
        bgr: &Mat,
        hands: &[HandSeen],
    ) -> Result<Vec<Event>, TrackError> {
        let signals = self.monitor.update(bgr)?.to_vec();
        let mut events = Vec::new();
        let mut claimed: Vec<[f64; 2]> = Vec::new();
        // Moving cards first: their blobs are not taken for new movers.
        for i in 0..self.cards.len() {
            if matches!(self.cards[i].phase, Phase::Moving(_)) {
                self.follow(i, frame, t_s, bgr, &mut events, &mut claimed)?;
            }
        }
        for i in 0..self.cards.len() {
            let state = signals[i].state;
            match self.cards[i].phase.clone() {
                Phase::Resting if state != CardState::Still => {
                    self.maybe_start(i, frame, t_s, bgr, hands, &mut claimed)?;
                    if matches!(self.cards[i].phase, Phase::Resting) && state == CardState::Moved {
                        self.cards[i].phase = Phase::Missing {
                            since_frame: frame,
                            searched: false,
                        };
                    }
                }
                Phase::Missing { .. } if state == CardState::Still => {
                    // Only covered for a while: it is back in view where it was.
                    self.cards[i].phase = Phase::Resting;
                }
                _ => {}
            }
        }
        self.search_missing(frame, t_s, bgr, &mut events)?;
        events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        Ok(events)
    }

    /// Whether resting card `i`, disturbed, has begun to move: a blob of paper that was
    /// not there before, near its place and off it.
    fn maybe_start(
        &mut self,
        i: usize,
        frame: usize,
        t_s: f64,
        bgr: &Mat,
        hands: &[HandSeen],
        claimed: &mut Vec<[f64; 2]>,
    ) -> Result<(), TrackError> {
        let c = &self.cards[i];
        let centre = centre_px(&c.rest_px);
        let reach_px = blob::quad_long_side(&c.rest_px) * 0.9;
        let min_area = 0.2 * self.face_area_px;
        let Some(b) = self
            .blobs
            .nearest(bgr, centre, reach_px, min_area, claimed)?
        else {
            return Ok(());
        };
        let mm = self.map.to_field(&b.outline_px)?;
        let bc = self.map.point_to_field(b.centre_px)?;
        let _ = mm;
        let moved = (bc.x_mm - c.centre_mm[0]).hypot(bc.y_mm - c.centre_mm[1]);
        if moved < FLIGHT_START_MM {
            return Ok(());
        }
        let (by, hand) = self.driver(Pt::new(c.centre_mm[0], c.centre_mm[1]), hands)?;
        claimed.push(b.centre_px);
        let angle = c.angle_deg;
        self.cards[i].phase = Phase::Moving(Flight {
            start_frame: frame,
            start_t_s: t_s,
            by,
            hand,
            last: b,
            prev_margin: None,
            settled: 0,
            unseen: 0,
            unseen_from_s: None,
            angle_deg: angle,
        });
        Ok(())
    }

    /// The hand that drove a card: the nearest fingertip when it started moving; `both`
    /// when two players' hands are equally near, or none is seen (18-2).
    fn driver(&self, at: Pt, hands: &[HandSeen]) -> Result<(By, Option<Hand>), TrackError> {
        let mut best: Vec<(f64, Player, Hand)> = Vec::new();
        for h in hands {
            if h.fingertips_px.is_empty() {
                continue;
            }
            let tips = self.map.to_field(&h.fingertips_px)?;
            let d = tips
                .iter()
                .map(|p| (p.x_mm - at.x_mm).hypot(p.y_mm - at.y_mm))
                .fold(f64::INFINITY, f64::min);
            best.push((d, h.player, h.hand));
        }
        best.sort_by(|a, b| a.0.total_cmp(&b.0));
        match best.as_slice() {
            [] => Ok((By::Both, None)),
            [(d, ..), ..] if *d > DRIVER_MAX_MM => Ok((By::Both, None)),
            [(d0, p0, h0), (d1, p1, _), ..] if *p1 != *p0 && d1 - d0 < DRIVER_TIE_MM => {
                let _ = h0;
                Ok((By::Both, None))
            }
            [(_, p, h), ..] => Ok((
                match p {
                    Player::A => By::A,
                    Player::B => By::B,
                },
                Some(*h),
            )),
        }
    }

    /// Follows moving card `i` one frame.
    fn follow(
        &mut self,
        i: usize,
        frame: usize,
        t_s: f64,
        bgr: &Mat,
        events: &mut Vec<Event>,
        claimed: &mut Vec<[f64; 2]>,
    ) -> Result<(), TrackError> {
        let Phase::Moving(mut f) = self.cards[i].phase.clone() else {
            return Ok(());
        };
        let reach_px = blob::quad_long_side(&self.cards[i].rest_px) * 0.6;
        let min_area = 0.2 * self.face_area_px;
        let seen = self
            .blobs
            .nearest(bgr, f.last.centre_px, reach_px, min_area, claimed)?;
        let Some(b) = seen else {
            f.unseen += 1;
            f.unseen_from_s.get_or_insert(t_s);
            if f.unseen > LOST_FRAMES {
                // Lost under a hand: it must be found again where it comes to rest.
                if let Some(poem) = self.cards[i].poem {
                    events.push(Event::new(
                        f.unseen_from_s.unwrap_or(t_s),
                        EventKind::Unseen {
                            from_s: f.unseen_from_s.unwrap_or(t_s),
                            to_s: t_s,
                            what: format!("card {poem} while it moved"),
                        },
                    ));
                }
                self.cards[i].phase = Phase::Missing {
                    since_frame: frame,
                    searched: false,
                };
            } else {
                self.cards[i].phase = Phase::Moving(f);
            }
            return Ok(());
        };
        claimed.push(b.centre_px);
        let pts = self.map.to_field(&b.outline_px)?;
        let full = b.area_px >= FULL_FACE_SHARE * self.face_area_px;
        if full {
            if let Some(a) = blob::long_axis_deg(&pts) {
                // The card's height runs along its long axis, at angle + 90.
                f.angle_deg = nearest_mod_180(a - 90.0, f.angle_deg);
            }
        }
        let size = &self.geometry.size;
        // The blob is the white face; the card reaches a border's width beyond it.
        let margin = blob::out_margin_mm(
            &pts,
            f.angle_deg,
            size.card_w_mm,
            size.card_h_mm,
            &self.geometry.playing_area(),
        ) + self.border_mm;
        let step_mm = {
            let a = self.map.point_to_field(f.last.centre_px)?;
            let c = self.map.point_to_field(b.centre_px)?;
            (a.x_mm - c.x_mm).hypot(a.y_mm - c.y_mm)
        };
        if margin > 0.0 && full {
            // 17-2: no part of it lies in the playing area. The crossing is placed between
            // the two frames by the margin's linear course.
            let t_out = match f.prev_margin {
                Some((m0, t0)) if m0 <= 0.0 && margin > m0 => {
                    t0 + (t_s - t0) * (-m0) / (margin - m0)
                }
                _ => t_s,
            };
            if let Some(poem) = self.cards[i].poem {
                let mut e = Event::new(
                    t_out,
                    EventKind::Out {
                        poem,
                        by: f.by,
                        hand: f.hand,
                    },
                );
                e.t_err_s = 0.5 / self.fps;
                e.frames = Some([f.start_frame as u64, frame as u64]);
                events.push(e);
            }
            self.cards[i].phase = Phase::Out;
            return Ok(());
        }
        f.prev_margin = Some((margin, t_s));
        f.unseen = 0;
        f.unseen_from_s = None;
        if step_mm < SETTLE_STEP_MM && full {
            f.settled += 1;
        } else {
            f.settled = 0;
        }
        f.last = b;
        if f.settled >= SETTLE_FRAMES {
            self.settle(i, frame, t_s, bgr, f, events)?;
        } else {
            self.cards[i].phase = Phase::Moving(f);
        }
        Ok(())
    }

    /// A followed card has come to rest: `place` there, after a `send` when it now lies
    /// in the other player's territory (26-1: the sender let go of it).
    fn settle(
        &mut self,
        i: usize,
        frame: usize,
        t_s: f64,
        bgr: &Mat,
        f: Flight,
        events: &mut Vec<Event>,
    ) -> Result<(), TrackError> {
        let pts = self.map.to_field(&f.last.outline_px)?;
        let Some(quad_px) = blob::card_quad_px(&f.last.outline_px) else {
            self.cards[i].phase = Phase::Missing {
                since_frame: frame,
                searched: false,
            };
            return Ok(());
        };
        let c = self.map.point_to_field(centre_px(&quad_px))?;
        let _ = pts;
        let t_rest = t_s - f64::from(SETTLE_FRAMES) / self.fps;
        self.place(i, frame, t_rest, bgr, quad_px, c, f.angle_deg, events)
    }

    #[allow(clippy::too_many_arguments)]
    fn place(
        &mut self,
        i: usize,
        _frame: usize,
        t_s: f64,
        bgr: &Mat,
        quad_px: QuadPx,
        c: Pt,
        angle_deg: f64,
        events: &mut Vec<Event>,
    ) -> Result<(), TrackError> {
        let Some(territory) = self.geometry.territory_of(c) else {
            // Settled in the gap or outside: no longer in a territory, not followed.
            self.cards[i].phase = if self.geometry.card_is_out(c.x_mm, c.y_mm, angle_deg) {
                Phase::Out
            } else {
                Phase::Missing {
                    since_frame: _frame,
                    searched: true,
                }
            };
            return Ok(());
        };
        let card = &mut self.cards[i];
        if let Some(poem) = card.poem {
            if territory != card.owner {
                events.push(Event::new(
                    t_s,
                    EventKind::Send {
                        from: card.owner,
                        poem,
                    },
                ));
            }
            let row = self.geometry.row_of(territory, c.y_mm);
            events.push(Event::new(
                t_s,
                EventKind::Place {
                    poem,
                    owner: territory,
                    row,
                    x_mm: (c.x_mm * 10.0).round() / 10.0,
                    y_mm: (c.y_mm * 10.0).round() / 10.0,
                },
            ));
        }
        card.owner = territory;
        card.rest_px = quad_px;
        card.centre_mm = [c.x_mm, c.y_mm];
        card.angle_deg = angle_deg;
        card.phase = Phase::Resting;
        self.monitor.rebase(i, bgr, &quad_px)?;
        Ok(())
    }

    /// Cards that vanished unseen are searched for once the view has settled.
    fn search_missing(
        &mut self,
        frame: usize,
        t_s: f64,
        bgr: &Mat,
        events: &mut Vec<Event>,
    ) -> Result<(), TrackError> {
        let due: Vec<usize> = (0..self.cards.len())
            .filter(|&i| {
                matches!(
                    self.cards[i].phase,
                    Phase::Missing {
                        searched: false,
                        ..
                    }
                )
            })
            .collect();
        if due.is_empty() || self.namer.is_none() {
            return Ok(());
        }
        let missing: Vec<u8> = due.iter().filter_map(|&i| self.cards[i].poem).collect();
        let still: Vec<QuadPx> = self
            .cards
            .iter()
            .zip(self.monitor.signals())
            .filter(|(c, s)| c.phase == Phase::Resting && s.state == CardState::Still)
            .map(|(c, _)| c.rest_px)
            .collect();
        for &i in &due {
            if let Phase::Missing { since_frame, .. } = self.cards[i].phase {
                self.cards[i].phase = Phase::Missing {
                    since_frame,
                    searched: true,
                };
            }
        }
        let Some(namer) = self.namer.as_ref() else {
            return Ok(());
        };
        let found = relocate::relocate(bgr, &still, self.face_area_px, &missing, namer)?;
        for r in found {
            let Some(poem) = r.name.poem else { continue };
            let Some(&i) = due.iter().find(|&&i| self.cards[i].poem == Some(poem)) else {
                continue;
            };
            let quad = r.card.card_px;
            let c = self.map.point_to_field(centre_px(&quad))?;
            let pts = self.map.to_field(&quad)?;
            let angle = blob::long_axis_deg(&pts).map_or(0.0, |a| a - 90.0);
            self.place(i, frame, t_s, bgr, quad, c, angle, events)?;
        }
        Ok(())
    }
}

/// `a` or `a + 180` moved by whole turns to lie nearest `reference`.
fn nearest_mod_180(a: f64, reference: f64) -> f64 {
    let d = (a - reference).rem_euclid(180.0);
    let d = if d > 90.0 { d - 180.0 } else { d };
    reference + d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn angle_nearest_mod_180() {
        assert!((nearest_mod_180(178.0, 0.0) - (-2.0)).abs() < 1e-9);
        assert!((nearest_mod_180(10.0, 185.0) - 190.0).abs() < 1e-9);
    }
}

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
//!
//! The files: `start` (a card setting off, and who drove it), `flight` (a card followed
//! in flight, and the touches told on the way), `out` (a card that went out of the
//! playing area), `settle` (a card come to rest: `place`, `send`), `search` (missing
//! cards searched for and named), `named` (the paper in flight named, when it may be a
//! neighbour's), and `blob` (new paper in a frame).

mod blob;
mod flight;
mod named;
mod out;
mod search;
mod settle;
mod start;

use crate::detect::cards;
use crate::detect::layout::MeasuredLayout;
use crate::detect::motion::{CardState, MonitorState, MotionMonitor};
use crate::detect::naming::Namer;
use crate::detect::relocate::CardScale;
use crate::detect::{DetectError, QuadPx};
use crate::field::{FieldError, FieldMap};
use crate::rules::geometry::{FieldGeometry, Pt};
use crate::rules::model::{By, CardRef, Event, Hand, Player};
use blob::BlobFinder;
use flight::Flight;
use opencv::core::Mat;
use out::Left;
use search::{ReadInVain, Searching};
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::Arc;

pub use flight::{
    COURSE_CONE_DEG, COURSE_MAX_S, FULL_FACE_SHARE, OUT_BACK_DOUBT, PARTIAL_REST_FRAMES,
    PUSH_SEEN_LATE_S, SETTLE_DRIFT_MM, SPEED_STEPS_MIN, UNSEEN_SPEED_MAX_MM_S, VELOCITY_DOUBT,
    VELOCITY_KEEP,
};
pub use out::{LEAVING_MAX_S, LEAVING_OUTLINES, OUT_COURSE_DOUBT, OUT_COURSE_ERR_MIN_S};
pub use search::{
    hand_may_cover, HAND_COVER_MM, SAME_SPOT, SEARCH_EVERY_S, SEARCH_FOR_S, SEARCH_LAG_S,
    SEARCH_NICE,
};
pub use start::{
    DRIVER_MAX_MM, DRIVER_TIE_MM, FLIGHT_START_MM, LOST_CLAIM_S, OFF_CARD_MM, PRESSES_SHARED_MM,
    PRESSES_SHARED_S, PUSHED_VACATED_MIN, PUSHER_VACATED_MAX, PUSH_IN_LINE, PUSH_NEIGHBOUR_WIDTHS,
    RIVAL_SHARE, SAME_TIP_MM, START_REACH, START_REACH_MAX, START_REACH_PER_S, STRIKE_REACH,
    VACATED_MIN,
};

/// Everything the tracker knows between two frames, to continue a run exactly where it
/// stood (`analyze --resume`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrackerState {
    cards: Vec<Card>,
    monitor: MonitorState,
    #[serde(default = "never")]
    last_search_s: f64,
    /// Where paper came to rest after the layout, in order.
    #[serde(default)]
    placed: Vec<Vec<[f64; 2]>>,
    #[serde(default)]
    read_in_vain: ReadInVain,
    #[serde(default)]
    recent_hands: VecDeque<Vec<HandSeen>>,
    #[serde(default)]
    held_touches: Vec<HeldTouch>,
    #[serde(default)]
    presses: VecDeque<Press>,
}

/// A press seen (`HandSeen::pressing_px`): when, by whom, where (image pixels).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Press {
    t_s: f64,
    player: Player,
    at_px: [f64; 2],
}

/// A card's start taken for a direct touch, held until `due_frame` (`PUSH_SEEN_LATE_S`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct HeldTouch {
    card: usize,
    /// When the card was seen to set off.
    start_t_s: f64,
    due_frame: usize,
    event: Event,
}

fn never() -> f64 {
    f64::NEG_INFINITY
}

/// Frames a moving card must stay settled before it counts as placed.
pub const SETTLE_FRAMES: u32 = 24;
/// Frames a moving card may go unseen (under a hand) before it is given up.
pub const LOST_FRAMES: u32 = 48;
/// A blob of new paper larger than this many card faces is not one card: a pale hand
/// reads as paper (a card's face, by this recording's own layout, is the measure).
/// Following it, a card sent under the sender's hand was taken for the hand going back
/// over the line, and ruled out. Two cards that touch in flight make one such blob
/// too; either is then lost and searched for once it rests.
pub const MAX_FACE_SHARE: f64 = 1.6;
/// A resting card whose place shows this share of tatami...
pub const BARE_SHARE: f64 = 0.6;
/// ...for this many frames in a row has gone, seen to start or not (a card slid away
/// under the hand): it is missing, and looked for. Its region may never settle enough
/// for the motion signal to call it moved (a shaking camera).
pub const BARE_FRAMES: u32 = SETTLE_FRAMES;
/// The touch that set a card moving is placed back from the first sighting of its paper
/// by the paper's growth, at most this many frames.
pub const TOUCH_BACK_MAX_FRAMES: f64 = 6.0;

/// What the tracker is told about one hand (from the hand stage).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HandSeen {
    pub player: Player,
    pub hand: Hand,
    /// Fingertips in decoded image pixels.
    pub fingertips_px: Vec<[f64; 2]>,
    /// Not seen in this frame: a hand over the playing area lost from sight without
    /// leaving it (under the other player's hand, or seen as one region with it), with
    /// the fingertips it was last seen with. It only contests who drove a card (`driver`):
    /// a card that sets off with it as near as the hand seen has no sure driver.
    #[serde(default)]
    pub hidden: bool,
    /// Where a fingertip of it presses at table height (the hand model's contact point),
    /// decoded image pixels.
    #[serde(default)]
    pub pressing_px: Option<[f64; 2]>,
}

/// The hands seen in the frame (not those only remembered as hidden).
fn visible(hands: &[HandSeen]) -> impl Iterator<Item = &HandSeen> {
    hands.iter().filter(|h| !h.hidden)
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
    /// Left its place unseen; to be found again (`given_up`: looked for until
    /// `SEARCH_FOR_S` had passed in vain, or settled where no card is looked for).
    /// `lost_at_px`: where it was last seen, when it was lost in flight under a hand or
    /// came to rest without its whole face showing.
    Missing {
        since_frame: usize,
        given_up: bool,
        #[serde(default)]
        lost_at_px: Option<[f64; 2]>,
        /// How it left the place it was last seen at: found again wholly out of the
        /// playing area, it went `out` while unseen.
        #[serde(default)]
        left: Option<Left>,
        /// Where it came to rest (centre, field mm, and angle), when it was handed to the
        /// search lying still with its face partly hidden: it lies there until found.
        #[serde(default)]
        rest_mm: Option<([f64; 2], f64)>,
    },
    /// Wholly outside the playing area, followed (without events) until it lies still,
    /// so that its paper there is not taken for another card's.
    Leaving(Flight),
    /// Wholly outside the playing area (no longer followed).
    Out,
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
    /// Since when its place has differed from the layout (a hand over it, or it moved).
    #[serde(default)]
    disturbed_since_s: Option<f64>,
    /// While disturbed: a neighbour was slid into it (`CardTracker::pushed_on`), driven
    /// by this hand; it starts moving struck by that card once its paper shows.
    #[serde(default)]
    pushed_by: Option<(By, Option<Hand>)>,
    /// ...and this card in flight was slid into it (`CardTracker::follow`): paper on
    /// that card's course beyond this one's place is this card's, not that card's.
    #[serde(default)]
    pusher: Option<usize>,
    /// Frames in a row its resting place has shown mostly tatami (`BARE_SHARE`).
    #[serde(default)]
    bare_frames: u32,
}

/// Follows every card of the layout through the frames.
pub struct CardTracker {
    map: FieldMap,
    geometry: FieldGeometry,
    monitor: MotionMonitor,
    blobs: BlobFinder,
    cards: Vec<Card>,
    namer: Option<Arc<Namer>>,
    /// The search under way, if any (`SEARCH_LAG_S`).
    searching: Option<Searching>,
    /// Take in a search's finds as soon as it has finished (`live`), not at its fixed
    /// frame: sooner, but the frame then depends on the machine.
    eager_search: bool,
    /// In `live`, the one thread the search reads card names on, at a lower priority
    /// (`SEARCH_NICE`): a search reads every card face it finds with all 100 poems,
    /// and at the frames' priority on both cores it took the CPU the hands need.
    search_pool: Option<Arc<rayon::ThreadPool>>,
    /// The typeface styles the layout's cards were named in: cards found again are read
    /// in them (one card set, one typeface).
    styles: Vec<usize>,
    /// The card set's scale (face area, border) as the layout measured it.
    scale: CardScale,
    /// The coloured border around the white face, mm: a blob of paper is the face only.
    border_mm: f64,
    fps: f64,
    last_search_s: f64,
    read_in_vain: ReadInVain,
    /// Each card's bare share (`BlobFinder::vacated_share`) in the frame being read, as
    /// far as it was asked; cleared at each frame.
    vacated: Vec<Cell<Option<f64>>>,
    /// The hands seen in the last frames, the oldest first (`TOUCH_BACK_MAX_FRAMES` and
    /// the frame being read).
    recent_hands: VecDeque<Vec<HandSeen>>,
    /// Direct start touches not yet told (`PUSH_SEEN_LATE_S`), in the order made.
    held_touches: Vec<HeldTouch>,
    /// The presses seen in the last `PRESSES_SHARED_S`, the oldest first.
    presses: VecDeque<Press>,
    /// Each named card's face in the layout image, rectified, by poem (`named`): what
    /// its paper looks like wherever it goes, under whichever card it is followed as.
    faces: Vec<(u8, Mat)>,
    /// The cards that traded names in the frame being read (`named`).
    traded: Vec<(usize, usize)>,
}

impl Card {
    /// Where the card lies still (centre, field mm, and angle), as far as its phase
    /// tells: in its place, or where it came to rest when it was handed to the search
    /// with its face partly hidden (a hand over it; a fingertip there presses it). A card
    /// in flight, lost in flight, searched for in vain or out lies nowhere known.
    fn rests_at(&self) -> Option<([f64; 2], f64)> {
        match &self.phase {
            Phase::Resting => Some((self.centre_mm, self.angle_deg)),
            Phase::Missing {
                rest_mm: Some(r),
                given_up: false,
                ..
            } => Some(*r),
            _ => None,
        }
    }
}

/// A quad moved in by `by` px along both edges at each corner: a card's face inside its
/// border.
fn inset(q: &QuadPx, by: f64) -> QuadPx {
    std::array::from_fn(|k| {
        let p = q[k];
        let mut r = p;
        for n in [q[(k + 1) % 4], q[(k + 3) % 4]] {
            let (dx, dy) = (n[0] - p[0], n[1] - p[1]);
            let len = dx.hypot(dy).max(1e-9);
            r[0] += by * dx / len;
            r[1] += by * dy / len;
        }
        r
    })
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
        let blobs = BlobFinder::new(&measured.still.image, &outlines)?;
        let scale = measured.card_scale();
        let mut face_share: Vec<f64> = measured
            .cards
            .iter()
            .map(|c| cards::quad_area(&c.face_px) / cards::quad_area(&c.quad.corners_px).max(1.0))
            .collect();
        face_share.sort_by(|a, b| a.total_cmp(b));
        let share = face_share
            .get(face_share.len() / 2)
            .copied()
            .unwrap_or(0.85)
            .clamp(0.5, 1.0);
        let size = &measured.layout.field;
        let border_mm = (size.card_w_mm * size.card_h_mm).sqrt() * (1.0 - share.sqrt()) / 2.0;
        let faces_px: Vec<QuadPx> = measured
            .cards
            .iter()
            .map(|c| {
                let px_per_mm = blob::quad_long_side(&c.raw_px) / size.card_h_mm;
                cards::order_upright(inset(&c.raw_px, border_mm * px_per_mm))
            })
            .collect();
        let poems: Vec<Option<u8>> = measured.cards.iter().map(|c| c.placement.poem).collect();
        let faces = named::layout_faces(&measured.still.image, &faces_px, &poems)?;
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
                disturbed_since_s: None,
                pushed_by: None,
                pusher: None,
                bare_frames: 0,
            })
            .collect();
        Ok(CardTracker {
            geometry: map.geometry(),
            map,
            monitor,
            blobs,
            cards,
            namer: namer.map(Arc::new),
            searching: None,
            eager_search: false,
            search_pool: None,
            styles: measured.card_styles().to_vec(),
            scale,
            border_mm,
            fps,
            last_search_s: f64::NEG_INFINITY,
            read_in_vain: ReadInVain::default(),
            vacated: Vec::new(),
            recent_hands: VecDeque::new(),
            presses: VecDeque::new(),
            held_touches: Vec::new(),
            faces,
            traded: Vec::new(),
        })
    }

    /// Cards now being followed in motion (for the pipeline's progress and tests).
    pub fn moving(&self) -> usize {
        self.cards
            .iter()
            .filter(|c| matches!(c.phase, Phase::Moving(_)))
            .count()
    }

    /// The cards lying in the playing area and where (the card, corners in field mm):
    /// resting ones at their place, moving ones where they were last seen. Cards missing
    /// or out are left out: no finger can press them where they were. An unnamed card
    /// still counts: a touch of it is an otetsuki by its territory alone (23-1).
    pub fn places_mm(&self) -> Result<Vec<(CardRef, [Pt; 4])>, TrackError> {
        let mut v = Vec::with_capacity(self.cards.len());
        for (i, c) in self.cards.iter().enumerate() {
            let card = self.card_ref(i);
            let (centre, angle) = match &c.phase {
                Phase::Moving(f) => {
                    let p = self.map.point_to_field(f.last.centre_px)?;
                    ([p.x_mm, p.y_mm], f.angle_deg)
                }
                _ => match c.rests_at() {
                    Some(r) => r,
                    None => continue,
                },
            };
            v.push((
                card,
                self.geometry.card_corners(centre[0], centre[1], angle),
            ));
        }
        Ok(v)
    }

    /// Card `i` as events name it: its poem, or the territory its resting place lies in.
    fn card_ref(&self, i: usize) -> CardRef {
        let c = &self.cards[i];
        let at = Pt::new(c.centre_mm[0], c.centre_mm[1]);
        CardRef::of(c.poem, i, self.geometry.territory_of(at))
    }

    /// The state between frames.
    pub fn state(&self) -> TrackerState {
        TrackerState {
            cards: self.cards.clone(),
            monitor: self.monitor.state(),
            last_search_s: self.last_search_s,
            placed: self.blobs.placed().to_vec(),
            read_in_vain: self.read_in_vain.clone(),
            recent_hands: self.recent_hands.clone(),
            held_touches: self.held_touches.clone(),
            presses: self.presses.clone(),
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
        self.last_search_s = state.last_search_s;
        self.read_in_vain = state.read_in_vain;
        self.recent_hands = state.recent_hands;
        self.held_touches = state.held_touches;
        self.presses = state.presses;
        for q in &state.placed {
            self.blobs.rebase(q)?;
        }
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
        let mut signals = self.monitor.update(bgr)?.to_vec();
        self.traded.clear();
        // Measured afresh in each frame, before any card in flight asks (also the first
        // frame after a resume, which saves none).
        self.vacated = vec![Cell::new(None); self.cards.len()];
        self.recent_hands.push_back(hands.to_vec());
        while self.recent_hands.len() > TOUCH_BACK_MAX_FRAMES as usize + 1 {
            self.recent_hands.pop_front();
        }
        for h in visible(hands) {
            if let Some(at_px) = h.pressing_px {
                self.presses.push_back(Press {
                    t_s,
                    player: h.player,
                    at_px,
                });
            }
        }
        while self
            .presses
            .front()
            .is_some_and(|p| p.t_s < t_s - PRESSES_SHARED_S)
        {
            self.presses.pop_front();
        }
        let mut events = Vec::new();
        let mut claimed: Vec<[f64; 4]> = Vec::new();
        // Moving cards first: their blobs are not taken for new movers. The card followed
        // longest first: two cards that touch show as one blob, and the paper is the
        // one's that was there before.
        let mut flying: Vec<(usize, usize)> = (0..self.cards.len())
            .filter_map(|i| match &self.cards[i].phase {
                Phase::Moving(f) | Phase::Leaving(f) => Some((f.start_frame, i)),
                _ => None,
            })
            .collect();
        flying.sort_unstable();
        // A card slid into by another in flight is followed before that card: it lies
        // ahead of it along the row, and paper beyond it is its own.
        let striker_of = |i: usize| match &self.cards[i].phase {
            Phase::Moving(f) | Phase::Leaving(f) => f.striker,
            _ => None,
        };
        let mut order: Vec<usize> = Vec::with_capacity(flying.len());
        for &(_, i) in &flying {
            if order.contains(&i) {
                continue;
            }
            for &(_, j) in &flying {
                if striker_of(j) == Some(i) && !order.contains(&j) {
                    order.push(j);
                }
            }
            order.push(i);
        }
        for i in order {
            match self.cards[i].phase {
                Phase::Moving(_) => {
                    self.follow(i, frame, t_s, bgr, hands, &mut events, &mut claimed)?
                }
                Phase::Leaving(_) => self.follow_leaving(i, frame, bgr, &mut claimed)?,
                _ => {}
            }
        }
        // Two cards found followed under each other's names traded the places watched.
        for (i, j) in std::mem::take(&mut self.traded) {
            signals.swap(i, j);
        }
        for (c, sig) in self.cards.iter_mut().zip(&signals) {
            if sig.state == CardState::Still {
                c.disturbed_since_s = None;
                c.pushed_by = None;
                c.pusher = None;
                c.bare_frames = 0;
            } else {
                c.disturbed_since_s.get_or_insert(t_s);
            }
        }
        // The card disturbed first chooses first: a card slid over its neighbours
        // disturbs them after itself, and its paper is its own.
        let mut order: Vec<usize> = (0..self.cards.len()).collect();
        order.sort_by(|&a, &b| {
            let key = |i: usize| self.cards[i].disturbed_since_s.unwrap_or(f64::INFINITY);
            key(a).total_cmp(&key(b))
        });
        for i in order {
            let state = signals[i].state;
            match self.cards[i].phase.clone() {
                Phase::Resting if state != CardState::Still => {
                    self.maybe_start(i, frame, t_s, bgr, hands, &mut claimed)?;
                    let resting = matches!(self.cards[i].phase, Phase::Resting);
                    let bare = resting && self.vacated_share(i, bgr)? >= BARE_SHARE;
                    let c = &mut self.cards[i];
                    c.bare_frames = if bare { c.bare_frames + 1 } else { 0 };
                    if resting && (state == CardState::Moved || c.bare_frames >= BARE_FRAMES) {
                        c.bare_frames = 0;
                        let c = &self.cards[i];
                        let at = Pt::new(c.centre_mm[0], c.centre_mm[1]);
                        let (by, hand) = self.driver(at, hands)?;
                        let from_s = c.disturbed_since_s.unwrap_or(t_s);
                        self.cards[i].phase = Phase::Missing {
                            since_frame: frame,
                            given_up: false,
                            lost_at_px: None,
                            left: Some(Left {
                                from_s,
                                by,
                                hand,
                                lost: None,
                            }),
                            rest_mm: None,
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
        if self.searching.as_ref().is_some_and(|s| {
            // Live: never waited for (the frames would wait behind it).
            if self.eager_search {
                s.job.is_finished()
            } else {
                frame >= s.apply_frame
            }
        }) {
            events.extend(self.apply_search()?);
        }
        self.search_missing(frame, t_s, bgr, hands)?;
        events.extend(
            self.held_touches
                .extract_if(.., |h| h.due_frame <= frame)
                .map(|h| h.event),
        );
        events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        Ok(events)
    }

    /// How large a blob of new paper may be to be one card: from a fifth of a face
    /// (the rest under a hand) to `MAX_FACE_SHARE` faces, decoded pixels.
    fn card_blob_areas_px(&self) -> [f64; 2] {
        [
            0.2 * self.scale.face_area_px,
            MAX_FACE_SHARE * self.scale.face_area_px,
        ]
    }

    /// The video has ended: the search under way is taken in and the start touches
    /// held back are told.
    pub fn finish(&mut self) -> Result<Vec<Event>, TrackError> {
        let mut events = self.apply_search()?;
        events.extend(self.held_touches.drain(..).map(|h| h.event));
        events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        Ok(events)
    }

    /// The start touches held back (`PUSH_SEEN_LATE_S`), as they stand now.
    pub fn held_touches(&self) -> impl Iterator<Item = &Event> {
        self.held_touches.iter().map(|h| &h.event)
    }

    /// The time before which this tracker's events are all given: a search under way
    /// may still date finds at the frame it looked at, and a start touch held
    /// (`PUSH_SEEN_LATE_S`) is not yet told.
    pub fn final_before_s(&self, t_s: f64) -> f64 {
        let held = self
            .held_touches
            .iter()
            .map(|h| h.event.t_s)
            .fold(t_s, f64::min);
        self.searching.as_ref().map_or(held, |s| s.t_s.min(held))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_card_handed_to_the_search_where_it_came_to_rest_lies_there_until_given_up() {
        let card = |phase| Card {
            poem: Some(14),
            owner: Player::B,
            rest_px: [[0.0; 2]; 4],
            centre_mm: [293.0, -134.0],
            angle_deg: 0.0,
            phase,
            disturbed_since_s: None,
            pushed_by: None,
            pusher: None,
            bare_frames: 0,
        };
        let missing = |given_up, rest_mm| Phase::Missing {
            since_frame: 8904,
            given_up,
            lost_at_px: Some([640.0, 200.0]),
            left: None,
            rest_mm,
        };
        assert_eq!(
            card(Phase::Resting).rests_at(),
            Some(([293.0, -134.0], 0.0))
        );
        // Sent into B's territory, at rest under the receiver's hand: it lies where it
        // stopped, not in the place it was laid out in.
        let rest = Some(([43.0, 134.5], 2.0));
        assert_eq!(card(missing(false, rest)).rests_at(), rest);
        // Searched for in vain, lost in flight, or gone out: nowhere known.
        assert_eq!(card(missing(true, rest)).rests_at(), None);
        assert_eq!(card(missing(false, None)).rests_at(), None);
        assert_eq!(card(Phase::Out).rests_at(), None);
    }
}

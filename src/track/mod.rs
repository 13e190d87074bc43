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

use crate::detect::cards::{self, dist};
use crate::detect::layout::MeasuredLayout;
use crate::detect::motion::{CardState, MonitorState, MotionMonitor};
use crate::detect::naming::Namer;
use crate::detect::relocate::{CardScale, Search};
use crate::detect::{relocate, DetectError, QuadPx};
use crate::field::{FieldError, FieldMap};
use crate::rules::geometry::{FieldGeometry, Pt, TOUCH_RADIUS_MM};
use crate::rules::model::{By, CardRef, Event, EventKind, Hand, Player};
use blob::{BlobFinder, SeenBlob};
use opencv::core::{Mat, Point2f, Vector};
use opencv::imgproc;
use opencv::prelude::MatTraitConst;
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::Arc;

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

/// The cards the last search read without finding any missing card among them (their
/// face centres, px), and the poems it looked for: the next search for the same poems
/// does not read them again while they lie there.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct ReadInVain {
    for_poems: Vec<u8>,
    at_px: Vec<[f64; 2]>,
}

fn never() -> f64 {
    f64::NEG_INFINITY
}

/// A followed card must move this far from its place before it counts as moving, mm.
pub const FLIGHT_START_MM: f64 = 8.0;
/// A moving card that stays within this of where it stopped is lying still, mm. Measured
/// from where it stopped, not frame to frame: under a flickering light its paper's edge,
/// and so its centre, shifts by a pixel or two from one frame to the next.
pub const SETTLE_DRIFT_MM: f64 = 3.0;
/// Frames a moving card must stay settled before it counts as placed.
pub const SETTLE_FRAMES: u32 = 24;
/// Frames a moving card whose whole face does not show must lie still before it is
/// handed to the card search.
pub const PARTIAL_REST_FRAMES: u32 = 2 * SETTLE_FRAMES;
/// Frames a moving card may go unseen (under a hand) before it is given up.
pub const LOST_FRAMES: u32 = 48;
/// A card followed out of the area lies out for good this long after it started moving,
/// s, even if its paper never held still for `SETTLE_FRAMES` (a shaking camera moves
/// the paper's outline by more than `SETTLE_DRIFT_MM`): a card is out in well under a
/// second, and following one lying out cost every frame after it.
pub const LEAVING_MAX_S: f64 = 3.0;
/// A blob of at least this share of a face's area shows the whole card (ink and blur
/// take the rest).
pub const FULL_FACE_SHARE: f64 = 0.55;
/// A blob of new paper larger than this many card faces is not one card: a pale hand
/// reads as paper (a card's face, by this recording's own layout, is the measure).
/// Following it, a card sent under the sender's hand was taken for the hand going back
/// over the line, and ruled out. Two cards that touch in flight make one such blob
/// too; either is then lost and searched for once it rests.
pub const MAX_FACE_SHARE: f64 = 1.6;
/// A hand farther than this from a card when it starts moving did not drive it, mm.
pub const DRIVER_MAX_MM: f64 = 120.0;
/// Two hands whose distances to the card differ by less than this cannot be told apart
/// as the driver (18-2): `by: both`, mm.
pub const DRIVER_TIE_MM: f64 = 15.0;
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
/// A card found by the search within this share of a card's long side of where a
/// missing card was last seen, and read best as that card, is that card.
pub const SAME_SPOT: f64 = 0.5;
/// Missing cards are searched for (a whole-frame card search and naming) at most this
/// often, video time...
pub const SEARCH_EVERY_S: f64 = 0.5;
/// A search runs beside the frames, on a thread of its own, and what it finds is applied
/// this long, video time, after the frame it looked at (in whole frames, at least one;
/// waiting for it there if it has not finished): the frames in between are not held up
/// by it, and the outcome does not depend on the machine's speed. 60 frames at 240 fps.
pub const SEARCH_LAG_S: f64 = 0.25;
/// ...for this long after they went missing, video time (a card sent across the field is
/// lost under the sender's hand, then covered again by the receiver's until it is
/// placed: one look is not enough)...
pub const SEARCH_FOR_S: f64 = 4.0;
/// ...and not while a fingertip is this near their place (a hand resting over a card
/// hides it; it has not gone), mm.
pub const HAND_COVER_MM: f64 = 100.0;
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
/// A card in flight goes by its learnt speed once it has been seen this many steps
/// apart: the first step, often between two partial sightings under the hand, can be
/// anything (1 px a frame for a card swept out at well over 1 m/s), and a speed too low
/// keeps the search for it too narrow once it goes under the hand.
pub const SPEED_STEPS_MIN: u32 = 2;
/// A resting card whose place shows this share of tatami...
pub const BARE_SHARE: f64 = 0.6;
/// ...for this many frames in a row has gone, seen to start or not (a card slid away
/// under the hand): it is missing, and looked for. Its region may never settle enough
/// for the motion signal to call it moved (a shaking camera).
pub const BARE_FRAMES: u32 = SETTLE_FRAMES;
/// A card timed out on its course after it went unseen (`out_on_course`) is timed to
/// within this share of the time from its last sighting (one standard deviation).
pub const OUT_COURSE_DOUBT: f64 = 0.5;
/// ...and never to better than this, s.
pub const OUT_COURSE_ERR_MIN_S: f64 = 0.002;
/// Paper within this angle of the way a card lost in flight was going is ahead on its
/// course (`ahead_on_course`), degrees.
pub const COURSE_CONE_DEG: f64 = 30.0;
/// A card in flight has a course to go on for this long after it set off, s: a strike or
/// a sweep is over sooner, and a card followed longer has come to rest (its partial
/// paper's centre may wander by 10 px under a noisy light).
pub const COURSE_MAX_S: f64 = 1.0;
/// A card followed out of the area keeps the outlines of this many of its last sightings,
/// to be known paper once it is no longer followed (a tenth of a second at 240 fps).
pub const LEAVING_OUTLINES: usize = 24;
/// A crossing time carried back from a sighting out is doubted by this share of the
/// time carried back (the card slows and turns on the tatami).
pub const OUT_BACK_DOUBT: f64 = 0.3;
/// The touch that set a card moving is placed back from the first sighting of its paper
/// by the paper's growth, at most this many frames.
pub const TOUCH_BACK_MAX_FRAMES: f64 = 6.0;
/// A card's start taken for a direct touch is held this long after it set off before it
/// is told, s: a row-mate the hand drags along the row into it moves under the hand, and
/// its paper may show only after the card it struck is seen flying (brush realistic-7421
/// reading 9: 50 ms after). A row-mate seen coming towards the card's place in that time
/// struck it (17-2), and the touch is told as a strike.
pub const PUSH_SEEN_LATE_S: f64 = 0.075;

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
    },
    /// Wholly outside the playing area, followed (without events) until it lies still,
    /// so that its paper there is not taken for another card's.
    Leaving(Flight),
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
    /// Out margin (mm, positive = wholly out) and time of the last sighting proven to
    /// reach into the playing area...
    prev_margin: Option<(f64, f64)>,
    /// ...and whether its whole face showed then.
    #[serde(default)]
    prev_full: bool,
    /// The out margin of the last sighting, whole face or not, as the card's own size
    /// and its last known turn give it (a guess where part of it is hidden), and its
    /// time.
    #[serde(default)]
    guess_margin: Option<(f64, f64)>,
    /// How far its paper's centre moved a frame, smoothed over the sightings, px: where
    /// to look for it after frames under a hand.
    #[serde(default)]
    vel_px: Option<[f64; 2]>,
    /// Steps between sightings its speed was learnt from: one step between two partial
    /// sightings under a hand can be anything (`SPEED_STEPS_MIN`).
    #[serde(default)]
    steps: u32,
    settled: u32,
    /// Frames it has lain still, whether or not its whole face showed...
    #[serde(default)]
    still: u32,
    /// ...since it stopped here.
    #[serde(default)]
    stopped_at_px: Option<[f64; 2]>,
    unseen: u32,
    unseen_from_s: Option<f64>,
    angle_deg: f64,
    /// The touch that set it moving, told once its speed is known.
    #[serde(default)]
    touch: Option<StartTouch>,
    /// Set moving by another card, and no hand has touched it since: a fingertip on its
    /// paper while it is still in the area is a touch of its own.
    #[serde(default)]
    struck: bool,
    /// The card in flight that was slid into it, when known: it is followed before that
    /// card (a card cannot pass through the one it pushes along the row).
    #[serde(default)]
    striker: Option<usize>,
    /// When a fingertip of each player (by `Player::index`) was first seen on its paper.
    #[serde(default)]
    first_on_s: [Option<f64>; 2],
    /// Out of the area: the outlines of its last sightings (`LEAVING_OUTLINES`).
    #[serde(default)]
    recent_outlines: VecDeque<Vec<[f64; 2]>>,
}

impl Flight {
    /// Its speed, from its last sighting to `b` (seen `unseen + 1` frames later).
    fn learn_speed(&mut self, b: &SeenBlob) {
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
    fn speed_px(&self) -> Option<[f64; 2]> {
        self.vel_px.filter(|_| self.steps >= SPEED_STEPS_MIN)
    }
}

/// A card that went out of sight from its place or in flight: since when it was
/// unseen there and the hand that drove it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Left {
    from_s: f64,
    by: By,
    hand: Option<Hand>,
    /// Where and how fast it was last seen in flight, when it was followed.
    #[serde(default)]
    lost: Option<LostAt>,
}

/// A card in flight at its last sighting before it went unseen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct LostAt {
    t_s: f64,
    at_mm: [f64; 2],
    angle_deg: f64,
    /// Its speed then, mm/s, when learnt (`SPEED_STEPS_MIN`).
    speed_mm_s: Option<f64>,
}

/// The hand that set a card moving, held until the next sighting times the touch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StartTouch {
    player: Player,
    hand: Hand,
    /// How far the card had come when its paper was first seen (new paper's area over
    /// the face's side), px.
    came_px: f64,
    /// When the card was first disturbed: the touch was not earlier.
    disturbed_s: Option<f64>,
    /// Struck by another card in motion, not by the hand (23-2).
    #[serde(default)]
    struck: bool,
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

/// The nice value of the card search's threads in `live`: a thread at 0 (the frames'
/// stages) gets about three times the CPU of one at 5 on a shared core.
pub const SEARCH_NICE: i32 = 5;

/// Lowers the calling thread's scheduling priority to `SEARCH_NICE` (Linux; elsewhere
/// nothing changes).
fn yield_to_frames() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority reads only its integer arguments; for PRIO_PROCESS a thread
    // id names that one thread on Linux.
    unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, SEARCH_NICE);
    }
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
}

/// A search for missing cards running on its own thread: what it was asked, and when
/// its finds are applied.
struct Searching {
    /// The frame it looked at, and its time (the finds are dated then).
    frame: usize,
    t_s: f64,
    apply_frame: usize,
    /// The missing cards it looks for (indices), and their poems.
    due: Vec<usize>,
    missing: Vec<u8>,
    /// The search's finds, and the frame it looked at (the found cards' reference).
    job: std::thread::JoinHandle<Result<(Search, Mat), DetectError>>,
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
            held_touches: Vec::new(),
        })
    }

    /// Takes in each search's finds once it has finished (`live`), rather than
    /// `SEARCH_LAG_S` after the frame it looked at, and never waits for one while
    /// frames pass. The search then reads on one thread of its own, below the priority
    /// of the frames' own stages.
    pub fn eager_search(&mut self, eager: bool) {
        self.eager_search = eager;
        self.search_pool = if eager {
            rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .thread_name(|_| "card names".into())
                .start_handler(|_| yield_to_frames())
                .build()
                .ok()
                .map(Arc::new)
        } else {
            None
        };
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
                Phase::Resting => (c.centre_mm, c.angle_deg),
                Phase::Moving(f) => {
                    let p = self.map.point_to_field(f.last.centre_px)?;
                    ([p.x_mm, p.y_mm], f.angle_deg)
                }
                Phase::Missing { .. } | Phase::Leaving(_) | Phase::Out => continue,
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
        let signals = self.monitor.update(bgr)?.to_vec();
        self.recent_hands.push_back(hands.to_vec());
        while self.recent_hands.len() > TOUCH_BACK_MAX_FRAMES as usize + 1 {
            self.recent_hands.pop_front();
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
        self.vacated = vec![Cell::new(None); self.cards.len()];
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

    /// Whether resting card `i`, disturbed, has begun to move: a blob of paper that was
    /// not there before, near its place and off it.
    fn maybe_start(
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
            guess_margin: None,
            vel_px: None,
            steps: 0,
            settled: 0,
            still: 0,
            stopped_at_px: None,
            unseen: 0,
            unseen_from_s: None,
            angle_deg: angle,
            touch,
            struck,
            striker: self.cards[i].pusher,
            first_on_s: [None; 2],
            recent_outlines: VecDeque::new(),
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
    fn pushed_on_from(
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
    fn came_towards(&self, i: usize, o: &Card, now: Pt) -> bool {
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
    fn vacated_share(&self, i: usize, bgr: &Mat) -> Result<f64, TrackError> {
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
    /// within half the card's width and `TOUCH_RADIUS_MM` of its centre), or none is
    /// seen (18-2). A struck card moves only after the touches that hold it, so when
    /// both players' fingertips lie on it as it starts to move, the nearer one did not
    /// necessarily touch first: the ruling goes to its owner and to review.
    fn driver(&self, at: Pt, hands: &[HandSeen]) -> Result<(By, Option<Hand>), TrackError> {
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

    /// Follows moving card `i` one frame.
    #[allow(clippy::too_many_arguments)]
    fn follow(
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
            if let Some(j) = beyond_its_reach(from, paper, f.unseen, self.fps)
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
                    given_up: false,
                    lost_at_px: Some(f.last.centre_px),
                    left: Some(self.left_of(&f)?),
                };
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
        let area = self.geometry.playing_area();
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
        let guess = if full {
            margin
        } else {
            blob::out_margin_mm(&pts, f.angle_deg, size.card_w_mm, size.card_h_mm, &area)
                + self.border_mm
        };
        let out = if full {
            margin > 0.0
        } else {
            blob::out_margin_mm(&pts, 0.0, diagonal, diagonal, &area) + self.border_mm > 0.0
        };
        if out {
            // 17-2: no part of it lies in the playing area. It crossed after the last
            // sighting proven inside: seen whole both times, by the margin's linear
            // course; else in the middle of the span, where the hidden part leaves no
            // better guess.
            let whole_both =
                matches!(f.prev_margin, Some((m0, _)) if full && f.prev_full && margin > m0);
            let (mut t_out, mut span_s) = match f.prev_margin {
                Some((m0, t0)) if whole_both => (t0 + (t_s - t0) * (-m0) / (margin - m0), t_s - t0),
                // Part of it hidden since: where the guessed margin, from its own size
                // and last turn, crossed nil between the sightings around it, when that
                // lies in the span; else the middle of the span.
                Some((_, t0)) => {
                    let mid = (t0 + t_s) / 2.0;
                    let t = match f.guess_margin {
                        Some((g0, tg)) if tg >= t0 && g0 <= 0.0 && guess > g0 => {
                            tg + (t_s - tg) * (-g0) / (guess - g0)
                        }
                        _ => mid,
                    };
                    (t.clamp(t0, t_s), t_s - t0)
                }
                // Never proven in the area since it set off (its paper first seen
                // partly, then out): it lay in its place until then.
                None => {
                    let t0 = (f.start_t_s - 1.0 / self.fps).min(t_s);
                    ((t0 + t_s) / 2.0, (t_s - t0).max(1.0 / self.fps))
                }
            };
            // More than a frame unseen between, seen whole now but not before: carried
            // back along its own course at its speed to where its margin was nil. Seen
            // whole on both sides, the margin's course is the better guess: the speed
            // after a gap is smoothed over sightings before it, when the card was faster
            // or its paper only partly out from under the hand.
            if full && !whole_both && span_s > 1.5 / self.fps {
                if let Some(back_s) =
                    self.back_to_line_s(&b, &pts, f.angle_deg, margin, f.vel_px)?
                {
                    let from = t_s - span_s;
                    t_out = (t_s - back_s).clamp(from, t_s);
                    span_s = (OUT_BACK_DOUBT * back_s).clamp(1.0 / self.fps, span_s);
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
        }
        if guess <= 0.0 {
            f.guess_margin = Some((guess, t_s));
        }
        f.unseen = 0;
        f.unseen_from_s = None;
        if self.lies_still(&mut f, &b) {
            f.still += 1;
            if full {
                f.settled += 1;
            }
        }
        f.last = b;
        if f.settled >= SETTLE_FRAMES {
            self.settle(i, frame, t_s, bgr, f, events)?;
        } else if f.still >= PARTIAL_REST_FRAMES {
            // At rest, but its paper never shows whole (it lies partly where another card
            // lay, or a hand stays on it): the card search finds and names it there.
            self.cards[i].phase = Phase::Missing {
                since_frame: frame,
                given_up: false,
                lost_at_px: Some(f.last.centre_px),
                left: Some(self.left_of(&f)?),
            };
        } else {
            self.cards[i].phase = Phase::Moving(f);
        }
        Ok(())
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
    fn struck_lately(&mut self, i: usize, paper: Pt, by: By, hand: Option<Hand>) {
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
    /// How large a blob of new paper may be to be one card: from a fifth of a face
    /// (the rest under a hand) to `MAX_FACE_SHARE` faces, decoded pixels.
    fn card_blob_areas_px(&self) -> [f64; 2] {
        [
            0.2 * self.scale.face_area_px,
            MAX_FACE_SHARE * self.scale.face_area_px,
        ]
    }

    fn sighting(
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

    /// How long ago a card seen wholly out (outline `pts`, field mm, `margin` past the
    /// line) crossed the line, from its speed (`vel_px`, decoded pixels a frame): its
    /// outline moved back by whole frames until the margin is nil, s.
    fn back_to_line_s(
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

    /// Follows card `i`, out of the area, until it lies still or is lost; then its paper
    /// is known.
    fn follow_leaving(
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
                if self.lies_still(&mut f, &b) {
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
    fn left_of(&self, f: &Flight) -> Result<Left, TrackError> {
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

    /// Whether a flight's paper, seen at `b`, still lies within `SETTLE_DRIFT_MM` of
    /// where it stopped; when it has moved on, its stillness starts again from here.
    fn lies_still(&self, f: &mut Flight, b: &SeenBlob) -> bool {
        let limit_px = SETTLE_DRIFT_MM * self.px_per_mm();
        let c = b.centre_px;
        match f.stopped_at_px {
            Some(a) if dist(a, c) < limit_px => true,
            _ => {
                f.stopped_at_px = Some(c);
                f.still = 0;
                f.settled = 0;
                false
            }
        }
    }

    /// Which way card `i`'s flight `f` was going at its last sighting (px, from its
    /// place to there), while it is young enough to be still going
    /// (`COURSE_MAX_S`): a card followed longer has come to rest and has no course.
    fn course_px(&self, i: usize, f: &Flight, frame: usize) -> Option<[f64; 2]> {
        let young = (frame.saturating_sub(f.start_frame) as f64) < COURSE_MAX_S * self.fps;
        let rest = centre_px(&self.cards[i].rest_px);
        young.then(|| [f.last.centre_px[0] - rest[0], f.last.centre_px[1] - rest[1]])
    }

    /// Decoded pixels per field millimetre, near the field's centre.
    fn px_per_mm(&self) -> f64 {
        let long_px = self
            .cards
            .first()
            .map_or(self.geometry.size.card_h_mm, |c| {
                blob::quad_long_side(&c.rest_px)
            });
        long_px / self.geometry.size.card_h_mm
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
                given_up: false,
                lost_at_px: None,
                left: None,
            };
            return Ok(());
        };
        let c = self.map.point_to_field(centre_px(&quad_px))?;
        let _ = pts;
        let t_rest = t_s - f64::from(SETTLE_FRAMES) / self.fps;
        let from = events.len();
        self.place(i, frame, t_rest, bgr, quad_px, c, f.angle_deg, events)?;
        // Set moving by the receiver's hand and settled in the receiver's territory: the
        // sender had let go of it there before that touch (26-1), and the receiver only
        // straightened a card sent to him.
        let mover = f.by.player();
        // Likewise a card the receiver's fingertip was on while it moved: it was sent
        // before that.
        let back_s = (TOUCH_BACK_MAX_FRAMES + 1.0) / self.fps;
        for e in &mut events[from..] {
            if let EventKind::Send { from, .. } = e.what {
                let receiver = from.other();
                if mover == Some(receiver) {
                    e.t_s = e.t_s.min(f.start_t_s - back_s);
                }
                if let Some(t) = f.first_on_s[receiver.index()] {
                    // Not before the sender set it moving.
                    e.t_s = e.t_s.min((t - back_s).max(f.start_t_s));
                }
            }
        }
        Ok(())
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
            self.blobs.rebase(&quad_px)?;
            self.cards[i].phase = if self.geometry.card_is_out(c.x_mm, c.y_mm, angle_deg) {
                if let (Phase::Missing { left: Some(l), .. }, Some(poem)) =
                    (&self.cards[i].phase, self.cards[i].poem)
                {
                    let course = l
                        .lost
                        .and_then(|lost| out_on_course(&self.geometry, &lost, c, angle_deg));
                    events.extend(out_while_unseen(poem, l, t_s, course));
                }
                Phase::Out
            } else {
                Phase::Missing {
                    since_frame: _frame,
                    given_up: true,
                    lost_at_px: None,
                    left: None,
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
        self.blobs.rebase(&quad_px)?;
        Ok(())
    }

    /// Cards that vanished unseen are searched for, at most every `SEARCH_EVERY_S`, once
    /// no fingertip is near their place. The search looks at this frame on a thread of
    /// its own; `apply_search` takes in what it found `SEARCH_LAG_S` later.
    fn search_missing(
        &mut self,
        frame: usize,
        t_s: f64,
        bgr: &Mat,
        hands: &[HandSeen],
    ) -> Result<(), TrackError> {
        if self.searching.is_some() || t_s - self.last_search_s < SEARCH_EVERY_S {
            return Ok(());
        }
        let Some(namer) = self.namer.clone() else {
            return Ok(());
        };
        let waiting = self.cards.iter().any(|c| {
            matches!(
                c.phase,
                Phase::Missing {
                    given_up: false,
                    ..
                }
            )
        });
        if !waiting {
            return Ok(());
        }
        let mut tips: Vec<Pt> = Vec::new();
        for h in visible(hands) {
            tips.extend(self.map.to_field(&h.fingertips_px)?);
        }
        let due: Vec<usize> = (0..self.cards.len())
            .filter(|&i| {
                let c = &self.cards[i];
                matches!(
                    c.phase,
                    Phase::Missing {
                        given_up: false,
                        ..
                    }
                ) && tips.iter().all(|p| {
                    (p.x_mm - c.centre_mm[0]).hypot(p.y_mm - c.centre_mm[1]) > HAND_COVER_MM
                })
            })
            .collect();
        if due.is_empty() {
            return Ok(());
        }
        self.last_search_s = t_s;
        let missing: Vec<u8> = due.iter().filter_map(|&i| self.cards[i].poem).collect();
        let still: Vec<QuadPx> = self
            .cards
            .iter()
            .zip(self.monitor.signals())
            // A card in its place, still or only disturbed (a hand over it, noise): it is
            // not looked at again. One whose place settled into another look may have
            // been replaced there, and is.
            .filter(|(c, s)| c.phase == Phase::Resting && s.state != CardState::Moved)
            .map(|(c, _)| c.rest_px)
            .collect();
        // A card not found now is looked for again until `SEARCH_FOR_S` has passed.
        for &i in &due {
            if let Phase::Missing {
                since_frame,
                lost_at_px,
                ref left,
                ..
            } = self.cards[i].phase
            {
                let gone_s = frame.saturating_sub(since_frame) as f64 / self.fps;
                self.cards[i].phase = Phase::Missing {
                    since_frame,
                    given_up: gone_s >= SEARCH_FOR_S,
                    lost_at_px,
                    left: left.clone(),
                };
            }
        }
        let known: Vec<[f64; 2]> = if self.read_in_vain.for_poems == missing {
            self.read_in_vain.at_px.clone()
        } else {
            Vec::new()
        };
        let image = bgr.try_clone()?;
        let scale = self.scale;
        let styles = self.styles.clone();
        let looking_for = missing.clone();
        let pool = self.search_pool.clone();
        let job = std::thread::Builder::new()
            .name("card search".into())
            .spawn(move || {
                let search = || {
                    relocate::relocate(
                        &image,
                        &still,
                        &scale,
                        &looking_for,
                        &namer,
                        Some(&styles),
                        &known,
                    )
                };
                let found = match pool {
                    Some(p) => {
                        yield_to_frames();
                        p.install(search)?
                    }
                    None => search()?,
                };
                Ok((found, image))
            })
            .map_err(|e| TrackError::State(format!("cannot start the card search: {e}")))?;
        self.searching = Some(Searching {
            frame,
            t_s,
            apply_frame: frame + (SEARCH_LAG_S * self.fps).round().max(1.0) as usize,
            due,
            missing,
            job,
        });
        Ok(())
    }

    /// Takes in what the search under way found, waiting for it if need be: the cards
    /// it named take their new places as of the frame it looked at (dated then, and
    /// watched against that frame, so that one moved since shows as disturbed at the
    /// next frame). Returns the events that makes.
    pub fn apply_search(&mut self) -> Result<Vec<Event>, TrackError> {
        let mut events = Vec::new();
        let Some(s) = self.searching.take() else {
            return Ok(events);
        };
        let (search, bgr) = s
            .job
            .join()
            .map_err(|_| TrackError::State("the card search stopped unexpectedly".into()))??;
        let bgr = &bgr;
        let (frame, t_s, due) = (s.frame, s.t_s, s.due);
        let mut in_vain = if self.read_in_vain.for_poems == s.missing {
            std::mem::take(&mut self.read_in_vain.at_px)
        } else {
            Vec::new()
        };
        in_vain.extend(search.read_at_px);
        for r in search.found {
            // Named; or read best as a card that was seen lying just there (its name need
            // not stand out: where it lies says which card it is). A card that came back
            // into view at its place meanwhile is no longer looked for.
            let missing = |i: usize| matches!(self.cards[i].phase, Phase::Missing { .. });
            let i = match r.name.poem {
                Some(poem) => due
                    .iter()
                    .find(|&&i| self.cards[i].poem == Some(poem) && missing(i)),
                None => due.iter().find(|&&i| {
                    let c = &self.cards[i];
                    let here = r.card.centre_px();
                    c.poem == Some(r.name.best_poem)
                        && matches!(c.phase, Phase::Missing { lost_at_px: Some(at), .. }
                            if dist(at, here)
                                < SAME_SPOT * blob::quad_long_side(&c.rest_px))
                }),
            };
            let Some(&i) = i else {
                continue;
            };
            let found_at = cards::centre(&r.card.face_px);
            in_vain.retain(|&p| p != found_at);
            let quad = r.card.card_px;
            let c = self.map.point_to_field(centre_px(&quad))?;
            let pts = self.map.to_field(&quad)?;
            let angle = blob::long_axis_deg(&pts).map_or(0.0, |a| a - 90.0);
            self.place(i, frame, t_s, bgr, quad, c, angle, &mut events)?;
        }
        self.read_in_vain = ReadInVain {
            for_poems: s.missing,
            at_px: in_vain,
        };
        events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        Ok(events)
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

/// A card found wholly out of the playing area that was last seen in it at `l.from_s`
/// went `out` between then and `found_s`: the crossing is put in the middle of that
/// span, with half of it as its error, and the span is `unseen` (its ruling is
/// reviewed).
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

/// Whether paper at `paper` lies farther from a card's last sighting `from` (field mm)
/// than the card can have gone in the `unseen + 1` frames since, at the fastest a card
/// goes (`UNSEEN_SPEED_MAX_MM_S`): it is not that card's own.
fn beyond_its_reach(from: Pt, paper: Pt, unseen: u32, fps: f64) -> bool {
    paper.dist_mm(from) > UNSEEN_SPEED_MAX_MM_S / fps * f64::from(unseen + 1)
}

/// Whether field point `p` lies on card `c` where it rests, its outline grown by
/// `grow_mm`.
fn on_card(c: &Card, p: Pt, w_mm: f64, h_mm: f64, grow_mm: f64) -> bool {
    let (s, co) = c.angle_deg.to_radians().sin_cos();
    let (dx, dy) = (p.x_mm - c.centre_mm[0], p.y_mm - c.centre_mm[1]);
    let (u, v) = (dx * co + dy * s, -dx * s + dy * co);
    u.abs() <= w_mm / 2.0 + grow_mm && v.abs() <= h_mm / 2.0 + grow_mm
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

/// How long after its last sighting in flight (`lost`) a card found lying out at `found`
/// (field mm, turned `found_deg`) went wholly out, s: slowing evenly from its speed
/// then to rest where it lies (a card sliding on tatami is slowed by friction), it
/// crossed where its outline first lay wholly outside on the way. `None` when its speed
/// was not learnt, or it moved too little to tell.
fn out_on_course(
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
fn out_while_unseen(poem: u8, l: &Left, found_s: f64, course_s: Option<f64>) -> [Event; 2] {
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
    let unseen = Event::new(
        from_s,
        EventKind::Unseen {
            from_s,
            to_s: found_s,
            what: format!("card {poem} while it left the playing area"),
        },
    );
    [unseen, out]
}

/// Whether paper at `paper` lies ahead on the course of a card last seen at `last` going
/// `way` (px, any length): within `COURSE_CONE_DEG` of that way.
fn ahead_on_course(last: [f64; 2], way: [f64; 2], paper: [f64; 2]) -> bool {
    let e = [paper[0] - last[0], paper[1] - last[1]];
    let (nd, ne) = (way[0].hypot(way[1]), e[0].hypot(e[1]));
    nd > 0.0
        && ne >= 1.0
        && (way[0] * e[0] + way[1] * e[1]) >= nd * ne * COURSE_CONE_DEG.to_radians().cos()
}

/// `a` or `a + 180` moved by whole turns to lie nearest `reference`.
fn nearest_mod_180(a: f64, reference: f64) -> f64 {
    let d = (a - reference).rem_euclid(180.0);
    let d = if d > 90.0 { d - 180.0 } else { d };
    reference + d
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
    fn paper_a_card_cannot_reach_in_the_frames_since_is_not_its_own() {
        // At 240 fps a card goes at most 12.5 mm a frame (3 m/s). Held-out hard-7302
        // reading 10: paper 63 mm from a card seen two frames before was the row-mate
        // it struck; a card lost under a hand for 8 frames and seen 62 mm on had slid
        // over its row-mate.
        let from = Pt::new(0.0, 0.0);
        assert!(beyond_its_reach(from, Pt::new(63.0, 0.0), 1, 240.0));
        assert!(!beyond_its_reach(from, Pt::new(62.0, 0.0), 7, 240.0));
        assert!(!beyond_its_reach(from, Pt::new(20.0, 0.0), 1, 240.0));
        // At 60 fps a frame is four times as long.
        assert!(!beyond_its_reach(from, Pt::new(63.0, 0.0), 1, 60.0));
    }

    #[test]
    fn angle_nearest_mod_180() {
        assert!((nearest_mod_180(178.0, 0.0) - (-2.0)).abs() < 1e-9);
        assert!((nearest_mod_180(10.0, 185.0) - 190.0).abs() < 1e-9);
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

//! The per-frame schedule: the network runs every `idle_every_s` (every
//! `active_every_s` while a hand is over the field); when a hand's state (seen,
//! inside the playing area, pressing a card) differs between two runs, the frames between
//! them, kept small in a ring, are searched by halving until the change is pinned to two
//! neighbouring frames. The event's time is then interpolated between those two frames.
//!
//! Reads frames in order, the calibration and the card positions; emits `touch` (direct),
//! `enter` and `leave` (contract section 4). It never judges.
//!
//! The files: `press` (the contact network asked whether a hand presses a card),
//! `events` (a change of state pinned and timed, and hands hidden over the area),
//! `identity` (which player and hand a region is), `fingers` (a hand's fingers against
//! the cards), `timing` (a touch timed again by the onset network over the frames
//! around it).

mod events;
mod fingers;
mod identity;
mod press;
mod saved;
mod timing;

pub use self::events::{
    crossing, CONTACT_ONSET_SD_S, CONTACT_REPRESS_S, HIDDEN_CONTINUE_MM, HIDDEN_MAX_S,
    PENDING_UNSEEN_MAX_S,
};
use self::events::{LastInside, PressedCards};
pub use self::fingers::{
    dist_to_quad, finger_ends, polygon_area_mm2, tips_to_look_at, CONTACT_NEAR_CARD_MM,
    FINGER_HALF_WIDTH_MM,
};
pub use self::identity::{keep_identity, on_frame_edge, pointing_player, side_player};
pub use self::press::{CONTACT_BEFORE_S, CONTACT_CARD_RADIUS_MM};
pub use self::saved::PerceiverState;
use self::timing::Untimed;
pub use self::timing::{
    onset_from_landed, CONTACT_TIMED_SD_S, LANDED_P, TIMED_AFTER_S, TIMED_BEFORE_S, TIMED_MIN_FPS,
};

use super::contact::{ContactModel, CropSource};
use super::decode::{decode, HandFrame, HandObs, SLOTS};
use super::model::{shrink, Backend, HandModel, SmallFrame};
use super::HandsError;
use crate::field::{Calibration, FieldMap};
use crate::rules::geometry::{rotated_rect, FieldGeometry, Pt};
use crate::rules::model::{CardRef, Event, Hand, Layout, Player};
use opencv::core::Mat;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;

/// A fingertip this close to a card's outline, at table height, touches it (as the
/// simulator's `TIP_CONTACT_R_MM`).
pub use crate::rules::geometry::TOUCH_RADIUS_MM;

/// Contact probability at which a fingertip is taken to press.
pub const CONTACT_MIN_P: f64 = 0.5;
/// Contact crops are kept this long for that, and for timing a touch by the onset
/// network over the frames around it (`TIMED_BEFORE_S` before it, or `LOOKBACK_MAX_S`
/// more for a finger landed already then, each beside the frames up to 25 ms earlier,
/// to `TIMED_AFTER_S` after, timed at the first run after that: 268 ms at 240 fps).
const CONTACT_HISTORY_S: f64 = 0.27;
/// At most this many fingertips of a hand are looked at, farthest from the wrist first.
pub const CONTACT_TIPS_MAX: usize = 3;
/// A region over the playing area smaller than this many card faces (its sure outline
/// projected onto the tatami) is not a hand: a hand reaching into the area shows its palm
/// and fingers, two to six card faces. Measured on perceive's output against the labels of
/// tuning recordings 9202 and clean-7101 (1280x720): of the regions inside the area that
/// overlap no labelled hand, 90% are under 1.5 card faces (realistic-9202: 1,740 of 2,040
/// under half a face, a piece of card art or light taken for skin); of those that overlap
/// a labelled hand, none is (the smallest in a thousand 1.8 faces). Such a region,
/// standing still inside the area, was an early entry at every reading.
pub const HAND_MIN_CARD_FACES: f64 = 1.5;
/// Time between runs of the network while no hand is over the playing area, and while
/// one is, s (`PerceiveOptions`): every 12th and every 3rd frame at 240 fps.
pub const IDLE_EVERY_S: f64 = 0.05;
pub const ACTIVE_EVERY_S: f64 = 0.0125;
/// While hurried (`Perceiver::hurry`: frames wait in `live`), the time between runs with
/// a hand inside is this many times `active_every_s`, and changes are not narrowed down
/// between runs: about a third of the work while the hands are busiest, and `enter`,
/// `leave` and touches timed to the runs (their `t_err_s` says so).
pub const HURRIED_STRETCH: f64 = 2.0;

/// How often the network runs, in time, so that a 60 fps recording is seen as often as a
/// 240 fps one. A change between two runs is pinned to its frame by the search between
/// them, so the schedule sets the CPU (the 2 ms a frame of the budget), not the timing of
/// `enter` and `leave`. Every 12th and 3rd frame at 240 fps (was every 8th and 2nd)
/// cost 30-45% less on tuning recordings clean-9102, realistic-9202 and hard-9303
/// (1280x720, 240 fps) with the same rulings there.
#[derive(Debug, Clone)]
pub struct PerceiveOptions {
    /// Time between runs while no hand is inside the playing area, s.
    pub idle_every_s: f64,
    /// Time between runs while a hand is inside, s.
    pub active_every_s: f64,
    pub backend: Backend,
    /// Threads for the hand network's engine (ONNX Runtime's intra-op threads, tract's
    /// matrix products).
    pub threads: usize,
}

impl Default for PerceiveOptions {
    fn default() -> Self {
        PerceiveOptions {
            idle_every_s: IDLE_EVERY_S,
            active_every_s: ACTIVE_EVERY_S,
            backend: Backend::Tract,
            threads: 1,
        }
    }
}

/// Counters for the benchmark and the progress line.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct PerceiveStats {
    pub frames: usize,
    pub inferences: usize,
    /// Of `inferences`, those made by the search between two runs for where a change lies.
    pub refine_runs: usize,
    pub infer_s: f64,
    /// Fingertips the contact network looked at, and its time.
    pub contact_runs: usize,
    pub contact_s: f64,
    /// Touches the onset network was run over, and of them those it saw the finger land
    /// for (`timing::onset_proven`).
    pub onset_tried: usize,
    pub onset_landed: usize,
}

/// What one pushed frame produced: the frames the network ran on (in frame order, those
/// found by refinement included) and the events now final.
#[derive(Debug, Default)]
pub struct Perceived {
    pub frames: Vec<HandFrame>,
    pub events: Vec<Event>,
}

/// What of a hand's state in a run gives events: over the playing area or not, and
/// pressing which card. A hand not seen is neither; so a hand seen in one run and not in
/// the next, outside the area both times, is no change (a hand at the frame's edge, or
/// one the network finds only now and then, cost a search between the runs each time).
#[derive(Debug, Clone, Copy, PartialEq)]
struct SlotKey {
    inside: bool,
    contact: Option<CardRef>,
}

#[derive(Debug, Clone)]
struct Sample {
    frame: usize,
    t_s: f64,
    hands: Vec<HandObs>,
}

impl Sample {
    fn slot(&self, s: usize) -> Option<&HandObs> {
        let (p, h) = SLOTS[s];
        self.hands.iter().find(|o| o.player == p && o.hand == h)
    }
    fn key(&self, s: usize) -> SlotKey {
        match self.slot(s) {
            Some(o) => SlotKey {
                inside: o.inside,
                contact: o.contact,
            },
            None => SlotKey {
                inside: false,
                contact: None,
            },
        }
    }
    fn any_inside(&self) -> bool {
        self.hands.iter().any(|h| h.inside)
    }
}

/// The last known state of one hand, for events: kept through frames it is not seen in.
#[derive(Debug, Clone, Default)]
struct SlotState {
    inside: bool,
    contact: Option<CardRef>,
    /// The last sample the hand was seen in: frame, time, reach, contact probability.
    seen: Option<(usize, f64, f64, f64)>,
    /// A change seen in one run and not yet confirmed by the next: the new state and its
    /// event. A change that the next run does not see again was noise and is dropped.
    pending_inside: Option<(bool, Event)>,
    pending_contact: Option<(CardRef, Event, Option<[f64; 2]>)>,
    /// When this hand was last seen pressing a card, s.
    pressed_t_s: Option<f64>,
}

/// A frame kept between runs: its number, time, the frame whole, and its contact crop's
/// source when one was cut.
type KeptFrame = (usize, f64, Arc<Mat>, Option<Arc<CropSource>>);

/// Sees hands frame by frame and turns them into events.
pub struct Perceiver {
    model: HandModel,
    map: FieldMap,
    geom: FieldGeometry,
    layout: Layout,
    cards: Vec<(CardRef, [Pt; 4])>,
    opts: PerceiveOptions,
    /// The frames since the last run, whole: one is reduced for the network only when
    /// a search between runs needs it.
    ring: VecDeque<KeptFrame>,
    /// The contact crops' frames of the last `CONTACT_HISTORY_S`, by time: the contact
    /// network sees each fingertip beside the same square `CONTACT_BEFORE_S` earlier.
    crops: VecDeque<(usize, f64, Arc<CropSource>)>,
    /// The contact network, when there is one; without it contact is the hand network's
    /// map 7.
    contact: Option<ContactModel>,
    /// The latest frame in which no hand was over the playing area (at two runs in a
    /// row), for the contact network.
    plate: Option<Arc<CropSource>>,
    /// The frame the plate was cut from.
    plate_frame: Option<usize>,
    last: Option<Sample>,
    /// The time of the frame pushed before, s.
    prev_t_s: Option<f64>,
    /// The time between the last two frames pushed, s.
    frame_s: Option<f64>,
    /// Frames are waiting behind this one (`hurry`).
    hurried: bool,
    slots: [SlotState; 4],
    /// Each player's hand as last seen over the playing area, while it may be hidden:
    /// it is hidden in the latest run when that sighting is older (`note_inside`).
    last_inside: [Option<LastInside>; 2],
    /// When each hand was last seen pressing each card, over the last `CARD_REPRESS_S`
    /// (`events_between`).
    pressed_cards: PressedCards,
    /// Confirmed events not yet given out: they leave in time order once no pending
    /// change can come before them.
    held: Vec<Event>,
    /// Touches confirmed and waiting for the frames after them, to be timed by the
    /// onset network (`timing`).
    untimed: Vec<Untimed>,
    /// The touches sent to be timed lately: player, time found, where found pressing
    /// (frame pixels). A rival's among them moves a touch's square (`timing`).
    presses: Vec<(Player, f64, [f64; 2])>,
    /// The time of the latest event given out, s: none goes before it.
    given_s: f64,
    pub stats: PerceiveStats,
}

impl Perceiver {
    pub fn new(
        model: &Path,
        calib: &Calibration,
        layout: &Layout,
        opts: &PerceiveOptions,
    ) -> Result<Perceiver, HandsError> {
        let map = FieldMap::from_calibration(calib, layout.field.clone())?;
        Perceiver::with_map(model, map, layout, opts)
    }

    /// The same, with the field mapping already made (by `analyze`, from the layout it
    /// measured).
    pub fn with_map(
        model: &Path,
        map: FieldMap,
        layout: &Layout,
        opts: &PerceiveOptions,
    ) -> Result<Perceiver, HandsError> {
        let contact = ContactModel::beside(model, opts.backend)?;
        let model = HandModel::load(model, opts.backend, opts.threads)?;
        Ok(Perceiver::from_parts(model, contact, map, layout, opts))
    }

    /// The same, from models already loaded (`with_map` takes the contact network beside
    /// the hand model's file, `contact.onnx`, when there is one).
    pub fn from_parts(
        model: HandModel,
        contact: Option<ContactModel>,
        map: FieldMap,
        layout: &Layout,
        opts: &PerceiveOptions,
    ) -> Perceiver {
        let geom = map.geometry();
        let cards = layout
            .cards
            .iter()
            .enumerate()
            .map(|(index, c)| {
                let card = CardRef::of(c.poem, index, Some(c.owner));
                (
                    card,
                    rotated_rect(
                        c.x_mm,
                        c.y_mm,
                        layout.field.card_w_mm,
                        layout.field.card_h_mm,
                        c.angle_deg,
                    ),
                )
            })
            .collect();
        Perceiver {
            model,
            map,
            geom,
            layout: layout.clone(),
            cards,
            opts: opts.clone(),
            ring: VecDeque::new(),
            crops: VecDeque::new(),
            contact,
            plate: None,
            plate_frame: None,
            last: None,
            prev_t_s: None,
            frame_s: None,
            hurried: false,
            slots: Default::default(),
            last_inside: [None, None],
            pressed_cards: PressedCards::default(),
            held: Vec::new(),
            untimed: Vec::new(),
            presses: Vec::new(),
            given_s: f64::NEG_INFINITY,
            stats: PerceiveStats::default(),
        }
    }

    /// Told while frames wait behind the one being pushed (`live` behind the camera):
    /// runs are spaced `HURRIED_STRETCH` times wider while a hand is inside, and changes
    /// between runs are not narrowed down, until told otherwise.
    pub fn hurry(&mut self, hurried: bool) {
        self.hurried = hurried;
    }

    /// Image points (frame pixels, as decoded) in the field, mm.
    pub fn to_field(&self, px: &[[f64; 2]]) -> Result<Vec<Pt>, HandsError> {
        Ok(self.map.to_field(px)?)
    }

    /// The lead hand the layout declares for the player (`players.lead_hand`), if any.
    pub fn declared_lead(&self, p: Player) -> Option<Hand> {
        self.layout.lead_hand(p)
    }

    /// The contact network in use, if any.
    pub fn contact_model(&self) -> Option<&Path> {
        self.contact.as_ref().map(|c| c.path())
    }

    /// Replaces the cards a fingertip can press (the card, corners in field mm): in
    /// `analyze` the card tracker's places (`judge::CardsBehind`); the layout's until then.
    pub fn set_cards(&mut self, cards: Vec<(CardRef, [Pt; 4])>) {
        self.cards = cards;
    }

    /// The card nearest field point `at` among those within `radius_mm` of its outline.
    fn card_near(&self, at: Pt, radius_mm: f64) -> Option<CardRef> {
        self.cards
            .iter()
            .map(|(poem, c)| (*poem, dist_to_quad(at, c)))
            .filter(|(_, d)| *d <= radius_mm)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(p, _)| p)
    }

    /// One decoded frame, in order.
    pub fn push(
        &mut self,
        frame: usize,
        t_s: f64,
        bgr: &Arc<Mat>,
    ) -> Result<Perceived, HandsError> {
        self.stats.frames += 1;
        let every_s = match &self.last {
            Some(s) if s.any_inside() && self.hurried => self.opts.active_every_s * HURRIED_STRETCH,
            Some(s) if s.any_inside() => self.opts.active_every_s,
            Some(_) => self.opts.idle_every_s,
            None => 0.0,
        };
        // A quarter of a frame period of slack: frame times are rounded.
        let slack_s = self.prev_t_s.map_or(0.0, |p| (t_s - p).max(0.0) / 4.0);
        if let Some(p) = self.prev_t_s {
            self.frame_s = Some(t_s - p);
        }
        self.prev_t_s = Some(t_s);
        let due = self
            .last
            .as_ref()
            .is_none_or(|s| frame > s.frame && t_s + slack_s >= s.t_s + every_s);
        // Contact crops are cut only while a hand is over the field (or the network runs
        // on this frame): nothing presses a card from outside.
        let active = self.last.as_ref().is_some_and(|s| s.any_inside());
        let crop = match (&self.contact, due || active) {
            (Some(_), true) => Some(Arc::new(CropSource::new(bgr)?)),
            _ => None,
        };
        if let Some(c) = &crop {
            while self
                .crops
                .front()
                .is_some_and(|(_, t, _)| *t < t_s - CONTACT_HISTORY_S)
            {
                self.crops.pop_front();
            }
            self.crops.push_back((frame, t_s, Arc::clone(c)));
        }
        if !due {
            self.ring.push_back((frame, t_s, Arc::clone(bgr), crop));
            return Ok(Perceived::default());
        }
        let small = shrink(bgr)?;
        let prev = self.last.take();
        let new = self.sample(frame, t_s, &small, crop.as_ref(), prev.as_ref());
        self.last = prev;
        let new = new?;
        let clear = !new.any_inside() && self.last.as_ref().is_none_or(|s| !s.any_inside());
        if let (Some(c), true) = (&crop, clear) {
            self.plate = Some(Arc::clone(c));
            self.plate_frame = Some(frame);
        }
        let mut chain = match self.last.take() {
            Some(prev) => {
                let mut between = Vec::new();
                if !self.hurried {
                    self.refine(&prev, &new, &mut between)?;
                }
                between.sort_by_key(|s| s.frame);
                let mut v = vec![prev];
                v.extend(between);
                v.push(new);
                v
            }
            None => vec![new],
        };
        self.ring.clear();
        self.ring.push_back((frame, t_s, Arc::clone(bgr), crop));
        // The first sample of a chain after the first run is the run before, seen already.
        for s in &chain[usize::from(chain.len() > 1)..] {
            self.note_inside(s)?;
        }
        let mut out = Perceived::default();
        for w in chain.windows(2) {
            let mut confirmed = Vec::new();
            self.events_between(&w[0], &w[1], &mut confirmed);
            self.held.extend(confirmed);
        }
        self.time_touches(t_s, false)?;
        // Any event still to come is a pending change (its time known) or one made
        // after the latest run: those before both are final. A touch still to be timed
        // may move back by up to `TIMED_BEFORE_S`.
        let back = if self.times_touches() {
            TIMED_BEFORE_S
        } else {
            0.0
        };
        let latest = chain.last().map_or(f64::INFINITY, |s| s.t_s - back);
        let watermark = self
            .slots
            .iter()
            .flat_map(|st| {
                st.pending_inside
                    .iter()
                    .map(|(_, e)| e.t_s)
                    .chain(st.pending_contact.iter().map(|(_, e, _)| e.t_s - back))
            })
            .chain(self.untimed_from())
            .fold(latest, f64::min);
        self.held.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        let n = self.held.partition_point(|e| e.t_s <= watermark);
        out.events = self.held.drain(..n).collect();
        if let Some(e) = out.events.last() {
            self.given_s = e.t_s;
        }
        if chain.len() == 1 {
            self.seed_state(&chain[0]);
        }
        let last = chain.pop();
        // The previous sample was reported when it was made; report the rest.
        let skip = usize::from(!chain.is_empty());
        for s in chain.iter().skip(skip) {
            out.frames.push(frame_of(s));
        }
        if let Some(l) = last {
            out.frames.push(frame_of(&l));
            self.last = Some(l);
        }
        Ok(out)
    }

    /// End of the video: the confirmed events still held; changes never confirmed are
    /// dropped.
    pub fn finish(&mut self) -> Vec<Event> {
        // The frames kept serve to time the touches still waiting; one that cannot be
        // timed keeps the time it was found at (a touch whose frames after it were cut
        // short by the end is never dropped).
        let untimed = std::mem::take(&mut self.untimed);
        for u in untimed {
            if let Some(ev) = self.timed(u.clone()).unwrap_or(Some(u.ev)) {
                self.held.push(ev);
            }
        }
        self.held.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        std::mem::take(&mut self.held)
    }

    /// Runs the network on one frame and adds what the field says about each hand; hands
    /// seen in `reference` (a run just before) keep who they were there.
    fn sample(
        &mut self,
        frame: usize,
        t_s: f64,
        small: &SmallFrame,
        crop: Option<&Arc<CropSource>>,
        reference: Option<&Sample>,
    ) -> Result<Sample, HandsError> {
        let before = crop.map(|c| self.crop_before(t_s).unwrap_or_else(|| Arc::clone(c)));
        let crop = crop.zip(before.as_ref()).map(|(c, b)| (&**c, &**b));
        let t0 = std::time::Instant::now();
        let maps = self.model.run(small)?;
        self.stats.infer_s += t0.elapsed().as_secs_f64();
        self.stats.inferences += 1;
        let found = decode(&maps)?;
        let mut hands = Vec::with_capacity(found.len());
        let mut pointed = Vec::with_capacity(found.len());
        for mut h in found {
            let p = self.place(&mut h, crop, small.frame_px, 1.0 / small.scale)?;
            if h.inside && !self.is_hand_sized(&h)? {
                continue;
            }
            hands.push(h);
            pointed.push(p);
        }
        if let Some(r) = reference {
            hands = keep_identity(&r.hands, hands, &pointed);
        }
        for h in hands.iter_mut() {
            h.lead = self.layout.lead_hand(h.player).map(|l| l == h.hand);
        }
        Ok(Sample { frame, t_s, hands })
    }

    /// Whether a region's outline (`HandObs::body_outline`), projected onto the tatami,
    /// covers at least `HAND_MIN_CARD_FACES` card faces of this layout.
    fn is_hand_sized(&self, h: &HandObs) -> Result<bool, HandsError> {
        let outline = h.body_outline();
        if outline.len() < 3 {
            return Ok(false);
        }
        let poly = self.map.to_field(outline)?;
        let face_mm2 = self.geom.size.card_w_mm * self.geom.size.card_h_mm;
        Ok(polygon_area_mm2(&poly) >= HAND_MIN_CARD_FACES * face_mm2)
    }

    /// Inside, reach, lead and the card pressed, from the field; the player from the side
    /// of the field the region lies on wholly, or else from the frame's edge its arm is
    /// cut by, or else from where the hand points, when that is clear (returned then).
    /// `frame_px` is the frame's size, and the outline's points within `edge_tol_px` of
    /// its edge (a pixel of the network's map) lie on it.
    fn place(
        &mut self,
        h: &mut HandObs,
        crop: Option<(&CropSource, &CropSource)>,
        frame_px: [f64; 2],
        edge_tol_px: f64,
    ) -> Result<Option<Player>, HandsError> {
        // The outline in the field, projected once for the pointing and the reach: the
        // mask's edge at the reach's level where the decoder gives it (docs/hands.md).
        let outline = h.field_outline_px();
        let poly = if outline.len() >= 3 {
            Some(self.map.to_field(outline)?)
        } else {
            None
        };
        let tips = if h.fingertips_px.is_empty() {
            Vec::new()
        } else {
            self.map.to_field(&h.fingertips_px)?
        };
        let area = self.geom.playing_area();
        let mut pointed = None;
        let mut tips_out = Vec::new();
        if let (Some(poly), false) = (&poly, tips.is_empty()) {
            pointed = pointing_player(poly, &tips);
            tips_out = finger_ends(poly, &tips);
        }
        // A region lying wholly past one player's edge of the playing area is that
        // player's, whichever way it seems to point (a hand cut by the frame's edge
        // shows no wrist); else one cut by the frame's edge past one player's edge is
        // that player's arm (`on_frame_edge`). Either outranks the pointing.
        let mut side = poly
            .as_deref()
            .and_then(|poly| side_player(poly, area.y0_mm, area.y1_mm));
        if side.is_none() {
            let edge = on_frame_edge(h.body_outline(), frame_px, edge_tol_px);
            if !edge.is_empty() {
                side = side_player(&self.map.to_field(&edge)?, area.y0_mm, area.y1_mm);
            }
        }
        if side.is_some() {
            pointed = side;
        }
        if let Some(p) = pointed {
            h.player = p;
        }
        h.lead = self.layout.lead_hand(h.player).map(|l| l == h.hand);
        if let Some(poly) = &poly {
            h.inside = self.geom.hand_is_inside(poly) || tips_out.iter().any(|p| area.contains(*p));
            h.reach_mm = poly
                .iter()
                .chain(&tips_out)
                .map(|p| {
                    (p.x_mm - area.x0_mm)
                        .min(area.x1_mm - p.x_mm)
                        .min(p.y_mm - area.y0_mm)
                        .min(area.y1_mm - p.y_mm)
                })
                .fold(f64::NEG_INFINITY, f64::max);
        }
        h.contact = None;
        if let Some((src, before)) = crop.filter(|_| self.contact.is_some() && self.plate.is_some())
        {
            self.press(h, poly.as_deref().unwrap_or_default(), &tips, src, before)?;
            return Ok(pointed);
        }
        if let (Some(px), true) = (h.contact_px, h.contact_p >= CONTACT_MIN_P) {
            let pt = self.map.point_to_field(px)?;
            h.contact = self.card_near(pt, TOUCH_RADIUS_MM);
        }
        Ok(pointed)
    }

    /// Halves the frames between two runs whose hands differ, until every change lies
    /// between neighbouring frames.
    fn refine(&mut self, a: &Sample, b: &Sample, out: &mut Vec<Sample>) -> Result<(), HandsError> {
        if b.frame <= a.frame + 1 || (0..4).all(|s| a.key(s) == b.key(s)) {
            return Ok(());
        }
        let mid = (a.frame + b.frame) / 2;
        let Some(i) = self.ring.iter().position(|(f, _, _, _)| *f == mid) else {
            return Ok(());
        };
        let (f, t, small, crop) = {
            let (f, t, full, c) = &self.ring[i];
            (*f, *t, shrink(full)?, c.clone())
        };
        let m = self.sample(f, t, &small, crop.as_ref(), Some(a))?;
        self.stats.refine_runs += 1;
        self.refine(a, &m, out)?;
        self.refine(&m, b, out)?;
        out.push(m);
        Ok(())
    }
}

fn frame_of(s: &Sample) -> HandFrame {
    HandFrame {
        frame: s.frame,
        t_s: s.t_s,
        hands: s.hands.clone(),
    }
}

#[cfg(test)]
mod tests;

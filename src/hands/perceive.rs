//! The per-frame schedule and the events: the network runs every `idle_every_s` (every
//! `active_every_s` while a hand is over the field); when a hand's state (seen,
//! inside the playing area, pressing a card) differs between two runs, the frames between
//! them, kept small in a ring, are searched by halving until the change is pinned to two
//! neighbouring frames. The event's time is then interpolated between those two frames.
//!
//! Reads frames in order, the calibration and the card positions; emits `touch` (direct),
//! `enter` and `leave` (contract section 4). It never judges.

use super::contact::{ContactModel, CropSource};
use super::decode::{decode, HandFrame, HandObs, SLOTS};
use super::model::{shrink, Backend, HandModel, SmallFrame};
use super::HandsError;
use crate::field::{Calibration, FieldMap};
use crate::rules::geometry::{rotated_rect, FieldGeometry, Pt};
use crate::rules::model::{CardRef, Event, EventKind, Hand, Layout, Player};
use opencv::core::Mat;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;

/// A fingertip this close to a card's outline, at table height, touches it (as the
/// simulator's `TIP_CONTACT_R_MM`).
pub use crate::rules::geometry::TOUCH_RADIUS_MM;
/// Contact probability at which a fingertip is taken to press.
pub const CONTACT_MIN_P: f64 = 0.5;
/// The contact network looks at a fingertip this close to a card (a fingertip found by the
/// hand network lies some millimetres from the true one).
pub const CONTACT_NEAR_CARD_MM: f64 = 20.0;
/// The contact network sees each fingertip beside the same square this long before, s
/// (6 frames at 240 fps): a fingertip coming down meets its shadow while the hand stays
/// where it is, a hovering one keeps its shadow beside it.
pub const CONTACT_BEFORE_S: f64 = 0.025;
/// Frame times are rounded: a frame this much later than `CONTACT_BEFORE_S` still counts.
const CONTACT_BEFORE_SLACK_S: f64 = 0.001;
/// A hand seen pressing a card this recently, s, is still on it when it is seen pressing
/// again: its contact flickered between runs, or its fingertip, moving with the card it
/// pushes, now lies over another card's place in the layout. It is no new touch. A hand
/// that lifts from one card and comes down on another takes longer (in the simulator at
/// least 0.26 s from the end of one press to the next: 0.12 s up, the reach, 35 ms down).
pub const CONTACT_REPRESS_S: f64 = 0.2;
/// How far a touch's time, as the contact signal crosses 0.5, strays from the moment the
/// fingertip meets the card, s (one standard deviation), beyond the bracket between the
/// runs around it: the signal passes 0.5 while a finger comes down, or a run or two late.
/// Measured on the six tuning recordings of docs/hands.md with the committed networks:
/// 125 touches `analyze` found, 12 ms early on average with a spread of 21.6 ms. Every
/// touch of the hand model carries it in its `t_err_s`, so two touches of different
/// players closer than the model can order go to review as a close call.
pub const CONTACT_ONSET_SD_S: f64 = 0.02;
/// Contact crops are kept this long for that.
const CONTACT_HISTORY_S: f64 = 0.1;
/// A pressing fingertip (by the contact network) presses the card within this distance.
pub const CONTACT_CARD_RADIUS_MM: f64 = 14.0;
/// At most this many fingertips of a hand are looked at, farthest from the wrist first.
pub const CONTACT_TIPS_MAX: usize = 3;
/// A hand's change not confirmed because the hand went unseen is dropped after this
/// long, s (events are given out in time order, so an open change holds back the rest).
pub const PENDING_UNSEEN_MAX_S: f64 = 0.2;

/// A region over the playing area smaller than this many card faces (its sure outline
/// projected onto the tatami) is not a hand: a hand reaching into the area shows its palm
/// and fingers, two to six card faces. Measured on perceive's output against the labels of
/// tuning recordings 9202 and clean-7101 (1280x720): of the regions inside the area that
/// overlap no labelled hand, 90% are under 1.5 card faces (realistic-9202: 1,740 of 2,040
/// under half a face, a piece of card art or light taken for skin); of those that overlap
/// a labelled hand, none is (the smallest in a thousand 1.8 faces). Such a region,
/// standing still inside the area, was an early entry at every reading.
pub const HAND_MIN_CARD_FACES: f64 = 1.5;

/// A hand's outline runs past each fingertip point by half a finger's width (an adult's
/// finger is 15-18 mm across), and a fingertip leads a reaching hand into the playing
/// area: the reach is measured to the fingertips pushed out so far from the wrist.
pub const FINGER_HALF_WIDTH_MM: f64 = 8.0;

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
#[derive(Debug, Clone, Default)]
pub struct PerceiveStats {
    pub frames: usize,
    pub inferences: usize,
    /// Of `inferences`, those made by the search between two runs for where a change lies.
    pub refine_runs: usize,
    pub infer_s: f64,
    /// Fingertips the contact network looked at, and its time.
    pub contact_runs: usize,
    pub contact_s: f64,
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
    pending_contact: Option<(CardRef, Event)>,
    /// When this hand was last seen pressing a card, s.
    pressed_t_s: Option<f64>,
}

/// Where a player's hand was last seen over the playing area.
#[derive(Debug, Clone)]
struct LastInside {
    t_s: f64,
    hand: Hand,
    /// The fingertips of every region of theirs inside then, in decoded pixels and in
    /// the field.
    tips_px: Vec<[f64; 2]>,
    tips_mm: Vec<Pt>,
}

/// A player's hand is hidden (`Perceiver::hidden_inside`) at most this long after it
/// was last seen over the playing area, s.
pub const HIDDEN_MAX_S: f64 = 0.2;
/// A region of the player with a fingertip this near where their hand was last seen
/// over the area is that hand, seen leaving (mm): a hand moves 25-50 mm between runs.
pub const HIDDEN_CONTINUE_MM: f64 = 100.0;

/// Whether a player's hand last seen over the playing area at `tips_mm`, `age_s` ago, is
/// hidden now that the player's regions show fingertips at `now_mm` (field mm, none of
/// them inside): none lies where the hand was, so it was not seen leaving.
fn still_hidden(tips_mm: &[Pt], age_s: f64, now_mm: &[Pt]) -> bool {
    let near = now_mm
        .iter()
        .any(|q| tips_mm.iter().any(|t| t.dist_mm(*q) <= HIDDEN_CONTINUE_MM));
    !tips_mm.is_empty() && age_s <= HIDDEN_MAX_S && !near
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
    crops: VecDeque<(f64, Arc<CropSource>)>,
    /// The contact network, when there is one; without it contact is the hand network's
    /// map 7.
    contact: Option<ContactModel>,
    /// The latest frame in which no hand was over the playing area (at two runs in a
    /// row), for the contact network.
    plate: Option<Arc<CropSource>>,
    last: Option<Sample>,
    /// The time of the frame pushed before, s.
    prev_t_s: Option<f64>,
    /// Frames are waiting behind this one (`hurry`).
    hurried: bool,
    slots: [SlotState; 4],
    /// Each player's hand as last seen over the playing area, while it may be hidden:
    /// it is hidden in the latest run when that sighting is older (`note_inside`).
    last_inside: [Option<LastInside>; 2],
    /// Confirmed events not yet given out: they leave in time order once no pending
    /// change can come before them.
    held: Vec<Event>,
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
            last: None,
            prev_t_s: None,
            hurried: false,
            slots: Default::default(),
            last_inside: [None, None],
            held: Vec::new(),
            stats: PerceiveStats::default(),
        }
    }

    /// Told while frames wait behind the one being pushed (`live` behind the camera):
    /// runs are spaced `HURRIED_STRETCH` times wider while a hand is inside, and changes
    /// between runs are not narrowed down, until told otherwise.
    pub fn hurry(&mut self, hurried: bool) {
        self.hurried = hurried;
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
                .is_some_and(|(t, _)| *t < t_s - CONTACT_HISTORY_S)
            {
                self.crops.pop_front();
            }
            self.crops.push_back((t_s, Arc::clone(c)));
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
        // Any event still to come is a pending change (its time known) or one made
        // after the latest run: those before both are final.
        let latest = chain.last().map_or(f64::INFINITY, |s| s.t_s);
        let watermark = self
            .slots
            .iter()
            .flat_map(|st| {
                st.pending_inside
                    .iter()
                    .map(|(_, e)| e.t_s)
                    .chain(st.pending_contact.iter().map(|(_, e)| e.t_s))
            })
            .fold(latest, f64::min);
        self.held.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        let n = self.held.partition_point(|e| e.t_s <= watermark);
        out.events = self.held.drain(..n).collect();
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

    /// Follows where each player's hand was last seen over the playing area, and whether
    /// it is hidden in sample `s`: no region of theirs is inside, none lies where the
    /// hand was (`HIDDEN_CONTINUE_MM`, so it was not seen leaving), and it was seen
    /// there at most `HIDDEN_MAX_S` before. A hand does not leave the area unseen: such a
    /// hand lies under the other player's, or is seen as one region with it (two
    /// players' hands on one card), which then often takes its player's name too.
    fn note_inside(&mut self, s: &Sample) -> Result<(), HandsError> {
        for player in [Player::A, Player::B] {
            let p = player.index();
            let theirs = || s.hands.iter().filter(move |h| h.player == player);
            let inside: Vec<&HandObs> = theirs().filter(|h| h.inside).collect();
            if let Some(deepest) = inside
                .iter()
                .max_by(|a, b| a.reach_mm.total_cmp(&b.reach_mm))
            {
                let tips_px: Vec<[f64; 2]> = inside
                    .iter()
                    .flat_map(|h| h.fingertips_px.iter().copied())
                    .collect();
                let tips_mm = self.map.to_field(&tips_px)?;
                self.last_inside[p] = Some(LastInside {
                    t_s: s.t_s,
                    hand: deepest.hand,
                    tips_px,
                    tips_mm,
                });
                continue;
            }
            let Some(last) = &self.last_inside[p] else {
                continue;
            };
            let mut now_mm = Vec::new();
            for h in theirs() {
                now_mm.extend(self.map.to_field(&h.fingertips_px)?);
            }
            if !still_hidden(&last.tips_mm, s.t_s - last.t_s, &now_mm) {
                self.last_inside[p] = None;
            }
        }
        Ok(())
    }

    /// The players' hands hidden over the playing area in the latest run (`note_inside`):
    /// each with its player, hand and the fingertips it was last seen there with.
    pub fn hidden_inside(&self) -> Vec<(Player, Hand, Vec<[f64; 2]>)> {
        let Some(latest) = &self.last else {
            return Vec::new();
        };
        [Player::A, Player::B]
            .into_iter()
            .filter_map(|p| {
                self.last_inside[p.index()]
                    .as_ref()
                    .filter(|l| l.t_s < latest.t_s)
                    .map(|l| (p, l.hand, l.tips_px.clone()))
            })
            .collect()
    }

    /// End of the video: the confirmed events still held; changes never confirmed are
    /// dropped.
    pub fn finish(&mut self) -> Vec<Event> {
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
            let p = self.place(&mut h, crop)?;
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

    /// Whether a region's sure outline, projected onto the tatami, covers at least
    /// `HAND_MIN_CARD_FACES` card faces of this layout.
    fn is_hand_sized(&self, h: &HandObs) -> Result<bool, HandsError> {
        if h.outline_px.len() < 3 {
            return Ok(false);
        }
        let poly = self.map.to_field(&h.outline_px)?;
        let face_mm2 = self.geom.size.card_w_mm * self.geom.size.card_h_mm;
        Ok(polygon_area_mm2(&poly) >= HAND_MIN_CARD_FACES * face_mm2)
    }

    /// Inside, reach, lead and the card pressed, from the field; the player from where
    /// the hand points when that is clear (returned then).
    fn place(
        &mut self,
        h: &mut HandObs,
        crop: Option<(&CropSource, &CropSource)>,
    ) -> Result<Option<Player>, HandsError> {
        // The outline in the field, projected once for the pointing and the reach: the
        // mask's even-odds edge where the decoder gives it (docs/hands.md).
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
        let mut pointed = None;
        let mut tips_out = Vec::new();
        if let (Some(poly), false) = (&poly, tips.is_empty()) {
            pointed = pointing_player(poly, &tips);
            if let Some(p) = pointed {
                h.player = p;
            }
            tips_out = finger_ends(poly, &tips);
        }
        h.lead = self.layout.lead_hand(h.player).map(|l| l == h.hand);
        if let Some(poly) = &poly {
            let area = self.geom.playing_area();
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
            h.contact = self
                .cards
                .iter()
                .map(|(poem, c)| (*poem, dist_to_quad(pt, c)))
                .filter(|(_, d)| *d <= TOUCH_RADIUS_MM)
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(p, _)| p);
        }
        Ok(pointed)
    }

    /// Contact by the contact network: the hand's fingertips near a card
    /// (`tips_to_look_at`) are looked at; the most likely pressing one gives
    /// the contact probability and point, and the card it presses. `outline` and `tips`
    /// are the hand's outline and fingertips in the field, as `place` projected them.
    fn press(
        &mut self,
        h: &mut HandObs,
        outline: &[Pt],
        tips: &[Pt],
        src: &CropSource,
        before: &CropSource,
    ) -> Result<(), HandsError> {
        let (Some(net), Some(plate)) = (&self.contact, &self.plate) else {
            return Ok(());
        };
        h.contact_p = 0.0;
        h.contact_px = None;
        if tips.is_empty() {
            return Ok(());
        }
        let wrist = wrist_and_tips(outline, tips).map(|(w, _)| w);
        let near = tips_to_look_at(self.cards.iter().map(|(_, c)| c), wrist, tips);
        let frames = [src, before, plate.as_ref()];
        // (probability, fingertip, image pixels a millimetre there)
        let mut seen: Vec<(f64, usize, f64)> = Vec::with_capacity(CONTACT_TIPS_MAX);
        for &i in &near {
            let t0 = std::time::Instant::now();
            let scale = self.px_per_mm(tips[i])?;
            let p = net.press_p(frames, h.fingertips_px[i], scale, CONTACT_MIN_P)?;
            self.stats.contact_s += t0.elapsed().as_secs_f64();
            self.stats.contact_runs += 1;
            seen.push((p, i, scale));
        }
        let Some(&(p, best, best_scale)) = seen.iter().max_by(|a, b| a.0.total_cmp(&b.0)) else {
            return Ok(());
        };
        // The card pressed is under the pressing fingertip farthest from the wrist (the
        // first pressing one looked at): a hand comes down on its longest finger, and the
        // fingers beside it, lying flat at table height too, look as pressing as it does
        // but may lie over the next card.
        let (i, scale) = match wrist {
            Some(_) => seen
                .iter()
                .find(|(q, ..)| *q >= CONTACT_MIN_P)
                .map_or((best, best_scale), |&(_, i, s)| (i, s)),
            None => (best, best_scale),
        };
        h.contact_p = p;
        h.contact_px = Some(h.fingertips_px[i]);
        if p >= CONTACT_MIN_P {
            // Where it presses: the point network's place when there is one, else the
            // fingertip itself.
            let at = match net.press_point(frames, h.fingertips_px[i], scale)? {
                Some(px) => {
                    h.contact_px = Some(px);
                    self.map.point_to_field(px)?
                }
                None => tips[i],
            };
            h.contact = self
                .cards
                .iter()
                .map(|(poem, c)| (*poem, dist_to_quad(at, c)))
                .filter(|(_, d)| *d <= CONTACT_CARD_RADIUS_MM)
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(p, _)| p);
        }
        Ok(())
    }

    /// Image pixels a millimetre of the field at a point (the mean of the two axes).
    fn px_per_mm(&self, at: Pt) -> Result<f64, HandsError> {
        let d = 10.0;
        let q = self.map.to_image(&[
            at,
            Pt {
                x_mm: at.x_mm + d,
                y_mm: at.y_mm,
            },
            Pt {
                x_mm: at.x_mm,
                y_mm: at.y_mm + d,
            },
        ])?;
        let len = |a: [f64; 2], b: [f64; 2]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt();
        Ok(0.5 * (len(q[0], q[1]) + len(q[0], q[2])) / d)
    }

    /// The contact crop's frame `CONTACT_BEFORE_S` before `t_s` (the newest at or before
    /// it, with `CONTACT_BEFORE_SLACK_S` of slack), or the oldest kept when none is that
    /// old.
    fn crop_before(&self, t_s: f64) -> Option<Arc<CropSource>> {
        let at = t_s - CONTACT_BEFORE_S + CONTACT_BEFORE_SLACK_S;
        self.crops
            .iter()
            .rev()
            .find(|(t, _)| *t <= at)
            .or_else(|| self.crops.front().filter(|(t, _)| *t < t_s))
            .map(|(_, c)| Arc::clone(c))
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

    fn seed_state(&mut self, s: &Sample) {
        for (i, st) in self.slots.iter_mut().enumerate() {
            if let Some(o) = s.slot(i) {
                st.inside = o.inside;
                st.contact = o.contact;
                st.seen = Some((s.frame, s.t_s, o.reach_mm, o.contact_p));
            }
        }
    }

    /// Events for the changes between two consecutive runs.
    fn events_between(&mut self, a: &Sample, b: &Sample, out: &mut Vec<Event>) {
        for (s, &(player, hand)) in SLOTS.iter().enumerate() {
            let Some(o) = b.slot(s) else {
                // Unseen: its last known state stands. A change it showed is confirmed by
                // the next run that sees it; one that stays unseen for longer than
                // PENDING_UNSEEN_MAX_S is dropped as unconfirmed, so that it does not
                // hold back every later event (they leave in time order).
                let st = &mut self.slots[s];
                if st
                    .pending_inside
                    .as_ref()
                    .is_some_and(|(_, e)| b.t_s - e.t_s > PENDING_UNSEEN_MAX_S)
                {
                    st.pending_inside = None;
                }
                if st
                    .pending_contact
                    .as_ref()
                    .is_some_and(|(_, e)| b.t_s - e.t_s > PENDING_UNSEEN_MAX_S)
                {
                    st.pending_contact = None;
                }
                continue;
            };
            let st = self.slots[s].clone();
            // The previous sight of this hand: the frame before, or earlier when it was
            // hidden in between.
            let (fa, ta, ra, pa) = match a.slot(s) {
                Some(p) => (a.frame, a.t_s, p.reach_mm, p.contact_p),
                None => st.seen.unwrap_or((a.frame, a.t_s, f64::NAN, f64::NAN)),
            };
            let frames = Some([fa as u64, b.frame as u64]);
            // The uncertainty spans the whole time the hand was not seen, but the time
            // itself is placed after the previous run: events already given out are
            // earlier, so the file stays in time order.
            let dt = b.t_s - ta;
            let ta = ta.max(a.t_s);
            let mut next = SlotState {
                seen: Some((b.frame, b.t_s, o.reach_mm, o.contact_p)),
                ..st.clone()
            };
            // Inside or not: a change counts once the next run sees it too.
            match st.pending_inside {
                Some((new, ev)) => {
                    if o.inside == new {
                        out.push(ev);
                        next.inside = new;
                    }
                    next.pending_inside = None;
                }
                None if o.inside != st.inside => {
                    let t = crossing(ta, b.t_s, ra, o.reach_mm);
                    let what = if o.inside {
                        EventKind::Enter { player, hand }
                    } else {
                        EventKind::Leave { player, hand }
                    };
                    let ev = Event {
                        t_s: t,
                        what,
                        conf: o.conf,
                        t_err_s: dt / 12f64.sqrt(),
                        frames,
                    };
                    next.pending_inside = Some((o.inside, ev));
                }
                None => {}
            }
            // Pressing a card: the same; letting go needs no event.
            match st.pending_contact {
                Some((card, ev)) => {
                    if o.contact == Some(card) {
                        out.push(ev);
                        next.contact = Some(card);
                    } else {
                        next.contact = if o.contact == st.contact {
                            st.contact
                        } else {
                            None
                        };
                    }
                    next.pending_contact = None;
                }
                None => match o.contact {
                    Some(card)
                        if st.contact.is_none()
                            && !st
                                .pressed_t_s
                                .is_some_and(|t| b.t_s - t <= CONTACT_REPRESS_S) =>
                    {
                        let t =
                            crossing(ta, b.t_s, pa - CONTACT_MIN_P, o.contact_p - CONTACT_MIN_P);
                        let ev = Event {
                            t_s: t,
                            what: card.touch(player, hand, true),
                            conf: o.contact_p.min(o.conf),
                            t_err_s: (dt / 12f64.sqrt()).hypot(CONTACT_ONSET_SD_S),
                            frames,
                        };
                        next.pending_contact = Some((card, ev));
                    }
                    Some(_) => {}
                    None => next.contact = None,
                },
            }
            if next.contact.is_some() && o.contact.is_some() {
                next.pressed_t_s = Some(b.t_s);
            }
            self.slots[s] = next;
        }
    }
}

fn frame_of(s: &Sample) -> HandFrame {
    HandFrame {
        frame: s.frame,
        t_s: s.t_s,
        hands: s.hands.clone(),
    }
}

/// Two hands of consecutive runs are the same hand when their boxes overlap this much
/// (intersection over union)...
const SAME_HAND_IOU: f64 = 0.15;
/// ...or their centres lie within this share of their mean box diagonal.
const SAME_HAND_NEAR: f64 = 0.5;

/// A hand's box: its outline's (the even-odds one where there is one), or its
/// fingertips' when it has no outline.
fn hand_box(h: &HandObs) -> Option<[f64; 4]> {
    let pts = if h.field_outline_px().len() >= 3 {
        h.field_outline_px()
    } else {
        &h.fingertips_px
    };
    if pts.is_empty() {
        return None;
    }
    let mut b = [
        f64::INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
    ];
    for p in pts {
        b[0] = b[0].min(p[0]);
        b[1] = b[1].min(p[1]);
        b[2] = b[2].max(p[0]);
        b[3] = b[3].max(p[1]);
    }
    Some(b)
}

/// How alike two hands' boxes are (0 when they are not the same hand).
fn same_hand_score(a: &HandObs, b: &HandObs) -> f64 {
    let (Some(p), Some(q)) = (hand_box(a), hand_box(b)) else {
        return 0.0;
    };
    let iw = (p[2].min(q[2]) - p[0].max(q[0])).max(0.0);
    let ih = (p[3].min(q[3]) - p[1].max(q[1])).max(0.0);
    let area = |b: &[f64; 4]| (b[2] - b[0]) * (b[3] - b[1]);
    let union = area(&p) + area(&q) - iw * ih;
    let iou = if union > 0.0 { iw * ih / union } else { 0.0 };
    let diag = |b: &[f64; 4]| (b[2] - b[0]).hypot(b[3] - b[1]);
    let d = ((p[0] + p[2] - q[0] - q[2]) / 2.0).hypot((p[1] + p[3] - q[1] - q[3]) / 2.0);
    let near = 1.0 - d / (SAME_HAND_NEAR * (diag(&p) + diag(&q)) / 2.0).max(1.0);
    if iou >= SAME_HAND_IOU || near > 0.0 {
        iou + near.max(0.0)
    } else {
        0.0
    }
}

/// Hands keep who they were in the run just before: each hand of `hands` that is the
/// same as one of `prev` (one to one, best overlap first) takes its player, unless where
/// it points (`pointed`, by index) names the player, and is the hand (left or right) the
/// network has read it as most often while followed (the run before's on a tie); hands
/// new to the view
/// keep the network's reading, moved to the player's free hand when theirs is taken,
/// and are dropped when both of the player's hands are taken.
pub fn keep_identity(
    prev: &[HandObs],
    hands: Vec<HandObs>,
    pointed: &[Option<Player>],
) -> Vec<HandObs> {
    let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
    for (i, h) in hands.iter().enumerate() {
        for (j, p) in prev.iter().enumerate() {
            let s = same_hand_score(h, p);
            if s > 0.0 {
                pairs.push((s, i, j));
            }
        }
    }
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut of_prev: Vec<Option<usize>> = vec![None; hands.len()];
    let mut prev_used = vec![false; prev.len()];
    for (_, i, j) in pairs {
        if of_prev[i].is_none() && !prev_used[j] {
            of_prev[i] = Some(j);
            prev_used[j] = true;
        }
    }
    let mut taken: Vec<(Player, Hand)> = Vec::new();
    let mut out: Vec<HandObs> = Vec::with_capacity(hands.len());
    let mut fresh: Vec<HandObs> = Vec::new();
    for (i, mut h) in hands.into_iter().enumerate() {
        let read = h.hand;
        h.hand_votes[hand_index(read)] += 1;
        match of_prev[i] {
            Some(j) => {
                let p = &prev[j];
                let player = pointed.get(i).copied().flatten().unwrap_or(p.player);
                if player == p.player {
                    h.hand_votes[0] += p.hand_votes[0];
                    h.hand_votes[1] += p.hand_votes[1];
                }
                h.player = player;
                h.hand = match h.hand_votes {
                    [l, r] if l > r => Hand::Left,
                    [l, r] if r > l => Hand::Right,
                    _ if player == p.player => p.hand,
                    _ => read,
                };
                if taken.contains(&(h.player, h.hand)) {
                    h.hand = other_hand(h.hand);
                }
                if !taken.contains(&(h.player, h.hand)) {
                    taken.push((h.player, h.hand));
                    out.push(h);
                }
            }
            None => fresh.push(h),
        }
    }
    fresh.sort_by(|a, b| b.conf.total_cmp(&a.conf));
    for mut h in fresh {
        if taken.contains(&(h.player, h.hand)) {
            h.hand = other_hand(h.hand);
        }
        if !taken.contains(&(h.player, h.hand)) {
            taken.push((h.player, h.hand));
            out.push(h);
        }
    }
    out
}

fn hand_index(h: Hand) -> usize {
    match h {
        Hand::Left => 0,
        Hand::Right => 1,
    }
}

fn other_hand(h: Hand) -> Hand {
    match h {
        Hand::Left => Hand::Right,
        Hand::Right => Hand::Left,
    }
}

/// A hand reaches away from its owner's shoulder: from the wrist (the outline's point
/// farthest from the fingertips) towards the fingertips, +y for A (who sits at negative
/// y), -y for B. `None` when the hand lies too much across the field to tell.
pub fn pointing_player(outline_mm: &[Pt], tips_mm: &[Pt]) -> Option<Player> {
    let (wrist, c) = wrist_and_tips(outline_mm, tips_mm)?;
    let (dx, dy) = (c.x_mm - wrist.x_mm, c.y_mm - wrist.y_mm);
    let len = (dx * dx + dy * dy).sqrt();
    if len < POINTING_MIN_MM || dy.abs() < POINTING_MIN_COS * len {
        return None;
    }
    Some(if dy > 0.0 { Player::A } else { Player::B })
}

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
fn wrist_and_tips(outline_mm: &[Pt], tips_mm: &[Pt]) -> Option<(Pt, Pt)> {
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

/// The wrist-to-fingertips span and its share along y needed to tell the owner.
const POINTING_MIN_MM: f64 = 60.0;
const POINTING_MIN_COS: f64 = 0.6;

/// When a quantity crossed zero between two times (linear), kept strictly after the
/// first and at most the second; the midpoint when the values do not bracket zero.
pub fn crossing(ta: f64, tb: f64, va: f64, vb: f64) -> f64 {
    let mid = 0.5 * (ta + tb);
    if !(va.is_finite() && vb.is_finite()) || (va > 0.0) == (vb > 0.0) || va == vb {
        return mid;
    }
    let f = (-va / (vb - va)).clamp(0.0, 1.0);
    let t = ta + f * (tb - ta);
    t.clamp(ta + 1e-6 * (tb - ta), tb)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polygon_area_of_a_card_face_in_either_winding() {
        let card = rotated_rect(100.0, -50.0, 52.0, 73.0, 30.0);
        assert!((polygon_area_mm2(&card) - 52.0 * 73.0).abs() < 1e-6);
        let mut rev = card.to_vec();
        rev.reverse();
        assert!((polygon_area_mm2(&rev) - 52.0 * 73.0).abs() < 1e-6);
    }

    #[test]
    fn a_hand_gone_from_over_the_area_is_hidden_unless_seen_leaving() {
        let at = |x, y| Pt::new(x, y);
        // Last seen on a card 300 mm into B's side (tuning hard-9305 reading 3).
        let last = [at(-250.0, 300.0), at(-220.0, 320.0)];
        // No region of the player at all: hidden, for HIDDEN_MAX_S.
        assert!(still_hidden(&last, 0.05, &[]));
        assert!(!still_hidden(&last, HIDDEN_MAX_S + 0.01, &[]));
        // Its name moved to a resting hand at the far edge: still hidden.
        assert!(still_hidden(&last, 0.05, &[at(400.0, 480.0)]));
        // Seen just past the line, where it was heading: it left.
        assert!(!still_hidden(&last, 0.0125, &[at(-240.0, 390.0)]));
        // Never seen with fingertips: nothing to contest with.
        assert!(!still_hidden(&[], 0.05, &[]));
    }

    fn hand(player: Player, hand: Hand, x: f64, y: f64, conf: f64) -> HandObs {
        let outline_px = vec![
            [x, y],
            [x + 100.0, y],
            [x + 100.0, y + 150.0],
            [x, y + 150.0],
        ];
        HandObs {
            player,
            hand,
            lead: None,
            fingertips_px: vec![[x + 50.0, y]],
            outline_px,
            reach_outline_px: Vec::new(),
            inside: true,
            reach_mm: 10.0,
            contact_p: 0.0,
            contact_px: None,
            contact: None,
            conf,
            // Followed for a few runs already, read as this hand each time.
            hand_votes: match hand {
                Hand::Left => [3, 0],
                Hand::Right => [0, 3],
            },
        }
    }

    /// A hand as the network reads it in a new run (no history yet).
    fn read(player: Player, which: Hand, x: f64, y: f64, conf: f64) -> HandObs {
        HandObs {
            hand_votes: [0; 2],
            ..hand(player, which, x, y, conf)
        }
    }

    #[test]
    fn a_hand_seen_then_unseen_outside_the_area_is_no_change_to_narrow_down() {
        let sample = |hands| Sample {
            frame: 0,
            t_s: 0.0,
            hands,
        };
        let outside = HandObs {
            inside: false,
            ..hand(Player::A, Hand::Right, 300.0, 200.0, 0.95)
        };
        let inside = hand(Player::A, Hand::Right, 300.0, 200.0, 0.95);
        let pressing = HandObs {
            contact: Some(CardRef::of(Some(7), 3, Some(Player::A))),
            ..inside.clone()
        };
        let s = SLOTS
            .iter()
            .position(|&k| k == (Player::A, Hand::Right))
            .unwrap();
        let none = sample(Vec::new());
        assert_eq!(sample(vec![outside]).key(s), none.key(s));
        assert_ne!(sample(vec![inside.clone()]).key(s), none.key(s));
        assert_ne!(
            sample(vec![inside]).key(s),
            sample(vec![pressing.clone()]).key(s)
        );
        assert_eq!(
            sample(vec![pressing.clone()]).key(s),
            sample(vec![pressing]).key(s)
        );
    }

    #[test]
    fn a_hand_that_moved_a_little_keeps_who_it_was() {
        let prev = vec![hand(Player::A, Hand::Right, 300.0, 200.0, 0.95)];
        // The network now reads it as B's left hand (it reached into B's half).
        let now = vec![read(Player::B, Hand::Left, 330.0, 180.0, 0.9)];
        let out = keep_identity(&prev, now, &[None]);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].player, out[0].hand), (Player::A, Hand::Right));
    }

    #[test]
    fn where_a_hand_points_outranks_the_run_before() {
        let prev = vec![hand(Player::A, Hand::Right, 300.0, 200.0, 0.95)];
        let now = vec![read(Player::B, Hand::Left, 310.0, 200.0, 0.9)];
        let out = keep_identity(&prev, now, &[Some(Player::B)]);
        assert_eq!((out[0].player, out[0].hand), (Player::B, Hand::Left));
    }

    #[test]
    fn a_new_hand_takes_the_free_hand_or_is_dropped() {
        let prev = vec![hand(Player::A, Hand::Right, 300.0, 200.0, 0.95)];
        let now = vec![
            // The hand that moved, read as A's left: it stays A's right.
            read(Player::A, Hand::Left, 305.0, 200.0, 0.95),
            // New to the view, read as A's right, which is taken: A's left is free.
            read(Player::A, Hand::Right, 900.0, 500.0, 0.8),
            // A third hand of A: both taken, dropped.
            read(Player::A, Hand::Right, 50.0, 50.0, 0.7),
        ];
        let out = keep_identity(&prev, now, &[None, None, None]);
        let ids: Vec<(Player, Hand)> = out.iter().map(|h| (h.player, h.hand)).collect();
        assert_eq!(ids, vec![(Player::A, Hand::Right), (Player::A, Hand::Left)]);
        assert_eq!(out[1].outline_px[0], [900.0, 500.0]);
    }

    #[test]
    fn the_fingertips_farthest_from_the_wrist_over_the_cards_are_looked_at() {
        // Two cards side by side (x -60..60, y 0..73); a hand whose wrist lies at (0, -150),
        // its five fingertips over the cards at different reaches, and one far off them.
        let card = |x0: f64| {
            [
                Pt::new(x0, 0.0),
                Pt::new(x0 + 52.0, 0.0),
                Pt::new(x0 + 52.0, 73.0),
                Pt::new(x0, 73.0),
            ]
        };
        let cards = [card(-60.0), card(8.0)];
        let outline = vec![
            Pt::new(0.0, -150.0),
            Pt::new(50.0, -60.0),
            Pt::new(50.0, 60.0),
            Pt::new(-50.0, 60.0),
            Pt::new(-50.0, -60.0),
        ];
        // By heat (the order given): thumb, little, ring, middle, index; then one off
        // the cards, 30 mm beyond the nearest card's edge.
        let tips = vec![
            Pt::new(-45.0, 5.0),
            Pt::new(40.0, 20.0),
            Pt::new(20.0, 45.0),
            Pt::new(0.5, 55.0),
            Pt::new(-20.0, 50.0),
            Pt::new(0.0, 103.0 + 30.0),
        ];
        let wrist = wrist_and_tips(&outline, &tips).map(|(w, _)| w);
        assert_eq!(wrist, Some(Pt::new(0.0, -150.0)));
        let seen = tips_to_look_at(cards.iter(), wrist, &tips);
        assert_eq!(seen, vec![3, 4, 2], "middle, index, ring");
        // With no wrist to go by, the nearest to a card go first.
        let seen = tips_to_look_at(cards.iter(), None, &tips[..2]);
        assert_eq!(seen.len(), 2);
    }

    #[test]
    fn a_finger_ends_half_its_width_beyond_its_tip_away_from_the_wrist() {
        // A hand of player A reaching along +y: the wrist at y = 0, fingertips at y = 150
        // (the middle finger) and, for the thumb, beside and behind it.
        let outline = [
            Pt::new(-40.0, 0.0),
            Pt::new(40.0, 0.0),
            Pt::new(45.0, 120.0),
            Pt::new(-45.0, 120.0),
        ];
        let tips = [Pt::new(0.0, 150.0), Pt::new(60.0, 90.0)];
        let ends = finger_ends(&outline, &tips);
        assert_eq!(ends.len(), 2);
        // The wrist is the outline's point farthest from the tips' mean (30, 120):
        // (-40, 0). Each end lies 8 mm beyond its tip, on the line from the wrist.
        for (t, e) in tips.iter().zip(&ends) {
            let d = ((e.x_mm - t.x_mm).powi(2) + (e.y_mm - t.y_mm).powi(2)).sqrt();
            assert!((d - FINGER_HALF_WIDTH_MM).abs() < 1e-9, "{d}");
            let (wx, wy) = (t.x_mm + 40.0, t.y_mm);
            let cross = wx * (e.y_mm - t.y_mm) - wy * (e.x_mm - t.x_mm);
            assert!(cross.abs() < 1e-6, "on the wrist's line: {cross}");
            assert!(e.y_mm > t.y_mm, "further from the wrist");
        }
        assert!(finger_ends(&outline, &[]).is_empty());
        assert_eq!(pointing_player(&outline, &tips), Some(Player::A));
    }
}

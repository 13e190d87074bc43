//! The story of a match: the layout, the reader's timeline, where every hand and card is
//! at every instant, and the physical events that follow from those motions.
//!
//! Pure (no OpenCV, no I/O). Motions are planned reading by reading; the rules engine is
//! consulted only to learn which cards are owed (so the sends really happen). Touches and
//! enter/leave events are then found from the motions themselves, at continuous times.

use crate::rules::geometry::{FieldGeometry, Pt};
use crate::rules::kimariji::ReadPool;
use crate::rules::model::*;
use crate::rules::poems::{poem, POEM_COUNT};
use crate::sim::body::{
    convex_hull, dist_to_polygon, hand_shape, project_to_tatami, Appearance, HandShape,
    CONTACT_Z_MM, TIP_CONTACT_R_MM,
};
use crate::sim::Preset;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha20Rng;
use std::collections::{BTreeMap, BTreeSet};

/// First sound of the first reading (the joka is not shown).
pub const FIRST_KAMI_S: f64 = 0.6;
/// How long the hand takes to come down from hovering onto a card.
pub const DESCEND_S: f64 = 0.035;
/// How long a fingertip stays pressed on a card it has touched.
pub const PRESS_S: f64 = 0.04;
/// Hovering height of a hand about to come down on a card.
pub const HOVER_Z_MM: f64 = 30.0;
/// A struck card starts to move this long after the last touch that holds it.
pub const LAUNCH_DELAY_S: f64 = 0.015;
/// Sampling step when searching motions for events; events are then refined by bisection.
pub const EVENT_SCAN_S: f64 = 0.001;
/// Event times are exact to this.
pub const EVENT_TIME_EPS_S: f64 = 1e-7;
/// Shimo-no-ku plus pause before the next reading, as shown (shortened: the hands rest).
pub const SHIMO_AND_PAUSE_S: (f64, f64) = (0.8, 1.2);
/// Human reaction after the kimari-ji is complete.
pub const REACTION_S: (f64, f64) = (0.15, 0.40);
/// Mean hand speed of a reach (the peak of a minimum-jerk reach is 1.9 times this).
pub const REACH_SPEED_MM_S: (f64, f64) = (1400.0, 2400.0);

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

    fn last(&self) -> HandKey {
        self.keys[self.keys.len() - 1]
    }

    pub fn free_at(&self) -> f64 {
        self.last().t_s
    }

    fn hold(&mut self, t: f64) {
        let l = self.last();
        if t > l.t_s {
            self.keys.push(HandKey { t_s: t, ..l });
        }
    }

    fn move_to(&mut self, t0: f64, t1: f64, tip: Pt, z_mm: f64) {
        self.hold(t0);
        let t1 = t1.max(self.last().t_s + 1e-3);
        self.keys.push(HandKey { t_s: t1, tip, z_mm });
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

/// A moment worth showing (contact sheet, docs).
#[derive(Debug, Clone, PartialEq)]
pub struct Moment {
    pub what: String,
    pub seq: u32,
    pub t_s: f64,
}

/// Everything that happens in a simulated recording, in the field frame.
#[derive(Debug, Clone)]
pub struct Story {
    pub geom: FieldGeometry,
    pub layout: Layout,
    pub readings: Vec<Reading>,
    pub looks: [Appearance; 2],
    pub hands: Vec<HandTrack>,
    pub cards: Vec<CardTrack>,
    pub events: Vec<Event>,
    pub moments: Vec<Moment>,
    pub duration_s: f64,
    /// Camera centre the hands are projected from (x, y, height; mm).
    pub camera_mm: [f64; 3],
}

/// What the story is asked to be.
#[derive(Debug, Clone, PartialEq)]
pub struct StoryOptions {
    pub readings: usize,
    pub preset: Preset,
    pub territory_mm: f64,
    pub gap_mm: f64,
    pub cards_per_side: usize,
}

/// The index of a hand in `Story::hands`.
pub fn hand_index(p: Player, h: Hand) -> usize {
    p.index() * 2 + usize::from(h == Hand::Right)
}

const SKIN_BGR: [[f64; 3]; 6] = [
    [170.0, 195.0, 235.0],
    [140.0, 170.0, 215.0],
    [120.0, 150.0, 200.0],
    [95.0, 125.0, 175.0],
    [75.0, 100.0, 150.0],
    [160.0, 180.0, 225.0],
];
const SLEEVE_BGR: [[f64; 3]; 7] = [
    [70.0, 40.0, 30.0],
    [30.0, 30.0, 30.0],
    [235.0, 235.0, 235.0],
    [120.0, 120.0, 125.0],
    [40.0, 80.0, 40.0],
    [50.0, 40.0, 110.0],
    [150.0, 110.0, 60.0],
];

fn look(rng: &mut ChaCha20Rng) -> Appearance {
    let skin = SKIN_BGR[rng.gen_range(0..SKIN_BGR.len())];
    let j = rng.gen_range(-8.0..8.0);
    Appearance {
        hand_len_mm: rng.gen_range(172.0..198.0),
        palm_w_mm: rng.gen_range(78.0..92.0),
        skin_bgr: skin.map(|c: f64| (c + j).clamp(0.0, 255.0)),
        sleeve_bgr: SLEEVE_BGR[rng.gen_range(0..SLEEVE_BGR.len())],
        sleeve_w_mm: rng.gen_range(105.0..150.0),
    }
}

/// The layout at the end of memorisation: rows of cards from each territory's side
/// edges inwards, with the small disorder of real layouts.
pub fn make_layout(
    rng: &mut ChaCha20Rng,
    geom: &FieldGeometry,
    per_side: usize,
    disorder: f64,
) -> (Layout, Vec<Pose>) {
    let mut pool: Vec<u8> = (1..=POEM_COUNT).collect();
    pool.shuffle(rng);
    let (cw, w) = (geom.size.card_w_mm, geom.size.width_mm);
    let per_side = per_side.min(40);
    let mut cards = Vec::new();
    let mut poses = Vec::new();
    let mut next = pool.into_iter();
    for p in Player::BOTH {
        // Rows of 7 to 10 cards, 3 rows.
        let mut rows = [per_side / 3; 3];
        for r in rows.iter_mut().take(per_side % 3) {
            *r += 1;
        }
        let shift = rng.gen_range(0..=2usize).min(rows[0]);
        rows[0] -= shift;
        rows[2] += shift;
        for (ri, &n) in rows.iter().enumerate() {
            let row = ri as u8 + 1;
            let left = (n / 2 + rng.gen_range(0..=1usize)).min(n);
            let yc = geom.row_center_y_mm(p, row);
            let mut place = |x: f64, rng: &mut ChaCha20Rng| {
                let poem = next.next().unwrap_or(1);
                let a = rng.gen_range(-2.0..2.0) * disorder;
                let mut y = yc + rng.gen_range(-1.5..1.5) * disorder;
                // A tilted card reaches further; keep every corner on the territory.
                let terr = geom.territory(p);
                let reach = geom
                    .card_corners(0.0, 0.0, a)
                    .iter()
                    .map(|c| c.y_mm.abs())
                    .fold(0.0, f64::max);
                y = y.clamp(terr.y0_mm + reach + 0.01, terr.y1_mm - reach - 0.01);
                cards.push(CardPlacement {
                    poem: Some(poem),
                    owner: p,
                    row,
                    x_mm: x,
                    y_mm: y,
                    angle_deg: a,
                    poem_score: None,
                    candidates: Vec::new(),
                });
                let turn = if p == Player::B { 180.0 } else { 0.0 };
                poses.push(Pose {
                    x_mm: x,
                    y_mm: y,
                    angle_deg: a + turn,
                });
            };
            let edge = cw / 2.0 + 3.0;
            let mut x = -w / 2.0 + edge + rng.gen_range(0.0..4.0) * disorder;
            for _ in 0..left {
                place(x, rng);
                x += cw + 3.0 + rng.gen_range(0.0..7.0) * disorder;
            }
            let mut x = w / 2.0 - edge - rng.gen_range(0.0..4.0) * disorder;
            for _ in left..n {
                place(x, rng);
                x -= cw + 3.0 + rng.gen_range(0.0..7.0) * disorder;
            }
        }
    }
    let layout = Layout {
        field: geom.size.clone(),
        players: BTreeMap::new(),
        cards,
    };
    (layout, poses)
}

/// What happens in one reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plot {
    Direct,
    NearTie,
    PushOut,
    WrongTerritory,
    OtherHand,
    EarlyEntry,
    DeadQuiet,
    DeadTouch,
    DeadDouble,
    DeadBoth,
}

impl Plot {
    fn name(self) -> &'static str {
        match self {
            Plot::Direct => "direct take",
            Plot::NearTie => "near-simultaneous touches",
            Plot::PushOut => "push-out",
            Plot::WrongTerritory => "take and wrong-territory touch",
            Plot::OtherHand => "take and other-hand touch",
            Plot::EarlyEntry => "early entry",
            Plot::DeadQuiet => "dead card, feint",
            Plot::DeadTouch => "dead-card touch",
            Plot::DeadDouble => "double otetsuki",
            Plot::DeadBoth => "both touch a dead card",
        }
    }
}

struct Planner<'a> {
    rng: &'a mut ChaCha20Rng,
    preset: Preset,
    geom: FieldGeometry,
    hands: Vec<HandTrack>,
    cards: Vec<CardTrack>,
    /// Index into `cards` by poem.
    by_poem: BTreeMap<u8, usize>,
    /// Cards on the field and whose they are (taken cards leave this map).
    owner: BTreeMap<u8, Player>,
    designed: Vec<Event>,
    moments: Vec<Moment>,
    camera_mm: [f64; 3],
    looks: [Appearance; 2],
    speed: [f64; 2],
    /// When each hand (by `hand_index`) first tapped a card.
    first_tap_s: Vec<Option<f64>>,
}

impl<'a> Planner<'a> {
    fn u(&mut self, r: (f64, f64)) -> f64 {
        self.rng.gen_range(r.0..r.1)
    }

    fn card(&self, poem: u8) -> &CardTrack {
        &self.cards[self.by_poem[&poem]]
    }

    fn pose(&self, poem: u8, t: f64) -> Pose {
        self.card(poem).pose(t, &self.hands)
    }

    fn push_seg(&mut self, poem: u8, t: f64, m: CardMotion) {
        let i = self.by_poem[&poem];
        self.cards[i].segs.retain(|(s, _)| *s < t);
        self.cards[i].segs.push((t, m));
    }

    /// Time a reach of this hand over `dist_mm` takes.
    fn travel_s(&mut self, player: Player, dist_mm: f64) -> f64 {
        let v = self.speed[player.index()] * self.rng.gen_range(0.9..1.1);
        (dist_mm / v).clamp(0.09, 0.6)
    }

    /// A fingertip point on a card, on the half nearer the player (so two players'
    /// fingertips on one card stay apart).
    fn touch_point(&mut self, poem: u8, t: f64, player: Player) -> Pt {
        let p = self.pose(poem, t);
        let toward = if player == Player::A { -1.0 } else { 1.0 };
        let h = self.geom.size.card_h_mm;
        Pt::new(
            p.x_mm + self.rng.gen_range(-10.0..10.0),
            p.y_mm + toward * self.rng.gen_range(0.12..0.3) * h,
        )
    }

    /// The hand comes down on `target` at exactly `t_touch`, presses, and lifts away.
    fn tap(&mut self, hi: usize, t_touch: f64, target: Pt, lift: Pt) -> f64 {
        let from = self.hands[hi].last();
        let t_touch = t_touch.max(from.t_s + DESCEND_S + 0.02);
        let dist = dist(from.tip, target);
        let player = self.hands[hi].player;
        let travel = self.travel_s(player, dist);
        let t_start = (t_touch - DESCEND_S - travel).max(from.t_s);
        let h = &mut self.hands[hi];
        h.move_to(t_start, t_touch - DESCEND_S, target, HOVER_Z_MM);
        h.keys.push(HandKey {
            t_s: t_touch,
            tip: target,
            z_mm: 0.0,
        });
        h.keys.push(HandKey {
            t_s: t_touch + PRESS_S,
            tip: target,
            z_mm: 0.0,
        });
        let t_up = t_touch + PRESS_S + 0.12;
        let first = &mut self.first_tap_s[hi];
        *first = Some(first.map_or(t_touch, |f: f64| f.min(t_touch)));
        let h = &mut self.hands[hi];
        h.keys.push(HandKey {
            t_s: t_up,
            tip: lift,
            z_mm: 50.0,
        });
        t_up
    }

    /// A tap of hand `hi` of `player` on `target` at `t` that takes no card, lifted back
    /// towards the player and then home, noted as the moment `what` of reading `seq`;
    /// returns when the hand is ready again.
    fn foul_tap(
        &mut self,
        hi: usize,
        player: Player,
        t: f64,
        target: Pt,
        seq: u32,
        what: &str,
    ) -> f64 {
        let lift = Pt::new(target.x_mm, target.y_mm + self.toward_own(player) * 60.0);
        let up = self.tap(hi, t, target, lift);
        self.moments.push(Moment {
            what: what.into(),
            seq,
            t_s: t,
        });
        self.return_ready(hi, up + 0.1)
    }

    /// When a tap of this hand on `target` would land if it started reacting at `t0`.
    fn landing(&mut self, hi: usize, t0: f64, target: Pt) -> f64 {
        let from = self.hands[hi].last();
        let d = dist(from.tip, target);
        let player = self.hands[hi].player;
        t0.max(from.t_s) + self.travel_s(player, d) + DESCEND_S
    }

    fn return_ready(&mut self, hi: usize, t0: f64) -> f64 {
        let ready = self.hands[hi].ready;
        let from = self.hands[hi].last();
        let d = dist(from.tip, ready);
        let player = self.hands[hi].player;
        let dur = self.travel_s(player, d) * 1.6 + 0.1;
        let t0 = t0.max(from.t_s);
        self.hands[hi].move_to(t0, t0 + dur, ready, 0.0);
        t0 + dur
    }

    /// A hand reaches towards a point, hovers, and goes back.
    fn feint(&mut self, hi: usize, t0: f64, target: Pt) -> f64 {
        let player = self.hands[hi].player;
        let d = dist(self.hands[hi].last().tip, target);
        let travel = self.travel_s(player, d);
        let t0 = t0.max(self.hands[hi].free_at());
        let z = self.u((25.0, 70.0));
        let hover = self.u((0.08, 0.3));
        self.hands[hi].move_to(t0, t0 + travel, target, z);
        self.hands[hi].hold(t0 + travel + hover);
        self.return_ready(hi, t0 + travel + hover)
    }

    /// A card flies off the field from `t0`, driven by `by`; returns the out time.
    fn fling_out(
        &mut self,
        poem: u8,
        t0: f64,
        by: Player,
        hand: Hand,
        push_sign: Option<f64>,
    ) -> f64 {
        let from = self.pose(poem, t0);
        let w = self.geom.size.width_mm;
        let sgn = push_sign.unwrap_or(if from.x_mm.abs() < 40.0 {
            if self.rng.gen_bool(0.5) {
                1.0
            } else {
                -1.0
            }
        } else {
            from.x_mm.signum()
        });
        let lim = self.geom.size.gap_mm / 2.0 + self.geom.depth_mm();
        let to = Pose {
            x_mm: sgn * (w / 2.0 + self.u((70.0, 170.0))),
            y_mm: (from.y_mm + self.u((-60.0, 60.0))).clamp(-lim, lim),
            angle_deg: from.angle_deg + self.u((-220.0, 220.0)),
        };
        let dur = if push_sign.is_some() {
            self.u((0.2, 0.3))
        } else {
            self.u((0.28, 0.45))
        };
        let t1 = t0 + dur;
        self.push_seg(poem, t0, CardMotion::Slide { t0, t1, from, to });
        self.push_seg(poem, t1, CardMotion::Rest(to));
        let geom = self.geom.clone();
        let is_out = |pl: &Planner, t: f64| {
            let p = pl.pose(poem, t);
            geom.card_is_out(p.x_mm, p.y_mm, p.angle_deg)
        };
        let mut lo = t0;
        let mut hi = t1;
        while hi - lo > EVENT_TIME_EPS_S {
            let mid = 0.5 * (lo + hi);
            if is_out(self, mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        self.designed.push(Event::new(
            round_t(hi),
            EventKind::Out {
                poem,
                by: By::from(by),
                hand: Some(hand),
            },
        ));
        self.owner.remove(&poem);
        hi
    }

    /// A resting card in a territory (not `except`), chosen at random.
    fn some_card(&mut self, terr: Player, t: f64, except: &[u8]) -> Option<u8> {
        let cands: Vec<u8> = self
            .owner
            .iter()
            .filter(|(p, o)| **o == terr && !except.contains(p))
            .map(|(p, _)| *p)
            .filter(|p| self.card(*p).still(t - 0.5, t + 3.0, &self.hands))
            .filter(|p| {
                let q = self.pose(*p, t);
                self.geom.territory(terr).contains(Pt::new(q.x_mm, q.y_mm))
            })
            .collect();
        cands.choose(self.rng).copied()
    }

    /// A free place for one more card in a territory at time t.
    fn free_slot(&mut self, terr: Player, t: f64) -> Option<(u8, Pose)> {
        let cw = self.geom.size.card_w_mm;
        let w = self.geom.size.width_mm;
        let turn = if terr == Player::B { 180.0 } else { 0.0 };
        let occupied: Vec<Pose> = self.cards.iter().map(|c| c.pose(t, &self.hands)).collect();
        let mut rows = [1u8, 2, 3];
        rows.shuffle(self.rng);
        for row in rows {
            let y = self.geom.row_center_y_mm(terr, row);
            let mut xs: Vec<f64> = Vec::new();
            let mut x = -w / 2.0 + cw / 2.0 + 4.0;
            while x <= w / 2.0 - cw / 2.0 - 4.0 {
                xs.push(x);
                x += 4.0;
            }
            // Prefer places near the middle of the row ends' groups: closest to the centre.
            xs.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
            let start = self.rng.gen_range(0..xs.len().clamp(1, 20));
            for &x in xs.iter().skip(start).chain(xs.iter().take(start)) {
                let free = occupied.iter().all(|o| {
                    (o.x_mm - x).abs() > cw + 6.0 || (o.y_mm - y).abs() > self.geom.size.card_h_mm
                });
                if free {
                    return Some((
                        row,
                        Pose {
                            x_mm: x,
                            y_mm: y,
                            angle_deg: turn + self.rng.gen_range(-2.0..2.0),
                        },
                    ));
                }
            }
        }
        None
    }

    /// Hand `hi` picks card `poem` up at t0, carries it to `to` and lets go; returns
    /// (time of letting go, time the hand is free again).
    fn carry(&mut self, hi: usize, t0: f64, poem: u8, to: Pose) -> (f64, f64) {
        let t_start = t0.max(self.hands[hi].free_at());
        let player = self.hands[hi].player;
        let grip = self.touch_point(poem, t_start, player);
        let t_touch = self.landing(hi, t_start, grip);
        let t_touch = self.tap_hold(hi, t_touch, grip);
        let from = self.pose(poem, t_touch);
        let (dx, dy) = (from.x_mm - grip.x_mm, from.y_mm - grip.y_mm);
        let target_tip = Pt::new(to.x_mm - dx, to.y_mm - dy);
        self.hands[hi].keys.push(HandKey {
            t_s: t_touch + PRESS_S,
            tip: grip,
            z_mm: 0.0,
        });
        let lift_t = t_touch + PRESS_S + 0.06;
        let d = dist(grip, target_tip);
        let travel = self.travel_s(player, d) * 1.8 + 0.15;
        let t_set = lift_t + travel;
        {
            let h = &mut self.hands[hi];
            h.keys.push(HandKey {
                t_s: lift_t,
                tip: grip,
                z_mm: 12.0,
            });
            h.keys.push(HandKey {
                t_s: t_set,
                tip: target_tip,
                z_mm: 0.0,
            });
            h.keys.push(HandKey {
                t_s: t_set + 0.05,
                tip: target_tip,
                z_mm: 0.0,
            });
        }
        self.push_seg(
            poem,
            t_touch,
            CardMotion::Carried {
                hand: hi,
                t0: t_touch,
                t1: t_set,
                dx_mm: dx,
                dy_mm: dy,
                angle0: from.angle_deg,
                angle1: to.angle_deg,
            },
        );
        let release = t_set + 0.05;
        self.push_seg(poem, release, CardMotion::Rest(to));
        let up = release + 0.1;
        let away = Pt::new(
            target_tip.x_mm,
            target_tip.y_mm + self.toward_own(player) * 40.0,
        );
        self.hands[hi].move_to(release, up, away, 40.0);
        let free = self.return_ready(hi, up);
        (release, free)
    }

    fn tap_hold(&mut self, hi: usize, t_touch: f64, target: Pt) -> f64 {
        let from = self.hands[hi].last();
        let t_touch = t_touch.max(from.t_s + DESCEND_S + 0.02);
        let player = self.hands[hi].player;
        let travel = self.travel_s(player, dist(from.tip, target));
        let t_start = (t_touch - DESCEND_S - travel).max(from.t_s);
        let h = &mut self.hands[hi];
        h.move_to(t_start, t_touch - DESCEND_S, target, HOVER_Z_MM);
        h.keys.push(HandKey {
            t_s: t_touch,
            tip: target,
            z_mm: 0.0,
        });
        t_touch
    }

    fn toward_own(&self, p: Player) -> f64 {
        if p == Player::A {
            -1.0
        } else {
            1.0
        }
    }

    fn lead(&self, p: Player, leads: &[Hand; 2]) -> usize {
        hand_index(p, leads[p.index()])
    }
}

fn dist(a: Pt, b: Pt) -> f64 {
    ((a.x_mm - b.x_mm).powi(2) + (a.y_mm - b.y_mm).powi(2)).sqrt()
}

fn round_t(t: f64) -> f64 {
    (t * 1e6).round() / 1e6
}

/// The reader: onsets of each kana of the kami-no-ku, first one held.
fn reader_onsets(rng: &mut ChaCha20Rng, start_s: f64, units: usize) -> Vec<f64> {
    let first = rng.gen_range(1.0..1.2);
    let mora = rng.gen_range(0.23..0.27);
    let mut t = start_s;
    let mut v = vec![round_t(t)];
    for i in 1..units.max(1) {
        t += if i == 1 {
            first
        } else {
            mora + rng.gen_range(-0.015..0.015)
        };
        v.push(round_t(t));
    }
    v
}

/// Plans the whole match.
pub fn plan(rng: &mut ChaCha20Rng, opts: &StoryOptions, camera_mm: [f64; 3]) -> Story {
    let geom = FieldGeometry::new(FieldSize {
        width_mm: opts.territory_mm,
        gap_mm: opts.gap_mm,
        ..FieldSize::default()
    });
    let disorder = match opts.preset {
        Preset::Clean => 0.6,
        Preset::Realistic => 1.0,
        Preset::Hard => 1.4,
    };
    let (mut layout, poses) = make_layout(rng, &geom, opts.cards_per_side, disorder);
    let leads: [Hand; 2] = [0, 1].map(|_| {
        if rng.gen_bool(0.85) {
            Hand::Right
        } else {
            Hand::Left
        }
    });
    for p in Player::BOTH {
        layout.players.insert(
            p,
            PlayerInfo {
                name: format!("Player {p}"),
                lead_hand: Some(leads[p.index()]),
            },
        );
    }
    let looks = [look(rng), look(rng)];
    let depth = geom.depth_mm();
    let edge = geom.size.gap_mm / 2.0 + depth;
    let mut hands = Vec::new();
    for p in Player::BOTH {
        let sy = if p == Player::A { -1.0 } else { 1.0 };
        let body_x = rng.gen_range(-120.0..120.0);
        for h in [Hand::Left, Hand::Right] {
            // A's right is +x; B faces A, so B's right is -x.
            let side =
                if h == Hand::Right { 1.0 } else { -1.0 } * if p == Player::A { 1.0 } else { -1.0 };
            let lead = leads[p.index()] == h;
            let shoulder = Pt::new(body_x + side * 170.0, sy * (edge + 330.0));
            let ready = if lead {
                Pt::new(
                    body_x + side * rng.gen_range(40.0..110.0),
                    sy * (edge + rng.gen_range(30.0..45.0)),
                )
            } else {
                Pt::new(
                    body_x + side * rng.gen_range(170.0..230.0),
                    sy * (edge + rng.gen_range(95.0..130.0)),
                )
            };
            hands.push(HandTrack {
                player: p,
                hand: h,
                lead,
                shoulder,
                ready,
                keys: vec![HandKey {
                    t_s: 0.0,
                    tip: ready,
                    z_mm: 0.0,
                }],
            });
        }
    }
    let cards: Vec<CardTrack> = layout
        .cards
        .iter()
        .zip(&poses)
        .map(|(c, p)| CardTrack {
            poem: c.poem.unwrap_or(1),
            segs: vec![(0.0, CardMotion::Rest(*p))],
        })
        .collect();
    let by_poem = cards.iter().enumerate().map(|(i, c)| (c.poem, i)).collect();
    let owner = layout
        .cards
        .iter()
        .filter_map(|c| c.poem.map(|p| (p, c.owner)))
        .collect();
    let speed = [0, 1].map(|_| rng.gen_range(REACH_SPEED_MM_S.0..REACH_SPEED_MM_S.1));
    let mut pl = Planner {
        rng,
        preset: opts.preset,
        geom: geom.clone(),
        hands,
        cards,
        by_poem,
        owner,
        designed: Vec::new(),
        moments: Vec::new(),
        camera_mm,
        looks: looks.clone(),
        speed,
        first_tap_s: vec![None; Player::BOTH.len() * 2],
    };

    // Which readings are dead cards: half of them.
    let k = opts.readings;
    let mut dead: Vec<bool> = (0..k).map(|i| i < k / 2).collect();
    dead.shuffle(pl.rng);
    let on_field: BTreeSet<u8> = pl.owner.keys().copied().collect();
    let mut off_field: Vec<u8> = (1..=POEM_COUNT).filter(|p| !on_field.contains(p)).collect();
    off_field.shuffle(pl.rng);

    let mut pool = ReadPool::new();
    let mut readings: Vec<Reading> = Vec::new();
    let mut t_kami = FIRST_KAMI_S;
    for (i, is_dead) in dead.into_iter().enumerate() {
        let seq = i as u32 + 1;
        let plot = choose_plot(&mut pl, is_dead);
        let poem_no = if is_dead {
            match off_field.pop() {
                Some(p) => p,
                None => break,
            }
        } else {
            let mut live: Vec<u8> = pl.owner.keys().copied().collect();
            if plot == Plot::PushOut {
                // 17-2 needs a card at the end of its row with a neighbour just inside it.
                let pushable: Vec<u8> = live
                    .iter()
                    .copied()
                    .filter(|&p| pushable(&pl, p, t_kami))
                    .collect();
                if !pushable.is_empty() {
                    live = pushable;
                }
            }
            match live.choose(pl.rng) {
                Some(p) => *p,
                None => break,
            }
        };
        let Some(poem_data) = poem(poem_no) else {
            break;
        };
        let onsets = reader_onsets(pl.rng, t_kami, poem_data.keys.len());
        let klen = pool.kimariji(poem_no).map_or(1, |k| k.len).max(1);
        pool.mark_read(poem_no);
        let decided = onsets[(klen - 1).min(onsets.len() - 1)];
        let mora_end = onsets[onsets.len() - 1] + 0.25;
        pl.moments.push(Moment {
            what: format!("reading {seq}: {}", plot.name()),
            seq,
            t_s: decided,
        });
        let t_busy = act(&mut pl, plot, poem_no, seq, t_kami, decided, &leads);

        let mut reading = Reading {
            seq,
            poem: poem_no,
            kami_start_s: round_t(t_kami),
            onsets_s: Some(onsets),
            kami_end_s: Some(round_t(mora_end)),
            shimo_start_s: None,
            void: false,
        };
        // What the judge will say decides the sends, which must really happen.
        // The whole match so far, so that state carried between readings (a hand already
        // inside, cards out) is judged as the engine will judge it.
        let mut so_far = readings.clone();
        so_far.push(reading.clone());
        let evs = events_between(&pl, 0.0, f64::INFINITY);
        let owed = crate::rules::adjudicate(&layout, &so_far, &evs)
            .0
            .last()
            .map(|r| r.sends.owed.clone())
            .unwrap_or_default();
        let mut t_free = t_busy;
        let take_end = t_busy;
        for (p, n) in owed {
            for _ in 0..n {
                let hi = pl.lead(p, &leads);
                let Some(card) = pl.some_card(p, take_end, &[poem_no]) else {
                    break;
                };
                let Some((row, slot)) = pl.free_slot(p.other(), take_end + 2.0) else {
                    break;
                };
                let start = take_end.max(pl.hands[hi].free_at());
                let (release, free_s) = pl.carry(hi, start, card, slot_for_send(&slot));
                pl.designed.push(Event::new(
                    round_t(release),
                    EventKind::Send {
                        from: p,
                        poem: card,
                    },
                ));
                pl.owner.insert(card, p.other());
                pl.moments.push(Moment {
                    what: "send".into(),
                    seq,
                    t_s: release - 0.1,
                });
                // The receiver turns the card to face them and puts it in its place.
                let ri = pl.lead(p.other(), &leads);
                let (placed, rfree) = pl.carry(ri, release + 0.05, card, slot);
                pl.designed.push(Event::new(
                    round_t(placed),
                    EventKind::Place {
                        poem: card,
                        owner: p.other(),
                        row,
                        x_mm: slot.x_mm,
                        y_mm: slot.y_mm,
                    },
                ));
                t_free = t_free.max(free_s).max(rfree);
            }
        }
        for hi in 0..pl.hands.len() {
            t_free = t_free.max(pl.hands[hi].free_at());
        }
        let shimo = round_t(mora_end.max(t_free) + pl.u((0.2, 0.4)));
        reading.shimo_start_s = Some(shimo);
        readings.push(reading);
        let evs = events_between(&pl, 0.0, f64::INFINITY);
        if crate::rules::adjudicate(&layout, &readings, &evs)
            .1
            .winner
            .is_some()
        {
            break;
        }
        t_kami = shimo + pl.u(SHIMO_AND_PAUSE_S);
    }
    let duration_s = round_t(t_kami);
    for h in pl.hands.iter_mut() {
        h.hold(duration_s);
    }
    let events = events_between(&pl, 0.0, f64::INFINITY);
    Story {
        geom,
        layout,
        readings,
        looks,
        hands: pl.hands,
        cards: pl.cards,
        events,
        moments: pl.moments,
        duration_s,
        camera_mm,
    }
}

/// A sent card arrives still facing the sender; the receiver turns it.
fn slot_for_send(slot: &Pose) -> Pose {
    Pose {
        angle_deg: slot.angle_deg + 180.0 + 8.0,
        ..*slot
    }
}

fn choose_plot(pl: &mut Planner, dead: bool) -> Plot {
    let table: &[(Plot, u32)] = match (pl.preset, dead) {
        (Preset::Clean, false) => &[
            (Plot::Direct, 5),
            (Plot::PushOut, 2),
            (Plot::WrongTerritory, 2),
        ],
        (Preset::Clean, true) => &[
            (Plot::DeadQuiet, 4),
            (Plot::DeadTouch, 2),
            (Plot::DeadDouble, 1),
        ],
        (Preset::Realistic, false) => &[
            (Plot::Direct, 4),
            (Plot::NearTie, 2),
            (Plot::PushOut, 2),
            (Plot::WrongTerritory, 1),
            (Plot::OtherHand, 1),
            (Plot::EarlyEntry, 1),
        ],
        (Preset::Realistic, true) => &[
            (Plot::DeadQuiet, 4),
            (Plot::DeadTouch, 2),
            (Plot::DeadDouble, 1),
            (Plot::DeadBoth, 1),
        ],
        (Preset::Hard, false) => &[
            (Plot::Direct, 2),
            (Plot::NearTie, 4),
            (Plot::PushOut, 2),
            (Plot::WrongTerritory, 1),
            (Plot::OtherHand, 1),
            (Plot::EarlyEntry, 1),
        ],
        (Preset::Hard, true) => &[
            (Plot::DeadQuiet, 2),
            (Plot::DeadTouch, 2),
            (Plot::DeadDouble, 2),
            (Plot::DeadBoth, 2),
        ],
    };
    let total: u32 = table.iter().map(|(_, w)| w).sum();
    let mut r = pl.rng.gen_range(0..total);
    for (p, w) in table {
        if r < *w {
            return *p;
        }
        r -= w;
    }
    table[0].0
}

/// Plays one reading; returns when the take (and its aftermath) is over.
fn act(
    pl: &mut Planner,
    plot: Plot,
    read: u8,
    seq: u32,
    kami: f64,
    decided: f64,
    leads: &[Hand; 2],
) -> f64 {
    let players = Player::BOTH;
    let mut end = decided;
    let rt = |pl: &mut Planner| pl.u(REACTION_S);
    // 21-1: a lead hand already over the field when the reading begins.
    let mut early_from: Option<Player> = None;
    if plot == Plot::EarlyEntry {
        let p = *players.choose(pl.rng).unwrap_or(&Player::A);
        let hi = pl.lead(p, leads);
        let arrive = kami - pl.u((0.03, 0.3));
        let start = (arrive - 0.35).max(pl.hands[hi].free_at());
        let over = Pt::new(
            pl.hands[hi].ready.x_mm + pl.u((-60.0, 60.0)),
            pl.geom.row_center_y_mm(p, 2),
        );
        let z = pl.u((50.0, 90.0));
        pl.hands[hi].move_to(start, arrive.max(start + 0.05), over, z);
        early_from = Some(p);
        pl.moments.push(Moment {
            what: "early entry".into(),
            seq,
            t_s: kami,
        });
    }
    if let Some(owner) = pl.owner.get(&read).copied() {
        // The read card is in play.
        let mut winner = if pl.rng.gen_bool(0.55) {
            owner
        } else {
            owner.other()
        };
        if let Some(e) = early_from {
            if pl.rng.gen_bool(0.5) {
                winner = e;
            }
        }
        let loser = winner.other();
        let wi = pl.lead(winner, leads);
        let li = pl.lead(loser, leads);
        if plot == Plot::PushOut {
            if let Some(t) = push_out(pl, read, owner, winner, wi, decided, seq, leads) {
                return t;
            }
        }
        // A feint by the loser on some other card before the take.
        if pl.preset != Preset::Clean && plot != Plot::NearTie && pl.rng.gen_bool(0.35) {
            let who = pl.rng_player();
            if let Some(c) = pl.some_card(who, decided, &[read]) {
                let target = pl.pose(c, decided);
                let t0 = decided + pl.u((0.05, 0.15));
                let p = Pt::new(target.x_mm, target.y_mm);
                end = end.max(pl.feint(li, t0, p));
            }
        }
        let w_target = pl.touch_point(read, decided, winner);
        let r = rt(pl);
        let t_w = pl.landing(wi, decided + r, w_target);
        let rival_tie = plot == Plot::NearTie
            || (pl.preset == Preset::Hard && pl.rng.gen_bool(0.3) && plot != Plot::EarlyEntry);
        let mut last_touch = t_w;
        let sweep = |pl: &mut Planner, at: Pt| {
            let sx = if at.x_mm.abs() < 1.0 {
                1.0
            } else {
                at.x_mm.signum()
            };
            Pt::new(at.x_mm + sx * pl.u((60.0, 140.0)), at.y_mm)
        };
        let lift = sweep(pl, w_target);
        let up_w = pl.tap(wi, t_w, w_target, lift);
        let pause = pl.u((0.2, 0.4));
        end = end.max(pl.return_ready(wi, up_w + pause));
        let li_busy = pl.hands[li].free_at() > t_w - 0.1;
        if rival_tie && !li_busy {
            // 18-1: touches 0-20 ms apart; sometimes exactly together.
            let dt = if pl.rng.gen_bool(0.2) {
                0.0
            } else {
                pl.u((0.0005, 0.020))
            };
            let l_target = pl.touch_point(read, decided, loser);
            let lift = sweep(pl, l_target);
            let t_l = t_w + dt;
            let up = pl.tap(li, t_l, l_target, lift);
            let pause = pl.u((0.2, 0.4));
            end = end.max(pl.return_ready(li, up + pause));
            last_touch = last_touch.max(t_l);
            pl.moments.push(Moment {
                what: format!("touches {:.1} ms apart", dt * 1e3),
                seq,
                t_s: t_w,
            });
        } else if pl.preset != Preset::Clean && !li_busy && pl.rng.gen_bool(0.6) {
            // The loser arrives late, where the card was.
            let l_target = pl.touch_point(read, decided, loser);
            let lift = sweep(pl, l_target);
            let t_l = t_w + pl.u((0.06, 0.3));
            let up = pl.tap(li, t_l, l_target, lift);
            let pause = pl.u((0.1, 0.3));
            end = end.max(pl.return_ready(li, up + pause));
        } else {
            pl.moments.push(Moment {
                what: "direct touch".into(),
                seq,
                t_s: t_w,
            });
        }
        let out = pl.fling_out(
            read,
            last_touch + LAUNCH_DELAY_S,
            winner,
            leads[winner.index()],
            None,
        );
        end = end.max(out + 0.3);
        match plot {
            Plot::WrongTerritory => {
                let terr = owner.other();
                if let Some(c) = pl.some_card(terr, t_w, &[read]) {
                    let hi = pl.lead(loser, leads);
                    let tgt = pl.touch_point(c, t_w, loser);
                    let t = pl.landing(hi, t_w + 0.05, tgt);
                    end = end.max(pl.foul_tap(hi, loser, t, tgt, seq, "wrong-territory touch"));
                }
            }
            Plot::OtherHand => {
                let other = if leads[loser.index()] == Hand::Right {
                    Hand::Left
                } else {
                    Hand::Right
                };
                let hi = hand_index(loser, other);
                let terr = if pl.rng.gen_bool(0.5) {
                    owner
                } else {
                    owner.other()
                };
                // 13-2 note: the hand that first touches a card in the match is the
                // lead hand, so a touch is one with the other hand only after the lead
                // hand has touched one.
                let lead_first = pl.first_tap_s[pl.lead(loser, leads)];
                if let Some(c) = pl.some_card(terr, t_w, &[read]) {
                    let tgt = pl.touch_point(c, t_w, loser);
                    let react = pl.u(REACTION_S);
                    let t = pl.landing(hi, decided + react, tgt);
                    if lead_first.is_some_and(|f| f < t) {
                        end = end.max(pl.foul_tap(hi, loser, t, tgt, seq, "other-hand touch"));
                    }
                }
            }
            _ => {}
        }
        if let Some(e) = early_from {
            let hi = pl.lead(e, leads);
            end = end.max(pl.return_ready(hi, pl.hands[hi].free_at().max(decided)));
        }
        return end;
    }
    // A dead card: 23-1 if anyone touches.
    let toucher = *players.choose(pl.rng).unwrap_or(&Player::A);
    let tap_card = |pl: &mut Planner, p: Player, terr: Player, t0: f64| -> f64 {
        let hi = pl.lead(p, leads);
        if let Some(c) = pl.some_card(terr, t0, &[]) {
            let tgt = pl.touch_point(c, t0, p);
            let t = pl.landing(hi, t0, tgt);
            let lift = Pt::new(tgt.x_mm, tgt.y_mm + pl.toward_own(p) * 50.0);
            let up = pl.tap(hi, t, tgt, lift);
            pl.moments.push(Moment {
                what: "dead-card touch".into(),
                seq,
                t_s: t,
            });
            up
        } else {
            t0
        }
    };
    match plot {
        Plot::DeadTouch => {
            let terr = if pl.rng.gen_bool(0.5) {
                toucher
            } else {
                toucher.other()
            };
            let t0 = decided + pl.u(REACTION_S);
            let up = tap_card(pl, toucher, terr, t0);
            let hi = pl.lead(toucher, leads);
            end = end.max(pl.return_ready(hi, up + 0.1));
        }
        Plot::DeadDouble => {
            // 25-3: both territories touched.
            let t0 = decided + pl.u(REACTION_S);
            let up = tap_card(pl, toucher, toucher, t0);
            let up = tap_card(pl, toucher, toucher.other(), up + 0.02);
            let hi = pl.lead(toucher, leads);
            end = end.max(pl.return_ready(hi, up + 0.1));
        }
        Plot::DeadBoth => {
            for p in players {
                let t0 = decided + pl.u(REACTION_S);
                let terr = if pl.rng.gen_bool(0.5) { p } else { p.other() };
                let up = tap_card(pl, p, terr, t0);
                let hi = pl.lead(p, leads);
                end = end.max(pl.return_ready(hi, up + 0.1));
            }
        }
        _ => {
            // Hovering: a reach that stops in the air.
            let hi = pl.lead(toucher, leads);
            if let Some(c) = pl.some_card(toucher.other(), decided, &[]) {
                let q = pl.pose(c, decided);
                let t0 = decided + pl.u(REACTION_S);
                end = end.max(pl.feint(hi, t0, Pt::new(q.x_mm, q.y_mm)));
                pl.moments.push(Moment {
                    what: "hover over a dead card".into(),
                    seq,
                    t_s: t0 + 0.25,
                });
            }
        }
    }
    if let Some(e) = early_from {
        let hi = pl.lead(e, leads);
        end = end.max(pl.return_ready(hi, decided));
    }
    end
}

impl<'a> Planner<'a> {
    fn rng_player(&mut self) -> Player {
        if self.rng.gen_bool(0.5) {
            Player::A
        } else {
            Player::B
        }
    }
}

/// The resting cards of `owner`'s row holding the card, other than the card itself.
fn row_mates(pl: &Planner, read: u8, t: f64) -> Vec<(u8, Pose)> {
    let Some(owner) = pl.owner.get(&read).copied() else {
        return Vec::new();
    };
    let r = pl.pose(read, t);
    pl.owner
        .iter()
        .filter(|(p, o)| **o == owner && **p != read)
        .map(|(p, _)| (*p, pl.pose(*p, t)))
        .filter(|(_, q)| (q.y_mm - r.y_mm).abs() < 20.0)
        .collect()
}

/// The neighbour that can push `read` out: `read` is the outermost card of its row and
/// the neighbour lies just inside it.
fn push_partner(pl: &Planner, read: u8, t: f64) -> Option<(u8, Pose, f64)> {
    let r = pl.pose(read, t);
    let sgn = if r.x_mm >= 0.0 { 1.0 } else { -1.0 };
    let cw = pl.geom.size.card_w_mm;
    let mates = row_mates(pl, read, t);
    if mates.iter().any(|(_, q)| sgn * (q.x_mm - r.x_mm) > 0.0) {
        return None;
    }
    mates
        .into_iter()
        .find(|(_, q)| (0.0..14.0).contains(&(sgn * (r.x_mm - q.x_mm) - cw)))
        .map(|(n, q)| (n, q, sgn))
}

fn pushable(pl: &Planner, read: u8, t: f64) -> bool {
    push_partner(pl, read, t).is_some()
}

/// 17-2: the hand drives a neighbouring card into the read card, which leaves the area.
#[allow(clippy::too_many_arguments)]
fn push_out(
    pl: &mut Planner,
    read: u8,
    owner: Player,
    winner: Player,
    wi: usize,
    decided: f64,
    seq: u32,
    leads: &[Hand; 2],
) -> Option<f64> {
    let r = pl.pose(read, decided);
    let (n, np, sgn) = push_partner(pl, read, decided)?;
    if !pl.card(n).still(decided - 1.0, decided + 3.0, &pl.hands) {
        return None;
    }
    let grip = Pt::new(np.x_mm - sgn * 12.0, np.y_mm + pl.toward_own(winner) * 12.0);
    let react = pl.u(REACTION_S);
    let t_touch = pl.landing(wi, decided + react, grip);
    let t_touch = pl.tap_hold(wi, t_touch, grip);
    let w = pl.geom.size.width_mm;
    let n_end_x = sgn * (w / 2.0 + pl.u((-12.0, 12.0)));
    let push_dist = (n_end_x - np.x_mm).abs();
    let push_s = (push_dist / 1500.0).clamp(0.12, 0.3);
    let t_push0 = t_touch + 0.015;
    let t_push1 = t_push0 + push_s;
    let end_tip = Pt::new(grip.x_mm + (n_end_x - np.x_mm), grip.y_mm);
    {
        let h = &mut pl.hands[wi];
        h.keys.push(HandKey {
            t_s: t_push0,
            tip: grip,
            z_mm: 0.0,
        });
        h.keys.push(HandKey {
            t_s: t_push1,
            tip: end_tip,
            z_mm: 0.0,
        });
    }
    let turn = pl.u((-6.0, 6.0));
    pl.push_seg(
        n,
        t_push0,
        CardMotion::Carried {
            hand: wi,
            t0: t_push0,
            t1: t_push1,
            dx_mm: np.x_mm - grip.x_mm,
            dy_mm: np.y_mm - grip.y_mm,
            angle0: np.angle_deg,
            angle1: np.angle_deg + turn,
        },
    );
    let n_rest = pl.pose(n, t_push1);
    pl.push_seg(n, t_push1, CardMotion::Rest(n_rest));
    // When the pushed card meets the read card.
    let geom = pl.geom.clone();
    let reach = |pl: &Planner, t: f64| -> bool {
        let nc = pl.card(n).corners(t, &pl.hands, &geom);
        let rc = geom.card_corners(r.x_mm, r.y_mm, r.angle_deg);
        let front = nc
            .iter()
            .map(|c| sgn * c.x_mm)
            .fold(f64::NEG_INFINITY, f64::max);
        let back = rc
            .iter()
            .map(|c| sgn * c.x_mm)
            .fold(f64::INFINITY, f64::min);
        front >= back
    };
    if !reach(pl, t_push1) {
        return None;
    }
    let (mut lo, mut hi) = (t_push0, t_push1);
    while hi - lo > EVENT_TIME_EPS_S {
        let mid = 0.5 * (lo + hi);
        if reach(pl, mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let t_hit = hi;
    pl.designed.push(Event::new(
        round_t(t_hit),
        EventKind::Touch {
            player: winner,
            hand: leads[winner.index()],
            poem: Some(read),
            territory: None,
            direct: false,
        },
    ));
    let t_out = pl.fling_out(read, t_hit, winner, leads[winner.index()], Some(sgn));
    pl.moments.push(Moment {
        what: "push-out".into(),
        seq,
        t_s: t_out,
    });
    let up = t_push1 + 0.12;
    let away = Pt::new(end_tip.x_mm, end_tip.y_mm + pl.toward_own(winner) * 50.0);
    pl.hands[wi].move_to(t_push1 + 0.02, up, away, 50.0);
    let mut end = pl.return_ready(wi, up + 0.1);
    // The owner puts the displaced card back where it lay.
    let oi = pl.lead(owner, leads);
    let back_at = end.max(t_touch + crate::rules::engine::TAKING_MOTION_S + 0.1);
    let (placed, free) = pl.carry(oi, back_at, n, np);
    let row = pl.geom.row_of(owner, np.y_mm);
    pl.designed.push(Event::new(
        round_t(placed),
        EventKind::Place {
            poem: n,
            owner,
            row,
            x_mm: np.x_mm,
            y_mm: np.y_mm,
        },
    ));
    end = end.max(free);
    Some(end)
}

/// The events of the motions between t0 and t1, in time order: touches and enter/leave
/// found from the motions, plus the designed events (outs, sends, places, card strikes).
fn events_between(pl: &Planner, t0: f64, t1: f64) -> Vec<Event> {
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

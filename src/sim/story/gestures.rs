//! The planner's gestures: a hand's reach, tap, press, feint, landing and return, a card
//! carried or flung, in time and in the field frame. The plots of a reading are built from
//! these; the planner also keeps the designed events and the moments worth showing.

use super::motion::{CardMotion, CardTrack, HandTrack, Pose};
use super::{dist, hand_index, round_t, Moment, DESCEND_S, EVENT_TIME_EPS_S, HOVER_Z_MM, PRESS_S};
use crate::rules::geometry::{FieldGeometry, Pt};
use crate::rules::model::*;
use crate::sim::body::Appearance;
use crate::sim::Preset;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha20Rng;
use std::collections::BTreeMap;

pub(super) struct Planner<'a> {
    pub(super) rng: &'a mut ChaCha20Rng,
    pub(super) preset: Preset,
    pub(super) geom: FieldGeometry,
    pub(super) hands: Vec<HandTrack>,
    pub(super) cards: Vec<CardTrack>,
    /// Index into `cards` by poem.
    pub(super) by_poem: BTreeMap<u8, usize>,
    /// Cards on the field and whose they are (taken cards leave this map).
    pub(super) owner: BTreeMap<u8, Player>,
    pub(super) designed: Vec<Event>,
    pub(super) moments: Vec<Moment>,
    pub(super) camera_mm: [f64; 3],
    pub(super) looks: [Appearance; 2],
    pub(super) speed: [f64; 2],
    /// When each hand (by `hand_index`) first tapped a card.
    pub(super) first_tap_s: Vec<Option<f64>>,
}

impl<'a> Planner<'a> {
    pub(super) fn u(&mut self, r: (f64, f64)) -> f64 {
        self.rng.gen_range(r.0..r.1)
    }

    pub(super) fn card(&self, poem: u8) -> &CardTrack {
        &self.cards[self.by_poem[&poem]]
    }

    pub(super) fn pose(&self, poem: u8, t: f64) -> Pose {
        self.card(poem).pose(t, &self.hands)
    }

    pub(super) fn push_seg(&mut self, poem: u8, t: f64, m: CardMotion) {
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
    pub(super) fn touch_point(&mut self, poem: u8, t: f64, player: Player) -> Pt {
        let p = self.pose(poem, t);
        let toward = if player == Player::A { -1.0 } else { 1.0 };
        let h = self.geom.size.card_h_mm;
        Pt::new(
            p.x_mm + self.rng.gen_range(-10.0..10.0),
            p.y_mm + toward * self.rng.gen_range(0.12..0.3) * h,
        )
    }

    /// The hand comes down on `target` at exactly `t_touch`, presses, and lifts away.
    pub(super) fn tap(&mut self, hi: usize, t_touch: f64, target: Pt, lift: Pt) -> f64 {
        let t_touch = self.tap_hold(hi, t_touch, target);
        self.hands[hi].key(t_touch + PRESS_S, target, 0.0);
        let t_up = t_touch + PRESS_S + 0.12;
        let first = &mut self.first_tap_s[hi];
        *first = Some(first.map_or(t_touch, |f: f64| f.min(t_touch)));
        self.hands[hi].key(t_up, lift, 50.0);
        t_up
    }

    /// A tap of hand `hi` of `player` on `target` at `t` that takes no card, lifted back
    /// towards the player and then home, noted as the moment `what` of reading `seq`;
    /// returns when the hand is ready again.
    pub(super) fn foul_tap(
        &mut self,
        hi: usize,
        player: Player,
        t: f64,
        target: Pt,
        seq: u32,
        what: &str,
    ) -> f64 {
        let lift = Pt::new(target.x_mm, target.y_mm + player.toward_own_y() * 60.0);
        let up = self.tap(hi, t, target, lift);
        self.moments.push(Moment {
            what: what.into(),
            seq,
            t_s: t,
        });
        self.return_ready(hi, up + 0.1)
    }

    /// When a tap of this hand on `target` would land if it started reacting at `t0`.
    pub(super) fn landing(&mut self, hi: usize, t0: f64, target: Pt) -> f64 {
        let from = self.hands[hi].last();
        let d = dist(from.tip, target);
        let player = self.hands[hi].player;
        t0.max(from.t_s) + self.travel_s(player, d) + DESCEND_S
    }

    pub(super) fn return_ready(&mut self, hi: usize, t0: f64) -> f64 {
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
    pub(super) fn feint(&mut self, hi: usize, t0: f64, target: Pt) -> f64 {
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
    pub(super) fn fling_out(
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
    pub(super) fn some_card(&mut self, terr: Player, t: f64, except: &[u8]) -> Option<u8> {
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
    pub(super) fn free_slot(&mut self, terr: Player, t: f64) -> Option<(u8, Pose)> {
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
    pub(super) fn carry(&mut self, hi: usize, t0: f64, poem: u8, to: Pose) -> (f64, f64) {
        let t_start = t0.max(self.hands[hi].free_at());
        let player = self.hands[hi].player;
        let grip = self.touch_point(poem, t_start, player);
        let t_touch = self.landing(hi, t_start, grip);
        let t_touch = self.tap_hold(hi, t_touch, grip);
        let from = self.pose(poem, t_touch);
        let (dx, dy) = (from.x_mm - grip.x_mm, from.y_mm - grip.y_mm);
        let target_tip = Pt::new(to.x_mm - dx, to.y_mm - dy);
        self.hands[hi].key(t_touch + PRESS_S, grip, 0.0);
        let lift_t = t_touch + PRESS_S + 0.06;
        let d = dist(grip, target_tip);
        let travel = self.travel_s(player, d) * 1.8 + 0.15;
        let t_set = lift_t + travel;
        {
            let h = &mut self.hands[hi];
            h.key(lift_t, grip, 12.0);
            h.key(t_set, target_tip, 0.0);
            h.key(t_set + 0.05, target_tip, 0.0);
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
            target_tip.y_mm + player.toward_own_y() * 40.0,
        );
        self.hands[hi].move_to(release, up, away, 40.0);
        let free = self.return_ready(hi, up);
        (release, free)
    }

    /// The hand travels over `target`, comes down on it at `t_touch` (later if it cannot
    /// get there sooner) and stays pressing; returns the moment it lands.
    pub(super) fn tap_hold(&mut self, hi: usize, t_touch: f64, target: Pt) -> f64 {
        let from = self.hands[hi].last();
        let t_touch = t_touch.max(from.t_s + DESCEND_S + 0.02);
        let player = self.hands[hi].player;
        let travel = self.travel_s(player, dist(from.tip, target));
        let t_start = (t_touch - DESCEND_S - travel).max(from.t_s);
        let h = &mut self.hands[hi];
        h.move_to(t_start, t_touch - DESCEND_S, target, HOVER_Z_MM);
        h.key(t_touch, target, 0.0);
        t_touch
    }

    pub(super) fn lead(&self, p: Player, leads: &[Hand; 2]) -> usize {
        hand_index(p, leads[p.index()])
    }

    pub(super) fn rng_player(&mut self) -> Player {
        if self.rng.gen_bool(0.5) {
            Player::A
        } else {
            Player::B
        }
    }
}

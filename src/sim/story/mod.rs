//! The story of a match: the layout, the reader's timeline, where every hand and card is
//! at every instant, and the physical events that follow from those motions.
//!
//! Pure (no OpenCV, no I/O). Motions are planned reading by reading; the rules engine is
//! consulted only to learn which cards are owed (so the sends really happen). Touches and
//! enter/leave events are then found from the motions themselves, at continuous times.
//!
//! Here: the story's types, the reader's timeline and `plan`, which deals the layout and
//! acts the readings one by one. Beside it: `motion` (where a hand or card is at an
//! instant), `setup` (looks and layout), `gestures` (the planner's reaches, taps and
//! carries), `plot` (one reading acted out) and `events` (truth events from the motions).

mod events;
mod gestures;
mod motion;
mod plot;
mod setup;

use events::events_between;
pub use events::{contacts, hand_inside, hand_outline};
use gestures::Planner;
pub use motion::{CardMotion, CardTrack, HandKey, HandTrack, Pose};
use plot::{act, choose_plot, pushable, slot_for_send, Plot};
use setup::look;
pub use setup::make_layout;

use crate::rules::geometry::{FieldGeometry, Pt};
use crate::rules::kimariji::ReadPool;
use crate::rules::model::*;
use crate::rules::poems::{poem, POEM_COUNT};
use crate::sim::body::Appearance;
use crate::sim::Preset;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha20Rng;
use std::collections::BTreeSet;

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
    /// Every reading a near-simultaneous take of a card on the field (`SimOptions`).
    pub close_takes: bool,
}

/// The index of a hand in `Story::hands`.
pub fn hand_index(p: Player, h: Hand) -> usize {
    p.index() * 2 + usize::from(h == Hand::Right)
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
    let mut dead: Vec<bool> = (0..k).map(|i| !opts.close_takes && i < k / 2).collect();
    dead.shuffle(pl.rng);
    let on_field: BTreeSet<u8> = pl.owner.keys().copied().collect();
    let mut off_field: Vec<u8> = (1..=POEM_COUNT).filter(|p| !on_field.contains(p)).collect();
    off_field.shuffle(pl.rng);

    let mut pool = ReadPool::new();
    let mut readings: Vec<Reading> = Vec::new();
    let mut t_kami = FIRST_KAMI_S;
    for (i, is_dead) in dead.into_iter().enumerate() {
        let seq = i as u32 + 1;
        let plot = if opts.close_takes {
            Plot::NearTie
        } else {
            choose_plot(&mut pl, is_dead)
        };
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

//! The hand model as the pipeline's hand source: `hands::Perceiver` behind `HandSource`.
//! The perceiver sees frames at a reduced rate and refines where a hand's state changes;
//! its events come out final and in time order.
//!
//! What reaches the rulings is filtered by what the model measurably does well
//! (docs/hands.md): touches are ruled on only when the contact network
//! (`models/contact.onnx`) judged them; the hand network's own contact map finds few
//! true touches and many false ones. Either way the card tracker also infers touches
//! from the cards they set moving, with the driver from these hands' fingertips, and a
//! touch the hands saw replaces the one inferred for the same player and card. Every
//! touch and drive of a player is given the lead hand the layout declares for them
//! (`players.lead_hand`); without one, once the player's usual hand is known (below), the
//! hand of their first touch (`known_hand`). An entry or a leave
//! counts only once it has held for `HOLD_S` (a hand flickering at the edge, or a
//! pair briefly taken for another, does not enter). Which hand drove a card is that same
//! hand, for every region of theirs inside the area (a second one there is nearly always
//! the reaching hand's forearm), and the model's left or right only before the usual
//! hand is known (the model's left/right is right for about 92% of hands, a player's
//! habit for far more; 13-2 makes the hand of a player's first touch their lead hand, so
//! one misreading decides every later take).

use super::{HandSource, HandsSnapshot, JudgeError};
use crate::hands::perceive::{PerceiverState, CONTACT_MIN_P};
use crate::hands::{HandFrame, HandObs, HandsRecord, Perceiver};
use crate::rules::geometry::Pt;
use crate::rules::model::Event;
use crate::rules::model::{any_f64, CardRef, EventKind, Hand, Player};
use crate::track::HandSeen;
use opencv::core::Mat;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

/// An entry or leave counts once the hand has stayed in (or out) this long, s.
pub const HOLD_S: f64 = 0.04;
/// A player's usual hand is known once their hands have been seen in the area in this
/// many runs...
pub const USUAL_MIN_RUNS: f64 = 8.0;
/// ...and one hand holds this share of them.
pub const USUAL_MIN_SHARE: f64 = 0.6;
/// The card tracker is given the hands of every run this recent, s: the network runs
/// every 12.5 ms over the field, and a hand the latest run lost (or saw already lifting
/// away) still names who drove a card that starts moving now (about the last two runs,
/// as the latest run was when the network ran on every other frame). Giving each player
/// only their latest sighting instead did no better on the recordings of docs/analyze.md.
pub const RECENT_HANDS_S: f64 = 0.02;
/// Perception reports a change at most this long after it happened, s: a change still
/// unanswered after `HOLD_S` plus this is final.
pub const REPORT_LAG_S: f64 = 0.1;
/// A touch is passed on once the hands have been seen this long after it (and
/// `SWEEP_SLACK_S`), with how fast the touching hand moved over the field over this span
/// before it and after it, the lesser of the two (`Event::sweep_mm_s`): a fingertip that
/// touches a card it does not move rests on it, so the hand holding it slows; a hand
/// sweeping past keeps its speed (`judge::windows::PASS_SWEEP_MM_S`). Until then the
/// touch counts for a take called early (`HandSource::held`).
pub const SWEEP_SPAN_S: f64 = 0.04;
/// A run this much nearer or farther than `SWEEP_SPAN_S` still serves, s (runs are 12.5
/// ms apart while a hand is over the field).
pub const SWEEP_SLACK_S: f64 = 0.02;

/// A touch is passed on once it is known how long the player went on pressing after it
/// (`Event::pressed_s`), counted up to this long, s: until the contact network says none
/// of their hands presses, or for this span. A fingertip taps a card it does not move;
/// a hand seen pressing one for longer is held over it (`judge::windows::HELD_OVER_S`).
/// The judge's own hold on the card tracker's touches (`MOTION_TOUCH_HOLD_S`) is longer.
pub const HELD_SPAN_S: f64 = 0.15;
/// A hand presses when the contact networks say so at even odds or more.
const PRESSING_P: f64 = 0.5;

/// Where each hand of a run lay: (player, the middle of its outline in the field, its
/// contact probability).
#[derive(Debug, Clone)]
struct Placed {
    t_s: f64,
    hands: Vec<(Player, Pt, f64)>,
}

/// How fast `player`'s hand moved over the field around `t_s`, mm/s: the hand of theirs
/// most likely pressing at the run nearest `t_s`, followed to the nearest of their hands
/// at the runs nearest `SWEEP_SPAN_S` before and after; the lesser of the two speeds.
/// `None` when a run is missing or the player's hands were not seen there.
fn sweep_mm_s(places: &VecDeque<Placed>, player: Player, t_s: f64) -> Option<f64> {
    let nearest = |want: f64, not: Option<f64>| {
        places
            .iter()
            .filter(|p| {
                (p.t_s - want).abs() <= SWEEP_SLACK_S
                    && not.is_none_or(|n| p.t_s != n)
                    && p.hands.iter().any(|h| h.0 == player)
            })
            .min_by(|a, b| (a.t_s - want).abs().total_cmp(&(b.t_s - want).abs()))
    };
    let at = nearest(t_s, None)?;
    let (_, c, _) = at
        .hands
        .iter()
        .filter(|h| h.0 == player)
        .max_by(|a, b| a.2.total_cmp(&b.2))?;
    let speed = |want: f64| -> Option<f64> {
        let q = nearest(want, Some(at.t_s))?;
        let d = q
            .hands
            .iter()
            .filter(|h| h.0 == player)
            .map(|h| (h.1.x_mm - c.x_mm).hypot(h.1.y_mm - c.y_mm))
            .fold(f64::INFINITY, f64::min);
        Some(d / (q.t_s - at.t_s).abs())
    };
    Some(speed(at.t_s - SWEEP_SPAN_S)?.min(speed(at.t_s + SWEEP_SPAN_S)?))
}

/// How long `player` went on pressing after a touch at `t_s`, s, from the runs seen by
/// `now_s`: from the run nearest the touch where a hand of theirs presses (at most
/// `SWEEP_SLACK_S` before it, `SWEEP_SPAN_S` after), through the runs after it while one
/// still does. `Some` once known: a run where none presses, or `HELD_SPAN_S` of runs
/// (the count stops there), or, when the runs stop short of that (the hands unseen),
/// once `now_s` is past the span by `REPORT_LAG_S`; `None` until then. `Some(0.0)` when
/// no run near the touch has them pressing.
fn pressed_s(places: &VecDeque<Placed>, player: Player, t_s: f64, now_s: f64) -> Option<f64> {
    let over = now_s >= t_s + HELD_SPAN_S + SWEEP_SLACK_S + REPORT_LAG_S;
    let pressing = |p: &Placed| p.hands.iter().any(|h| h.0 == player && h.2 >= PRESSING_P);
    let Some(first) = places
        .iter()
        .filter(|p| p.t_s >= t_s - SWEEP_SLACK_S && p.t_s <= t_s + SWEEP_SPAN_S && pressing(p))
        .min_by(|a, b| (a.t_s - t_s).abs().total_cmp(&(b.t_s - t_s).abs()))
    else {
        return over.then_some(0.0);
    };
    let mut last = first.t_s;
    for p in places.iter().filter(|p| p.t_s > first.t_s) {
        if !pressing(p) {
            return Some((last - t_s).max(0.0));
        }
        last = p.t_s;
        if last - t_s >= HELD_SPAN_S {
            return Some(HELD_SPAN_S);
        }
    }
    over.then(|| (last - t_s).clamp(0.0, HELD_SPAN_S))
}

/// Enter/leave changes per hand, passed on once they have held.
#[derive(Debug, Default)]
struct Hold {
    /// Whether each hand is inside, as passed on.
    inside: BTreeMap<(Player, Hand), bool>,
    /// A change not yet passed on, per hand.
    pending: BTreeMap<(Player, Hand), Event>,
}

impl Hold {
    fn push(&mut self, e: Event) {
        let (key, enter) = match e.what {
            EventKind::Enter { player, hand } => ((player, hand), true),
            EventKind::Leave { player, hand } => ((player, hand), false),
            _ => return,
        };
        let now = self.inside.get(&key).copied().unwrap_or(false);
        if enter == now {
            // Back to what was passed on: the pending change was a flicker.
            self.pending.remove(&key);
        } else {
            self.pending.entry(key).or_insert(e);
        }
    }

    /// Changes that have held by `now_s` (events up to `events_until_s` are known).
    fn release(&mut self, now_s: f64, events_until_s: f64) -> Vec<Event> {
        let due: Vec<(Player, Hand)> = self
            .pending
            .iter()
            .filter(|(_, e)| {
                e.t_s + HOLD_S <= events_until_s || e.t_s + HOLD_S + REPORT_LAG_S <= now_s
            })
            .map(|(k, _)| *k)
            .collect();
        let mut out = Vec::new();
        for k in due {
            if let Some(e) = self.pending.remove(&k) {
                self.inside
                    .insert(k, matches!(e.what, EventKind::Enter { .. }));
                out.push(e);
            }
        }
        out.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        out
    }
}

/// Hands seen by the model.
pub struct ModelHands {
    perceiver: Perceiver,
    name: String,
    /// The hands of the runs of the last `RECENT_HANDS_S` (time, hands), for the card
    /// tracker (who drove a card) until the next run.
    recent: std::collections::VecDeque<(f64, Vec<HandSeen>)>,
    hold: Hold,
    /// Frames in which one of each player's hands reached into the area, by the hand the
    /// model read it as: [player][left, right].
    votes: [[u64; 2]; 2],
    /// The hand given to each player's first direct touch passed on (13-2: the lead hand).
    first_touch: [Option<Hand>; 2],
    /// The latest event time seen from the perceiver.
    events_until_s: f64,
    /// The perceiver's touches are ruled on (it has the contact network).
    touches: bool,
    /// Where the hands lay at the runs of the last `SWEEP_KEEP_S`.
    places: VecDeque<Placed>,
    /// Touches held until the hands have been seen `SWEEP_SPAN_S` after them.
    awaiting: Vec<Event>,
    /// Where the hand model's own output is written, when asked (`record_to`): its
    /// events before this module's filters, the cards pressed where the card tracker
    /// placed them.
    record: Option<HandsRecord>,
}

/// Runs' hands are kept this long, s.
const SWEEP_KEEP_S: f64 = 0.4;

impl ModelHands {
    pub fn new(perceiver: Perceiver, name: String) -> ModelHands {
        let touches = perceiver.contact_model().is_some();
        ModelHands {
            touches,
            perceiver,
            name,
            recent: std::collections::VecDeque::new(),
            hold: Hold::default(),
            votes: [[0; 2]; 2],
            first_touch: [None; 2],
            events_until_s: f64::NEG_INFINITY,
            places: VecDeque::new(),
            awaiting: Vec::new(),
            record: None,
        }
    }

    /// Writes the hand model's own output to `dir/hands.jsonl` and `dir/events.jsonl`
    /// as the run goes (`HandsRecord`).
    pub fn record_to(&mut self, dir: &Path) -> std::io::Result<()> {
        self.record = Some(HandsRecord::create(dir)?);
        Ok(())
    }
}

fn other_hand(h: Hand) -> Hand {
    match h {
        Hand::Left => Hand::Right,
        Hand::Right => Hand::Left,
    }
}

fn hand_index(h: Hand) -> usize {
    match h {
        Hand::Left => 0,
        Hand::Right => 1,
    }
}

impl ModelHands {
    /// The player's usual hand in the area so far, once `USUAL_MIN_RUNS` runs have seen
    /// their hands there and one hand holds `USUAL_MIN_SHARE` of them.
    fn usual(&self, p: Player) -> Option<Hand> {
        let [l, r] = self.votes[p.index()];
        let n = (l + r) as f64;
        if n < USUAL_MIN_RUNS {
            None
        } else if l as f64 >= USUAL_MIN_SHARE * n {
            Some(Hand::Left)
        } else if r as f64 >= USUAL_MIN_SHARE * n {
            Some(Hand::Right)
        } else {
            None
        }
    }

    /// The hand every touch and drive of the player is given: the lead hand the layout
    /// declares for them, from the start; else, once their usual hand is known, the hand
    /// given to their first touch (`known_hand`).
    fn known_hand(&self, p: Player) -> Option<Hand> {
        self.perceiver
            .declared_lead(p)
            .or_else(|| known_hand(self.usual(p), self.first_touch[p.index()]))
    }

    /// The hands as the card tracker is told them (module doc).
    fn seen(&self, f: &HandFrame) -> Vec<HandSeen> {
        f.hands
            .iter()
            .map(|h| HandSeen {
                player: h.player,
                hand: driving_hand(h, active_hand(f, h.player), self.known_hand(h.player)),
                fingertips_px: h.fingertips_px.clone(),
                hidden: false,
                pressing_px: h.contact_px.filter(|_| h.contact_p >= CONTACT_MIN_P),
            })
            .collect()
    }
}

/// The hand a player's touches and drives are given, from their usual hand (`usual`) and
/// the hand given to their first touch (`first`): the network's own reading (None) until
/// the usual hand is known; then the first touch's hand, which the rules engine has taken
/// for the lead hand (13-2), or the usual hand before any touch. When the two differ, the
/// first touch was read as the hand the player does not use (the network's left and right
/// are wrong for 3-8% of hands, a player's habit far less often): giving their later
/// touches the usual hand would make every one a touch with the hand that is not the
/// lead hand, a take given away at each reading (21-3; tuning recording hard-9308, whose
/// player B touched with the left hand throughout and was read right at the first three).
/// A touch with the other hand is then seen only before the usual hand is known.
fn known_hand(usual: Option<Hand>, first: Option<Hand>) -> Option<Hand> {
    usual.map(|u| first.unwrap_or(u))
}

/// The hand a region of a player drives a card as, given which of their regions reaches
/// in (`active`) and their usual hand. Once the usual hand is known, every region of
/// theirs inside the area drives as that hand: a second region there is nearly always
/// the reaching hand's forearm or a piece of it, and the network's own left/right is a
/// coin flip on such pairs (SECOND_HAND_SHARE). A region outside while one is inside is
/// the other hand, resting.
fn driving_hand(h: &HandObs, active: Active, usual: Option<Hand>) -> Hand {
    match (active, usual) {
        (_, Some(u)) if h.inside => u,
        (Active::One(_) | Active::Both, Some(u)) => other_hand(u),
        _ => h.hand,
    }
}

/// Which of a player's hands in a frame is reaching into the area.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Active {
    /// None of them is inside.
    None,
    /// This one (an index into the frame's hands): inside, and any other of the player's
    /// hands reaches less than `SECOND_HAND_SHARE` as far (a hand resting at the edge, or
    /// the forearm behind the reaching hand taken for a hand).
    One(usize),
    /// Two reach in about as far.
    Both,
}

/// A second hand counts as reaching in when it reaches this share of the first's depth.
/// Two of one player's regions inside the area are nearly always one hand and something
/// else (its forearm, the other player's hand given the same player): on tuning
/// recording realistic-9202, where the second reached 60-80% as deep, the deeper region
/// was the labelled hand in 32 of 33 runs, and each region's own left/right was wrong
/// for a quarter of them; at 0.6 the takes after such a run went to the wrong hand (21-3).
pub const SECOND_HAND_SHARE: f64 = 0.8;

fn active_hand(f: &HandFrame, p: Player) -> Active {
    let mut inside: Vec<(usize, f64)> = f
        .hands
        .iter()
        .enumerate()
        .filter(|(_, h)| h.player == p && h.inside)
        .map(|(i, h)| (i, h.reach_mm))
        .collect();
    inside.sort_by(|a, b| b.1.total_cmp(&a.1));
    match inside.as_slice() {
        [] => Active::None,
        [(i, _)] => Active::One(*i),
        [(i, first), (_, second), ..] => {
            if *second >= SECOND_HAND_SHARE * first.max(0.0) && *second > 0.0 {
                Active::Both
            } else {
                Active::One(*i)
            }
        }
    }
}

impl ModelHands {
    /// What of the perceiver's events reaches the rulings (module doc).
    fn filter(&mut self, events: Vec<Event>, now_s: f64) -> Vec<Event> {
        let mut out = Vec::new();
        for e in events {
            self.events_until_s = self.events_until_s.max(e.t_s);
            match e.what {
                EventKind::Enter { .. } | EventKind::Leave { .. } => {
                    out.extend(self.hold.release(now_s, e.t_s));
                    self.hold.push(e);
                }
                EventKind::Touch {
                    player,
                    hand,
                    poem,
                    territory,
                    direct,
                } if self.touches => {
                    let hand = self.known_hand(player).unwrap_or(hand);
                    if direct {
                        self.first_touch[player.index()].get_or_insert(hand);
                    }
                    self.awaiting.push(Event {
                        what: EventKind::Touch {
                            player,
                            hand,
                            poem,
                            territory,
                            direct,
                        },
                        ..e
                    });
                }
                EventKind::Touch { .. } => {}
                _ => out.push(e),
            }
        }
        out.extend(self.hold.release(now_s, self.events_until_s));
        out.extend(self.swept(now_s));
        out.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        out
    }
}

impl ModelHands {
    /// Notes where each hand of the runs just made lay, for `sweep_mm_s`.
    fn place(&mut self, frames: &[HandFrame], now_s: f64) -> Result<(), JudgeError> {
        for f in frames {
            let shown: Vec<&HandObs> = f
                .hands
                .iter()
                .filter(|h| !h.body_outline().is_empty())
                .collect();
            let mids: Vec<[f64; 2]> = shown
                .iter()
                .map(|h| {
                    let n = h.body_outline().len() as f64;
                    h.body_outline()
                        .iter()
                        .fold([0.0, 0.0], |a, p| [a[0] + p[0] / n, a[1] + p[1] / n])
                })
                .collect();
            let at = if mids.is_empty() {
                Vec::new()
            } else {
                self.perceiver
                    .to_field(&mids)
                    .map_err(|e| JudgeError::Hands(e.to_string()))?
            };
            let hands = shown
                .iter()
                .zip(at)
                .map(|(h, pt)| (h.player, pt, h.contact_p))
                .collect();
            self.places.push_back(Placed { t_s: f.t_s, hands });
        }
        while self
            .places
            .front()
            .is_some_and(|p| p.t_s < now_s - SWEEP_KEEP_S)
        {
            self.places.pop_front();
        }
        Ok(())
    }

    /// The touches held whose `SWEEP_SPAN_S` after has been seen by `now_s` and whose
    /// pressing has ended or lasted `HELD_SPAN_S`, with how fast the hand moved around
    /// them and how long it pressed.
    fn swept(&mut self, now_s: f64) -> Vec<Event> {
        let mut out = Vec::new();
        for mut e in std::mem::take(&mut self.awaiting) {
            let EventKind::Touch { player, .. } = e.what else {
                out.push(e);
                continue;
            };
            let pressed = (e.t_s + SWEEP_SPAN_S + SWEEP_SLACK_S <= now_s)
                .then(|| pressed_s(&self.places, player, e.t_s, now_s))
                .flatten();
            match pressed {
                Some(p) => {
                    e.sweep_mm_s = sweep_mm_s(&self.places, player, e.t_s);
                    e.pressed_s = Some(p);
                    out.push(e);
                }
                None => self.awaiting.push(e),
            }
        }
        out
    }
}

/// `ModelHands` between two frames, as plain data (`HandSource::state`).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SavedModelHands {
    perceiver: PerceiverState,
    recent: Vec<(f64, Vec<HandSeen>)>,
    inside: Vec<((Player, Hand), bool)>,
    pending: Vec<((Player, Hand), Event)>,
    votes: [[u64; 2]; 2],
    first_touch: [Option<Hand>; 2],
    #[serde(with = "any_f64")]
    events_until_s: f64,
    /// `Placed`: when, and each hand's player, middle and contact probability.
    places: Vec<(f64, PlacedHands)>,
    awaiting: Vec<Event>,
}

type PlacedHands = Vec<(Player, Pt, f64)>;

impl ModelHands {
    fn saved(&self) -> SavedModelHands {
        SavedModelHands {
            perceiver: self.perceiver.state(),
            recent: self.recent.iter().cloned().collect(),
            inside: self.hold.inside.iter().map(|(k, v)| (*k, *v)).collect(),
            pending: self
                .hold
                .pending
                .iter()
                .map(|(k, e)| (*k, e.clone()))
                .collect(),
            votes: self.votes,
            first_touch: self.first_touch,
            events_until_s: self.events_until_s,
            places: self
                .places
                .iter()
                .map(|p| (p.t_s, p.hands.clone()))
                .collect(),
            awaiting: self.awaiting.clone(),
        }
    }
}

impl HandSource for ModelHands {
    fn state(&self) -> Option<HandsSnapshot> {
        let saved = self.saved();
        let frames = saved.perceiver.frames();
        Some(HandsSnapshot::new(frames, move || {
            serde_json::to_value(&saved)
                .map_err(|e| JudgeError::Hands(format!("saving the hands: {e}")))
        }))
    }

    fn restore(
        &mut self,
        state: &serde_json::Value,
        frames: &BTreeMap<usize, std::sync::Arc<Mat>>,
    ) -> Result<(), JudgeError> {
        let saved = SavedModelHands::deserialize(state)
            .map_err(|e| JudgeError::Checkpoint(format!("saved hand state: {e}")))?;
        self.perceiver
            .restore(saved.perceiver, frames)
            .map_err(|e| JudgeError::Checkpoint(e.to_string()))?;
        self.recent = saved.recent.into_iter().collect();
        self.hold = Hold {
            inside: saved.inside.into_iter().collect(),
            pending: saved.pending.into_iter().collect(),
        };
        self.votes = saved.votes;
        self.first_touch = saved.first_touch;
        self.events_until_s = saved.events_until_s;
        self.places = saved
            .places
            .into_iter()
            .map(|(t_s, hands)| Placed { t_s, hands })
            .collect();
        self.awaiting = saved.awaiting;
        Ok(())
    }

    fn hurry(&mut self, hurried: bool) {
        self.perceiver.hurry(hurried);
    }

    fn set_cards(&mut self, cards: Vec<(CardRef, [Pt; 4])>) {
        self.perceiver.set_cards(cards);
    }

    fn touches_from_fingertips(&self) -> bool {
        self.touches
    }

    fn push(
        &mut self,
        frame: usize,
        t_s: f64,
        bgr: &std::sync::Arc<Mat>,
    ) -> Result<(Vec<HandSeen>, Vec<Event>), JudgeError> {
        let p = self
            .perceiver
            .push(frame, t_s, bgr)
            .map_err(|e| JudgeError::Hands(e.to_string()))?;
        if let Some(r) = self.record.as_mut() {
            r.write(&p.frames, &p.events)?;
        }
        for f in &p.frames {
            for player in [Player::A, Player::B] {
                if let Active::One(i) = active_hand(f, player) {
                    self.votes[player.index()][hand_index(f.hands[i].hand)] += 1;
                }
            }
        }
        for f in &p.frames {
            let seen = self.seen(f);
            self.recent.push_back((f.t_s, seen));
        }
        if self.touches {
            self.place(&p.frames, t_s)?;
        }
        // A hand hidden over the area (two players' hands on one card seen as one
        // region) still contests who drove a card, where it was last seen.
        if let Some((_, latest)) = self.recent.back_mut().filter(|_| !p.frames.is_empty()) {
            latest.extend(self.perceiver.hidden_inside().into_iter().map(
                |(player, hand, fingertips_px)| HandSeen {
                    player,
                    hand,
                    fingertips_px,
                    hidden: true,
                    pressing_px: None,
                },
            ));
        }
        while self
            .recent
            .front()
            .is_some_and(|(t, _)| *t < t_s - RECENT_HANDS_S)
            && self.recent.len() > 1
        {
            self.recent.pop_front();
        }
        let hands = self
            .recent
            .iter()
            .flat_map(|(_, h)| h.iter().cloned())
            .collect();
        Ok((hands, self.filter(p.events, t_s)))
    }

    fn finish(&mut self) -> Vec<Event> {
        let last = self.perceiver.finish();
        if let Some(mut r) = self.record.take() {
            // The record is a measurement beside the rulings: a write that fails here
            // leaves it short, never the rulings.
            if let Err(e) = r.write(&[], &last) {
                eprintln!("the hand model's record: {e}");
            }
        }
        self.filter(last, f64::INFINITY)
    }

    fn held(&self) -> Vec<Event> {
        let mut v = self.awaiting.clone();
        v.extend(self.perceiver.untimed_touches());
        v
    }

    fn describe(&self) -> String {
        match self.perceiver.contact_model() {
            Some(c) => format!("hand model {}, contact model {}", self.name, c.display()),
            None => format!("hand model {}", self.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hand(player: Player, hand: Hand, inside: bool, reach_mm: f64) -> HandObs {
        HandObs {
            player,
            hand,
            lead: None,
            fingertips_px: Vec::new(),
            outline_px: Vec::new(),
            reach_outline_px: Vec::new(),
            body_outline_px: Vec::new(),
            inside,
            reach_mm,
            contact_p: 0.0,
            contact_px: None,
            contact: None,
            conf: 0.9,
            hand_votes: [0, 0],
        }
    }

    fn frame(hands: Vec<HandObs>) -> HandFrame {
        HandFrame {
            frame: 0,
            t_s: 0.0,
            hands,
        }
    }

    #[test]
    fn the_deepest_hand_reaches_unless_another_reaches_about_as_far() {
        // A reaching 250 mm in, its forearm seen as a second hand 90 mm in.
        let f = frame(vec![
            hand(Player::A, Hand::Left, true, 90.0),
            hand(Player::A, Hand::Right, true, 250.0),
            hand(Player::B, Hand::Right, false, -20.0),
        ]);
        assert_eq!(active_hand(&f, Player::A), Active::One(1));
        assert_eq!(active_hand(&f, Player::B), Active::None);
        // Both of A's hands well in.
        let f = frame(vec![
            hand(Player::A, Hand::Left, true, 230.0),
            hand(Player::A, Hand::Right, true, 250.0),
        ]);
        assert_eq!(active_hand(&f, Player::A), Active::Both);
        // A's hand 250 mm in, its forearm taken for a second hand 175 mm in.
        let f = frame(vec![
            hand(Player::A, Hand::Left, true, 250.0),
            hand(Player::A, Hand::Right, true, 175.0),
        ]);
        assert_eq!(active_hand(&f, Player::A), Active::One(0));
        // One hand in, the other just outside.
        let f = frame(vec![
            hand(Player::A, Hand::Left, true, 30.0),
            hand(Player::A, Hand::Right, false, -5.0),
        ]);
        assert_eq!(active_hand(&f, Player::A), Active::One(0));
    }

    #[test]
    fn once_the_usual_hand_is_known_every_touch_is_the_first_touchs_hand() {
        // Before the usual hand is known, the network's reading stands.
        assert_eq!(known_hand(None, Some(Hand::Right)), None);
        // Known before any touch: the usual hand.
        assert_eq!(known_hand(Some(Hand::Left), None), Some(Hand::Left));
        // The first touch read right, the player seen using the left since: the lead hand
        // the engine took stands, and no later touch is one with the other hand.
        assert_eq!(
            known_hand(Some(Hand::Left), Some(Hand::Right)),
            Some(Hand::Right)
        );
        assert_eq!(
            known_hand(Some(Hand::Right), Some(Hand::Right)),
            Some(Hand::Right)
        );
    }

    #[test]
    fn regions_inside_drive_as_the_usual_hand_once_it_is_known() {
        // A's right hand reaching 250 mm in, its forearm read as A's left hand 220 mm in:
        // both drive as the right hand, the one A has been seen reaching with.
        let f = frame(vec![
            hand(Player::A, Hand::Left, true, 220.0),
            hand(Player::A, Hand::Right, true, 250.0),
            hand(Player::B, Hand::Left, false, -40.0),
        ]);
        let a = active_hand(&f, Player::A);
        assert_eq!(driving_hand(&f.hands[0], a, Some(Hand::Right)), Hand::Right);
        assert_eq!(driving_hand(&f.hands[1], a, Some(Hand::Right)), Hand::Right);
        // Before the usual hand is known, the network's reading stands.
        assert_eq!(driving_hand(&f.hands[0], a, None), Hand::Left);
        // A region outside beside one inside is the other, resting hand.
        let f = frame(vec![
            hand(Player::B, Hand::Right, true, 120.0),
            hand(Player::B, Hand::Right, false, -30.0),
        ]);
        let b = active_hand(&f, Player::B);
        assert_eq!(driving_hand(&f.hands[1], b, Some(Hand::Right)), Hand::Left);
    }

    #[test]
    fn a_hand_sweeping_past_keeps_its_speed_and_one_that_stops_on_a_card_does_not() {
        // Runs every 12.5 ms; A's hand moving along x at `v(t)` mm/s, B's hand still.
        let runs = |v: &dyn Fn(f64) -> f64| -> VecDeque<Placed> {
            let mut x = 0.0;
            (0..24)
                .map(|i| {
                    let t = i as f64 * 0.0125;
                    x += v(t) * 0.0125;
                    Placed {
                        t_s: t,
                        hands: vec![
                            (Player::A, Pt { x_mm: x, y_mm: 0.0 }, 0.9),
                            (
                                Player::B,
                                Pt {
                                    x_mm: 0.0,
                                    y_mm: 300.0,
                                },
                                0.1,
                            ),
                        ],
                    }
                })
                .collect()
        };
        let sweeping = runs(&|_| 900.0);
        let v = sweep_mm_s(&sweeping, Player::A, 0.15).unwrap();
        assert!((v - 900.0).abs() < 1.0, "{v}");
        assert_eq!(sweep_mm_s(&sweeping, Player::B, 0.15), Some(0.0));
        // Coming in at 0.9 m/s and stopping on the card at 0.15 s: the lesser speed,
        // after the touch, is nil.
        let stopping = runs(&|t| if t <= 0.15 { 900.0 } else { 0.0 });
        assert_eq!(sweep_mm_s(&stopping, Player::A, 0.15), Some(0.0));
        // No run of A's 40 ms after (the recording ends): not known.
        assert_eq!(sweep_mm_s(&sweeping, Player::A, 0.28), None);
    }
    #[test]
    fn a_tap_presses_for_a_moment_and_a_hand_held_over_a_card_for_the_whole_span() {
        // Runs every 12.5 ms up to `until`; A seen pressing while `on(t)`.
        let runs = |on: &dyn Fn(f64) -> bool, until: f64| -> VecDeque<Placed> {
            (0..)
                .map(|i| i as f64 * 0.0125)
                .take_while(|t| *t <= until + 1e-9)
                .map(|t| Placed {
                    t_s: t,
                    hands: vec![(
                        Player::A,
                        Pt::new(0.0, -200.0),
                        if on(t) { 0.8 } else { 0.1 },
                    )],
                })
                .collect()
        };
        // A tap at 0.1 s pressed for 50 ms: known at the first run that no longer presses.
        let tap = |t: f64| (0.099..=0.151).contains(&t);
        assert_eq!(pressed_s(&runs(&tap, 0.15), Player::A, 0.1, 0.15), None);
        let p = pressed_s(&runs(&tap, 0.1625), Player::A, 0.1, 0.1625).unwrap();
        assert!((p - 0.05).abs() < 1e-9, "{p}");
        // Held over a card from 0.1 s on: counted up to the span, then known.
        let held = |t: f64| t >= 0.099;
        assert_eq!(pressed_s(&runs(&held, 0.2), Player::A, 0.1, 0.2), None);
        let until = 0.1 + HELD_SPAN_S;
        assert_eq!(
            pressed_s(&runs(&held, until), Player::A, 0.1, until),
            Some(HELD_SPAN_S)
        );
        // The hands unseen after the touch: what was seen, once the span and the report
        // lag have passed.
        let late = 0.1 + HELD_SPAN_S + SWEEP_SLACK_S + REPORT_LAG_S;
        assert_eq!(
            pressed_s(&runs(&held, 0.125), Player::A, 0.1, late - 0.01),
            None
        );
        let p = pressed_s(&runs(&held, 0.125), Player::A, 0.1, late).unwrap();
        assert!((p - 0.025).abs() < 1e-9, "{p}");
        // B never pressed: nothing to count.
        assert_eq!(
            pressed_s(&runs(&held, 0.3), Player::B, 0.1, late),
            Some(0.0)
        );
    }
}

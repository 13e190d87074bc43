//! Readings' windows over a stream of events: events arrive as perception makes them
//! final; a reading is ruled (`rules::Referee::judge`) as soon as its window
//! `[kami_start_s, next kami_start_s)` has closed and a margin has passed, so that late
//! events (a card that settles, a hand decision held back) still land in it. A reading
//! whose poem the sound track could not name surely takes the card taken in its window.

use crate::rules::engine::{Location, TIE_SIGMAS};
use crate::rules::model::{
    touched_card_words, By, Event, EventKind, Foul, FoulKind, Hand, MatchResult, Player, Reading,
    Review, ReviewWhat, Ruling, TakeHow,
};
use crate::rules::{Layout, Referee};
use std::collections::BTreeMap;

/// Perception may report an event this long after it happened (a card settles over 24
/// frames, a re-identification follows): a window is ruled only this long after it closed.
pub const CLOSE_MARGIN_S: f64 = 0.5;
/// The reason given on every ruling that depends on hands when no hand model ran.
pub const NO_HAND_MODEL: &str = "no hand model";

/// One ruled reading and the events of its window (the first also holds those before
/// the first reading).
#[derive(Debug, Clone)]
pub struct Ruled {
    pub ruling: Ruling,
    pub events: Vec<Event>,
}

/// Rules readings in order as their windows close.
pub struct Windows {
    referee: Referee,
    readings: Vec<Reading>,
    next: usize,
    pending: Vec<Event>,
    hands_seen: bool,
    stopped: bool,
    /// The end of the last window ruled: an event reported later than that, with an
    /// earlier time, is counted in the next window, at its start.
    closed_until_s: f64,
    /// Readings whose poem is not known surely, by `seq`, and why.
    unsure: BTreeMap<u32, String>,
    /// Cards named only by their best match and the reading, by poem, and why.
    named_by_reading: BTreeMap<u8, String>,
    /// The reading whose take was already called early (`early_take`), by index.
    called: Option<usize>,
    /// Touches that move no card are seen from fingertips alone (a contact network), so
    /// a foul resting on one goes to review (`mark_fingertip_fouls`).
    fingertip_touches: bool,
    /// Each player's lead hand was declared in the layout (`players.lead_hand`), not
    /// taken from their first touch.
    declared_lead: [bool; 2],
}

impl Windows {
    /// `hands_seen`: a hand model ran, so touches, entries and drivers were looked for.
    pub fn new(layout: &Layout, readings: Vec<Reading>, hands_seen: bool) -> Windows {
        Windows {
            referee: Referee::new(layout),
            readings,
            next: 0,
            pending: Vec::new(),
            hands_seen,
            stopped: false,
            closed_until_s: f64::NEG_INFINITY,
            unsure: BTreeMap::new(),
            named_by_reading: BTreeMap::new(),
            called: None,
            fingertip_touches: false,
            declared_lead: Player::BOTH.map(|p| layout.lead_hand(p).is_some()),
        }
    }

    /// The hands' touches of cards that do not move are seen from fingertips alone (a
    /// contact network judged them): a foul resting on one goes to review.
    pub fn fingertip_touches(&mut self, yes: bool) {
        self.fingertip_touches = yes;
    }

    /// Readings whose poem is not known surely (by `seq`, with the reason): their
    /// rulings are marked for review unless something weightier already is.
    pub fn unsure_poems(&mut self, unsure: BTreeMap<u32, String>) {
        self.unsure = unsure;
    }

    /// Cards named only by their best match once their poem was to be read (by poem,
    /// with the reason): the rulings of those readings are marked for review unless
    /// something weightier already is.
    pub fn named_by_reading(&mut self, named: BTreeMap<u8, String>) {
        self.named_by_reading = named;
    }

    /// Readings ruled so far.
    pub fn ruled(&self) -> usize {
        self.next
    }

    pub fn readings(&self) -> &[Reading] {
        &self.readings
    }

    /// A reading that arrived while the match runs (live), after the others.
    pub fn push_reading(&mut self, r: Reading) {
        self.readings.push(r);
    }

    /// Events not yet ruled on.
    pub fn pending(&self) -> &[Event] {
        &self.pending
    }

    /// Adds final events (any order).
    pub fn add(&mut self, events: impl IntoIterator<Item = Event>) {
        for mut e in events {
            if e.t_s < self.closed_until_s {
                e.t_s = self.closed_until_s;
            }
            let at = self.pending.partition_point(|p| p.t_s <= e.t_s);
            self.pending.insert(at, e);
        }
    }

    /// Rebuilds the judge of a resumed run: the events of the first `ruled` readings'
    /// windows, ruled again (the same rulings, not given out again).
    pub fn replay(&mut self, events: Vec<Event>, ruled: usize) {
        self.add(events);
        while !self.stopped && self.next < ruled.min(self.readings.len()) {
            let _ = self.rule_next();
        }
    }

    /// When reading `k`'s window closes (the next reading's start), if it does.
    fn window_end(&self, k: usize) -> f64 {
        self.readings
            .get(k + 1)
            .map_or(f64::INFINITY, |n| n.kami_start_s)
    }

    /// Rules every reading whose window closed more than `CLOSE_MARGIN_S` before `now_s`.
    pub fn advance(&mut self, now_s: f64) -> Vec<Ruled> {
        let mut out = Vec::new();
        while !self.stopped && self.next < self.readings.len() {
            let end = self.window_end(self.next);
            if end + CLOSE_MARGIN_S > now_s {
                break;
            }
            out.push(self.rule_next());
        }
        out
    }

    /// The take in the reading open at `now_s`, called as soon as the events so far show
    /// one (live): the reading is judged on a copy of the match, on the final events
    /// before `now_s` and `held` (events perception still holds back to match them, such
    /// as touches inferred from card motion). Given once a reading; `None` until then,
    /// and for a reading whose poem is not known surely. The ruling when the window
    /// closes (`advance`) is the one that counts: a foul or a closer touch may still come.
    pub fn early_take<'a>(
        &mut self,
        now_s: f64,
        held: impl IntoIterator<Item = &'a Event>,
    ) -> Option<Ruling> {
        let k = self.next;
        let r = self.readings.get(k)?;
        if self.stopped
            || self.called == Some(k)
            || r.kami_start_s > now_s
            || self.window_end(k) <= now_s
            || self.unsure.contains_key(&r.seq)
        {
            return None;
        }
        let mut referee = self.referee.clone();
        let mut window: Vec<Event> = Vec::new();
        let mut see = |e: &Event| match e.t_s {
            t if t >= now_s => {}
            t if k == 0 && t < r.kami_start_s => referee.observe(e),
            _ => window.push(e.clone()),
        };
        self.pending.iter().for_each(&mut see);
        held.into_iter().for_each(see);
        window.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        let mut ruling = referee.judge(r, &window);
        ruling.take.as_ref()?;
        self.called = Some(k);
        if !self.hands_seen {
            mark_no_hands(&mut ruling);
        }
        Some(ruling)
    }

    /// The video has ended: every reading left is ruled.
    pub fn finish(&mut self) -> Vec<Ruled> {
        let mut out = Vec::new();
        while !self.stopped && self.next < self.readings.len() {
            out.push(self.rule_next());
        }
        out
    }

    pub fn result(&self) -> MatchResult {
        self.referee.result()
    }

    fn rule_next(&mut self) -> Ruled {
        let k = self.next;
        let r = self.readings[k].clone();
        let end = self.window_end(k);
        let mut events = Vec::new();
        if k == 0 {
            // Events before the first reading matter only through the state they leave.
            let n = self.pending.partition_point(|e| e.t_s < r.kami_start_s);
            for e in self.pending.drain(..n) {
                self.referee.observe(&e);
                events.push(e);
            }
        }
        let n = self.pending.partition_point(|e| e.t_s < end);
        let all: Vec<Event> = self.pending.drain(..n).collect();
        // A hand passing over a card, or held over it, is not ruled on
        // (`PASS_SWEEP_MM_S`, `HELD_OVER_S`).
        let unruled: Vec<Option<Unruled>> = all.iter().map(|e| unruled(&all, e)).collect();
        let pick = |want: &dyn Fn(Option<Unruled>) -> bool| -> Vec<Event> {
            all.iter()
                .zip(&unruled)
                .filter(|(_, u)| want(**u))
                .map(|(e, _)| e.clone())
                .collect()
        };
        let window = pick(&|u| u.is_none());
        let passes = pick(&|u| u == Some(Unruled::Passing));
        let held = pick(&|u| u == Some(Unruled::HeldOver));
        let passed = passes_words(&passes, &held);
        // The ruling had the hands held over a card pressed it, to tell when that choice
        // decides a foul.
        let pressing_too = (!held.is_empty()).then(|| pick(&|u| u != Some(Unruled::Passing)));
        let mut r = r;
        let mut unsure = self.unsure.get(&r.seq).cloned();
        let mut from_card = false;
        if unsure.is_some() {
            if let Some(p) = taken_card(&self.referee, r.poem, &window) {
                // The sound could not tell the poem: the card taken tells it. When that is
                // not even the sound's closest match, a foul on a dead card looks the same,
                // so the ruling still goes to review.
                unsure = (p != r.poem).then(|| {
                    format!(
                        "the poem was not heard surely (closest match: poem {}) and is taken to be the card taken, poem {p}: check which poem was read",
                        r.poem
                    )
                });
                r.poem = p;
                self.readings[k].poem = p;
                from_card = true;
            }
        }
        // Where the cards lie as the reading is ruled (a take removes the read card).
        let beside = cards_beside(&self.referee, r.poem);
        let fouls_if_pressing = pressing_too.map(|w| self.referee.clone().judge(&r, &w).fouls);
        // The ruling had the hands passing over a card touched it too, likewise.
        let fouls_if_touching =
            (!passes.is_empty()).then(|| self.referee.clone().judge(&r, &all).fouls);
        // The engine before this reading, to rule it again with touches read otherwise.
        let before = (self.hands_seen && self.fingertip_touches).then(|| self.referee.clone());
        // A poem the sound could only guess, with no card taken to tell it: a wrong guess
        // must take no card out of the count (`Referee::judge_guess`).
        let guessed = unsure.is_some() && !from_card;
        let mut ruling = if guessed {
            self.referee.judge_guess(&r, &window)
        } else {
            self.referee.judge(&r, &window)
        };
        if self.hands_seen {
            mark_undriven_take(&mut ruling, &window);
            mark_other_hand(&mut ruling, self.declared_lead);
            if let Some(mut before) = before {
                let lead = Player::BOTH.map(|p| self.referee.lead_hand(p));
                mark_other_hand_fouls(&mut ruling, &window, lead, self.declared_lead, |w| {
                    before.judge(&r, w).fouls
                });
                // A rival seen beside the read card puts the take in doubt even when the
                // rival's hand was passing.
                mark_rival_beside(&mut ruling, &all, &beside);
                mark_pressed_again(&mut ruling, &window);
                mark_passing_take(&mut ruling, &window);
                mark_fingertip_fouls(&mut ruling, &window);
                mark_unruled_foul(
                    &mut ruling,
                    &held,
                    fouls_if_pressing.as_deref(),
                    &held_over_words,
                );
                mark_unruled_foul(
                    &mut ruling,
                    &passes,
                    fouls_if_touching.as_deref(),
                    &passed_over_words,
                );
            }
        }
        self.closed_until_s = end;
        events.extend(all);
        if let Some(p) = passed {
            ruling.why = format!("{} {p}", ruling.why);
        }
        if !self.hands_seen {
            mark_no_hands(&mut ruling);
        }
        if from_card {
            ruling.why = format!(
                "{} The poem was not heard surely in the sound track: it is the card taken.",
                ruling.why
            );
        }
        if let Some(reason) = unsure {
            // What the ruling rests on first: whatever else it is sent for follows.
            let reason = match ruling.needs_review.take() {
                Some(other) => format!("{reason}; and {}", other.reason),
                None => reason,
            };
            ruling.needs_review = Some(Review {
                reason,
                what: ReviewWhat::UnknownCard,
            });
        } else if let Some(reason) = self.named_by_reading.get(&r.poem).cloned() {
            if ruling.needs_review.is_none() {
                ruling.needs_review = Some(Review {
                    reason,
                    what: ReviewWhat::UnknownCard,
                });
            }
        }
        self.next += 1;
        // 1: once a player has no cards, later readings are not ruled.
        if self.referee.winner().is_some() {
            self.stopped = true;
        }
        Ruled { ruling, events }
    }
}

/// The card taken in a reading's window, for a reading whose poem the sound could not
/// tell surely (issue: readings from the sound track): the first card a hand touched and
/// the first card a player drove out, before any card was sent. When the two differ (a
/// stray touch, or a neighbour pushed out), only the sound's closest match can choose
/// between them; a card that is not on the field unread (a card the layout could not
/// name, one already read) names nothing. `None` sends the reading to review.
fn taken_card(referee: &Referee, heard: u8, window: &[Event]) -> Option<u8> {
    let mut first_touch = None;
    let mut first_out = None;
    for e in window {
        match &e.what {
            EventKind::Send { .. } => break,
            EventKind::Touch {
                poem: Some(poem),
                direct: true,
                ..
            } if first_touch.is_none() => first_touch = Some(*poem),
            EventKind::Out { poem, by, .. } if by.player().is_some() && first_out.is_none() => {
                first_out = Some(*poem)
            }
            _ => {}
        }
    }
    let taken = match (first_touch, first_out) {
        (Some(t), Some(o)) if t != o => (t == heard || o == heard).then_some(heard),
        (t, o) => t.or(o),
    }?;
    referee.is_unread_on_field(taken).then_some(taken)
}

/// A read card that started to move with both players' hands equally near it, or seen as
/// one region (its `out` is `by: both`), is a race the camera could not order (contract
/// section 5):
/// - a take decided by that out alone (18-2: the owner's, simultaneous) says so rather
///   than guess;
/// - a direct take resting on one player's touch, with no touch of the card seen from
///   the other, rests on a touch the other hand may have beaten unseen: near-ties are
///   where the hand model misses one of two hands on one card (docs/hands.md).
///
/// A ruling the engine already sends to review keeps its reason.
fn mark_undriven_take(r: &mut Ruling, window: &[Event]) {
    if r.needs_review.is_some() {
        return;
    }
    let Some(take) = r.take.as_ref() else {
        return;
    };
    // The latest the card can have gone out.
    let Some(out_by_s) = window.iter().find_map(|e| match e.what {
        EventKind::Out {
            poem, by: By::Both, ..
        } if poem == r.poem => Some(e.t_s + e.t_err_s),
        _ => None,
    }) else {
        return;
    };
    // A touch of the card seen only once it was out of the area (a hand following it)
    // says nothing of the race that set it moving.
    let touched_by = |p: Player| touches_of_card(window, p, r.poem).any(|e| e.t_s <= out_by_s);
    let reason = match take.how {
        TakeHow::Simultaneous => format!(
            "card {} started to move with both players' hands equally near it (or seen as one, or none seen near it): the camera cannot tell whose touch came first, and 18-2 gives it to its owner",
            r.poem
        ),
        TakeHow::Direct if !touched_by(take.player.other()) => format!(
            "card {} started to move with both players' hands equally near it (or seen as one), and only {:?}'s touch of it was seen before it left the area (at {:.3} s): {:?}'s hand was as near, and its touch may have come first unseen",
            r.poem,
            take.player,
            take.t_s,
            take.player.other()
        ),
        _ => return,
    };
    r.needs_review = Some(Review {
        reason,
        what: ReviewWhat::CloseCall,
    });
}

/// The named cards `player` was seen touching with a hand in `window`, and the touches.
fn direct_touches(window: &[Event], player: Player) -> impl Iterator<Item = (u8, &Event)> + '_ {
    window.iter().filter_map(move |e| match e.what {
        EventKind::Touch {
            player: p,
            poem: Some(poem),
            direct: true,
            ..
        } if p == player => Some((poem, e)),
        _ => None,
    })
}

/// `player`'s direct touches of card `poem` in `window`.
fn touches_of_card(
    window: &[Event],
    player: Player,
    poem: u8,
) -> impl Iterator<Item = &Event> + '_ {
    direct_touches(window, player).filter_map(move |(q, e)| (q == poem).then_some(e))
}

/// A rival's touch of a card beside the read card this long before the take, or
/// `RIVAL_BESIDE_AFTER_S` after it, may have been a touch of the read card (s).
pub const RIVAL_BESIDE_BEFORE_S: f64 = 0.2;
pub const RIVAL_BESIDE_AFTER_S: f64 = 0.05;
/// A card whose centre lies within this many card lengths of the read card's lies
/// beside it (its row-mates on either side, and the cards of the row behind or in front).
pub const BESIDE_CARD_LENGTHS: f64 = 1.5;

/// The cards lying beside `poem` on the field (`BESIDE_CARD_LENGTHS`), none when `poem`
/// is not on the field where the referee knows its place.
fn cards_beside(referee: &Referee, poem: u8) -> Vec<u8> {
    let at = |p: u8| match referee.location(p) {
        Some(Location::Field {
            pos: Some((_, x, y)),
            ..
        }) => Some((x, y)),
        _ => None,
    };
    let Some((x0, y0)) = at(poem) else {
        return Vec::new();
    };
    let reach = BESIDE_CARD_LENGTHS * referee.geometry().size.card_h_mm;
    (1..=100u8)
        .filter(|&p| p != poem)
        .filter(|&p| at(p).is_some_and(|(x, y)| (x - x0).hypot(y - y0) <= reach))
        .collect()
}

/// A direct take of a card whose rival's touch of it was not seen, while the rival was
/// seen pressing a card beside it just before: that press is put on a card from the
/// fingertip, and the fingertip may lie over the next card (docs/hands.md). The rival's
/// touch may have been of the read card, first: the ruling goes to review as a close call.
fn mark_rival_beside(r: &mut Ruling, window: &[Event], beside: &[u8]) {
    if r.needs_review.is_some() {
        return;
    }
    let Some(take) = r.take.as_ref().filter(|t| t.how == TakeHow::Direct) else {
        return;
    };
    let rival = take.player.other();
    if touches_of_card(window, rival, r.poem).next().is_some() {
        return;
    }
    let near = direct_touches(window, rival).find(|&(poem, e)| {
        beside.contains(&poem)
            && e.t_s >= take.t_s - RIVAL_BESIDE_BEFORE_S
            && e.t_s <= take.t_s + RIVAL_BESIDE_AFTER_S
    });
    if let Some((poem, Event { t_s: t, .. })) = near {
        r.needs_review = Some(Review {
            reason: format!(
                "{rival:?}'s fingertip was seen on card {poem}, beside the read card {}, at {t:.3} s, and no touch of {} by {rival:?} was seen: {rival:?}'s touch may have been of the read card, before {:?}'s at {:.3} s",
                r.poem, r.poem, take.player, take.t_s
            ),
            what: ReviewWhat::CloseCall,
        });
    }
}

/// A direct take's taker and the touch it rests on (the taker's direct touch of the read
/// card at the take's time); `None` for any other take, or none.
fn taking_touch<'a>(r: &Ruling, window: &'a [Event]) -> Option<(Player, &'a Event)> {
    let take = r.take.as_ref().filter(|t| t.how == TakeHow::Direct)?;
    let touch =
        touches_of_card(window, take.player, r.poem).find(|e| (e.t_s - take.t_s).abs() < 1e-6)?;
    Some((take.player, touch))
}

/// A taker's finger lifted and pressed the card again within this long of the touch
/// that took it (s).
pub const PRESSED_AGAIN_S: f64 = 0.2;

/// A direct take resting on a touch the taker's finger lifted from and pressed again,
/// with the rival's first touch of the card between the two, or within the timing error
/// of the second (`TIE_SIGMAS`). From above, a finger held just over a card looks like
/// one pressing it (docs/hands.md): if the first press was such a finger, the take rests
/// on the second, and the rival touched first or as near as the camera can tell. The
/// ruling goes to review as a close call; one already sent keeps its reason.
fn mark_pressed_again(r: &mut Ruling, window: &[Event]) {
    if r.needs_review.is_some() {
        return;
    }
    let Some((taker, first)) = taking_touch(r, window) else {
        return;
    };
    let poem = r.poem;
    let lifted_s = first.t_s + first.pressed_s.unwrap_or(0.0);
    let Some(again) = touches_of_card(window, taker, poem)
        .find(|e| e.t_s > lifted_s && e.t_s - first.t_s <= PRESSED_AGAIN_S)
    else {
        return;
    };
    let Some(rival) = touches_of_card(window, taker.other(), poem).find(|e| {
        e.t_s > first.t_s && e.t_s <= again.t_s + TIE_SIGMAS * e.t_err_s.hypot(again.t_err_s)
    }) else {
        return;
    };
    r.needs_review = Some(Review {
        reason: format!(
            "{taker:?}'s touch of card {poem} at {t1:.3} s lasted {ms:.0} ms, and {taker:?} pressed it again at {t2:.3} s; {other:?}'s touch at {tr:.3} s came between, or within the timing error of the second: from above, a finger held just over a card looks like one pressing it, and if the first was one, {other:?} touched first or at the same moment",
            t1 = first.t_s,
            ms = first.pressed_s.unwrap_or(0.0) * 1e3,
            t2 = again.t_s,
            other = taker.other(),
            tr = rival.t_s,
        ),
        what: ReviewWhat::CloseCall,
    });
}

/// A direct take resting on a touch made by a hand sweeping at passing speed
/// (`PASS_SWEEP_MM_S`), of a card then driven out by the rival alone: the touch counted
/// because the card moved, but what moved it was the rival's hand. From above, a hand
/// sweeping just over a card looks like one brushing it; if the taker's hand passed over
/// it, the take was the rival's. The ruling goes to review as a close call; one already
/// sent keeps its reason.
fn mark_passing_take(r: &mut Ruling, window: &[Event]) {
    if r.needs_review.is_some() {
        return;
    }
    let Some((taker, touch)) = taking_touch(r, window) else {
        return;
    };
    let Some(speed) = touch.sweep_mm_s.filter(|v| *v >= PASS_SWEEP_MM_S) else {
        return;
    };
    let (poem, t_take) = (r.poem, touch.t_s);
    let rival = taker.other();
    let Some(out_s) = window.iter().find_map(|e| match e.what {
        EventKind::Out { poem: q, by, .. } if q == poem && by.player() == Some(rival) => {
            Some(e.t_s)
        }
        _ => None,
    }) else {
        return;
    };
    r.needs_review = Some(Review {
        reason: format!(
            "the take rests on {taker:?}'s touch of card {poem} at {t_take:.3} s, made by a hand sweeping at {:.2} m/s, and the card went out at {out_s:.3} s driven by {rival:?}'s hand: from above, a hand sweeping just over a card looks like one brushing it, and if {taker:?}'s passed over it, the card was {rival:?}'s",
            speed / 1000.0
        ),
        what: ReviewWhat::CloseCall,
    });
}

/// A card counts as moved by a touch when, from the touch to this much later, it goes
/// out, is sent, settles elsewhere or strikes another (s).
pub const FOUL_CARD_MOVED_S: f64 = 1.0;

/// A take given to the opponent because the first touch or push was made with the hand
/// that is not the lead hand (21-3) turns on the camera's reading of left and right,
/// twice: for that touch, and for the player's first touch, which made the lead hand
/// (13-2). A hand seen from above is told left from right by its thumb and its shape,
/// and read wrong on some frames (docs/hands.md); one misreading of the first touch
/// turns every later take of that player into such a call. So the ruling goes to review,
/// naming what it rests on; a ruling already sent to review keeps its reason.
fn mark_other_hand(r: &mut Ruling, declared_lead: [bool; 2]) {
    if r.needs_review.is_some() || !r.articles.iter().any(|a| a == "21-3") {
        return;
    }
    let Some(take) = &r.take else { return };
    let player = take.player.other();
    let lead = lead_words(player, declared_lead);
    r.needs_review = Some(Review {
        reason: format!(
            "the take turns on {player:?}'s hand being read as the one that is not the lead hand (21-3), and {lead}: check which hand touched"
        ),
        what: ReviewWhat::Rules,
    });
}

/// Where a player's lead hand came from, for a review's reason: the layout's declaration,
/// or the hand read at their first touch (13-2).
fn lead_words(player: Player, declared_lead: [bool; 2]) -> String {
    if declared_lead[player.index()] {
        format!("the lead hand is the one the layout declares for {player:?} (13-2)")
    } else {
        format!("the lead hand is the hand read at {player:?}'s first touch (13-2)")
    }
}

/// A touch read as made with the hand that is not the lead hand commits no otetsuki
/// (23-5); like a take given away under 21-3, that turns on the camera's reading of left
/// and right, for the touch and for the player's first touch (13-2), when the hands are
/// the hand model's (`fingertip_touches`). When the ruling's
/// fouls would differ with such touches read as the lead hand (`fouls_if_lead`, the
/// reading ruled again on the window so changed), it goes to review naming the first of
/// them; a ruling already sent to review keeps its reason.
fn mark_other_hand_fouls(
    r: &mut Ruling,
    window: &[Event],
    lead: [Option<Hand>; 2],
    declared_lead: [bool; 2],
    fouls_if_lead: impl FnOnce(&[Event]) -> Vec<Foul>,
) {
    if r.needs_review.is_some() || !r.articles.iter().any(|a| a == "23-5") {
        return;
    }
    // The lead hand of a direct touch read as the other hand.
    let lead_for = |e: &Event| match e.what {
        EventKind::Touch {
            player,
            hand,
            direct: true,
            ..
        } => lead[player.index()].filter(|&l| l != hand),
        _ => None,
    };
    let Some(first) = window.iter().find(|e| lead_for(e).is_some()) else {
        return;
    };
    let relabelled: Vec<Event> = window
        .iter()
        .map(|e| {
            let mut e = e.clone();
            if let (Some(l), EventKind::Touch { hand, .. }) = (lead_for(&e), &mut e.what) {
                *hand = l;
            }
            e
        })
        .collect();
    if fouls_if_lead(&relabelled) == r.fouls {
        return;
    }
    let EventKind::Touch {
        player,
        hand,
        poem,
        territory,
        ..
    } = &first.what
    else {
        return;
    };
    let card = match poem {
        Some(p) => format!("card {p}"),
        None => touched_card_words(None, *territory),
    };
    let lead = lead_words(*player, declared_lead);
    r.needs_review = Some(Review {
        reason: format!(
            "{player:?}'s touch of {card} at {:.3} s was read as the {hand} hand, not the lead hand, and so is no otetsuki (23-5); {lead}: check which hand touched",
            first.t_s
        ),
        what: ReviewWhat::Rules,
    });
}

/// Whether the card touched at `t` went out, was sent, settled elsewhere or struck
/// another card within `FOUL_CARD_MOVED_S` after. A card the layout could not name has no
/// `out`, `send` or `place` of its own: a touch of one never counts as moving it.
fn card_moved(window: &[Event], poem: Option<u8>, t: f64) -> bool {
    let Some(poem) = poem else { return false };
    window.iter().any(|e| {
        e.t_s >= t - 1e-9
            && e.t_s <= t + FOUL_CARD_MOVED_S
            && match &e.what {
                EventKind::Out { poem: p, .. }
                | EventKind::Send { poem: p, .. }
                | EventKind::Place { poem: p, .. } => *p == poem,
                EventKind::Touch {
                    poem: p,
                    direct: false,
                    ..
                } => *p != Some(poem),
                _ => false,
            }
    })
}

/// A hand seen touching a card that did not move while it swept over the field at this
/// speed or more, mm/s (`Event::sweep_mm_s`: the lesser of its speeds over the 40 ms
/// before and after the touch), was passing over the card: a fingertip that touches a
/// card without moving it rests on it, and the hand holding it slows. Such a touch is not
/// ruled on (it stays in `events.jsonl`, and the ruling's `why` names it). On the tuning
/// recordings (docs/analyze.md), the hand model's true touches of a card that did not
/// move came at 70-608 mm/s (median 166); its false ones at up to 3,100 (median 441),
/// most of them a hand passing low over the cards on its way to or from the one it
/// touched.
pub const PASS_SWEEP_MM_S: f64 = 650.0;

/// A hand seen pressing a card that did not move for this long or longer, s
/// (`Event::pressed_s`, counted up to `model_hands::HELD_SPAN_S`), was held over it: a
/// fingertip taps a card it does not move. Such a touch is not ruled on (it stays in
/// `events.jsonl`; the ruling's `why` names it, and when pressing would have been a foul
/// the ruling goes to review). On the tuning recordings (docs/analyze.md) the hand model
/// saw its true touches of a card that did not move pressing for 7-126 ms; 11 of its 50
/// false ones, a hand held still above a card, for 169 ms or more.
pub const HELD_OVER_S: f64 = super::model_hands::HELD_SPAN_S;

/// Why a touch is not ruled on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unruled {
    /// A hand passing over a card it did not move (`PASS_SWEEP_MM_S`).
    Passing,
    /// A hand held over a card it did not move (`HELD_OVER_S`).
    HeldOver,
}

/// Whether a window's event is a touch not ruled on, and why; `None` for every other
/// event.
fn unruled(window: &[Event], e: &Event) -> Option<Unruled> {
    let EventKind::Touch {
        poem, direct: true, ..
    } = &e.what
    else {
        return None;
    };
    let why = if e.sweep_mm_s.is_some_and(|v| v >= PASS_SWEEP_MM_S) {
        Unruled::Passing
    } else if e.pressed_s.is_some_and(|v| v >= HELD_OVER_S) {
        Unruled::HeldOver
    } else {
        return None;
    };
    (!card_moved(window, *poem, e.t_s)).then_some(why)
}

/// The touches of `unruled` as a sentence for the ruling's `why`.
fn passes_words(passes: &[Event], held: &[Event]) -> Option<String> {
    let touch = |e: &Event, how: &dyn Fn(&Event) -> String| match &e.what {
        EventKind::Touch {
            player,
            poem,
            territory,
            ..
        } => Some(format!(
            "{player}'s hand over {} at {:.3} s, {}",
            touched_card_words(*poem, *territory),
            e.t_s,
            how(e)
        )),
        _ => None,
    };
    let speed = |e: &Event| format!("at {:.2} m/s", e.sweep_mm_s.unwrap_or(0.0) / 1000.0);
    let time = |e: &Event| format!("for {:.2} s or more", e.pressed_s.unwrap_or(0.0));
    let passing: Vec<String> = passes.iter().filter_map(|e| touch(e, &speed)).collect();
    let holding: Vec<String> = held.iter().filter_map(|e| touch(e, &time)).collect();
    let mut out = Vec::new();
    if !passing.is_empty() {
        out.push(format!(
            "Not ruled as touches (a hand sweeping past a card it did not move): {}.",
            passing.join("; ")
        ));
    }
    if !holding.is_empty() {
        out.push(format!(
            "Not ruled as touches (a hand held over a card it did not move): {}.",
            holding.join("; ")
        ));
    }
    (!out.is_empty()).then(|| out.join(" "))
}

/// A hand held over a card (`HELD_OVER_S`) is taken for one not pressing it, and one
/// sweeping over it (`PASS_SWEEP_MM_S`) for one passing over it; when counting such a
/// touch would have been a foul (`fouls_if_counted`, the ruling with those touches
/// counted), the ruling goes to review naming the first of them (`unruled`): from above,
/// a hand held or sweeping just over a card looks like one touching it. `read_as` gives
/// the reason, from the touch, its player and the card's words. A ruling already sent to
/// review keeps its reason.
fn mark_unruled_foul(
    r: &mut Ruling,
    unruled: &[Event],
    fouls_if_counted: Option<&[Foul]>,
    read_as: &dyn Fn(&Event, Player, String) -> String,
) {
    let Some(fouls) = fouls_if_counted else {
        return;
    };
    if r.needs_review.is_some() || fouls == r.fouls.as_slice() {
        return;
    }
    let Some(e) = unruled.first() else {
        return;
    };
    if let EventKind::Touch {
        player,
        poem,
        territory,
        ..
    } = &e.what
    {
        r.needs_review = Some(Review {
            reason: read_as(e, *player, touched_card_words(*poem, *territory)),
            what: ReviewWhat::Unseen,
        });
    }
}

/// The review's reason for a hand held over a card, for `mark_unruled_foul`.
fn held_over_words(e: &Event, player: Player, card: String) -> String {
    format!(
        "{player:?}'s hand was held over card {card} at {:.3} s without moving it, taken for not pressing it: from above, a hand held just over a card looks like one pressing it, and pressing it would be a foul",
        e.t_s
    )
}

/// The review's reason for a hand sweeping over a card, for `mark_unruled_foul`.
fn passed_over_words(e: &Event, player: Player, card: String) -> String {
    format!(
        "{player:?}'s hand swept over card {card} at {:.3} s, at {:.2} m/s, without moving it, taken for passing over it: from above, a hand sweeping just over a card looks like one brushing it, and touching it would be a foul",
        e.t_s,
        e.sweep_mm_s.unwrap_or(0.0) / 1000.0
    )
}

/// A foul whose touch moved no card rests on a fingertip alone: seen from above, a hand
/// held a little above a card looks like one pressing it (docs/hands.md, the contact
/// network), and the foul punishes a player. Such a ruling goes to review, naming the
/// touch; a ruling the engine or an earlier mark already sends to review keeps its reason.
fn mark_fingertip_fouls(r: &mut Ruling, window: &[Event]) {
    if r.needs_review.is_some() {
        return;
    }
    let moved = |poem: Option<u8>, t: f64| card_moved(window, poem, t);
    let alone = r
        .fouls
        .iter()
        .filter(|f| f.kind != FoulKind::EarlyEntry)
        .find_map(|f| {
            window.iter().find_map(|e| match &e.what {
                EventKind::Touch {
                    player,
                    poem,
                    territory,
                    direct: true,
                    ..
                } if *player == f.player
                    && (e.t_s - f.t_s).abs() < 1e-6
                    && !moved(*poem, e.t_s) =>
                {
                    Some((f.player, touched_card_words(*poem, *territory), e.t_s))
                }
                _ => None,
            })
        });
    if let Some((player, poem, t)) = alone {
        r.needs_review = Some(Review {
            reason: format!(
                "the foul rests on {player:?}'s fingertip seen on card {poem} at {t:.3} s, which did not move: from above, a hand held just over a card looks the same"
            ),
            what: ReviewWhat::Unseen,
        });
    }
}

/// Without a hand model no touch, entry or driver was seen: every ruling rests on what
/// the camera could not see, and says so (contract section 5: never a silent guess).
fn mark_no_hands(r: &mut Ruling) {
    let keep = matches!(
        r.needs_review,
        Some(Review {
            what: ReviewWhat::UnknownCard,
            ..
        })
    );
    if !keep {
        r.needs_review = Some(Review {
            reason: format!(
                "{NO_HAND_MODEL}: touches, hands entering the area and who drove a card out were not seen"
            ),
            what: ReviewWhat::Unseen,
        });
    }
}

/// True when an event comes from the hands (the part that is missing without a model).
pub fn is_hand_event(e: &Event) -> bool {
    matches!(
        e.what,
        EventKind::Touch { direct: true, .. } | EventKind::Enter { .. } | EventKind::Leave { .. }
    )
}

//! The events: a hand's state (inside the playing area, pressing a card) compared
//! between two samples, a change confirmed by the next run, and timed between the two
//! neighbouring frames it was pinned to (`touch`, `enter`, `leave`, contract section 4);
//! and a hand last seen over the area and now hidden (`hidden_inside`).
//!
//! Reads samples; never runs the network (that is the schedule in the module above).

use super::{Perceiver, Sample, SlotState, Untimed, CONTACT_MIN_P};
use crate::hands::decode::{HandObs, SLOTS};
use crate::hands::HandsError;
use crate::rules::geometry::Pt;
use crate::rules::model::{CardRef, Event, EventKind, Hand, Player};

/// A hand seen pressing a card this recently, s, is still on it when it is seen pressing
/// again: its contact flickered between runs, or its fingertip, moving with the card it
/// pushes, now lies over another card's place in the layout. It is no new touch. A hand
/// that lifts from one card and comes down on another takes longer (in the simulator at
/// least 0.26 s from the end of one press to the next: 0.12 s up, the reach, 35 ms down).
pub const CONTACT_REPRESS_S: f64 = 0.2;
/// A hand seen pressing a card this recently, s, is still handling it when it is seen
/// pressing it again, and the new press renews the span: a card carried to the other
/// territory or straightened after it arrives slides under the fingers, whose contact
/// comes and goes while the card's place is still being followed. It is no new touch.
/// A player who touches a card again within half a second adds nothing the rules ask
/// (the first touch takes, the first touch fouls); no simulated recording's truth has
/// one (1,017 touches on the tuning, held-out and dubbed recordings). Kept per hand:
/// the same touch read once as the left hand and once as the right keeps both
/// readings, as the judge gives a touch the player's usual hand anyway.
pub const CARD_REPRESS_S: f64 = 0.5;
/// How far a touch's time, as the contact signal crosses 0.5, strays from the moment the
/// fingertip meets the card, s (one standard deviation), beyond the bracket between the
/// runs around it: the signal passes 0.5 while a finger comes down, or a run or two late.
/// Measured on the six tuning recordings of docs/hands.md with the committed networks:
/// 125 touches `analyze` found, 12 ms early on average with a spread of 21.6 ms; with the
/// first two networks trained 12,000 steps, the 132 found within 0.1 s of the truth's,
/// 17 ms early with a spread of 20.0 ms (20.1 ms for the 123 of the 4,000-step ones). Every
/// touch of the hand model carries it in its `t_err_s`, so two touches of different
/// players closer than the model can order go to review as a close call.
pub const CONTACT_ONSET_SD_S: f64 = 0.02;
/// A hand's change not confirmed because the hand went unseen is dropped after this
/// long, s (events are given out in time order, so an open change holds back the rest).
pub const PENDING_UNSEEN_MAX_S: f64 = 0.2;
/// A player's hand is hidden (`Perceiver::hidden_inside`) at most this long after it
/// was last seen over the playing area, s.
pub const HIDDEN_MAX_S: f64 = 0.2;
/// A hand last seen over the playing area and unseen since is taken to have left it
/// after this long, s: from above, a hand over the area is in view but while it lies
/// under the other player's or is seen as one region with it, for a fraction of a second
/// (two players' hands at one card were seen as one region for up to 63 frames, 0.26 s,
/// on held-out hard-7301). Without it, a region named for a hand of a player who uses
/// only the other (two hands at one card, read for a moment as the player's other hand)
/// stayed over the area until that hand was next seen, tens of seconds later, and was an
/// early entry at every reading between (tuning recordings clean-9108, realistic-9207).
pub const UNSEEN_INSIDE_MAX_S: f64 = 0.5;
/// The confidence of a `leave` given because the hand went unseen over the area
/// (`UNSEEN_INSIDE_MAX_S`): it was not seen leaving.
pub const UNSEEN_LEAVE_CONF: f64 = 0.5;
/// A region of the player with a fingertip this near where their hand was last seen
/// over the area is that hand, seen leaving (mm): a hand moves 25-50 mm between runs.
pub const HIDDEN_CONTINUE_MM: f64 = 100.0;

/// When each hand was last seen pressing each card, over the last `CARD_REPRESS_S`.
#[derive(Debug, Clone, Default)]
pub(super) struct PressedCards(pub(super) Vec<((Player, Hand), CardRef, f64)>);

impl PressedCards {
    /// Whether `hand` was seen pressing `card` within `CARD_REPRESS_S` before `t_s`.
    pub(super) fn lately(&self, hand: (Player, Hand), card: CardRef, t_s: f64) -> bool {
        self.0
            .iter()
            .any(|&(h, c, t)| h == hand && c == card && t_s - t <= CARD_REPRESS_S)
    }

    /// `hand` is seen pressing `card` at `t_s` (a contact confirmed, or held on).
    pub(super) fn note(&mut self, hand: (Player, Hand), card: CardRef, t_s: f64) {
        match self.0.iter_mut().find(|(h, c, _)| *h == hand && *c == card) {
            Some(seen) => seen.2 = t_s,
            None => self.0.push((hand, card, t_s)),
        }
    }

    /// Forgets presses too old to matter at `t_s`.
    pub(super) fn forget_before(&mut self, t_s: f64) {
        self.0.retain(|&(.., t)| t_s - t <= CARD_REPRESS_S);
    }
}

/// Where a player's hand was last seen over the playing area.
#[derive(Debug, Clone)]
pub(super) struct LastInside {
    pub(super) t_s: f64,
    pub(super) hand: Hand,
    /// The fingertips of every region of theirs inside then, in decoded pixels and in
    /// the field.
    pub(super) tips_px: Vec<[f64; 2]>,
    pub(super) tips_mm: Vec<Pt>,
}

/// Whether a player's hand last seen over the playing area at `tips_mm`, `age_s` ago, is
/// hidden now that the player's regions show fingertips at `now_mm` (field mm, none of
/// them inside): none lies where the hand was, so it was not seen leaving.
pub(super) fn still_hidden(tips_mm: &[Pt], age_s: f64, now_mm: &[Pt]) -> bool {
    let near = now_mm
        .iter()
        .any(|q| tips_mm.iter().any(|t| t.dist_mm(*q) <= HIDDEN_CONTINUE_MM));
    !tips_mm.is_empty() && age_s <= HIDDEN_MAX_S && !near
}

/// The `leave` of a hand last seen over the playing area and unseen in every run since,
/// now that a run at `now` (frame, time) has not seen it either, when that is longer than
/// `UNSEEN_INSIDE_MAX_S` after its last sight and no change of it waits to be confirmed.
/// When it left is not known, from its last sight to now (`t_err_s`); the time is put
/// between the previous run (`prev_run_s`) and now, as every event given out so far is
/// earlier.
pub(super) fn lapsed_leave(
    st: &SlotState,
    (player, hand): (Player, Hand),
    prev_run_s: f64,
    (frame, t_s): (usize, f64),
) -> Option<Event> {
    let (seen_frame, seen_s, ..) = st.seen?;
    if !st.inside || st.pending_inside.is_some() || t_s - seen_s <= UNSEEN_INSIDE_MAX_S {
        return None;
    }
    Some(Event {
        t_s: crossing(prev_run_s, t_s, f64::NAN, f64::NAN),
        what: EventKind::Leave { player, hand },
        conf: UNSEEN_LEAVE_CONF,
        t_err_s: (t_s - seen_s) / 12f64.sqrt(),
        frames: Some([seen_frame as u64, frame as u64]),
        sweep_mm_s: None,
        pressed_s: None,
    })
}

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

impl Perceiver {
    /// Follows where each player's hand was last seen over the playing area, and whether
    /// it is hidden in sample `s`: no region of theirs is inside, none lies where the
    /// hand was (`HIDDEN_CONTINUE_MM`, so it was not seen leaving), and it was seen
    /// there at most `HIDDEN_MAX_S` before. A hand does not leave the area unseen: such a
    /// hand lies under the other player's, or is seen as one region with it (two
    /// players' hands on one card), which then often takes its player's name too.
    pub(super) fn note_inside(&mut self, s: &Sample) -> Result<(), HandsError> {
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

    pub(super) fn seed_state(&mut self, s: &Sample) {
        for (i, st) in self.slots.iter_mut().enumerate() {
            if let Some(o) = s.slot(i) {
                st.inside = o.inside;
                st.contact = o.contact;
                st.seen = Some((s.frame, s.t_s, o.reach_mm, o.contact_p));
            }
        }
    }

    /// Events for the changes between two consecutive runs.
    pub(super) fn events_between(&mut self, a: &Sample, b: &Sample, out: &mut Vec<Event>) {
        self.pressed_cards.forget_before(b.t_s);
        self.events_by_slot(a, b, out);
    }

    fn events_by_slot(&mut self, a: &Sample, b: &Sample, out: &mut Vec<Event>) {
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
                    .is_some_and(|(_, e, _)| b.t_s - e.t_s > PENDING_UNSEEN_MAX_S)
                {
                    st.pending_contact = None;
                }
                if let Some(ev) = lapsed_leave(st, (player, hand), a.t_s, (b.frame, b.t_s)) {
                    out.push(ev);
                    st.inside = false;
                    st.contact = None;
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
                        sweep_mm_s: None,
                        pressed_s: None,
                    };
                    next.pending_inside = Some((o.inside, ev));
                }
                None => {}
            }
            // Pressing a card: the same; letting go needs no event.
            match st.pending_contact {
                Some((card, ev, at_px)) => {
                    if o.contact == Some(card) {
                        // Timed by the onset network over the frames around it, when
                        // it can be (`timing`).
                        match at_px.filter(|_| self.times_touches()) {
                            Some(at_px) => {
                                self.presses.push((player, ev.t_s, at_px));
                                self.untimed.push(Untimed { ev, at_px });
                            }
                            None => out.push(ev),
                        }
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
                            && self.pressed_cards.lately((player, hand), card, b.t_s) =>
                    {
                        // The card this hand pressed lately, pressed again: the same
                        // touch, held on (`CARD_REPRESS_S`).
                        next.contact = Some(card);
                    }
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
                            sweep_mm_s: None,
                            pressed_s: None,
                        };
                        next.pending_contact = Some((card, ev, o.contact_px));
                    }
                    Some(_) => {}
                    None => next.contact = None,
                },
            }
            if next.contact.is_some() && o.contact.is_some() {
                next.pressed_t_s = Some(b.t_s);
            }
            // A contact confirmed or held on (not one seen in a single run): a later
            // press of the same card by this hand is still this touch.
            if let Some(card) = next.contact.filter(|c| o.contact == Some(*c)) {
                self.pressed_cards.note((player, hand), card, b.t_s);
            }
            self.slots[s] = next;
        }
    }
}

//! Touches the card tracker infers from a card set moving, held until the hands' own
//! touches of the same card could have come, and dropped when they did.
//!
//! Owns that holding; reads events only.

use crate::rules::model::{Event, EventKind, Player};

/// A touch the card tracker infers from a card set moving is held this long, video
/// time, and dropped when the hands saw the same player touch the same card within
/// `MOTION_TOUCH_MATCH_S` of it (the hands' own touch is the better timed).
pub const MOTION_TOUCH_HOLD_S: f64 = 0.3;
pub const MOTION_TOUCH_MATCH_S: f64 = 0.25;

/// Touches inferred from card motion, held until the hands' own touches could have come.
#[derive(Debug, Default)]
pub(super) struct MotionTouches {
    pub(super) held: Vec<Event>,
    /// The hands' recent touches: (time, player, poem, territory of an unnamed card).
    seen: Vec<(f64, Player, Option<u8>, Option<Player>)>,
}

impl MotionTouches {
    pub(super) fn saw(&mut self, hand_events: &[Event]) {
        for e in hand_events {
            if let EventKind::Touch {
                player,
                poem,
                territory,
                ..
            } = e.what
            {
                self.seen.push((e.t_s, player, poem, territory));
            }
        }
    }

    /// Takes the tracker's touches aside; passes its other events on.
    pub(super) fn hold(&mut self, card_events: Vec<Event>) -> Vec<Event> {
        let (touches, rest): (Vec<Event>, Vec<Event>) = card_events
            .into_iter()
            .partition(|e| matches!(e.what, EventKind::Touch { direct: true, .. }));
        self.held.extend(touches);
        rest
    }

    /// The held touches older than the hold at `now_s`, without those the hands saw.
    pub(super) fn release(&mut self, now_s: f64) -> Vec<Event> {
        let (due, keep): (Vec<Event>, Vec<Event>) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|e| e.t_s + MOTION_TOUCH_HOLD_S <= now_s);
        self.held = keep;
        let seen = &self.seen;
        let out = due
            .into_iter()
            .filter(|e| match e.what {
                EventKind::Touch {
                    player,
                    poem,
                    territory,
                    ..
                } => !seen.iter().any(|&(t, p, q, w)| {
                    p == player
                        && q == poem
                        && (poem.is_some() || w == territory)
                        && (t - e.t_s).abs() <= MOTION_TOUCH_MATCH_S
                }),
                _ => true,
            })
            .collect();
        let horizon = now_s - 2.0 * MOTION_TOUCH_HOLD_S - MOTION_TOUCH_MATCH_S;
        self.seen.retain(|&(t, ..)| t >= horizon);
        out
    }
}

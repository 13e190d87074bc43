//! Missing cards searched for: a whole-frame card search and naming
//! (`detect::relocate`) on a thread of its own, at most every `SEARCH_EVERY_S`, whose
//! finds are placed `SEARCH_LAG_S` later and dated at the frame it looked at.
//!
//! Reads the frame and the resting cards' places. It never follows a card in flight
//! (that is `flight`), and what it finds does not depend on the machine's speed
//! (except in `live`, with `eager_search`).

use super::blob;
use super::{centre_px, visible, CardTracker, HandSeen, Phase, TrackError};
use crate::detect::cards::{self, dist};
use crate::detect::motion::CardState;
use crate::detect::relocate::{self, Search};
use crate::detect::{DetectError, QuadPx};
use crate::rules::geometry::{Pt, FINGER_HALF_WIDTH_MM};
use crate::rules::model::{Event, Player};
use opencv::core::Mat;
use opencv::prelude::MatTraitConst;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

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

/// Whether a hand of `player` whose fingertip lies at `tip` may lie over the place of a
/// card centred at `centre_mm` (field mm), reaching `card_reach_mm` from its centre at
/// most: the fingertip within `HAND_COVER_MM` of the place, and the place not wholly on
/// the field's side of it. A hand lies behind its fingertips, towards its player's edge
/// (A sits at negative y, B at positive y), so a hand resting at the edge of the playing
/// area with its fingertips just past a card of the back row does not cover that card
/// (clean-9107: B's resting fingertip 95 mm from the place of a card B had just sent
/// across kept it from being looked for, and its send was found 11 s late).
pub fn hand_may_cover(player: Player, tip: Pt, centre_mm: [f64; 2], card_reach_mm: f64) -> bool {
    let near = (tip.x_mm - centre_mm[0]).hypot(tip.y_mm - centre_mm[1]) <= HAND_COVER_MM;
    let behind =
        player.toward_own_y() * (centre_mm[1] - tip.y_mm) + card_reach_mm + FINGER_HALF_WIDTH_MM;
    near && behind >= 0.0
}

/// The cards the last search read without finding any missing card among them (their
/// face centres, px), and the poems it looked for: the next search for the same poems
/// does not read them again while they lie there.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct ReadInVain {
    for_poems: Vec<u8>,
    at_px: Vec<[f64; 2]>,
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

/// A search for missing cards running on its own thread: what it was asked, and when
/// its finds are applied.
pub(super) struct Searching {
    /// The frame it looked at, and its time (the finds are dated then).
    frame: usize,
    pub(super) t_s: f64,
    pub(super) apply_frame: usize,
    /// The missing cards it looks for (indices), and their poems.
    due: Vec<usize>,
    missing: Vec<u8>,
    /// The search's finds, and the frame it looked at (the found cards' reference).
    pub(super) job: std::thread::JoinHandle<Result<(Search, Mat), DetectError>>,
}

impl CardTracker {
    /// Takes in each search's finds once it has finished (`live`), rather than
    /// `SEARCH_LAG_S` after the frame it looked at, and never waits for one while
    /// frames pass. The search then reads on one thread of its own, below the priority
    /// of the frames' own stages. Paper in flight is then not read by the namer
    /// (`named`): the frames would wait for it.
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

    /// Cards that vanished unseen are searched for, at most every `SEARCH_EVERY_S`, once
    /// no fingertip is near their place. The search looks at this frame on a thread of
    /// its own; `apply_search` takes in what it found `SEARCH_LAG_S` later.
    pub(super) fn search_missing(
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
        let mut tips: Vec<(Player, Pt)> = Vec::new();
        for h in visible(hands) {
            let mm = self.map.to_field(&h.fingertips_px)?;
            tips.extend(mm.into_iter().map(|p| (h.player, p)));
        }
        let size = &self.geometry.size;
        let card_reach_mm = 0.5 * size.card_w_mm.hypot(size.card_h_mm);
        let due: Vec<usize> = (0..self.cards.len())
            .filter(|&i| {
                let c = &self.cards[i];
                matches!(
                    c.phase,
                    Phase::Missing {
                        given_up: false,
                        ..
                    }
                ) && tips
                    .iter()
                    .all(|&(player, tip)| !hand_may_cover(player, tip, c.centre_mm, card_reach_mm))
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
                rest_mm,
                ..
            } = self.cards[i].phase
            {
                let gone_s = frame.saturating_sub(since_frame) as f64 / self.fps;
                self.cards[i].phase = Phase::Missing {
                    since_frame,
                    given_up: gone_s >= SEARCH_FOR_S,
                    lost_at_px,
                    left: left.clone(),
                    rest_mm,
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hand_covers_a_place_only_from_its_players_side_of_the_fingertip() {
        let reach = 0.5 * 52f64.hypot(73.0);
        // clean-9107: a card of B's back row, B's resting fingertip 95 mm away just past
        // the area's edge: B's hand lies beyond it, away from the field.
        let back_row = [-118.5, 216.7];
        let resting = Pt::new(-70.0, 298.0);
        assert!(!hand_may_cover(Player::B, resting, back_row, reach));
        // The same fingertip as A's, reaching across: A's hand trails back over the card.
        assert!(hand_may_cover(Player::A, resting, back_row, reach));
        // A fingertip of B's on the card, or short of it on the field's side: covered.
        assert!(hand_may_cover(
            Player::B,
            Pt::new(-110.0, 200.0),
            back_row,
            reach
        ));
        assert!(hand_may_cover(
            Player::B,
            Pt::new(-118.0, 140.0),
            back_row,
            reach
        ));
        // Farther than HAND_COVER_MM: never.
        assert!(!hand_may_cover(
            Player::A,
            Pt::new(-118.0, 90.0),
            back_row,
            reach
        ));
    }
}

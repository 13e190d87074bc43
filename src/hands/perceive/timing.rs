//! A touch timed by the onset network: the contact networks say *that* a fingertip
//! presses, but their probability passes 0.5 while the finger is still coming down or
//! held over the card before it does (on the tuning recordings 17 ms early on average,
//! with a spread of 20 ms). The onset network sees the square where the touch presses in
//! a frame and in the frames just before it, and says whether the finger has landed by
//! that frame. A hand held still over the card before it comes down looks landed to it
//! too, but the finger coming down moves, and the probability falls while it does: the
//! touch is put where the longest run of frames it calls landed begins. A touch where it
//! sees no finger on the card at all (`never_landed`) is dropped, and so is one it sees
//! no finger land for once it has shown it sees fingers land on this recording
//! (`onset_proven`). Where a rival's touch presses close by at the same moment (a close
//! take), the square is moved up the player's own finger (`square_centre`).
//!
//! Reads the contact crops kept around a touch and the point it presses; changes only
//! the touch's time, its `frames` and `t_err_s`, or drops it.

use super::Perceiver;
use crate::hands::contact::{CropSource, ONSET_BACK_FRAMES};
use crate::hands::HandsError;
use crate::rules::geometry::Pt;
use crate::rules::model::{Event, EventKind, Player};
use std::sync::Arc;

/// The frames looked at around a touch found: from this long before its time, s (the
/// contact probability passes 0.5 up to 25 ms late on the tuning recordings)...
pub const TIMED_BEFORE_S: f64 = 0.03;
/// ...to this long after (the touch waits for them): it passes 0.5 up to 70 ms early
/// (over a hand held still above the card before it comes down), and the finger's run
/// on the card must be there to outlast the hold.
pub const TIMED_AFTER_S: f64 = 0.1;
/// A finger landed already at the first frame looked at is followed back at most this
/// much further, s, to where it came down.
pub const LOOKBACK_MAX_S: f64 = 0.1;
/// The onset network is run on recordings of this many frames a second or more: it sees
/// the frames `ONSET_BACK_FRAMES` before, 4.2 to 25 ms at 240 fps.
pub const TIMED_MIN_FPS: f64 = 200.0;
/// The probability at which the finger has landed.
pub const LANDED_P: f64 = 0.5;
/// A finger that touches a card stays down this long or longer, s (a press in the
/// simulator lasts 30 ms or more).
pub const LANDED_MIN_S: f64 = 0.025;
/// A touch the onset network was run over but saw no finger land for, at or after the
/// events already given out (landed before every frame it looked at, or only before
/// those events), is dropped once the network has shown on this recording that it sees
/// fingers land: after `ONSET_PROVEN_MIN` touches, of which `ONSET_PROVEN_SHARE` or more
/// it saw land. On the eighteen recordings of docs/hands.md, none of the 15 touches given
/// out with no landing seen matched a true touch of the same player and card within
/// 0.1 s (hands held still and low over a card, two of them false fouls; one press of the
/// card beside, found 217 ms late). On a recording whose look the network does not know,
/// where it sees few fingers land, no touch is dropped that way.
pub const ONSET_PROVEN_MIN: usize = 10;
/// The share is set well under the least seen on the six held-out recordings of
/// docs/hands.md (76% on realistic-7202, 88-97% on the others).
pub const ONSET_PROVEN_SHARE: f64 = 0.6;

/// Whether the onset network has seen fingers land for enough of the `tried` touches of
/// this recording (`landed` of them) for a touch it saw no finger land for to be dropped.
pub fn onset_proven(tried: usize, landed: usize) -> bool {
    tried >= ONSET_PROVEN_MIN && landed as f64 >= ONSET_PROVEN_SHARE * tried as f64
}

/// How far a touch so timed strays from the moment the fingertip meets the card, s (one
/// standard deviation, beside the frame's own bracket).
/// Measured on the six tuning recordings of docs/hands.md with the committed onset
/// network: of the 131 touches `analyze` found within 0.1 s of the truth's, 0.2 ms late
/// on average with a spread of 9.9 ms (the error's median 2.3 ms, p90 6.7 ms, p95 11.9
/// ms: a few are put on the hold before the finger came down).
pub const CONTACT_TIMED_SD_S: f64 = 0.01;
/// How far a touch timed on a sharp landing strays (`sharp_onset`), s (one standard
/// deviation, beside the frame's own bracket). Chosen on the eleven tuning recordings of
/// docs/hands.md, where 55 of the 236 touches timed inside `analyze` were sharp, their
/// error's spread 1.9 ms and largest 4.3 ms. With runs joined over a dip
/// (`LANDED_GAP_FRAMES`), 59 matched, 2.1 ms and 5.4 ms; on the six held out, kept out of
/// the choice, 42, 2.3 ms and 6.0 ms.
pub const CONTACT_SHARP_SD_S: f64 = 0.0025;
/// A landing is sharp when the onset network's probability is below this at the frame
/// before the run a touch is timed at...
pub const SHARP_BELOW_P: f64 = 0.2;
/// ...and above this at the run's first frame, with no frame called landed before it.
pub const SHARP_ABOVE_P: f64 = 0.8;

/// A rival's touch found within this long of a touch, s, and pressing within
/// `RIVAL_NEAR_MM` of it, lands inside its square. In a close take both players' fingers
/// come down on the same card, each from its own side: in the 47 close takes of the
/// simulator's truth on the tuning and training recordings, the touching fingertips lie
/// 24-41 mm apart (median 31), A's always 21-41 mm nearer A's side than B's. Where the two
/// touches press is often found on one finger (the hand network's regions of two hands
/// that meet over a card run into each other), and the onset network, centred there,
/// times that finger's landing for both.
pub const RIVAL_NEAR_S: f64 = 0.05;
/// Half the onset network's square (48 px at 2 mm a pixel).
pub const RIVAL_NEAR_MM: f64 = 48.0;
/// Such a touch is timed on a square moved this far towards its player's own side of
/// the field. Centred where its own fingertip presses, the square moves up its own
/// finger, which is longer; centred on the rival's fingertip, it moves to within 0-16 mm
/// of its own (24-41 mm away), and the rival's lies 25 mm off the centre. On the
/// windows of the 36 close takes of `train/close_square.py` (seeds 1070-1075, which the
/// committed onset network never saw), the slope of the two touches' measured gap
/// against the true one: both squares on one finger, 0.00-0.01 (every take timed a tie,
/// as `analyze` found); each on its own fingertip, 0.56; each moved 25 mm towards its own
/// side, 0.91 (the gap's error median 2.1 ms, p90 7.4 ms); one of them moved from the
/// rival's fingertip, 0.53-0.72 (docs/hands.md, "a rival's touch beside").
pub const RIVAL_SHIFT_MM: f64 = 25.0;

/// A touch confirmed and waiting for the frames after it, to be timed: the event and
/// where the fingertip presses (frame pixels).
#[derive(Debug, Clone)]
pub(super) struct Untimed {
    pub ev: Event,
    pub at_px: [f64; 2],
}

/// Two runs of frames called landed with no more than this many frames between them are
/// one landing (`onset_from_landed`): the network's probability can dip under `LANDED_P`
/// for a frame while the finger stays down. Measured offline over the onset network's
/// probabilities logged in `analyze` on the eleven tuning recordings of docs/hands.md
/// (238 touches matched to the truth): timed within a frame 190 to 198, |error| p95
/// 15.4 to 12.7 ms, 20 ms or more off 10 to 11; the close takes' largest error 62 to 34
/// ms. Joining over two frames put 14 touches 20 ms or more off.
pub const LANDED_GAP_FRAMES: usize = 1;

/// The moment the finger landed, from the onset network's probabilities over the frames
/// around a touch (`(frame, t_s, p)` in time order): where the longest run of frames at
/// `LANDED_P` or more begins (the earliest of the longest; runs split by
/// `LANDED_GAP_FRAMES` or fewer are one), the time where the probability crosses
/// `LANDED_P` between its first frame and the one before (linear). A finger pressing
/// stays down for 30 ms or more; a hand held over the card before it comes down, for a
/// few frames. `None` when no frame is at `LANDED_P`, or the longest run begins with the
/// first frame (landed before the frames looked at).
pub fn onset_from_landed(ps: &[(usize, f64, f64)]) -> Option<(f64, [usize; 2])> {
    let mut joined: Vec<(usize, usize)> = Vec::new();
    for (start, len) in landed_runs(ps) {
        match joined.last_mut() {
            Some((s, l)) if start - (*s + *l) <= LANDED_GAP_FRAMES => *l = start + len - *s,
            _ => joined.push((start, len)),
        }
    }
    let (start, _) = joined
        .iter()
        .copied()
        .reduce(|best, r| if r.1 > best.1 { r } else { best })?;
    let i = start.checked_sub(1)?;
    let ((fa, ta, pa), (fb, tb, pb)) = (ps[i], ps[start]);
    let f = ((LANDED_P - pa) / (pb - pa)).clamp(0.0, 1.0);
    Some((ta + f * (tb - ta), [fa, fb]))
}

/// Whether the landing a touch was timed at (`onset_from_landed`'s second frame `fb`,
/// over the same `ps`) is sharp: no frame before it called landed, the probability under
/// `SHARP_BELOW_P` at the frame before it and over `SHARP_ABOVE_P` at it. A finger held
/// over the card first, or a slow crossing, puts the time on the hold or anywhere along
/// the slope; a sharp landing is timed to `CONTACT_SHARP_SD_S`.
pub fn sharp_onset(ps: &[(usize, f64, f64)], fb: usize) -> bool {
    let Some(i) = ps.iter().position(|r| r.0 == fb) else {
        return false;
    };
    i >= 1
        && ps[..i].iter().all(|r| r.2 < LANDED_P)
        && ps[i - 1].2 < SHARP_BELOW_P
        && ps[i].2 > SHARP_ABOVE_P
}

/// The frames looked at around a touch (`ps`, as `onset_from_landed`'s), followed back
/// over the `earlier` kept frames (latest first) while the finger is landed at the first
/// of them and no later run is as long: the finger came down before the touch was found
/// (a hand seen late, its region shared with the rival's), and the frames are followed
/// back one at a time, by `landed` (the network's probability, `None` for a frame it
/// cannot see), to the first where it had not yet landed.
pub fn follow_back<E>(
    ps: &mut Vec<(usize, f64, f64)>,
    earlier: impl IntoIterator<Item = (usize, f64)>,
    mut landed: impl FnMut(usize) -> Result<Option<f64>, E>,
) -> Result<(), E> {
    if onset_from_landed(ps).is_some() || ps.first().is_none_or(|r| r.2 < LANDED_P) {
        return Ok(());
    }
    for (f, t) in earlier {
        let Some(p) = landed(f)? else {
            break;
        };
        ps.insert(0, (f, t, p));
        if p < LANDED_P {
            break;
        }
    }
    Ok(())
}

/// (first index, length) of each run of frames at `LANDED_P` or more.
fn landed_runs(ps: &[(usize, f64, f64)]) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (i, &(_, _, p)) in ps.iter().enumerate() {
        if p < LANDED_P {
            continue;
        }
        match runs.last_mut() {
            Some((start, len)) if *start + *len == i => *len += 1,
            _ => runs.push((i, 1)),
        }
    }
    runs
}

/// Whether the onset network saw no finger on the card over the frames around a touch:
/// no run of frames called landed lasts `min_frames`, and none was there already at the
/// first frame (a finger down before the frames looked at may lift inside them). On the
/// six tuning recordings of docs/hands.md, with `LANDED_MIN_S`, this holds for 8 of the
/// 63 touches the contact networks found with no true touch near them and for 1 of the
/// 134 true ones, whose finger had landed 117 ms before it was found.
pub fn never_landed(ps: &[(usize, f64, f64)], min_frames: usize) -> bool {
    !landed_runs(ps)
        .iter()
        .any(|&(start, len)| start == 0 || len >= min_frames)
}

/// Where the onset network's square is centred (field mm) to time `player`'s touch found
/// at `t_s` pressing at `at`, beside the other touches sent to be timed lately (`others`:
/// player, time found, where pressing): at `at`, or `RIVAL_SHIFT_MM` towards the player's
/// own side of the field when a rival's touch presses within `RIVAL_NEAR_MM` of it within
/// `RIVAL_NEAR_S`.
pub fn square_centre(player: Player, t_s: f64, at: Pt, others: &[(Player, f64, Pt)]) -> Pt {
    let rival = others.iter().any(|&(p, t, q)| {
        p != player
            && (t - t_s).abs() <= RIVAL_NEAR_S
            && (q.x_mm - at.x_mm).hypot(q.y_mm - at.y_mm) <= RIVAL_NEAR_MM
    });
    if !rival {
        return at;
    }
    // The field's y points towards player B (contract section 2).
    let dy = match player {
        Player::A => -RIVAL_SHIFT_MM,
        Player::B => RIVAL_SHIFT_MM,
    };
    Pt {
        x_mm: at.x_mm,
        y_mm: at.y_mm + dy,
    }
}

impl Perceiver {
    /// Times the touches waiting whose frames after (`TIMED_AFTER_S`) have all come by
    /// `now_s`, or every one (`all`, at the end of the video), and holds them with the
    /// other events.
    pub(super) fn time_touches(&mut self, now_s: f64, all: bool) -> Result<(), HandsError> {
        let (ready, wait): (Vec<Untimed>, Vec<Untimed>) = std::mem::take(&mut self.untimed)
            .into_iter()
            .partition(|u| all || u.ev.t_s + TIMED_AFTER_S <= now_s);
        self.untimed = wait;
        self.presses
            .retain(|(_, t, _)| *t >= now_s - TIMED_AFTER_S - 2.0 * RIVAL_NEAR_S);
        for u in ready {
            if let Some(ev) = self.timed(u)? {
                self.held.push(ev);
            }
        }
        Ok(())
    }

    /// Whether a touch confirmed now is timed by the onset network: there is one, the
    /// frames come at `TIMED_MIN_FPS` or more, and the perceiver is not hurried (the touch
    /// would wait for the frames after it).
    pub(super) fn times_touches(&self) -> bool {
        !self.hurried
            && self
                .frame_s
                .is_some_and(|d| d > 0.0 && 1.0 / d >= TIMED_MIN_FPS)
            && self.contact.as_ref().is_some_and(|c| c.times_touches())
    }

    /// The touches waiting to be timed, at the times they were found at: a take called
    /// early (`live`) does not wait for the frames after them.
    pub fn untimed_touches(&self) -> Vec<Event> {
        self.untimed.iter().map(|u| u.ev.clone()).collect()
    }

    /// The earliest time a touch still waiting may be given once timed.
    pub(super) fn untimed_from(&self) -> Option<f64> {
        self.untimed
            .iter()
            .map(|u| u.ev.t_s - TIMED_BEFORE_S - LOOKBACK_MAX_S)
            .min_by(f64::total_cmp)
    }

    /// The kept crop of frame `f`.
    fn crop_of(&self, f: usize) -> Option<&Arc<CropSource>> {
        self.crops.iter().find(|(g, ..)| *g == f).map(|(.., c)| c)
    }

    /// The onset network's probability that the finger pressing at `at_px` has landed
    /// by kept frame `f`; `None` when a frame it needs is not kept.
    fn landed_at(&self, f: usize, at_px: [f64; 2], scale: f64) -> Result<Option<f64>, HandsError> {
        let (Some(net), Some(plate), Some(c)) = (&self.contact, &self.plate, self.crop_of(f))
        else {
            return Ok(None);
        };
        let back: Option<Vec<&Arc<CropSource>>> = ONSET_BACK_FRAMES
            .iter()
            .map(|b| f.checked_sub(*b).and_then(|g| self.crop_of(g)))
            .collect();
        let Some(back) = back else {
            return Ok(None);
        };
        let frames = [c, back[0], back[1], back[2], back[3], plate].map(|a| &**a);
        net.landed_p(frames, at_px, scale)
    }

    /// Where the onset network's square is centred to time touch `ev`, found pressing at
    /// `at_px` (`square_centre` over the touches sent to be timed lately).
    fn square_centre_px(&self, ev: &Event, at_px: [f64; 2]) -> Result<[f64; 2], HandsError> {
        let EventKind::Touch { player, .. } = ev.what else {
            return Ok(at_px);
        };
        let mut others = Vec::with_capacity(self.presses.len());
        for &(p, t, q) in &self.presses {
            others.push((p, t, self.map.point_to_field(q)?));
        }
        let at = self.map.point_to_field(at_px)?;
        let centre = square_centre(player, ev.t_s, at, &others);
        if centre == at {
            return Ok(at_px);
        }
        Ok(self.map.to_image(&[centre])?[0])
    }

    /// One touch timed by the onset network over the kept frames around it; as found
    /// when the network gives no time for it; `None` (dropped) when the frames looked at
    /// reach `TIMED_AFTER_S` past it and the network saw no finger land there
    /// (`never_landed`).
    pub(super) fn timed(&mut self, u: Untimed) -> Result<Option<Event>, HandsError> {
        let Untimed { mut ev, at_px } = u;
        if self.contact.is_none() || self.plate.is_none() {
            return Ok(Some(ev));
        }
        let at_px = self.square_centre_px(&ev, at_px)?;
        let scale = self.px_per_mm(self.map.point_to_field(at_px)?)?;
        let (from, to) = (ev.t_s - TIMED_BEFORE_S, ev.t_s + TIMED_AFTER_S);
        let t0 = std::time::Instant::now();
        let mut ps = Vec::new();
        for (f, t, _) in self.crops.iter().filter(|(_, t, _)| *t >= from && *t <= to) {
            if let Some(p) = self.landed_at(*f, at_px, scale)? {
                ps.push((*f, *t, p));
            }
        }
        let earlier = self
            .crops
            .iter()
            .rev()
            .filter(|(_, t, _)| *t < from && *t >= from - LOOKBACK_MAX_S)
            .map(|(f, t, _)| (*f, *t));
        follow_back(&mut ps, earlier, |f| self.landed_at(f, at_px, scale))?;
        self.stats.contact_s += t0.elapsed().as_secs_f64();
        self.stats.contact_runs += ps.len();
        let frame_s = self.frame_s.unwrap_or(0.0);
        let whole = frame_s > 0.0 && ps.last().is_some_and(|l| l.1 >= to - 1.5 * frame_s);
        // Never before an event already given out (the watermark keeps that from
        // happening; this keeps the file in time order whatever the frames kept).
        let onset = onset_from_landed(&ps).filter(|(t, _)| *t >= self.given_s);
        let proven = onset_proven(self.stats.onset_tried, self.stats.onset_landed);
        let looked = !ps.is_empty();
        if looked {
            self.stats.onset_tried += 1;
        }
        if whole && never_landed(&ps, (LANDED_MIN_S / frame_s).round() as usize) {
            return Ok(None);
        }
        if looked && proven && onset.is_none() {
            return Ok(None);
        }
        if let Some((t, [fa, fb])) = onset {
            let bracket = ps
                .windows(2)
                .find(|w| w[1].0 == fb)
                .map_or(0.0, |w| w[1].1 - w[0].1);
            ev.t_s = t;
            ev.frames = Some([fa as u64, fb as u64]);
            let sd = if sharp_onset(&ps, fb) {
                CONTACT_SHARP_SD_S
            } else {
                CONTACT_TIMED_SD_S
            };
            ev.t_err_s = (bracket / 12f64.sqrt()).hypot(sd);
            self.stats.onset_landed += 1;
        }
        Ok(Some(ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(ps: &[f64]) -> Vec<(usize, f64, f64)> {
        ps.iter()
            .enumerate()
            .map(|(i, &p)| (i, i as f64 / 240.0, p))
            .collect()
    }

    #[test]
    fn only_a_landing_with_no_hold_before_it_and_a_sharp_crossing_is_sharp() {
        let sharp = |ps: &[f64]| {
            let r = rows(ps);
            let (_, [_, fb]) = onset_from_landed(&r).expect("timed");
            sharp_onset(&r, fb)
        };
        assert!(sharp(&[0.0, 0.1, 0.05, 0.95, 1.0, 1.0, 1.0, 0.9]));
        // A slow crossing: 0.3 then 0.7.
        assert!(!sharp(&[0.0, 0.1, 0.3, 0.7, 1.0, 1.0, 1.0, 0.9]));
        // A hand held low over the card a frame before the finger came down.
        assert!(!sharp(&[0.0, 0.6, 0.1, 0.95, 1.0, 1.0, 1.0, 0.9]));
        // A frame not in `ps` is not sharp.
        assert!(!sharp_onset(&rows(&[0.0, 1.0]), 7));
    }

    #[test]
    fn a_touch_no_finger_landed_for_is_dropped_only_once_the_network_has_proven_itself() {
        // Too few touches yet to know the network on this recording.
        assert!(!onset_proven(ONSET_PROVEN_MIN - 1, ONSET_PROVEN_MIN - 1));
        assert!(onset_proven(ONSET_PROVEN_MIN, ONSET_PROVEN_MIN));
        // It sees fingers land for most touches here...
        assert!(onset_proven(100, 60));
        // ...or for too few: a look it does not know, and nothing is dropped.
        assert!(!onset_proven(100, 59));
    }

    #[test]
    fn the_finger_lands_where_the_longest_run_called_landed_begins() {
        // Held still over the card (called landed), coming down (not), pressing; the
        // crossing is interpolated.
        let (t, frames) =
            onset_from_landed(&rows(&[0.1, 0.7, 0.9, 0.2, 0.1, 0.3, 0.9, 0.95, 0.9])).unwrap();
        assert_eq!(frames, [5, 6]);
        assert!((t - (5.0 + 1.0 / 3.0) / 240.0).abs() < 1e-9, "{t}");
        // Of two runs as long, the earlier.
        let (_, frames) = onset_from_landed(&rows(&[0.1, 0.8, 0.8, 0.1, 0.1, 0.8, 0.8])).unwrap();
        assert_eq!(frames, [0, 1]);
    }

    #[test]
    fn a_landing_the_network_lets_go_of_for_one_frame_is_one_landing() {
        // Pressing from frame 1, one frame under 0.5 at 2 and lifted at 5: 4 frames, as
        // long as the press from 6, and earlier.
        let ps = rows(&[0.1, 0.9, 0.4, 0.9, 0.9, 0.1, 0.9, 0.9, 0.9, 0.9]);
        assert_eq!(onset_from_landed(&ps).unwrap().1, [0, 1]);
        // Two frames under it split the landing: the longer run is the press.
        let ps = rows(&[
            0.1, 0.9, 0.4, 0.4, 0.9, 0.9, 0.9, 0.1, 0.1, 0.1, 0.9, 0.9, 0.9, 0.9,
        ]);
        assert_eq!(onset_from_landed(&ps).unwrap().1, [9, 10]);
    }

    #[test]
    fn no_landing_seen_gives_no_time() {
        assert_eq!(onset_from_landed(&rows(&[0.1, 0.2, 0.3, 0.2])), None);
        // Landed already before the first frame looked at.
        assert_eq!(onset_from_landed(&rows(&[0.9, 0.8, 0.2, 0.9])), None);
    }

    #[test]
    fn a_finger_landed_at_the_first_frame_is_followed_back_to_where_it_came_down() {
        // Frames 10.. looked at, landed from the first; the network's calls before them.
        let before = |f| match f {
            9 => 0.95,
            8 => 0.8,
            7 => 0.3,
            _ => 0.9,
        };
        let mut asked = Vec::new();
        let mut ps: Vec<_> = rows(&[0.9, 0.95, 1.0, 0.9])
            .into_iter()
            .map(|(i, _, p)| (i + 10, (i + 10) as f64 / 240.0, p))
            .collect();
        let earlier = (4..10).rev().map(|f| (f, f as f64 / 240.0));
        follow_back::<()>(&mut ps, earlier, |f| {
            asked.push(f);
            Ok(Some(before(f)))
        })
        .unwrap();
        // Followed back to frame 7, the first not yet landed, and no further.
        assert_eq!(asked, [9, 8, 7]);
        let (t, frames) = onset_from_landed(&ps).unwrap();
        assert_eq!(frames, [7, 8]);
        assert!((t - (7.0 + 0.2 / 0.5) / 240.0).abs() < 1e-9, "{t}");
        // A later run longer than the one at the first frame: the network already timed
        // it, and nothing is followed back.
        let mut ps = rows(&[0.9, 0.2, 0.2, 0.9, 0.9, 0.9]);
        follow_back::<()>(&mut ps, [(99, 0.0)], |_| panic!("not asked")).unwrap();
        assert_eq!(ps.len(), 6);
        // A frame the network cannot see ends the walk: no time, as before.
        let mut ps = rows(&[0.9, 0.9]);
        follow_back::<()>(&mut ps, [(99, 0.0)], |_| Ok(None)).unwrap();
        assert_eq!(onset_from_landed(&ps), None);
    }

    #[test]
    fn a_touch_with_a_rivals_touch_beside_it_is_timed_up_its_own_players_finger() {
        let at = Pt::new(-212.0, -50.0);
        // Alone, or with only its own player's other touches: where it presses.
        assert_eq!(square_centre(Player::A, 25.5, at, &[]), at);
        let own = [(Player::A, 25.51, Pt::new(-210.0, -45.0))];
        assert_eq!(square_centre(Player::A, 25.5, at, &own), at);
        // B's touch found 4 ms later pressing 5 mm away (both found on one finger, as
        // in held-out hard-7301 reading 4): each square moves towards its own side.
        let b_at = Pt::new(-215.0, -48.0);
        let both = [(Player::A, 25.5, at), (Player::B, 25.504, b_at)];
        let a = square_centre(Player::A, 25.5, at, &both);
        assert_eq!((a.x_mm, a.y_mm), (at.x_mm, at.y_mm - RIVAL_SHIFT_MM));
        let b = square_centre(Player::B, 25.504, b_at, &both);
        assert_eq!((b.x_mm, b.y_mm), (b_at.x_mm, b_at.y_mm + RIVAL_SHIFT_MM));
        // A rival's touch too long before, or pressing outside the square: no move.
        let early = [(Player::B, 25.5 - RIVAL_NEAR_S - 0.001, b_at)];
        assert_eq!(square_centre(Player::A, 25.5, at, &early), at);
        let far = [(
            Player::B,
            25.5,
            Pt::new(-212.0, -50.0 + RIVAL_NEAR_MM + 1.0),
        )];
        assert_eq!(square_centre(Player::A, 25.5, at, &far), at);
    }

    #[test]
    fn a_touch_where_no_finger_stayed_down_never_landed() {
        // Flickers shorter than a press.
        assert!(never_landed(&rows(&[0.1, 0.9, 0.2, 0.6, 0.7, 0.1]), 3));
        assert!(never_landed(&rows(&[0.1, 0.2, 0.3]), 3));
        // A press as long as a finger stays down.
        assert!(!never_landed(&rows(&[0.1, 0.9, 0.8, 0.7, 0.1]), 3));
        // Down already at the first frame, lifting soon after: a press that began
        // before the frames looked at.
        assert!(!never_landed(&rows(&[0.9, 0.6, 0.1, 0.2]), 3));
    }
}

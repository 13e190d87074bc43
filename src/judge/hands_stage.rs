//! The hands stage of `run`: every decoded frame through the hand source, told first
//! where the card tracker placed the cards a fixed number of frames before (`CardsBehind`),
//! and passed on to the cards and the judge with what the hands saw (`Staged`).
//!
//! Owns that thread's loop and its timing; rules nothing and opens nothing.

use super::{thread_cpu_s, HandSource, HandsSnapshot, JudgeError, Places, HURRY_BACKLOG_FRAMES};
use crate::capture::{self, SourceItem};
use crate::rules::model::Event;
use crate::track::HandSeen;
use opencv::core::Mat;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::Instant;

/// The cards' places after a frame (its index; `None` when unchanged since the last).
pub(super) type CardPlaces = (usize, Option<Places>);

/// The card tracker's places as the hands stage sees them: the hands stage runs ahead of
/// the tracker, so it is told where the cards lay `lag` frames before the frame it
/// perceives, waiting for the tracker when it is further behind than that. A fixed lag
/// in frames, not whatever the tracker has reached, keeps a run's hands, and so its
/// rulings, the same from run to run. With `lag` above the frames queued between the
/// two stages the hands never wait.
pub(super) struct CardsBehind {
    rx: crossbeam_channel::Receiver<CardPlaces>,
    lag: usize,
    /// Places received and not yet passed on, oldest first.
    queued: VecDeque<CardPlaces>,
    /// The last frame the tracker is known to have placed the cards after.
    known: Option<usize>,
    /// Frames passed on to the tracker and not yet known placed, in order.
    sent: VecDeque<usize>,
    open: bool,
}

impl CardsBehind {
    pub(super) fn new(rx: crossbeam_channel::Receiver<CardPlaces>, lag: usize) -> CardsBehind {
        CardsBehind {
            rx,
            lag: lag.max(1),
            queued: VecDeque::new(),
            known: None,
            sent: VecDeque::new(),
            open: true,
        }
    }

    fn take(&mut self, m: CardPlaces) {
        self.known = Some(m.0);
        while self.sent.front().is_some_and(|f| *f <= m.0) {
            self.sent.pop_front();
        }
        self.queued.push_back(m);
    }

    /// Before `frame` is perceived: the places as of `lag` frames before it.
    fn before(&mut self, frame: usize, h: &mut (dyn HandSource + 'static)) {
        while let Ok(m) = self.rx.try_recv() {
            self.take(m);
        }
        // Every frame sent at least `lag` before this one must have been placed.
        while self.open && self.sent.front().is_some_and(|f| f + self.lag <= frame) {
            match self.rx.recv() {
                Ok(m) => self.take(m),
                Err(_) => self.open = false,
            }
        }
        while self.queued.front().is_some_and(|m| m.0 + self.lag <= frame) {
            if let Some((_, Some(cards))) = self.queued.pop_front() {
                h.set_cards(cards);
            }
        }
    }

    /// `frame` went on to the tracker.
    fn sent(&mut self, frame: usize) {
        if self.known.is_none_or(|k| frame > k) {
            self.sent.push_back(frame);
        }
    }
}

/// When the hands stage took a frame and was done with it, and the frames then waiting.
#[derive(Debug, Clone, Copy)]
pub(super) struct HandsAt {
    pub(super) start: Instant,
    pub(super) end: Instant,
    pub(super) cpu_s: f64,
    pub(super) waiting: usize,
}

/// What the hands stage passes on, in frame order.
pub(super) enum Staged {
    Frame {
        frame: capture::Frame,
        seen: Vec<HandSeen>,
        events: Vec<Event>,
        /// Touches the hand source holds back after this frame.
        held: Vec<Event>,
        /// The hand source's state after this frame (for a checkpoint).
        state: Option<HandsSnapshot>,
        at: HandsAt,
    },
    Gap(capture::Gap),
    Error(JudgeError),
    /// The video ended: the hand events still pending.
    Finished(Vec<Event>),
}

/// A resumed run's hand state, restored once the frames it keeps are decoded again.
pub(super) struct HandsRestore {
    pub(super) state: serde_json::Value,
    /// The frames it keeps, at or before `through`: the reader starts at the first.
    pub(super) frames: BTreeSet<usize>,
    /// The last frame the saved run perceived: the frames up to it only rebuild the
    /// state, and go no further.
    pub(super) through: usize,
}

impl HandsRestore {
    /// Takes in one frame decoded again; true once the last one (`through`) is in.
    fn take(&self, f: &capture::Frame, kept: &mut BTreeMap<usize, Arc<Mat>>) -> bool {
        if self.frames.contains(&f.index) {
            kept.insert(f.index, Arc::clone(&f.bgr));
        }
        f.index >= self.through
    }
}

/// The hands stage: every decoded frame through the hand source (when there is one), on
/// to the cards and the judge with what the hands saw. After a resume (`restore`), the
/// frames up to the checkpoint rebuild the hand source's state and go no further.
/// Returns the stage's CPU time, s.
pub(super) fn perceive_hands(
    mut source: capture::FrameSource,
    mut hands: Option<&mut (dyn HandSource + 'static)>,
    mut restore: Option<HandsRestore>,
    mut cards: Option<CardsBehind>,
    tx: crossbeam_channel::Sender<Staged>,
    realtime: bool,
    timed: bool,
) -> f64 {
    let cpu0 = thread_cpu_s();
    let mut kept: BTreeMap<usize, Arc<Mat>> = BTreeMap::new();
    // The state restored at once when it keeps no frame, else once they are decoded.
    if let Some(r) = restore.take_if(|r| r.frames.is_empty()) {
        if !restored(hands.as_deref_mut(), r, &mut kept, &tx) {
            return thread_cpu_s() - cpu0;
        }
    }
    while let Some(item) = source.next() {
        if let Some(r) = restore.as_ref() {
            match &item {
                // A gap among the frames decoded again lies before the checkpoint.
                SourceItem::Gap(_) => continue,
                SourceItem::Frame(f) => {
                    if r.take(f, &mut kept) {
                        if let Some(r) = restore.take() {
                            if !restored(hands.as_deref_mut(), r, &mut kept, &tx) {
                                return thread_cpu_s() - cpu0;
                            }
                        }
                    }
                    continue;
                }
                SourceItem::Error(_) => {}
            }
        }
        // Live, behind the camera: the hands do less until the frames waiting are few.
        let waiting = source.waiting();
        let behind = realtime && waiting > HURRY_BACKLOG_FRAMES;
        let start = Instant::now();
        let cpu_start = if timed { thread_cpu_s() } else { 0.0 };
        let at = move || HandsAt {
            start,
            end: Instant::now(),
            cpu_s: if timed {
                thread_cpu_s() - cpu_start
            } else {
                0.0
            },
            waiting,
        };
        let staged = match item {
            SourceItem::Frame(f) => match hands.as_deref_mut() {
                Some(h) => match placed_then_pushed(h, cards.as_mut(), behind, &f) {
                    Ok((seen, events)) => Staged::Frame {
                        held: h.held(),
                        state: h.state(),
                        frame: f,
                        seen,
                        events,
                        at: at(),
                    },
                    Err(e) => Staged::Error(e),
                },
                None => Staged::Frame {
                    frame: f,
                    seen: Vec::new(),
                    events: Vec::new(),
                    held: Vec::new(),
                    state: None,
                    at: at(),
                },
            },
            SourceItem::Gap(g) => Staged::Gap(g),
            SourceItem::Error(e) => Staged::Error(e.into()),
        };
        let stop = matches!(staged, Staged::Error(_));
        if tx.send(staged).is_err() || stop {
            return thread_cpu_s() - cpu0;
        }
    }
    // A video that ends before the checkpoint's frame: the restore says what is missing.
    if let Some(r) = restore.take() {
        if !restored(hands.as_deref_mut(), r, &mut kept, &tx) {
            return thread_cpu_s() - cpu0;
        }
    }
    let last = hands.map(|h| h.finish()).unwrap_or_default();
    let _ = tx.send(Staged::Finished(last));
    thread_cpu_s() - cpu0
}

/// Restores the hand source's saved state from the frames decoded again; on failure the
/// error goes on to the judge and false comes back.
fn restored(
    hands: Option<&mut (dyn HandSource + 'static)>,
    r: HandsRestore,
    kept: &mut BTreeMap<usize, Arc<Mat>>,
    tx: &crossbeam_channel::Sender<Staged>,
) -> bool {
    let done = match hands {
        Some(h) => h.restore(&r.state, kept),
        None => Ok(()),
    };
    kept.clear();
    match done {
        Ok(()) => true,
        Err(e) => {
            let _ = tx.send(Staged::Error(e));
            false
        }
    }
}

/// One frame through the hand source, told first where the cards lay `lag` frames before
/// it (when the tracker feeds it) and whether frames wait behind it.
fn placed_then_pushed(
    h: &mut (dyn HandSource + 'static),
    cards: Option<&mut CardsBehind>,
    behind: bool,
    f: &capture::Frame,
) -> Result<(Vec<HandSeen>, Vec<Event>), JudgeError> {
    if let Some(c) = cards {
        c.before(f.index, h);
        c.sent(f.index);
    }
    hurried_push(h, behind, f)
}

/// One frame through the hand source, told first whether frames wait behind it.
fn hurried_push(
    h: &mut (dyn HandSource + 'static),
    behind: bool,
    f: &capture::Frame,
) -> Result<(Vec<HandSeen>, Vec<Event>), JudgeError> {
    h.hurry(behind);
    h.push(f.index, f.t_s, &f.bgr)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::geometry::Pt;
    use crate::rules::model::CardRef;
    use opencv::core::Mat;

    /// A hand source that notes which cards it was given before each frame.
    #[derive(Default)]
    struct Noting {
        given: Vec<u8>,
    }

    impl HandSource for Noting {
        fn push(
            &mut self,
            _frame: usize,
            _t_s: f64,
            _bgr: &std::sync::Arc<Mat>,
        ) -> Result<(Vec<HandSeen>, Vec<Event>), JudgeError> {
            Ok((Vec::new(), Vec::new()))
        }
        fn finish(&mut self) -> Vec<Event> {
            Vec::new()
        }
        fn describe(&self) -> String {
            "noting".into()
        }
        fn set_cards(&mut self, cards: Vec<(CardRef, [Pt; 4])>) {
            self.given = cards.iter().filter_map(|(c, _)| c.poem()).collect();
        }
    }

    fn places(poem: u8) -> Vec<(CardRef, [Pt; 4])> {
        vec![(CardRef::Poem(poem), [Pt::new(0.0, 0.0); 4])]
    }

    #[test]
    fn the_hands_get_the_cards_a_fixed_lag_behind_whenever_the_tracker_sent_them() {
        let lag = 3;
        // The tracker far ahead (all sent at once) or in step (sent as it goes) must give
        // the hands the same cards at every frame.
        let mut seen_ahead = Vec::new();
        let mut seen_in_step = Vec::new();
        for ahead in [true, false] {
            let (tx, rx) = crossbeam_channel::unbounded();
            let mut behind = CardsBehind::new(rx, lag);
            let mut h = Noting::default();
            let send = |f: usize| {
                // Cards change on even frames only; odd frames say "unchanged".
                let _ = tx.send((f, f.is_multiple_of(2).then(|| places(f as u8 + 1))));
            };
            if ahead {
                (0..12).for_each(send);
            }
            let mut seen = Vec::new();
            for f in 0..12 {
                behind.before(f, &mut h);
                behind.sent(f);
                seen.push(h.given.first().copied());
                if !ahead {
                    send(f);
                }
            }
            if ahead {
                seen_ahead = seen;
            } else {
                seen_in_step = seen;
            }
        }
        assert_eq!(seen_ahead, seen_in_step);
        // Frame f sees the cards of the last even frame at or before f - lag.
        let want: Vec<Option<u8>> = (0..12usize)
            .map(|f| f.checked_sub(lag).map(|g| (g - g % 2) as u8 + 1))
            .collect();
        assert_eq!(seen_in_step, want);
    }

    #[test]
    fn the_hands_stop_waiting_when_the_tracker_has_gone() {
        let (tx, rx) = crossbeam_channel::unbounded::<CardPlaces>();
        let mut behind = CardsBehind::new(rx, 1);
        let mut h = Noting::default();
        behind.sent(0);
        drop(tx);
        // Frame 0 went to the tracker, which ended without placing it: no wait forever.
        behind.before(5, &mut h);
        assert!(h.given.is_empty());
    }
}

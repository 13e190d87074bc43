//! The referee from video, in lockstep: a capture thread decodes frames into a bounded
//! queue; this stage passes each frame to the hands (through `HandSource`) and to the
//! card tracker (`track`), collects their events, and rules each reading with
//! `rules::Referee::judge` as soon as its window has closed, while later frames are still
//! being decoded. Memory holds a few frames and one window's events, whatever the length.
//!
//! Owns the order of work and the `needs_review` the camera adds (dropped frames, no hand
//! model). Does not open files other than through `capture` and its hand sources, and
//! writes nothing itself: rulings go to an `Output`.
//!
//! The files: `hands_stage` (the hands thread, told where the tracker placed the cards),
//! `motion_touches` (touches inferred from cards moving, held for the hands' own),
//! `windows` (the readings' windows closed and ruled), `model_hands` and `label_hands`
//! (the two hand sources).

mod hands_stage;
pub mod label_hands;
pub mod model_hands;
mod motion_touches;
pub mod windows;

use crate::capture::{self, CaptureError, ReaderOptions, VideoReader};
use crate::detect::layout::MeasuredLayout;
use crate::field::FieldMap;
use crate::rules::geometry::Pt;
use crate::rules::model::{CardRef, Event, MatchResult, Reading, SavedCard};
use crate::track::{CardTracker, HandSeen, TrackError, TrackerState};
use opencv::core::Mat;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use hands_stage::{perceive_hands, CardPlaces, CardsBehind, HandsRestore, Staged};
pub use label_hands::LabelHands;
use motion_touches::MotionTouches;
pub use motion_touches::{MOTION_TOUCH_HOLD_S, MOTION_TOUCH_MATCH_S};
pub use windows::{Ruled, Windows, CLOSE_MARGIN_S, NO_HAND_MODEL};

/// Decoded frames held between the capture thread and perception (each a full image).
pub const QUEUE_FRAMES: usize = 8;
/// The same, and between perception and the judge, in `live`: each frame queued is a
/// frame period of delay before a call, and a camera's frames that find the queue full
/// are dropped rather than waited for (8 frames held calls 40-54 ms behind the frames).
pub const LIVE_QUEUE_FRAMES: usize = 3;
/// Frames a camera may deliver ahead of the hands in `live`: a tenth of a second at 240
/// fps. A burst of work (a hand network run, a change narrowed down between runs) is
/// caught up afterwards instead of costing frames; while more than
/// `HURRY_BACKLOG_FRAMES` wait, the hand source is asked to hurry (`HandSource::hurry`).
pub const LIVE_CAPTURE_QUEUE_FRAMES: usize = 24;
pub const HURRY_BACKLOG_FRAMES: usize = 2;

/// What can go wrong while refereeing from video.
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    #[error(transparent)]
    Capture(#[from] CaptureError),
    #[error(transparent)]
    Track(#[from] TrackError),
    /// An input file (labels, readings against the video) cannot be used.
    #[error("{path}: {place}: {problem}")]
    Input {
        path: PathBuf,
        place: String,
        problem: String,
    },
    /// The hand stage failed.
    #[error("hands: {0}")]
    Hands(String),
    /// A saved checkpoint (`analyze --resume`) that does not fit this run.
    #[error("{0}")]
    Checkpoint(String),
    #[error("writing: {0}")]
    Io(#[from] std::io::Error),
}

impl JudgeError {
    pub fn is_bad_input(&self) -> bool {
        match self {
            JudgeError::Capture(e) => e.is_bad_input(),
            JudgeError::Track(e) => e.is_bad_input(),
            JudgeError::Input { .. } | JudgeError::Checkpoint(_) => true,
            JudgeError::Hands(_) | JudgeError::Io(_) => false,
        }
    }
}

/// Where hand events come from: the hand model (`hands::Perceiver`), the simulator's
/// labels, or nothing. One decoded BGR frame at a time, in order.
pub trait HandSource: Send {
    /// The frame's hands (for who drove a card) and the events now final (touch with
    /// `direct: true`, enter, leave), ordered by `t_s`.
    fn push(
        &mut self,
        frame: usize,
        t_s: f64,
        bgr: &std::sync::Arc<Mat>,
    ) -> Result<(Vec<HandSeen>, Vec<Event>), JudgeError>;
    /// End of video: events still pending.
    fn finish(&mut self) -> Vec<Event>;
    /// Frames are waiting (live, behind the camera): do less per frame until told
    /// otherwise, at some cost in timing, rather than have frames dropped.
    fn hurry(&mut self, _hurried: bool) {}
    /// The cards a fingertip can press now (poem, corners in field mm), as the card
    /// tracker placed them a fixed number of frames before the frame pushed next
    /// (`CardsBehind`).
    fn set_cards(&mut self, _cards: Vec<(CardRef, [Pt; 4])>) {}
    /// Its touches of cards that do not move are a fingertip's contact alone (a contact
    /// network), not seen as surely as a card set moving.
    fn touches_from_fingertips(&self) -> bool {
        false
    }
    /// Touches it has made and still holds back (to measure how the hand moved after
    /// them), for a take called early (`Windows::early_take`).
    fn held(&self) -> Vec<Event> {
        Vec::new()
    }
    /// What it is, for the report.
    fn describe(&self) -> String;
    /// Its state after the frame pushed last, to resume a run exactly; `None` when it
    /// has none to save (a resumed run then starts it afresh at the checkpoint). Asked
    /// after every frame, so cheap: the state is made into JSON only for a checkpoint.
    fn state(&self) -> Option<HandsSnapshot> {
        None
    }
    /// Continues from a saved state, given the frames it names (`HandsSnapshot::frames`)
    /// decoded again.
    fn restore(
        &mut self,
        _state: &serde_json::Value,
        _frames: &BTreeMap<usize, Arc<Mat>>,
    ) -> Result<(), JudgeError> {
        Ok(())
    }
}

/// A hand source's state after one frame (`HandSource::state`): the frames whose pixels
/// it keeps, by number (a resumed run decodes them again), and the rest, made into JSON
/// only when a checkpoint is written.
pub struct HandsSnapshot {
    pub frames: Vec<usize>,
    save: Box<dyn FnOnce() -> Result<serde_json::Value, JudgeError> + Send>,
}

impl HandsSnapshot {
    pub fn new(
        frames: Vec<usize>,
        save: impl FnOnce() -> Result<serde_json::Value, JudgeError> + Send + 'static,
    ) -> HandsSnapshot {
        HandsSnapshot {
            frames,
            save: Box::new(save),
        }
    }

    /// A state that is JSON already and keeps no frames.
    pub fn json(state: serde_json::Value) -> HandsSnapshot {
        HandsSnapshot::new(Vec::new(), move || Ok(state))
    }

    /// The state, as JSON.
    pub fn save(self) -> Result<serde_json::Value, JudgeError> {
        (self.save)()
    }
}

/// The cards a fingertip can press: each card and its corners in field mm.
pub type Places = Vec<(CardRef, [Pt; 4])>;
/// The same, as a checkpoint keeps it.
pub type SavedPlaces = Vec<(SavedCard, [Pt; 4])>;

/// Where a run stood after a ruling, enough to continue it from the next frame with the
/// same results as an uninterrupted run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The last frame perceived, and its time.
    pub frame: usize,
    pub t_s: f64,
    /// Readings ruled so far.
    pub ruled: usize,
    /// Events made but not yet ruled on.
    pub pending: Vec<Event>,
    pub tracker: TrackerState,
    pub hands: Option<serde_json::Value>,
    /// The frames whose pixels the hands' state keeps, decoded again on resuming.
    #[serde(default)]
    pub hands_frames: Vec<usize>,
    /// The cards' places the tracker sent to the hands in the last frames, not yet
    /// given to them (`CardsBehind`): frame and places.
    #[serde(default)]
    pub cards_sent: Vec<(usize, SavedPlaces)>,
    /// The places last sent (before a search taken in at this frame moved a card): the
    /// next frame's are sent when they differ from these.
    #[serde(default)]
    pub places_sent: Option<SavedPlaces>,
    pub gaps: usize,
    /// Touches inferred from card motion, held to be matched with the hands' touches.
    #[serde(default)]
    pub held: Vec<Event>,
}

/// A checkpoint and the events of the readings ruled before it (to rebuild the judge).
#[derive(Debug, Clone)]
pub struct Resume {
    pub checkpoint: Checkpoint,
    pub replay: Vec<Event>,
}

/// What the pipeline tells its caller as it goes.
pub trait Output {
    /// A reading was ruled (its window closed); `frame` is the last frame perceived.
    fn ruled(&mut self, r: &Ruled, frame: usize) -> Result<(), JudgeError>;
    /// A reading's take, called before its window closes (`RunOptions::early_takes`),
    /// on the frame at `at_s`; `delay_s` is how long after its deciding event was due on
    /// the recording's clock it was called (realtime only).
    fn early(
        &mut self,
        _r: &crate::rules::model::Ruling,
        _at_s: f64,
        _delay_s: Option<f64>,
    ) -> Result<(), JudgeError> {
        Ok(())
    }
    /// A frame was perceived (for progress).
    fn frame(&mut self, _frame: usize, _t_s: f64) {}
    /// When each stage worked on a frame released in real time (`live`), to find which
    /// stage a delay builds up in.
    fn timed(&mut self, _t: &StageTimes) {}
    /// The video ended: the match result.
    fn finished(&mut self, result: &MatchResult) -> Result<(), JudgeError>;
    /// Where the run stands, after the rulings just given.
    fn checkpoint(&mut self, _cp: &Checkpoint) -> Result<(), JudgeError> {
        Ok(())
    }
}

/// A reading as it arrives while the match runs, or why the timeline cannot be used.
#[derive(Debug, Clone)]
pub enum ReadingMsg {
    Reading(Reading),
    Bad {
        path: PathBuf,
        place: String,
        problem: String,
    },
}

/// When the stages worked on one frame, ms after the frame was released (realtime).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageTimes {
    pub frame: usize,
    pub t_s: f64,
    /// Decoded frames waiting for the hands when the hands took this one.
    pub waiting: usize,
    pub hands_start_ms: f64,
    pub hands_end_ms: f64,
    /// CPU time the hands stage spent on the frame (less than its wall time when the
    /// stage waited for a core).
    pub hands_cpu_ms: f64,
    /// The cards and the judge took the frame, the tracker was done with it, the judge
    /// was done with it.
    pub judge_start_ms: f64,
    pub tracker_end_ms: f64,
    pub judge_end_ms: f64,
}

/// How to run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Frames held between perception and the judge (and after capture, unless
    /// `capture_queue_frames` says otherwise).
    pub queue_frames: usize,
    /// Frames held between capture and the hands, if not `queue_frames`.
    pub capture_queue_frames: Option<usize>,
    /// Release frames no faster than the recording's rate (live from a file).
    pub realtime: bool,
    /// Readings that arrive while the video runs (live).
    pub more_readings: Option<crossbeam_channel::Receiver<ReadingMsg>>,
    /// Readings whose poem is not known surely (heard from the sound track as only the
    /// closest match), by `seq`, with the reason: their rulings are marked for review.
    pub unsure_poems: BTreeMap<u32, String>,
    /// Cards the layout could not name, named by their best match once it was a poem to
    /// be read (`MeasuredLayout::name_from_readings`), by poem, with the reason: the
    /// rulings of their readings are marked for review.
    pub named_by_reading: BTreeMap<u8, String>,
    /// Call each reading's take as soon as the events show one (`Output::early`), before
    /// its window closes (live).
    pub early_takes: bool,
    /// Tell the output when each stage worked on each frame (`Output::timed`, realtime).
    pub stage_times: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            queue_frames: QUEUE_FRAMES,
            capture_queue_frames: None,
            realtime: false,
            more_readings: None,
            unsure_poems: BTreeMap::new(),
            named_by_reading: BTreeMap::new(),
            early_takes: false,
            stage_times: false,
        }
    }
}

/// What a run did.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    pub frames: usize,
    pub video_s: f64,
    pub wall_s: f64,
    pub rulings: usize,
    pub unseen_gaps: usize,
    /// CPU time of the hands stage (its own thread), s.
    pub hands_cpu_s: f64,
    /// CPU time of the cards and the judge (the calling thread), s.
    pub judge_cpu_s: f64,
}

/// Checks the readings against the video before any work: every reading must begin
/// inside it (`readings` from `readings_path`).
pub fn check_readings(
    readings: &[Reading],
    readings_path: &std::path::Path,
    video_s: f64,
) -> Result<(), JudgeError> {
    if video_s <= 0.0 {
        return Ok(());
    }
    if let Some((i, r)) = readings
        .iter()
        .enumerate()
        .find(|(_, r)| r.kami_start_s >= video_s)
    {
        return Err(JudgeError::Input {
            path: readings_path.to_path_buf(),
            place: format!("line {}", i + 1),
            problem: format!(
                "reading {} begins at {:.3} s, past the video's end ({video_s:.3} s)",
                r.seq, r.kami_start_s
            ),
        });
    }
    Ok(())
}

/// What `run` referees: the frames, the layout measured on them and its field map, and
/// the readings known before the first frame.
pub struct Refereed<'a> {
    pub reader: VideoReader,
    pub measured: &'a MeasuredLayout,
    pub map: FieldMap,
    pub readings: Vec<Reading>,
}

/// Referees a recording: frames from `reader`, cards from `measured` (mapped by `map`),
/// hands from `hands` (or none), readings ruled into `out` as their windows close.
pub fn run(
    Refereed {
        reader,
        measured,
        map,
        readings,
    }: Refereed,
    mut hands: Option<Box<dyn HandSource>>,
    namer: Option<crate::detect::naming::Namer>,
    opts: &RunOptions,
    resume: Option<Resume>,
    out: &mut dyn Output,
) -> Result<RunSummary, JudgeError> {
    let start = Instant::now();
    let judge_cpu0 = thread_cpu_s();
    let fps = reader.fps;
    let mut tracker = CardTracker::new(measured, map, namer, fps)?;
    // Live: a card found by a search is taken in as soon as the search ends.
    tracker.eager_search(opts.realtime);
    let mut windows = Windows::new(&measured.layout, readings, hands.is_some());
    windows.unsure_poems(opts.unsure_poems.clone());
    windows.named_by_reading(opts.named_by_reading.clone());
    windows.fingertip_touches(hands.as_ref().is_some_and(|h| h.touches_from_fingertips()));
    let mut frames = 0usize;
    let mut last_t = 0.0;
    let mut gaps = 0usize;
    let mut motion = MotionTouches::default();
    let mut reader_opts = ReaderOptions {
        queue: opts.capture_queue_frames.unwrap_or(opts.queue_frames),
        realtime: opts.realtime,
        ..ReaderOptions::default()
    };
    let resumed = resume.is_some();
    let cards_fed = hands.is_some();
    // Where the cards lie, from the tracker back to the hands a fixed number of frames
    // behind (`CardsBehind`).
    let cards_lag = opts.queue_frames + 2;
    let (card_tx, card_rx) = crossbeam_channel::unbounded::<CardPlaces>();
    // The places sent to the hands and not yet given to them, for a checkpoint.
    let mut cards_sent: VecDeque<(usize, Places)> = VecDeque::new();
    let mut hands_restore = None;
    let mut places_sent: Option<Places> = None;
    if let Some(r) = resume {
        let cp = r.checkpoint;
        windows.replay(r.replay, cp.ruled);
        windows.add(cp.pending);
        tracker.restore(cp.tracker).map_err(|e| match e {
            TrackError::State(s) => JudgeError::Checkpoint(s),
            e => e.into(),
        })?;
        frames = cp.frame + 1;
        last_t = cp.t_s;
        gaps = cp.gaps;
        motion.held = cp.held;
        reader_opts.skip = cp.frame + 1;
        reader_opts.prev_t_s = Some(cp.t_s);
        places_sent = cp
            .places_sent
            .map(|p| p.into_iter().map(|(c, q)| (c.into(), q)).collect());
        match (hands.is_some(), cp.hands) {
            (true, Some(state)) => {
                // The hands continue where they stood, once the frames they keep are
                // decoded again (the reader starts at the first of them); the places
                // sent to them and not yet given come to them at the same frames.
                let keep: BTreeSet<usize> = cp
                    .hands_frames
                    .iter()
                    .copied()
                    .filter(|f| *f <= cp.frame)
                    .collect();
                if let Some(first) = keep.first() {
                    reader_opts.skip = *first;
                    reader_opts.prev_t_s = None;
                }
                for (f, places) in cp.cards_sent {
                    let places: Places = places.into_iter().map(|(c, q)| (c.into(), q)).collect();
                    let _ = card_tx.send((f, Some(places.clone())));
                    cards_sent.push_back((f, places));
                }
                hands_restore = Some(HandsRestore {
                    state,
                    frames: keep,
                    through: cp.frame,
                });
            }
            (true, None) => {
                // Hands with no saved state start afresh, told where the cards lie now.
                let _ = card_tx.send((0, Some(tracker.places_mm()?)));
            }
            (false, _) => {}
        }
    }
    let source = capture::spawn_reader(reader, reader_opts);
    let clock = source.clock();
    let (tx, rx) = crossbeam_channel::bounded::<Staged>(opts.queue_frames.max(1));
    let mut last_places = match places_sent {
        Some(p) => Some(p),
        None if resumed => Some(tracker.places_mm()?),
        None => None,
    };
    let cards_behind = cards_fed.then(|| CardsBehind::new(card_rx, cards_lag));
    let mut hands_cpu_s = 0.0;
    let walk = std::thread::scope(|scope| -> Result<(), JudgeError> {
        // Hands run on their own thread, a frame ahead of the cards and the judge: the
        // card tracker needs the hands of its frame, the hands get the cards' places back
        // a fixed number of frames later (`CardsBehind`).
        let hands_stage = std::thread::Builder::new()
            .name("hands".into())
            .spawn_scoped(scope, || {
                perceive_hands(
                    source,
                    hands.as_deref_mut(),
                    hands_restore,
                    cards_behind,
                    tx,
                    opts.realtime,
                    opts.realtime && opts.stage_times,
                )
            })
            .map_err(JudgeError::Io)?;
        // The touches the hands stage holds back as of the latest frame.
        let mut hands_held: Vec<Event> = Vec::new();
        let walked = (|| -> Result<(), JudgeError> {
            // Dropped when the walk ends, so that the hands stage never waits on it.
            let card_tx = card_tx;
            for item in rx.iter() {
                let judge_start = Instant::now();
                let (f, seen, hand_events, hand_state, hands_at) = match item {
                    Staged::Frame {
                        frame,
                        seen,
                        events,
                        held,
                        state,
                        at,
                    } => {
                        hands_held = held;
                        (frame, seen, events, state, at)
                    }
                    Staged::Gap(g) => {
                        gaps += 1;
                        let what = if g.duplicate {
                            "a repeated frame".to_string()
                        } else {
                            format!("{} dropped frame(s)", g.missing)
                        };
                        windows.add([Event::unseen(g.from_s, g.to_s, what)]);
                        continue;
                    }
                    Staged::Error(e) => return Err(e),
                    Staged::Finished(last) => {
                        motion.saw(&last);
                        windows.add(last);
                        windows.add(motion.hold(tracker.finish()?));
                        break;
                    }
                };
                if let Some(rx) = opts.more_readings.as_ref() {
                    while let Ok(m) = rx.try_recv() {
                        match m {
                            ReadingMsg::Reading(r) => windows.push_reading(r),
                            ReadingMsg::Bad {
                                path,
                                place,
                                problem,
                            } => {
                                return Err(JudgeError::Input {
                                    path,
                                    place,
                                    problem,
                                })
                            }
                        }
                    }
                }
                motion.saw(&hand_events);
                windows.add(hand_events);
                let card_events = tracker.push(f.index, f.t_s, &f.bgr, &seen)?;
                let tracker_end = Instant::now();
                if cards_fed {
                    let now = tracker.places_mm()?;
                    let changed = last_places.as_ref() != Some(&now);
                    let _ = card_tx.send((f.index, changed.then(|| now.clone())));
                    if changed {
                        cards_sent.push_back((f.index, now.clone()));
                    }
                    // The hands have those of frames `cards_lag` before their next one.
                    while cards_sent
                        .front()
                        .is_some_and(|(g, _)| g + cards_lag <= f.index)
                    {
                        cards_sent.pop_front();
                    }
                    last_places = Some(now);
                }
                windows.add(motion.hold(card_events));
                windows.add(motion.release(f.t_s));
                let mut ruled = windows.advance(tracker.final_before_s(f.t_s));
                if !ruled.is_empty() {
                    // A checkpoint follows: a search still under way is taken in now, at
                    // a frame fixed by the readings (the same in a resumed run), and
                    // what it found may close a further window.
                    windows.add(motion.hold(tracker.apply_search()?));
                    ruled.extend(windows.advance(f.t_s));
                }
                if opts.early_takes {
                    // The tracker's start touches it holds back count as told: the
                    // early call is not delayed by them (a strike found later changes
                    // the final ruling, not the call).
                    let held = motion
                        .held
                        .iter()
                        .chain(tracker.held_touches())
                        .chain(&hands_held);
                    if let Some(r) = windows.early_take(f.t_s, held) {
                        let due = r.take.as_ref().and_then(|t| clock.due(t.t_s));
                        out.early(
                            &r,
                            f.t_s,
                            due.map(|d| Instant::now().saturating_duration_since(d).as_secs_f64()),
                        )?;
                    }
                }
                frames += 1;
                last_t = f.t_s;
                for r in &ruled {
                    out.ruled(r, f.index)?;
                }
                if !ruled.is_empty() {
                    out.checkpoint(&Checkpoint {
                        frame: f.index,
                        t_s: f.t_s,
                        ruled: windows.ruled(),
                        pending: windows.pending().to_vec(),
                        tracker: tracker.state(),
                        hands_frames: hand_state
                            .as_ref()
                            .map(|s| s.frames.clone())
                            .unwrap_or_default(),
                        hands: hand_state.map(HandsSnapshot::save).transpose()?,
                        cards_sent: cards_sent
                            .iter()
                            .map(|(g, places)| {
                                (*g, places.iter().map(|(c, q)| ((*c).into(), *q)).collect())
                            })
                            .collect(),
                        places_sent: last_places
                            .as_ref()
                            .map(|p| p.iter().map(|(c, q)| ((*c).into(), *q)).collect()),
                        gaps,
                        held: motion.held.clone(),
                    })?;
                }
                out.frame(f.index, f.t_s);
                if let Some(due) = clock.due(f.t_s).filter(|_| opts.stage_times) {
                    let ms = |i: Instant| {
                        if i >= due {
                            i.duration_since(due).as_secs_f64() * 1e3
                        } else {
                            -due.duration_since(i).as_secs_f64() * 1e3
                        }
                    };
                    out.timed(&StageTimes {
                        frame: f.index,
                        t_s: f.t_s,
                        waiting: hands_at.waiting,
                        hands_start_ms: ms(hands_at.start),
                        hands_end_ms: ms(hands_at.end),
                        hands_cpu_ms: hands_at.cpu_s * 1e3,
                        judge_start_ms: ms(judge_start),
                        tracker_end_ms: ms(tracker_end),
                        judge_end_ms: ms(Instant::now()),
                    });
                }
            }
            Ok(())
        })();
        // Dropping the receiver ends the hands stage at its next frame, if it still runs.
        drop(rx);
        hands_cpu_s = hands_stage
            .join()
            .map_err(|_| JudgeError::Hands("the hands stage stopped unexpectedly".into()))?;
        walked
    });
    walk?;
    windows.add(motion.release(f64::INFINITY));
    for r in windows.finish() {
        out.ruled(&r, frames.saturating_sub(1))?;
    }
    out.finished(&windows.result())?;
    Ok(RunSummary {
        frames,
        video_s: last_t + 1.0 / fps,
        wall_s: start.elapsed().as_secs_f64(),
        rulings: windows.ruled(),
        unseen_gaps: gaps,
        hands_cpu_s,
        judge_cpu_s: thread_cpu_s() - judge_cpu0,
    })
}

/// CPU time of the calling thread, s (Linux; 0 where the kernel does not say).
pub fn thread_cpu_s() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns / 1e9)
}

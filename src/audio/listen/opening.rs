//! Where a verse opens: the held first kana told from other speech (its spectrum stands
//! still, `opening_flux_ratio`), a held kana broken by a dip joined again
//! (`join_broken_held`), and the first sound of the verse before its voicing (the
//! consonant, `first_sound`; the periodic sound over the hall's murmur, `periodic_start`),
//! a verse heard from a later piece of its held kana opened at the first, measured
//! against the reader's own hold in the recording (`broken_hold_openings`), and a verse
//! whose held kana was heard only in part found in that hold (`short_hold_openings`).
//!
//! Reads the analysis tracks; never names a poem.

use super::HeardReading;
use super::{
    frames_of, Tracks, HELD_BREAK_RATIO_MAX, HELD_MIN_S, MATCH_CEPS, PAUSE_BEFORE_S, VOICING_MIN,
};
use crate::audio::features::{frame_at, frame_time, Frames, CEPS, HOP_S};

/// A held kana broken for longer than a bridged dip (a neural voice's drawn-out vowel
/// under a hall's murmur) is joined again over breaks up to this long, when its pieces
/// sound alike (`HELD_BREAK_RATIO_MAX`) ...
const HELD_BREAK_GAP_MAX_S: f64 = 0.3;
/// ... of which the first is at least this long (longer than a kana said at pace) ...
const HELD_FIRST_PIECE_MIN_S: f64 = 0.3;
/// ... and each other at least this long.
const HELD_PIECE_MIN_S: f64 = 0.1;
/// A periodic frame before a verse's voicing counts as its sound this far over the
/// floor, dB (`periodic_start`).
const PERIODIC_ABOVE_FLOOR_DB: f32 = 1.0;
/// A piece of a held kana with fewer voiced frames than this is too soft under the
/// murmur for its likeness to be measured (`join_broken_held`).
const SOFT_PIECE_VOICED_MAX: usize = 5;

/// How much the spectrum changes in a verse's opening `[a, a + open)` against how much it
/// changes in the rest of the verse `[a + open, end)`: the median cepstral distance
/// between the means of neighbouring 80 ms blocks, opening over rest. A held kana stands still (well under
/// 1); speech that opens with several short kana changes as fast as the rest (about 1).
pub(super) fn opening_flux_ratio(f: &Frames, a: usize, end: usize, open: usize) -> f64 {
    const BLOCK: usize = 16;
    let end = end.min(f.len());
    let mean = |lo: usize| -> [f32; CEPS] {
        let mut m = [0.0f32; CEPS];
        for c in &f.ceps[lo..lo + BLOCK] {
            for k in 0..CEPS {
                m[k] += c[k] / BLOCK as f32;
            }
        }
        m
    };
    let flux = |lo: usize, hi: usize| -> Option<f64> {
        let mut v: Vec<f32> = Vec::new();
        let mut i = lo;
        while i + 2 * BLOCK <= hi {
            let (x, y) = (mean(i), mean(i + BLOCK));
            v.push((0..CEPS).map(|k| (x[k] - y[k]).powi(2)).sum::<f32>().sqrt());
            i += BLOCK / 2;
        }
        if v.is_empty() {
            return None;
        }
        v.sort_by(f32::total_cmp);
        Some(v[v.len() / 2] as f64)
    };
    match (flux(a, (a + open).min(end)), flux((a + open).min(end), end)) {
        (Some(o), Some(r)) if r > 0.0 => o / r,
        _ => 1.0,
    }
}

/// The runs that may open a verse: `held_runs`, with a run that follows a pause and is
/// too short for a held kana (but longer than a kana said at pace) joined to the pieces
/// after it (breaks up to `HELD_BREAK_GAP_MAX_S`) while each sounds like it, as the
/// pieces of one drawn-out vowel do (`HELD_BREAK_RATIO_MAX` of the first piece's own
/// change), until the whole is as long as a held kana.
pub(super) fn join_broken_held(tr: &Tracks, held_runs: &[(usize, usize)]) -> Vec<Opening> {
    let (held_min, piece_min) = (frames_of(HELD_MIN_S), frames_of(HELD_PIECE_MIN_S));
    let first_min = frames_of(HELD_FIRST_PIECE_MIN_S);
    let gap_max = frames_of(HELD_BREAK_GAP_MAX_S);
    let mut out = Vec::with_capacity(held_runs.len());
    let mut k = 0;
    while k < held_runs.len() {
        let (a, mut b) = held_runs[k];
        k += 1;
        let after_pause = tr.paused_before(a);
        // A soft first piece (too few voiced frames to be compared, below) and the pieces
        // its periodic sound runs on into without a break are one piece: a drawn-out vowel
        // flickering under the murmur, too soft for a few frames to be held, is still the
        // vowel. (Voiced kana said at pace run into each other too; they are not joined.)
        let soft_run =
            |a: usize, b: usize| (a..b).filter(|&i| tr.voiced[i]).count() < SOFT_PIECE_VOICED_MAX;
        if after_pause && b - a < held_min && soft_run(a, b) {
            while let Some(&(na, nb)) = held_runs.get(k) {
                if !soft_run(a, nb)
                    || periodic_from(tr, na, na.saturating_sub(b)) > periodic_to(tr, b, na - b)
                {
                    break;
                }
                b = nb;
                k += 1;
            }
        }
        if b - a >= held_min || b - a < first_min || !after_pause {
            out.push(Opening::whole(a, b));
            continue;
        }
        // Where the first piece joined starts: the pieces from there are a held kana of
        // their own should the first be other speech.
        let mut second: Option<usize> = None;
        let half = (b - a) / 2;
        let within = voiced_ceps_distance(tr, (a, a + half), (a + half, b));
        // A first piece with no voiced frame at all is a vowel too soft under the hall's
        // murmur for its cepstra to be compared: its pieces are joined on their breaks alone.
        let soft = soft_run(a, b);
        while b - a < held_min {
            // The next piece, passing over flickers too short to be one (they join with it).
            let Some(j) =
                (k..held_runs.len()).find(|&j| held_runs[j].1 - held_runs[j].0 >= piece_min)
            else {
                break;
            };
            let (na, nb) = held_runs[j];
            // The break runs from where this piece's periodic sound stops (a held vowel
            // may fade softly under the murmur before it is lost) to where the next
            // piece's begins (it may run on softly before it is voiced again).
            let resumed = periodic_from(tr, na, na.saturating_sub(b));
            let faded = periodic_to(tr, b, na.saturating_sub(b));
            let alike = resumed.saturating_sub(faded) <= gap_max
                && (soft
                    || voiced_ceps_distance(tr, (a, b), (na, nb)) <= HELD_BREAK_RATIO_MAX * within);
            if !alike {
                break;
            }
            second.get_or_insert(na);
            b = nb;
            k = j + 1;
        }
        let rest = second.filter(|&na| b - na >= held_min);
        out.push(Opening {
            start: a,
            end: b,
            rest,
        });
    }
    out
}

/// A run that may open a verse (`join_broken_held`): frames `[start, end)`, and where it
/// was joined from pieces, where its second piece starts, when the pieces from there are
/// long enough to be a held kana of their own.
#[derive(Debug, Clone, Copy)]
pub(super) struct Opening {
    pub start: usize,
    pub end: usize,
    pub rest: Option<usize>,
}

impl Opening {
    fn whole(start: usize, end: usize) -> Self {
        Opening {
            start,
            end,
            rest: None,
        }
    }
}

/// Where the periodic sound that turns voiced at `voiced_start` began: frames before it
/// as periodic as a voiced one (`VOICING_MIN`) though only PERIODIC_ABOVE_FLOOR_DB over
/// the floor, walked back over (a frame's dip forgiven) up to `back` frames; the leading
/// edge of the first one's window. `None` when the frame before the voicing is not one.
/// A nasal or a soft vowel under a loud hall's murmur stands a few dB over it for its
/// first 60-140 ms, too little for the band levels (`sound_start`), but the murmur is not
/// periodic.
pub(super) fn periodic_start(tr: &Tracks, voiced_start: usize, back: usize) -> Option<f64> {
    let voiced_start = voiced_start.min(tr.f.len());
    let first = periodic_from(tr, voiced_start, back);
    // A frame's window starts at the frame times the hop.
    (first < voiced_start).then_some(first as f64 * HOP_S)
}

/// The first frame of the periodic sound running into frame `to` (`periodic_start`), or
/// `to` when the frame before it is not periodic.
fn periodic_from(tr: &Tracks, to: usize, back: usize) -> usize {
    let to = to.min(tr.f.len());
    last_periodic(tr, (to.saturating_sub(back)..to).rev()).unwrap_or(to)
}

/// A frame as periodic as a voiced one (`VOICING_MIN`), PERIODIC_ABOVE_FLOOR_DB over the
/// floor: the voice, faint or not (the hall's murmur is not periodic).
fn periodic_frame(tr: &Tracks, i: usize) -> bool {
    tr.f.voicing[i] >= VOICING_MIN && tr.f.level_db[i] > tr.floor[i] + PERIODIC_ABOVE_FLOOR_DB
}

/// The end (exclusive) of the periodic sound running on from frame `from` (the rule of
/// `periodic_from`, walked forward up to `ahead` frames), or `from` when the frame at it
/// is not periodic.
fn periodic_to(tr: &Tracks, from: usize, ahead: usize) -> usize {
    let from = from.min(tr.f.len());
    last_periodic(tr, from..(from + ahead).min(tr.f.len())).map_or(from, |i| i + 1)
}

/// The last periodic frame (`periodic_frame`) reached walking `frames` in their order,
/// one frame's dip forgiven; `None` when the first two frames are not periodic.
fn last_periodic(tr: &Tracks, frames: impl Iterator<Item = usize>) -> Option<usize> {
    let mut last = None;
    let mut misses = 0;
    for i in frames {
        if periodic_frame(tr, i) {
            last = Some(i);
            misses = 0;
        } else {
            misses += 1;
            if misses > 1 {
                break;
            }
        }
    }
    last
}

/// Distance between the mean lower cepstra of the voiced frames of two stretches.
pub(super) fn voiced_ceps_distance(tr: &Tracks, x: (usize, usize), y: (usize, usize)) -> f64 {
    let f = &tr.f;
    let mean = |(a, b): (usize, usize)| -> [f64; MATCH_CEPS] {
        let (a, b) = (a.min(f.len()), b.min(f.len()));
        let n = (a..b).filter(|&i| tr.voiced[i]).count().max(1);
        let mut m = [0.0f64; MATCH_CEPS];
        for i in (a..b).filter(|&i| tr.voiced[i]) {
            for (mk, &c) in m.iter_mut().zip(&f.ceps[i][..MATCH_CEPS]) {
                *mk += c as f64 / n as f64;
            }
        }
        m
    };
    let (p, q) = (mean(x), mean(y));
    (0..MATCH_CEPS)
        .map(|k| (p[k] - q[k]).powi(2))
        .sum::<f64>()
        .sqrt()
}

/// The first frame of the sound that turns voiced at `voiced_start`: frames before it
/// still above the floor (a consonant), looked for up to `back` frames.
pub(super) fn first_sound(tr: &Tracks, voiced_start: usize, back: usize) -> usize {
    let mut s = voiced_start;
    let lo = voiced_start.saturating_sub(back);
    while s > lo && tr.active(s - 1) {
        s -= 1;
    }
    s
}

/// A reader holds a verse's first kana about as long in every verse of a match, and says
/// the rest at one pace (1.0-1.2 s and 0.23-0.27 s a kana in the simulator). A verse's
/// hold is read from its length: its start to its end, less its kana after the first at
/// the recording's pace (the median step between aligned onsets after the second). A
/// verse whose hold is this much shorter than the recording's median (s) was heard from
/// a later piece of its held kana, broken under the murmur or too soft to be voiced (on
/// the tuning recordings no verse heard from its start fell this short; the four heard
/// 0.7-1.0 s late fell 0.88-1.02 s short) ...
pub(super) const HOLD_SHORT_S: f64 = 0.6;
/// A verse whose hold is this much short, but less than HOLD_SHORT_S, may also have been
/// heard late (Kokoro `jf_alpha`'s held い in a loud hall, its first 25-30 ms voiced and
/// the next 0.4 s lost under the murmur, fell 0.45-0.55 s short), but so do 35 of the
/// 1,455 tuning verses heard from their start: such a verse, and one whose earlier piece
/// is only a flicker, opens at it only when its poem, heard with it, is the same or
/// stands out better (`listen::reopen_broken_holds`).
pub(super) const HOLD_SHORT_NAMED_S: f64 = 0.4;
/// ... and opens at an earlier piece when that brings its hold within this of the median.
const HOLD_RESTORED_S: f64 = 0.35;
/// The median hold is measured on at least this many verses aligned to a poem.
const HOLD_VERSES_MIN: usize = 4;
/// The pieces of a held kana broken under the murmur lie at most this far apart.
const HOLD_PIECES_GAP_MAX_S: f64 = 0.5;
/// A piece is at least this long.
const HOLD_PIECE_MIN_S: f64 = 0.05;

/// The verses aligned to a poem (their onsets are the poem's kana).
fn aligned(r: &HeardReading) -> bool {
    r.candidate.is_some() && r.onsets_s.len() >= 3
}

/// The reader's measure in one recording: the pace of the kana after the first (the
/// median step between the aligned onsets after the second) and the median hold of the
/// first (each verse's length less its later kana at that pace).
pub(super) struct ReadersMeasure {
    pub(super) pace: f64,
    pub(super) hold: f64,
}

impl ReadersMeasure {
    /// The measure of `readings`, when at least HOLD_VERSES_MIN are aligned to a poem.
    pub(super) fn of(readings: &[HeardReading]) -> Option<ReadersMeasure> {
        if readings.iter().filter(|r| aligned(r)).count() < HOLD_VERSES_MIN {
            return None;
        }
        let mut steps: Vec<f64> = readings
            .iter()
            .filter(|r| aligned(r))
            .flat_map(|r| r.onsets_s[1..].windows(2).map(|w| w[1] - w[0]))
            .collect();
        steps.sort_by(f64::total_cmp);
        let pace = steps[steps.len() / 2];
        let mut m = ReadersMeasure { pace, hold: 0.0 };
        let mut holds: Vec<f64> = readings.iter().filter_map(|r| m.hold_of(r)).collect();
        holds.sort_by(f64::total_cmp);
        m.hold = holds[holds.len() / 2];
        Some(m)
    }

    /// A verse's hold as heard: its length less its kana after the first at the pace.
    pub(super) fn hold_of(&self, r: &HeardReading) -> Option<f64> {
        aligned(r)
            .then(|| r.kami_end_s - r.kami_start_s - (r.onsets_s.len() - 1) as f64 * self.pace)
    }

    /// How long a kami-no-ku of `units` kana lasts in this reader's measure.
    pub(super) fn verse_s(&self, units: usize) -> f64 {
        self.hold + units.saturating_sub(1) as f64 * self.pace
    }
}

/// The runs (`held_runs`, in order) a verse heard from frame `from` may have opened at,
/// walking back from it: each joined to the one after by a break of at most
/// `HOLD_PIECES_GAP_MAX_S`, none starting before `after_s`; the nearest first. Flickers
/// are among them: they carry the walk.
fn pieces_back(
    held_runs: &[(usize, usize)],
    from: usize,
    after_s: f64,
) -> impl Iterator<Item = (usize, usize)> + '_ {
    let gap_max = frames_of(HOLD_PIECES_GAP_MAX_S);
    held_runs
        .iter()
        .rev()
        .copied()
        .skip_while(move |&(_, b)| b > from)
        .scan(from, move |cur, (a, b)| {
            if cur.saturating_sub(b) > gap_max || frame_time(a) < after_s {
                return None;
            }
            *cur = a;
            Some((a, b))
        })
}

/// Verses heard from the second piece of a broken held kana, measured against the
/// reader's own hold in this recording (`measure`, at least `short_min` short): for each such verse, the first
/// frame of the earlier piece it opens at. That piece follows a pause (`PAUSE_BEFORE_S`
/// without a voiced frame), lies after the verse before, is joined to the verse's first
/// sound by pieces (`held_runs`) with breaks of at most `HOLD_PIECES_GAP_MAX_S`, and
/// brings the hold within `HOLD_RESTORED_S` of the median.
pub(super) fn broken_hold_openings(
    tr: &Tracks,
    held_runs: &[(usize, usize)],
    readings: &[HeardReading],
    measure: &ReadersMeasure,
    short_min: f64,
) -> Vec<Option<(usize, bool)>> {
    let (median, hold) = (measure.hold, |r: &HeardReading| measure.hold_of(r));
    let piece_min = frames_of(HOLD_PIECE_MIN_S);
    readings
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let short = median - hold(r)?;
            if short < short_min {
                return None;
            }
            let earliest = r.kami_start_s - short - HOLD_RESTORED_S;
            let latest = r.kami_start_s - short + HOLD_RESTORED_S;
            let end_before = k.checked_sub(1).map(|j| readings[j].kami_end_s);
            let after = end_before.unwrap_or(0.0).max(earliest);
            // Walk back from the verse's first sound over the pieces before it.
            let (mut plain, mut any) = (None, None);
            for (a, b) in pieces_back(held_runs, frame_at(r.kami_start_s), after) {
                if tr.paused_before(a) && frame_time(a) <= latest {
                    // Where the poem is to decide, never at the shimo-no-ku before.
                    if end_before.is_none_or(|e| after_its_shimo(held_runs.iter(), e, a)) {
                        any = Some(a);
                    }
                    // Flickers too short to be a piece carry the walk, and open the verse
                    // only where its poem says so.
                    if b - a >= piece_min && short >= HOLD_SHORT_S {
                        plain = Some(a);
                    }
                }
            }
            plain.map(|a| (a, true)).or(any.map(|a| (a, false)))
        })
        .collect()
}

/// A verse found from a held kana heard only in part (`short_hold_openings`) lasts
/// within this of a kami-no-ku of its poem's kana in the reader's measure, s (a
/// shimo-no-ku, 14 kana at pace with no hold, falls a held kana short of the shortest) ...
pub(super) const SHORT_HOLD_FIT_S: f64 = 0.6;
/// ... of which the shortest has this many kana.
const KAMI_UNITS_MIN: usize = 17;
/// Speech after a kami-no-ku, this long at least and starting at least SHIMO_AFTER_S
/// after its end, is its shimo-no-ku, s.
const SHIMO_PIECE_MIN_S: f64 = 0.06;
const SHIMO_AFTER_S: f64 = 0.12;

/// Speech from frame `a` lies after the shimo-no-ku of a verse that ended at `end_s`: a
/// run (of `runs`) of SHIMO_PIECE_MIN_S or more starts SHIMO_AFTER_S or more after that
/// end and a pause before `a`.
fn after_its_shimo<'a>(
    mut runs: impl Iterator<Item = &'a (usize, usize)>,
    end_s: f64,
    a: usize,
) -> bool {
    let from = frame_at(end_s + SHIMO_AFTER_S);
    let (shimo_min, pause) = (frames_of(SHIMO_PIECE_MIN_S), frames_of(PAUSE_BEFORE_S));
    a >= from && runs.any(|s| s.0 >= from && s.0 + pause <= a && s.1 - s.0 >= shimo_min)
}

/// Verses the first pass did not hear because their held kana was heard only in part: a
/// first piece at least HELD_FIRST_PIECE_MIN_S long (short of HELD_MIN_S), then the
/// vowel too soft under the murmur to be voiced, or a change in it the pieces' likeness
/// does not carry. Measured against the reader's own hold in this recording: the verse
/// is the speech from the piece (after a pause, and after the shimo-no-ku of the verse
/// before) joined over a break to the speech resuming within the reader's hold
/// (`HOLD_RESTORED_S`), as long as the shortest kami-no-ku in the reader's measure
/// (within SHORT_HOLD_FIT_S) and ending before the next verse heard.
/// Each as its first voiced frame and its end (exclusive); the caller names it.
pub(super) fn short_hold_openings(
    tr: &Tracks,
    held_runs: &[(usize, usize)],
    verse_runs: &[(usize, usize)],
    readings: &[HeardReading],
    measure: &ReadersMeasure,
) -> Vec<(usize, usize)> {
    let first_min = frames_of(HELD_FIRST_PIECE_MIN_S);
    let (shimo_min, pause) = (frames_of(SHIMO_PIECE_MIN_S), frames_of(PAUSE_BEFORE_S));
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &(a, b) in held_runs {
        if b - a < first_min || !tr.paused_before(a) || out.last().is_some_and(|v| a < v.1) {
            continue;
        }
        let t = frame_time(a);
        let after = readings.iter().find(|r| r.kami_start_s >= t);
        // After the verse before (heard, or found here) and its shimo-no-ku.
        let before = readings
            .iter()
            .rev()
            .find(|r| r.kami_start_s < t)
            .map(|r| r.kami_end_s)
            .into_iter()
            .chain(out.last().map(|v| frame_time(v.1)))
            .max_by(f64::total_cmp);
        if let Some(end) = before {
            let from = frame_at(end + SHIMO_AFTER_S);
            if a < from
                || !verse_runs
                    .iter()
                    .chain(held_runs)
                    .any(|s| s.0 >= from && s.0 + pause <= a && s.1 - s.0 >= shimo_min)
            {
                continue;
            }
        }
        // The speech from the piece, over a break to speech resuming within the hold.
        let Some(k) = verse_runs.iter().position(|r| r.0 <= a && a < r.1) else {
            continue;
        };
        let mut end = verse_runs[k].1;
        if frame_time(end) - t < measure.hold + HOLD_RESTORED_S {
            if let Some(&(na, nb)) = verse_runs.get(k + 1) {
                if frame_time(na) - t <= measure.hold + HOLD_RESTORED_S {
                    end = nb;
                }
            }
        }
        if frame_time(end) - t < measure.verse_s(KAMI_UNITS_MIN) - SHORT_HOLD_FIT_S
            || after.is_some_and(|r| frame_time(end) > r.kami_start_s - PAUSE_BEFORE_S)
        {
            continue;
        }
        out.push((a, end));
    }
    out
}

/// Verses left without a poem that may have been heard from a later piece of their held
/// kana, whatever their length says: a verse heard late that ran on into its own
/// shimo-no-ku is as long as one heard whole. For each verse without a poem, the ways it
/// may open earlier and end: each earlier piece at least HELD_FIRST_PIECE_MIN_S long,
/// after a pause, joined to the verse's first sound by pieces with breaks of at most
/// `HOLD_PIECES_GAP_MAX_S`, within the reader's hold (`HOLD_RESTORED_S`) of it, and after
/// the shimo-no-ku of the verse before; each with the verse's end and with the pause
/// nearest where a kami-no-ku opening there would end (`run_on`). The caller names them
/// and keeps one only when its sound names a poem better than the verse did.
pub(super) fn unnamed_earlier_openings(
    tr: &Tracks,
    held_runs: &[(usize, usize)],
    verse_runs: &[(usize, usize)],
    readings: &[HeardReading],
    measure: &ReadersMeasure,
    run_on: impl Fn(&HeardReading) -> Option<usize>,
) -> Vec<Vec<(usize, usize)>> {
    let piece_min = frames_of(HELD_FIRST_PIECE_MIN_S);
    readings
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let mut ways = Vec::new();
            if r.poem.is_some() {
                return ways;
            }
            let earliest = r.kami_start_s - measure.hold - HOLD_RESTORED_S;
            // The shimo-no-ku of the verse before must have been heard before the piece.
            let end_before = k.checked_sub(1).map(|j| readings[j].kami_end_s);
            let end = frame_at(r.kami_end_s);
            for (a, b) in pieces_back(held_runs, frame_at(r.kami_start_s), earliest) {
                if b - a < piece_min || !tr.paused_before(a) {
                    continue;
                }
                let after_shimo = end_before
                    .is_none_or(|e| after_its_shimo(verse_runs.iter().chain(held_runs), e, a));
                if !after_shimo {
                    continue;
                }
                ways.push((a, end));
                let earlier = HeardReading {
                    kami_start_s: frame_time(a),
                    ..r.clone()
                };
                if let Some(cut) = run_on(&earlier).filter(|&c| c > a && c < end) {
                    ways.push((a, cut));
                }
            }
            ways
        })
        .collect()
}

//! Listening: the reader's timeline heard in a sound track. A kami-no-ku is found where
//! a held voiced kana opens a stretch of continuous speech after a pause; its poem by
//! matching the speech against templates of the poems not yet read (a closed set, 15-1:
//! the kami-no-ku differ by the kimari-ji), and where those cannot tell, in the reader's
//! own measure and against the reader's own kana cut from the verses already named; its
//! kana onsets from the same alignment, each then moved to where the sound changes near
//! it; the shimo-no-ku as the next speech after it. Owns these thresholds; reads features
//! and templates, never files.

use super::features::{analyze, frame_time, Frames, CEPS, HOP_S};
use super::lead::{back_date_hidden_consonants, Levels};
use super::onset::sound_start;
use super::templates::{embedded, poem_template, KanaTemplates, TEMPLATE_STEP};
use super::AudioError;
use crate::rules::kimariji::{sound_units, ReadPool};
use crate::rules::poems::{poem, Poem};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// A frame is voiced when its autocorrelation peak passes this.
pub(super) const VOICING_MIN: f32 = 0.55;
/// ... and its speech-band level is this far above the local floor, dB.
pub(super) const ABOVE_FLOOR_DB: f32 = 8.0;
/// The first kana is held about a second; a voiced run this long may open a verse.
const HELD_MIN_S: f64 = 0.55;
/// Inside a held kana a frame counts with this much voicing while its level stays up ...
const HELD_VOICING_MIN: f32 = 0.35;
/// ... and unvoiced dips up to this long are bridged.
const HELD_GAP_MAX_S: f64 = 0.03;
/// A soft kana (a nasal, a quiet vowel) keeps a verse going while it stays this
/// periodic (the hall's murmur stays under 0.45) ...
const SOFT_VOICING_MIN: f32 = 0.8;
/// ... and this far above the floor, dB (a held vowel under a loud hall flickers at 1-3.5
/// dB over it, its voicing 0.9-1.0).
const SOFT_ABOVE_FLOOR_DB: f32 = 2.0;
/// Speech in a verse pauses at most this long (unvoiced consonants, closures).
const VERSE_GAP_MAX_S: f64 = 0.25;
/// A kami-no-ku lasts at least this long from its first sound.
const KAMI_MIN_S: f64 = 2.5;
/// A held kana's spectrum changes at most this much against the rest of its verse
/// (`opening_flux_ratio`), asked of speech where a shimo-no-ku is due.
const HELD_FLUX_MAX: f64 = 0.5;
/// A pause this long inside a verse may be the one between its kami-no-ku and its
/// shimo-no-ku (a kami-no-ku's own pauses, closures and unvoiced kana, are shorter).
const SHIMO_HEARD_GAP_S: f64 = 0.18;
/// Speech running into a held kana belongs to it when it sounds no further from the
/// kana's opening than this many times the kana's own change between its two halves
/// (a synthesizer's drawn-out あ may break for 0.07-0.2 s; on the tuning voices, 17 such
/// breaks measured 0.99-1.79, the vowel carried over the break).
const HELD_BREAK_RATIO_MAX: f64 = 2.0;
/// A held kana broken for longer than a bridged dip (a neural voice's drawn-out vowel
/// under a hall's murmur) is joined again over breaks up to this long, when its pieces
/// sound alike (`HELD_BREAK_RATIO_MAX`) ...
const HELD_BREAK_GAP_MAX_S: f64 = 0.3;
/// ... of which the first is at least this long (longer than a kana said at pace) ...
const HELD_FIRST_PIECE_MIN_S: f64 = 0.3;
/// ... and each other at least this long.
const HELD_PIECE_MIN_S: f64 = 0.1;
/// A verse heard shorter than a kami-no-ku after its held kana is carried over one
/// pause up to this long (an unvoiced kana, a closure, under the murmur), to speech
/// that does not itself open with a held kana.
const VERSE_SPLIT_GAP_MAX_S: f64 = 0.35;
/// A periodic frame before a verse's voicing counts as its sound this far over the
/// floor, dB (`periodic_start`).
const PERIODIC_ABOVE_FLOOR_DB: f32 = 1.0;
/// A piece of a held kana with fewer voiced frames than this is too soft under the
/// murmur for its likeness to be measured (`join_broken_held`).
const SOFT_PIECE_VOICED_MAX: usize = 5;
/// Silence before a verse's first sound.
const PAUSE_BEFORE_S: f64 = 0.15;
/// How far before the voicing a first consonant is looked for.
const CONSONANT_BACK_S: f64 = 0.15;
/// The held first kana as the templates assume it, seconds.
const TEMPLATE_FIRST_S: f64 = 1.1;
/// DTW band half-width, template frames (10 ms).
const BAND_FRAMES: usize = 40;
/// Threads matching a verse against the poems (the cores a recording is given).
const NAMING_THREADS: usize = 2;
/// Below this margin between the best and the second poem, the poem is left null.
pub const POEM_SCORE_MIN: f64 = 0.04;
/// A verse named in the reader's own voice (kana cut from this recording's named verses)
/// whose closest template poem differs is named when its poem stands out by this much:
/// twice the templates' margin, as those kana come from a handful of verses.
const OWN_VOICE_SCORE_MIN: f64 = 2.0 * POEM_SCORE_MIN;
/// The cepstra a verse is matched on: the lower ones, the spectrum's broad shape (the
/// vowel), which voices share more than the fine detail above them.
const MATCH_CEPS: usize = 8;
/// The verses named teach the reader's voice (`Adaptation`), or the surest one when none is,
/// in at most this many rounds of learning and naming again.
const ADAPT_ROUNDS: usize = 3;
/// The fewest aligned frames an adaptation is fitted on.
const ADAPT_PAIRS_MIN: usize = 200;
/// The pull of the adaptation toward no change, per aligned frame.
const ADAPT_RIDGE_SHARE: f64 = 0.05;
/// The local level floor is the low percentile of the level over this window.
const FLOOR_WINDOW_S: f64 = 4.0;
/// The track is silent below this RMS.
const SILENT_RMS: f32 = 1e-4;
/// One reading as heard: the contract's readings.jsonl line with the poem optional.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HeardReading {
    pub seq: u32,
    /// `None` when the sound cannot tell which poem was read.
    pub poem: Option<u8>,
    pub kami_start_s: f64,
    pub onsets_s: Vec<f64>,
    pub kami_end_s: f64,
    pub shimo_start_s: Option<f64>,
    pub void: bool,
    /// How far the named poem's match stands above the next one (0..1).
    #[serde(default)]
    pub poem_score: f64,
    /// The best-matching poem even when `poem` is null (not written out).
    #[serde(skip)]
    pub candidate: Option<u8>,
}

impl HeardReading {
    /// The contract's reading with `poem` given.
    pub fn to_reading_with(&self, poem: u8) -> crate::rules::Reading {
        crate::rules::Reading {
            seq: self.seq,
            poem,
            kami_start_s: self.kami_start_s,
            onsets_s: Some(self.onsets_s.clone()),
            kami_end_s: Some(self.kami_end_s),
            shimo_start_s: self.shimo_start_s,
            void: false,
        }
    }

    /// The contract's reading, when the poem is known.
    pub fn to_reading(&self) -> Option<crate::rules::Reading> {
        Some(crate::rules::Reading {
            seq: self.seq,
            poem: self.poem?,
            kami_start_s: self.kami_start_s,
            onsets_s: Some(self.onsets_s.clone()),
            kami_end_s: Some(self.kami_end_s),
            shimo_start_s: self.shimo_start_s,
            void: false,
        })
    }
}

/// The analysis frames in `s` seconds.
fn frames_of(s: f64) -> usize {
    (s / HOP_S).round() as usize
}

/// Local floor of a level track: a low percentile over a sliding window.
fn floor_of(level: &[f32]) -> Vec<f32> {
    let block = (1.0 / HOP_S) as usize; // 1 s blocks
    let nb = level.len().div_ceil(block).max(1);
    let lows: Vec<f32> = (0..nb)
        .map(|b| {
            let mut v: Vec<f32> = level[b * block..((b + 1) * block).min(level.len())].to_vec();
            v.sort_by(f32::total_cmp);
            v.get(v.len() / 10).copied().unwrap_or(-100.0)
        })
        .collect();
    let half = (FLOOR_WINDOW_S / 2.0) as usize;
    let smooth: Vec<f32> = (0..nb)
        .map(|b| {
            let lo = b.saturating_sub(half);
            let hi = (b + half + 1).min(nb);
            let mut v = lows[lo..hi].to_vec();
            v.sort_by(f32::total_cmp);
            v[v.len() / 3]
        })
        .collect();
    (0..level.len())
        .map(|i| smooth[(i / block).min(nb - 1)])
        .collect()
}

struct Tracks {
    f: Frames,
    floor: Vec<f32>,
    high_floor: Vec<f32>,
    voiced: Vec<bool>,
}

impl Tracks {
    fn active(&self, i: usize) -> bool {
        self.f.level_db[i] > self.floor[i] + ABOVE_FLOOR_DB
            || self.f.high_db[i] > self.high_floor[i] + ABOVE_FLOOR_DB
    }
}

/// Runs of voiced frames joined over gaps up to `gap` frames: (first, end exclusive).
fn runs(voiced: &[bool], from: usize, gap: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = from;
    while i < voiced.len() {
        if !voiced[i] {
            i += 1;
            continue;
        }
        let a = i;
        let mut last = i;
        while i < voiced.len() && i <= last + gap {
            if voiced[i] {
                last = i;
            }
            i += 1;
        }
        out.push((a, last + 1));
        i = last + 1;
    }
    out
}

/// The reader's timeline in `samples` (mono, `rate_hz`); `path` names the file in errors.
pub fn heard_readings(
    path: &Path,
    samples: &[f32],
    rate_hz: u32,
) -> Result<Vec<HeardReading>, AudioError> {
    let rms = super::voice::rms(samples);
    if samples.len() < rate_hz as usize || rms < SILENT_RMS {
        return Err(AudioError::input(
            path,
            "sound track",
            "the sound track is silent: no reading can be heard (give readings.jsonl)",
        ));
    }
    let f = analyze(samples, rate_hz);
    let floor = floor_of(&f.level_db);
    let high_floor = floor_of(&f.high_db);
    let voiced: Vec<bool> = (0..f.len())
        .map(|i| f.voicing[i] > VOICING_MIN && f.level_db[i] > floor[i] + ABOVE_FLOOR_DB)
        .collect();
    let tr = Tracks {
        f,
        floor,
        high_floor,
        voiced,
    };
    // The held kana: voiced frames joined over short dips of the voicing measure while
    // the level stays up (a drawn-out vowel under noise flickers around the threshold).
    let held: Vec<bool> = (0..tr.f.len())
        .map(|i| {
            tr.voiced[i]
                || (tr.f.voicing[i] > HELD_VOICING_MIN && tr.active(i))
                || (tr.f.voicing[i] > SOFT_VOICING_MIN
                    && tr.f.level_db[i] > tr.floor[i] + SOFT_ABOVE_FLOOR_DB)
        })
        .collect();
    let held_runs = runs(&held, 0, frames_of(HELD_GAP_MAX_S));
    let verse_runs = runs(&held, 0, frames_of(VERSE_GAP_MAX_S));
    let openings = join_broken_held(&tr, &held_runs);
    let templates = embedded();
    let mut pool = ReadPool::new();
    let mut out: Vec<HeardReading> = Vec::new();
    let mut busy_until = 0usize;
    let mut last_inner_gap = 0usize;
    let mut verses: Vec<(Verse, Naming)> = Vec::new();
    for &(a, b) in &openings {
        if a < busy_until || ((b - a) as f64) * HOP_S < HELD_MIN_S {
            continue;
        }
        // The verse this held kana opens: continuous speech from it, long enough.
        let Some(k) = verse_runs.iter().position(|r| r.0 <= a && a < r.1) else {
            continue;
        };
        let (va, mut vb) = verse_runs[k];
        if ((vb - a) as f64) * HOP_S < KAMI_MIN_S {
            // Cut short by a pause a little too long for a verse: carried over it to the
            // speech after, unless that speech opens a verse of its own.
            let Some(&(na, nb)) = verse_runs.get(k + 1) else {
                continue;
            };
            let opens = openings.iter().any(|r| {
                r.0 >= na && r.0 <= na + frames_of(0.05) && (r.1 - r.0) as f64 * HOP_S >= HELD_MIN_S
            });
            if opens
                || ((na - vb) as f64) * HOP_S > VERSE_SPLIT_GAP_MAX_S
                || ((nb - a) as f64) * HOP_S < KAMI_MIN_S
            {
                continue;
            }
            vb = nb;
        }
        // A pause before it: nothing voiced in the PAUSE_BEFORE_S before the run's start.
        let pause = frames_of(PAUSE_BEFORE_S);
        let mut start_voiced = va.max(busy_until);
        if start_voiced < a.saturating_sub(frames_of(0.3)) {
            // Speech ran into the held kana. It may be the held kana itself, broken for a
            // moment: it then sounds no further from the held kana's opening than the
            // kana's two halves do from each other, within HELD_BREAK_RATIO_MAX.
            let half = frames_of(HELD_MIN_S / 2.0);
            let within = voiced_ceps_distance(&tr, (a, a + half), (a + half, a + 2 * half));
            let run_in = voiced_ceps_distance(&tr, (start_voiced, a), (a, a + half));
            if run_in > HELD_BREAK_RATIO_MAX * within {
                // Other speech. Without a pause before the held kana it is no verse's
                // opening (a short shimo-no-ku closes less than VERSE_GAP_MAX_S before
                // the next kami-no-ku); after one, the verse opens at the held kana.
                if (a.saturating_sub(pause)..a).any(|i| tr.voiced[i]) {
                    continue;
                }
                start_voiced = a;
            }
        }
        if (start_voiced.saturating_sub(pause)..start_voiced).any(|i| tr.voiced[i]) {
            continue;
        }
        // The first speech after a kami-no-ku is its shimo-no-ku: it opens a new verse only
        // when it opens as one (a held kana) and its sound names a poem.
        let shimo_place = out.last().is_some_and(|_| {
            !verse_runs.iter().chain(held_runs.iter()).any(|r| {
                r.0 >= busy_until + frames_of(0.12)
                    && r.0 < start_voiced
                    && (r.1 - r.0) as f64 * HOP_S >= 0.06
            })
        });
        let ratio = opening_flux_ratio(&tr.f, a, vb, frames_of(HELD_MIN_S));
        // The longest pause inside this verse after its held kana.
        let inner_gap = held_runs
            .windows(2)
            .filter(|w| w[0].1 >= b && w[1].0 <= vb && w[1].0 > w[0].1)
            .map(|w| w[1].0 - w[0].1)
            .max()
            .unwrap_or(0);
        // Where a pause inside the last verse may already have been its shimo-no-ku, only
        // speech that plainly does not open with a held kana is taken for the shimo-no-ku.
        let shimo_due = shimo_place && last_inner_gap < frames_of(SHIMO_HEARD_GAP_S);
        let flux_max = if shimo_due { HELD_FLUX_MAX } else { 1.0 };
        if shimo_place && ratio >= flux_max {
            continue;
        }
        let start = first_sound(&tr, start_voiced, frames_of(CONSONANT_BACK_S));
        let heard_start = sound_start(samples, rate_hz, frame_time(start_voiced));
        let kami_start_s = periodic_start(&tr, start_voiced, frames_of(PAUSE_BEFORE_S))
            .map_or(heard_start, |p| p.min(heard_start));
        let kami_end_s = frame_time(vb);
        let seq = out.len() as u32 + 1;
        let verse = Verse {
            frames: verse_frames(&tr.f, start, vb),
            first_frame: start,
            start_s: kami_start_s,
        };
        let named = name_poem(&verse, templates, &pool);
        if shimo_due && named.poem.is_none() {
            continue;
        }
        if let Some(p) = named.poem {
            pool.mark_read(p);
        }
        out.push(HeardReading {
            seq,
            poem: named.poem,
            candidate: named.candidate,
            kami_start_s: round_ms(kami_start_s),
            onsets_s: named.onsets.iter().copied().map(round_ms).collect(),
            kami_end_s: round_ms(kami_end_s),
            shimo_start_s: None,
            void: false,
            poem_score: round_score(named.score),
        });
        verses.push((verse, named));
        busy_until = vb;
        last_inner_gap = inner_gap;
    }
    rename_in_the_readers_voice(templates, &mut out, &mut verses);
    second_opinion(templates, &mut out, &verses);
    let levels = Levels {
        voicing: &tr.f.voicing,
        level_db: &tr.f.level_db,
        floor_db: &tr.floor,
    };
    back_date_hidden_consonants(&levels, &mut out);
    for r in &mut out {
        refine_kana_onsets(samples, rate_hz, &mut r.onsets_s);
    }
    // The shimo-no-ku: the first voiced speech after each kami-no-ku, before the next.
    let n = out.len();
    for k in 0..n {
        let from = frames_of(out[k].kami_end_s + 0.12);
        let to = if k + 1 < n {
            frames_of(out[k + 1].kami_start_s - 0.1)
        } else {
            tr.f.len()
        };
        let found = verse_runs
            .iter()
            .chain(held_runs.iter())
            .filter(|r| r.0 >= from && r.0 < to && (r.1 - r.0) as f64 * HOP_S >= 0.06)
            .map(|r| r.0)
            .min();
        if let Some(a) = found {
            let s = sound_start(samples, rate_hz, frame_time(a)).max(frame_time(from));
            out[k].shimo_start_s = Some(round_ms(s));
        }
    }
    if out.is_empty() {
        return Err(AudioError::input(
            path,
            "sound track",
            "no reading can be heard in the sound track (give readings.jsonl)",
        ));
    }
    Ok(out)
}

/// How far before the aligned onset a kana's change is looked for, s ...
const ONSET_SEEK_BEFORE_S: f64 = 0.02;
/// ... and how far after it.
const ONSET_SEEK_AFTER_S: f64 = 0.035;

/// Each kana onset after the first, as the alignment placed it (to its 10 ms step, and
/// early by part of a window), moved to where the sound changes most near it
/// (`onset::kana_change`), never past the middle of the span to a neighbouring onset.
fn refine_kana_onsets(samples: &[f32], rate_hz: u32, onsets: &mut [f64]) {
    let given = onsets.to_vec();
    for k in 1..given.len() {
        let lo = (given[k] - ONSET_SEEK_BEFORE_S).max(0.5 * (given[k - 1] + given[k]));
        let hi = given.get(k + 1).map_or(given[k] + ONSET_SEEK_AFTER_S, |n| {
            (given[k] + ONSET_SEEK_AFTER_S).min(0.5 * (given[k] + n))
        });
        if let Some(t) = super::onset::kana_change(samples, rate_hz, lo, hi) {
            onsets[k] = round_ms(t);
        }
    }
}

fn round_ms(t: f64) -> f64 {
    (t * 1000.0).round() / 1000.0
}

/// A poem score as written: three decimals.
fn round_score(s: f64) -> f64 {
    (s * 1000.0).round() / 1000.0
}

/// How much the spectrum changes in a verse's opening `[a, a + open)` against how much it
/// changes in the rest of the verse `[a + open, end)`: the median cepstral distance
/// between the means of neighbouring 80 ms blocks, opening over rest. A held kana stands still (well under
/// 1); speech that opens with several short kana changes as fast as the rest (about 1).
fn opening_flux_ratio(f: &Frames, a: usize, end: usize, open: usize) -> f64 {
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
fn join_broken_held(tr: &Tracks, held_runs: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let (held_min, piece_min) = (frames_of(HELD_MIN_S), frames_of(HELD_PIECE_MIN_S));
    let first_min = frames_of(HELD_FIRST_PIECE_MIN_S);
    let (gap_max, pause) = (frames_of(HELD_BREAK_GAP_MAX_S), frames_of(PAUSE_BEFORE_S));
    let mut out = Vec::with_capacity(held_runs.len());
    let mut k = 0;
    while k < held_runs.len() {
        let (a, mut b) = held_runs[k];
        k += 1;
        let after_pause = !(a.saturating_sub(pause)..a).any(|i| tr.voiced[i]);
        if b - a >= held_min || b - a < first_min || !after_pause {
            out.push((a, b));
            continue;
        }
        let half = (b - a) / 2;
        let within = voiced_ceps_distance(tr, (a, a + half), (a + half, b));
        // A first piece with no voiced frame at all is a vowel too soft under the hall's
        // murmur for its cepstra to be compared: its pieces are joined on their breaks alone.
        let soft = (a..b).filter(|&i| tr.voiced[i]).count() < SOFT_PIECE_VOICED_MAX;
        while b - a < held_min {
            // The next piece, passing over flickers too short to be one (they join with it).
            let Some(j) =
                (k..held_runs.len()).find(|&j| held_runs[j].1 - held_runs[j].0 >= piece_min)
            else {
                break;
            };
            let (na, nb) = held_runs[j];
            // The break ends where the next piece's periodic sound begins (a held vowel
            // may run on softly under the murmur before it is voiced again).
            let resumed = periodic_from(tr, na, na.saturating_sub(b));
            let alike = resumed.saturating_sub(b) <= gap_max
                && (soft
                    || voiced_ceps_distance(tr, (a, b), (na, nb)) <= HELD_BREAK_RATIO_MAX * within);
            if !alike {
                break;
            }
            b = nb;
            k = j + 1;
        }
        out.push((a, b));
    }
    out
}

/// Where the periodic sound that turns voiced at `voiced_start` began: frames before it
/// as periodic as a voiced one (`VOICING_MIN`) though only PERIODIC_ABOVE_FLOOR_DB over
/// the floor, walked back over (a frame's dip forgiven) up to `back` frames; the leading
/// edge of the first one's window. `None` when the frame before the voicing is not one.
/// A nasal or a soft vowel under a loud hall's murmur stands a few dB over it for its
/// first 60-140 ms, too little for the band levels (`sound_start`), but the murmur is not
/// periodic.
fn periodic_start(tr: &Tracks, voiced_start: usize, back: usize) -> Option<f64> {
    let voiced_start = voiced_start.min(tr.f.len());
    let first = periodic_from(tr, voiced_start, back);
    // A frame's window starts at the frame times the hop.
    (first < voiced_start).then_some(first as f64 * HOP_S)
}

/// The first frame of the periodic sound running into frame `to` (`periodic_start`), or
/// `to` when the frame before it is not periodic.
fn periodic_from(tr: &Tracks, to: usize, back: usize) -> usize {
    let f = &tr.f;
    let periodic = |i: usize| {
        f.voicing[i] >= VOICING_MIN && f.level_db[i] > tr.floor[i] + PERIODIC_ABOVE_FLOOR_DB
    };
    let to = to.min(f.len());
    let mut first = to;
    let mut misses = 0;
    for i in (to.saturating_sub(back)..to).rev() {
        if periodic(i) {
            first = i;
            misses = 0;
        } else {
            misses += 1;
            if misses > 1 {
                break;
            }
        }
    }
    first
}

/// Distance between the mean lower cepstra of the voiced frames of two stretches.
fn voiced_ceps_distance(tr: &Tracks, x: (usize, usize), y: (usize, usize)) -> f64 {
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
fn first_sound(tr: &Tracks, voiced_start: usize, back: usize) -> usize {
    let mut s = voiced_start;
    let lo = voiced_start.saturating_sub(back);
    while s > lo && tr.active(s - 1) {
        s -= 1;
    }
    s
}

/// Banded DTW between signal frames `x` and template `y`; the mean cost on the path, and
/// with `want_path` the first signal frame aligned to each template frame. A match that
/// must cost more than `abandon_above` is given up (infinity). Without the path only two
/// rows of the cost matrix are kept.
fn dtw(
    x: &[[f32; CEPS]],
    y: &[[f32; CEPS]],
    want_path: bool,
    abandon_above: f64,
) -> (f64, Vec<usize>) {
    let (n, m) = (x.len(), y.len());
    if n == 0 || m == 0 {
        return (f64::INFINITY, Vec::new());
    }
    let inf = f32::INFINITY;
    let band = BAND_FRAMES.max(n.abs_diff(m) + 4);
    let span = |i: usize| {
        let c = i * m / n;
        (c.saturating_sub(band), (c + band + 1).min(m))
    };
    let dist = |i: usize, j: usize| -> f32 {
        let mut s = 0.0;
        for k in 0..MATCH_CEPS {
            let e = x[i][k] - y[j][k];
            s += e * e;
        }
        s.sqrt()
    };
    let limit = (abandon_above * (n + m) as f64) as f32;
    // Row i of the matrix is row `row(i)` of `d`: all of them with the path, else two in
    // turn (a reused row is cleared over the span it held before).
    let rows = if want_path { n } else { 2 };
    let row = |i: usize| if want_path { i } else { i % 2 };
    let mut d = vec![inf; rows * m];
    let before = vec![inf; m];
    for i in 0..n {
        let (lo, hi) = span(i);
        if !want_path && i >= 2 {
            let (slo, shi) = span(i - 2);
            d[row(i) * m + slo..row(i) * m + shi].fill(inf);
        }
        // The previous row (all infinite above the first) and this one.
        let (prev, cur): (&[f32], &mut [f32]) = if i == 0 {
            (&before, &mut d[..m])
        } else {
            let (r0, r1) = (row(i - 1), row(i));
            if r0 < r1 {
                let (a, b) = d.split_at_mut(r1 * m);
                (&a[r0 * m..r0 * m + m], &mut b[..m])
            } else {
                let (a, b) = d.split_at_mut(r0 * m);
                (&b[..m], &mut a[r1 * m..r1 * m + m])
            }
        };
        for j in lo..hi {
            let best = if i == 0 && j == 0 {
                0.0
            } else if j > 0 {
                prev[j - 1].min(prev[j]).min(cur[j - 1])
            } else {
                prev[j]
            };
            if best < inf {
                cur[j] = best + dist(i, j);
            }
        }
        if cur[lo..hi].iter().all(|&c| c > limit) {
            return (f64::INFINITY, Vec::new());
        }
    }
    let total = d[row(n - 1) * m + m - 1];
    if !total.is_finite() {
        return (f64::INFINITY, Vec::new());
    }
    let cost = total as f64 / (n + m) as f64;
    if !want_path {
        return (cost, Vec::new());
    }
    // Backtrack: the first i for each j.
    let mut first_i = vec![usize::MAX; m];
    let (mut i, mut j) = (n - 1, m - 1);
    loop {
        first_i[j] = first_i[j].min(i);
        if i == 0 && j == 0 {
            break;
        }
        let cands = [
            (i > 0 && j > 0, i.wrapping_sub(1), j.wrapping_sub(1)),
            (i > 0, i.wrapping_sub(1), j),
            (j > 0, i, j.wrapping_sub(1)),
        ];
        let mut best = (inf, i, j);
        for (ok, a, b) in cands {
            if ok && d[a * m + b] < best.0 {
                best = (d[a * m + b], a, b);
            }
        }
        if best.1 == i && best.2 == j {
            break;
        }
        i = best.1;
        j = best.2;
    }
    (cost, first_i)
}

/// The lower MATCH_CEPS cepstra with their mean and spread over the sequence taken out
/// (the channel and the voice's own range); the rest zero.
fn normalised(v: &[[f32; CEPS]]) -> Vec<[f32; CEPS]> {
    let (mean, sd) = mean_and_spread(v);
    standardised(v, &mean, &sd)
}

/// The lower MATCH_CEPS cepstra of each frame less `mean`, over `sd`; the rest zero.
fn standardised(v: &[[f32; CEPS]], mean: &[f32; CEPS], sd: &[f32; CEPS]) -> Vec<[f32; CEPS]> {
    v.iter()
        .map(|f| {
            let mut o = [0.0f32; CEPS];
            for k in 0..MATCH_CEPS {
                o[k] = (f[k] - mean[k]) / sd[k];
            }
            o
        })
        .collect()
}

/// A kami-no-ku as matched: its lower cepstra every template step, normalised over the
/// verse, the analysis frame it starts at and its first sound.
struct Verse {
    frames: Vec<[f32; CEPS]>,
    first_frame: usize,
    start_s: f64,
}

/// What the match against the poems not yet read tells of a verse.
struct Naming {
    /// The poem, when it stands out of the others by POEM_SCORE_MIN.
    poem: Option<u8>,
    score: f64,
    onsets: Vec<f64>,
    /// The best-matching poem even when it does not stand out.
    candidate: Option<u8>,
    /// Each frame of the best template with the verse frame first aligned to it.
    aligned: Vec<(usize, [f32; CEPS])>,
    /// The template voice that matched best (`None` when matched in the reader's own
    /// voice, `readers_kana`).
    voice: Option<usize>,
    /// Each kana of the best-matching poem and the verse frames `[from, to)` aligned to it.
    kana_spans: Vec<(String, usize, usize)>,
}

/// The verse's frames `[a, b)` as they are matched: every template step, normalised.
fn verse_frames(f: &Frames, a: usize, b: usize) -> Vec<[f32; CEPS]> {
    normalised(
        &f.ceps[a.min(f.len())..b.min(f.len())]
            .iter()
            .step_by(TEMPLATE_STEP)
            .copied()
            .collect::<Vec<_>>(),
    )
}

/// The poem of a kami-no-ku, its score, the kana onsets and the best-matching poem even
/// when it does not stand out.
fn name_poem(verse: &Verse, t: &KanaTemplates, pool: &ReadPool) -> Naming {
    let x = &verse.frames;
    let step_s = HOP_S * TEMPLATE_STEP as f64;
    let span_s = x.len() as f64 * step_s;
    let voices = t.kana.values().next().map_or(0, |v| v.len());
    // A template's first kana and each later kana, in template frames, for a verse of
    // `units` kana over this verse's span.
    let pace = |units: usize| -> (usize, usize) {
        let n = units.max(2);
        let first_s = TEMPLATE_FIRST_S.min(span_s * 0.4);
        let mora_s = ((span_s - first_s) / (n - 1) as f64).max(0.08);
        (
            (first_s / step_s).round() as usize,
            (mora_s / step_s).round() as usize,
        )
    };
    // A poem's match is given up once it must cost more than the second best its thread
    // has seen: it can then be neither the best nor the second.
    let score_poem = |p: &Poem, second: f64| -> (f64, u8, usize) {
        let units = sound_units(&p.kami_kana, &p.kami_pron);
        let (ff, mf) = pace(units.len());
        let mut best = (f64::INFINITY, 0usize);
        for v in 0..voices {
            if let Some((y, _)) = poem_template(t, &units, v, ff, mf) {
                let (c, _) = dtw(x, &normalised(&y), false, second.min(best.0));
                if c < best.0 {
                    best = (c, v);
                }
            }
        }
        (best.0, p.no, best.1)
    };
    let score_share = |part: &[&'static Poem]| -> Vec<(f64, u8, usize)> {
        let mut two = [f64::INFINITY; 2];
        part.iter()
            .map(|p| {
                let s = score_poem(p, two[1]);
                if s.0 < two[0] {
                    two = [s.0, two[0]];
                } else if s.0 < two[1] {
                    two[1] = s.0;
                }
                s
            })
            .collect()
    };
    // The poems not yet read are matched on NAMING_THREADS threads, each a share of them.
    let unread = pool.unread();
    let share = unread.len().div_ceil(NAMING_THREADS).max(1);
    let mut scored: Vec<(f64, u8, usize)> = std::thread::scope(|sc| {
        let jobs: Vec<_> = unread
            .chunks(share)
            .map(|part| sc.spawn(|| score_share(part)))
            .collect();
        jobs.into_iter()
            .flat_map(|j| j.join().unwrap_or_default())
            .collect()
    });
    scored.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut naming = Naming {
        poem: None,
        score: 0.0,
        onsets: fixed_pace_onsets(verse.start_s, span_s),
        candidate: None,
        aligned: Vec::new(),
        voice: None,
        kana_spans: Vec::new(),
    };
    let Some(&(c1, p1, v1)) = scored.first() else {
        return naming;
    };
    let c2 = scored.get(1).map_or(f64::INFINITY, |s| s.0);
    let score = if c2.is_finite() { (c2 - c1) / c2 } else { 1.0 };
    let Some(pd) = poem(p1) else {
        return naming;
    };
    let units = sound_units(&pd.kami_kana, &pd.kami_pron);
    let (ff, mf) = pace(units.len());
    if let Some((y, starts)) = poem_template(t, &units, v1, ff, mf) {
        let y = normalised(&y);
        let (_, first_i) = dtw(x, &y, true, f64::INFINITY);
        if !first_i.is_empty() {
            let first_s = verse.first_frame as f64 * HOP_S;
            naming.onsets = starts
                .iter()
                .enumerate()
                .map(|(k, &j)| {
                    if k == 0 {
                        verse.start_s
                    } else {
                        first_s + first_i[j.min(first_i.len() - 1)] as f64 * step_s
                    }
                })
                .collect();
            naming.aligned = first_i.iter().copied().zip(y).collect();
            naming.kana_spans = units
                .iter()
                .enumerate()
                .map(|(k, u)| {
                    let at = |j: usize| first_i[j.min(first_i.len() - 1)];
                    let to = starts.get(k + 1).map_or(x.len(), |&j| at(j));
                    (u.clone(), at(starts[k]), to.max(at(starts[k])))
                })
                .collect();
        }
    }
    naming.voice = Some(v1);
    naming.poem = (score >= POEM_SCORE_MIN).then_some(p1);
    naming.score = score;
    naming.candidate = Some(p1);
    naming
}

/// A map of the reader's cepstra (normalised over each verse) onto the templates',
/// learnt from this recording's own verses that named their poem plainly: an affine map
/// fitted by least squares on the frames their alignment paired, held near no change.
/// A voice with no template then meets the templates halfway, in its own measure.
struct Adaptation {
    /// Rows: the map's output; columns: the input's MATCH_CEPS cepstra, then 1.
    map: nalgebra::SMatrix<f64, MATCH_CEPS, { MATCH_CEPS + 1 }>,
}

impl Adaptation {
    /// The map that best takes each `x` to its paired `y`, or `None` without enough pairs.
    fn fit(pairs: &[([f32; CEPS], [f32; CEPS])]) -> Option<Adaptation> {
        type Square = nalgebra::SMatrix<f64, { MATCH_CEPS + 1 }, { MATCH_CEPS + 1 }>;
        type Cross = nalgebra::SMatrix<f64, { MATCH_CEPS + 1 }, MATCH_CEPS>;
        if pairs.len() < ADAPT_PAIRS_MIN {
            return None;
        }
        let mut gram = Square::zeros();
        let mut cross = Cross::zeros();
        for (x, y) in pairs {
            let mut xa = nalgebra::SVector::<f64, { MATCH_CEPS + 1 }>::zeros();
            for k in 0..MATCH_CEPS {
                xa[k] = x[k] as f64;
            }
            xa[MATCH_CEPS] = 1.0;
            let ya = nalgebra::SVector::<f64, MATCH_CEPS>::from_fn(|k, _| y[k] as f64);
            gram += xa * xa.transpose();
            cross += xa * ya.transpose();
        }
        // Held near no change: a ridge pulling the map toward the identity.
        let ridge = ADAPT_RIDGE_SHARE * pairs.len() as f64;
        for k in 0..MATCH_CEPS {
            gram[(k, k)] += ridge;
            cross[(k, k)] += ridge;
        }
        let solved = gram.lu().solve(&cross)?;
        Some(Adaptation {
            map: solved.transpose(),
        })
    }

    /// One frame in the templates' measure.
    fn apply_one(&self, x: &[f32; CEPS]) -> [f32; CEPS] {
        let mut o = [0.0f32; CEPS];
        for (k, ok) in o.iter_mut().enumerate().take(MATCH_CEPS) {
            let v: f64 = x[..MATCH_CEPS]
                .iter()
                .enumerate()
                .map(|(m, &xm)| self.map[(k, m)] * xm as f64)
                .sum();
            *ok = (v + self.map[(k, MATCH_CEPS)]) as f32;
        }
        o
    }

    /// A verse's frames in the templates' measure, normalised again over the verse.
    fn apply(&self, frames: &[[f32; CEPS]]) -> Vec<[f32; CEPS]> {
        normalised(&frames.iter().map(|x| self.apply_one(x)).collect::<Vec<_>>())
    }

    /// The map learnt from the frames that the alignment of the verses `teachers` paired
    /// with template frames (`fit`).
    fn taught_by<'a>(teachers: impl Iterator<Item = &'a (Verse, Naming)>) -> Option<Adaptation> {
        let pairs: Vec<([f32; CEPS], [f32; CEPS])> = teachers
            .flat_map(|(v, n)| n.aligned.iter().map(|&(i, y)| (v.frames[i], y)))
            .collect();
        Adaptation::fit(&pairs)
    }

    /// A verse in the templates' measure.
    fn verse(&self, v: &Verse) -> Verse {
        Verse {
            frames: self.apply(&v.frames),
            first_frame: v.first_frame,
            start_s: v.start_s,
        }
    }
}

/// A kana as this reader says it lasts at least this many template frames to serve as
/// its template ...
const READER_KANA_MIN_FRAMES: usize = 4;
/// ... and a held first kana gives only its first this many frames.
const READER_HELD_FRAMES: usize = 30;

/// Kana templates in this reader's own voice: every kana that the verses named so far
/// hold, cut from them where their alignment put it and taken into the templates'
/// measure (`Adaptation`); a kana the reader has not yet said comes from the template
/// voice that matched the named verses most often, in the same measure. One voice. The
/// verse `except`, when given, gives none of its kana (it would vouch for itself).
fn readers_kana(
    t: &KanaTemplates,
    verses: &[(Verse, Naming)],
    adaptation: &Adaptation,
    except: Option<usize>,
) -> KanaTemplates {
    let named = verses
        .iter()
        .enumerate()
        .filter(|&(k, (_, n))| n.poem.is_some() && Some(k) != except)
        .map(|(_, x)| x);
    let voices = t.kana.values().next().map_or(0, |v| v.len());
    let mut votes = vec![0usize; voices.max(1)];
    // Each kana's cuts after a verse's first (length, verse, from, to), and its first
    // cut as a verse's held opening.
    let mut inner: HashMap<&str, Vec<(usize, &Verse, usize, usize)>> = HashMap::new();
    let mut opening: HashMap<&str, (&Verse, usize, usize)> = HashMap::new();
    for (v, n) in named {
        if let Some(voice) = n.voice.filter(|&i| i < votes.len()) {
            votes[voice] += 1;
        }
        for (i, (u, from, to)) in n.kana_spans.iter().enumerate() {
            if to - from < READER_KANA_MIN_FRAMES || *to > v.frames.len() {
                continue;
            }
            if i == 0 {
                opening.entry(u.as_str()).or_insert((
                    v,
                    *from,
                    (*from + READER_HELD_FRAMES).min(*to),
                ));
            } else {
                inner
                    .entry(u.as_str())
                    .or_default()
                    .push((to - from, v, *from, *to));
            }
        }
    }
    let fallback = (0..votes.len()).max_by_key(|&v| votes[v]).unwrap_or(0);
    // The fallback voice's kana in a measure like a normalised template's: its mean and
    // spread over all its kana taken out.
    let all: Vec<[f32; CEPS]> = t
        .kana
        .values()
        .filter_map(|v| v.get(fallback))
        .flatten()
        .copied()
        .collect();
    let (mean, sd) = mean_and_spread(&all);
    let mut kana = BTreeMap::new();
    for (k, per_voice) in &t.kana {
        // Of several cuts, the one of median length.
        let own = inner
            .get_mut(k.as_str())
            .map(|cuts| {
                cuts.sort_by_key(|c| c.0);
                let (_, v, a, b) = cuts[cuts.len() / 2];
                (v, a, b)
            })
            .or_else(|| opening.get(k.as_str()).copied());
        let frames: Vec<[f32; CEPS]> = match own {
            Some((v, a, b)) => v.frames[a..b]
                .iter()
                .map(|x| adaptation.apply_one(x))
                .collect(),
            None => per_voice
                .get(fallback)
                .map(|f| standardised(f, &mean, &sd))
                .unwrap_or_default(),
        };
        kana.insert(k.clone(), vec![frames]);
    }
    KanaTemplates { kana }
}

/// The mean and spread of each of the lower MATCH_CEPS cepstra over `v`.
fn mean_and_spread(v: &[[f32; CEPS]]) -> ([f32; CEPS], [f32; CEPS]) {
    let mut mean = [0.0f32; CEPS];
    for f in v {
        for k in 0..MATCH_CEPS {
            mean[k] += f[k];
        }
    }
    for m in mean.iter_mut() {
        *m /= v.len().max(1) as f32;
    }
    let mut sd = [1.0f32; CEPS];
    for k in 0..MATCH_CEPS {
        let var = v.iter().map(|f| (f[k] - mean[k]).powi(2)).sum::<f32>() / v.len().max(1) as f32;
        sd[k] = var.sqrt().max(1e-3);
    }
    (mean, sd)
}

/// Verses whose poem the templates could not tell are matched again in the reader's
/// own measure (`Adaptation`), learnt from the verses named so far; only the poems no
/// verse has been named are left to them. Each round learns from the verses the last
/// one named too.
fn rename_in_the_readers_voice(
    t: &KanaTemplates,
    out: &mut [HeardReading],
    verses: &mut [(Verse, Naming)],
) {
    for _ in 0..ADAPT_ROUNDS {
        let named = verses.iter().filter(|(_, n)| n.poem.is_some()).count();
        if named == verses.len() {
            return;
        }
        // The named verses teach; with none named, the verse whose closest poem stands
        // out most does (it stays null unless the round names it; a round that names
        // nothing ends the learning).
        let surest = (named == 0)
            .then(|| {
                verses
                    .iter()
                    .enumerate()
                    .max_by(|a, b| a.1 .1.score.total_cmp(&b.1 .1.score))
                    .map(|(k, _)| k)
            })
            .flatten();
        let teachers = verses
            .iter()
            .enumerate()
            .filter(|(k, (_, n))| n.poem.is_some() || Some(*k) == surest)
            .map(|(_, x)| x);
        let Some(adaptation) = Adaptation::taught_by(teachers) else {
            return;
        };
        let mut pool = ReadPool::new();
        for p in verses.iter().filter_map(|(_, n)| n.poem) {
            pool.mark_read(p);
        }
        let reader = readers_kana(t, verses, &adaptation, None);
        let mut renamed = false;
        for (r, (v, n)) in out.iter_mut().zip(verses.iter_mut()) {
            if n.poem.is_some() {
                continue;
            }
            let adapted = adaptation.verse(v);
            // Matched again in the templates' measure; a verse still left null there is
            // named in the reader's own voice when that agrees with its closest match, or
            // stands out there twice as plainly as a naming must (OWN_VOICE_SCORE_MIN).
            let mut again = name_poem(&adapted, t, &pool);
            if again.poem.is_none() {
                let own = name_poem(&adapted, &reader, &pool);
                if own_voice_names(&own, again.candidate) {
                    again = Naming { voice: None, ..own };
                }
            }
            if let Some(p) = again.poem {
                pool.mark_read(p);
                r.poem = Some(p);
                r.candidate = Some(p);
                r.poem_score = round_score(again.score);
                r.onsets_s = again.onsets.iter().copied().map(round_ms).collect();
                *n = again;
                renamed = true;
            }
        }
        if !renamed {
            return;
        }
    }
}

/// A verse the templates named by less than OWN_VOICE_SCORE_MIN is matched once more in
/// the reader's own kana, cut from the other named verses; when that names another poem
/// by OWN_VOICE_SCORE_MIN, the two measures disagree plainly and the verse is left null
/// (`analyze` then takes the card taken, for review).
fn second_opinion(t: &KanaTemplates, out: &mut [HeardReading], verses: &[(Verse, Naming)]) {
    let Some(adaptation) = Adaptation::taught_by(verses.iter().filter(|(_, n)| n.poem.is_some()))
    else {
        return;
    };
    for (k, (v, n)) in verses.iter().enumerate() {
        let Some(p) = n
            .poem
            .filter(|_| n.voice.is_some() && n.score < OWN_VOICE_SCORE_MIN)
        else {
            continue;
        };
        let reader = readers_kana(t, verses, &adaptation, Some(k));
        let mut pool = ReadPool::new();
        for q in verses
            .iter()
            .filter_map(|(_, n)| n.poem)
            .filter(|&q| q != p)
        {
            pool.mark_read(q);
        }
        let own = name_poem(&adaptation.verse(v), &reader, &pool);
        if own.poem.is_some_and(|q| q != p) && own.score >= OWN_VOICE_SCORE_MIN {
            out[k].poem = None;
        }
    }
}

/// Whether a verse named in the reader's own voice takes that name: when it agrees with
/// the templates' closest poem, or stands out by OWN_VOICE_SCORE_MIN without it.
fn own_voice_names(own: &Naming, closest: Option<u8>) -> bool {
    own.poem.is_some() && (own.poem == closest || own.score >= OWN_VOICE_SCORE_MIN)
}

/// Onsets by the contract's tempo model when no poem can be aligned: the first kana
/// held, the rest evenly over the verse.
fn fixed_pace_onsets(start_s: f64, span_s: f64) -> Vec<f64> {
    const UNITS: usize = 17;
    let first = TEMPLATE_FIRST_S.min(span_s * 0.4);
    let mora = (span_s - first) / (UNITS - 1) as f64;
    (0..UNITS)
        .map(|k| {
            if k == 0 {
                start_s
            } else {
                start_s + first + (k - 1) as f64 * mora
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A verse of poem `no` as a voice unlike the templates says it: template voice 0
    /// at a reader's pace, its cepstra mixed into each other (another vocal tract).
    fn verse_in_another_voice(no: u8) -> Verse {
        let p = poem(no).expect("a poem");
        let units = sound_units(&p.kami_kana, &p.kami_pron);
        let (y, _) = poem_template(embedded(), &units, 0, 110, 22).expect("its kana");
        let mixed: Vec<[f32; CEPS]> = y
            .iter()
            .map(|c| {
                let mut o = [0.0f32; CEPS];
                for k in 0..MATCH_CEPS {
                    o[k] =
                        0.5 * c[k] - 0.9 * c[(k + 1) % MATCH_CEPS] + 0.6 * c[(k + 3) % MATCH_CEPS];
                }
                o
            })
            .collect();
        Verse {
            frames: normalised(&mixed),
            first_frame: 0,
            start_s: 0.0,
        }
    }

    /// Each verse matched by the templates in turn, as `heard_readings` does before the
    /// reader's voice is learnt: the readings and the verses with their naming.
    fn named_in_turn(verses: Vec<Verse>) -> (Vec<HeardReading>, Vec<(Verse, Naming)>) {
        let mut pool = ReadPool::new();
        let mut out = Vec::new();
        let mut named_verses = Vec::new();
        for (i, verse) in verses.into_iter().enumerate() {
            let named = name_poem(&verse, embedded(), &pool);
            if let Some(p) = named.poem {
                pool.mark_read(p);
            }
            out.push(HeardReading {
                seq: i as u32 + 1,
                poem: named.poem,
                kami_start_s: 0.0,
                onsets_s: Vec::new(),
                kami_end_s: 0.0,
                shimo_start_s: None,
                void: false,
                poem_score: named.score,
                candidate: named.candidate,
            });
            named_verses.push((verse, named));
        }
        (out, named_verses)
    }

    #[test]
    fn a_map_learnt_from_paired_frames_takes_the_reader_to_the_templates() {
        let pairs: Vec<([f32; CEPS], [f32; CEPS])> = (0..400)
            .map(|i| {
                let mut x = [0.0f32; CEPS];
                for (k, v) in x.iter_mut().enumerate().take(MATCH_CEPS) {
                    *v = ((i * (k + 3)) as f32 * 0.37).sin();
                }
                let mut y = [0.0f32; CEPS];
                for k in 0..MATCH_CEPS {
                    y[k] = 0.8 * x[k] + 0.3 * x[(k + 1) % MATCH_CEPS] - 0.2;
                }
                (x, y)
            })
            .collect();
        let map = Adaptation::fit(&pairs).expect("enough pairs");
        let worst = pairs
            .iter()
            .flat_map(|(x, y)| {
                let mapped = map.apply_one(x);
                (0..MATCH_CEPS).map(move |k| (mapped[k] - y[k]).abs())
            })
            .fold(0.0f32, f32::max);
        assert!(
            worst < 0.1,
            "mapped frames off their pairs by up to {worst:.3}"
        );
        assert!(Adaptation::fit(&pairs[..ADAPT_PAIRS_MIN - 1]).is_none());
    }

    #[test]
    fn verses_in_a_voice_without_template_are_named_after_learning_the_voice() {
        let t = embedded();
        let (mut out, mut verses) = named_in_turn((1..=6u8).map(verse_in_another_voice).collect());
        let before: Vec<Option<u8>> = out.iter().map(|r| r.poem).collect();
        assert!(
            before.iter().filter(|p| p.is_some()).count() <= 3,
            "the templates alone already name {before:?}"
        );
        rename_in_the_readers_voice(t, &mut out, &mut verses);
        let after: Vec<Option<u8>> = out.iter().map(|r| r.poem).collect();
        assert_eq!(
            after,
            (1..=6).map(Some).collect::<Vec<_>>(),
            "before: {before:?}"
        );
    }

    #[test]
    fn with_no_verse_named_the_surest_one_teaches_the_readers_voice() {
        let t = embedded();
        let (mut out, mut verses) = named_in_turn((1..=6u8).map(verse_in_another_voice).collect());
        // As if the templates had named none: every verse left at its closest match.
        for (r, (_, n)) in out.iter_mut().zip(verses.iter_mut()) {
            r.poem = None;
            n.poem = None;
        }
        rename_in_the_readers_voice(t, &mut out, &mut verses);
        let after: Vec<Option<u8>> = out.iter().map(|r| r.poem).collect();
        assert_eq!(after, (1..=6).map(Some).collect::<Vec<_>>());
    }

    /// Verses of poems `nos` as a reader whose every kana is off the templates by its
    /// own amount (no one map of the cepstra takes them all back), at a reader's pace.
    fn verses_in_a_voice_of_its_own(nos: &[u8], off: f32) -> Vec<Verse> {
        let own = KanaTemplates {
            kana: embedded()
                .kana
                .iter()
                .map(|(k, voices)| {
                    let seed = k.chars().map(|c| c as u32).sum::<u32>() as f32;
                    let frames: Vec<[f32; CEPS]> = voices[0]
                        .iter()
                        .map(|c| {
                            let mut o = *c;
                            for (m, v) in o.iter_mut().enumerate().take(MATCH_CEPS) {
                                *v += off * (seed * 0.618 * (m + 1) as f32).sin();
                            }
                            o
                        })
                        .collect();
                    (k.clone(), vec![frames])
                })
                .collect(),
        };
        nos.iter()
            .map(|&no| {
                let p = poem(no).expect("a poem");
                let units = sound_units(&p.kami_kana, &p.kami_pron);
                let (y, _) = poem_template(&own, &units, 0, 110, 22).expect("its kana");
                Verse {
                    frames: normalised(&y),
                    first_frame: 0,
                    start_s: 0.0,
                }
            })
            .collect()
    }

    #[test]
    fn the_readers_kana_are_cut_where_the_alignment_put_them() {
        let t = embedded();
        let frames: Vec<[f32; CEPS]> = (0..60)
            .map(|i| {
                let mut c = [0.0f32; CEPS];
                for (m, v) in c.iter_mut().enumerate().take(MATCH_CEPS) {
                    *v = ((i * (m + 2)) as f32 * 0.21).sin();
                }
                c
            })
            .collect();
        let span = |k: &str, a: usize, b: usize| (k.to_string(), a, b);
        let naming = Naming {
            poem: Some(1),
            score: 0.2,
            onsets: Vec::new(),
            candidate: Some(1),
            aligned: Vec::new(),
            voice: Some(2),
            // The held first kana, then two more.
            kana_spans: vec![span("あ", 0, 40), span("き", 40, 52), span("の", 52, 60)],
        };
        let verse = Verse {
            frames: frames.clone(),
            first_frame: 0,
            start_s: 0.0,
        };
        let same: Vec<([f32; CEPS], [f32; CEPS])> =
            (0..400).map(|i| (frames[i % 60], frames[i % 60])).collect();
        let map = Adaptation::fit(&same).expect("enough pairs");
        let own = readers_kana(t, &[(verse, naming)], &map, None);
        let close = |a: &[[f32; CEPS]], b: &[[f32; CEPS]]| {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| (0..MATCH_CEPS).all(|m| (x[m] - y[m]).abs() < 0.05))
        };
        assert!(
            close(&own.kana["き"][0], &frames[40..52]),
            "き not cut from frames 40-52"
        );
        assert!(close(&own.kana["の"][0], &frames[52..60]));
        // A held first kana gives its opening only.
        assert!(close(&own.kana["あ"][0], &frames[0..READER_HELD_FRAMES]));
        // A kana the reader has not said: the voice that matched, in a template's measure.
        let unsaid = &own.kana["ふ"][0];
        assert_eq!(unsaid.len(), t.kana["ふ"][2].len());
        assert!(!close(unsaid, &t.kana["ふ"][0][..]));
        assert_eq!(own.kana.len(), t.kana.len());
        assert!(own.kana.values().all(|v| v.len() == 1));
    }

    #[test]
    fn a_reader_unlike_every_template_is_named_in_its_own_voice_once_its_kana_are_heard() {
        let t = embedded();
        let nos: Vec<u8> = (1..=12).collect();
        let (mut out, mut verses) = named_in_turn(verses_in_a_voice_of_its_own(&nos, 60.0));
        let before: Vec<Option<u8>> = out.iter().map(|r| r.poem).collect();
        rename_in_the_readers_voice(t, &mut out, &mut verses);
        let after: Vec<Option<u8>> = out.iter().map(|r| r.poem).collect();
        for (r, no) in out.iter().zip(&nos) {
            assert!(
                r.poem.is_none_or(|p| p == *no),
                "verse of poem {no} named {:?}: {after:?}",
                r.poem
            );
        }
        let own_voice = verses.iter().filter(|(_, n)| n.voice.is_none()).count();
        assert!(
            own_voice >= 1,
            "no verse named in the reader's own voice: before {before:?}, after {after:?}"
        );
    }

    #[test]
    fn a_naming_in_the_readers_own_voice_stands_alone_only_when_plain() {
        let own = |poem: u8, score: f64| Naming {
            poem: Some(poem),
            score,
            onsets: Vec::new(),
            candidate: Some(poem),
            aligned: Vec::new(),
            voice: None,
            kana_spans: Vec::new(),
        };
        // Agreeing with the templates' closest poem, a naming there is enough.
        assert!(own_voice_names(&own(5, POEM_SCORE_MIN), Some(5)));
        // Against another closest poem, or none, it must stand out twice as plainly.
        assert!(!own_voice_names(&own(5, 1.5 * POEM_SCORE_MIN), Some(7)));
        assert!(own_voice_names(&own(5, 2.0 * POEM_SCORE_MIN), Some(7)));
        assert!(own_voice_names(&own(5, 0.2), None));
        let unnamed = Naming {
            poem: None,
            ..own(5, 0.2)
        };
        assert!(!own_voice_names(&unnamed, Some(5)));
    }

    #[test]
    fn a_verse_named_narrowly_is_left_null_when_the_readers_own_kana_name_another_plainly() {
        let t = embedded();
        let nos: Vec<u8> = (1..=12).collect();
        let (mut out, mut verses) = named_in_turn(verses_in_a_voice_of_its_own(&nos, 20.0));
        let named = verses.iter().filter(|(_, n)| n.poem.is_some()).count();
        assert!(named >= 8, "{named} of 12 named by the templates");
        // Two verses the templates named narrowly: one rightly, one as another poem.
        let (wrong, right) = (
            nos.iter()
                .position(|&p| verses[(p - 1) as usize].1.poem == Some(p))
                .expect("one"),
            nos.iter()
                .rposition(|&p| verses[(p - 1) as usize].1.poem == Some(p))
                .expect("two"),
        );
        for k in [wrong, right] {
            verses[k].1.score = POEM_SCORE_MIN;
            verses[k].1.voice = Some(0);
        }
        verses[wrong].1.poem = Some(99);
        out[wrong].poem = Some(99);
        second_opinion(t, &mut out, &verses);
        assert_eq!(out[wrong].poem, None, "the narrow wrong naming stands");
        assert_eq!(
            out[right].poem,
            Some(nos[right]),
            "the narrow right naming fell"
        );
    }

    /// A vowel-like sound: harmonics of 150 Hz whose balance is set by `shade` (0..1).
    fn vowel(t_s: f64, shade: f64) -> f32 {
        (1..12)
            .map(|h| {
                let weight =
                    (1.0 - shade) / h as f64 + shade * (-((h as f64 - 5.0).powi(2)) / 4.0).exp();
                weight * (2.0 * std::f64::consts::PI * 150.0 * h as f64 * t_s).sin()
            })
            .sum::<f64>() as f32
            * 0.05
    }

    #[test]
    fn a_held_kana_broken_for_less_than_a_pause_opens_its_verse_at_its_first_piece() {
        const RATE: u32 = 16_000;
        // Silence, then a held kana from 2.0 s drifting slowly in shade, broken from 2.4
        // to 2.48 s, held on to 3.1 s; then 3 s of shorter sounds of changing shades.
        let n = 8 * RATE as usize;
        let x: Vec<f32> = (0..n)
            .map(|i| {
                let t = i as f64 / RATE as f64;
                let hiss = ((i * 7919) % 101) as f32 / 101.0 - 0.5;
                let voice = if (2.0..2.4).contains(&t) || (2.48..3.1).contains(&t) {
                    vowel(t, (t - 2.0) / 1.1 * 0.5)
                } else if (3.1..6.1).contains(&t) && (t - 3.1) % 0.25 < 0.21 {
                    vowel(t, ((t - 3.1) / 0.25).floor() % 4.0 / 3.0)
                } else {
                    0.0
                };
                voice + hiss * 0.0005
            })
            .collect();
        let heard = heard_readings(Path::new("test.wav"), &x, RATE).expect("a verse");
        assert_eq!(heard.len(), 1, "{heard:?}");
        let start = heard[0].kami_start_s;
        assert!((start - 2.0).abs() < 0.03, "verse heard from {start:.3} s");
    }

    /// A test track at 16 kHz from `voice(t)`, over a faint hiss.
    fn track(seconds: usize, voice: impl Fn(f64) -> f32) -> Vec<f32> {
        const RATE: usize = 16_000;
        (0..seconds * RATE)
            .map(|i| {
                let hiss = ((i * 7919) % 101) as f32 / 101.0 - 0.5;
                voice(i as f64 / RATE as f64) + hiss * 0.0005
            })
            .collect()
    }

    /// Kana said at pace from `from` to `to`: 0.21 s of sound every 0.25 s, in turning shades.
    fn kana_at_pace(t: f64, from: f64, to: f64) -> f32 {
        if (from..to).contains(&t) && (t - from) % 0.25 < 0.21 {
            vowel(t, ((t - from) / 0.25).floor() % 4.0 / 3.0)
        } else {
            0.0
        }
    }

    /// The readings heard in a 16 kHz test track, which must be one.
    fn the_one_verse(x: &[f32]) -> HeardReading {
        let mut heard = heard_readings(Path::new("test.wav"), x, 16_000).expect("a verse");
        assert_eq!(heard.len(), 1, "{heard:?}");
        heard.remove(0)
    }

    const SOFT_GAIN: f32 = 0.2;
    const MURMUR_GAIN: f32 = 0.02;

    /// A drawn-out vowel: one shade wobbling a little.
    fn held_vowel(t: f64) -> f32 {
        vowel(t, 0.3 + 0.1 * (2.0 * std::f64::consts::PI * t / 0.5).sin())
    }

    #[test]
    fn a_held_kana_broken_into_short_pieces_after_a_pause_still_opens_its_verse() {
        // A held kana from 2.0 s broken from 2.42 to 2.62 s (longer than a pause), neither
        // piece as long as a held kana; then 3 s of kana at pace.
        let x = track(8, |t| {
            if (2.0..2.42).contains(&t) || (2.62..3.1).contains(&t) {
                held_vowel(t)
            } else {
                kana_at_pace(t, 3.15, 6.15)
            }
        });
        let heard = the_one_verse(&x);
        let start = heard.kami_start_s;
        assert!((start - 2.0).abs() < 0.03, "verse heard from {start:.3} s");
    }

    #[test]
    fn a_held_kana_too_soft_to_be_voiced_before_its_break_still_opens_its_verse() {
        // Under a steady murmur, a held kana from 2.0 s sounds only a few dB over it until
        // a break from 2.42 to 2.62 s, then loud to 3.1 s; then 3 s of kana at pace.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let murmur: Vec<f32> = (0..8 * 16_000)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5
            })
            .collect();
        let x = track(8, |t| {
            let voice = if (2.0..2.42).contains(&t) {
                SOFT_GAIN * held_vowel(t)
            } else if (2.62..3.1).contains(&t) {
                held_vowel(t)
            } else {
                kana_at_pace(t, 3.15, 6.15)
            };
            voice + MURMUR_GAIN * murmur[((t * 16_000.0) as usize).min(murmur.len() - 1)]
        });
        let heard = the_one_verse(&x);
        let start = heard.kami_start_s;
        assert!((start - 2.0).abs() < 0.03, "verse heard from {start:.3} s");
    }

    #[test]
    fn a_verse_cut_by_a_pause_a_little_too_long_is_carried_over_it() {
        // A held kana from 2.0 s, a second of kana, 0.3 s without voice (an unvoiced kana
        // under the murmur), then 2.5 s more: one verse, to its end.
        let x = track(9, |t| {
            if (2.0..3.1).contains(&t) {
                held_vowel(t)
            } else {
                kana_at_pace(t, 3.1, 4.1) + kana_at_pace(t, 4.4, 6.9)
            }
        });
        let heard = the_one_verse(&x);
        assert!((heard.kami_start_s - 2.0).abs() < 0.03, "{heard:?}");
        assert!((heard.kami_end_s - 6.9).abs() < 0.1, "{heard:?}");
    }

    #[test]
    fn speech_too_short_for_a_verse_is_not_carried_into_the_next_verse() {
        // A held kana and a second of kana (2.1 s in all), 0.3 s without voice, then a verse
        // of its own: a held kana from 4.4 s and 2.5 s of kana. One verse, the second.
        let x = track(10, |t| {
            if (2.0..3.1).contains(&t) || (4.4..5.5).contains(&t) {
                held_vowel(t)
            } else {
                kana_at_pace(t, 3.1, 4.1) + kana_at_pace(t, 5.5, 8.0)
            }
        });
        let heard = the_one_verse(&x);
        assert!((heard.kami_start_s - 4.4).abs() < 0.03, "{heard:?}");
    }

    #[test]
    fn a_verse_starts_where_its_periodic_sound_stands_over_the_murmur() {
        // Frames of 5 ms: murmur (voicing 0.3-0.45, at the floor) to frame 100, a nasal
        // from frame 100 (voicing 0.6-0.75, 2 dB over the floor, one frame dipping to 0.5),
        // voiced (10 dB over) from frame 120.
        let n = 200;
        let voicing: Vec<f32> = (0..n)
            .map(|i| match i {
                _ if i < 100 => 0.3 + 0.15 * ((i * 7) % 10) as f32 / 10.0,
                108 => 0.5,
                _ if i < 120 => 0.6 + 0.15 * ((i * 3) % 10) as f32 / 10.0,
                _ => 0.9,
            })
            .collect();
        let level_db: Vec<f32> = (0..n)
            .map(|i| match i {
                _ if i < 100 => 0.5,
                _ if i < 120 => 2.0,
                _ => 10.0,
            })
            .collect();
        let tracks = |voicing: Vec<f32>| Tracks {
            f: Frames {
                level_db: level_db.clone(),
                high_db: vec![0.0; n],
                voicing,
                ceps: vec![[0.0; CEPS]; n],
            },
            floor: vec![0.0; n],
            high_floor: vec![0.0; n],
            voiced: (0..n).map(|i| i >= 120).collect(),
        };
        let start = periodic_start(&tracks(voicing.clone()), 120, 30).expect("a nasal");
        assert!((start - 100.0 * HOP_S).abs() < 1e-9, "start {start:.4} s");
        // Two frames without it end the walk.
        let mut broken = voicing.clone();
        broken[110] = 0.4;
        broken[111] = 0.4;
        let start = periodic_start(&tracks(broken), 120, 30).expect("part of it");
        assert!((start - 112.0 * HOP_S).abs() < 1e-9, "start {start:.4} s");
        // No periodic frame before the voicing: nothing to move.
        let mut none = voicing;
        none[119] = 0.3;
        none[118] = 0.3;
        assert_eq!(periodic_start(&tracks(none), 120, 30), None);
    }
}

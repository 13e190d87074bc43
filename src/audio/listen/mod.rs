//! Listening: the reader's timeline heard in a sound track. A kami-no-ku is found where
//! a held voiced kana opens a stretch of continuous speech after a pause; its poem by
//! matching the speech against templates of the poems not yet read (a closed set, 15-1:
//! the kami-no-ku differ by the kimari-ji), and where those cannot tell, in the reader's
//! own measure and against the reader's own kana cut from the verses already named; its
//! kana onsets from the same alignment, each then moved to where the sound changes near
//! it; the shimo-no-ku as the next speech after it. After the first pass, in the reader's
//! own measure of the verses it heard (their hold and pace): a verse run on into its
//! shimo-no-ku is cut there and named again on its kami-no-ku alone, and a verse whose
//! held kana was heard only in part is found. Owns these thresholds; reads features and
//! templates, never files.
//!
//! The files: `opening` (where a verse opens), `naming` (which poem it is, and its kana
//! onsets), `readers_voice` (the reader's own voice learnt and the verses named again in
//! it).

mod naming;
mod opening;
mod readers_voice;

use self::naming::{name_poem, verse_frames, Naming, Verse};
use self::opening::{
    broken_hold_openings, first_sound, join_broken_held, opening_flux_ratio, periodic_start,
    short_hold_openings, unnamed_earlier_openings, voiced_ceps_distance, ReadersMeasure,
    HOLD_SHORT_NAMED_S, SHORT_HOLD_FIT_S,
};
use self::readers_voice::{rename_in_the_readers_voice, second_opinion, ReadersEar};
use super::features::{analyze, frame_at, frame_time, Frames, HOP_S};
use super::lead::{back_date_hidden_consonants, Levels};
use super::onset::sound_start;
use super::templates::{embedded, KanaTemplates};
use super::AudioError;
use crate::rules::kimariji::ReadPool;
use std::path::Path;

/// A frame is voiced when its autocorrelation peak passes this.
pub(super) const VOICING_MIN: f32 = 0.55;
/// ... and its speech-band level is this far above the local floor, dB.
pub(super) const ABOVE_FLOOR_DB: f32 = 8.0;
/// The sound before a verse is looked for from this long before its voicing (its own
/// first consonant lies nearer) ...
const QUIET_BEFORE_S: f64 = 0.15;
/// ... and the noise is measured from this long after that sound's last loud frame.
const QUIET_AFTER_S: f64 = 0.03;
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
/// A verse heard shorter than a kami-no-ku after its held kana is carried over one
/// pause up to this long (an unvoiced kana, a closure, under the murmur), to speech
/// that does not itself open with a held kana.
const VERSE_SPLIT_GAP_MAX_S: f64 = 0.35;
/// Silence before a verse's first sound.
const PAUSE_BEFORE_S: f64 = 0.15;
/// How far before the voicing a first consonant is looked for.
const CONSONANT_BACK_S: f64 = 0.15;
/// Below this margin between the best and the second poem, the poem is left null.
pub const POEM_SCORE_MIN: f64 = 0.04;
/// The cepstra a verse is matched on: the lower ones, the spectrum's broad shape (the
/// vowel), which voices share more than the fine detail above them.
const MATCH_CEPS: usize = 8;
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
    /// The reading heard as `seq`, named and aligned as `named`, from `kami_start_s` to
    /// `kami_end_s`; its shimo-no-ku is heard later.
    fn of_verse(seq: u32, named: &Naming, kami_start_s: f64, kami_end_s: f64) -> HeardReading {
        HeardReading {
            seq,
            poem: named.poem,
            candidate: named.candidate,
            kami_start_s: round_ms(kami_start_s),
            onsets_s: named.onsets.iter().copied().map(round_ms).collect(),
            kami_end_s: round_ms(kami_end_s),
            shimo_start_s: None,
            void: false,
            poem_score: round_score(named.score),
        }
    }

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

pub(super) struct Tracks {
    pub(super) f: Frames,
    pub(super) floor: Vec<f32>,
    pub(super) high_floor: Vec<f32>,
    pub(super) voiced: Vec<bool>,
}

impl Tracks {
    fn active(&self, i: usize) -> bool {
        self.f.level_db[i] > self.floor[i] + ABOVE_FLOOR_DB
            || self.f.high_db[i] > self.high_floor[i] + ABOVE_FLOOR_DB
    }

    /// Where the sound before the speech that turns voiced at frame `voiced_start` last
    /// stood over the floor (`active`), before that speech's own first sound may begin
    /// (QUIET_BEFORE_S), s; 0 when nothing did.
    fn quiet_from_s(&self, voiced_start: usize) -> f64 {
        let to = voiced_start.saturating_sub(frames_of(QUIET_BEFORE_S));
        (0..to.min(self.f.len()))
            .rev()
            .find(|&i| self.active(i))
            .map_or(0.0, |i| frame_time(i) + QUIET_AFTER_S)
    }

    /// A pause before frame `a`: no voiced frame in the PAUSE_BEFORE_S before it.
    pub(super) fn paused_before(&self, a: usize) -> bool {
        let a = a.min(self.voiced.len());
        !self.voiced[a.saturating_sub(frames_of(PAUSE_BEFORE_S))..a].contains(&true)
    }
}

/// The first sound of speech that turns voiced at frame `voiced_start`, s: the earlier
/// of the band levels' rise (`sound_start`) and the periodic sound's (`periodic_start`).
fn first_sound_s(samples: &[f32], rate_hz: u32, tr: &Tracks, voiced_start: usize) -> f64 {
    let heard = sound_start(
        samples,
        rate_hz,
        frame_time(voiced_start),
        tr.quiet_from_s(voiced_start),
    );
    periodic_start(tr, voiced_start, frames_of(PAUSE_BEFORE_S)).map_or(heard, |p| p.min(heard))
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
    // Each opening, then the pieces of a joined one after its first: the first piece may
    // be other speech (a shimo-no-ku said in one voiced run just before the pause), tried
    // alone when the joined run was passed over as a shimo-no-ku.
    let tries = openings.iter().flat_map(|o| {
        std::iter::once((o.start, o.end, None)).chain(o.rest.map(|r| (r, o.end, Some(o.start))))
    });
    let mut passed_as_shimo: Option<usize> = None;
    for (a, b, joined_from) in tries {
        if joined_from.is_some_and(|j| passed_as_shimo != Some(j)) {
            continue;
        }
        if a < busy_until || ((b - a) as f64) * HOP_S < HELD_MIN_S {
            continue;
        }
        // The verse this held kana opens: continuous speech from it, long enough.
        let Some(k) = verse_runs.iter().position(|r| r.0 <= a && a < r.1) else {
            continue;
        };
        let va = verse_runs[k].0;
        // A held kana joined over its breaks (`join_broken_held`) may break for longer
        // than speech inside a verse pauses: its verse runs on from its last piece.
        let k = verse_runs[k..]
            .iter()
            .position(|r| r.0 < b && b <= r.1)
            .map_or(k, |j| k + j);
        let mut vb = verse_runs[k].1;
        if ((vb - a) as f64) * HOP_S < KAMI_MIN_S {
            // Cut short by a pause a little too long for a verse: carried over it to the
            // speech after, unless that speech opens a verse of its own.
            let Some(&(na, nb)) = verse_runs.get(k + 1) else {
                continue;
            };
            let opens = openings.iter().any(|r| {
                r.start >= na
                    && r.start <= na + frames_of(0.05)
                    && (r.end - r.start) as f64 * HOP_S >= HELD_MIN_S
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
                if !tr.paused_before(a) {
                    continue;
                }
                start_voiced = a;
            }
        }
        if !tr.paused_before(start_voiced) {
            continue;
        }
        // The first speech after a kami-no-ku is its shimo-no-ku: it opens a new verse only
        // when it opens as one (a held kana) and its sound names a poem, or, where the
        // shimo-no-ku may have been heard already, when its sound names a poem.
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
        // Where the shimo-no-ku is due, speech that does not open held is it. Where the
        // pause inside the last verse may have been the shimo-no-ku already, speech that
        // does not plainly open held (a held kana some voices draw out with a moving
        // spectrum) opens a verse only when its sound names a poem (below).
        let opens_unheld = shimo_place && ratio >= flux_max;
        if opens_unheld && shimo_due {
            passed_as_shimo = Some(a);
            continue;
        }
        let verse = verse_opened_at(samples, rate_hz, &tr, start_voiced, vb);
        let (kami_start_s, kami_end_s) = (verse.start_s, frame_time(vb));
        let seq = out.len() as u32 + 1;
        let named = name_poem(&verse, templates, &pool);
        if (shimo_due || opens_unheld) && named.poem.is_none() {
            passed_as_shimo = Some(a);
            continue;
        }
        if let Some(p) = named.poem {
            pool.mark_read(p);
        }
        out.push(HeardReading::of_verse(
            seq,
            &named,
            kami_start_s,
            kami_end_s,
        ));
        verses.push((verse, named));
        busy_until = vb;
        last_inner_gap = inner_gap;
    }
    // A verse run on over a short pause into its own shimo-no-ku is named again on its
    // kami-no-ku alone.
    if let Some(m) = ReadersMeasure::of(&out) {
        if rename_run_on(&tr.f, &held_runs, templates, &m, &mut out, &mut verses) {
            pool = ReadPool::new();
            for p in out.iter().filter_map(|r| r.poem) {
                pool.mark_read(p);
            }
        }
    }
    // A verse whose held kana was heard only in part, found in the reader's measure.
    if let Some(m) = ReadersMeasure::of(&out) {
        for (a, end) in short_hold_openings(&tr, &held_runs, &verse_runs, &out, &m) {
            let verse = verse_opened_at(samples, rate_hz, &tr, a, end);
            let start_s = verse.start_s;
            let named = name_poem(&verse, templates, &pool);
            let len = frame_time(end) - start_s;
            let Some(p) = named.poem else { continue };
            if (len - m.verse_s(named.onsets.len())).abs() > SHORT_HOLD_FIT_S {
                continue;
            }
            pool.mark_read(p);
            let at = out.partition_point(|r| r.kami_start_s < start_s);
            out.insert(
                at,
                HeardReading::of_verse(0, &named, start_s, frame_time(end)),
            );
            verses.insert(at, (verse, named));
        }
        for (k, r) in out.iter_mut().enumerate() {
            r.seq = k as u32 + 1;
        }
    }
    reopen_broken_holds(
        samples,
        rate_hz,
        &tr,
        &held_runs,
        templates,
        &mut out,
        &mut verses,
    );
    // Before the reader's voice names the verses left, and again after: a verse heard
    // late may be named from its late start once the voice is learnt, yet start late.
    for learnt in [false, true] {
        if learnt {
            rename_in_the_readers_voice(templates, &mut out, &mut verses);
        }
        reopen_unnamed(
            samples,
            rate_hz,
            &tr,
            (&held_runs, &verse_runs),
            templates,
            &mut out,
            &mut verses,
        );
    }
    second_opinion(templates, &mut out, &verses);
    // A verse that ran on over a short pause into its own shimo-no-ku ends at that pause.
    if let Some(measure) = ReadersMeasure::of(&out) {
        for r in out.iter_mut() {
            if let Some(end) = run_on_end(&held_runs, r, &measure) {
                r.kami_end_s = round_ms(frame_time(end));
            }
        }
    }
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
            let s = sound_start(samples, rate_hz, frame_time(a), tr.quiet_from_s(a))
                .max(frame_time(from));
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

/// The poems named for the readings other than the `k`th, as read.
fn named_but(out: &[HeardReading], k: usize) -> ReadPool {
    let mut pool = ReadPool::new();
    for (j, r) in out.iter().enumerate() {
        if let (true, Some(p)) = (j != k, r.poem) {
            pool.mark_read(p);
        }
    }
    pool
}

/// The verse whose speech turns voiced at frame `a` (its first sound found back from
/// there, `first_sound`) and ends at frame `end`, as it is named.
fn verse_opened_at(samples: &[f32], rate_hz: u32, tr: &Tracks, a: usize, end: usize) -> Verse {
    let start = first_sound(tr, a, frames_of(CONSONANT_BACK_S));
    Verse {
        frames: verse_frames(&tr.f, start, end),
        first_frame: start,
        start_s: first_sound_s(samples, rate_hz, tr, a),
    }
}

/// Each verse heard from the second piece of its broken held kana
/// (`broken_hold_openings`, in the reader's measure of `out`) opened at the first piece,
/// and named again with it against the poems not named for another verse: named on the
/// frames without its first kana, it may have been matched to another poem. A verse
/// short of the reader's hold by less than plainly tells (`HOLD_SHORT_NAMED_S`), or
/// opened at a flicker, is moved only when the poem named with the piece is the one named
/// without it, or stands out better. True when any verse was.
fn reopen_broken_holds(
    samples: &[f32],
    rate_hz: u32,
    tr: &Tracks,
    held_runs: &[(usize, usize)],
    templates: &KanaTemplates,
    out: &mut [HeardReading],
    verses: &mut [(Verse, Naming)],
) -> bool {
    let Some(m) = ReadersMeasure::of(out) else {
        return false;
    };
    let mut any = false;
    let restored = broken_hold_openings(tr, held_runs, out, &m, HOLD_SHORT_NAMED_S);
    for (k, a) in restored.into_iter().enumerate() {
        let Some((a, plain)) = a else { continue };
        let verse = verse_opened_at(samples, rate_hz, tr, a, frame_at(out[k].kami_end_s));
        let pool = named_but(out, k);
        let named = name_poem(&verse, templates, &pool);
        if !plain {
            // Short within a reader's spread and a break's, or opened at a flicker: moved
            // only when its poem, heard with the piece, stands out better than as heard.
            let as_heard = name_poem(&verses[k].0, templates, &pool);
            // Named the same with the piece as without, or more plainly.
            let same_poem = out[k].poem.is_none_or(|p| named.poem == Some(p));
            let kept = named.poem.is_some()
                && same_poem
                && (named.poem == as_heard.poem || named.score > as_heard.score);
            if !kept {
                continue;
            }
        }
        out[k] = HeardReading::of_verse(out[k].seq, &named, verse.start_s, out[k].kami_end_s);
        verses[k] = (verse, named);
        any = true;
    }
    any
}

/// A run of voiced frames: its first frame and the frame after its last.
type Run = (usize, usize);

/// Each verse left without a poem opened at an earlier piece of its held kana, and ended
/// at its own end or at the pause where a kami-no-ku opening there would end
/// (`unnamed_earlier_openings`), when one of these ways names a poem with a better score
/// than the verse had: a verse heard from a later piece of its held kana that ran on into
/// its shimo-no-ku matches no poem well, as its kana lie out of place. True when any
/// verse was.
fn reopen_unnamed(
    samples: &[f32],
    rate_hz: u32,
    tr: &Tracks,
    (held_runs, verse_runs): (&[Run], &[Run]),
    templates: &KanaTemplates,
    out: &mut [HeardReading],
    verses: &mut [(Verse, Naming)],
) -> bool {
    let Some(m) = ReadersMeasure::of(out) else {
        return false;
    };
    let run_on = |r: &HeardReading| run_on_end(held_runs, r, &m);
    let ways = unnamed_earlier_openings(tr, held_runs, verse_runs, out, &m, run_on);
    // The reader's own kana are learnt only when there is a way to name.
    if ways.iter().all(Vec::is_empty) {
        return false;
    }
    let Some(ear) = ReadersEar::of_named(templates, verses) else {
        return false;
    };
    let mut any = false;
    for (k, ways) in ways.into_iter().enumerate() {
        if ways.is_empty() {
            continue;
        }
        let others = named_but(out, k);
        // The verse as heard, matched the same way, is the score to beat.
        let heard = ear.name(templates, &verses[k].0, &others).score;
        let mut best: Option<(Verse, Naming, usize)> = None;
        for (a, end) in ways {
            let verse = verse_opened_at(samples, rate_hz, tr, a, end);
            let named = ear.name(templates, &verse, &others);
            if named.poem.is_some()
                && named.score > heard
                && best.as_ref().is_none_or(|b| named.score > b.1.score)
            {
                best = Some((verse, named, end));
            }
        }
        if let Some((verse, named, end)) = best {
            out[k] = HeardReading::of_verse(out[k].seq, &named, verse.start_s, frame_time(end));
            verses[k] = (verse, named);
            any = true;
        }
    }
    any
}

/// Each verse that ran on over a short pause into its own shimo-no-ku (`run_on_end`)
/// named again on its kami-no-ku alone, against the poems not named for another verse,
/// and ended at that pause: the shimo-no-ku's kana, matched as part of the verse, pull
/// the match towards other poems and stretch the alignment of its kana. True when any
/// verse was.
fn rename_run_on(
    f: &Frames,
    held_runs: &[(usize, usize)],
    templates: &KanaTemplates,
    measure: &ReadersMeasure,
    out: &mut [HeardReading],
    verses: &mut [(Verse, Naming)],
) -> bool {
    let mut any = false;
    for k in 0..out.len() {
        let Some(end) = run_on_end(held_runs, &out[k], measure) else {
            continue;
        };
        let others = named_but(out, k);
        let first_frame = verses[k].0.first_frame;
        let cut = Verse {
            frames: verse_frames(f, first_frame, end),
            first_frame,
            start_s: verses[k].0.start_s,
        };
        let named = name_poem(&cut, templates, &others);
        out[k] = HeardReading::of_verse(out[k].seq, &named, cut.start_s, frame_time(end));
        verses[k] = (cut, named);
        any = true;
    }
    any
}

/// A verse heard this much longer than a kami-no-ku of its kana in the reader's measure
/// (`ReadersMeasure::verse_s`) ran on into its shimo-no-ku, s ...
const RUN_ON_MIN_S: f64 = 0.4;
/// ... over a pause at least this long ...
const RUN_ON_PAUSE_MIN_S: f64 = 0.15;
/// ... that begins at most this far from where the kami-no-ku would end.
const RUN_ON_END_WITHIN_S: f64 = 0.4;

/// The end of a kami-no-ku heard run on over a short pause into its own shimo-no-ku (the
/// verse's speech joins over pauses up to VERSE_GAP_MAX_S, and a reader may start the
/// shimo-no-ku sooner): the start of the pause of RUN_ON_PAUSE_MIN_S or more between
/// `held_runs` nearest where a kami-no-ku of its kana ends in this reader's measure,
/// when the verse runs RUN_ON_MIN_S past that. `None` for a verse of its own length.
fn run_on_end(
    held_runs: &[(usize, usize)],
    r: &HeardReading,
    measure: &ReadersMeasure,
) -> Option<usize> {
    if r.candidate.is_none() || r.onsets_s.len() < 3 {
        return None;
    }
    let due = r.kami_start_s + measure.verse_s(r.onsets_s.len());
    if r.kami_end_s - due < RUN_ON_MIN_S {
        return None;
    }
    let (from, to) = (frame_at(r.kami_start_s), frame_at(r.kami_end_s));
    held_runs
        .windows(2)
        .filter(|w| w[0].1 > from && w[1].0 < to)
        .filter(|w| (w[1].0 - w[0].1) as f64 * HOP_S >= RUN_ON_PAUSE_MIN_S)
        .map(|w| w[0].1)
        .filter(|&b| (frame_time(b) - due).abs() <= RUN_ON_END_WITHIN_S)
        .min_by(|&a, &b| {
            (frame_time(a) - due)
                .abs()
                .total_cmp(&(frame_time(b) - due).abs())
        })
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

#[cfg(test)]
mod tests;

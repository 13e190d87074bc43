//! The first consonant of a verse where the hall hides it: an unvoiced consonant (か, さ,
//! た, は rows) can lie under a loud hall's murmur for 30-100 ms, so the verse is heard
//! from its vowel. The same kana inside the recording's verses shows how long that
//! consonant is for this reader: the voicing breaks where it starts (the previous vowel
//! ends) and comes back with its vowel. Reads the voicing track and the heard readings;
//! measures everything on the recording at hand, knows no voice.

use super::features::{frame_at, frame_time};
use super::listen::{HeardReading, ABOVE_FLOOR_DB, VOICING_MIN};
use crate::rules::kimariji::sound_units;
use crate::rules::poems::poem;
use std::collections::HashMap;

/// The voicing break of a kana inside a verse is looked for from this long before its
/// aligned onset ...
const BREAK_BEFORE_S: f64 = 0.04;
/// ... to this long after it.
const BREAK_AFTER_S: f64 = 0.06;
/// The voice is back when this many frames in a row are voiced (15 ms).
const VOICED_RUN_FRAMES: usize = 3;
/// A consonant lasts at most this long; a longer break is a pause.
const LEAD_MAX_S: f64 = 0.25;
/// The verse's own vowel is looked for from this long before its heard start.
const VOWEL_FROM_S: f64 = 0.02;
/// Kana whose consonant is unvoiced: the voicing breaks for it. (A vowel, a nasal or a
/// glide keeps the voice going, so its length cannot be read from the voicing.)
const UNVOICED_OPENINGS: &str = "かきくけこさしすせそたちつてとはひふへほぱぴぷぺぽ";

/// The first frame from `from` that starts VOICED_RUN_FRAMES voiced frames.
fn voice_back(voicing: &[f32], from: usize) -> Option<usize> {
    (from..voicing.len().saturating_sub(VOICED_RUN_FRAMES)).find(|&i| {
        voicing[i..i + VOICED_RUN_FRAMES]
            .iter()
            .all(|&v| v >= VOICING_MIN)
    })
}

/// A kana's consonant inside a verse, as the voicing breaks for it.
struct Break {
    length_s: f64,
    /// The speech-band level in the break over the level floor, dB (its median).
    over_floor_db: f32,
}

/// The voicing break for the kana aligned at `onset_s` inside a verse: from the first
/// unvoiced frame near it to the voice coming back.
fn consonant_at(tracks: &Levels, onset_s: f64) -> Option<Break> {
    let voicing = tracks.voicing;
    let from = frame_at(onset_s - BREAK_BEFORE_S).max(1);
    let to = frame_at(onset_s + BREAK_AFTER_S).min(voicing.len());
    let broke = (from..to).find(|&i| voicing[i] < VOICING_MIN && voicing[i - 1] >= VOICING_MIN)?;
    let back = voice_back(voicing, broke)?;
    let length_s = frame_time(back) - frame_time(broke);
    if length_s > LEAD_MAX_S {
        return None;
    }
    let mut over: Vec<f32> = (broke..back)
        .map(|i| tracks.level_db[i] - tracks.floor_db[i])
        .collect();
    over.sort_by(f32::total_cmp);
    Some(Break {
        length_s,
        over_floor_db: over[over.len() / 2],
    })
}

/// The tracks a consonant is measured on, frame by frame.
pub struct Levels<'a> {
    pub voicing: &'a [f32],
    /// Speech-band level and its local floor, dB.
    pub level_db: &'a [f32],
    pub floor_db: &'a [f32],
}

fn opens_unvoiced(unit: &str) -> bool {
    unit.chars()
        .next()
        .is_some_and(|c| UNVOICED_OPENINGS.contains(c))
}

/// Moves the start of each named verse that opens on an unvoiced consonant back to
/// where that consonant began: the verse's vowel less the consonant's median length
/// inside this recording's verses (the same kana, after its first). Only where the
/// hall hides these consonants: when they stand ABOVE_FLOOR_DB over the floor inside
/// the verses (their median), the start heard already holds them. A start already
/// earlier stays.
pub fn back_date_hidden_consonants(tracks: &Levels, readings: &mut [HeardReading]) {
    let units_of = |r: &HeardReading| {
        r.poem
            .and_then(poem)
            .map(|p| sound_units(&p.kami_kana, &p.kami_pron))
    };
    let mut lengths: HashMap<String, Vec<f64>> = HashMap::new();
    let mut over_floor_db: Vec<f32> = Vec::new();
    for r in readings.iter() {
        let Some(units) = units_of(r) else { continue };
        for (u, &onset_s) in units.iter().zip(&r.onsets_s).skip(1) {
            if !opens_unvoiced(u) {
                continue;
            }
            if let Some(b) = consonant_at(tracks, onset_s) {
                lengths.entry(u.clone()).or_default().push(b.length_s);
                over_floor_db.push(b.over_floor_db);
            }
        }
    }
    over_floor_db.sort_by(f32::total_cmp);
    if over_floor_db.is_empty() || over_floor_db[over_floor_db.len() / 2] >= ABOVE_FLOOR_DB {
        return;
    }
    for r in readings.iter_mut() {
        let Some(first) = units_of(r).and_then(|u| u.into_iter().next()) else {
            continue;
        };
        let Some(ls) = lengths.get_mut(&first) else {
            continue;
        };
        ls.sort_by(f64::total_cmp);
        let length_s = ls[ls.len() / 2];
        let Some(vowel) = voice_back(tracks.voicing, frame_at(r.kami_start_s - VOWEL_FROM_S))
        else {
            continue;
        };
        let start_s = ((frame_time(vowel) - length_s) * 1000.0).round() / 1000.0;
        if start_s < r.kami_start_s {
            r.kami_start_s = start_s;
            if let Some(o) = r.onsets_s.first_mut() {
                *o = start_s;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Poem 33 (ひさかたの ひかりのどけき ...) spoken from 1.0 s, its ひ's vowel from
    /// 1.06 s; each later kana 0.2 s apart from 1.5 s, the unvoiced ones silencing the
    /// voice for their first 60 ms at `break_over_floor_db` over the floor. Heard from
    /// 1.05 s (the consonant not heard). Frame tracks and the reading.
    fn hikari(break_over_floor_db: f32) -> (Vec<f32>, Vec<f32>, HeardReading) {
        let p = poem(33).expect("poem 33");
        let units = sound_units(&p.kami_kana, &p.kami_pron);
        let onsets: Vec<f64> = (0..units.len())
            .map(|k| if k == 0 { 1.05 } else { 1.5 + 0.2 * k as f64 })
            .collect();
        let end_s = onsets[onsets.len() - 1] + 0.3;
        let n = frame_at(end_s + 1.0);
        let voicing: Vec<f32> = (0..n)
            .map(|i| {
                let t = frame_time(i);
                let in_break = units
                    .iter()
                    .zip(&onsets)
                    .skip(1)
                    .any(|(u, &o)| opens_unvoiced(u) && (o..o + 0.06).contains(&t));
                if (1.06..end_s).contains(&t) && !in_break {
                    0.9
                } else {
                    0.1
                }
            })
            .collect();
        let level: Vec<f32> = voicing
            .iter()
            .map(|&v| if v > 0.5 { 30.0 } else { break_over_floor_db })
            .collect();
        let reading = HeardReading {
            seq: 1,
            poem: Some(33),
            kami_start_s: 1.05,
            onsets_s: onsets,
            kami_end_s: end_s,
            shimo_start_s: None,
            void: false,
            poem_score: 0.3,
            candidate: Some(33),
        };
        (voicing, level, reading)
    }

    /// The reading of `hikari` after its start is looked at again.
    fn looked_again(break_over_floor_db: f32) -> HeardReading {
        let (voicing, level, reading) = hikari(break_over_floor_db);
        let floor = vec![0.0f32; level.len()];
        let mut readings = [reading];
        let tracks = Levels {
            voicing: &voicing,
            level_db: &level,
            floor_db: &floor,
        };
        back_date_hidden_consonants(&tracks, &mut readings);
        let [r] = readings;
        r
    }

    #[test]
    fn a_hidden_first_consonant_is_as_long_as_the_same_kana_inside_the_verse() {
        let r = looked_again(2.0);
        let start = r.kami_start_s;
        assert!((start - 1.0).abs() <= 0.006, "heard from {start:.3} s");
        assert_eq!(r.onsets_s[0], start);
    }

    #[test]
    fn a_consonant_the_hall_does_not_hide_leaves_the_start_heard() {
        assert_eq!(looked_again(20.0).kami_start_s, 1.05);
    }
}

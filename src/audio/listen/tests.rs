//! Listening, tested on synthetic verses and tracks.

use super::naming::{name_poem, normalised, Naming, Verse};
use super::opening::{broken_hold_openings, periodic_start};
use super::readers_voice::{own_voice_names, rename_in_the_readers_voice, second_opinion};
use super::*;
use crate::audio::features::CEPS;
use crate::audio::templates::poem_template;
use crate::audio::templates::KanaTemplates;
use crate::rules::kimariji::sound_units;
use crate::rules::poems::poem;

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
                o[k] = 0.5 * c[k] - 0.9 * c[(k + 1) % MATCH_CEPS] + 0.6 * c[(k + 3) % MATCH_CEPS];
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

/// Tracks with only the voiced frames set (levels, voicing and cepstra all zero).
fn voiced_only(voiced: Vec<bool>) -> Tracks {
    let n = voiced.len();
    Tracks {
        f: Frames {
            level_db: vec![0.0; n],
            high_db: vec![0.0; n],
            voicing: vec![0.0; n],
            ceps: vec![[0.0; CEPS]; n],
        },
        floor: vec![0.0; n],
        high_floor: vec![0.0; n],
        voiced,
    }
}

/// Five verses read at one pace (first kana held 1.1 s, then 0.25 s a kana), the third
/// with its held kana broken into a piece of `piece_s` and a break of `break_s` and heard
/// from after the break, and speech of `speech_before_s` ending 0.05 s before that piece.
/// Returns the tracks, the voiced runs, the readings as heard and the piece's frame.
fn five_verses_one_heard_late(
    piece_s: f64,
    break_s: f64,
    speech_before_s: f64,
) -> (Tracks, Vec<(usize, usize)>, Vec<HeardReading>, usize) {
    let n = frames_of(60.0);
    let mut voiced = vec![false; n];
    let mut runs = Vec::new();
    let mut readings = Vec::new();
    let mut run = |a: f64, b: f64, runs: &mut Vec<(usize, usize)>| {
        let (a, b) = (frames_of(a), frames_of(b));
        voiced[a..b].iter_mut().for_each(|v| *v = true);
        runs.push((a, b));
    };
    let mut piece = 0;
    for k in 0..5 {
        let start = 2.0 + 11.0 * k as f64;
        let onsets: Vec<f64> = (0..17)
            .map(|i| {
                if i == 0 {
                    start
                } else {
                    start + 1.1 + 0.25 * (i - 1) as f64
                }
            })
            .collect();
        let end = onsets[16] + 0.25;
        let mut heard_start = start;
        if k == 2 {
            if speech_before_s > 0.0 {
                run(start - 0.05 - speech_before_s, start - 0.05, &mut runs);
            }
            run(start, start + piece_s, &mut runs);
            piece = frames_of(start);
            heard_start = start + piece_s + break_s;
        }
        run(heard_start, end, &mut runs);
        readings.push(HeardReading {
            seq: k as u32 + 1,
            poem: Some(k as u8 + 1),
            kami_start_s: heard_start,
            onsets_s: std::iter::once(heard_start)
                .chain(onsets[1..].iter().copied())
                .collect(),
            kami_end_s: end,
            shimo_start_s: None,
            void: false,
            poem_score: 0.2,
            candidate: Some(k as u8 + 1),
        });
    }
    let tracks = voiced_only(voiced);
    (tracks, runs, readings, piece)
}

/// `broken_hold_openings` in the readings' own measure, for verses at least as short of
/// the reader's hold as plainly tells a broken held kana.
fn openings_by_hold(
    tr: &Tracks,
    runs: &[(usize, usize)],
    readings: &[HeardReading],
) -> Vec<Option<(usize, bool)>> {
    openings_by_hold_from(tr, runs, readings, super::opening::HOLD_SHORT_S)
}

fn openings_by_hold_from(
    tr: &Tracks,
    runs: &[(usize, usize)],
    readings: &[HeardReading],
    short_min: f64,
) -> Vec<Option<(usize, bool)>> {
    let measure = super::opening::ReadersMeasure::of(readings).expect("five aligned verses");
    broken_hold_openings(tr, runs, readings, &measure, short_min)
}

#[test]
fn a_verse_heard_from_the_second_piece_of_its_held_kana_opens_at_the_first() {
    // The third verse's held kana: 0.35 s, a break of 0.4 s (longer than a pause), then
    // the rest; heard from the rest, 0.75 s late, its hold is 0.75 s short of the others':
    // opened at the piece whatever its poem says.
    let (tr, runs, readings, piece) = five_verses_one_heard_late(0.35, 0.4, 0.0);
    let found = openings_by_hold(&tr, &runs, &readings);
    assert_eq!(found, vec![None, None, Some((piece, true)), None, None]);
}

#[test]
fn a_verse_heard_a_little_late_or_from_a_flicker_opens_earlier_only_where_its_poem_says() {
    use super::opening::HOLD_SHORT_NAMED_S;
    // The second verse's shimo-no-ku: speech from 0.4 s after its end to 3 s after.
    let with_shimo =
        |(mut tr, mut runs, readings, piece): (Tracks, Runs, Vec<HeardReading>, usize)| {
            let end = readings[1].kami_end_s;
            let shimo = (frames_of(end + 0.4), frames_of(end + 3.0));
            tr.voiced[shimo.0..shimo.1].fill(true);
            runs.push(shimo);
            runs.sort();
            (tr, runs, readings, piece)
        };
    // Heard 0.5 s late (a piece of 0.3 s, a break of 0.2 s): short of the reader's hold
    // by less than plainly tells, so found only as a way its poem must confirm.
    let (tr, runs, readings, piece) = with_shimo(five_verses_one_heard_late(0.3, 0.2, 0.0));
    assert_eq!(openings_by_hold(&tr, &runs, &readings), vec![None; 5]);
    assert_eq!(
        openings_by_hold_from(&tr, &runs, &readings, HOLD_SHORT_NAMED_S),
        vec![None, None, Some((piece, false)), None, None]
    );
    // A held kana voiced only for its first 30 ms, then too soft for 0.45 s: the same.
    let (tr, runs, readings, piece) = with_shimo(five_verses_one_heard_late(0.03, 0.45, 0.0));
    assert_eq!(
        openings_by_hold_from(&tr, &runs, &readings, HOLD_SHORT_NAMED_S),
        vec![None, None, Some((piece, false)), None, None]
    );
    // Without the shimo-no-ku of the verse before heard, the piece may be that
    // shimo-no-ku: nothing is found where the poem would decide.
    let (tr, runs, readings, _) = five_verses_one_heard_late(0.3, 0.2, 0.0);
    assert_eq!(
        openings_by_hold_from(&tr, &runs, &readings, HOLD_SHORT_NAMED_S),
        vec![None; 5]
    );
}

#[test]
fn a_verse_heard_short_opens_earlier_only_where_that_makes_the_readers_hold() {
    // Speech running into the piece from 0.55 s before it: the piece follows no pause,
    // and opening at that speech would make the hold far longer than the reader's.
    let (tr, runs, readings, _) = five_verses_one_heard_late(0.35, 0.4, 0.5);
    assert_eq!(openings_by_hold(&tr, &runs, &readings), vec![None; 5]);
    // A piece 0.7 s before the verse is too far to be its held kana.
    let (tr, runs, readings, _) = five_verses_one_heard_late(0.3, 0.7, 0.0);
    assert_eq!(openings_by_hold(&tr, &runs, &readings), vec![None; 5]);
    // Heard 0.3 s late (a hold within a reader's own spread): left as heard.
    let (tr, runs, readings, _) = five_verses_one_heard_late(0.1, 0.2, 0.0);
    assert_eq!(openings_by_hold(&tr, &runs, &readings), vec![None; 5]);
}

#[test]
fn a_verse_run_on_into_its_shimo_no_ku_ends_at_the_pause_between() {
    use super::opening::ReadersMeasure;
    use crate::audio::features::frame_at;
    // The reader: first kana held 1.1 s, then 0.25 s a kana; a kami-no-ku of 17 kana from
    // 2.0 s is due to end at 7.1 s.
    let measure = ReadersMeasure {
        pace: 0.25,
        hold: 1.1,
    };
    let verse = |end: f64| HeardReading {
        seq: 1,
        poem: Some(1),
        kami_start_s: 2.0,
        onsets_s: (0..17)
            .map(|i| {
                if i == 0 {
                    2.0
                } else {
                    3.1 + 0.25 * (i - 1) as f64
                }
            })
            .collect(),
        kami_end_s: end,
        shimo_start_s: None,
        void: false,
        poem_score: 0.2,
        candidate: Some(1),
    };
    let runs = |spans: &[(f64, f64)]| -> Vec<(usize, usize)> {
        spans
            .iter()
            .map(|&(a, b)| (frame_at(a), frame_at(b)))
            .collect()
    };
    // Heard to 8.0 s: the kami-no-ku to 7.05 s, a pause of 0.22 s, the shimo-no-ku.
    let heard = runs(&[(2.0, 4.0), (4.1, 7.05), (7.27, 8.0)]);
    assert_eq!(
        run_on_end(&heard, &verse(8.0), &measure),
        Some(frame_at(7.05))
    );
    // A verse of its own length keeps its end.
    let own = runs(&[(2.0, 4.0), (4.1, 7.1)]);
    assert_eq!(run_on_end(&own, &verse(7.1), &measure), None);
    // A long verse whose only pause lies far from where a kami-no-ku would end (its own
    // closure at 5.0 s): no end is made up.
    let long = runs(&[(2.0, 5.0), (5.2, 8.0)]);
    assert_eq!(run_on_end(&long, &verse(8.0), &measure), None);
}

/// Runs of frames: (first, end exclusive).
type Runs = Vec<(usize, usize)>;

/// Five verses read at one pace (first kana held 1.1 s, then 0.25 s a kana, 17 kana),
/// each followed by its shimo-no-ku (14 kana from 0.4 s after its end); the third's held kana heard as a first piece of `piece_s`, then
/// nothing to where its second kana begins. The tracks, the held and verse runs, and the
/// four other verses as heard.
fn a_verse_with_half_its_hold(piece_s: f64) -> (Tracks, Runs, Runs, Vec<HeardReading>) {
    let n = frames_of(60.0);
    let mut voiced = vec![false; n];
    let mut on = |a: f64, b: f64| voiced[frames_of(a)..frames_of(b)].fill(true);
    let mut readings = Vec::new();
    for k in 0..5 {
        let start = 2.0 + 11.0 * k as f64;
        let end = start + 1.1 + 16.0 * 0.25;
        if k == 2 {
            on(start, start + piece_s);
        } else {
            on(start, start + 1.1);
        }
        // The kana at pace: 0.2 s voiced, 0.05 s of consonant.
        for i in 0..16 {
            let o = start + 1.1 + 0.25 * i as f64;
            on(o, o + 0.2);
        }
        // The shimo-no-ku: 14 kana from 0.4 s after, its first voiced 0.35 s.
        on(end + 0.4, end + 0.75);
        for i in 0..13 {
            let o = end + 0.8 + 0.25 * i as f64;
            on(o, o + 0.2);
        }
        if k != 2 {
            readings.push(HeardReading {
                seq: readings.len() as u32 + 1,
                poem: Some(k as u8 + 1),
                kami_start_s: start,
                onsets_s: (0..17)
                    .map(|i| {
                        if i == 0 {
                            start
                        } else {
                            start + 1.1 + 0.25 * (i - 1) as f64
                        }
                    })
                    .collect(),
                kami_end_s: end,
                shimo_start_s: None,
                void: false,
                poem_score: 0.2,
                candidate: Some(k as u8 + 1),
            });
        }
    }
    let held = runs(&voiced, 0, frames_of(HELD_GAP_MAX_S));
    let verse = runs(&voiced, 0, frames_of(VERSE_GAP_MAX_S));
    let tracks = voiced_only(voiced);
    (tracks, held, verse, readings)
}

#[test]
fn a_verse_heard_from_half_its_held_kana_is_found_in_the_readers_hold() {
    use super::opening::{short_hold_openings, ReadersMeasure};
    // The third verse: a first piece of 0.45 s (short of a held kana), then 0.65 s of
    // nothing before its second kana. Found from the piece to the end of its speech.
    let (tr, held, verse, readings) = a_verse_with_half_its_hold(0.45);
    let m = ReadersMeasure::of(&readings).expect("four aligned verses");
    assert!((m.hold - 1.1).abs() < 0.01 && (m.pace - 0.25).abs() < 0.01);
    assert_eq!(
        short_hold_openings(&tr, &held, &verse, &readings, &m),
        vec![(frames_of(24.0), frames_of(24.0 + 5.05))]
    );
    // A piece of 0.2 s is a kana said at pace, not part of a held one: nothing found,
    // and the shimo-no-ku after each verse heard is never taken for a verse.
    let (tr, held, verse, readings) = a_verse_with_half_its_hold(0.2);
    assert_eq!(
        short_hold_openings(&tr, &held, &verse, &readings, &m),
        vec![]
    );
    // The verse heard whole is not found again.
    let (tr, held, verse, mut readings) = a_verse_with_half_its_hold(0.45);
    readings.insert(
        2,
        HeardReading {
            kami_start_s: 24.0,
            kami_end_s: 29.1,
            ..readings[1].clone()
        },
    );
    assert_eq!(
        short_hold_openings(&tr, &held, &verse, &readings, &m),
        vec![]
    );
}

/// The speech of `spans` (first frame, end) named in turn against the templates, as the
/// first pass of `heard_readings` does: the readings, and the verses with their naming.
fn first_pass(f: &Frames, spans: &[(usize, usize)]) -> (Vec<HeardReading>, Vec<(Verse, Naming)>) {
    let mut pool = ReadPool::new();
    let mut out = Vec::new();
    let mut verses = Vec::new();
    for (k, &(a, b)) in spans.iter().enumerate() {
        let verse = Verse {
            frames: verse_frames(f, a, b),
            first_frame: a,
            start_s: frame_time(a),
        };
        let named = name_poem(&verse, embedded(), &pool);
        if let Some(p) = named.poem {
            pool.mark_read(p);
        }
        out.push(HeardReading::of_verse(
            k as u32 + 1,
            &named,
            frame_time(a),
            frame_time(b),
        ));
        verses.push((verse, named));
    }
    (out, verses)
}

#[test]
fn a_verse_run_on_into_its_shimo_no_ku_is_named_again_on_its_kami_no_ku() {
    use super::opening::ReadersMeasure;
    use crate::audio::templates::TEMPLATE_STEP;
    let t = embedded();
    let step = TEMPLATE_STEP;
    // A reader a little off the templates, first kana held 1.1 s, then 0.22 s a kana.
    const OFF: f32 = 0.6;
    let measure = ReadersMeasure {
        pace: 0.22,
        hold: 1.1,
    };
    let nos = [1u8, 2, 3, 4, 5];
    let mut ceps: Vec<[f32; CEPS]> = Vec::new();
    let mut spans = Vec::new();
    let mut held_runs = Vec::new();
    let quiet = |ceps: &mut Vec<[f32; CEPS]>, s: f64| {
        ceps.extend(std::iter::repeat_n([0.0f32; CEPS], frames_of(s)))
    };
    for (k, &no) in nos.iter().enumerate() {
        quiet(&mut ceps, 2.0);
        let a = ceps.len();
        for f in verses_in_a_voice_of_its_own(&[no], OFF)[0].frames.clone() {
            ceps.extend(std::iter::repeat_n(f, step));
        }
        let mut end = ceps.len();
        held_runs.push((a, end));
        if k == 2 {
            // Its shimo-no-ku 0.2 s after it: 1.5 s of another poem's kana at pace.
            quiet(&mut ceps, 0.2);
            let b = ceps.len();
            let other = verses_in_a_voice_of_its_own(&[90], OFF)[0].frames.clone();
            for f in &other[110..110 + 150] {
                ceps.extend(std::iter::repeat_n(*f, step));
            }
            held_runs.push((b, ceps.len()));
            end = ceps.len();
        }
        spans.push((a, end));
    }
    quiet(&mut ceps, 2.0);
    let n = ceps.len();
    let f = Frames {
        level_db: vec![0.0; n],
        high_db: vec![0.0; n],
        voicing: vec![0.0; n],
        ceps,
    };
    // Named in turn as the first pass does, the third verse with its shimo-no-ku.
    let (mut out, mut verses) = first_pass(&f, &spans);
    let before = out.clone();
    assert!(rename_run_on(
        &f,
        &held_runs,
        t,
        &measure,
        &mut out,
        &mut verses
    ));
    // The third verse ends where its kami-no-ku does, is named on it alone, and its
    // kana are aligned within it; the others are as they were.
    let kami_end = held_runs[2].1;
    assert_eq!(out[2].kami_end_s, round_ms(frame_time(kami_end)));
    assert_eq!(out[2].poem, Some(3), "before: {:?}", before[2].poem);
    // Matched with its shimo-no-ku the verse barely stood out of the next poem; alone,
    // plainly.
    assert!(
        before[2].poem_score < 0.2 && out[2].poem_score > 0.5,
        "score {} before, {} after",
        before[2].poem_score,
        out[2].poem_score
    );
    assert!(out[2].onsets_s.iter().all(|&o| o < frame_time(kami_end)));
    assert_eq!(verses[2].0.frames, verse_frames(&f, spans[2].0, kami_end));
    for k in [0, 1, 3, 4] {
        assert_eq!(out[k], before[k]);
    }
    // Nothing ran on now: nothing is named again.
    let again = out.clone();
    assert!(!rename_run_on(
        &f,
        &held_runs,
        t,
        &measure,
        &mut out,
        &mut verses
    ));
    assert_eq!(out, again);
    eprintln!(
        "before {:?} {} after {:?} {}",
        before[2].poem, before[2].poem_score, out[2].poem, out[2].poem_score
    );
}

/// Five verses (poems 1-5) in a reader's voice a little off the templates, 2 s apart,
/// first kana held 1.1 s, the third's held kana broken under the murmur (a first piece
/// of 0.35 s, a break of 0.4 s) and heard from the break on; with `shimo`, each followed
/// 0.2 s after by its shimo-no-ku (1.5 s of another poem's kana at pace), the third run
/// on into it as heard. The tracks, the held runs, the spans heard and each verse's
/// kami-no-ku.
fn five_verses_third_broken(shimo: bool) -> (Tracks, Runs, Runs, Runs) {
    use crate::audio::templates::TEMPLATE_STEP;
    let step = TEMPLATE_STEP;
    let (piece, gap) = (frames_of(0.35), frames_of(0.4));
    let other = verses_in_a_voice_of_its_own(&[90], 0.6)[0].frames.clone();
    let mut ceps: Vec<[f32; CEPS]> = Vec::new();
    let (mut held_runs, mut heard, mut kami) = (Vec::new(), Vec::new(), Vec::new());
    let quiet =
        |ceps: &mut Vec<[f32; CEPS]>, n: usize| ceps.extend(std::iter::repeat_n([0.0f32; CEPS], n));
    for (k, no) in (1u8..=5).enumerate() {
        quiet(&mut ceps, frames_of(2.0));
        let a = ceps.len();
        for f in verses_in_a_voice_of_its_own(&[no], 0.6)[0].frames.clone() {
            ceps.extend(std::iter::repeat_n(f, step));
        }
        let end = ceps.len();
        kami.push((a, end));
        let mut shimo_run = None;
        if shimo {
            quiet(&mut ceps, frames_of(0.2));
            let b = ceps.len();
            for f in &other[110..110 + 150] {
                ceps.extend(std::iter::repeat_n(*f, step));
            }
            shimo_run = Some((b, ceps.len()));
        }
        if k == 2 {
            ceps[a + piece..a + piece + gap].fill([0.0; CEPS]);
            held_runs.push((a, a + piece));
            held_runs.push((a + piece + gap, end));
            heard.push((a + piece + gap, shimo_run.map_or(end, |r| r.1)));
        } else {
            held_runs.push((a, end));
            heard.push((a, end));
        }
        held_runs.extend(shimo_run);
    }
    quiet(&mut ceps, frames_of(2.0));
    let mut voiced = vec![false; ceps.len()];
    for &(a, b) in &held_runs {
        voiced[a..b].fill(true);
    }
    let mut tr = voiced_only(voiced);
    tr.f.ceps = ceps;
    (tr, held_runs, heard, kami)
}

#[test]
fn a_verse_heard_from_the_second_piece_of_its_held_kana_is_named_again_from_the_first() {
    let t = embedded();
    // Five verses in a reader's voice a little off the templates, first kana held 1.1 s;
    // the third's held kana broken under the murmur: a first piece of 0.35 s, a break of
    // 0.4 s, and the rest of the verse heard from there.
    let (tr, held_runs, heard, _) = five_verses_third_broken(false);
    // The first pass: each verse named in turn from where it was heard.
    let (mut out, mut verses) = first_pass(&tr.f, &heard);
    let before = out.clone();
    // No sound track is given: a verse starts at its first voiced frame.
    assert!(reopen_broken_holds(
        &[],
        16_000,
        &tr,
        &held_runs,
        t,
        &mut out,
        &mut verses
    ));
    // The third verse opens at the first piece, is named on frames that hold its first
    // kana, and its first kana's onset is the piece's; the others are as they were.
    let first_piece = held_runs[2].0;
    assert_eq!(out[2].kami_start_s, round_ms(frame_time(first_piece)));
    assert_eq!(out[2].poem, Some(3), "before: {:?}", before[2].poem);
    assert_eq!(verses[2].0.first_frame, first_piece);
    assert!(
        (out[2].onsets_s[0] - frame_time(first_piece)).abs() < 0.05,
        "first onset {} for the piece at {}",
        out[2].onsets_s[0],
        frame_time(first_piece)
    );
    assert_eq!(out[2].kami_end_s, before[2].kami_end_s);
    // Named without its first kana the verse barely stood out of the next poem; with
    // it, plainly.
    assert!(
        before[2].poem_score < 0.4 && out[2].poem_score > 0.6,
        "score {} before, {} after",
        before[2].poem_score,
        out[2].poem_score
    );
    for k in [0, 1, 3, 4] {
        assert_eq!(out[k], before[k]);
    }
    // Its hold is the reader's now: nothing is opened again.
    let again = out.clone();
    assert!(!reopen_broken_holds(
        &[],
        16_000,
        &tr,
        &held_runs,
        t,
        &mut out,
        &mut verses
    ));
    assert_eq!(out, again);
}

#[test]
fn a_verse_heard_late_that_ran_on_into_its_shimo_no_ku_is_named_from_its_first_piece() {
    let t = embedded();
    // Five verses in a reader's voice a little off the templates, first kana held 1.1 s,
    // each followed 0.2 s after by its shimo-no-ku (1.5 s of another poem's kana at pace).
    // The third's held kana is broken under the murmur (a first piece of 0.35 s, a break
    // of 0.4 s) and the verse is heard from the break on, run on into its shimo-no-ku: as
    // long as a verse heard whole, so its hold does not look short.
    let (tr, held_runs, heard, kami) = five_verses_third_broken(true);
    let (mut out, mut verses) = first_pass(&tr.f, &heard);
    rename_in_the_readers_voice(t, &mut out, &mut verses);
    // Its kana out of place, the third verse names no poem.
    assert_eq!(out[2].poem, None, "score {}", out[2].poem_score);
    let before = out.clone();
    assert!(reopen_unnamed(
        &[],
        16_000,
        &tr,
        (&held_runs, &held_runs),
        t,
        &mut out,
        &mut verses
    ));
    // Opened at the first piece and named on its kami-no-ku; the others as they were.
    assert_eq!(out[2].poem, Some(3));
    assert_eq!(out[2].kami_start_s, round_ms(frame_time(kami[2].0)));
    assert_eq!(verses[2].0.first_frame, kami[2].0);
    for k in [0, 1, 3, 4] {
        assert_eq!(out[k], before[k]);
    }
    // Every verse named: nothing is opened again.
    let again = out.clone();
    assert!(!reopen_unnamed(
        &[],
        16_000,
        &tr,
        (&held_runs, &held_runs),
        t,
        &mut out,
        &mut verses
    ));
    assert_eq!(out, again);
}

#[test]
fn a_held_kana_joined_from_pieces_keeps_its_later_pieces_as_an_opening_of_their_own() {
    // A shimo-no-ku said in one voiced run (1.0-1.49 s: longer than a kana at pace, too
    // short for a held kana), a 0.3 s pause, then a held kana from 1.79 s to 4.0 s. The
    // two are joined as one broken held kana, and the held kana alone stays to be tried
    // should the joined run be passed over as the shimo-no-ku.
    let n = frames_of(5.0);
    let mut voiced = vec![false; n];
    let (shimo, held) = (
        (frames_of(1.0), frames_of(1.49)),
        (frames_of(1.79), frames_of(4.0)),
    );
    for (a, b) in [shimo, held] {
        voiced[a..b].iter_mut().for_each(|v| *v = true);
    }
    let tr = voiced_only(voiced);
    let openings = super::opening::join_broken_held(&tr, &[shimo, held]);
    assert_eq!(openings.len(), 1, "{openings:?}");
    let o = openings[0];
    assert_eq!((o.start, o.end), (shimo.0, held.1), "{o:?}");
    assert_eq!(o.rest, Some(held.0), "{o:?}");
    // A held kana long enough alone is not joined, and has no other opening.
    let alone = super::opening::join_broken_held(&tr, &[held]);
    assert_eq!(alone.len(), 1);
    assert_eq!(alone[0].rest, None);
}

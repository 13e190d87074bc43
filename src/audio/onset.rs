//! The first sound of a verse, to a few milliseconds, measured against the recording's
//! own noise just before it: band levels every 2 ms, each scaled by how that band's
//! level wanders in the pause, and the moment they leave the noise found by a change
//! point (a cumulative sum) rather than a fixed level; and, on the same band levels,
//! where one kana gives way to the next (the largest change between the moments just
//! before and just after). Owns these settings; reads only samples, knows nothing of
//! verses or poems.

use rustfft::num_complex::Complex;
use rustfft::FftPlanner;

/// Analysis window, seconds: short enough to place a consonant within a few ms, long
/// enough to resolve the bands below.
const WINDOW_S: f64 = 0.016;
/// Step between windows, seconds.
const STEP_S: f64 = 0.002;
/// Band edges, Hz: finer where the murmur of a hall lies (below 2.5 kHz), so a voiced
/// consonant's harmonics can stand out of it in a few bands; wider above, where
/// fricatives and bursts spread their energy.
const BAND_EDGES_HZ: [f64; 16] = [
    200.0, 400.0, 600.0, 800.0, 1000.0, 1300.0, 1600.0, 2000.0, 2500.0, 3000.0, 3500.0, 4000.0,
    5000.0, 6000.0, 7000.0, 8000.0,
];
/// The noise is measured from this long before the voicing ...
const NOISE_FROM_S: f64 = 1.0;
/// ... up to this long before it (a first consonant lasts less).
const NOISE_TO_S: f64 = 0.15;
/// At least this much noise is needed to measure it, seconds.
const NOISE_MIN_S: f64 = 0.1;
/// A band's noise level is this percentile of its level in the noise stretch: a low
/// one, so that the end of the previous verse or a breath in that stretch do not lift it.
const NOISE_PERCENTILE: f64 = 0.25;
/// A band's level wanders by its median less its 16th percentile (one standard deviation
/// of a normal spread, taken from the lower half that speech does not reach) plus this
/// much, dB, so a band with a steady tone is not over-weighted.
const BAND_SPREAD_MIN_DB: f64 = 0.5;
/// How many of the bands that stand highest over their noise make a window's score: a
/// consonant lifts a few bands, not all (on the tuning recordings 3 to 4 did alike, 6
/// or the mean of all bands came later).
const TOP_BANDS: usize = 4;
/// The score's drift in the cumulative sum, in standard deviations of the score in the
/// noise: a lasting lift larger than this is a sound; noise averages below it. On the
/// tuning recordings (1,390 verses heard) 1.5 put 82.9% of starts within 30 ms; 1.25
/// started 42 verses early on the noise, 1.75 came late more often (81.9%).
const DRIFT_SD: f64 = 1.5;
/// The score's spread in the noise is taken as at least this. Over a stretch of the
/// murmur alone (a recording's first verse, nothing spoken before it) the score wanders
/// by 0.25-0.3 of this measure, where the previous verse's tail or the reader's breath
/// lift it to 0.6-2 before other verses; measured that small, the murmur's slow swell
/// was taken for a sound and first verses started a median 12 ms early (20 of 312 held
/// out more than 30 ms). 0.5 left the tuning recordings' readings as they were; 1.0
/// started two more of their verses late.
const SCORE_SD_MIN: f64 = 0.5;
/// The start is looked for at most this long before the voicing (a first consonant,
/// long fricatives included).
const BACK_MAX_S: f64 = 0.35;
/// ... and up to this long after the frame that turned voiced.
const AFTER_VOICED_S: f64 = 0.015;

/// The first moment of the sound that turns voiced at `voiced_s`, in seconds; `voiced_s`
/// itself when too little of the recording lies before it to measure the noise. The
/// noise is measured from `quiet_from_s` on, where the speech before has ended (the
/// previous shimo-no-ku, whose level and spread would hide a soft consonant), keeping at
/// least NOISE_MIN_S of it.
pub fn sound_start(samples: &[f32], rate_hz: u32, voiced_s: f64, quiet_from_s: f64) -> f64 {
    let rate = rate_hz as f64;
    let sample = |t: f64| ((t.max(0.0) * rate) as usize).min(samples.len());
    let noise_from = (voiced_s - NOISE_FROM_S)
        .max(quiet_from_s.min(voiced_s - NOISE_TO_S - NOISE_MIN_S - WINDOW_S));
    let (s0, s1) = (sample(noise_from), sample(voiced_s + 0.25));
    let Some((times, levels)) = band_levels(samples, rate_hz, s0, s1) else {
        return voiced_s;
    };
    let n_bands = levels[0].len();
    let noise_n = times.partition_point(|&t| t < voiced_s - NOISE_TO_S);
    if (noise_n as f64) * STEP_S < NOISE_MIN_S {
        return voiced_s;
    }
    // Each band against its own noise: level over the noise's low percentile, in units of
    // the noise's spread.
    let scale: Vec<(f64, f64)> = (0..n_bands)
        .map(|b| {
            let mut v: Vec<f64> = levels[..noise_n].iter().map(|l| l[b]).collect();
            v.sort_by(f64::total_cmp);
            let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
            (q(NOISE_PERCENTILE), q(0.5) - q(0.16) + BAND_SPREAD_MIN_DB)
        })
        .collect();
    let score: Vec<f64> = levels
        .iter()
        .map(|l| {
            let mut z: Vec<f64> = l
                .iter()
                .zip(&scale)
                .map(|(v, (mu, sd))| (v - mu) / sd)
                .collect();
            z.sort_by(|a, b| b.total_cmp(a));
            z[..TOP_BANDS].iter().sum::<f64>() / TOP_BANDS as f64
        })
        .collect();
    // The score itself against its spread in the noise (median and MAD).
    let mut noise: Vec<f64> = score[..noise_n].to_vec();
    noise.sort_by(f64::total_cmp);
    let mid = noise[noise.len() / 2];
    let mut dev: Vec<f64> = noise.iter().map(|v| (v - mid).abs()).collect();
    dev.sort_by(f64::total_cmp);
    let sd = (1.4826 * dev[dev.len() / 2]).max(SCORE_SD_MIN);
    // Page's cumulative sum from well before the voicing: the change is just after the
    // last window where the sum was back at zero.
    let from = times.partition_point(|&t| t < voiced_s - BACK_MAX_S);
    let to = times.partition_point(|&t| t < voiced_s + AFTER_VOICED_S);
    let mut sum = 0.0f64;
    let mut last_zero = from;
    for (i, s) in score.iter().enumerate().take(to).skip(from) {
        sum = (sum + (s - mid) / sd - DRIFT_SD).max(0.0);
        if sum == 0.0 {
            last_zero = i;
        }
    }
    let first = (last_zero + 1).min(times.len() - 1);
    // A window is stamped at its centre. The sound that lifts it out of the noise has
    // entered it a few ms before: on the tuning recordings the starts placed at the
    // centre lie a median 2 ms before the spoken ones. (Placed at its trailing edge, half
    // a window earlier, they lay 9 ms early once the noise was measured in the pause
    // alone; with the previous verse's tail in the noise they came later, and that edge
    // put them 1 ms late.)
    times[first]
}

/// Each side of a moment compared by `kana_change`, seconds.
const CHANGE_SIDE_S: f64 = 0.016;

/// Where the sound changes most between `lo_s` and `hi_s`, seconds: the moment whose
/// band levels over the `CHANGE_SIDE_S` after it differ most from those over the same
/// time before it (the mean over the bands of the absolute difference, dB). One kana
/// gives way to the next there: a vowel to a consonant's burst or hiss, or to another
/// vowel. A window's level in dB rises as soon as a louder sound reaches its edge, so
/// the change comes a few milliseconds early (windows half as long did worse on the
/// tuning recordings: onsets 4.3 ms median error against 3.6). `None` when the span is
/// too short to measure.
pub fn kana_change(samples: &[f32], rate_hz: u32, lo_s: f64, hi_s: f64) -> Option<f64> {
    let rate = rate_hz as f64;
    let reach = CHANGE_SIDE_S + WINDOW_S;
    let sample = |t: f64| ((t.max(0.0) * rate) as usize).min(samples.len());
    let (times, levels) =
        band_levels(samples, rate_hz, sample(lo_s - reach), sample(hi_s + reach))?;
    let side = (CHANGE_SIDE_S / STEP_S).round() as usize;
    let n_bands = levels[0].len();
    let mut best: Option<(f64, f64)> = None;
    for i in side..times.len().saturating_sub(side) {
        let t = times[i] - STEP_S / 2.0;
        if t < lo_s || t > hi_s {
            continue;
        }
        let d: f64 = (0..n_bands)
            .map(|b| {
                let before: f64 = levels[i - side..i].iter().map(|l| l[b]).sum::<f64>();
                let after: f64 = levels[i..i + side].iter().map(|l| l[b]).sum::<f64>();
                (after - before).abs() / side as f64
            })
            .sum::<f64>()
            / n_bands as f64;
        if best.is_none_or(|(_, bd)| d > bd) {
            best = Some((t, d));
        }
    }
    best.map(|(t, _)| t)
}

/// Band levels (dB) of the windows of `samples[s0..s1]`, each stamped at its centre
/// (seconds), every `STEP_S`; `None` when the span holds no window or the rate leaves
/// too few bands.
fn band_levels(
    samples: &[f32],
    rate_hz: u32,
    s0: usize,
    s1: usize,
) -> Option<(Vec<f64>, Vec<Vec<f64>>)> {
    let rate = rate_hz as f64;
    let win = ((WINDOW_S * rate).round() as usize).max(16);
    let hop = ((STEP_S * rate).round() as usize).max(1);
    let nfft = win.next_power_of_two();
    let s1 = s1.min(samples.len());
    if s1 < s0 + win {
        return None;
    }
    let bands: Vec<(usize, usize)> = BAND_EDGES_HZ
        .windows(2)
        .map(|e| {
            let bin = |hz: f64| ((hz * nfft as f64 / rate).round() as usize).min(nfft / 2 + 1);
            (bin(e[0]), bin(e[1]).max(bin(e[0]) + 1).min(nfft / 2 + 1))
        })
        .filter(|(a, b)| b > a)
        .collect();
    if bands.len() < TOP_BANDS {
        return None;
    }
    let fft = FftPlanner::<f32>::new().plan_fft_forward(nfft);
    let hann: Vec<f32> = (0..win)
        .map(|i| (std::f32::consts::PI * i as f32 / win as f32).sin().powi(2))
        .collect();
    // Band levels (dB) of each window, stamped at its centre.
    let mut times = Vec::new();
    let mut levels: Vec<Vec<f64>> = Vec::new();
    let mut buf = vec![Complex::new(0.0f32, 0.0); nfft];
    let mut a = s0;
    while a + win <= s1 {
        for (k, c) in buf.iter_mut().enumerate() {
            *c = Complex::new(
                if k < win {
                    samples[a + k] * hann[k]
                } else {
                    0.0
                },
                0.0,
            );
        }
        fft.process(&mut buf);
        levels.push(
            bands
                .iter()
                .map(|&(lo, hi)| {
                    let p: f64 = buf[lo..hi].iter().map(|c| c.norm_sqr() as f64).sum();
                    10.0 * (p + 1e-12).log10()
                })
                .collect(),
        );
        times.push((a + win / 2) as f64 / rate);
        a += hop;
    }
    Some((times, levels))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    const RATE: u32 = 16_000;

    /// Two seconds of a hall's low murmur (as loud as the voice's consonant will be at
    /// its height), a breath 0.2 s before the verse, then a hiss rising from `start_s`
    /// for 60 ms and a vowel after it.
    fn verse_over_murmur(start_s: f64) -> Vec<f32> {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let n = 2 * RATE as usize;
        let mut lp = 0.0f32;
        let mut x: Vec<f32> = (0..n)
            .map(|_| {
                lp = 0.8 * lp + 0.2 * rng.gen_range(-1.0f32..1.0);
                lp * 0.08
            })
            .collect();
        let at = |t: f64| (t * RATE as f64) as usize;
        for v in &mut x[at(start_s - 0.5)..at(start_s - 0.2)] {
            *v += rng.gen_range(-1.0f32..1.0) * 0.01;
        }
        let mut prev = 0.0f32;
        for (k, v) in x[at(start_s)..at(start_s + 0.06)].iter_mut().enumerate() {
            let w = rng.gen_range(-1.0f32..1.0);
            let rise = k as f32 / at(0.06) as f32;
            *v += (w - prev) * 0.02 * rise.sqrt();
            prev = w;
        }
        for (i, v) in x.iter_mut().enumerate().skip(at(start_s + 0.06)) {
            let t = i as f32 / RATE as f32;
            *v += (1..8)
                .map(|h| (2.0 * std::f32::consts::PI * 150.0 * h as f32 * t).sin() / h as f32)
                .sum::<f32>()
                * 0.1;
        }
        x
    }

    #[test]
    fn a_hiss_under_the_murmur_starts_the_verse_not_its_vowel() {
        let x = verse_over_murmur(1.4);
        let start = sound_start(&x, RATE, 1.46, 0.0);
        assert!(
            (start - 1.4).abs() <= 0.015,
            "start at {start:.3} s, spoken at 1.400 s"
        );
    }

    #[test]
    fn a_hiss_after_the_last_verse_is_measured_against_the_pause_alone() {
        // The verse of `verse_over_murmur` (hiss from 1.4 s, voiced from 1.46 s), after
        // the previous verse's last kana said at pace up to 0.95 s: a vowel of turning
        // pitch, each kana opening on a loud hiss. Measured against the pause alone the
        // hiss is heard; with that speech taken into the noise, its level and spread
        // hide it.
        let mut x = verse_over_murmur(1.4);
        let mut rng = ChaCha20Rng::seed_from_u64(9);
        let at = |t: f64| (t * RATE as f64) as usize;
        for (i, v) in x.iter_mut().enumerate().take(at(0.95)).skip(at(0.4)) {
            let t = i as f32 / RATE as f32;
            let kana = ((t - 0.4) / 0.18).floor();
            let into = t - 0.4 - 0.18 * kana;
            let f0 = 140.0 + 25.0 * (kana % 3.0);
            *v += if into < 0.05 {
                rng.gen_range(-1.0f32..1.0) * 0.06
            } else {
                (1..8)
                    .map(|h| (2.0 * std::f32::consts::PI * f0 * h as f32 * t).sin() / h as f32)
                    .sum::<f32>()
                    * 0.1
            };
        }
        let start = sound_start(&x, RATE, 1.46, 0.98);
        let hidden = sound_start(&x, RATE, 1.46, 0.0);
        assert!(
            (start - 1.4).abs() <= 0.02,
            "start at {start:.3} s, spoken at 1.400 s"
        );
        assert!(
            hidden - 1.4 > 0.03,
            "{hidden:.3} s with the speech as noise"
        );
    }

    /// A recording's first verse: 0.6 s of murmur alone, swelling slowly as a hall's
    /// does (random steps smoothed at 0.5 Hz), nothing spoken before it, then a vowel
    /// rising over 20 ms from 0.6 s.
    fn first_verse(seed: u64) -> Vec<f32> {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let n = RATE as usize;
        let a = (-2.0 * std::f32::consts::PI * 0.5 / RATE as f32).exp();
        let (mut lp, mut swell, mut env) = (0.0f32, 1.0f32, 1.0f32);
        (0..n)
            .map(|i| {
                if i % 256 == 0 {
                    env = (1.0 + 1.2 * rng.gen_range(-1.0f32..1.0)).max(0.2);
                }
                swell = (1.0 - a) * env + a * swell;
                lp = 0.8 * lp + 0.2 * rng.gen_range(-1.0f32..1.0);
                let t = i as f32 / RATE as f32;
                let voice = if t >= 0.6 {
                    let rise = ((t - 0.6) / 0.02).min(1.0);
                    (1..8)
                        .map(|h| {
                            (2.0 * std::f32::consts::PI * 150.0 * h as f32 * t).sin() / h as f32
                        })
                        .sum::<f32>()
                        * 0.1
                        * rise
                } else {
                    0.0
                };
                lp * 0.02 * swell + voice
            })
            .collect()
    }

    #[test]
    fn a_first_verse_over_the_murmur_alone_is_not_started_early() {
        let early: Vec<f64> = (0..24)
            .map(|seed| sound_start(&first_verse(seed), RATE, 0.61, 0.0))
            .filter(|&s| s < 0.6 - 0.03)
            .collect();
        assert!(early.len() <= 1, "started more than 30 ms early: {early:?}");
    }

    /// A vowel on 150 Hz, then from `change_s` a vowel on 220 Hz with a hiss under it,
    /// all over the hall's murmur of `verse_over_murmur`.
    fn two_kana(change_s: f64) -> Vec<f32> {
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        let n = RATE as usize;
        let mut lp = 0.0f32;
        (0..n)
            .map(|i| {
                lp = 0.8 * lp + 0.2 * rng.gen_range(-1.0f32..1.0);
                let t = i as f32 / RATE as f32;
                let (f0, hiss) = if (t as f64) < change_s {
                    (150.0, 0.0)
                } else {
                    (220.0, 0.05)
                };
                let voice: f32 = (1..8)
                    .map(|h| (2.0 * std::f32::consts::PI * f0 * h as f32 * t).sin() / h as f32)
                    .sum();
                lp * 0.02 + voice * 0.1 + hiss * rng.gen_range(-1.0f32..1.0)
            })
            .collect()
    }

    #[test]
    fn the_next_kana_is_placed_where_the_sound_changes() {
        let x = two_kana(0.5137);
        // Sought from 25 ms before to 30 ms after, about as the alignment leaves it.
        let t = kana_change(&x, RATE, 0.4887, 0.5437).expect("a span to measure");
        // Within 5 ms: a window's level in dB rises as the louder sound reaches its edge.
        assert!(
            (t - 0.5137).abs() <= 0.005,
            "change at {t:.4} s, spoken at 0.5137 s"
        );
    }

    #[test]
    fn a_span_at_the_recording_edge_too_short_to_measure_gives_nothing() {
        let x = two_kana(0.5);
        assert_eq!(kana_change(&x[..100], RATE, 0.0, 0.005), None);
    }

    #[test]
    fn too_little_before_the_voice_gives_the_voicing_itself() {
        let x = verse_over_murmur(0.1);
        assert_eq!(sound_start(&x, RATE, 0.16, 0.0), 0.16);
    }
}

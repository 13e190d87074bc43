//! The reader: a timeline of readings (readings.jsonl) turned into speech, each kana's
//! clip time-stretched so that it starts exactly at its onset and fills its slot; the
//! first kana held about a second, as tournament readers do; the previous poem's
//! shimo-no-ku before each pause. Owns the stretching and the reader's pace; the kana
//! clips come from `voice`, the hall's sounds from `hall`.

use super::voice::{shimo_sounds, Voice};
use super::AudioError;
use crate::rules::kimariji::sound_units;
use crate::rules::poems::poem;
use crate::rules::Reading;
use rand::Rng;
use rand_chacha::ChaCha20Rng;

/// The reader's pace in the shimo-no-ku, seconds a kana (tournament readers: 0.2-0.3).
const SHIMO_MORA_S: (f64, f64) = (0.17, 0.22);
/// Silence kept between the end of the shimo-no-ku and the next kami-no-ku.
const PAUSE_BEFORE_KAMI_S: (f64, f64) = (0.30, 0.45);
/// The last kana of the shimo-no-ku is held this long when there is time (余韻).
const SHIMO_LAST_HELD_S: (f64, f64) = (0.6, 1.2);
/// When onsets are missing: the contract's tempo model (first kana held, then a pace).
const FIRST_KANA_HELD_S: f64 = 1.1;
const KAMI_MORA_S: f64 = 0.25;
/// When a kana is stretched its consonant and the rise into its vowel are kept as they
/// are, and only the vowel is drawn out, as a reader holds a kana: the part kept ends
/// where the clip's level (RMS over LEVEL_WINDOW_S) first reaches this share of its
/// loudest, the vowel's body. (A fixed share of the clip, at most 80 ms, drew out the
/// end of long consonants: an espeak voice's つ reaches its vowel 170-195 ms into its
/// clip, and a held つ's consonant came out 0.2 s long.)
const VOWEL_LEVEL_SHARE: f32 = 0.5;
const LEVEL_WINDOW_S: f64 = 0.01;
/// At most this share of a clip is kept as it is.
const KEPT_SHARE_MAX: f64 = 0.6;
/// Fade at the end of each kana, so slots join without a click.
const KANA_FADE_S: f64 = 0.006;

/// What was spoken, for the truth file.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Spoken {
    pub seq: u32,
    pub poem: u8,
    /// The onset of every kana of the kami-no-ku as spoken (the readings' onsets, extended
    /// by the tempo model where the file gives fewer).
    pub kami_onsets_s: Vec<f64>,
    pub kami_end_s: f64,
    /// The shimo-no-ku spoken after this reading: start, end and kana count (it is cut
    /// short when the next kami-no-ku comes sooner than the whole verse takes).
    pub shimo_s: Option<[f64; 2]>,
    pub shimo_kana_spoken: usize,
}

/// Lays the reader's speech for `readings` into `track` (at `rate_hz`).
pub fn speak(
    voice: &mut Voice,
    readings: &[Reading],
    track: &mut [f32],
    rate_hz: u32,
    rng: &mut ChaCha20Rng,
) -> Result<Vec<Spoken>, AudioError> {
    let rate = rate_hz as f64;
    let end_s = track.len() as f64 / rate;
    let mut spoken = Vec::new();
    for (i, r) in readings.iter().enumerate() {
        let Some(p) = poem(r.poem) else { continue };
        let units = sound_units(&p.kami_kana, &p.kami_pron);
        let onsets = full_onsets(r, units.len());
        let kami_end_s = r
            .kami_end_s
            .unwrap_or(onsets[onsets.len() - 1] + KAMI_MORA_S)
            .max(onsets[onsets.len() - 1] + 0.1);
        for (k, u) in units.iter().enumerate() {
            let t0 = onsets[k];
            let t1 = onsets.get(k + 1).copied().unwrap_or(kami_end_s);
            place(voice.clip(u)?, t0, t1, track, rate);
        }
        // The shimo-no-ku of this poem, from shimo_start_s to a pause before the next kami.
        let mut shimo = None;
        let mut shimo_n = 0;
        if let Some(s0) = r.shimo_start_s {
            let next = readings.get(i + 1).map_or(end_s, |n| n.kami_start_s);
            let stop =
                (next - rng.gen_range(PAUSE_BEFORE_KAMI_S.0..PAUSE_BEFORE_KAMI_S.1)).min(end_s);
            let sounds = shimo_sounds(&p.shimo_kana);
            let mora = rng.gen_range(SHIMO_MORA_S.0..SHIMO_MORA_S.1);
            let held = rng.gen_range(SHIMO_LAST_HELD_S.0..SHIMO_LAST_HELD_S.1);
            let mut t = s0;
            for (k, u) in sounds.iter().enumerate() {
                let last = k + 1 == sounds.len();
                let len = if last { held } else { mora };
                if t + 0.12 > stop {
                    break;
                }
                let t1 = (t + len).min(stop);
                place(voice.clip(u)?, t, t1, track, rate);
                shimo_n += 1;
                t = t1;
            }
            if shimo_n > 0 {
                shimo = Some([s0, t]);
            }
        }
        spoken.push(Spoken {
            seq: r.seq,
            poem: r.poem,
            kami_onsets_s: onsets,
            kami_end_s,
            shimo_s: shimo,
            shimo_kana_spoken: shimo_n,
        });
    }
    Ok(spoken)
}

/// The onsets of every kana: the file's, extended at the file's last pace (or the tempo
/// model's) when it gives fewer than the poem has.
pub fn full_onsets(r: &Reading, units: usize) -> Vec<f64> {
    let mut v: Vec<f64> = r.onsets_s.clone().unwrap_or_default();
    if v.is_empty() {
        v.push(r.kami_start_s);
    }
    let pace = if v.len() >= 3 {
        (v[v.len() - 1] - v[1]) / (v.len() - 2) as f64
    } else {
        KAMI_MORA_S
    };
    while v.len() < units {
        let step = if v.len() == 1 {
            FIRST_KANA_HELD_S
        } else {
            pace
        };
        let t = v[v.len() - 1] + step;
        v.push(t);
    }
    v.truncate(units.max(1));
    v
}

/// Adds `clip` stretched to fill `[t0_s, t1_s)` into `track`, its first sample at `t0_s`.
fn place(clip: &[f32], t0_s: f64, t1_s: f64, track: &mut [f32], rate: f64) {
    let start = (t0_s * rate).round() as usize;
    let len = ((t1_s - t0_s) * rate).round().max(1.0) as usize;
    if start >= track.len() || clip.is_empty() {
        return;
    }
    let mut sound = stretch_kana(clip, len, rate);
    let fade = ((KANA_FADE_S * rate) as usize).min(sound.len() / 2);
    let n = sound.len();
    for k in 0..fade {
        sound[n - 1 - k] *= k as f32 / fade as f32;
    }
    for (k, s) in sound.iter().enumerate() {
        if let Some(t) = track.get_mut(start + k) {
            *t += s;
        }
    }
}

/// A kana's clip made `out_len` samples long: the consonant part kept, the vowel drawn
/// out or shortened (WSOLA); a clip much longer than its slot is shortened whole.
pub fn stretch_kana(clip: &[f32], out_len: usize, rate: f64) -> Vec<f32> {
    let keep = vowel_body_at(clip, rate).min((clip.len() as f64 * KEPT_SHARE_MAX) as usize);
    if out_len <= keep + keep / 2 || clip.len() <= keep + 64 {
        return wsola(clip, out_len);
    }
    let mut out = clip[..keep].to_vec();
    out.extend(wsola(&clip[keep..], out_len - keep));
    out
}

/// The first sample of a clip's vowel body: the start of the first window (LEVEL_WINDOW_S,
/// a quarter window apart) whose RMS reaches VOWEL_LEVEL_SHARE of the loudest window's.
fn vowel_body_at(clip: &[f32], rate: f64) -> usize {
    let w = ((LEVEL_WINDOW_S * rate) as usize).max(1);
    let hop = (w / 4).max(1);
    let starts: Vec<usize> = (0..clip.len()).step_by(hop).collect();
    let levels: Vec<f32> = starts
        .iter()
        .map(|&i| super::voice::rms(&clip[i..(i + w).min(clip.len())]))
        .collect();
    let loudest = levels.iter().copied().fold(0.0f32, f32::max);
    starts
        .iter()
        .zip(&levels)
        .find(|(_, &l)| l >= VOWEL_LEVEL_SHARE * loudest)
        .map_or(0, |(&i, _)| i)
}

/// Waveform-similarity overlap-add: `x` played at another speed, same pitch.
pub fn wsola(x: &[f32], out_len: usize) -> Vec<f32> {
    const N: usize = 960; // 20 ms at 48 kHz
    const HS: usize = N / 2;
    const TOL: usize = 240;
    if x.len() < N + 2 * TOL || out_len < N {
        // Too short to overlap-add: resample linearly.
        return (0..out_len)
            .map(|i| {
                let p = i as f64 * (x.len().saturating_sub(1)) as f64
                    / out_len.max(2).saturating_sub(1) as f64;
                let a = p.floor() as usize;
                let f = (p - a as f64) as f32;
                let b = (a + 1).min(x.len().saturating_sub(1));
                x.get(a).copied().unwrap_or(0.0) * (1.0 - f) + x.get(b).copied().unwrap_or(0.0) * f
            })
            .collect();
    }
    let win: Vec<f32> = (0..N)
        .map(|i| (std::f32::consts::PI * i as f32 / N as f32).sin().powi(2))
        .collect();
    let mut out = vec![0.0f32; out_len + N];
    let mut norm = vec![0.0f32; out_len + N];
    let max_pos = x.len() - N;
    let alpha = max_pos as f64 / (out_len.saturating_sub(N)).max(1) as f64;
    let mut prev: usize = 0;
    let mut k = 0;
    while k * HS < out_len {
        let ideal = ((k * HS) as f64 * alpha).round() as usize;
        let pos = if k == 0 {
            0
        } else {
            // Best match to the natural continuation of the previous segment.
            let cont = (prev + HS).min(max_pos);
            let lo = ideal.saturating_sub(TOL).min(max_pos);
            let hi = (ideal + TOL).min(max_pos);
            let mut best = (f32::MIN, ideal.min(max_pos));
            let mut p = lo;
            while p <= hi {
                let mut c = 0.0f32;
                let mut j = 0;
                while j < N {
                    c += x[p + j] * x[cont + j];
                    j += 4;
                }
                if c > best.0 {
                    best = (c, p);
                }
                p += 8;
            }
            best.1
        };
        let o = k * HS;
        for j in 0..N {
            out[o + j] += x[pos + j] * win[j];
            norm[o + j] += win[j];
        }
        prev = pos;
        k += 1;
    }
    out.truncate(out_len);
    for (s, w) in out.iter_mut().zip(norm) {
        if w > 1e-3 {
            *s /= w;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kana clip at 48 kHz: `consonant_s` of a soft hiss, then a loud vowel (a 220 Hz
    /// tone) for the rest of `len_s`.
    fn clip(consonant_s: f64, len_s: f64) -> Vec<f32> {
        let rate = 48_000.0;
        (0..(len_s * rate) as usize)
            .map(|i| {
                let t = i as f64 / rate;
                if t < consonant_s {
                    0.02 * if i % 2 == 0 { 1.0 } else { -1.0 }
                } else {
                    0.5 * (2.0 * std::f64::consts::PI * 220.0 * t).sin() as f32
                }
            })
            .collect()
    }

    #[test]
    fn a_held_kana_keeps_its_consonant_and_draws_out_its_vowel() {
        let rate = 48_000.0;
        for consonant_s in [0.03, 0.12, 0.18] {
            let c = clip(consonant_s, 0.8);
            let held = stretch_kana(&c, (1.1 * rate) as usize, rate);
            assert_eq!(held.len(), (1.1 * rate) as usize);
            // The vowel starts where it does in the clip: the first loud sample.
            let loud = |x: &[f32]| x.iter().position(|v| v.abs() > 0.1).unwrap();
            let (in_clip, in_held) = (loud(&c), loud(&held));
            assert!(
                in_held.abs_diff(in_clip) as f64 / rate < 0.005,
                "consonant {consonant_s} s: vowel at {:.3} s held, {:.3} s in the clip",
                in_held as f64 / rate,
                in_clip as f64 / rate
            );
        }
    }
}

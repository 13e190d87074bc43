//! The hall's sounds under the reading: murmur (shaped, slowly swelling noise), the
//! reader's breath before each verse, and cards struck and flying after each kimari-ji
//! (and now and then anywhere, as players straighten their cards). Owns the noise
//! levels; knows the timeline only through the times it is given.

use super::reader::Spoken;
use rand::Rng;
use rand_chacha::ChaCha20Rng;

/// How loud the hall is around the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NoiseLevel {
    Quiet,
    Moderate,
    Loud,
}

/// Levels as RMS amplitudes (the reader's speech is at voice::SPEECH_RMS = 0.08, -22 dBFS).
struct Levels {
    murmur_rms: f32,
    breath_rms: f32,
    strike_peak: f32,
}

impl NoiseLevel {
    fn levels(self) -> Levels {
        match self {
            // murmur 30 dB under the voice, breath 25 dB, strikes 12 dB under its peak
            NoiseLevel::Quiet => Levels {
                murmur_rms: 0.0025,
                breath_rms: 0.0045,
                strike_peak: 0.06,
            },
            // 20 dB, 18 dB, strikes as loud as the voice's peaks
            NoiseLevel::Moderate => Levels {
                murmur_rms: 0.008,
                breath_rms: 0.010,
                strike_peak: 0.2,
            },
            // 12 dB, 12 dB, strikes above the voice
            NoiseLevel::Loud => Levels {
                murmur_rms: 0.020,
                breath_rms: 0.020,
                strike_peak: 0.45,
            },
        }
    }
}

/// What the hall did, for the truth file.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct HallTruth {
    pub breaths_s: Vec<[f64; 2]>,
    pub strikes_s: Vec<f64>,
}

/// A one-pole low-pass filter.
struct OnePole {
    a: f32,
    y: f32,
}

impl OnePole {
    fn new(cut_hz: f32, rate: f32) -> OnePole {
        OnePole {
            a: (-2.0 * std::f32::consts::PI * cut_hz / rate).exp(),
            y: 0.0,
        }
    }
    fn run(&mut self, x: f32) -> f32 {
        self.y = (1.0 - self.a) * x + self.a * self.y;
        self.y
    }
}

fn white(rng: &mut ChaCha20Rng) -> f32 {
    rng.gen_range(-1.0f32..1.0)
}

/// Adds the hall's sounds to `track`.
pub fn add_hall(
    level: NoiseLevel,
    spoken: &[Spoken],
    track: &mut [f32],
    rate_hz: u32,
    rng: &mut ChaCha20Rng,
) -> HallTruth {
    let lv = level.levels();
    let rate = rate_hz as f32;
    let mut truth = HallTruth::default();
    // Murmur: band 150-2500 Hz noise whose level swells over seconds.
    let mut lo = OnePole::new(2500.0, rate);
    let mut hi = OnePole::new(150.0, rate);
    // The swell starts at its mean: the hall is as loud in the recording's first moments
    // as later (from silence it took some 0.3 s to rise, and a verse read then was heard
    // against a murmur quieter than its own).
    let mut swell = OnePole::new(0.5, rate);
    swell.y = 1.0;
    let mut band = vec![0.0f32; track.len()];
    let mut env = 1.0f32;
    for (i, b) in band.iter_mut().enumerate() {
        let w = white(rng);
        let l = lo.run(w);
        *b = l - hi.run(l);
        if i % 256 == 0 {
            env = (1.0 + 0.4 * white(rng) * 3.0).max(0.2);
        }
        *b *= swell.run(env);
    }
    let scale = lv.murmur_rms / super::voice::rms(&band).max(1e-9);
    for (t, b) in track.iter_mut().zip(&band) {
        *t += b * scale;
    }
    // Breath before each verse: 0.3-0.55 s of soft noise ending shortly before the voice.
    let mut verse_starts: Vec<f64> = spoken.iter().map(|s| s.kami_onsets_s[0]).collect();
    verse_starts.extend(spoken.iter().filter_map(|s| s.shimo_s.map(|v| v[0])));
    for t_s in verse_starts {
        if !rng.gen_bool(0.8) {
            continue;
        }
        let end = t_s - rng.gen_range(0.08..0.25);
        let start = end - rng.gen_range(0.3..0.55);
        if start < 0.0 {
            continue;
        }
        breath(track, start, end, lv.breath_rms, rate, rng);
        truth.breaths_s.push([start, end]);
    }
    // Cards struck after each kimari-ji, and stray ones anywhere.
    let total_s = track.len() as f64 / rate as f64;
    let mut strikes = Vec::new();
    for s in spoken {
        let decided = s.kami_onsets_s[s.kami_onsets_s.len().min(3) - 1];
        for _ in 0..rng.gen_range(1..=3) {
            strikes.push(decided + rng.gen_range(0.1..1.2));
        }
    }
    for _ in 0..(total_s / 8.0).ceil() as usize {
        strikes.push(rng.gen_range(0.0..total_s));
    }
    for t_s in strikes {
        let peak = lv.strike_peak * rng.gen_range(0.3f32..1.0);
        strike(track, t_s, peak, rate, rng);
        truth.strikes_s.push(t_s);
    }
    truth.strikes_s.sort_by(f64::total_cmp);
    truth
}

fn breath(
    track: &mut [f32],
    start_s: f64,
    end_s: f64,
    level: f32,
    rate: f32,
    rng: &mut ChaCha20Rng,
) {
    let a = (start_s * rate as f64) as usize;
    let b = ((end_s * rate as f64) as usize).min(track.len());
    if b <= a {
        return;
    }
    let mut lo = OnePole::new(3000.0, rate);
    let mut hi = OnePole::new(400.0, rate);
    let n = (b - a) as f32;
    for (k, v) in track[a..b].iter_mut().enumerate() {
        let x = k as f32 / n;
        let env = (std::f32::consts::PI * x).sin().powf(1.5);
        let l = lo.run(white(rng));
        *v += (l - hi.run(l)) * env * level * 4.0;
    }
}

fn strike(track: &mut [f32], t_s: f64, peak: f32, rate: f32, rng: &mut ChaCha20Rng) {
    let a = (t_s * rate as f64) as usize;
    // The strike: a few ms of bright noise; then the card flying and sliding, 40-120 ms.
    let click = (rate * rng.gen_range(0.002..0.006)) as usize;
    let slide = (rate * rng.gen_range(0.04..0.12)) as usize;
    let mut hi = OnePole::new(800.0, rate);
    for k in 0..click + slide {
        let Some(t) = track.get_mut(a + k) else { break };
        let w = white(rng);
        let h = w - hi.run(w);
        let env = if k < click {
            (-(k as f32) / (click as f32 * 0.5)).exp()
        } else {
            0.15 * (-((k - click) as f32) / (slide as f32 * 0.4)).exp()
        };
        *t += h * env * peak;
    }
}

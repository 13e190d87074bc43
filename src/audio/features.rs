//! Short-time features of a sound track at the analysis rate: speech-band level, voicing
//! (the autocorrelation peak at voice pitches) and mel cepstra, one frame every
//! HOP_S. Owns the spectra (rustfft); knows nothing of poems.

use super::pcm::ANALYSIS_RATE_HZ;
use rustfft::num_complex::Complex;
use rustfft::FftPlanner;

/// Frame hop and window, at the analysis rate (16 kHz).
pub const HOP: usize = 80;
pub const WIN: usize = 400;
/// Zero-padded to more than twice the window, so the autocorrelation at the longest
/// pitch lag does not wrap around.
const NFFT: usize = 1024;
/// Seconds between frames.
pub const HOP_S: f64 = HOP as f64 / ANALYSIS_RATE_HZ as f64;

/// The time of frame `i`'s window centre, s.
pub fn frame_time(i: usize) -> f64 {
    i as f64 * HOP_S + WIN as f64 / 2.0 / ANALYSIS_RATE_HZ as f64
}

/// The frame whose window centre lies nearest `t_s` (the first for earlier times).
pub fn frame_at(t_s: f64) -> usize {
    ((t_s - frame_time(0)) / HOP_S).round().max(0.0) as usize
}
/// Mel bands and cepstra kept (c1..c12, c0 dropped: the level is its own feature).
const MEL_BANDS: usize = 26;
pub const CEPS: usize = 12;
/// The speech band for the level, Hz.
const SPEECH_BAND_HZ: (f64, f64) = (250.0, 4000.0);
/// Pitch range searched for voicing, Hz.
const PITCH_HZ: (f64, f64) = (70.0, 400.0);

/// Per-frame features; frame `i` is centred at `i * HOP_S + WIN/2`.
pub struct Frames {
    /// Speech-band level, dB (arbitrary reference).
    pub level_db: Vec<f32>,
    /// Level above 2 kHz, dB: fricatives and bursts.
    pub high_db: Vec<f32>,
    /// Normalised autocorrelation peak at voice pitches, 0..1.
    pub voicing: Vec<f32>,
    /// Mel cepstra c1..c12.
    pub ceps: Vec<[f32; CEPS]>,
}

impl Frames {
    pub fn len(&self) -> usize {
        self.level_db.len()
    }
    pub fn is_empty(&self) -> bool {
        self.level_db.is_empty()
    }
}

fn mel(hz: f64) -> f64 {
    2595.0 * (1.0 + hz / 700.0).log10()
}

fn mel_filters(rate: f64) -> Vec<Vec<(usize, f32)>> {
    let (lo, hi) = (mel(100.0), mel(7000.0));
    let edges: Vec<f64> = (0..MEL_BANDS + 2)
        .map(|i| {
            let m = lo + (hi - lo) * i as f64 / (MEL_BANDS + 1) as f64;
            700.0 * (10f64.powf(m / 2595.0) - 1.0)
        })
        .collect();
    let bin_hz = rate / NFFT as f64;
    (0..MEL_BANDS)
        .map(|b| {
            let (l, c, r) = (edges[b], edges[b + 1], edges[b + 2]);
            (0..=NFFT / 2)
                .filter_map(|k| {
                    let f = k as f64 * bin_hz;
                    let w = if f > l && f <= c {
                        (f - l) / (c - l)
                    } else if f > c && f < r {
                        (r - f) / (r - c)
                    } else {
                        0.0
                    };
                    (w > 0.0).then_some((k, w as f32))
                })
                .collect()
        })
        .collect()
}

/// Features of `samples` (mono, `rate_hz`, normally 16 kHz).
pub fn analyze(samples: &[f32], rate_hz: u32) -> Frames {
    let rate = rate_hz as f64;
    let n = if samples.len() >= WIN {
        (samples.len() - WIN) / HOP + 1
    } else {
        0
    };
    let mut planner = FftPlanner::<f32>::new();
    let fft = planner.plan_fft_forward(NFFT);
    let ifft = planner.plan_fft_inverse(NFFT);
    let window: Vec<f32> = (0..WIN)
        .map(|i| 0.5 - 0.5 * (2.0 * std::f32::consts::PI * i as f32 / (WIN - 1) as f32).cos())
        .collect();
    let filters = mel_filters(rate);
    let bin_hz = rate / NFFT as f64;
    let (sb_lo, sb_hi) = (
        (SPEECH_BAND_HZ.0 / bin_hz) as usize,
        (SPEECH_BAND_HZ.1 / bin_hz) as usize,
    );
    let hb_lo = (2000.0 / bin_hz) as usize;
    let ac_lo = (90.0 / bin_hz) as usize;
    let lag_lo = (rate / PITCH_HZ.1) as usize;
    let lag_hi = ((rate / PITCH_HZ.0) as usize).min(WIN - 1);
    let dct: Vec<[f32; MEL_BANDS]> = (1..=CEPS)
        .map(|c| {
            let mut row = [0.0f32; MEL_BANDS];
            for (b, v) in row.iter_mut().enumerate() {
                *v = (std::f64::consts::PI * c as f64 * (b as f64 + 0.5) / MEL_BANDS as f64).cos()
                    as f32;
            }
            row
        })
        .collect();
    // The autocorrelation of the window itself, to undo its taper.
    let win_ac: Vec<f32> = (0..WIN)
        .map(|l| (0..WIN - l).map(|i| window[i] * window[i + l]).sum::<f32>())
        .collect();
    let mut out = Frames {
        level_db: Vec::with_capacity(n),
        high_db: Vec::with_capacity(n),
        voicing: Vec::with_capacity(n),
        ceps: Vec::with_capacity(n),
    };
    let mut buf = vec![Complex::new(0.0f32, 0.0); NFFT];
    let mut power = vec![0.0f32; NFFT / 2 + 1];
    for f in 0..n {
        let s = &samples[f * HOP..f * HOP + WIN];
        for (k, b) in buf.iter_mut().enumerate() {
            *b = if k < WIN {
                Complex::new(s[k] * window[k], 0.0)
            } else {
                Complex::new(0.0, 0.0)
            };
        }
        fft.process(&mut buf);
        for (k, p) in power.iter_mut().enumerate() {
            *p = buf[k].norm_sqr();
        }
        let sb: f32 = power[sb_lo..=sb_hi].iter().sum();
        let hb: f32 = power[hb_lo..].iter().sum();
        out.level_db.push(10.0 * (sb + 1e-10).log10());
        out.high_db.push(10.0 * (hb + 1e-10).log10());
        let mut logmel = [0.0f32; MEL_BANDS];
        for (b, filt) in filters.iter().enumerate() {
            let e: f32 = filt.iter().map(|&(k, w)| power[k] * w).sum();
            logmel[b] = (e + 1e-8).ln();
        }
        let mut c = [0.0f32; CEPS];
        for (ci, row) in dct.iter().enumerate() {
            c[ci] = row.iter().zip(&logmel).map(|(a, b)| a * b).sum();
        }
        out.ceps.push(c);
        // Autocorrelation = inverse FFT of the power spectrum (speech band only, so
        // low hum and hiss do not look voiced).
        for (k, b) in buf.iter_mut().enumerate() {
            let kk = if k <= NFFT / 2 { k } else { NFFT - k };
            let p = if kk >= ac_lo && kk <= sb_hi {
                power[kk]
            } else {
                0.0
            };
            *b = Complex::new(p, 0.0);
        }
        ifft.process(&mut buf);
        let r0 = buf[0].re.max(1e-12);
        let mut best = 0.0f32;
        for l in lag_lo..=lag_hi {
            let v = buf[l].re / r0 * win_ac[0] / win_ac[l].max(1e-6);
            if v > best {
                best = v;
            }
        }
        out.voicing.push(best.clamp(0.0, 1.0));
    }
    out
}

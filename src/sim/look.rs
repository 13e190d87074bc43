//! How a recording looks, drawn from the seed and the preset: tatami, light, cards, fonts,
//! lens, noise, exposure. Varied on purpose so that a detector cannot key on one colour,
//! one font or one light (docs/sim.md lists the ranges).

use crate::sim::Preset;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha20Rng;
use serde::Serialize;

/// Japanese fonts from Debian packages (fonts-ipafont-mincho, fonts-ipafont-gothic).
pub const FONT_PATHS: [&str; 2] = [
    "/usr/share/fonts/opentype/ipafont-mincho/ipam.ttf",
    "/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf",
];

const BORDER_BGR: [[f64; 3]; 6] = [
    [40.0, 90.0, 40.0],
    [30.0, 60.0, 30.0],
    [40.0, 70.0, 110.0],
    [40.0, 40.0, 140.0],
    [90.0, 50.0, 30.0],
    [30.0, 30.0, 35.0],
];

/// How the columns of a card's text are set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum CardColumns {
    /// Each column starts lower than the one to its right ("scattered" writing; the
    /// simulator's default).
    Stepped,
    /// All columns start at the same height.
    Level,
}

/// Overrides of the card text's look (all off by default: the seed decides).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CardTextOptions {
    /// A font file for the card text (a .ttc is read at face 0) instead of the seed's.
    pub font: Option<String>,
    pub columns: Option<CardColumns>,
    /// Print the dakuten and handakuten, as some card sets do.
    pub dakuten: bool,
}

/// The look of one recording.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Look {
    pub tatami_bgr: [f64; 3],
    pub weave_period_mm: f64,
    pub weave_contrast: f64,
    /// Weave lines run along x (true) or y.
    pub weave_along_x: bool,
    /// Tatami edges (heri): position along y of dark cloth bands, mm.
    pub heri_y_mm: Vec<f64>,
    pub heri_bgr: [f64; 3],
    pub card_cream_bgr: [f64; 3],
    pub card_border_bgr: [f64; 3],
    pub card_border_mm: f64,
    pub font: String,
    pub ink_bgr: [f64; 3],
    /// Per-channel light colour (colour temperature) times brightness.
    pub light_gain_bgr: [f64; 3],
    pub vignette: f64,
    pub flicker_hz: f64,
    pub flicker_depth: f64,
    pub flicker_phase: f64,
    pub noise_sigma: f64,
    /// Exposure as a fraction of the frame interval.
    pub exposure_frac: f64,
    /// Shadow offset per millimetre of height (x, y).
    pub light_dir: [f64; 2],
    pub shadow_strength: f64,
    /// Lens distortion scale (0 = none).
    pub lens_strength: f64,
    /// Camera shake: amplitude of the camera centre's drift, mm.
    pub shake_mm: f64,
    /// H.264 constant rate factor.
    pub crf: u32,
    /// Card text columns set level (else stepped).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub level_columns: bool,
    /// Card text printed with dakuten.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dakuten: bool,
}

impl Look {
    pub fn random(rng: &mut ChaCha20Rng, preset: Preset) -> Look {
        let hue = rng.gen_range(0.0..1.0);
        // Tatami from green-yellow (new) to straw (old).
        let tatami_bgr = [
            70.0 + 30.0 * hue + rng.gen_range(-10.0..10.0),
            150.0 + 20.0 * hue + rng.gen_range(-12.0..12.0),
            140.0 + 50.0 * hue + rng.gen_range(-12.0..12.0),
        ];
        let kelvin: f64 = match preset {
            Preset::Clean => rng.gen_range(4500.0..6000.0),
            _ => rng.gen_range(3000.0..6500.0),
        };
        // Warm light lifts red and cuts blue.
        let warm = ((5500.0 - kelvin) / 2500.0).clamp(-0.4, 1.0);
        let brightness = match preset {
            Preset::Clean => rng.gen_range(0.95..1.1),
            Preset::Realistic => rng.gen_range(0.75..1.05),
            Preset::Hard => rng.gen_range(0.45..0.7),
        };
        let light_gain_bgr = [
            brightness * (1.0 - 0.22 * warm),
            brightness,
            brightness * (1.0 + 0.15 * warm),
        ];
        let heri_y_mm = (0..rng.gen_range(0..=2))
            .map(|_| {
                let s = if rng.gen_bool(0.5) { 1.0 } else { -1.0 };
                s * rng.gen_range(330.0..420.0)
            })
            .collect();
        let angle = rng.gen_range(0.0..std::f64::consts::TAU);
        let len = rng.gen_range(0.25..0.6);
        Look {
            tatami_bgr,
            weave_period_mm: rng.gen_range(2.6..3.6),
            weave_contrast: rng.gen_range(0.05..0.14),
            weave_along_x: rng.gen_bool(0.5),
            heri_y_mm,
            heri_bgr: *[[30.0, 30.0, 30.0], [60.0, 40.0, 30.0], [30.0, 50.0, 40.0]]
                .choose(rng)
                .unwrap_or(&[30.0, 30.0, 30.0]),
            card_cream_bgr: [
                rng.gen_range(195.0..225.0),
                rng.gen_range(222.0..240.0),
                rng.gen_range(232.0..248.0),
            ],
            card_border_bgr: *BORDER_BGR.choose(rng).unwrap_or(&BORDER_BGR[0]),
            card_border_mm: rng.gen_range(1.5..3.5),
            font: FONT_PATHS[rng.gen_range(0..FONT_PATHS.len())].to_string(),
            ink_bgr: [rng.gen_range(15.0..40.0); 3],
            light_gain_bgr,
            vignette: match preset {
                Preset::Clean => rng.gen_range(0.0..0.15),
                _ => rng.gen_range(0.1..0.4),
            },
            flicker_hz: if rng.gen_bool(0.5) { 100.0 } else { 120.0 },
            flicker_depth: match preset {
                Preset::Clean => 0.0,
                Preset::Realistic => rng.gen_range(0.02..0.08),
                Preset::Hard => rng.gen_range(0.06..0.15),
            },
            flicker_phase: rng.gen_range(0.0..std::f64::consts::TAU),
            noise_sigma: match preset {
                Preset::Clean => rng.gen_range(0.6..1.0),
                Preset::Realistic => rng.gen_range(1.0..2.0),
                Preset::Hard => rng.gen_range(2.5..4.0),
            },
            exposure_frac: match preset {
                Preset::Clean => 0.25,
                Preset::Realistic => rng.gen_range(0.4..0.7),
                Preset::Hard => rng.gen_range(0.8..1.0),
            },
            light_dir: [angle.cos() * len, angle.sin() * len],
            shadow_strength: rng.gen_range(0.3..0.5),
            lens_strength: match preset {
                Preset::Clean => 0.6,
                Preset::Realistic => 1.0,
                Preset::Hard => 1.5,
            },
            shake_mm: match preset {
                Preset::Hard => rng.gen_range(1.0..3.0),
                _ => 0.0,
            },
            crf: match preset {
                Preset::Clean => 23,
                Preset::Realistic => 27,
                Preset::Hard => 29,
            },
            level_columns: false,
            dakuten: false,
        }
    }

    /// Applies the card-text overrides (after the seed has drawn everything, so that the
    /// rest of the recording stays what the seed makes it).
    pub fn with_card_text(mut self, o: &CardTextOptions) -> Look {
        if let Some(f) = &o.font {
            self.font = f.clone();
        }
        if let Some(c) = o.columns {
            self.level_columns = c == CardColumns::Level;
        }
        self.dakuten = o.dakuten;
        self
    }

    /// The light's brightness averaged over a frame's exposure: mains flicker at twice the
    /// mains frequency, integrated over the exposure time.
    pub fn flicker_gain(&self, t_s: f64, exposure_s: f64) -> f64 {
        if self.flicker_depth == 0.0 {
            return 1.0;
        }
        let w = std::f64::consts::TAU * self.flicker_hz;
        let half = 0.5 * w * exposure_s;
        let sinc = if half.abs() < 1e-9 {
            1.0
        } else {
            half.sin() / half
        };
        1.0 + self.flicker_depth * (w * t_s + self.flicker_phase).cos() * sinc
    }

    /// The camera centre's drift at t (camera shake), mm.
    pub fn shake_at(&self, t_s: f64) -> (f64, f64) {
        if self.shake_mm == 0.0 {
            return (0.0, 0.0);
        }
        let a = self.shake_mm;
        (
            a * (0.6 * (t_s * 7.3).sin() + 0.4 * (t_s * 17.9 + 1.0).sin()),
            a * (0.6 * (t_s * 5.1 + 2.0).sin() + 0.4 * (t_s * 21.7).sin()),
        )
    }
}

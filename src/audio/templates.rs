//! Kana templates: the mel cepstra of every kana of the kami-no-ku as the template voices
//! (`voice::TEMPLATE_VOICES`) say it, shipped in the binary (`kana_templates.json`, remade by
//! `cargo test --release --test audio make_kana_templates -- --ignored`). Poem templates
//! are built from them at the reader's pace. Owns the template file; the held-out voices
//! never enter it.

use super::features::{analyze, CEPS};
use super::pcm::{track_to_analysis_rate, ANALYSIS_RATE_HZ};
use super::voice::{Voice, VoiceSpec, TEMPLATE_VOICES};
use super::AudioError;
use crate::rules::kimariji::sound_units;
use crate::rules::poems::poems;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

/// Templates are kept at every second analysis frame (10 ms).
pub const TEMPLATE_STEP: usize = 2;
/// Cepstra are stored as integers of this many steps per unit.
const QUANT: f32 = 4.0;
/// Share of a kana's frames (at most CONSONANT_FRAMES_MAX) kept unstretched, as the
/// reader keeps the consonant and draws out the vowel.
const CONSONANT_SHARE: f64 = 0.3;
const CONSONANT_FRAMES_MAX: usize = 8;

const EMBEDDED: &str = include_str!("kana_templates.json");

/// The file: per kana, per tuning voice, frames of quantised cepstra.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct KanaTemplateFile {
    pub voices: Vec<String>,
    pub kana: BTreeMap<String, Vec<Vec<Vec<i16>>>>,
}

/// Templates ready to use: per kana, one sequence per voice.
pub struct KanaTemplates {
    pub kana: BTreeMap<String, Vec<Vec<[f32; CEPS]>>>,
}

/// All kana sounds of the kami-no-ku of the 100 poems.
pub fn all_kami_kana() -> Vec<String> {
    let mut set: Vec<String> = poems()
        .iter()
        .flat_map(|p| sound_units(&p.kami_kana, &p.kami_pron))
        .collect();
    set.sort();
    set.dedup();
    set
}

/// Makes the template file from the template voices (needs espeak-ng and the neural
/// voices' folders made by `tools/kokoro_kana.py` under `data/voices/`).
pub fn build(cache_root: &Path) -> Result<KanaTemplateFile, AudioError> {
    let mut file = KanaTemplateFile {
        voices: TEMPLATE_VOICES.iter().map(|s| s.to_string()).collect(),
        kana: BTreeMap::new(),
    };
    let kana = all_kami_kana();
    for name in TEMPLATE_VOICES {
        let spec = VoiceSpec::parse(name).ok_or_else(|| AudioError::tool("templates", name))?;
        let mut voice = Voice::new(spec, cache_root);
        for k in &kana {
            let clip = track_to_analysis_rate(voice.clip(k)?);
            let frames = analyze(&clip, ANALYSIS_RATE_HZ);
            let q: Vec<Vec<i16>> = frames
                .ceps
                .iter()
                .step_by(TEMPLATE_STEP)
                .map(|c| c.iter().map(|v| (v * QUANT).round() as i16).collect())
                .collect();
            file.kana.entry(k.clone()).or_default().push(q);
        }
    }
    Ok(file)
}

/// The templates shipped in the binary.
pub fn embedded() -> &'static KanaTemplates {
    static T: OnceLock<KanaTemplates> = OnceLock::new();
    T.get_or_init(|| {
        let file: KanaTemplateFile = serde_json::from_str(EMBEDDED).unwrap_or(KanaTemplateFile {
            voices: Vec::new(),
            kana: BTreeMap::new(),
        });
        KanaTemplates {
            kana: file
                .kana
                .into_iter()
                .map(|(k, voices)| {
                    let v = voices
                        .into_iter()
                        .map(|frames| {
                            frames
                                .into_iter()
                                .map(|c| {
                                    let mut a = [0.0f32; CEPS];
                                    for (d, s) in a.iter_mut().zip(c) {
                                        *d = s as f32 / QUANT;
                                    }
                                    a
                                })
                                .collect()
                        })
                        .collect();
                    (k, v)
                })
                .collect(),
        }
    })
}

/// A kana's frames made `len` long: the consonant frames kept, the rest resampled.
fn stretch_frames(f: &[[f32; CEPS]], len: usize) -> Vec<[f32; CEPS]> {
    if f.is_empty() || len == 0 {
        return vec![[0.0; CEPS]; len];
    }
    let keep = ((f.len() as f64 * CONSONANT_SHARE) as usize).min(CONSONANT_FRAMES_MAX);
    let (head, tail) = if len > keep + 2 && f.len() > keep + 1 {
        (&f[..keep], &f[keep..])
    } else {
        (&f[..0], f)
    };
    let mut out: Vec<[f32; CEPS]> = head.to_vec();
    let rest = len - head.len();
    for i in 0..rest {
        let p = i as f64 * tail.len() as f64 / rest as f64;
        out.push(tail[(p as usize).min(tail.len() - 1)]);
    }
    out
}

/// A poem's kami-no-ku template for one voice: kana `units` with the first held
/// `first_frames` and the others `mora_frames` long. Returns the frames and the frame at
/// which each kana starts.
pub fn poem_template(
    t: &KanaTemplates,
    units: &[String],
    voice: usize,
    first_frames: usize,
    mora_frames: usize,
) -> Option<(Vec<[f32; CEPS]>, Vec<usize>)> {
    let mut frames = Vec::new();
    let mut starts = Vec::with_capacity(units.len());
    for (k, u) in units.iter().enumerate() {
        let src = t.kana.get(u)?.get(voice)?;
        starts.push(frames.len());
        let len = if k == 0 { first_frames } else { mora_frames };
        frames.extend(stretch_frames(src, len.max(1)));
    }
    Some((frames, starts))
}

//! Reader's voices for the simulator's sound track: one short clip per kana, made offline
//! and cached. A voice is either `espeak-ng -v ja` with a pitch, speed and variant, or a
//! folder of per-kana WAV files made by another synthesizer (`tools/kokoro_kana.py`).
//! Owns voice names and the clip cache; knows nothing of timelines.

use super::pcm::{read_sound_file, TRACK_RATE_HZ};
use super::AudioError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A clip starts and ends where its level first and last passes this share of its peak:
/// the kana's onset in the truth is the clip's first sample.
const TRIM_SHARE_OF_PEAK: f32 = 0.03;
/// A clip ends with its last 5 ms whose RMS passes this share of its loudest 5 ms.
const TAIL_SHARE_OF_PEAK_RMS: f32 = 0.12;
/// RMS every voice is brought to, so that hall-noise levels mean the same for all voices.
pub const SPEECH_RMS: f32 = 0.08;
/// The kana whose level sets a voice's gain.
const GAIN_REFERENCE_KANA: &str = "あ";

/// How a voice speaks one kana.
#[derive(Debug, Clone, PartialEq)]
pub enum VoiceSpec {
    Espeak {
        variant: String,
        pitch: u32,
        speed_wpm: u32,
    },
    /// A folder with one `<kana as hex code points>.wav` per kana.
    Folder(PathBuf),
}

/// The voices the kana templates are made of, and the analysis tuned on: the three espeak
/// voices `espeak-a`..`espeak-c` and two neural voices (folders made by
/// `tools/kokoro_kana.py`). The neural voices `jf_nezumi` and `jf_tebukuro` are used for
/// tuning but never templated; `espeak-held` and the neural `jf_alpha` are kept out of
/// all tuning, to test on.
pub const TEMPLATE_VOICES: [&str; 5] = [
    "espeak-a",
    "espeak-b",
    "espeak-c",
    "dir:data/voices/kokoro-jf_gongitsune",
    "dir:data/voices/kokoro-jm_kumo",
];

impl VoiceSpec {
    /// `espeak-a|b|c|held`, `espeak:VARIANT:PITCH:WPM`, or a folder path (`dir:PATH`).
    pub fn parse(name: &str) -> Option<VoiceSpec> {
        let e = |v: &str, p: u32, s: u32| VoiceSpec::Espeak {
            variant: v.to_string(),
            pitch: p,
            speed_wpm: s,
        };
        match name {
            "espeak-a" => Some(e("ja", 45, 150)),
            "espeak-b" => Some(e("ja+f2", 65, 170)),
            "espeak-c" => Some(e("ja+m3", 30, 130)),
            "espeak-held" => Some(e("ja+f4", 75, 140)),
            _ => {
                if let Some(dir) = name.strip_prefix("dir:") {
                    return Some(VoiceSpec::Folder(PathBuf::from(dir)));
                }
                let parts: Vec<&str> = name.strip_prefix("espeak:")?.split(':').collect();
                match parts.as_slice() {
                    [v, p, s] => Some(e(v, p.parse().ok()?, s.parse().ok()?)),
                    _ => None,
                }
            }
        }
    }

    fn cache_key(&self) -> String {
        match self {
            VoiceSpec::Espeak {
                variant,
                pitch,
                speed_wpm,
            } => format!("espeak-{}-p{pitch}-s{speed_wpm}", variant.replace('+', "_")),
            VoiceSpec::Folder(p) => {
                format!("dir-{}", p.to_string_lossy().replace(['/', '\\', ':'], "_"))
            }
        }
    }
}

/// File name of a kana's clip: its code points in hex.
pub fn kana_file_stem(kana: &str) -> String {
    kana.chars()
        .map(|c| format!("{:x}", c as u32))
        .collect::<Vec<_>>()
        .join("_")
}

/// A voice with its clips cached on disk (48 kHz f32) and in memory.
pub struct Voice {
    pub spec: VoiceSpec,
    cache_dir: PathBuf,
    clips: HashMap<String, Vec<f32>>,
    gain: Option<f32>,
}

impl Voice {
    pub fn new(spec: VoiceSpec, cache_root: &Path) -> Voice {
        let cache_dir = cache_root.join(spec.cache_key());
        Voice {
            spec,
            cache_dir,
            clips: HashMap::new(),
            gain: None,
        }
    }

    /// The trimmed clip of one kana at TRACK_RATE_HZ, at the voice's common level.
    pub fn clip(&mut self, kana: &str) -> Result<&[f32], AudioError> {
        if !self.clips.contains_key(kana) {
            if self.gain.is_none() {
                // One kana sets the voice's gain, so every kana keeps its natural
                // loudness relative to the others.
                let reference = self.load_or_make(GAIN_REFERENCE_KANA)?;
                self.gain = Some(SPEECH_RMS / rms(trim(&reference)).max(1e-6));
            }
            let raw = self.load_or_make(kana)?;
            let g = self.gain.unwrap_or(1.0);
            let clip: Vec<f32> = trim(&raw).iter().map(|s| s * g).collect();
            self.clips.insert(kana.to_string(), clip);
        }
        Ok(self.clips.get(kana).map(|v| v.as_slice()).unwrap_or(&[]))
    }

    fn load_or_make(&self, kana: &str) -> Result<Vec<f32>, AudioError> {
        let stem = kana_file_stem(kana);
        let cached = self.cache_dir.join(format!("{stem}.f32"));
        if let Ok(bytes) = std::fs::read(&cached) {
            return Ok(bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect());
        }
        std::fs::create_dir_all(&self.cache_dir).map_err(|e| AudioError::io(&self.cache_dir, e))?;
        let samples = match &self.spec {
            VoiceSpec::Espeak {
                variant,
                pitch,
                speed_wpm,
            } => {
                let wav = self.cache_dir.join(format!("{stem}.{}.wav", unique_tag()));
                let out = Command::new("espeak-ng")
                    .args([
                        "-v",
                        variant,
                        "-p",
                        &pitch.to_string(),
                        "-s",
                        &speed_wpm.to_string(),
                    ])
                    .arg("-w")
                    .arg(&wav)
                    .arg(kana)
                    .output()
                    .map_err(|e| {
                        AudioError::tool(
                            "espeak-ng",
                            format!("cannot be run ({e}); install the Debian package espeak-ng"),
                        )
                    })?;
                if !out.status.success() {
                    return Err(AudioError::tool(
                        "espeak-ng",
                        format!(
                            "failed on {kana}: {}",
                            String::from_utf8_lossy(&out.stderr).trim()
                        ),
                    ));
                }
                let s = read_sound_file(&wav, TRACK_RATE_HZ)?;
                let _ = std::fs::remove_file(&wav);
                s
            }
            VoiceSpec::Folder(dir) => {
                let wav = dir.join(format!("{stem}.wav"));
                if !wav.is_file() {
                    return Err(AudioError::input(
                        &wav,
                        "voice",
                        format!("no clip for the kana {kana} in this voice's folder"),
                    ));
                }
                read_sound_file(&wav, TRACK_RATE_HZ)?
            }
        };
        let mut bytes = Vec::with_capacity(samples.len() * 4);
        for s in &samples {
            bytes.extend_from_slice(&s.to_le_bytes());
        }
        // Written whole under a name of its own, then renamed: another process making
        // the same clip at once (two `dub`s, or tests run in parallel) never reads a
        // clip half written, nor loses the espeak-ng file it is about to read.
        let part = self
            .cache_dir
            .join(format!("{stem}.f32.{}.part", unique_tag()));
        std::fs::write(&part, bytes).map_err(|e| AudioError::io(&part, e))?;
        std::fs::rename(&part, &cached).map_err(|e| AudioError::io(&cached, e))?;
        Ok(samples)
    }
}

/// A tag no other clip being made at the same time has: the process and a counter.
fn unique_tag() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{n}", std::process::id())
}

pub fn rms(x: &[f32]) -> f32 {
    if x.is_empty() {
        return 0.0;
    }
    (x.iter().map(|s| s * s).sum::<f32>() / x.len() as f32).sqrt()
}

/// The clip from its first sample above TRIM_SHARE_OF_PEAK of its peak to the end of
/// its last 5 ms stretch whose RMS passes TAIL_SHARE_OF_PEAK_RMS of the loudest one: a
/// synthesizer's quiet decay is dropped, so a drawn-out kana does not fall silent early.
pub fn trim(x: &[f32]) -> &[f32] {
    const BLOCK: usize = 240;
    let peak = x.iter().fold(0.0f32, |m, s| m.max(s.abs()));
    let th = peak * TRIM_SHARE_OF_PEAK;
    let first = x.iter().position(|s| s.abs() > th).unwrap_or(0);
    let blocks: Vec<f32> = x[first..].chunks(BLOCK).map(rms).collect();
    let loudest = blocks.iter().fold(0.0f32, |m, &v| m.max(v));
    let last_block = blocks
        .iter()
        .rposition(|&v| v > loudest * TAIL_SHARE_OF_PEAK_RMS)
        .unwrap_or(blocks.len().saturating_sub(1));
    let end = (first + (last_block + 1) * BLOCK).min(x.len());
    if end <= first + 1 {
        return x;
    }
    &x[first..end]
}

/// The shimo-no-ku as a reader says it, one sound per kana: the kami-no-ku's spelling
/// rules of the data set (を→お, medial は-row → わ-row, ぢ/づ → じ/ず), word-initial
/// h kept at each phrase start.
pub fn shimo_sounds(shimo_kana: &str) -> Vec<String> {
    let mut out = Vec::new();
    for phrase in shimo_kana.split_whitespace() {
        for (i, c) in phrase.chars().enumerate() {
            let s = match c {
                'を' => 'お',
                'ゐ' => 'い',
                'ゑ' => 'え',
                'ぢ' => 'じ',
                'づ' => 'ず',
                'は' if i > 0 => 'わ',
                'ひ' if i > 0 => 'い',
                'ふ' if i > 0 => 'う',
                'へ' if i > 0 => 'え',
                'ほ' if i > 0 => 'お',
                other => other,
            };
            out.push(s.to_string());
        }
    }
    out
}

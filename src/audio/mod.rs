//! Sound: the reader's voice and the hall dubbed onto a simulated recording (`dub`), and
//! the reader's timeline taken back from a video's sound track alone (`readings`).
//!
//! Reads video files through the `ffmpeg` command and the poems from `rules`; writes
//! nothing but what its callers ask. Must not judge: it says when a verse began, where
//! each kana fell and which poem it was, never what that means for a take.

pub mod error;
pub mod features;
pub mod hall;
pub mod lead;
pub mod listen;
pub mod onset;
pub mod pcm;
pub mod reader;
pub mod score;
pub mod templates;
pub mod timeline;
pub mod voice;

pub use error::AudioError;
pub use hall::NoiseLevel;
pub use listen::{heard_readings, HeardReading};

use crate::rules::Reading;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::path::{Path, PathBuf};

/// How to dub a recording.
#[derive(Debug, Clone)]
pub struct DubOptions {
    /// A voice name (`voice::VoiceSpec::parse`).
    pub voice: String,
    pub noise: NoiseLevel,
    pub seed: u64,
    /// Where synthesized kana are kept between runs.
    pub cache_dir: PathBuf,
}

/// What `dub` wrote beside the video: the exact sound it laid down.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DubTruth {
    pub voice: String,
    pub noise: NoiseLevel,
    pub seed: u64,
    pub readings: Vec<Reading>,
    pub spoken: Vec<reader::Spoken>,
    pub hall: hall::HallTruth,
}

/// The file `dub` writes its truth to, beside the video.
pub const SOUND_TRUTH_FILE: &str = "sound_truth.json";

/// Adds the reader's voice and the hall's sounds to `video`, following `readings`
/// exactly; writes `out_video` (video stream copied) and returns the truth.
pub fn dub_video(
    video: &Path,
    readings: &[Reading],
    opts: &DubOptions,
    out_video: &Path,
) -> Result<DubTruth, AudioError> {
    let spec = voice::VoiceSpec::parse(&opts.voice).ok_or_else(|| {
        AudioError::input(
            Path::new("--voice"),
            &opts.voice,
            "unknown voice (espeak-a, espeak-b, espeak-c, espeak-held, espeak:VARIANT:PITCH:WPM or dir:FOLDER)",
        )
    })?;
    let mut v = voice::Voice::new(spec, &opts.cache_dir);
    let (_, duration_s) = pcm::probe(video)?;
    let rate = pcm::TRACK_RATE_HZ;
    let mut track = vec![0.0f32; (duration_s * rate as f64).ceil() as usize];
    let mut rng = ChaCha20Rng::seed_from_u64(opts.seed);
    let spoken = reader::speak(&mut v, readings, &mut track, rate, &mut rng)?;
    let hall = hall::add_hall(opts.noise, &spoken, &mut track, rate, &mut rng);
    let tmp = out_video.with_extension("dubbing.mp4");
    pcm::mux(video, &track, &tmp)?;
    std::fs::rename(&tmp, out_video).map_err(|e| AudioError::io(out_video, e))?;
    Ok(DubTruth {
        voice: opts.voice.clone(),
        noise: opts.noise,
        seed: opts.seed,
        readings: readings.to_vec(),
        spoken,
        hall,
    })
}

/// The reader's timeline heard in a video's sound track (contract section 3), with the
/// poem of each reading when the sound tells it (`None` otherwise).
pub fn readings_from_video(path: &Path) -> Result<Vec<HeardReading>, AudioError> {
    let samples = pcm::decode(path, pcm::ANALYSIS_RATE_HZ)?;
    heard_readings(path, &samples, pcm::ANALYSIS_RATE_HZ)
}

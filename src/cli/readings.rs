//! `readings DIR [--out OUT]`: the reader's timeline heard in the video's sound track,
//! written as `OUT/readings.jsonl` (contract section 3, `poem` null where the sound
//! cannot tell). `dub DIR --out OUT`: the reader's voice and the hall's sounds added to
//! a recording's video, following its `readings.jsonl`, with the truth beside it.

use crate::audio::{self, AudioError, DubOptions, NoiseLevel};
use crate::cli::{load_readings, write_json_line};
use crate::detect::video::find_video;
use crate::rules::InputError;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A sound error as the one line an official reads; input faults exit with 2.
pub fn audio_error(e: AudioError) -> anyhow::Error {
    match e {
        AudioError::Input {
            path,
            place,
            problem,
        } => InputError::new(&path.display().to_string(), place, problem).into(),
        other => anyhow::Error::new(other),
    }
}

fn video_in(dir: &Path) -> Result<PathBuf> {
    find_video(dir)
        .map_err(|e| InputError::new(&dir.display().to_string(), "video", e.to_string()).into())
}

/// `readings DIR [--out OUT]`.
pub fn readings(dir: &Path, out: Option<&Path>, stdout: &mut dyn Write) -> Result<()> {
    let video = video_in(dir)?;
    let heard = audio::readings_from_video(&video).map_err(audio_error)?;
    let out_dir = out.unwrap_or(dir);
    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let path = out_dir.join("readings.jsonl");
    let mut file = std::io::BufWriter::new(
        std::fs::File::create(&path).with_context(|| format!("writing {}", path.display()))?,
    );
    for r in &heard {
        write_json_line(&mut file, r).with_context(|| format!("writing {}", path.display()))?;
    }
    let named = heard.iter().filter(|r| r.poem.is_some()).count();
    writeln!(
        stdout,
        "{}: {} readings heard, {} poems named, {} left null",
        path.display(),
        heard.len(),
        named,
        heard.len() - named
    )?;
    Ok(())
}

/// Options of `dub`, as given on the command line.
pub struct DubArgs {
    pub voice: String,
    pub noise: NoiseLevel,
    pub seed: u64,
    pub cache: Option<PathBuf>,
}

/// The folder synthesized kana are kept in: `--cache`, or `data/audio-cache`.
fn cache_dir(given: Option<&Path>) -> PathBuf {
    given.map_or_else(|| PathBuf::from("data/audio-cache"), Path::to_path_buf)
}

/// `dub DIR --out OUT`.
pub fn dub(dir: &Path, out: &Path, args: &DubArgs, stdout: &mut dyn Write) -> Result<()> {
    let video = video_in(dir)?;
    let readings = load_readings(&dir.join("readings.jsonl"))?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let opts = DubOptions {
        voice: args.voice.clone(),
        noise: args.noise,
        seed: args.seed,
        cache_dir: cache_dir(args.cache.as_deref()),
    };
    let out_video = out.join("video.mp4");
    let truth = audio::dub_video(&video, &readings, &opts, &out_video).map_err(audio_error)?;
    let truth_path = out.join(audio::SOUND_TRUTH_FILE);
    let text = serde_json::to_string(&truth)?;
    std::fs::write(&truth_path, text + "\n")
        .with_context(|| format!("writing {}", truth_path.display()))?;
    writeln!(
        stdout,
        "{}: {} readings spoken by {} over a {:?} hall; truth in {}",
        out_video.display(),
        truth.spoken.len(),
        truth.voice,
        truth.noise,
        truth_path.display()
    )?;
    Ok(())
}

/// `score-readings DIR [--heard FILE]`: heard readings (default `DIR/readings.jsonl`)
/// against `DIR/sound_truth.json`, as one JSON line.
pub fn score_readings(dir: &Path, heard: Option<&Path>, stdout: &mut dyn Write) -> Result<()> {
    #[derive(serde::Deserialize)]
    struct Truth {
        spoken: Vec<audio::reader::Spoken>,
    }
    let truth_path = dir.join(audio::SOUND_TRUTH_FILE);
    let text = std::fs::read_to_string(&truth_path)
        .map_err(|e| InputError::new(&truth_path.display().to_string(), "file", e.to_string()))?;
    let truth: Truth = serde_json::from_str(&text)
        .map_err(|e| InputError::new(&truth_path.display().to_string(), "json", e.to_string()))?;
    let heard_path = heard.map_or_else(|| dir.join("readings.jsonl"), Path::to_path_buf);
    let text = std::fs::read_to_string(&heard_path)
        .map_err(|e| InputError::new(&heard_path.display().to_string(), "file", e.to_string()))?;
    let mut heard = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let r: audio::HeardReading = serde_json::from_str(line).map_err(|e| {
            InputError::new(
                &heard_path.display().to_string(),
                format!("line {}", i + 1),
                e.to_string(),
            )
        })?;
        heard.push(r);
    }
    let s = audio::score::score(&truth.spoken, &heard);
    writeln!(stdout, "{}", serde_json::to_string(&s)?)?;
    Ok(())
}

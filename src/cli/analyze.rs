//! `analyze DIR [--out OUT] [--resume]`: the referee from video, over a recording. Reads the
//! recording (video, readings, the lens part of calibration.json, the players block of
//! layout.json, labels when asked),
//! measures the layout, runs `judge::run`, and writes `OUT/layout.json`,
//! `OUT/events.jsonl` and `OUT/decisions.jsonl`. The two JSON Lines files are written
//! under `.part` names, a line at a time and flushed, and renamed when the run is
//! complete: no partial file ever looks complete. After each ruling a checkpoint
//! (`OUT/resume.json`) lets `--resume` continue a killed run from there.

use crate::capture::{self, VideoReader};
use crate::cli::layout::{detect_error, load_calibration};
use crate::cli::{load_readings, read_text, write_json_line};
use crate::detect::layout::{measure_layout_readings, MeasuredLayout};
use crate::field::{FieldMap, Intrinsics};
use crate::judge::{
    self, Checkpoint, HandSource, JudgeError, LabelHands, Output, Resume, Ruled, RunOptions,
};
use crate::rules::{self, InputError, MatchResult, Reading};
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Seek, Write};
use std::path::{Path, PathBuf};

/// Where hand events come from, as the command line asks.
#[derive(Debug, Clone)]
pub enum HandsChoice {
    /// The hand model at this path, run by this engine on this many threads; run
    /// without hands when the file is absent.
    Model {
        path: PathBuf,
        backend: crate::hands::Backend,
        threads: usize,
        /// Also write the hand model's own output here (`ModelHands::record_to`).
        record: Option<PathBuf>,
    },
    /// The simulator's per-frame labels (measuring the rest of the pipeline only).
    Labels,
    None,
}

/// A judge error as the one line an official reads; input faults exit with 2.
pub fn judge_error(e: JudgeError) -> anyhow::Error {
    if e.is_bad_input() {
        let line = e.to_string();
        let (src, rest) = line.split_once(": ").unwrap_or((line.as_str(), ""));
        let (place, problem) = rest.split_once(": ").unwrap_or(("video", rest));
        InputError::new(src, place, problem).into()
    } else {
        anyhow::Error::new(e)
    }
}

/// The recording's lens, and a homography when calibration.json has one: a homography
/// that folds the field is refused (rulings on it would be wrong).
fn lens_of(dir: &Path, image_size: [u32; 2]) -> Result<Option<Intrinsics>> {
    let path = dir.join("calibration.json");
    let Some(cal) = load_calibration(&path)? else {
        return Ok(None);
    };
    let text = read_text(&path)?;
    if let Ok(full) = serde_json::from_str::<crate::field::Calibration>(&text) {
        if let Err(e) = FieldMap::from_calibration(&full, Default::default()) {
            if e.is_bad_input() {
                return Err(InputError::new(
                    &path.display().to_string(),
                    "image_to_field",
                    e.to_string(),
                )
                .into());
            }
        }
    }
    let _ = image_size;
    Ok(Some(Intrinsics::from_calibration(&cal)))
}

/// The hand source the options ask for, and a note on what was chosen.
pub(crate) fn hand_source(
    choice: &HandsChoice,
    dir: &Path,
    fps: f64,
    map: &FieldMap,
    layout: &crate::rules::model::Layout,
) -> Result<(Option<Box<dyn HandSource>>, String)> {
    match choice {
        HandsChoice::None => Ok((None, format!("none ({})", judge::NO_HAND_MODEL))),
        HandsChoice::Labels => match LabelHands::open(dir, fps, layout).map_err(judge_error)? {
            Some(h) => {
                let d = h.describe();
                Ok((Some(Box::new(h)), d))
            }
            None => Err(InputError::new(
                &dir.join("labels/frames.jsonl").display().to_string(),
                "file",
                "--hands-labels needs the simulator's labels (simulate --labels)",
            )
            .into()),
        },
        HandsChoice::Model {
            path: p,
            backend,
            threads,
            record,
        } => {
            if !p.is_file() {
                return Ok((
                    None,
                    format!("none ({}: {} is absent)", judge::NO_HAND_MODEL, p.display()),
                ));
            }
            let perceiver = crate::hands::Perceiver::with_map(
                p,
                map.clone(),
                layout,
                &crate::hands::PerceiveOptions {
                    backend: *backend,
                    threads: *threads,
                    ..crate::hands::PerceiveOptions::default()
                },
            )
            .map_err(|e| -> anyhow::Error {
                match e {
                    crate::hands::HandsError::Model { path, problem } => {
                        InputError::new(&path.display().to_string(), "model", problem).into()
                    }
                    other => anyhow::Error::new(other),
                }
            })?;
            let mut h = judge::model_hands::ModelHands::new(perceiver, p.display().to_string());
            if let Some(dir) = record {
                h.record_to(dir)
                    .with_context(|| format!("creating the hands record in {}", dir.display()))?;
            }
            let d = h.describe();
            Ok((Some(Box::new(h)), d))
        }
    }
}

/// The readings heard in the video's sound track when the recording has no
/// `readings.jsonl` (docs/audio.md), and the readings whose poem the sound could not tell
/// surely: they take the best-matching poem until the judge sees the card taken
/// (`judge::Windows`), and are marked for review when none is.
fn readings_from_sound(video: &Path) -> Result<(Vec<Reading>, BTreeMap<u32, String>)> {
    let heard = crate::audio::readings_from_video(video).map_err(|e| match e {
        crate::audio::AudioError::Input { path, problem, .. } => InputError::new(
            &path.display().to_string(),
            "readings",
            format!("analyze needs readings.jsonl or a sound track with the reading: {problem}"),
        )
        .into(),
        other => anyhow::Error::new(other),
    })?;
    let mut out = Vec::new();
    let mut unsure = BTreeMap::new();
    for h in &heard {
        let Some(poem) = h.poem.or(h.candidate) else {
            eprintln!(
                "{}: reading {} at {:.3} s: no poem can be heard; left out, review it",
                video.display(),
                h.seq,
                h.kami_start_s
            );
            continue;
        };
        if h.poem.is_none() {
            unsure.insert(
                h.seq,
                format!(
                    "the poem was heard from the sound track only as the closest match (poem {poem}, score {:.3}): check which poem was read",
                    h.poem_score
                ),
            );
        }
        out.push(h.to_reading_with(poem));
    }
    Ok((out, unsure))
}

/// Everything `analyze` reads before the first frame.
struct Prepared {
    reader: VideoReader,
    measured: MeasuredLayout,
    map: FieldMap,
    readings: Vec<Reading>,
    /// Readings whose poem was heard only as the closest match (`readings_from_sound`).
    unsure_poems: BTreeMap<u32, String>,
    /// Cards named by their best match once their poem was to be read, and why.
    named_by_reading: BTreeMap<u8, String>,
    /// Wall time of the layout measurement, s.
    layout_wall_s: f64,
}

fn prepare(dir: &Path) -> Result<Prepared> {
    let video = capture::find_video(dir).map_err(|e| judge_error(JudgeError::Capture(e)))?;
    let readings_path = dir.join("readings.jsonl");
    let (readings, unsure_poems) = if readings_path.exists() {
        (load_readings(&readings_path)?, BTreeMap::new())
    } else {
        readings_from_sound(&video)?
    };
    // A recording need not have a layout.json: without one, no lead hand is declared.
    let layout_path = dir.join("layout.json");
    let players = if layout_path.is_file() {
        declared_players(&layout_path)?
    } else {
        BTreeMap::new()
    };
    let reader = VideoReader::open_recording(dir).map_err(|e| judge_error(e.into()))?;
    let size_guess = [0, 0];
    let intrinsics = lens_of(dir, size_guess)?;
    let video_s = reader
        .table_len()
        .map(|n| n as f64 / reader.fps)
        .unwrap_or_else(|| reader.duration_s());
    judge::check_readings(&readings, &readings_path, video_s).map_err(judge_error)?;
    // The layout from the still stretch before the first reading; the stretches between
    // the next readings, when more views are needed (each a short seek, not a scan to
    // the video's end).
    let starts: Vec<f64> = readings.iter().map(|r| r.kami_start_s).collect();
    let layout_started = std::time::Instant::now();
    let mut measured =
        measure_layout_readings(&video, &starts, intrinsics.as_ref()).map_err(detect_error)?;
    // Only poems known surely: a poem heard as the closest match names no card.
    let read: Vec<u8> = readings
        .iter()
        .filter(|r| !unsure_poems.contains_key(&r.seq))
        .map(|r| r.poem)
        .collect();
    let named_by_reading: BTreeMap<u8, String> = measured
        .name_from_readings(&read)
        .into_iter()
        .map(|(poem, score)| {
            (
                poem,
                format!(
                    "the layout could not name card {poem} surely (score {score:.3}); it is named by its best match, the poem read: check the card"
                ),
            )
        })
        .collect();
    measured.note_candidates();
    measured.layout.players = players;
    let layout_wall_s = layout_started.elapsed().as_secs_f64();
    let map = FieldMap::new(
        measured.image_to_field,
        intrinsics,
        measured.layout.field.clone(),
        measured.image_size,
    )
    .map_err(|e| -> anyhow::Error {
        if e.is_bad_input() {
            InputError::new(
                &video.display().to_string(),
                "layout",
                format!("the measured field cannot be mapped: {e}"),
            )
            .into()
        } else {
            anyhow::Error::new(e)
        }
    })?;
    Ok(Prepared {
        reader,
        measured,
        map,
        readings,
        unsure_poems,
        named_by_reading,
        layout_wall_s,
    })
}

/// The players block of a `layout.json` (`DIR/layout.json` for `analyze`, `--layout` for
/// `live`): a lead hand declared there is every touch's hand and the rules' lead hand
/// (13-2), instead of the hand read at the player's first touch. Its cards are never
/// read: they are measured from the video.
pub fn declared_players(path: &Path) -> Result<BTreeMap<rules::Player, rules::PlayerInfo>> {
    let text = read_text(path)?;
    Ok(rules::parse::parse_players(
        &path.display().to_string(),
        &text,
    )?)
}

/// The `.part` name a file is written under until it is complete.
fn part(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".part");
    PathBuf::from(s)
}

/// Writes rulings and events as they are made.
struct FileOutput {
    decisions: BufWriter<File>,
    events: BufWriter<File>,
    decisions_path: PathBuf,
    events_path: PathBuf,
    checkpoint_path: PathBuf,
    progress: indicatif::ProgressBar,
    started: std::time::Instant,
    first_t_s: Option<f64>,
    echo: Option<Box<dyn Write>>,
    /// The hand source, as the summary names it: a checkpoint is resumed only with the
    /// same one.
    hands: String,
}

impl FileOutput {
    /// Opens the `.part` files: new, or cut back to `sizes` (decisions, events bytes)
    /// when a run resumes.
    fn create(
        out_dir: &Path,
        frames: u64,
        sizes: Option<(u64, u64)>,
        echo: Option<Box<dyn Write>>,
    ) -> Result<FileOutput> {
        let decisions_path = out_dir.join("decisions.jsonl");
        let events_path = out_dir.join("events.jsonl");
        let open = |p: &Path, keep: Option<u64>| -> Result<BufWriter<File>> {
            let name = part(p);
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(keep.is_none())
                .open(&name)
                .with_context(|| format!("creating {}", name.display()))?;
            if let Some(n) = keep {
                f.set_len(n)
                    .with_context(|| format!("cutting back {}", name.display()))?;
                f.seek(std::io::SeekFrom::Start(n))?;
            }
            Ok(BufWriter::new(f))
        };
        let progress = if std::io::stderr().is_terminal() {
            let pb = indicatif::ProgressBar::new(frames);
            pb.set_style(
                indicatif::ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} frames  {msg}  {elapsed_precise}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            pb
        } else {
            indicatif::ProgressBar::hidden()
        };
        Ok(FileOutput {
            decisions: open(&decisions_path, sizes.map(|s| s.0))?,
            events: open(&events_path, sizes.map(|s| s.1))?,
            checkpoint_path: out_dir.join(CHECKPOINT_FILE),
            decisions_path,
            events_path,
            progress,
            started: std::time::Instant::now(),
            first_t_s: None,
            echo,
            hands: String::new(),
        })
    }

    /// Renames the finished files to their real names.
    fn complete(self) -> Result<()> {
        self.progress.finish_and_clear();
        drop(self.decisions);
        drop(self.events);
        for p in [&self.events_path, &self.decisions_path] {
            std::fs::rename(part(p), p)
                .with_context(|| format!("renaming {}", part(p).display()))?;
        }
        let _ = std::fs::remove_file(&self.checkpoint_path);
        Ok(())
    }
}

impl Output for FileOutput {
    fn ruled(&mut self, r: &Ruled, _frame: usize) -> Result<(), JudgeError> {
        for e in &r.events {
            write_json_line(&mut self.events, e)?;
        }
        write_json_line(&mut self.decisions, &r.ruling)?;
        if let Some(echo) = self.echo.as_mut() {
            write_json_line(echo, &r.ruling)?;
        }
        Ok(())
    }

    fn frame(&mut self, frame: usize, t_s: f64) {
        if frame.is_multiple_of(64) {
            let t0 = *self.first_t_s.get_or_insert(t_s);
            let wall = self.started.elapsed().as_secs_f64().max(1e-6);
            self.progress.set_position(frame as u64);
            self.progress
                .set_message(format!("{:.2}x real time", (t_s - t0) / wall));
        }
    }

    fn checkpoint(&mut self, cp: &Checkpoint) -> Result<(), JudgeError> {
        self.events.flush()?;
        self.decisions.flush()?;
        let saved = SavedCheckpoint {
            decisions_bytes: self.decisions.get_mut().stream_position()?,
            events_bytes: self.events.get_mut().stream_position()?,
            hands: self.hands.clone(),
            checkpoint: cp.clone(),
        };
        // Written whole under another name, then renamed: a kill leaves the old one or the new.
        let tmp = part(&self.checkpoint_path);
        let text = serde_json::to_vec(&saved).map_err(std::io::Error::other)?;
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &self.checkpoint_path)?;
        Ok(())
    }

    fn finished(&mut self, result: &MatchResult) -> Result<(), JudgeError> {
        write_json_line(&mut self.decisions, result)?;
        if let Some(echo) = self.echo.as_mut() {
            write_json_line(echo, result)?;
        }
        self.events.flush()?;
        self.decisions.flush()?;
        Ok(())
    }
}

/// The checkpoint file of a run in progress, beside its `.part` files.
const CHECKPOINT_FILE: &str = "resume.json";

#[derive(serde::Serialize, serde::Deserialize)]
struct SavedCheckpoint {
    decisions_bytes: u64,
    events_bytes: u64,
    /// The hand source of the run (`FileOutput::hands`).
    #[serde(default)]
    hands: String,
    checkpoint: Checkpoint,
}

/// A killed run to continue: what to replay, the bytes of `decisions.jsonl.part` and
/// `events.jsonl.part` it had flushed, and its hand source.
type SavedRun = (Resume, (u64, u64), String);

/// The saved state of a killed run in `out_dir`, if there is one to continue.
fn load_resume(out_dir: &Path) -> Result<Option<SavedRun>> {
    let cp_path = out_dir.join(CHECKPOINT_FILE);
    let events_part = part(&out_dir.join("events.jsonl"));
    if !cp_path.is_file()
        || !events_part.is_file()
        || !part(&out_dir.join("decisions.jsonl")).is_file()
    {
        return Ok(None);
    }
    let saved: SavedCheckpoint = serde_json::from_slice(
        &std::fs::read(&cp_path).with_context(|| format!("reading {}", cp_path.display()))?,
    )
    .map_err(|e| {
        InputError::new(
            &cp_path.display().to_string(),
            "file",
            format!("not a checkpoint: {e}"),
        )
    })?;
    let bytes = std::fs::read(&events_part)
        .with_context(|| format!("reading {}", events_part.display()))?;
    let keep = (saved.events_bytes as usize).min(bytes.len());
    let text = String::from_utf8_lossy(&bytes[..keep]);
    let replay = rules::parse::parse_events(&events_part.display().to_string(), &text)?;
    let sizes = (saved.decisions_bytes, saved.events_bytes);
    Ok(Some((
        Resume {
            checkpoint: saved.checkpoint,
            replay,
        },
        sizes,
        saved.hands,
    )))
}

fn write_pretty<T: serde::Serialize>(path: &Path, v: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(v).context("encoding JSON")?;
    std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
}

/// `analyze DIR [--out OUT] [--resume]`.
pub fn analyze(
    dir: &Path,
    out_dir: Option<&Path>,
    resume: bool,
    hands: &HandsChoice,
    report: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let started = std::time::Instant::now();
    let p = prepare(dir)?;
    let out_dir = out_dir.map_or_else(|| dir.join("analysis"), Path::to_path_buf);
    std::fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let saved = if resume { load_resume(&out_dir)? } else { None };
    if saved.is_none() {
        let _ = std::fs::remove_file(out_dir.join(CHECKPOINT_FILE));
    }
    // A stale complete file must not stand beside a new run's partial one.
    for name in ["decisions.jsonl", "events.jsonl"] {
        let _ = std::fs::remove_file(out_dir.join(name));
    }
    write_pretty(&out_dir.join("layout.json"), &p.measured.layout)?;
    let (source, hands_note) = hand_source(hands, dir, p.reader.fps, &p.map, &p.measured.layout)?;
    let frames = p.reader.table_len().unwrap_or(p.reader.frame_count) as u64;
    let (resume_from, sizes) = match saved {
        Some((_, _, was)) if !was.is_empty() && was != hands_note => {
            return Err(InputError::new(
                &out_dir.join(CHECKPOINT_FILE).display().to_string(),
                "hands",
                format!(
                    "the run was made with hands from {was}, not {hands_note}: resume it with the same hand source, or start afresh without --resume"
                ),
            )
            .into());
        }
        Some((r, _, _)) if frames > 0 && r.checkpoint.frame as u64 >= frames => {
            return Err(InputError::new(
                &out_dir.join(CHECKPOINT_FILE).display().to_string(),
                "frame",
                format!(
                    "frame {} lies past the video's end ({frames} frames): not this recording's checkpoint",
                    r.checkpoint.frame
                ),
            )
            .into());
        }
        Some((r, s, _)) => (Some(r), Some(s)),
        None => (None, None),
    };
    let checkpoint_path = out_dir.join(CHECKPOINT_FILE).display().to_string();
    let mut sink = FileOutput::create(&out_dir, frames, sizes, None)?;
    sink.hands = hands_note.clone();
    let namer = crate::detect::naming::Namer::new().map_err(detect_error)?;
    let before_frames_s = started.elapsed().as_secs_f64();
    let p_layout_wall_s = p.layout_wall_s;
    let summary = judge::run(
        judge::Refereed {
            reader: p.reader,
            measured: &p.measured,
            map: p.map,
            readings: p.readings,
        },
        source,
        Some(namer),
        &RunOptions {
            unsure_poems: p.unsure_poems,
            named_by_reading: p.named_by_reading,
            ..RunOptions::default()
        },
        resume_from,
        &mut sink,
    )
    .map_err(|e| match e {
        JudgeError::Checkpoint(problem) => {
            InputError::new(&checkpoint_path, "checkpoint", problem).into()
        }
        e => judge_error(e),
    })?;
    sink.complete()?;
    let report_wall_s = if report {
        let t = std::time::Instant::now();
        let labels = dir.join("labels").join("frames.jsonl");
        let args = crate::cli::report::ReportArgs {
            dir: dir.to_path_buf(),
            out: out_dir.clone(),
            decisions: Some(out_dir.join("decisions.jsonl")),
            events: Some(out_dir.join("events.jsonl")),
            layout: Some(out_dir.join("layout.json")),
            readings: None,
            calibration: None,
            hands: matches!(hands, HandsChoice::Labels).then_some(labels),
            video: None,
            no_video: false,
            annotate: false,
        };
        crate::cli::report::report(&args, &mut std::io::sink())?;
        Some(round3(t.elapsed().as_secs_f64()))
    } else {
        None
    };
    writeln!(
        out,
        "{}",
        serde_json::json!({
            "report_wall_s": report_wall_s,
            "layout_wall_s": round3(p_layout_wall_s),
            "before_first_frame_wall_s": round3(before_frames_s),
            "frames": summary.frames,
            "video_s": round3(summary.video_s),
            "wall_s": round3(summary.wall_s),
            "real_time_factor": round3(summary.wall_s / summary.video_s.max(1e-9)),
            "hands_cpu_s": round3(summary.hands_cpu_s),
            "cards_and_judge_cpu_s": round3(summary.judge_cpu_s),
            "peak_memory_mb": peak_memory_mb(),
            "rulings": summary.rulings,
            "dropped_or_repeated": summary.unseen_gaps,
            "hands": hands_note,
            "out": out_dir.display().to_string(),
        })
    )?;
    Ok(())
}

/// The process's peak resident memory so far, MB (Linux `VmHWM`; null elsewhere).
fn peak_memory_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some((kb / 1024.0 * 10.0).round() / 10.0)
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

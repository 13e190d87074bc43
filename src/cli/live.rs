//! `live --video FILE [--realtime]` and `live --camera N`: the referee from video as the
//! frames come. Measures the layout from the first seconds, reads the reader's timeline
//! as its lines are appended, runs `judge::run` and prints each ruling as it is made
//! (docs/analyze.md, "live").

use crate::capture::VideoReader;
use crate::cli::analyze::{hand_source, judge_error, HandsChoice};
use crate::cli::layout::{detect_error, load_calibration};
use crate::cli::write_json_line;
use crate::detect::layout::measure_layout;
use crate::field::{FieldMap, Intrinsics};
use crate::judge::{self, JudgeError, Output, Ruled, RunOptions};
use crate::rules::{self, InputError, MatchResult, Ruling};
use anyhow::{Context, Result};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `live` as the command line gives it.
#[derive(Debug, Clone)]
pub struct LiveArgs {
    pub video: Option<PathBuf>,
    pub camera: Option<i32>,
    pub realtime: bool,
    pub readings: Option<String>,
    pub calibration: Option<PathBuf>,
    /// A `layout.json` whose `players` block declares the lead hands.
    pub layout: Option<PathBuf>,
    pub hands: HandsChoice,
    /// Where to write each frame's stage times (CSV).
    pub stage_times: Option<PathBuf>,
}

/// Seconds of camera video recorded to measure the layout before refereeing starts.
pub const LIVE_LAYOUT_S: f64 = 3.0;

/// Reads the reader's timeline as lines are appended (a file, or stdin for `-`) and
/// sends every reading once its line is complete; the whole text so far is checked as
/// `readings.jsonl` is, so a bad line stops the match with its line number.
fn spawn_readings(src: String) -> crossbeam_channel::Receiver<judge::ReadingMsg> {
    let (tx, rx) = crossbeam_channel::unbounded();
    std::thread::spawn(move || {
        let mut input: Box<dyn std::io::BufRead> = if src == "-" {
            Box::new(std::io::BufReader::new(std::io::stdin()))
        } else {
            match File::open(&src) {
                Ok(f) => Box::new(std::io::BufReader::new(f)),
                Err(e) => {
                    let _ = tx.send(judge::ReadingMsg::Bad {
                        path: PathBuf::from(&src),
                        place: "file".into(),
                        problem: format!("cannot be read: {e}"),
                    });
                    return;
                }
            }
        };
        let mut text = String::new();
        let mut sent = 0usize;
        let mut line = String::new();
        loop {
            match input.read_line(&mut line) {
                Ok(0) => {
                    if src == "-" {
                        return;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    continue;
                }
                Ok(_) if !line.ends_with('\n') => continue,
                Ok(_) => {}
                Err(_) => return,
            }
            text.push_str(&line);
            line.clear();
            match rules::parse::parse_readings(&src, &text) {
                Ok(all) => {
                    for r in all.into_iter().skip(sent) {
                        sent += 1;
                        if tx.send(judge::ReadingMsg::Reading(r)).is_err() {
                            return;
                        }
                    }
                }
                Err(e) => {
                    let _ = tx.send(judge::ReadingMsg::Bad {
                        path: PathBuf::from(&src),
                        place: e.place.clone(),
                        problem: e.problem.clone(),
                    });
                    return;
                }
            }
        }
    });
    rx
}

/// Prints each ruling as it is made.
struct PrintOutput<'a> {
    out: &'a mut dyn Write,
    /// How long after its deciding event each early take was called, s (realtime).
    delays_s: Vec<f64>,
    /// Each frame's stage times, when asked for.
    times: Option<std::io::BufWriter<File>>,
}

impl Output for PrintOutput<'_> {
    fn ruled(&mut self, r: &Ruled, _frame: usize) -> Result<(), JudgeError> {
        write_json_line(self.out, &r.ruling)?;
        Ok(())
    }
    fn early(&mut self, r: &Ruling, at_s: f64, delay_s: Option<f64>) -> Result<(), JudgeError> {
        let mut v = serde_json::to_value(r).map_err(std::io::Error::other)?;
        v["provisional"] = serde_json::Value::Bool(true);
        write_json_line(self.out, &v)?;
        if let (Some(d), Some(take)) = (delay_s, r.take.as_ref()) {
            self.delays_s.push(d);
            // The delay in two parts: the recording's time perception took to make the
            // events final, and how far the pipeline ran behind the frames' release.
            let seen = at_s - take.t_s;
            eprintln!(
                "live: reading {}: take called {:.0} ms after its deciding event ({:.0} ms of video to see it, {:.0} ms behind the frames)",
                r.seq,
                d * 1000.0,
                seen * 1000.0,
                (d - seen) * 1000.0
            );
        }
        Ok(())
    }
    fn timed(&mut self, t: &judge::StageTimes) {
        if let Some(w) = self.times.as_mut() {
            let _ = writeln!(
                w,
                "{},{:.6},{},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2}",
                t.frame,
                t.t_s,
                t.waiting,
                t.hands_start_ms,
                t.hands_end_ms,
                t.hands_cpu_ms,
                t.judge_start_ms,
                t.tracker_end_ms,
                t.judge_end_ms
            );
        }
    }
    fn finished(&mut self, result: &MatchResult) -> Result<(), JudgeError> {
        write_json_line(self.out, result)?;
        if let Some(w) = self.times.as_mut() {
            w.flush()?;
        }
        if !self.delays_s.is_empty() {
            let mut d = self.delays_s.clone();
            d.sort_by(f64::total_cmp);
            let at = |q: f64| d[((d.len() - 1) as f64 * q).round() as usize] * 1000.0;
            eprintln!(
                "live: {} takes called early, delay after the deciding event: median {:.0} ms, p95 {:.0} ms, max {:.0} ms",
                d.len(),
                at(0.5),
                at(0.95),
                at(1.0)
            );
        }
        Ok(())
    }
}

/// Records the first seconds of a camera to a file the layout is measured from.
fn record_camera(index: i32, path: &Path) -> Result<()> {
    use opencv::prelude::*;
    use opencv::videoio;
    let mut r = VideoReader::open_camera(index).map_err(|e| judge_error(e.into()))?;
    let mut writer: Option<videoio::VideoWriter> = None;
    let mut t = 0.0;
    while t < LIVE_LAYOUT_S {
        let Some(f) = r.next_frame().map_err(|e| judge_error(e.into()))? else {
            break;
        };
        t = f.t_s;
        if writer.is_none() {
            let size = f.bgr.size()?;
            let w = videoio::VideoWriter::new_with_backend(
                path,
                videoio::CAP_FFMPEG,
                videoio::VideoWriter::fourcc('M', 'J', 'P', 'G')?,
                r.fps,
                size,
                true,
            )?;
            writer = Some(w);
        }
        if let Some(w) = writer.as_mut() {
            w.write(&*f.bgr)?;
        }
    }
    Ok(())
}

/// `live --video FILE [--realtime] [--readings FILE|-]` or `live --camera N`.
pub fn live(args: &LiveArgs, out: &mut dyn Write) -> Result<()> {
    let intrinsics = match &args.calibration {
        Some(p) => load_calibration(p)?.map(|c| Intrinsics::from_calibration(&c)),
        None => None,
    };
    let (reader, layout_video, _tmp) = match (&args.video, args.camera) {
        (Some(v), _) => (
            VideoReader::open(v).map_err(|e| judge_error(e.into()))?,
            v.clone(),
            None,
        ),
        (None, Some(n)) => {
            let dir = tempdir_for("karuta-live")?;
            let file = dir.join("layout.avi");
            record_camera(n, &file)?;
            (
                VideoReader::open_camera(n).map_err(|e| judge_error(e.into()))?,
                file,
                Some(dir),
            )
        }
        (None, None) => {
            return Err(
                InputError::new("live", "arguments", "give --video FILE or --camera N").into(),
            )
        }
    };
    let players = match &args.layout {
        Some(p) => crate::cli::analyze::declared_players(p)?,
        None => Default::default(),
    };
    let mut measured =
        measure_layout(&layout_video, None, intrinsics.as_ref()).map_err(detect_error)?;
    measured.note_candidates();
    measured.layout.players = players;
    let map = FieldMap::new(
        measured.image_to_field,
        intrinsics,
        measured.layout.field.clone(),
        measured.image_size,
    )
    .map_err(|e| InputError::new(&layout_video.display().to_string(), "layout", e.to_string()))?;
    let (source, _) = hand_source(
        &args.hands,
        Path::new("."),
        reader.fps,
        &map,
        &measured.layout,
    )?;
    let opts = RunOptions {
        // A camera delivers at its own pace, as `--realtime` does a file.
        realtime: args.realtime || args.camera.is_some(),
        more_readings: args.readings.clone().map(spawn_readings),
        early_takes: true,
        stage_times: args.stage_times.is_some(),
        queue_frames: judge::LIVE_QUEUE_FRAMES,
        capture_queue_frames: Some(judge::LIVE_CAPTURE_QUEUE_FRAMES),
        ..RunOptions::default()
    };
    let times = match &args.stage_times {
        Some(p) => {
            let mut w = std::io::BufWriter::new(
                File::create(p).with_context(|| format!("creating {}", p.display()))?,
            );
            writeln!(
                w,
                "frame,t_s,waiting,hands_start_ms,hands_end_ms,hands_cpu_ms,judge_start_ms,tracker_end_ms,judge_end_ms"
            )?;
            Some(w)
        }
        None => None,
    };
    let mut sink = PrintOutput {
        out,
        delays_s: Vec::new(),
        times,
    };
    let namer = crate::detect::naming::Namer::new().map_err(detect_error)?;
    judge::run(
        judge::Refereed {
            reader,
            measured: &measured,
            map,
            readings: Vec::new(),
        },
        source,
        Some(namer),
        &opts,
        None,
        &mut sink,
    )
    .map_err(judge_error)?;
    Ok(())
}

/// A fresh directory under the system's temporary folder.
fn tempdir_for(prefix: &str) -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("{prefix}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

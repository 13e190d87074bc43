//! `perceive DIR [--out OUT]`: the hands of a recording, frame by frame, and the events
//! they make (`touch`, `enter`, `leave`); and `score-hands`, which compares them with a
//! simulated recording's labels and truth.
//!
//! Reads `DIR/video.*`, `DIR/calibration.json` and `DIR/layout.json` (measured from the
//! video, as `layout` does, when the directory has none) and the model file. Writes
//! `OUT/events.jsonl` and `OUT/hands.jsonl` (docs/contract.md).

use crate::cli::read_text;
use crate::detect::video::{find_video, Video};
use crate::field::{Calibration, FieldMap};
use crate::hands::contact::ContactModel;
use crate::hands::score::{score, LabelFrame};
use crate::hands::{HandFrame, HandModel, HandsError, HandsRecord, PerceiveOptions, Perceiver};
use crate::rules::model::CardRef;
use crate::rules::{self, InputError};
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::Path;

/// A hands-stage error as the one line an official reads; a bad model file exits with 2.
pub fn hands_error(e: HandsError) -> anyhow::Error {
    match e {
        HandsError::Model { path, problem } => {
            InputError::new(&path.display().to_string(), "model", problem).into()
        }
        other => anyhow::Error::new(other),
    }
}

fn video_error(e: crate::detect::DetectError) -> anyhow::Error {
    match e {
        crate::detect::DetectError::Video { path, problem } => {
            InputError::new(&path.display().to_string(), "video", problem).into()
        }
        other => anyhow::Error::new(other),
    }
}

/// What `perceive` did, for its closing line and the benchmark.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PerceiveSummary {
    pub frames: usize,
    pub inferences: usize,
    /// Of `inferences`, those the search for where a change lies made.
    pub refine_runs: usize,
    pub events: usize,
    pub wall_s: f64,
    pub infer_ms_per_frame: f64,
    /// Fingertips the contact networks looked at, and their time a frame (crops cut
    /// included).
    pub contact_runs: usize,
    pub contact_ms_per_frame: f64,
    pub cpu_ms_per_frame: f64,
    /// Touches the onset network was run over, and those it saw the finger land for
    /// (the share that lets it drop a touch it saw no finger land for).
    pub onset_tried: usize,
    pub onset_landed: usize,
}

/// The layout and calibration of a recording: its own files, or measured from the video.
fn layout_and_calibration(dir: &Path, out_dir: &Path) -> Result<(rules::Layout, Calibration)> {
    let layout_path = dir.join("layout.json");
    let cal_path = dir.join("calibration.json");
    let has_h = cal_path.is_file()
        && serde_json::from_str::<serde_json::Value>(&read_text(&cal_path)?)
            .ok()
            .is_some_and(|v| v.get("image_to_field").is_some());
    let (layout_path, cal_path) = if layout_path.is_file() && has_h {
        (layout_path, cal_path)
    } else {
        let mut sink = std::io::sink();
        crate::cli::layout::layout(dir, Some(out_dir), &mut sink)?;
        (
            out_dir.join("layout.json"),
            out_dir.join("calibration.json"),
        )
    };
    let layout = crate::cli::load_layout(&layout_path)?;
    let text = read_text(&cal_path)?;
    let cal: Calibration = serde_json::from_str(&text).map_err(|e| {
        InputError::new(
            &cal_path.display().to_string(),
            format!("line {}", e.line()),
            format!("not a calibration: {e}"),
        )
    })?;
    Ok((layout, cal))
}

fn cpu_s() -> f64 {
    // utime + stime of this process, from /proc (Linux); 0 elsewhere.
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// Runs the hand model over the whole recording.
pub fn perceive(
    dir: &Path,
    out_dir: Option<&Path>,
    model: &Path,
    opts: &PerceiveOptions,
    out: &mut dyn Write,
) -> Result<PerceiveSummary> {
    crate::capture::init_process();
    let out_dir = out_dir.unwrap_or(dir);
    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    // The model first: a bad model file is reported before any video is read.
    let net = HandModel::load(model, opts.backend, opts.threads).map_err(hands_error)?;
    let contact = ContactModel::beside(model, opts.backend).map_err(hands_error)?;
    let video_path = find_video(dir).map_err(video_error)?;
    let (layout, cal) = layout_and_calibration(dir, out_dir)?;
    let map = FieldMap::from_calibration(&cal, layout.field.clone())
        .map_err(|e| hands_error(e.into()))?;
    let mut perceiver = Perceiver::from_parts(net, contact, map, &layout, opts);
    let mut video = Video::open(&video_path).map_err(video_error)?;
    let total = video.frame_count();

    let mut record = HandsRecord::create(out_dir).with_context(|| {
        format!(
            "creating hands.jsonl and events.jsonl in {}",
            out_dir.display()
        )
    })?;
    let writing = || {
        format!(
            "writing hands.jsonl and events.jsonl in {}",
            out_dir.display()
        )
    };
    let bar = if std::io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new(total as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} frames {per_sec} {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(b)
    } else {
        None
    };

    let t0 = std::time::Instant::now();
    let c0 = cpu_s();
    // Decoding runs on its own thread, a few frames ahead.
    let (tx, rx) = crossbeam_channel::bounded(8);
    let reader = std::thread::spawn(move || -> Result<(), crate::detect::DetectError> {
        while let Some(f) = video.next_frame()? {
            if tx.send(f).is_err() {
                break;
            }
        }
        Ok(())
    });
    let mut n_events = 0usize;
    for f in rx.iter() {
        let p = perceiver
            .push(f.index, f.t_s, &f.bgr)
            .map_err(hands_error)?;
        record.write(&p.frames, &p.events).with_context(writing)?;
        n_events += p.events.len();
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    let last = perceiver.finish();
    record.write(&[], &last).with_context(writing)?;
    n_events += last.len();
    reader
        .join()
        .map_err(|_| anyhow::anyhow!("the video reader stopped"))?
        .map_err(video_error)?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let wall_s = t0.elapsed().as_secs_f64();
    let st = &perceiver.stats;
    let s = PerceiveSummary {
        frames: st.frames,
        inferences: st.inferences,
        refine_runs: st.refine_runs,
        events: n_events,
        wall_s,
        infer_ms_per_frame: st.infer_s * 1000.0 / st.frames.max(1) as f64,
        contact_runs: st.contact_runs,
        contact_ms_per_frame: st.contact_s * 1000.0 / st.frames.max(1) as f64,
        cpu_ms_per_frame: (cpu_s() - c0) * 1000.0 / st.frames.max(1) as f64,
        onset_tried: st.onset_tried,
        onset_landed: st.onset_landed,
    };
    writeln!(out, "{}", serde_json::to_string(&s)?)?;
    Ok(s)
}

fn read_jsonl<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let text = read_text(path)?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| {
                InputError::new(
                    &path.display().to_string(),
                    format!("line {}", i + 1),
                    format!("{e}"),
                )
                .into()
            })
        })
        .collect()
}

/// `score-hands --truth DIR --out OUT`: OUT's hands and events against DIR's labels and
/// truth, as one JSON object.
pub fn score_hands(truth_dir: &Path, out_dir: &Path, out: &mut dyn Write) -> Result<()> {
    let labels: BTreeMap<usize, LabelFrame> =
        read_jsonl::<LabelFrame>(&truth_dir.join("labels").join("frames.jsonl"))?
            .into_iter()
            .map(|f| (f.frame, f))
            .collect();
    let ours: Vec<HandFrame> = read_jsonl::<serde_json::Value>(&out_dir.join("hands.jsonl"))?
        .into_iter()
        .filter_map(|v| hand_frame_from_json(&v))
        .collect();
    let truth = crate::cli::load_events(&truth_dir.join("truth.jsonl"))?;
    let events = crate::cli::load_events(&out_dir.join("events.jsonl"))?;
    let cal: Calibration = serde_json::from_str(&read_text(&truth_dir.join("calibration.json"))?)
        .context("calibration.json")?;
    let scene: serde_json::Value =
        serde_json::from_str(&read_text(&truth_dir.join("labels").join("scene.json"))?)
            .context("scene.json")?;
    let fps = scene.get("fps").and_then(|v| v.as_f64()).unwrap_or(240.0);
    let s = score(&labels, &ours, &truth, &events, cal.image_size, fps).map_err(hands_error)?;
    writeln!(out, "{}", serde_json::to_string_pretty(&s)?)?;
    Ok(())
}

/// hands.jsonl lines back into frames (the fields scored).
fn hand_frame_from_json(v: &serde_json::Value) -> Option<HandFrame> {
    use crate::hands::HandObs;
    let hands = v.get("hands")?.as_array()?;
    let pts = |v: Option<&serde_json::Value>| -> Vec<[f64; 2]> {
        v.and_then(|a| serde_json::from_value(a.clone()).ok())
            .unwrap_or_default()
    };
    Some(HandFrame {
        frame: v.get("frame")?.as_u64()? as usize,
        t_s: v.get("t_s")?.as_f64()?,
        hands: hands
            .iter()
            .filter_map(|h| {
                Some(HandObs {
                    player: serde_json::from_value(h.get("player")?.clone()).ok()?,
                    hand: serde_json::from_value(h.get("hand")?.clone()).ok()?,
                    lead: h.get("lead").and_then(|l| l.as_bool()),
                    fingertips_px: pts(h.get("fingertips_px")),
                    outline_px: pts(h.get("outline_px")),
                    reach_outline_px: Vec::new(),
                    body_outline_px: Vec::new(),
                    inside: h.get("inside")?.as_bool()?,
                    reach_mm: h.get("reach_mm").and_then(|v| v.as_f64()).unwrap_or(0.0),
                    contact_p: h.get("contact_p").and_then(|v| v.as_f64()).unwrap_or(0.0),
                    contact_px: h
                        .get("contact_px")
                        .and_then(|v| serde_json::from_value(v.clone()).ok()),
                    contact: h
                        .get("contact")
                        .and_then(|v| v.as_u64())
                        .map(|p| CardRef::Poem(p as u8)),
                    conf: h.get("conf").and_then(|v| v.as_f64()).unwrap_or(1.0),
                    hand_votes: [0; 2],
                })
            })
            .collect(),
    })
}

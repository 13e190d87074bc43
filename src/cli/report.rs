//! `report --dir RECORDING --out OUT`: the review page of a recording from rulings that
//! already exist (the simulator's truth, or `adjudicate`'s output), until `analyze` writes
//! it itself. Reads the files, calls `report::write_report`, prints where the page is.

use crate::cli::{load_events, load_layout, load_readings, read_text};
use crate::field::Calibration;
use crate::report::{self, ReportError, ReportInput};
use crate::rules::InputError;
use anyhow::Result;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The command's options; every file defaults to the recording's own.
pub struct ReportArgs {
    pub dir: PathBuf,
    pub out: PathBuf,
    pub decisions: Option<PathBuf>,
    pub events: Option<PathBuf>,
    pub layout: Option<PathBuf>,
    pub readings: Option<PathBuf>,
    pub calibration: Option<PathBuf>,
    pub hands: Option<PathBuf>,
    pub video: Option<PathBuf>,
    pub no_video: bool,
    pub annotate: bool,
}

/// A report error as the one line an official reads; input faults exit with 2.
pub fn report_error(e: ReportError) -> anyhow::Error {
    match e {
        ReportError::Input(i) => i.into(),
        ReportError::Video { path, problem } => {
            InputError::new(&path.display().to_string(), "video", problem).into()
        }
        ReportError::Calibration(problem) => {
            InputError::new("calibration.json", "image_to_field", problem).into()
        }
        other => anyhow::Error::new(other),
    }
}

fn load_calibration(path: &Path) -> Result<Calibration> {
    let text = read_text(path)?;
    serde_json::from_str(&text).map_err(|e| {
        InputError::new(
            &path.display().to_string(),
            format!("line {}", e.line()),
            format!("not a calibration: {e}"),
        )
        .into()
    })
}

pub fn report(a: &ReportArgs, out: &mut dyn Write) -> Result<()> {
    if !a.dir.is_dir() {
        return Err(InputError::new(&a.dir.display().to_string(), "directory", "not found").into());
    }
    let pick =
        |given: &Option<PathBuf>, name: &str| given.clone().unwrap_or_else(|| a.dir.join(name));
    let layout = load_layout(&pick(&a.layout, "layout.json"))?;
    let readings = load_readings(&pick(&a.readings, "readings.jsonl"))?;
    let events = load_events(&pick(&a.events, "truth.jsonl"))?;
    let dpath = pick(&a.decisions, "truth_decisions.jsonl");
    let (rulings, result) =
        report::parse_decisions(&dpath.display().to_string(), &read_text(&dpath)?)?;
    let calibration = match &a.calibration {
        Some(c) => Some(load_calibration(c)?),
        None => {
            let c = a.dir.join("calibration.json");
            if c.is_file() {
                Some(load_calibration(&c)?)
            } else {
                None
            }
        }
    };
    let hands = match &a.hands {
        Some(h) => Some(h.clone()),
        None => Some(a.dir.join("labels").join("frames.jsonl")).filter(|p| p.is_file()),
    };
    let video = if a.no_video {
        None
    } else {
        match &a.video {
            Some(v) => Some(v.clone()),
            None => Some(crate::detect::video::find_video(&a.dir).map_err(|e| {
                InputError::new(&a.dir.display().to_string(), "video", e.to_string())
            })?),
        }
    };
    let title = a
        .dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| a.dir.display().to_string());
    let input = ReportInput {
        title,
        layout,
        readings,
        events,
        rulings,
        result,
        video,
        calibration,
        hands,
        annotate: a.annotate,
    };
    let paths = report::write_report(&a.out, &input).map_err(report_error)?;
    writeln!(out, "page: {}", paths.html.display())?;
    writeln!(out, "review data: {}", paths.review_json.display())?;
    writeln!(
        out,
        "evidence: {} rulings, {} clip frames",
        paths.evidence.len(),
        paths.evidence.iter().map(|e| e.clip.len()).sum::<usize>()
    )?;
    if let Some(v) = &paths.annotated {
        writeln!(out, "annotated video: {}", v.display())?;
    }
    writeln!(
        out,
        "time: {}",
        paths
            .timings_s
            .iter()
            .map(|(k, t)| format!("{k} {t:.2} s"))
            .collect::<Vec<_>>()
            .join(", ")
    )?;
    Ok(())
}

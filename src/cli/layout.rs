//! `layout DIR [--out OUT]`: the card layout measured from the video alone.
//!
//! Reads `DIR/video.*`, and when present the intrinsics of `DIR/calibration.json` and the
//! readings' times from `DIR/readings.jsonl`; never `layout.json` or truth files.
//! Writes `OUT/layout.json` and `OUT/calibration.json` (its `image_to_field` measured
//! here) and prints the layout check.

use crate::cli::read_text;
use crate::detect::layout::{measure_layout_readings, MeasuredLayout};
use crate::detect::video::find_video;
use crate::detect::DetectError;
use crate::field::{self, Calibration, Intrinsics};
use crate::rules::model::FieldSize;
use crate::rules::{self, InputError};
use crate::util::matrix_to_rows;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

/// A detection error as the one line an official reads; input faults exit with 2.
pub(crate) fn detect_error(e: DetectError) -> anyhow::Error {
    match e {
        DetectError::Video { path, problem } => {
            InputError::new(&path.display().to_string(), "video", problem).into()
        }
        DetectError::NoField {
            path,
            frame,
            problem,
        } => InputError::new(
            &path.display().to_string(),
            format!("frame {frame}"),
            format!("no field in view: {problem}"),
        )
        .into(),
        DetectError::Registration { path, problem } => InputError::new(
            &path.display().to_string(),
            "layout",
            format!("the cards found do not form a field: {problem}"),
        )
        .into(),
        other => anyhow::Error::new(other),
    }
}

/// The part of `calibration.json` read here: the lens, with or without a homography.
#[derive(serde::Deserialize)]
struct LensFile {
    image_size: [u32; 2],
    camera_matrix: [[f64; 3]; 3],
    #[serde(default)]
    dist_coeffs: Vec<f64>,
    #[serde(default)]
    reprojection_error_px: Option<f64>,
}

pub(crate) fn load_calibration(path: &Path) -> Result<Option<Calibration>> {
    if !path.is_file() {
        return Ok(None);
    }
    let text = read_text(path)?;
    serde_json::from_str::<LensFile>(&text)
        .map(|l| {
            Some(Calibration {
                image_size: l.image_size,
                camera_matrix: l.camera_matrix,
                dist_coeffs: l.dist_coeffs,
                image_to_field: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
                reprojection_error_px: l.reprojection_error_px,
            })
        })
        .map_err(|e| {
            InputError::new(
                &path.display().to_string(),
                format!("line {}", e.line()),
                format!("not a calibration: {e}"),
            )
            .into()
        })
}

fn reading_starts_s(path: &Path) -> Result<Vec<f64>> {
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let readings = rules::parse::parse_readings(&path.display().to_string(), &read_text(path)?)?;
    Ok(readings.iter().map(|r| r.kami_start_s).collect())
}

fn write_pretty<T: serde::Serialize>(path: &Path, v: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(v).context("encoding JSON")?;
    std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
}

/// Measures the layout of the recording in `dir`, writes it to `out_dir` (default `dir`).
pub fn layout(dir: &Path, out_dir: Option<&Path>, out: &mut dyn Write) -> Result<()> {
    // FFmpeg's own log would add lines of its own to the one-line error on a bad file.
    crate::capture::init_process();
    let video = find_video(dir).map_err(detect_error)?;
    let cal = load_calibration(&dir.join("calibration.json"))?;
    let intrinsics = cal.as_ref().map(Intrinsics::from_calibration);
    let starts_s = reading_starts_s(&dir.join("readings.jsonl"))?;
    let mut m =
        measure_layout_readings(&video, &starts_s, intrinsics.as_ref()).map_err(detect_error)?;
    m.note_candidates();
    report(&m, out)?;

    let out_dir = out_dir.unwrap_or(dir);
    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    write_pretty(&out_dir.join("layout.json"), &m.layout)?;
    let calibration = Calibration {
        image_size: m.image_size,
        // Without intrinsics the layout was measured on the pixels as decoded: the
        // identity distortion-free camera stands for "no lens model".
        camera_matrix: cal
            .as_ref()
            .map_or([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], |c| {
                c.camera_matrix
            }),
        dist_coeffs: cal.as_ref().map_or(vec![0.0; 5], |c| c.dist_coeffs.clone()),
        image_to_field: matrix_to_rows(&m.image_to_field),
        reprojection_error_px: cal.as_ref().and_then(|c| c.reprojection_error_px),
    };
    write_pretty(&out_dir.join("calibration.json"), &calibration)?;
    writeln!(
        out,
        "wrote {} and {}",
        out_dir.join("layout.json").display(),
        out_dir.join("calibration.json").display()
    )?;
    Ok(())
}

/// The cards found, their names and the layout check, for officials.
fn report(m: &MeasuredLayout, out: &mut dyn Write) -> Result<()> {
    let named = m.layout.cards.iter().filter(|c| c.poem.is_some()).count();
    writeln!(
        out,
        "layout from frames {}..{} ({} averaged, t = {:.2} s): {} cards, {} named, {} left out",
        m.still.first_frame,
        m.still.first_frame + m.still.frames_averaged,
        m.still.frames_averaged,
        m.still.t_s,
        m.layout.cards.len(),
        named,
        m.rejected
    )?;
    for (first, n) in &m.more_stills {
        writeln!(
            out,
            "names also from frames {first}..{} ({n} averaged, a still stretch after a reading)",
            first + n
        )?;
    }
    for c in m.cards.iter().filter(|c| c.placement.poem.is_none()) {
        writeln!(
            out,
            "unnamed: {} row {} at x {:.0} mm (best {} {:.2}, runner-up {})",
            c.placement.owner,
            c.placement.row,
            c.placement.x_mm,
            c.name.best_poem,
            c.name.score,
            c.name
                .runner_up
                .map_or("-".to_string(), |(p, s)| format!("{p} {s:.2}"))
        )?;
    }
    let check = field::check_layout(&m.layout, &FieldSize::default());
    crate::cli::field::write_layout_check(&check, out)?;
    Ok(())
}

//! The field commands: `calibrate` (ChArUco intrinsics, the printable board) and `register`
//! (the field frame from corner markers or card quads). File access and messages only; the
//! work is in `crate::field`.

use crate::cli::{capture_error, read_text};
use crate::field::charuco::{self, Board, BoardSpec, MAX_VIDEO_VIEWS};
use crate::field::{self, Calibration, CardQuad, FieldError, Intrinsics, Registration};
use crate::rules::model::FieldSize;
use crate::rules::InputError;
use crate::util::matrix_to_rows;
use anyhow::{Context, Result};
use opencv::core::{Mat, Vector};
use opencv::imgcodecs;
use opencv::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Millimetres per inch, for print sizes.
const MM_PER_INCH: f64 = 25.4;
/// White border around the printed board, mm (ArUco needs a quiet zone).
const BOARD_MARGIN_MM: f64 = 10.0;
/// Image files `--images` reads.
const IMAGE_EXTENSIONS: [&str; 6] = ["png", "jpg", "jpeg", "bmp", "tif", "tiff"];

/// A field error as one line: bad input names its file and place, exit status 2.
fn field_error(e: FieldError, source: &Path, place: &str) -> anyhow::Error {
    if e.is_bad_input() {
        InputError::new(&source.display().to_string(), place, e.to_string()).into()
    } else {
        anyhow::Error::new(e).context(format!("{}: {place}", source.display()))
    }
}

fn load_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text = read_text(path)?;
    serde_json::from_str(&text).map_err(|e| {
        InputError::new(
            &path.display().to_string(),
            format!("line {} column {}", e.line(), e.column()),
            format!("not valid: {e}"),
        )
        .into()
    })
}

fn load_board(path: &Path) -> Result<Board> {
    let spec: BoardSpec = load_json(path)?;
    Board::new(&spec).map_err(|e| field_error(e, path, "board"))
}

/// Where `calibrate` takes its board views from.
pub enum Views<'a> {
    Video(&'a Path),
    Images(&'a Path),
}

/// `calibrate --board B --draw-board PNG [--dpi D]`: the printable board image.
pub fn draw_board(board: &Path, png: &Path, dpi: f64, out: &mut dyn Write) -> Result<()> {
    let mut b = load_board(board)?;
    if !(dpi > 0.0 && dpi.is_finite()) {
        return Err(
            InputError::new("--dpi", "value", format!("{dpi} is not a positive number")).into(),
        );
    }
    let px_per_mm = dpi / MM_PER_INCH;
    let px_per_square = (b.spec.square_mm * px_per_mm).round() as i32;
    let margin = (BOARD_MARGIN_MM * px_per_mm).round() as i32;
    let img = b
        .draw(px_per_square, margin)
        .map_err(|e| field_error(e, board, "board"))?;
    let ok = imgcodecs::imwrite(png.display().to_string().as_str(), &img, &Vector::new())
        .with_context(|| format!("writing {}", png.display()))?;
    if !ok {
        anyhow::bail!("{}: could not be written", png.display());
    }
    writeln!(
        out,
        "wrote {}: {}x{} px; print at {dpi} dpi (100%, no scaling): squares {:.2} mm, board {:.1} x {:.1} mm; measure a square on the print and put it in square_mm",
        png.display(),
        img.cols(),
        img.rows(),
        px_per_square as f64 / px_per_mm,
        img.cols() as f64 / px_per_mm,
        img.rows() as f64 / px_per_mm,
    )?;
    Ok(())
}

fn image_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        InputError::new(
            &dir.display().to_string(),
            "folder",
            format!("cannot be read: {e}"),
        )
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .and_then(|x| x.to_str())
                .is_some_and(|x| IMAGE_EXTENSIONS.contains(&x.to_ascii_lowercase().as_str()))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(InputError::new(
            &dir.display().to_string(),
            "folder",
            format!("holds no images ({})", IMAGE_EXTENSIONS.join(", ")),
        )
        .into());
    }
    Ok(files)
}

fn read_image(path: &Path) -> Result<Mat> {
    let img = imgcodecs::imread(
        path.display().to_string().as_str(),
        imgcodecs::IMREAD_GRAYSCALE,
    )
    .with_context(|| format!("reading {}", path.display()))?;
    if img.empty() {
        return Err(InputError::new(
            &path.display().to_string(),
            "image",
            "cannot be read as an image",
        )
        .into());
    }
    Ok(img)
}

fn video_frames(path: &Path) -> Result<Vec<Mat>> {
    let bad = |p: String| -> anyhow::Error {
        InputError::new(&path.display().to_string(), "video", p).into()
    };
    let frames = crate::capture::VideoReader::open(path)
        .and_then(|mut v| v.spread_frames(MAX_VIDEO_VIEWS))
        .map_err(capture_error)?;
    if frames.is_empty() {
        return Err(bad("holds no readable frames".into()));
    }
    Ok(frames)
}

/// `calibrate --board B --video V | --images DIR [--out calibration.json]`.
pub fn calibrate(board: &Path, views: Views, out_path: &Path, out: &mut dyn Write) -> Result<()> {
    let b = load_board(board)?;
    let (source, frames) = match views {
        Views::Video(v) => (v, video_frames(v)?),
        Views::Images(dir) => {
            let mut frames = Vec::new();
            for f in image_files(dir)? {
                frames.push(read_image(&f)?);
            }
            (dir, frames)
        }
    };
    let cal = charuco::calibrate(&b, frames).map_err(|e| field_error(e, source, "board views"))?;
    let k = &cal.intrinsics;
    // The field is registered separately (`register`, or from the cards during analysis):
    // until then the image-to-field map is the identity.
    let c = Calibration {
        image_size: k.image_size,
        camera_matrix: matrix_to_rows(&k.camera_matrix),
        dist_coeffs: k.dist_coeffs.clone(),
        image_to_field: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        reprojection_error_px: Some(cal.reprojection_error_px),
    };
    write_json(out_path, &c)?;
    writeln!(
        out,
        "calibrated from {} board views of {} frames: reprojection error {:.3} px; fx {:.1} fy {:.1} cx {:.1} cy {:.1}; dist {:?}",
        cal.views_used,
        cal.frames_read,
        cal.reprojection_error_px,
        k.camera_matrix[(0, 0)],
        k.camera_matrix[(1, 1)],
        k.camera_matrix[(0, 2)],
        k.camera_matrix[(1, 2)],
        k.dist_coeffs.iter().map(|v| (v * 1e4).round() / 1e4).collect::<Vec<_>>(),
    )?;
    writeln!(
        out,
        "wrote {} (image_to_field is the identity until the field is registered: `register`)",
        out_path.display()
    )?;
    Ok(())
}

fn write_json<T: serde::Serialize>(path: &Path, v: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(v)?;
    std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))
}

/// Where `register` finds the field.
pub enum FieldSource<'a> {
    /// An image with the four corner markers.
    Markers(&'a Path),
    /// A JSON array of card quads (`CardQuad`).
    Cards(&'a Path),
}

/// `register [--calibration C] --markers IMAGE | --cards QUADS.json [--out calibration.json]
/// [--layout layout.json]`: the image-to-field homography, written into calibration.json.
pub fn register(
    calibration: Option<&Path>,
    source: FieldSource,
    out_path: &Path,
    layout_out: Option<&Path>,
    out: &mut dyn Write,
) -> Result<()> {
    let cal: Option<Calibration> = match calibration {
        Some(p) => Some(load_json(p)?),
        None => None,
    };
    let intr = cal.as_ref().map(Intrinsics::from_calibration);
    let field = FieldSize::default();
    let (reg, quads, image_size): (Registration, Vec<CardQuad>, [u32; 2]) = match source {
        FieldSource::Markers(img_path) => {
            let img = read_image(img_path)?;
            let reg = field::register_from_markers(&img, intr.as_ref(), &field)
                .map_err(|e| field_error(e, img_path, "markers"))?;
            (reg, Vec::new(), [img.cols() as u32, img.rows() as u32])
        }
        FieldSource::Cards(p) => {
            let quads: Vec<CardQuad> = load_json(p)?;
            let reg = field::register_from_cards(&quads, intr.as_ref(), &field)
                .map_err(|e| field_error(e, p, "cards"))?;
            let size = intr.as_ref().map_or([0, 0], |k| k.image_size);
            (reg, quads, size)
        }
    };
    writeln!(
        out,
        "registered: {}/{} corners agree, reprojection error {:.2} mm",
        reg.corner_inliers, reg.corners_used, reg.reprojection_error_mm
    )?;
    if !quads.is_empty() {
        let layout = field::measure_layout(&reg, &quads, &field);
        write_layout_check(&field::check_layout(&layout, &field), out)?;
        if let Some(lp) = layout_out {
            write_json(lp, &layout)?;
        }
    }
    let c = Calibration {
        image_size: cal.as_ref().map_or(image_size, |c| c.image_size),
        camera_matrix: cal
            .as_ref()
            .map_or([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], |c| {
                c.camera_matrix
            }),
        dist_coeffs: cal.as_ref().map_or(vec![0.0; 5], |c| c.dist_coeffs.clone()),
        image_to_field: matrix_to_rows(&reg.image_to_field()),
        reprojection_error_px: cal.as_ref().and_then(|c| c.reprojection_error_px),
    };
    write_json(out_path, &c)?;
    writeln!(out, "wrote {}", out_path.display())?;
    Ok(())
}

/// The layout check as officials read it: each territory, the gap, then each violation
/// (the `layout` command prints the same lines).
pub fn write_layout_check(check: &field::LayoutCheck, out: &mut dyn Write) -> Result<()> {
    for t in &check.territories {
        writeln!(
            out,
            "{}: {} cards in {} rows, width {:.1} mm, row gaps {:?} mm",
            t.player,
            t.cards,
            t.rows,
            t.width_mm,
            t.row_gaps_mm
                .iter()
                .map(|g| (g * 10.0).round() / 10.0)
                .collect::<Vec<_>>()
        )?;
    }
    if let Some(g) = check.gap_mm {
        writeln!(out, "gap between territories: {g:.1} mm")?;
    }
    for v in &check.violations {
        writeln!(out, "violation: {v}")?;
    }
    if check.is_legal() {
        writeln!(
            out,
            "layout: legal (tolerance {:.0} mm; outermost cards may span {:.0} mm short of the width)",
            check.tolerance_mm, check.narrow_slack_mm
        )?;
    }
    Ok(())
}

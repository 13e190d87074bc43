//! The layout from a video: still frames -> undistort -> cards -> names -> the field
//! stage's registration -> `rules::Layout` and the image-to-field homography.

use super::cards::{self, FindOptions, FoundCard};
use super::naming::{CardName, Namer};
use super::still::{self, LayoutFrames};
use super::{DetectError, QuadPx};
use crate::field::{self, CardQuad, Intrinsics};
use crate::rules::model::{CardPlacement, FieldSize, Layout};
use opencv::calib3d;
use opencv::core::Mat;
use opencv::prelude::*;
use std::path::Path;

/// Fewer cards than this and the view shows no field.
pub const MIN_CARDS_FOR_FIELD: usize = 8;

/// One card of the measured layout with the evidence behind it.
#[derive(Debug, Clone)]
pub struct MeasuredCard {
    pub placement: CardPlacement,
    /// Card outline in undistorted pixels, in the card frame's corner order.
    pub quad: CardQuad,
    /// Card outline in the decoded frames' pixels, same order (for the motion monitor).
    pub raw_px: QuadPx,
    /// The face inside the border, undistorted pixels, clockwise from top-left on screen.
    pub face_px: QuadPx,
    pub name: CardName,
}

/// What `measure_layout` found.
pub struct MeasuredLayout {
    pub layout: Layout,
    /// Undistorted pixels -> field mm.
    pub image_to_field: [[f64; 3]; 3],
    pub cards: Vec<MeasuredCard>,
    /// Cards found in the image but left out by registration (not on the card grid).
    pub rejected: usize,
    pub image_size: [u32; 2],
    /// The averaged layout image as decoded (not undistorted).
    pub still: LayoutFrames,
}

fn has_distortion(k: &Intrinsics) -> bool {
    k.dist_coeffs.iter().any(|d| *d != 0.0)
}

/// The image as a distortion-free camera with the same matrix would see it.
pub fn undistort_image(img: &Mat, k: &Intrinsics) -> Result<Mat, DetectError> {
    if !has_distortion(k) {
        return Ok(img.clone());
    }
    let km = Mat::from_slice_2d(&k.camera_matrix)?;
    let dm = Mat::from_slice(&k.dist_coeffs)?.try_clone()?;
    let mut out = Mat::default();
    calib3d::undistort(img, &mut out, &km, &dm, &km)?;
    Ok(out)
}

/// An image outline (clockwise on screen from the top-left) in the card frame's order,
/// with player A at the bottom of the image: (-w/2,-h/2) is the bottom-left corner.
pub fn card_frame_order(q: &QuadPx) -> QuadPx {
    [q[3], q[2], q[1], q[0]]
}

fn registration_error(source: &Path, e: field::FieldError) -> DetectError {
    match e {
        field::FieldError::OpenCv(cv) => DetectError::OpenCv(cv),
        other => DetectError::Registration {
            path: source.to_path_buf(),
            problem: other.to_string(),
        },
    }
}

/// Measures the layout in an averaged still image (as decoded).
pub fn measure_image(
    source: &Path,
    still: LayoutFrames,
    intrinsics: Option<&Intrinsics>,
    namer: &Namer,
) -> Result<MeasuredLayout, DetectError> {
    let image = match intrinsics {
        Some(k) => undistort_image(&still.image, k)?,
        None => still.image.clone(),
    };
    let found: Vec<FoundCard> = cards::find_cards(&image, &FindOptions::default())?;
    if found.len() < MIN_CARDS_FOR_FIELD {
        return Err(DetectError::NoField {
            path: source.to_path_buf(),
            frame: still.first_frame,
            problem: format!(
                "{} card-like shapes found, at least {MIN_CARDS_FOR_FIELD} needed",
                found.len()
            ),
        });
    }
    let mut quads: Vec<CardQuad> = found
        .iter()
        .map(|c| CardQuad {
            corners_px: card_frame_order(&c.card_px),
            poem: None,
            poem_score: None,
        })
        .collect();
    let nominal = FieldSize::default();
    let reg = field::register_from_cards(&quads, None, &nominal)
        .map_err(|e| registration_error(source, e))?;
    // B's cards face B: upside down to a camera with A at the bottom of the image.
    let flipped: Vec<bool> = reg.cards.iter().map(|p| p.y_mm > 0.0).collect();
    let faces: Vec<QuadPx> = found.iter().map(|c| c.face_px).collect();
    let names = namer.name_cards(&image, &faces, &flipped, None)?;
    for (q, n) in quads.iter_mut().zip(&names) {
        q.poem = n.poem;
        q.poem_score = Some(round_to(n.score, 0.001));
    }
    let layout = field::measure_layout(&reg, &quads, &nominal);

    let mut measured = Vec::with_capacity(layout.cards.len());
    let mut placements = layout.cards.iter();
    for (i, pose) in reg.cards.iter().enumerate() {
        if !pose.inlier {
            continue;
        }
        let Some(placement) = placements.next() else {
            break;
        };
        let q = &quads[i];
        let k = pose.corner_shift % 4;
        let corners = [0, 1, 2, 3].map(|j| q.corners_px[(j + k) % 4]);
        let raw = match intrinsics {
            Some(ki) => ki
                .distort_px(&corners)
                .map_err(|e| registration_error(source, e))?,
            None => corners.to_vec(),
        };
        measured.push(MeasuredCard {
            placement: placement.clone(),
            quad: CardQuad {
                corners_px: corners,
                ..q.clone()
            },
            raw_px: [raw[0], raw[1], raw[2], raw[3]],
            face_px: found[i].face_px,
            name: names[i].clone(),
        });
    }
    let rejected = found.len() - measured.len();
    Ok(MeasuredLayout {
        image_to_field: reg.image_to_field(),
        layout,
        cards: measured,
        rejected,
        image_size: [image.cols() as u32, image.rows() as u32],
        still,
    })
}

/// Measures the layout of a recording: `until_s` is the first reading's start, if known.
pub fn measure_layout(
    video: &Path,
    until_s: Option<f64>,
    intrinsics: Option<&Intrinsics>,
) -> Result<MeasuredLayout, DetectError> {
    let still = still::layout_frames(video, until_s)?;
    let namer = Namer::new()?;
    measure_image(video, still, intrinsics, &namer)
}

fn round_to(v: f64, step: f64) -> f64 {
    (v / step).round() * step
}

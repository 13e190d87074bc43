//! The layout from a video: still frames -> undistort -> cards -> names -> registration
//! -> `rules::Layout` and the image-to-field homography.

use super::cards::{self, FindOptions, FoundCard};
use super::naming::{CardName, Namer};
use super::register::{self, card_pose, Registration, H3};
use super::still::{self, LayoutFrames};
use super::{DetectError, PointPx, QuadPx};
use crate::field::{Calibration, CardQuad};
use crate::rules::geometry::rotated_rect;
use crate::rules::model::{CardPlacement, FieldSize, Layout};
use opencv::calib3d;
use opencv::core::{self, Mat, Point2d, Point3d, Vector};
use opencv::prelude::*;
use std::path::Path;

/// Fewer cards than this and the view shows no field.
pub const MIN_CARDS_FOR_FIELD: usize = 8;

/// Camera intrinsics and lens distortion (OpenCV conventions).
#[derive(Debug, Clone, PartialEq)]
pub struct Lens {
    pub camera_matrix: [[f64; 3]; 3],
    /// k1, k2, p1, p2, k3.
    pub dist_coeffs: Vec<f64>,
}

impl Lens {
    pub fn from_calibration(c: &Calibration) -> Lens {
        Lens {
            camera_matrix: c.camera_matrix,
            dist_coeffs: c.dist_coeffs.clone(),
        }
    }

    fn has_distortion(&self) -> bool {
        self.dist_coeffs.iter().any(|d| *d != 0.0)
    }

    fn mats(&self) -> Result<(Mat, Mat), DetectError> {
        let k = Mat::from_slice_2d(&self.camera_matrix)?;
        let d = Mat::from_slice(&self.dist_coeffs)?.try_clone()?;
        Ok((k, d))
    }

    /// The image as a distortion-free camera with the same matrix would see it.
    pub fn undistort(&self, img: &Mat) -> Result<Mat, DetectError> {
        if !self.has_distortion() {
            return Ok(img.clone());
        }
        let (k, d) = self.mats()?;
        let mut out = Mat::default();
        calib3d::undistort(img, &mut out, &k, &d, &k)?;
        Ok(out)
    }

    /// Undistorted pixel points back to the pixels of the decoded frames.
    pub fn distort(&self, pts: &[PointPx]) -> Result<Vec<PointPx>, DetectError> {
        if !self.has_distortion() || pts.is_empty() {
            return Ok(pts.to_vec());
        }
        let k = &self.camera_matrix;
        let obj: Vector<Point3d> = pts
            .iter()
            .map(|p| {
                let yn = (p[1] - k[1][2]) / k[1][1];
                let xn = (p[0] - k[0][2] - k[0][1] * yn) / k[0][0];
                Point3d::new(xn, yn, 1.0)
            })
            .collect();
        let (km, dm) = self.mats()?;
        let zero = Mat::from_slice(&[0.0f64; 3])?.try_clone()?;
        let mut out = Vector::<Point2d>::new();
        calib3d::project_points(
            &obj,
            &zero,
            &zero,
            &km,
            &dm,
            &mut out,
            &mut core::no_array(),
            0.0,
        )?;
        Ok(out.iter().map(|p| [p.x, p.y]).collect())
    }
}

/// One card of the measured layout with the evidence behind it.
#[derive(Debug, Clone)]
pub struct MeasuredCard {
    pub placement: CardPlacement,
    /// Card outline in undistorted pixels, in the card frame's corner order.
    pub quad: CardQuad,
    /// Card outline in the decoded frames' pixels (for the motion monitor).
    pub raw_px: QuadPx,
    /// The face inside the border, undistorted pixels, clockwise from top-left on screen.
    pub face_px: QuadPx,
    pub name: CardName,
}

/// What `measure_layout` found.
pub struct MeasuredLayout {
    pub layout: Layout,
    pub image_to_field: H3,
    pub cards: Vec<MeasuredCard>,
    pub image_size: [u32; 2],
    /// The averaged layout image as decoded (not undistorted).
    pub still: LayoutFrames,
}

/// Reorders an image outline (clockwise from the top-left on screen) into the card
/// frame's order of `rules::geometry::rotated_rect`, using the card's pose in the field.
fn card_frame_order(h: &H3, quad: &QuadPx) -> QuadPx {
    let (cx, cy, a) = card_pose(h, quad);
    let (s, c) = a.to_radians().sin_cos();
    let mut out = *quad;
    for p in quad {
        let f = register::apply(h, *p);
        let (dx, dy) = (f[0] - cx, f[1] - cy);
        // Into the card's own frame (undo the rotation).
        let (lx, ly) = (dx * c + dy * s, -dx * s + dy * c);
        let k = match (lx >= 0.0, ly >= 0.0) {
            (false, false) => 0,
            (true, false) => 1,
            (true, true) => 2,
            (false, true) => 3,
        };
        out[k] = *p;
    }
    out
}

/// Measures the layout in an averaged still image (as decoded).
pub fn measure_image(
    source: &Path,
    still: LayoutFrames,
    lens: Option<&Lens>,
    namer: &Namer,
) -> Result<MeasuredLayout, DetectError> {
    let image = match lens {
        Some(l) => l.undistort(&still.image)?,
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
    let faces: Vec<QuadPx> = found.iter().map(|c| c.face_px).collect();
    let names = namer.name_cards(&image, &faces, None)?;
    let outlines: Vec<QuadPx> = found.iter().map(|c| c.card_px).collect();
    let field = FieldSize::default();
    let Registration {
        image_to_field,
        slots,
    } = register::register(source, &outlines, &field)?;

    let mut measured = Vec::with_capacity(found.len());
    for ((card, name), slot) in found.iter().zip(names).zip(slots) {
        let (x, y, a) = card_pose(&image_to_field, &card.card_px);
        let ordered = card_frame_order(&image_to_field, &card.card_px);
        let raw: Vec<PointPx> = match lens {
            Some(l) => l.distort(&card.card_px)?,
            None => card.card_px.to_vec(),
        };
        let raw_px = [raw[0], raw[1], raw[2], raw[3]];
        measured.push(MeasuredCard {
            placement: CardPlacement {
                poem: name.poem,
                owner: slot.owner,
                row: slot.row,
                x_mm: round_to(x, 0.1),
                y_mm: round_to(y, 0.1),
                angle_deg: round_to(a, 0.01),
                poem_score: Some(round_to(name.score, 0.001)),
            },
            quad: CardQuad {
                corners_px: ordered,
                poem: name.poem,
                poem_score: Some(name.score),
            },
            raw_px,
            face_px: card.face_px,
            name,
        });
    }
    measured.sort_by(|a, b| {
        (a.placement.owner, a.placement.row)
            .cmp(&(b.placement.owner, b.placement.row))
            .then(a.placement.x_mm.total_cmp(&b.placement.x_mm))
    });
    let layout = Layout {
        field,
        players: Default::default(),
        cards: measured.iter().map(|m| m.placement.clone()).collect(),
    };
    Ok(MeasuredLayout {
        layout,
        image_to_field,
        cards: measured,
        image_size: [image.cols() as u32, image.rows() as u32],
        still,
    })
}

/// Measures the layout of a recording: `until_s` is the first reading's start, if known.
pub fn measure_layout(
    video: &Path,
    until_s: Option<f64>,
    lens: Option<&Lens>,
) -> Result<MeasuredLayout, DetectError> {
    let still = still::layout_frames(video, until_s)?;
    let namer = Namer::new()?;
    measure_image(video, still, lens, &namer)
}

fn round_to(v: f64, step: f64) -> f64 {
    (v / step).round() * step
}

/// The nominal outline of a placed card in the field frame (for comparisons).
pub fn nominal_outline(p: &CardPlacement, field: &FieldSize) -> [PointPx; 4] {
    rotated_rect(
        p.x_mm,
        p.y_mm,
        field.card_w_mm,
        field.card_h_mm,
        p.angle_deg,
    )
    .map(|q| [q.x_mm, q.y_mm])
}

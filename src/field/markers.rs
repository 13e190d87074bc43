//! Registration from four ArUco markers laid at the field's corners, for halls that prefer
//! equipment to the card fit.
//!
//! The markers (dictionary `DICT_4X4_50`, printed `MARKER_SIDE_MM` square) lie just outside
//! the playing area, each touching it with one corner, upright towards B (the marker's top
//! edge faces B's side):
//! - id 0 at A's left corner (x = -W/2, y = -G/2 - D), outside to the left and below;
//! - id 1 at A's right corner (x = +W/2, y = -G/2 - D), outside to the right and below;
//! - id 2 at B's right corner (x = +W/2, y = +G/2 + D), outside to the right and above;
//! - id 3 at B's left corner (x = -W/2, y = +G/2 + D), outside to the left and above.
//!
//! The field sizes passed in are the ones the markers were laid to.

use crate::field::error::FieldError;
use crate::field::map::{matrix_from_mat, FieldMap, Intrinsics};
use crate::field::register::Registration;
use crate::rules::geometry::FieldGeometry;
use crate::rules::model::FieldSize;
use crate::util::apply_homography;
use opencv::core::{Mat, Point2d, Point2f, Vector};
use opencv::prelude::*;
use opencv::{aruco, calib3d};

/// The printed side of each marker, black border included.
pub const MARKER_SIDE_MM: f64 = 80.0;
/// The ArUco dictionary the markers come from.
pub const MARKER_DICTIONARY: aruco::PREDEFINED_DICTIONARY_NAME =
    aruco::PREDEFINED_DICTIONARY_NAME::DICT_4X4_50;
/// Fewest markers that fix the homography (three give 12 well-spread corners).
pub const MIN_MARKERS: usize = 3;
/// Corner disagreement that marks a misdetected marker.
pub const MARKER_RANSAC_MM: f64 = 5.0;

/// A marker's four corners in the field frame, in ArUco's order (top-left, top-right,
/// bottom-right, bottom-left of the upright marker).
pub fn marker_corners_mm(id: i32, field: &FieldSize) -> Option<[[f64; 2]; 4]> {
    let area = FieldGeometry::new(field.clone()).playing_area();
    let s = MARKER_SIDE_MM;
    let (x0, y0) = match id {
        0 => (area.x0_mm - s, area.y0_mm - s),
        1 => (area.x1_mm, area.y0_mm - s),
        2 => (area.x1_mm, area.y1_mm),
        3 => (area.x0_mm - s, area.y1_mm),
        _ => return None,
    };
    Some([[x0, y0 + s], [x0 + s, y0 + s], [x0 + s, y0], [x0, y0]])
}

/// Finds the corner markers in a gray (or BGR) frame and fits the field frame to them.
pub fn register_from_markers(
    frame: &Mat,
    intrinsics: Option<&Intrinsics>,
    field: &FieldSize,
) -> Result<Registration, FieldError> {
    if frame.empty() {
        return Err(FieldError::Frame("the frame is empty".into()));
    }
    let dict = aruco::get_predefined_dictionary(MARKER_DICTIONARY)?;
    let mut corners: Vector<Vector<Point2f>> = Vector::new();
    let mut ids: Vector<i32> = Vector::new();
    aruco::detect_markers_def(frame, &dict, &mut corners, &mut ids)?;
    let mut px = Vec::new();
    let mut mm = Vec::new();
    let mut seen = Vec::new();
    for (id, c) in ids.iter().zip(corners.iter()) {
        let Some(field_c) = marker_corners_mm(id, field) else {
            continue;
        };
        if seen.contains(&id) {
            continue;
        }
        seen.push(id);
        for (p, f) in c.iter().zip(field_c) {
            px.push([p.x as f64, p.y as f64]);
            mm.push(f);
        }
    }
    if seen.len() < MIN_MARKERS {
        return Err(FieldError::TooFew {
            what: "field-corner markers (ArUco DICT_4X4_50 ids 0-3)",
            found: seen.len(),
            needed: MIN_MARKERS,
        });
    }
    let und = match intrinsics {
        Some(k) => k.undistort_px(&px)?,
        None => px,
    };
    let src: Vector<Point2d> = und.iter().map(|p| Point2d::new(p[0], p[1])).collect();
    let dst: Vector<Point2d> = mm.iter().map(|p| Point2d::new(p[0], p[1])).collect();
    let mut mask = Mat::default();
    let h = calib3d::find_homography(&src, &dst, &mut mask, calib3d::RANSAC, MARKER_RANSAC_MM)?;
    let h = matrix_from_mat(&h)?;
    let size = [frame.cols() as u32, frame.rows() as u32];
    let map = FieldMap::new(h, intrinsics.cloned(), field.clone(), size)?;
    let (mut ss, mut n) = (0.0, 0usize);
    for (j, (p, f)) in und.iter().zip(&mm).enumerate() {
        if *mask.at::<u8>(j as i32)? != 0 {
            let q = apply_homography(&map.image_to_field, *p);
            ss += (q[0] - f[0]).powi(2) + (q[1] - f[1]).powi(2);
            n += 1;
        }
    }
    Ok(Registration {
        map,
        cards: Vec::new(),
        corner_inliers: n,
        corners_used: und.len(),
        reprojection_error_mm: if n > 0 {
            (ss / n as f64).sqrt()
        } else {
            f64::NAN
        },
    })
}

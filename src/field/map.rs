//! Pixels <-> field millimetres: lens undistortion (OpenCV) then the image-to-field
//! homography, and the geometric questions the pipeline asks of pixel polygons. The mm
//! side of every question is `rules::geometry`; this file only carries pixels there.

use crate::field::calibration::Calibration;
use crate::field::error::FieldError;
use crate::rules::geometry::{convex_intersects_rect, FieldGeometry, Pt};
use crate::rules::model::{FieldSize, Player};
use crate::util::{apply_homography, matrix_from_rows, matrix_to_rows};
use nalgebra::Matrix3;
use opencv::core::{self, Mat, Point2f, Point3d, Vector};
use opencv::prelude::*;
use opencv::{calib3d, imgproc};

/// Homography entries below this are treated as zero when testing for degeneracy.
const DEGENERATE_DET: f64 = 1e-12;

/// Camera intrinsics and lens distortion (OpenCV model).
#[derive(Debug, Clone, PartialEq)]
pub struct Intrinsics {
    pub image_size: [u32; 2],
    pub camera_matrix: Matrix3<f64>,
    /// OpenCV order: k1, k2, p1, p2, k3.
    pub dist_coeffs: Vec<f64>,
}

impl Intrinsics {
    pub fn from_calibration(c: &Calibration) -> Self {
        Intrinsics {
            image_size: c.image_size,
            camera_matrix: matrix_from_rows(&c.camera_matrix),
            dist_coeffs: c.dist_coeffs.clone(),
        }
    }

    fn k_mat(&self) -> Result<Mat, FieldError> {
        Ok(matrix_to_mat(&self.camera_matrix)?)
    }

    fn d_mat(&self) -> Result<Mat, FieldError> {
        Ok(Mat::from_slice(&self.dist_coeffs)?.try_clone()?)
    }

    /// Distorted (raw) pixels -> undistorted pixels of the same camera matrix.
    pub fn undistort_px(&self, pts: &[[f64; 2]]) -> Result<Vec<[f64; 2]>, FieldError> {
        if pts.is_empty() {
            return Ok(Vec::new());
        }
        let src: Vector<core::Point2d> =
            pts.iter().map(|p| core::Point2d::new(p[0], p[1])).collect();
        let mut dst: Vector<core::Point2d> = Vector::new();
        let k = self.k_mat()?;
        calib3d::undistort_points(&src, &mut dst, &k, &self.d_mat()?, &core::no_array(), &k)?;
        Ok(dst.iter().map(|p| [p.x, p.y]).collect())
    }

    /// Undistorted pixels -> distorted (raw) pixels, through `projectPoints`.
    pub fn distort_px(&self, pts: &[[f64; 2]]) -> Result<Vec<[f64; 2]>, FieldError> {
        if pts.is_empty() {
            return Ok(Vec::new());
        }
        let k = &self.camera_matrix;
        let obj: Vector<Point3d> = pts
            .iter()
            .map(|p| {
                Point3d::new(
                    (p[0] - k[(0, 2)]) / k[(0, 0)],
                    (p[1] - k[(1, 2)]) / k[(1, 1)],
                    1.0,
                )
            })
            .collect();
        let zero = Mat::from_slice(&[0.0f64, 0.0, 0.0])?.try_clone()?;
        let mut out: Vector<core::Point2d> = Vector::new();
        calib3d::project_points(
            &obj,
            &zero,
            &zero,
            &self.k_mat()?,
            &self.d_mat()?,
            &mut out,
            &mut core::no_array(),
            0.0,
        )?;
        Ok(out.iter().map(|p| [p.x, p.y]).collect())
    }
}

/// A 3x3 CV_64F Mat (a fitted homography, a rotation) as a matrix.
pub fn matrix_from_mat(m: &Mat) -> Result<Matrix3<f64>, FieldError> {
    if m.rows() != 3 || m.cols() != 3 {
        return Err(FieldError::BadHomography(
            "no homography could be fitted".into(),
        ));
    }
    let mut h = Matrix3::zeros();
    for i in 0..3 {
        for j in 0..3 {
            h[(i, j)] = *m.at_2d::<f64>(i as i32, j as i32)?;
        }
    }
    Ok(h)
}

/// A matrix as the 3x3 CV_64F Mat OpenCV's calls take.
pub fn matrix_to_mat(m: &Matrix3<f64>) -> opencv::Result<Mat> {
    Mat::from_slice_2d(&matrix_to_rows(m))
}

/// The mapping between an image and the field frame.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldMap {
    /// Undistorted pixels (homogeneous) -> field mm.
    pub image_to_field: Matrix3<f64>,
    /// Field mm -> undistorted pixels.
    pub field_to_image: Matrix3<f64>,
    /// `None`: the image has no lens distortion (or it was removed upstream).
    pub intrinsics: Option<Intrinsics>,
    /// The field's sizes, nominal or measured; the mm-side questions use them.
    pub field: FieldSize,
}

impl FieldMap {
    /// Builds a map and checks that the homography is usable over `image_size_px`.
    pub fn new(
        image_to_field: Matrix3<f64>,
        intrinsics: Option<Intrinsics>,
        field: FieldSize,
        image_size_px: [u32; 2],
    ) -> Result<Self, FieldError> {
        check_homography(&image_to_field, &field, image_size_px)?;
        let field_to_image = image_to_field
            .try_inverse()
            .ok_or_else(|| FieldError::BadHomography("it is singular".into()))?;
        Ok(FieldMap {
            image_to_field,
            field_to_image,
            intrinsics,
            field,
        })
    }

    /// From `calibration.json`, with the field's sizes.
    pub fn from_calibration(c: &Calibration, field: FieldSize) -> Result<Self, FieldError> {
        FieldMap::new(
            matrix_from_rows(&c.image_to_field),
            Some(Intrinsics::from_calibration(c)),
            field,
            c.image_size,
        )
    }

    pub fn geometry(&self) -> FieldGeometry {
        FieldGeometry::new(self.field.clone())
    }

    /// Raw image pixels -> field points.
    pub fn to_field(&self, px: &[[f64; 2]]) -> Result<Vec<Pt>, FieldError> {
        let und = match &self.intrinsics {
            Some(k) => k.undistort_px(px)?,
            None => px.to_vec(),
        };
        Ok(und
            .into_iter()
            .map(|p| {
                let q = apply_homography(&self.image_to_field, p);
                Pt::new(q[0], q[1])
            })
            .collect())
    }

    pub fn point_to_field(&self, px: [f64; 2]) -> Result<Pt, FieldError> {
        Ok(self.to_field(&[px])?[0])
    }

    /// Field points -> raw image pixels.
    pub fn to_image(&self, pts: &[Pt]) -> Result<Vec<[f64; 2]>, FieldError> {
        let und: Vec<[f64; 2]> = pts
            .iter()
            .map(|p| apply_homography(&self.field_to_image, [p.x_mm, p.y_mm]))
            .collect();
        match &self.intrinsics {
            Some(k) => k.distort_px(&und),
            None => Ok(und),
        }
    }

    /// A card outline in pixels is out when no part of it lies in the playing area (17-2).
    pub fn card_is_out_px(&self, corners_px: &[[f64; 2]; 4]) -> Result<bool, FieldError> {
        let mm = self.to_field(corners_px)?;
        Ok(!convex_intersects_rect(
            &mm,
            &self.geometry().playing_area(),
        ))
    }

    /// A hand outline in pixels (any polygon, convex or not) is inside the playing area when
    /// any part of it is (7-1 note: the air above counts). Mapping the image through the
    /// tatami homography is exactly the projection of the hand onto the tatami from the
    /// camera, so a hovering hand counts where its image falls.
    pub fn hand_is_inside_px(&self, outline_px: &[[f64; 2]]) -> Result<bool, FieldError> {
        let mm = self.to_field(outline_px)?;
        Ok(polygon_intersects_area(&mm, &self.geometry()))
    }

    /// The territory holding a pixel, if any.
    pub fn territory_of_px(&self, px: [f64; 2]) -> Result<Option<Player>, FieldError> {
        Ok(self.geometry().territory_of(self.point_to_field(px)?))
    }
}

/// Any polygon against the playing area: an edge crosses it, or the area lies inside.
fn polygon_intersects_area(poly: &[Pt], g: &FieldGeometry) -> bool {
    let area = g.playing_area();
    if poly.len() < 3 {
        return convex_intersects_rect(poly, &area);
    }
    let edge_hits = (0..poly.len()).any(|i| {
        let seg = [poly[i], poly[(i + 1) % poly.len()]];
        convex_intersects_rect(&seg, &area)
    });
    if edge_hits {
        return true;
    }
    // No edge touches the area: the area is either wholly inside the polygon or outside.
    let contour: Vector<Point2f> = poly
        .iter()
        .map(|p| Point2f::new(p.x_mm as f32, p.y_mm as f32))
        .collect();
    let c = area.corners()[0];
    imgproc::point_polygon_test(&contour, Point2f::new(c.x_mm as f32, c.y_mm as f32), false)
        .map(|d| d >= 0.0)
        .unwrap_or(false)
}

/// A homography is usable when it keeps orientation and maps the image to a convex,
/// non-degenerate quadrilateral in the field, and the field back into a convex quadrilateral
/// in front of the camera. Otherwise the mapping folds and any ruling on it would be wrong.
pub fn check_homography(
    h: &Matrix3<f64>,
    field: &FieldSize,
    image_size_px: [u32; 2],
) -> Result<(), FieldError> {
    if h.iter().any(|v| !v.is_finite()) {
        return Err(FieldError::BadHomography("it is not finite".into()));
    }
    if h.determinant().abs() < DEGENERATE_DET * h.amax().powi(3) {
        return Err(FieldError::BadHomography(
            "it is degenerate (collapses the image to a line)".into(),
        ));
    }
    let inv = h
        .try_inverse()
        .ok_or_else(|| FieldError::BadHomography("it is singular".into()))?;
    // The playing area's corners must map in front of the camera (w > 0) and turn the way a
    // real view turns them: the field frame is counter-clockwise seen from above (x to A's
    // right, y towards B) and pixels have y down, so under any real camera pose the mapped
    // corners turn negatively in pixel coordinates (anticlockwise on screen); the other way
    // is a mirror image.
    let g = FieldGeometry::new(field.clone());
    let area = g.playing_area().corners();
    let mut img = Vec::new();
    for c in area {
        let w = inv[(2, 0)] * c.x_mm + inv[(2, 1)] * c.y_mm + inv[(2, 2)];
        if w <= 0.0 {
            return Err(FieldError::BadHomography(
                "part of the field maps behind the camera".into(),
            ));
        }
        img.push(apply_homography(&inv, [c.x_mm, c.y_mm]));
    }
    match convex_turns(&img) {
        Some(s) if s < 0.0 => {}
        Some(_) => {
            return Err(FieldError::BadHomography(
                "it mirrors the field (folded over: A's right would be on the left)".into(),
            ))
        }
        None => {
            return Err(FieldError::BadHomography(
                "the field maps to a folded (non-convex) quadrilateral".into(),
            ))
        }
    }
    let [w, hgt] = image_size_px.map(|v| v as f64);
    let frame = [[0.0, 0.0], [w, 0.0], [w, hgt], [0.0, hgt]];
    for p in frame {
        let wh = h[(2, 0)] * p[0] + h[(2, 1)] * p[1] + h[(2, 2)];
        if wh <= 0.0 {
            return Err(FieldError::BadHomography(
                "the image's horizon crosses the frame (the view is folded)".into(),
            ));
        }
    }
    let mapped: Vec<[f64; 2]> = frame.iter().map(|p| apply_homography(h, *p)).collect();
    if convex_turns(&mapped).is_none() {
        return Err(FieldError::BadHomography(
            "the image maps to a folded (non-convex) quadrilateral".into(),
        ));
    }
    Ok(())
}

/// The sign shared by every turn of a polygon, or `None` when it is not strictly convex.
fn convex_turns(poly: &[[f64; 2]]) -> Option<f64> {
    let n = poly.len();
    let mut sign = 0.0;
    for i in 0..n {
        let (a, b, c) = (poly[i], poly[(i + 1) % n], poly[(i + 2) % n]);
        let cross = (b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0]);
        if cross == 0.0 || !cross.is_finite() {
            return None;
        }
        let s = cross.signum();
        if sign == 0.0 {
            sign = s;
        } else if s != sign {
            return None;
        }
    }
    Some(sign)
}

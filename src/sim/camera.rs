//! The simulated camera: a pinhole above the field, slightly tilted and rolled, with
//! radial lens distortion. Gives the true calibration (contract section 3) and projects
//! field points into the distorted image through OpenCV.

use crate::field::Calibration;
use crate::util::{apply_homography, matrix_from_rows, matrix_to_rows};
use nalgebra::{Matrix3, Vector3};
use opencv::core::{Mat, Point2d, Point3d, Vector};
use opencv::prelude::*;
use rand::Rng;
use rand_chacha::ChaCha20Rng;

/// Nominal camera height above the tatami.
pub const CAMERA_HEIGHT_MM: f64 = 1800.0;
/// Field width the image spans at the nominal height (the field is 870 mm wide).
pub const VIEW_W_MM: f64 = 1300.0;

/// A camera: intrinsics, distortion and pose (world = field frame, z up).
#[derive(Debug, Clone, PartialEq)]
pub struct Camera {
    pub width_px: u32,
    pub height_px: u32,
    pub k: Matrix3<f64>,
    /// OpenCV order: k1, k2, p1, p2, k3.
    pub dist: [f64; 5],
    /// World to camera rotation (rows are the camera axes in world coordinates).
    pub r: Matrix3<f64>,
    /// Camera centre in the field frame, height above the tatami.
    pub centre_mm: [f64; 3],
}

fn rot_x(a: f64) -> Matrix3<f64> {
    let (s, c) = a.sin_cos();
    matrix_from_rows(&[[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
}
fn rot_y(a: f64) -> Matrix3<f64> {
    let (s, c) = a.sin_cos();
    matrix_from_rows(&[[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
}
fn rot_z(a: f64) -> Matrix3<f64> {
    let (s, c) = a.sin_cos();
    matrix_from_rows(&[[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
}

impl Camera {
    /// A camera over the field centre with seed-varied height, tilt, roll and lens.
    pub fn random(
        rng: &mut ChaCha20Rng,
        width_px: u32,
        height_px: u32,
        lens_strength: f64,
    ) -> Camera {
        let height = CAMERA_HEIGHT_MM * rng.gen_range(0.95..1.05);
        let f = width_px as f64 * CAMERA_HEIGHT_MM / VIEW_W_MM * rng.gen_range(0.97..1.03);
        let cx = width_px as f64 / 2.0 + rng.gen_range(-0.01..0.01) * width_px as f64;
        let cy = height_px as f64 / 2.0 + rng.gen_range(-0.01..0.01) * height_px as f64;
        let k1 = -rng.gen_range(0.04..0.14) * lens_strength;
        let k2 = rng.gen_range(0.0..0.04) * lens_strength;
        let tilt = rng.gen_range(-2.0f64..2.0).to_radians();
        let pitch = rng.gen_range(-2.0f64..2.0).to_radians();
        let roll = rng.gen_range(-2.5f64..2.5).to_radians();
        // Looking straight down: camera x = field x, camera y = -field y, optical axis = -z.
        let base = Matrix3::from_diagonal(&Vector3::new(1.0, -1.0, -1.0));
        let r = rot_z(roll) * (rot_x(tilt) * (rot_y(pitch) * base));
        // Place the centre so that the field centre sits near the principal point.
        let mut cam = Camera {
            width_px,
            height_px,
            k: matrix_from_rows(&[[f, 0.0, cx], [0.0, f, cy], [0.0, 0.0, 1.0]]),
            dist: [k1, k2, 0.0, 0.0, 0.0],
            r,
            centre_mm: [0.0, 0.0, height],
        };
        // The optical axis meets the tatami here; shift so it meets near the origin.
        let axis = r.row(2);
        let t = height / -axis[2];
        cam.centre_mm[0] = -axis[0] * t + rng.gen_range(-15.0..15.0);
        cam.centre_mm[1] = -axis[1] * t + rng.gen_range(-15.0..15.0);
        cam
    }

    /// The same camera moved parallel to the tatami (camera shake).
    pub fn shifted(&self, dx_mm: f64, dy_mm: f64) -> Camera {
        let mut c = self.clone();
        c.centre_mm[0] += dx_mm;
        c.centre_mm[1] += dy_mm;
        c
    }

    /// The translation of the world-to-camera transform: -R C.
    fn tvec(&self) -> Vector3<f64> {
        -(self.r * Vector3::from(self.centre_mm))
    }

    /// Field (z = 0) to undistorted pixels.
    pub fn field_to_image(&self) -> Matrix3<f64> {
        let mut m = self.r;
        m.set_column(2, &self.tvec());
        let h = self.k * m;
        h / h[(2, 2)]
    }

    /// Undistorted pixels to field millimetres (the calibration's `image_to_field`).
    pub fn image_to_field(&self) -> Matrix3<f64> {
        let h = self
            .field_to_image()
            .try_inverse()
            .unwrap_or_else(Matrix3::identity);
        h / h[(2, 2)]
    }

    pub fn calibration(&self) -> Calibration {
        Calibration {
            image_size: [self.width_px, self.height_px],
            camera_matrix: matrix_to_rows(&self.k),
            dist_coeffs: self.dist.to_vec(),
            image_to_field: matrix_to_rows(&self.image_to_field()),
            reprojection_error_px: Some(0.0),
        }
    }

    pub fn k_mat(&self) -> opencv::Result<Mat> {
        Mat::from_slice_2d(&matrix_to_rows(&self.k))
    }

    pub fn dist_mat(&self) -> opencv::Result<Mat> {
        Mat::from_slice(&self.dist)?.try_clone()
    }

    /// Field points (mm, z = 0) to pixels in the distorted image, through OpenCV.
    pub fn project_distorted(&self, pts: &[(f64, f64)]) -> opencv::Result<Vec<(f64, f64)>> {
        if pts.is_empty() {
            return Ok(Vec::new());
        }
        let obj: Vector<Point3d> = pts.iter().map(|&(x, y)| Point3d::new(x, y, 0.0)).collect();
        let mut rvec = Mat::default();
        let rmat = Mat::from_slice_2d(&matrix_to_rows(&self.r))?;
        opencv::calib3d::rodrigues(&rmat, &mut rvec, &mut opencv::core::no_array())?;
        let t = self.tvec();
        let tvec = Mat::from_slice(t.as_slice())?.try_clone()?;
        let mut out: Vector<Point2d> = Vector::new();
        opencv::calib3d::project_points(
            &obj,
            &rvec,
            &tvec,
            &self.k_mat()?,
            &self.dist_mat()?,
            &mut out,
            &mut opencv::core::no_array(),
            0.0,
        )?;
        Ok(out.iter().map(|p| (p.x, p.y)).collect())
    }

    /// Field points to undistorted pixels.
    pub fn project_undistorted(&self, pts: &[(f64, f64)]) -> Vec<(f64, f64)> {
        let h = self.field_to_image();
        pts.iter()
            .map(|&(x, y)| {
                let [u, v] = apply_homography(&h, [x, y]);
                (u, v)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn homography_round_trip_and_distortion_is_small_at_centre() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let cam = Camera::random(&mut rng, 1280, 720, 1.0);
        let h = cam.field_to_image();
        let hi = cam.image_to_field();
        let [x, y] = apply_homography(&hi, apply_homography(&h, [100.0, -50.0]));
        assert!((x - 100.0).abs() < 1e-6 && (y + 50.0).abs() < 1e-6);
        // Near the centre the distorted and undistorted projections agree within a pixel.
        let d = cam.project_distorted(&[(0.0, 0.0)]).unwrap();
        let [u0, v0] = apply_homography(&h, [0.0, 0.0]);
        assert!((d[0].0 - u0).abs() < 1.0 && (d[0].1 - v0).abs() < 1.0);
        // The whole field is in view.
        let corners = cam
            .project_distorted(&[(-435.0, -254.0), (435.0, 254.0)])
            .unwrap();
        for (u, v) in corners {
            assert!(u > 0.0 && u < 1280.0 && v > 0.0 && v < 720.0, "{u} {v}");
        }
        // Field +y (towards B) is up in the image.
        let up = cam
            .project_distorted(&[(0.0, 200.0), (0.0, -200.0)])
            .unwrap();
        assert!(up[0].1 < up[1].1);
    }
}

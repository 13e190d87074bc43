//! The simulated camera: a pinhole above the field, slightly tilted and rolled, with
//! radial lens distortion. Gives the true calibration (contract section 3) and projects
//! field points into the distorted image through OpenCV.

use crate::field::Calibration;
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
    pub k: [[f64; 3]; 3],
    /// OpenCV order: k1, k2, p1, p2, k3.
    pub dist: [f64; 5],
    /// World to camera rotation (rows are the camera axes in world coordinates).
    pub r: [[f64; 3]; 3],
    /// Camera centre in the field frame, height above the tatami.
    pub centre_mm: [f64; 3],
}

fn matmul(a: &[[f64; 3]; 3], b: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let mut m = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            m[i][j] = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    m
}

fn rot_x(a: f64) -> [[f64; 3]; 3] {
    let (s, c) = a.sin_cos();
    [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]]
}
fn rot_y(a: f64) -> [[f64; 3]; 3] {
    let (s, c) = a.sin_cos();
    [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]
}
fn rot_z(a: f64) -> [[f64; 3]; 3] {
    let (s, c) = a.sin_cos();
    [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]
}

/// Inverse of a 3x3 matrix (None when singular).
pub fn inv3(m: &[[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    if det.abs() < 1e-15 {
        return None;
    }
    let c =
        |r0: usize, c0: usize, r1: usize, c1: usize| m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0];
    let adj = [
        [c(1, 1, 2, 2), -c(0, 1, 2, 2), c(0, 1, 1, 2)],
        [-c(1, 0, 2, 2), c(0, 0, 2, 2), -c(0, 0, 1, 2)],
        [c(1, 0, 2, 1), -c(0, 0, 2, 1), c(0, 0, 1, 1)],
    ];
    Some(adj.map(|row| row.map(|v| v / det)))
}

/// Applies a homography to a point.
pub fn apply_h(h: &[[f64; 3]; 3], x: f64, y: f64) -> (f64, f64) {
    let w = h[2][0] * x + h[2][1] * y + h[2][2];
    (
        (h[0][0] * x + h[0][1] * y + h[0][2]) / w,
        (h[1][0] * x + h[1][1] * y + h[1][2]) / w,
    )
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
        let base = [[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]];
        let r = matmul(
            &rot_z(roll),
            &matmul(&rot_x(tilt), &matmul(&rot_y(pitch), &base)),
        );
        // Place the centre so that the field centre sits near the principal point.
        let mut cam = Camera {
            width_px,
            height_px,
            k: [[f, 0.0, cx], [0.0, f, cy], [0.0, 0.0, 1.0]],
            dist: [k1, k2, 0.0, 0.0, 0.0],
            r,
            centre_mm: [0.0, 0.0, height],
        };
        // The optical axis meets the tatami here; shift so it meets near the origin.
        let axis = [r[2][0], r[2][1], r[2][2]];
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

    fn tvec(&self) -> [f64; 3] {
        let c = self.centre_mm;
        let r = &self.r;
        [0, 1, 2].map(|i| -(r[i][0] * c[0] + r[i][1] * c[1] + r[i][2] * c[2]))
    }

    /// Field (z = 0) to undistorted pixels.
    pub fn field_to_image(&self) -> [[f64; 3]; 3] {
        let t = self.tvec();
        let r = &self.r;
        let m = [
            [r[0][0], r[0][1], t[0]],
            [r[1][0], r[1][1], t[1]],
            [r[2][0], r[2][1], t[2]],
        ];
        let h = matmul(&self.k, &m);
        let s = h[2][2];
        h.map(|row| row.map(|v| v / s))
    }

    /// Undistorted pixels to field millimetres (the calibration's `image_to_field`).
    pub fn image_to_field(&self) -> [[f64; 3]; 3] {
        let h = inv3(&self.field_to_image()).unwrap_or([
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
        ]);
        let s = h[2][2];
        h.map(|row| row.map(|v| v / s))
    }

    pub fn calibration(&self) -> Calibration {
        Calibration {
            image_size: [self.width_px, self.height_px],
            camera_matrix: self.k,
            dist_coeffs: self.dist.to_vec(),
            image_to_field: self.image_to_field(),
            reprojection_error_px: Some(0.0),
        }
    }

    pub fn k_mat(&self) -> opencv::Result<Mat> {
        Mat::from_slice_2d(&self.k)
    }

    pub fn dist_mat(&self) -> opencv::Result<Mat> {
        Ok(Mat::from_slice(&self.dist)?.try_clone()?)
    }

    /// Field points (mm, z = 0) to pixels in the distorted image, through OpenCV.
    pub fn project_distorted(&self, pts: &[(f64, f64)]) -> opencv::Result<Vec<(f64, f64)>> {
        if pts.is_empty() {
            return Ok(Vec::new());
        }
        let obj: Vector<Point3d> = pts.iter().map(|&(x, y)| Point3d::new(x, y, 0.0)).collect();
        let mut rvec = Mat::default();
        let rmat = Mat::from_slice_2d(&self.r)?;
        opencv::calib3d::rodrigues(&rmat, &mut rvec, &mut opencv::core::no_array())?;
        let t = self.tvec();
        let tvec = Mat::from_slice(&t)?.try_clone()?;
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
        pts.iter().map(|&(x, y)| apply_h(&h, x, y)).collect()
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
        let (u, v) = apply_h(&h, 100.0, -50.0);
        let (x, y) = apply_h(&hi, u, v);
        assert!((x - 100.0).abs() < 1e-6 && (y + 50.0).abs() < 1e-6);
        // Near the centre the distorted and undistorted projections agree within a pixel.
        let d = cam.project_distorted(&[(0.0, 0.0)]).unwrap();
        let (u0, v0) = apply_h(&h, 0.0, 0.0);
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

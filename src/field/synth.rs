//! Synthetic views of a known field for the field stage's tests and benchmarks: a camera of
//! chosen intrinsics, distortion and pose above the tatami, a 50-card layout laid to given
//! sizes, and rendered frames. Nothing here is used by the pipeline.

use crate::field::calibration::CardQuad;
use crate::field::error::FieldError;
use crate::field::map::{matrix_from_mat, matrix_to_mat, Intrinsics};
use crate::rules::geometry::{rotated_rect, Pt};
use crate::rules::model::{FieldSize, Player};
use crate::util::matrix_from_rows;
use nalgebra::{Matrix3, Vector3};
use opencv::core::{self, Mat, Point, Point3d, Scalar, Size, Vector};
use opencv::prelude::*;
use opencv::{calib3d, imgproc};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A pinhole camera above the field.
#[derive(Debug, Clone)]
pub struct Camera {
    pub intrinsics: Intrinsics,
    pub rvec: [f64; 3],
    pub tvec: [f64; 3],
}

impl Camera {
    /// A camera `height_mm` above the field centre looking down with A at the image bottom,
    /// then tilted about the camera's x and y axes and rolled about its optical axis.
    pub fn overhead(
        image_size: [u32; 2],
        focal_px: f64,
        dist_coeffs: Vec<f64>,
        height_mm: f64,
        tilt_deg: [f64; 2],
        roll_deg: f64,
    ) -> Result<Self, FieldError> {
        let k = matrix_from_rows(&[
            [focal_px, 0.0, image_size[0] as f64 / 2.0],
            [0.0, focal_px, image_size[1] as f64 / 2.0],
            [0.0, 0.0, 1.0],
        ]);
        // Looking down: camera x = field x, camera y = -field y, camera z = -field z.
        let down = Matrix3::from_diagonal(&Vector3::new(1.0, -1.0, -1.0));
        let rot = |axis: usize, deg: f64| -> Matrix3<f64> {
            let (s, c) = deg.to_radians().sin_cos();
            matrix_from_rows(&match axis {
                0 => [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]],
                1 => [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]],
                _ => [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]],
            })
        };
        let r = rot(2, roll_deg) * (rot(1, tilt_deg[1]) * (rot(0, tilt_deg[0]) * down));
        // t = -R C with the camera centre C above the origin.
        let t = -(r * Vector3::new(0.0, 0.0, height_mm));
        let rm = matrix_to_mat(&r)?;
        let mut rv = Mat::default();
        calib3d::rodrigues(&rm, &mut rv, &mut core::no_array())?;
        Ok(Camera {
            intrinsics: Intrinsics {
                image_size,
                camera_matrix: k,
                dist_coeffs,
            },
            rvec: [*rv.at::<f64>(0)?, *rv.at::<f64>(1)?, *rv.at::<f64>(2)?],
            tvec: t.into(),
        })
    }

    fn rotation(&self) -> Result<Matrix3<f64>, FieldError> {
        let rv = Mat::from_slice(&self.rvec)?.try_clone()?;
        let mut rm = Mat::default();
        calib3d::rodrigues(&rv, &mut rm, &mut core::no_array())?;
        matrix_from_mat(&rm)
    }

    /// Field -> undistorted pixels: K [r1 r2 t].
    pub fn field_to_undistorted(&self) -> Result<Matrix3<f64>, FieldError> {
        let mut m = self.rotation()?;
        m.set_column(2, &Vector3::from(self.tvec));
        Ok(self.intrinsics.camera_matrix * m)
    }

    /// The true image-to-field homography (undistorted pixels -> mm).
    pub fn image_to_field(&self) -> Result<Matrix3<f64>, FieldError> {
        self.field_to_undistorted()?
            .try_inverse()
            .ok_or_else(|| FieldError::BadHomography("singular camera".into()))
    }

    /// Field points -> raw (distorted) pixels.
    pub fn project(&self, pts: &[Pt]) -> Result<Vec<[f64; 2]>, FieldError> {
        let obj: Vector<Point3d> = pts
            .iter()
            .map(|p| Point3d::new(p.x_mm, p.y_mm, 0.0))
            .collect();
        let mut out: Vector<core::Point2d> = Vector::new();
        let k = matrix_to_mat(&self.intrinsics.camera_matrix)?;
        let d = Mat::from_slice(&self.intrinsics.dist_coeffs)?.try_clone()?;
        let rv = Mat::from_slice(&self.rvec)?.try_clone()?;
        let tv = Mat::from_slice(&self.tvec)?.try_clone()?;
        calib3d::project_points(&obj, &rv, &tv, &k, &d, &mut out, &mut core::no_array(), 0.0)?;
        Ok(out.iter().map(|p| [p.x, p.y]).collect())
    }
}

/// A card as laid: centre, angle, owner and row.
#[derive(Debug, Clone, PartialEq)]
pub struct LaidCard {
    pub x_mm: f64,
    pub y_mm: f64,
    pub angle_deg: f64,
    pub owner: Player,
    pub row: u8,
}

/// 25 cards a side in rows of 9, 8 and 8 (row 3 first), laid to `field`'s sizes: in every
/// territory the outermost cards touch the territory's edges; the rest sit at irregular
/// places; each card is off its ideal place by up to `jitter_mm` along the row and
/// `jitter_deg` in angle (the row lines themselves are exact).
pub fn layout(seed: u64, field: &FieldSize, jitter_mm: f64, jitter_deg: f64) -> Vec<LaidCard> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let g = crate::rules::geometry::FieldGeometry::new(field.clone());
    let (w, cw) = (field.width_mm, field.card_w_mm);
    let mut out = Vec::new();
    for p in Player::BOTH {
        for (row, n) in [(3u8, 9usize), (2, 8), (1, 8)] {
            let y = g.row_center_y_mm(p, row);
            // Irregular slots: sorted uniform positions between the two edge cards.
            let mut xs: Vec<f64> = (0..n.saturating_sub(2))
                .map(|_| rng.gen_range(-w / 2.0 + cw * 1.6..w / 2.0 - cw * 1.6))
                .collect();
            xs.sort_by(f64::total_cmp);
            // Spread apart so that no two cards overlap.
            for i in 1..xs.len() {
                if xs[i] - xs[i - 1] < cw + 2.0 {
                    xs[i] = xs[i - 1] + cw + 2.0;
                }
            }
            let edge_rows = row == 3 || row == 1;
            let mut all = Vec::new();
            if edge_rows {
                all.push(-w / 2.0 + cw / 2.0);
            } else {
                all.push(-w / 2.0 + cw * 1.5 + 4.0);
            }
            all.extend(xs.iter().map(|x| x.min(w / 2.0 - cw * 1.5 - 2.0)));
            if edge_rows {
                all.push(w / 2.0 - cw / 2.0);
            } else {
                all.push(w / 2.0 - cw * 1.5 - 4.0);
            }
            for (i, x) in all.iter().enumerate() {
                let edge = edge_rows && (i == 0 || i + 1 == all.len());
                let dx = if edge {
                    0.0
                } else {
                    rng.gen_range(-jitter_mm..=jitter_mm)
                };
                let a = if edge {
                    0.0
                } else {
                    rng.gen_range(-jitter_deg..=jitter_deg)
                };
                out.push(LaidCard {
                    x_mm: x + dx,
                    y_mm: y,
                    angle_deg: a,
                    owner: p,
                    row,
                });
            }
        }
    }
    out
}

/// The card's true corners in the field, in `CardQuad` order.
pub fn card_corners_mm(c: &LaidCard, field: &FieldSize) -> [Pt; 4] {
    rotated_rect(
        c.x_mm,
        c.y_mm,
        field.card_w_mm,
        field.card_h_mm,
        c.angle_deg,
    )
}

/// Quads of the cards as a camera sees them, with Gaussian corner noise (`noise_px`, sd).
pub fn quads(
    cam: &Camera,
    cards: &[LaidCard],
    field: &FieldSize,
    noise_px: f64,
    seed: u64,
) -> Result<Vec<CardQuad>, FieldError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for c in cards {
        let px = cam.project(&card_corners_mm(c, field))?;
        let mut corners_px = [[0.0; 2]; 4];
        for (o, p) in corners_px.iter_mut().zip(&px) {
            *o = [
                p[0] + gauss(&mut rng) * noise_px,
                p[1] + gauss(&mut rng) * noise_px,
            ];
        }
        out.push(CardQuad {
            corners_px,
            poem: None,
            poem_score: None,
        });
    }
    Ok(out)
}

/// A standard normal sample (Box-Muller).
pub fn gauss(rng: &mut impl Rng) -> f64 {
    let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
    let u2: f64 = rng.gen_range(0.0..1.0);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Pixels per mm of the field texture `render` warps into the image.
const TEXTURE_PX_PER_MM: f64 = 1.0;
/// Extent of the rendered tatami around the field centre.
const TATAMI_HALF_MM: [f64; 2] = [900.0, 600.0];

/// A gray frame of the tatami (woven texture), the cards (white with dark strokes),
/// optional "hand" discs (field centre and radius in mm) and optionally the four corner
/// markers of `markers::marker_corners_mm`, seen by `cam` without lens distortion (the
/// tests that use it need only the homography).
pub fn render(
    cam: &Camera,
    cards: &[LaidCard],
    field: &FieldSize,
    hands: &[(Pt, f64)],
    with_markers: bool,
    seed: u64,
) -> Result<Mat, FieldError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (tw, th) = (
        (2.0 * TATAMI_HALF_MM[0] * TEXTURE_PX_PER_MM) as i32,
        (2.0 * TATAMI_HALF_MM[1] * TEXTURE_PX_PER_MM) as i32,
    );
    let mut tex = Mat::new_rows_cols_with_default(th, tw, core::CV_8UC1, Scalar::all(120.0))?;
    // Tatami: random blobs of weave, blurred, so every tile has texture at many scales.
    let mut noise = Mat::new_rows_cols_with_default(th, tw, core::CV_8UC1, Scalar::all(0.0))?;
    core::randu(&mut noise, &Scalar::all(0.0), &Scalar::all(255.0))?;
    let mut blurred = Mat::default();
    imgproc::gaussian_blur_def(&noise, &mut blurred, Size::new(5, 5), 1.5)?;
    core::add_weighted_def(&blurred, 0.6, &tex.clone(), 0.4, 0.0, &mut tex)?;
    let to_tex = |p: Pt| -> Point {
        Point::new(
            ((p.x_mm + TATAMI_HALF_MM[0]) * TEXTURE_PX_PER_MM).round() as i32,
            ((TATAMI_HALF_MM[1] - p.y_mm) * TEXTURE_PX_PER_MM).round() as i32,
        )
    };
    for x in (0..tw).step_by(15) {
        imgproc::line(
            &mut tex,
            Point::new(x, 0),
            Point::new(x, th),
            Scalar::all(90.0),
            1,
            imgproc::LINE_8,
            0,
        )?;
    }
    for c in cards {
        let poly: Vector<Point> = card_corners_mm(c, field)
            .iter()
            .map(|p| to_tex(*p))
            .collect();
        imgproc::fill_convex_poly(&mut tex, &poly, Scalar::all(235.0), imgproc::LINE_AA, 0)?;
        for _ in 0..6 {
            let q = Pt::new(
                c.x_mm + rng.gen_range(-15.0..15.0),
                c.y_mm + rng.gen_range(-25.0..25.0),
            );
            imgproc::circle(
                &mut tex,
                to_tex(q),
                4,
                Scalar::all(40.0),
                -1,
                imgproc::LINE_AA,
                0,
            )?;
        }
    }
    if with_markers {
        let dict =
            opencv::aruco::get_predefined_dictionary(crate::field::markers::MARKER_DICTIONARY)?;
        let side = (crate::field::markers::MARKER_SIDE_MM * TEXTURE_PX_PER_MM).round() as i32;
        for id in 0..4 {
            let Some(c) = crate::field::markers::marker_corners_mm(id, field) else {
                continue;
            };
            let tl = to_tex(Pt::new(c[0][0], c[0][1]));
            // A white quiet zone a quarter of the marker wide, then the marker, upright.
            let q = side / 4;
            imgproc::rectangle(
                &mut tex,
                core::Rect::new(tl.x - q, tl.y - q, side + 2 * q, side + 2 * q),
                Scalar::all(250.0),
                -1,
                imgproc::LINE_8,
                0,
            )?;
            let mut m = Mat::default();
            opencv::aruco::draw_marker(&dict, id, side, &mut m, 1)?;
            let mut roi = Mat::roi_mut(&mut tex, core::Rect::new(tl.x, tl.y, side, side))?;
            m.copy_to(&mut roi)?;
        }
    }
    for (c, r) in hands {
        imgproc::circle(
            &mut tex,
            to_tex(*c),
            (r * TEXTURE_PX_PER_MM) as i32,
            Scalar::all(170.0),
            -1,
            imgproc::LINE_AA,
            0,
        )?;
    }
    // Texture pixel -> field mm -> undistorted image pixel.
    let tex_to_field = matrix_from_rows(&[
        [1.0 / TEXTURE_PX_PER_MM, 0.0, -TATAMI_HALF_MM[0]],
        [0.0, -1.0 / TEXTURE_PX_PER_MM, TATAMI_HALF_MM[1]],
        [0.0, 0.0, 1.0],
    ]);
    let hm = matrix_to_mat(&(cam.field_to_undistorted()? * tex_to_field))?;
    let mut img = Mat::default();
    let [w, hh] = cam.intrinsics.image_size;
    imgproc::warp_perspective(
        &tex,
        &mut img,
        &hm,
        Size::new(w as i32, hh as i32),
        imgproc::INTER_LINEAR,
        core::BORDER_CONSTANT,
        Scalar::all(60.0),
    )?;
    Ok(img)
}

/// Views of a ChArUco board through a camera with lens distortion: the board image (drawn
/// by OpenCV at `px_per_square`) is warped onto the board plane seen from each pose
/// (`rvec`, `tvec` in mm, the board centred at the plane's origin) and then distorted with
/// `cv::remap`. Gray frames of `intrinsics.image_size`.
pub fn board_views(
    board: &mut crate::field::charuco::Board,
    intrinsics: &Intrinsics,
    poses: &[([f64; 3], [f64; 3])],
) -> Result<Vec<Mat>, FieldError> {
    const PX_PER_SQUARE: i32 = 80;
    let margin = PX_PER_SQUARE / 2;
    let img = board.draw(PX_PER_SQUARE, margin)?;
    let mm_per_px = board.spec.square_mm / PX_PER_SQUARE as f64;
    let (bw, bh) = (img.cols() as f64, img.rows() as f64);
    let board_px_to_mm = matrix_from_rows(&[
        [mm_per_px, 0.0, -bw / 2.0 * mm_per_px],
        [0.0, mm_per_px, -bh / 2.0 * mm_per_px],
        [0.0, 0.0, 1.0],
    ]);
    let [w, h] = intrinsics.image_size;
    // Each distorted pixel's undistorted source, once for all views.
    let mut grid: Vec<[f64; 2]> = Vec::with_capacity((w * h) as usize);
    for v in 0..h {
        for u in 0..w {
            grid.push([u as f64, v as f64]);
        }
    }
    let src = intrinsics.undistort_px(&grid)?;
    let mut map_x =
        Mat::new_rows_cols_with_default(h as i32, w as i32, core::CV_32FC1, Scalar::all(0.0))?;
    let mut map_y = map_x.try_clone()?;
    for (i, p) in src.iter().enumerate() {
        let (r, c) = ((i as u32 / w) as i32, (i as u32 % w) as i32);
        *map_x.at_2d_mut::<f32>(r, c)? = p[0] as f32;
        *map_y.at_2d_mut::<f32>(r, c)? = p[1] as f32;
    }
    let mut out = Vec::new();
    for (rvec, tvec) in poses {
        let cam = Camera {
            intrinsics: intrinsics.clone(),
            rvec: *rvec,
            tvec: *tvec,
        };
        let hm = cam.field_to_undistorted()? * board_px_to_mm;
        let mut und = Mat::default();
        imgproc::warp_perspective(
            &img,
            &mut und,
            &matrix_to_mat(&hm)?,
            Size::new(w as i32, h as i32),
            imgproc::INTER_LINEAR,
            core::BORDER_CONSTANT,
            Scalar::all(200.0),
        )?;
        let mut dist = Mat::default();
        imgproc::remap(
            &und,
            &mut dist,
            &map_x,
            &map_y,
            imgproc::INTER_LINEAR,
            core::BORDER_CONSTANT,
            Scalar::all(200.0),
        )?;
        out.push(dist);
    }
    Ok(out)
}

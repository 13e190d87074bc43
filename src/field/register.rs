//! Registration of the field frame from the cards themselves, with no equipment: at the
//! end of memorisation 50 cards lie in six rows, and every card is manufactured to 52 x 73
//! mm. The card size is the metric anchor; the territory width, the gap and the row gaps
//! are *measured*, never assumed, because the layout check exists to question them.
//!
//! Fit: an initial similarity from the cards' own outlines; then Levenberg-Marquardt (the
//! `levenberg-marquardt` crate) over the homography with each card's rigid pose solved in
//! closed form (every card must map to
//! an exact 52 x 73 rectangle); then `cv::findHomography` with RANSAC over all card corners
//! against those rectangles; finally the frame is fixed: rows along x, y towards B with A
//! the player at the bottom of the image (the layout itself is symmetric under a half turn,
//! and each player's cards face that player, so the corner order cannot tell), origin
//! midway between the territories and between their outermost card edges. A quad's corners
//! may start anywhere: each is turned to agree with the field.

use crate::field::calibration::CardQuad;
use crate::field::error::FieldError;
use crate::field::map::{matrix_from_mat, FieldMap, Intrinsics};
use crate::rules::geometry::Pt;
use crate::rules::model::FieldSize;
use crate::util::{apply_homography, matrix_from_rows};
use levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt};
use nalgebra::{ArrayStorage, DVector, Dyn, Matrix3, OMatrix, SVector, VecStorage, U1, U8};
use opencv::calib3d;
use opencv::core::{Mat, Point2d, Vector};
use opencv::prelude::*;

/// Fewest cards that pin the homography and both territories.
pub const MIN_CARDS: usize = 6;
/// A corner further than this from its card's fitted rectangle is an outlier (RANSAC).
pub const RANSAC_THRESHOLD_MM: f64 = 3.0;
/// A card whose corners sit further than this (RMS) from its fitted rectangle is left out
/// of the fit: a misdetected quad, a card lifted or bent.
pub const CARD_OUTLIER_MM: f64 = 6.0;
/// Card centres within this distance across a row belong to the same row (rows are 83 mm
/// apart centre to centre).
pub const ROW_CLUSTER_MM: f64 = 30.0;
/// Rounds of "drop the cards that do not fit, solve again".
const OUTLIER_ROUNDS: usize = 5;
/// Relative step of the numeric Jacobian.
const JACOBIAN_STEP: f64 = 1e-6;

/// A card's pose in the field frame, fitted to its four corners.
#[derive(Debug, Clone, PartialEq)]
pub struct CardPose {
    pub x_mm: f64,
    pub y_mm: f64,
    pub angle_deg: f64,
    /// RMS distance of the card's mapped corners from its fitted rectangle.
    pub residual_mm: f64,
    /// All four corners were RANSAC inliers.
    pub inlier: bool,
    /// The quad's corners reordered (cyclic shift) to agree with the field's orientation.
    pub corner_shift: usize,
}

/// The field frame fitted to an image.
#[derive(Debug, Clone, PartialEq)]
pub struct Registration {
    pub map: FieldMap,
    /// One pose per input quad (empty for marker registration).
    pub cards: Vec<CardPose>,
    /// Corners that agree with the fit (RANSAC inliers) out of all used.
    pub corner_inliers: usize,
    pub corners_used: usize,
    /// RMS distance, over inlier corners, of the mapped corners from their rectangles or
    /// marker positions.
    pub reprojection_error_mm: f64,
}

impl Registration {
    /// Raw pixels -> field points.
    pub fn to_field(&self, px: &[[f64; 2]]) -> Result<Vec<Pt>, FieldError> {
        self.map.to_field(px)
    }
    /// Field points -> raw pixels.
    pub fn to_image(&self, pts: &[Pt]) -> Result<Vec<[f64; 2]>, FieldError> {
        self.map.to_image(pts)
    }
    pub fn image_to_field(&self) -> Matrix3<f64> {
        self.map.image_to_field
    }
}

/// Card corners in the card's own frame, the order of `CardQuad::corners_px`.
fn template(field: &FieldSize) -> [[f64; 2]; 4] {
    let (hw, hh) = (field.card_w_mm / 2.0, field.card_h_mm / 2.0);
    [[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]]
}

/// Rigid 2-D Procrustes: the rotation and centre that best lay `tpl` onto `pts`.
/// Returns (cx, cy, angle_rad, rms residual).
fn fit_rigid(pts: &[[f64; 2]; 4], tpl: &[[f64; 2]; 4]) -> (f64, f64, f64, f64) {
    let cx = pts.iter().map(|p| p[0]).sum::<f64>() / 4.0;
    let cy = pts.iter().map(|p| p[1]).sum::<f64>() / 4.0;
    let (mut s_cross, mut s_dot) = (0.0, 0.0);
    for (p, t) in pts.iter().zip(tpl) {
        let (dx, dy) = (p[0] - cx, p[1] - cy);
        s_cross += t[0] * dy - t[1] * dx;
        s_dot += t[0] * dx + t[1] * dy;
    }
    let a = s_cross.atan2(s_dot);
    let (s, c) = a.sin_cos();
    let ss: f64 = pts
        .iter()
        .zip(tpl)
        .map(|(p, t)| {
            let fx = cx + c * t[0] - s * t[1];
            let fy = cy + s * t[0] + c * t[1];
            (p[0] - fx).powi(2) + (p[1] - fy).powi(2)
        })
        .sum();
    (cx, cy, a, (ss / 4.0).sqrt())
}

fn rect_corners(cx: f64, cy: f64, a: f64, tpl: &[[f64; 2]; 4]) -> [[f64; 2]; 4] {
    let (s, c) = a.sin_cos();
    tpl.map(|t| [cx + c * t[0] - s * t[1], cy + s * t[0] + c * t[1]])
}

fn shifted(c: &[[f64; 2]; 4], k: usize) -> [[f64; 2]; 4] {
    [c[k % 4], c[(k + 1) % 4], c[(k + 2) % 4], c[(k + 3) % 4]]
}

fn wrap_pi(a: f64) -> f64 {
    let t = std::f64::consts::TAU;
    (a + std::f64::consts::PI).rem_euclid(t) - std::f64::consts::PI
}

/// Fits the field frame to card quadrilaterals (see the module doc).
///
/// `intrinsics`: when given, corners are undistorted first and the result maps raw pixels;
/// the image size for the fold check comes from it, else from the quads' extent.
pub fn register_from_cards(
    quads: &[CardQuad],
    intrinsics: Option<&Intrinsics>,
    field: &FieldSize,
) -> Result<Registration, FieldError> {
    // A card's corners, in the card frame's order, run anticlockwise on screen (negative
    // shoelace area with pixel y down) under any real view; the others are mirrored or
    // mislabelled and are left out.
    let finite_all: Vec<bool> = quads
        .iter()
        .map(|q| q.corners_px.iter().flatten().all(|v| v.is_finite()))
        .collect();
    let turn: Vec<f64> = quads.iter().map(|q| signed_area(&q.corners_px)).collect();
    let proper = turn
        .iter()
        .zip(&finite_all)
        .filter(|(a, f)| **f && **a < 0.0)
        .count();
    let mirrored = turn
        .iter()
        .zip(&finite_all)
        .filter(|(a, f)| **f && **a > 0.0)
        .count();
    if mirrored > proper {
        return Err(FieldError::BadHomography(format!(
            "it would fold the field over: {mirrored} of {} cards' corners turn the wrong way (a mirrored image, or corners not in the card frame's order)",
            proper + mirrored
        )));
    }
    let finite: Vec<bool> = finite_all
        .iter()
        .zip(&turn)
        .map(|(f, a)| *f && *a < 0.0)
        .collect();
    let usable = finite.iter().filter(|f| **f).count();
    if usable < MIN_CARDS {
        return Err(FieldError::TooFew {
            what: "cards",
            found: usable,
            needed: MIN_CARDS,
        });
    }
    let tpl = template(field);
    // Undistorted corners, y flipped so that a similarity (no reflection) can start the fit.
    let mut und: Vec<[[f64; 2]; 4]> = Vec::with_capacity(quads.len());
    for (q, ok) in quads.iter().zip(&finite) {
        let c = if *ok {
            match intrinsics {
                Some(k) => {
                    let u = k.undistort_px(&q.corners_px)?;
                    [u[0], u[1], u[2], u[3]]
                }
                None => q.corners_px,
            }
        } else {
            [[f64::NAN; 2]; 4]
        };
        und.push(c);
    }

    let h0 = initial_similarity(&und, &finite, &tpl)?;
    // Orient every quad like the majority: a detector may start a card's corners anywhere.
    let shifts: Vec<usize> = und
        .iter()
        .map(|c| {
            if !c[0][0].is_finite() {
                return 0;
            }
            (0..4)
                .min_by(|a, b| {
                    let fa = map_quad(&h0, &shifted(c, *a));
                    let fb = map_quad(&h0, &shifted(c, *b));
                    let ra = fit_rigid(&fa, &tpl);
                    let rb = fit_rigid(&fb, &tpl);
                    (wrap_pi(ra.2).abs() + ra.3 / 100.0)
                        .total_cmp(&(wrap_pi(rb.2).abs() + rb.3 / 100.0))
                })
                .unwrap_or(0)
        })
        .collect();
    let cards: Vec<[[f64; 2]; 4]> = und
        .iter()
        .zip(&shifts)
        .map(|(c, k)| shifted(c, *k))
        .collect();

    // Loose first (the start may be far off), then tight so misdetected cards stop pulling.
    let h_lm = refine_lm(h0, &cards, &finite, &tpl, 4.0 * CARD_OUTLIER_MM);
    let h_lm = refine_lm(h_lm, &cards, &finite, &tpl, CARD_OUTLIER_MM);

    // RANSAC over all corners against the rectangles the refined fit lays on each card.
    let mut src: Vector<Point2d> = Vector::new();
    let mut dst: Vector<Point2d> = Vector::new();
    let mut owner: Vec<usize> = Vec::new();
    for (i, c) in cards.iter().enumerate() {
        if !finite[i] {
            continue;
        }
        let m = map_quad(&h_lm, c);
        let (cx, cy, a, _) = fit_rigid(&m, &tpl);
        for (p, t) in c.iter().zip(rect_corners(cx, cy, a, &tpl)) {
            src.push(Point2d::new(p[0], p[1]));
            dst.push(Point2d::new(t[0], t[1]));
            owner.push(i);
        }
    }
    let mut mask = Mat::default();
    let h_mat =
        calib3d::find_homography(&src, &dst, &mut mask, calib3d::RANSAC, RANSAC_THRESHOLD_MM)?;
    if h_mat.empty() {
        return Err(FieldError::BadHomography(
            "no homography agrees with the cards".into(),
        ));
    }
    // RANSAC's mask comes from its best minimal sample; judge the corners again against the
    // refined model and refit on those that agree (least squares, then refinement).
    let agree = |h: &Matrix3<f64>| -> Vec<bool> {
        src.iter()
            .zip(dst.iter())
            .map(|(s, d)| {
                let q = apply_homography(h, [s.x, s.y]);
                (q[0] - d.x).hypot(q[1] - d.y) <= RANSAC_THRESHOLD_MM
            })
            .collect()
    };
    let mut good = agree(&normalise(matrix_from_mat(&h_mat)?));
    let (s_in, d_in): (Vector<Point2d>, Vector<Point2d>) = src
        .iter()
        .zip(dst.iter())
        .zip(&good)
        .filter(|(_, g)| **g)
        .map(|(p, _)| p)
        .unzip();
    let mut h_r = normalise(matrix_from_mat(&h_mat)?);
    if s_in.len() >= 4 * MIN_CARDS {
        let refit = calib3d::find_homography(&s_in, &d_in, &mut Mat::default(), 0, 0.0)?;
        if !refit.empty() {
            h_r = normalise(matrix_from_mat(&refit)?);
            good = agree(&h_r);
        }
    }
    let mut corner_ok = vec![true; quads.len()];
    for (j, &i) in owner.iter().enumerate() {
        if !good[j] {
            corner_ok[i] = false;
        }
    }
    for (i, ok) in finite.iter().enumerate() {
        if !ok {
            corner_ok[i] = false;
        }
    }

    // The final fit uses only the cards RANSAC kept.
    let h_r = if corner_ok.iter().filter(|k| **k).count() >= MIN_CARDS {
        refine_lm(h_r, &cards, &corner_ok, &tpl, CARD_OUTLIER_MM)
    } else {
        h_r
    };
    let (h, measured) = fix_gauge(h_r, &cards, &corner_ok, &tpl, field)?;

    let image_size = match intrinsics {
        Some(k) => k.image_size,
        None => extent(quads),
    };
    let map = FieldMap::new(h, intrinsics.cloned(), measured, image_size)?;

    let mut poses = Vec::with_capacity(quads.len());
    let (mut ss, mut n_in, mut n_used) = (0.0, 0usize, 0usize);
    for (i, c) in cards.iter().enumerate() {
        if !finite[i] {
            poses.push(CardPose {
                x_mm: f64::NAN,
                y_mm: f64::NAN,
                angle_deg: f64::NAN,
                residual_mm: f64::NAN,
                inlier: false,
                corner_shift: 0,
            });
            continue;
        }
        let m = map_quad(&h, c);
        let (cx, cy, a, rms) = fit_rigid(&m, &tpl);
        n_used += 4;
        let inlier = corner_ok[i] && rms <= CARD_OUTLIER_MM;
        if inlier {
            ss += rms * rms * 4.0;
            n_in += 4;
        }
        poses.push(CardPose {
            x_mm: cx,
            y_mm: cy,
            angle_deg: wrap_pi(a).to_degrees(),
            residual_mm: rms,
            inlier,
            corner_shift: shifts[i],
        });
    }
    Ok(Registration {
        map,
        cards: poses,
        corner_inliers: n_in,
        corners_used: n_used,
        reprojection_error_mm: if n_in > 0 {
            (ss / n_in as f64).sqrt()
        } else {
            f64::NAN
        },
    })
}

/// Shoelace area in pixel coordinates: negative when the corners run anticlockwise on screen.
fn signed_area(c: &[[f64; 2]; 4]) -> f64 {
    (0..4)
        .map(|i| {
            let (a, b) = (c[i], c[(i + 1) % 4]);
            a[0] * b[1] - b[0] * a[1]
        })
        .sum::<f64>()
        / 2.0
}

fn map_quad(h: &Matrix3<f64>, c: &[[f64; 2]; 4]) -> [[f64; 2]; 4] {
    c.map(|p| apply_homography(h, p))
}

fn normalise(h: Matrix3<f64>) -> Matrix3<f64> {
    let s = h[(2, 2)];
    if s.abs() > f64::EPSILON {
        h / s
    } else {
        h
    }
}

fn extent(quads: &[CardQuad]) -> [u32; 2] {
    let (mut w, mut h) = (1.0f64, 1.0f64);
    for p in quads.iter().flat_map(|q| q.corners_px.iter()) {
        if p[0].is_finite() && p[1].is_finite() {
            w = w.max(p[0]);
            h = h.max(p[1]);
        }
    }
    [w.ceil() as u32, h.ceil() as u32]
}

/// Image (undistorted px) -> mm as a reflection-similarity: median card scale, the
/// majority card orientation, origin at the cards' centroid.
fn initial_similarity(
    cards: &[[[f64; 2]; 4]],
    finite: &[bool],
    tpl: &[[f64; 2]; 4],
) -> Result<Matrix3<f64>, FieldError> {
    let mut scales = Vec::new();
    let mut angles = Vec::new();
    let (mut sx, mut sy, mut n) = (0.0, 0.0, 0.0);
    let tpl_norm: f64 = tpl
        .iter()
        .map(|t| t[0] * t[0] + t[1] * t[1])
        .sum::<f64>()
        .sqrt();
    for (c, ok) in cards.iter().zip(finite) {
        if !ok {
            continue;
        }
        let flipped = c.map(|p| [p[0], -p[1]]);
        let (cx, cy, a, _) = fit_rigid(&flipped, tpl);
        let spread: f64 = flipped
            .iter()
            .map(|p| (p[0] - cx).powi(2) + (p[1] - cy).powi(2))
            .sum::<f64>()
            .sqrt();
        if spread > 0.0 {
            scales.push(tpl_norm / spread);
            angles.push(a);
        }
        sx += cx;
        sy += cy;
        n += 1.0;
    }
    if scales.len() < MIN_CARDS {
        return Err(FieldError::TooFew {
            what: "cards with a visible outline",
            found: scales.len(),
            needed: MIN_CARDS,
        });
    }
    scales.sort_by(f64::total_cmp);
    let scale = scales[scales.len() / 2];
    // The orientation most cards agree with (within 20 degrees), then their circular mean.
    let agree = |a: f64| {
        angles
            .iter()
            .filter(|b| wrap_pi(*b - a).abs() < 0.35)
            .count()
    };
    let best = angles
        .iter()
        .copied()
        .max_by_key(|a| agree(*a))
        .unwrap_or(0.0);
    let (mut ss, mut cs) = (0.0, 0.0);
    for a in angles.iter().filter(|b| wrap_pi(*b - best).abs() < 0.35) {
        ss += a.sin();
        cs += a.cos();
    }
    let rot = ss.atan2(cs);
    // Card frame = R(rot) * flipped image; the field frame starts as the card frame.
    let (s, c) = (-rot).sin_cos();
    let (mx, my) = (sx / n, sy / n);
    // p_mm = scale * R(-rot) * ([u, -v] - [mx, my])
    let h = matrix_from_rows(&[
        [scale * c, scale * s, -scale * (c * mx - s * my)],
        [scale * s, -scale * c, -scale * (s * mx + c * my)],
        [0.0, 0.0, 1.0],
    ]);
    Ok(face_a_to_image_bottom(h))
}

/// The layout looks the same turned by a half turn; which side is A is a convention: A is
/// the player at the bottom of the image (or, for a field lying sideways, at the left).
fn face_a_to_image_bottom(mut h: Matrix3<f64>) -> Matrix3<f64> {
    let Some(inv) = h.try_inverse() else {
        return h;
    };
    let o = apply_homography(&inv, [0.0, 0.0]);
    let up = apply_homography(&inv, [0.0, 100.0]);
    let (du, dv) = (up[0] - o[0], up[1] - o[1]);
    let flip = if dv.abs() >= du.abs() {
        dv > 0.0
    } else {
        du < 0.0
    };
    if flip {
        h.fixed_rows_mut::<2>(0).neg_mut();
    }
    h
}

/// Residuals of every card against its best rigid rectangle, cards over the outlier
/// limit dropped; `keep` records which cards were used.
fn residuals(
    h: &Matrix3<f64>,
    cards: &[[[f64; 2]; 4]],
    keep: &[bool],
    tpl: &[[f64; 2]; 4],
) -> Vec<f64> {
    let mut r = Vec::with_capacity(cards.len() * 8);
    for (c, k) in cards.iter().zip(keep) {
        if !k {
            continue;
        }
        let m = map_quad(h, c);
        let (cx, cy, a, _) = fit_rigid(&m, tpl);
        for (p, f) in m.iter().zip(rect_corners(cx, cy, a, tpl)) {
            r.push(p[0] - f[0]);
            r.push(p[1] - f[1]);
        }
    }
    r
}

type Vector8 = SVector<f64, 8>;

/// The homography as 8 parameters of order one: `image_to_field = G * norm`, with `norm`
/// centring and scaling the image points and G's first two rows divided by `mm_scale`.
#[derive(Clone, Copy)]
struct HomographyParams {
    norm: Matrix3<f64>,
    norm_inv: Matrix3<f64>,
    mm_scale: f64,
}

impl HomographyParams {
    fn new(cards: &[[[f64; 2]; 4]], finite: &[bool], h0: &Matrix3<f64>) -> Self {
        let pts: Vec<[f64; 2]> = cards
            .iter()
            .zip(finite)
            .filter(|(_, f)| **f)
            .flat_map(|(c, _)| c.iter().copied())
            .collect();
        let n = pts.len().max(1) as f64;
        let (mx, my) = (
            pts.iter().map(|p| p[0]).sum::<f64>() / n,
            pts.iter().map(|p| p[1]).sum::<f64>() / n,
        );
        let sc = pts
            .iter()
            .map(|p| (p[0] - mx).abs().max((p[1] - my).abs()))
            .fold(1.0, f64::max);
        let norm_inv = matrix_from_rows(&[[sc, 0.0, mx], [0.0, sc, my], [0.0, 0.0, 1.0]]);
        let norm = matrix_from_rows(&[
            [1.0 / sc, 0.0, -mx / sc],
            [0.0, 1.0 / sc, -my / sc],
            [0.0, 0.0, 1.0],
        ]);
        let g0 = normalise(h0 * norm_inv);
        let mm_scale = g0[(0, 0)].abs().max(g0[(0, 1)].abs()).max(1e-9);
        HomographyParams {
            norm,
            norm_inv,
            mm_scale,
        }
    }

    fn params_of(&self, h: &Matrix3<f64>) -> Vector8 {
        let g = normalise(h * self.norm_inv);
        let s = self.mm_scale;
        Vector8::from([
            g[(0, 0)] / s,
            g[(0, 1)] / s,
            g[(0, 2)] / s,
            g[(1, 0)] / s,
            g[(1, 1)] / s,
            g[(1, 2)] / s,
            g[(2, 0)],
            g[(2, 1)],
        ])
    }

    fn homography_of(&self, p: &Vector8) -> Matrix3<f64> {
        let s = self.mm_scale;
        let g = matrix_from_rows(&[
            [p[0] * s, p[1] * s, p[2] * s],
            [p[3] * s, p[4] * s, p[5] * s],
            [p[6], p[7], 1.0],
        ]);
        g * self.norm
    }
}

/// The least-squares problem of `refine_lm`: every kept card's mapped corners against the
/// rigid 52 x 73 rectangle fitted to them (the poses are solved inside the residual).
struct CardRectangles<'a> {
    params: Vector8,
    frame: HomographyParams,
    cards: &'a [[[f64; 2]; 4]],
    keep: &'a [bool],
    tpl: &'a [[f64; 2]; 4],
}

impl CardRectangles<'_> {
    fn residuals_at(&self, p: &Vector8) -> DVector<f64> {
        DVector::from_vec(residuals(
            &self.frame.homography_of(p),
            self.cards,
            self.keep,
            self.tpl,
        ))
    }
}

impl LeastSquaresProblem<f64, Dyn, U8> for CardRectangles<'_> {
    type ResidualStorage = VecStorage<f64, Dyn, U1>;
    type JacobianStorage = VecStorage<f64, Dyn, U8>;
    type ParameterStorage = ArrayStorage<f64, 8, 1>;

    fn set_params(&mut self, x: &Vector8) {
        self.params = *x;
    }

    fn params(&self) -> Vector8 {
        self.params
    }

    fn residuals(&self) -> Option<DVector<f64>> {
        Some(self.residuals_at(&self.params))
    }

    /// Forward differences: the residual solves a pose per card, which has no handy
    /// closed-form derivative.
    fn jacobian(&self) -> Option<OMatrix<f64, Dyn, U8>> {
        let r0 = self.residuals_at(&self.params);
        let mut jac = OMatrix::<f64, Dyn, U8>::zeros(r0.len());
        for k in 0..8 {
            let mut p = self.params;
            let step = JACOBIAN_STEP * p[k].abs().max(1e-3);
            p[k] += step;
            let r1 = self.residuals_at(&p);
            jac.set_column(k, &((r1 - &r0) / step));
        }
        Some(jac)
    }
}

/// Refines the homography so that every card maps to a 52 x 73 mm rectangle: the
/// `levenberg-marquardt` crate (MINPACK's algorithm) over the homography's 8 free entries.
/// Cards whose corners sit further than `outlier_mm` (RMS) from their rectangle are left
/// out, judged again after each solve until the set stops changing. The three motions
/// that leave every card's shape alone (field rotation and translation) are free
/// directions of the problem; `fix_gauge` fixes the frame afterwards.
fn refine_lm(
    h0: Matrix3<f64>,
    cards: &[[[f64; 2]; 4]],
    finite: &[bool],
    tpl: &[[f64; 2]; 4],
    outlier_mm: f64,
) -> Matrix3<f64> {
    let frame = HomographyParams::new(cards, finite, &h0);
    let mut h = h0;
    let mut keep: Vec<bool> = Vec::new();
    for _ in 0..OUTLIER_ROUNDS {
        let all = residuals(&h, cards, finite, tpl);
        let mut next = finite.to_vec();
        let mut j = 0;
        for (i, f) in finite.iter().enumerate() {
            if *f {
                let rms = (all[j..j + 8].iter().map(|v| v * v).sum::<f64>() / 4.0).sqrt();
                next[i] = rms <= outlier_mm;
                j += 8;
            }
        }
        if next.iter().filter(|k| **k).count() < MIN_CARDS {
            next = finite.to_vec();
        }
        if next == keep {
            break;
        }
        keep = next;
        let problem = CardRectangles {
            params: frame.params_of(&h),
            frame,
            cards,
            keep: &keep,
            tpl,
        };
        let (solved, report) = LevenbergMarquardt::new().minimize(problem);
        let h1 = normalise(frame.homography_of(&solved.params));
        if h1.iter().all(|v| v.is_finite()) && report.objective_function.is_finite() {
            h = h1;
        }
    }
    h
}

/// Rotates and translates the fitted frame onto the contract's field frame and measures the
/// field's sizes from the cards (see `layout` for what each measurement means).
fn fix_gauge(
    h: Matrix3<f64>,
    cards: &[[[f64; 2]; 4]],
    ok: &[bool],
    tpl: &[[f64; 2]; 4],
    field: &FieldSize,
) -> Result<(Matrix3<f64>, FieldSize), FieldError> {
    let poses: Vec<(f64, f64, f64)> = cards
        .iter()
        .zip(ok)
        .filter(|(_, k)| **k)
        .map(|(c, _)| {
            let (x, y, a, _) = fit_rigid(&map_quad(&h, c), tpl);
            (x, y, a)
        })
        .collect();
    if poses.len() < MIN_CARDS {
        return Err(FieldError::TooFew {
            what: "cards that agree with one another",
            found: poses.len(),
            needed: MIN_CARDS,
        });
    }
    // Rows run along x: turn by the cards' median angle (cards are laid square to the rows;
    // every quad was already turned to agree with the field within a quarter turn).
    let mut angs: Vec<f64> = poses.iter().map(|p| wrap_pi(p.2)).collect();
    angs.sort_by(f64::total_cmp);
    let rot = angs[angs.len() / 2];
    let turn = |h: &Matrix3<f64>, a: f64| -> Matrix3<f64> {
        let (s, c) = (-a).sin_cos();
        matrix_from_rows(&[[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) * h
    };
    let in_mm = |h: &Matrix3<f64>| -> Vec<[[f64; 2]; 4]> {
        cards
            .iter()
            .zip(ok)
            .filter(|(_, k)| **k)
            .map(|(c, _)| map_quad(h, c))
            .collect()
    };
    let mut h1 = turn(&h, rot);
    // Then by the rows' own direction, which single cards' turns only approximate.
    if let Some(slope) = crate::field::layout::row_slope(&in_mm(&h1), field.card_h_mm) {
        h1 = turn(&h1, slope.atan());
    }
    let quads_mm = in_mm(&h1);
    let m = crate::field::layout::measure_quads_mm(&quads_mm, field).ok_or_else(|| {
        FieldError::NotAField("the cards do not fall into two territories".into())
    })?;
    let t = matrix_from_rows(&[
        [1.0, 0.0, -m.origin_x_mm],
        [0.0, 1.0, -m.origin_y_mm],
        [0.0, 0.0, 1.0],
    ]);
    Ok((normalise(t * h1), m.field))
}

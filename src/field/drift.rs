//! Re-registration during the match: the camera may be knocked or sag. The tracker holds a
//! downscaled reference frame taken when the field was registered and, on each frame it is
//! given, measures how the static content (tatami, resting cards) moved, by phase
//! correlation in a grid of tiles; a RANSAC similarity over the tile shifts ignores tiles
//! where hands move. The registration is then corrected without a restart.
//! Reads gray frames; owns no video I/O. Call it every few frames (see `docs/field.md`).

use crate::field::error::FieldError;
use crate::field::map::FieldMap;
use crate::field::register::Registration;
use crate::util::apply_homography;
use nalgebra::Matrix3;
use opencv::core::{self, Mat, Point2d, Rect, Size, Vector};
use opencv::prelude::*;
use opencv::{calib3d, imgproc};

/// How often to call `update` (at most): a shake is corrected on the first update after
/// it, so within this interval. At 240 fps: every 24th frame.
pub const DRIFT_INTERVAL_S: f64 = 0.1;
/// Width of the frame the tracker works on; 1280x720 input is halved.
pub const DRIFT_WORK_WIDTH_PX: i32 = 640;
/// Tiles across and down.
pub const DRIFT_TILES_X: i32 = 4;
pub const DRIFT_TILES_Y: i32 = 3;
/// A tile's phase-correlation peak below this is texture too weak (or too changed) to trust.
pub const DRIFT_MIN_RESPONSE: f64 = 0.05;
/// Tiles whose shift disagrees with the consensus by more than this (full-resolution pixels)
/// are taken to hold motion (hands, a card in flight).
pub const DRIFT_RANSAC_PX: f64 = 1.0;
/// Fewest agreeing tiles for a correction.
pub const DRIFT_MIN_TILES: usize = 4;

/// What one update measured.
#[derive(Debug, Clone, PartialEq)]
pub struct DriftEstimate {
    /// Reference pixel -> current pixel (full resolution, raw pixels), a similarity.
    pub transform: Matrix3<f64>,
    /// Translation of the image centre, pixels.
    pub shift_px: [f64; 2],
    pub tiles_agreeing: usize,
    /// False when too few tiles agreed: the previous correction stays.
    pub accepted: bool,
}

pub struct DriftTracker {
    reference: Registration,
    current: Registration,
    reference_small: Mat,
    window: Mat,
    tiles: Vec<Rect>,
    /// Full-resolution pixels per work pixel.
    scale: f64,
    size: Size,
    last: Option<DriftEstimate>,
}

fn to_small(gray: &Mat, work: Size) -> Result<Mat, FieldError> {
    let g = if gray.channels() == 1 {
        gray.try_clone()?
    } else {
        let mut g = Mat::default();
        imgproc::cvt_color_def(gray, &mut g, imgproc::COLOR_BGR2GRAY)?;
        g
    };
    let mut small = Mat::default();
    imgproc::resize(&g, &mut small, work, 0.0, 0.0, imgproc::INTER_LINEAR)?;
    let mut f = Mat::default();
    small.convert_to(&mut f, core::CV_32F, 1.0, 0.0)?;
    Ok(f)
}

impl DriftTracker {
    /// `reference_frame`: a frame (gray or BGR) taken when `reference` was registered.
    pub fn new(reference_frame: &Mat, reference: Registration) -> Result<Self, FieldError> {
        if reference_frame.empty() {
            return Err(FieldError::Frame("the reference frame is empty".into()));
        }
        let size = reference_frame.size()?;
        let scale = size.width as f64 / DRIFT_WORK_WIDTH_PX as f64;
        let work = Size::new(
            DRIFT_WORK_WIDTH_PX,
            ((size.height as f64 / scale).round() as i32).max(DRIFT_TILES_Y * 8),
        );
        let (tw, th) = (work.width / DRIFT_TILES_X, work.height / DRIFT_TILES_Y);
        let mut tiles = Vec::new();
        for ty in 0..DRIFT_TILES_Y {
            for tx in 0..DRIFT_TILES_X {
                tiles.push(Rect::new(tx * tw, ty * th, tw, th));
            }
        }
        let mut window = Mat::default();
        imgproc::create_hanning_window(&mut window, Size::new(tw, th), core::CV_32F)?;
        Ok(DriftTracker {
            current: reference.clone(),
            reference,
            reference_small: to_small(reference_frame, work)?,
            window,
            tiles,
            scale,
            size,
            last: None,
        })
    }

    /// The registration corrected for the drift measured so far.
    pub fn registration(&self) -> &Registration {
        &self.current
    }

    pub fn last_estimate(&self) -> Option<&DriftEstimate> {
        self.last.as_ref()
    }

    /// Measures the drift of `frame` against the reference and corrects the registration.
    pub fn update(&mut self, frame: &Mat) -> Result<DriftEstimate, FieldError> {
        if frame.size()? != self.size {
            return Err(FieldError::Frame(format!(
                "frame is {}x{}, the reference was {}x{}",
                frame.cols(),
                frame.rows(),
                self.size.width,
                self.size.height
            )));
        }
        let small = to_small(frame, self.reference_small.size()?)?;
        let mut from: Vector<Point2d> = Vector::new();
        let mut to: Vector<Point2d> = Vector::new();
        for t in &self.tiles {
            let a = Mat::roi(&self.reference_small, *t)?.try_clone()?;
            let b = Mat::roi(&small, *t)?.try_clone()?;
            let mut response = 0.0;
            let d = imgproc::phase_correlate(&a, &b, &self.window, Some(&mut response))?;
            if response < DRIFT_MIN_RESPONSE || !d.x.is_finite() || !d.y.is_finite() {
                continue;
            }
            let cx = (t.x as f64 + t.width as f64 / 2.0) * self.scale;
            let cy = (t.y as f64 + t.height as f64 / 2.0) * self.scale;
            from.push(Point2d::new(cx, cy));
            to.push(Point2d::new(cx + d.x * self.scale, cy + d.y * self.scale));
        }
        let keep = |me: &mut Self, n: usize| {
            let est = DriftEstimate {
                transform: me
                    .last
                    .as_ref()
                    .map_or_else(Matrix3::identity, |l| l.transform),
                shift_px: me.last.as_ref().map_or([0.0, 0.0], |l| l.shift_px),
                tiles_agreeing: n,
                accepted: false,
            };
            est
        };
        if from.len() < DRIFT_MIN_TILES {
            return Ok(keep(self, from.len()));
        }
        // Work in undistorted pixels when the lens is known: the homography lives there.
        let (from_u, to_u) = match &self.reference.map.intrinsics {
            Some(k) => {
                let f: Vec<[f64; 2]> = from.iter().map(|p| [p.x, p.y]).collect();
                let t: Vec<[f64; 2]> = to.iter().map(|p| [p.x, p.y]).collect();
                let conv = |v: Vec<[f64; 2]>| -> Vector<Point2d> {
                    v.into_iter().map(|p| Point2d::new(p[0], p[1])).collect()
                };
                (conv(k.undistort_px(&f)?), conv(k.undistort_px(&t)?))
            }
            None => (from.clone(), to.clone()),
        };
        let mut inliers = Mat::default();
        let a = calib3d::estimate_affine_partial_2d(
            &from_u,
            &to_u,
            &mut inliers,
            calib3d::RANSAC,
            DRIFT_RANSAC_PX,
            2000,
            0.99,
            10,
        )?;
        let agreeing = (0..inliers.rows())
            .filter(|i| inliers.at::<u8>(*i).map(|v| *v != 0).unwrap_or(false))
            .count();
        if a.empty() || agreeing < DRIFT_MIN_TILES {
            return Ok(keep(self, agreeing));
        }
        let mut t = Matrix3::identity();
        for i in 0..2 {
            for j in 0..3 {
                t[(i, j)] = *a.at_2d::<f64>(i as i32, j as i32)?;
            }
        }
        let inv = t
            .try_inverse()
            .ok_or_else(|| FieldError::Frame("drift transform is singular".into()))?;
        let h = self.reference.map.image_to_field * inv;
        let [w, hgt] = [self.size.width as u32, self.size.height as u32];
        let map = FieldMap::new(
            h,
            self.reference.map.intrinsics.clone(),
            self.reference.map.field.clone(),
            [w, hgt],
        )?;
        self.current = Registration {
            map,
            ..self.reference.clone()
        };
        let c = [w as f64 / 2.0, hgt as f64 / 2.0];
        let moved = apply_homography(&t, c);
        let est = DriftEstimate {
            transform: t,
            shift_px: [moved[0] - c[0], moved[1] - c[1]],
            tiles_agreeing: agreeing,
            accepted: true,
        };
        self.last = Some(est.clone());
        Ok(est)
    }
}

//! Camera intrinsics and lens distortion from a printed ChArUco board (OpenCV 4.6 contrib
//! `aruco`): the board's spec (`calibration/board.json`), its printable image, and the
//! calibration from board views in a video or a folder of images.

use crate::field::error::FieldError;
use crate::field::map::{matrix_from_mat, Intrinsics};
use opencv::core::{self, Mat, Point2f, Ptr, Size, Vector};
use opencv::prelude::*;
use opencv::{aruco, imgproc};
use serde::{Deserialize, Serialize};

/// A view is used when at least this many chessboard corners are found in it.
pub const MIN_CORNERS_PER_VIEW: usize = 8;
/// Fewest usable views: fewer leave focal length and distortion poorly determined.
pub const MIN_VIEWS: usize = 5;
/// k3 is held at zero: an overhead lens's distortion is described by k1, k2 (and the
/// tangential terms), and a free k3 extrapolates wildly in corners no view covered.
pub const CALIBRATION_FLAGS: i32 = opencv::calib3d::CALIB_FIX_K3;
/// Most views read from a video (spread evenly over it); more only slows the solver.
pub const MAX_VIDEO_VIEWS: usize = 60;

/// The printed board (`calibration/board.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoardSpec {
    pub squares_x: i32,
    pub squares_y: i32,
    /// As printed: measure one square of the print and write it here.
    pub square_mm: f64,
    pub marker_mm: f64,
    /// An OpenCV predefined dictionary name, e.g. "DICT_5X5_100".
    pub dictionary: String,
}

fn dictionary(name: &str) -> Option<aruco::PREDEFINED_DICTIONARY_NAME> {
    use aruco::PREDEFINED_DICTIONARY_NAME as D;
    Some(match name {
        "DICT_4X4_50" => D::DICT_4X4_50,
        "DICT_4X4_100" => D::DICT_4X4_100,
        "DICT_4X4_250" => D::DICT_4X4_250,
        "DICT_5X5_50" => D::DICT_5X5_50,
        "DICT_5X5_100" => D::DICT_5X5_100,
        "DICT_5X5_250" => D::DICT_5X5_250,
        "DICT_6X6_50" => D::DICT_6X6_50,
        "DICT_6X6_100" => D::DICT_6X6_100,
        "DICT_6X6_250" => D::DICT_6X6_250,
        _ => return None,
    })
}

/// The board and its dictionary, as OpenCV objects.
pub struct Board {
    pub spec: BoardSpec,
    pub board: Ptr<aruco::CharucoBoard>,
    pub dict: Ptr<aruco::Dictionary>,
}

impl Board {
    /// Checks the spec (problems are named after its fields) and builds the board.
    pub fn new(spec: &BoardSpec) -> Result<Self, FieldError> {
        let bad = |m: String| Err(FieldError::Calibration(m));
        if spec.squares_x < 3 || spec.squares_y < 3 {
            return bad(format!(
                "squares_x and squares_y must be at least 3 (got {} x {})",
                spec.squares_x, spec.squares_y
            ));
        }
        if !(spec.square_mm > 0.0 && spec.marker_mm > 0.0 && spec.marker_mm < spec.square_mm) {
            return bad(format!(
                "marker_mm ({}) must be positive and smaller than square_mm ({})",
                spec.marker_mm, spec.square_mm
            ));
        }
        let Some(d) = dictionary(&spec.dictionary) else {
            return bad(format!(
                "dictionary \"{}\" is not an OpenCV predefined dictionary",
                spec.dictionary
            ));
        };
        let dict = aruco::get_predefined_dictionary(d)?;
        let markers = spec.squares_x * spec.squares_y / 2;
        if markers > dict.bytes_list().rows() {
            return bad(format!(
                "{} needs {markers} markers, dictionary {} has {}",
                "the board",
                spec.dictionary,
                dict.bytes_list().rows()
            ));
        }
        let board = aruco::CharucoBoard::create(
            spec.squares_x,
            spec.squares_y,
            spec.square_mm as f32,
            spec.marker_mm as f32,
            &dict,
        )?;
        Ok(Board {
            spec: spec.clone(),
            board,
            dict,
        })
    }

    /// The board image at `px_per_square` pixels a square, with `margin_px` white around it.
    pub fn draw(&mut self, px_per_square: i32, margin_px: i32) -> Result<Mat, FieldError> {
        let size = Size::new(
            self.spec.squares_x * px_per_square + 2 * margin_px,
            self.spec.squares_y * px_per_square + 2 * margin_px,
        );
        let mut img = Mat::default();
        self.board.draw(size, &mut img, margin_px, 1)?;
        Ok(img)
    }

    /// Chessboard corners found in one image: (corners, ids).
    pub fn find_corners(&self, image: &Mat) -> Result<(Vector<Point2f>, Vector<i32>), FieldError> {
        let gray = if image.channels() == 1 {
            image.try_clone()?
        } else {
            let mut g = Mat::default();
            imgproc::cvt_color_def(image, &mut g, imgproc::COLOR_BGR2GRAY)?;
            g
        };
        let mut marker_corners: Vector<Vector<Point2f>> = Vector::new();
        let mut marker_ids: Vector<i32> = Vector::new();
        aruco::detect_markers_def(&gray, &self.dict, &mut marker_corners, &mut marker_ids)?;
        let mut corners: Vector<Point2f> = Vector::new();
        let mut ids: Vector<i32> = Vector::new();
        if marker_ids.len() >= 2 {
            aruco::interpolate_corners_charuco_def(
                &marker_corners,
                &marker_ids,
                &gray,
                &self.board,
                &mut corners,
                &mut ids,
            )?;
        }
        Ok((corners, ids))
    }
}

/// The result of a calibration.
#[derive(Debug, Clone, PartialEq)]
pub struct CharucoCalibration {
    pub intrinsics: Intrinsics,
    /// RMS reprojection error over every corner used, pixels.
    pub reprojection_error_px: f64,
    pub views_used: usize,
    pub frames_read: usize,
}

/// Calibrates from a sequence of frames (the caller reports unreadable ones).
pub fn calibrate(
    board: &Board,
    frames: impl IntoIterator<Item = Mat>,
) -> Result<CharucoCalibration, FieldError> {
    let mut all_corners: Vector<Vector<Point2f>> = Vector::new();
    let mut all_ids: Vector<Vector<i32>> = Vector::new();
    let mut size: Option<Size> = None;
    let mut frames_read = 0;
    let mut boards_seen = 0;
    for f in frames {
        frames_read += 1;
        let s = f.size()?;
        match size {
            None => size = Some(s),
            Some(s0) if s0 != s => {
                return Err(FieldError::Calibration(format!(
                    "frame {frames_read} is {}x{}, earlier frames are {}x{}",
                    s.width, s.height, s0.width, s0.height
                )))
            }
            _ => {}
        }
        let (c, ids) = board.find_corners(&f)?;
        if !c.is_empty() {
            boards_seen += 1;
        }
        if c.len() >= MIN_CORNERS_PER_VIEW {
            all_corners.push(c);
            all_ids.push(ids);
        }
    }
    let Some(size) = size else {
        return Err(FieldError::Calibration("no frames could be read".into()));
    };
    if boards_seen == 0 {
        return Err(FieldError::Calibration(format!(
            "the board was not found in any of {frames_read} frames (does --board match the printed board?)"
        )));
    }
    if all_corners.len() < MIN_VIEWS {
        return Err(FieldError::Calibration(format!(
            "too few board views: {} of {frames_read} frames show at least {MIN_CORNERS_PER_VIEW} board corners, {MIN_VIEWS} are needed (tilt the board in several directions)",
            all_corners.len()
        )));
    }
    let mut k = Mat::default();
    let mut d = Mat::default();
    let mut rvecs: Vector<Mat> = Vector::new();
    let mut tvecs: Vector<Mat> = Vector::new();
    let rms = aruco::calibrate_camera_charuco(
        &all_corners,
        &all_ids,
        &board.board,
        size,
        &mut k,
        &mut d,
        &mut rvecs,
        &mut tvecs,
        CALIBRATION_FLAGS,
        core::TermCriteria::new(
            core::TermCriteria_COUNT + core::TermCriteria_EPS,
            100,
            f64::EPSILON,
        )?,
    )?;
    let camera_matrix = matrix_from_mat(&k)?;
    let mut dist = Vec::new();
    let d = d.reshape(1, 1)?;
    for j in 0..d.cols().min(5) {
        dist.push(*d.at_2d::<f64>(0, j)?);
    }
    if !rms.is_finite() || camera_matrix.iter().any(|v| !v.is_finite()) {
        return Err(FieldError::Calibration(
            "the calibration did not converge (views too similar?)".into(),
        ));
    }
    Ok(CharucoCalibration {
        intrinsics: Intrinsics {
            image_size: [size.width as u32, size.height as u32],
            camera_matrix,
            dist_coeffs: dist,
        },
        reprojection_error_px: rms,
        views_used: all_corners.len(),
        frames_read,
    })
}

//! Cards from pixels: picks the still frames before the first reading, finds every card
//! as a quadrilateral, names it by its printed shimo-no-ku, and watches each known card
//! for motion in later frames. OpenCV only, no trained model.
//!
//! Reads video frames and, when present, the camera intrinsics of `calibration.json`.
//! Produces card quads in undistorted pixels (`field::CardQuad`) and the per-card motion
//! signal. It does not decide where the field is beyond what registration needs, and it
//! never judges: rulings belong to `rules`.

pub mod cards;
pub mod layout;
pub mod motion;
pub mod naming;
pub mod relocate;
pub mod still;
pub mod video;

use std::path::PathBuf;

/// What can go wrong while reading cards from a video.
#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    /// The video cannot be opened or decoded.
    #[error("{path}: video: {problem}")]
    Video { path: PathBuf, problem: String },
    /// The video plays but shows no card layout.
    #[error("{path}: frame {frame}: no field in view ({problem})")]
    NoField {
        path: PathBuf,
        frame: usize,
        problem: String,
    },
    /// The cards found do not form two territories.
    #[error("{path}: layout: {problem}")]
    Registration { path: PathBuf, problem: String },
    /// An OpenCV call failed on data it accepted; a failure of ours, not of the input.
    #[error("opencv: {0}")]
    OpenCv(#[from] opencv::Error),
}

impl DetectError {
    /// True when the input (not the program) is at fault.
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, DetectError::OpenCv(_))
    }
}

/// A point in pixels.
pub type PointPx = [f64; 2];
/// Four corners in pixels.
pub type QuadPx = [PointPx; 4];

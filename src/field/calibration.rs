//! `calibration.json` (contract section 3) and the shared pixel-space card type.

use serde::{Deserialize, Serialize};

/// Camera intrinsics, lens distortion and the image-to-field homography.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Width, height in pixels.
    pub image_size: [u32; 2],
    pub camera_matrix: [[f64; 3]; 3],
    /// OpenCV order: k1, k2, p1, p2, k3.
    pub dist_coeffs: Vec<f64>,
    /// Maps undistorted pixel coordinates (homogeneous) to field millimetres.
    pub image_to_field: [[f64; 3]; 3],
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reprojection_error_px: Option<f64>,
}

/// A card seen in an image: its four corners in pixels, in the order of the card's own
/// frame as `rules::geometry::rotated_rect` gives them in the field frame
/// (-w/2,-h/2), (+w/2,-h/2), (+w/2,+h/2), (-w/2,+h/2); and, when known, its poem.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CardQuad {
    pub corners_px: [[f64; 2]; 4],
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poem: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poem_score: Option<f64>,
}

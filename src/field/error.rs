//! The field stage's errors: each says what was wrong in words an official understands.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum FieldError {
    /// Too few usable cards or markers to fit the field.
    #[error("too few {what} to register the field: {found} found, {needed} needed")]
    TooFew {
        what: &'static str,
        found: usize,
        needed: usize,
    },
    /// The image-to-field mapping folds, collapses or turns the field inside out.
    #[error("the image-to-field homography is unusable: {0}")]
    BadHomography(String),
    /// The cards do not look like a karuta layout (e.g. one territory only).
    #[error("the cards do not form a field: {0}")]
    NotAField(String),
    /// Calibration input that cannot be used.
    #[error("{0}")]
    Calibration(String),
    /// A frame of the wrong size or type.
    #[error("frame: {0}")]
    Frame(String),
    #[error("OpenCV: {0}")]
    OpenCv(#[from] opencv::Error),
}

impl FieldError {
    /// True when the error comes from the input (exit status 2), not from a failure of ours.
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, FieldError::OpenCv(_))
    }
}

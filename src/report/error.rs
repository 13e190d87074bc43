//! The report stage's errors: each names the file and the problem in words an official
//! understands; `is_bad_input` tells the binary whether to exit 2 (input) or 1 (ours).

use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ReportError {
    /// A file of the contract that cannot be used (names the file, the place, the problem).
    #[error(transparent)]
    Input(#[from] crate::rules::InputError),
    /// The video cannot be opened or read.
    #[error("{path}: video: {problem}")]
    Video { path: PathBuf, problem: String },
    /// The calibration cannot map the field into the image.
    #[error("calibration: {0}")]
    Calibration(String),
    /// Writing the page, an image or the evidence failed.
    #[error("{path}: cannot be written: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The `ffmpeg` command is missing or failed (annotated video).
    #[error("ffmpeg: {0}")]
    Ffmpeg(String),
    /// An OpenCV call failed on data it accepted: a failure of ours.
    #[error("opencv: {0}")]
    OpenCv(#[from] opencv::Error),
}

impl ReportError {
    /// True when the input (not the program) is at fault.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            ReportError::Input(_) | ReportError::Video { .. } | ReportError::Calibration(_)
        )
    }

    pub(crate) fn write(path: &std::path::Path, source: std::io::Error) -> Self {
        ReportError::Write {
            path: path.to_path_buf(),
            source,
        }
    }
}

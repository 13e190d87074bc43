//! Frames for the card detector, read through the frame source (`crate::capture`): this
//! module only turns its errors into `DetectError`s.

use super::DetectError;
use crate::capture::{self, CaptureError, VideoReader};
use std::path::{Path, PathBuf};

pub use crate::capture::{Frame, VIDEO_EXTENSIONS};

fn detect_error(e: CaptureError) -> DetectError {
    match e {
        CaptureError::OpenCv(cv) => DetectError::OpenCv(cv),
        CaptureError::Input { ref path, .. } => DetectError::Video {
            path: path.clone(),
            problem: e.problem(),
        },
    }
}

/// The `video.*` file of a recording directory.
pub fn find_video(dir: &Path) -> Result<PathBuf, DetectError> {
    capture::find_video(dir).map_err(detect_error)
}

/// A video opened for reading, frame by frame.
pub struct Video {
    reader: VideoReader,
    pub fps: f64,
}

impl Video {
    pub fn open(path: &Path) -> Result<Video, DetectError> {
        let reader = VideoReader::open(path).map_err(detect_error)?;
        Ok(Video {
            fps: reader.fps,
            reader,
        })
    }

    /// The container's length, seconds (frame count over frame rate; 0 when unknown).
    pub fn duration_s(&self) -> f64 {
        self.reader.duration_s()
    }

    /// Frames the container says it holds (0 when unknown).
    pub fn frame_count(&self) -> usize {
        self.reader.frame_count
    }

    pub fn path(&self) -> &Path {
        self.reader.path()
    }

    /// The next frame, or `None` at the end of the stream.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, DetectError> {
        self.reader.next_frame().map_err(detect_error)
    }

    /// Puts the reader before frame `index` (`VideoReader::seek`): false when the video
    /// ends before it.
    pub fn seek(&mut self, index: usize) -> Result<bool, DetectError> {
        self.reader.seek(index).map_err(detect_error)
    }
}

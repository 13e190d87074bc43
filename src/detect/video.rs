//! Reading frames from a recording's `video.*` through OpenCV's FFmpeg backend.

use super::DetectError;
use opencv::core::Mat;
use opencv::prelude::*;
use opencv::videoio::{self, VideoCapture};
use std::path::{Path, PathBuf};

/// Extensions tried, in order, for a recording's `video.*`.
pub const VIDEO_EXTENSIONS: [&str; 4] = ["mp4", "avi", "mov", "mkv"];

/// The `video.*` file of a recording directory.
pub fn find_video(dir: &Path) -> Result<PathBuf, DetectError> {
    VIDEO_EXTENSIONS
        .iter()
        .map(|ext| dir.join(format!("video.{ext}")))
        .find(|p| p.is_file())
        .ok_or_else(|| DetectError::Video {
            path: dir.to_path_buf(),
            problem: format!(
                "no video file (looked for video.{})",
                VIDEO_EXTENSIONS.join(", video.")
            ),
        })
}

/// A video opened for reading, frame by frame.
pub struct Video {
    path: PathBuf,
    cap: VideoCapture,
    pub fps: f64,
    next_index: usize,
}

/// One decoded frame.
pub struct Frame {
    pub index: usize,
    pub t_s: f64,
    pub bgr: Mat,
}

impl Video {
    pub fn open(path: &Path) -> Result<Video, DetectError> {
        let bad = |problem: String| DetectError::Video {
            path: path.to_path_buf(),
            problem,
        };
        if !path.is_file() {
            return Err(bad("file not found".into()));
        }
        let cap = VideoCapture::from_file(path, videoio::CAP_FFMPEG)
            .map_err(|e| bad(format!("cannot be opened: {}", e.message)))?;
        if !cap.is_opened().unwrap_or(false) {
            return Err(bad(
                "cannot be opened (not a video, or a codec FFmpeg does not read)".into(),
            ));
        }
        let fps = cap.get(videoio::CAP_PROP_FPS).unwrap_or(0.0);
        if !(fps.is_finite() && fps > 0.0) {
            return Err(bad("no frame rate in the container".into()));
        }
        Ok(Video {
            path: path.to_path_buf(),
            cap,
            fps,
            next_index: 0,
        })
    }

    /// The container's length, seconds (frame count over frame rate; 0 when unknown).
    pub fn duration_s(&self) -> f64 {
        let n = self.cap.get(videoio::CAP_PROP_FRAME_COUNT).unwrap_or(0.0);
        if n.is_finite() && n > 0.0 {
            n / self.fps
        } else {
            0.0
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next frame, or `None` at the end of the stream.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, DetectError> {
        let mut bgr = Mat::default();
        let ok = self.cap.read(&mut bgr).map_err(|e| DetectError::Video {
            path: self.path.clone(),
            problem: format!(
                "frame {}: cannot be decoded: {}",
                self.next_index, e.message
            ),
        })?;
        if !ok || bgr.empty() {
            return Ok(None);
        }
        let index = self.next_index;
        self.next_index += 1;
        let pos_ms = self.cap.get(videoio::CAP_PROP_POS_MSEC).unwrap_or(-1.0);
        let t_s = if pos_ms >= 0.0 && index > 0 {
            pos_ms / 1000.0
        } else {
            index as f64 / self.fps
        };
        Ok(Some(Frame { index, t_s, bgr }))
    }

    /// Skips frames without converting them to BGR.
    pub fn skip(&mut self, n: usize) -> Result<usize, DetectError> {
        let mut done = 0;
        while done < n {
            let ok = self.cap.grab().map_err(|e| DetectError::Video {
                path: self.path.clone(),
                problem: format!(
                    "frame {}: cannot be decoded: {}",
                    self.next_index, e.message
                ),
            })?;
            if !ok {
                break;
            }
            self.next_index += 1;
            done += 1;
        }
        Ok(done)
    }
}

//! Frames of the recording, fetched by index: reads forward when the next wanted frame is
//! near, seeks when it is far (the evidence needs a few hundred frames scattered over the
//! match, so decoding the whole video for them would cost more than the analysis).

use super::ReportError;
use opencv::core::Mat;
use opencv::prelude::*;
use opencv::videoio::{self, VideoCapture};
use std::path::{Path, PathBuf};

/// Beyond this many frames ahead, seeking (decode from the previous keyframe) is cheaper
/// than decoding every frame in between.
const SEEK_AHEAD_FRAMES: u64 = 240;

pub struct FrameReader {
    path: PathBuf,
    cap: VideoCapture,
    pub fps: f64,
    pub frame_count: u64,
    pub width_px: i32,
    pub height_px: i32,
    /// Index of the frame the next `read` returns.
    next: u64,
    /// Wall time spent seeking and decoding so far, seconds.
    pub decode_s: f64,
}

impl FrameReader {
    pub fn open(path: &Path) -> Result<Self, ReportError> {
        let bad = |problem: String| ReportError::Video {
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
        let frame_count = cap
            .get(videoio::CAP_PROP_FRAME_COUNT)
            .unwrap_or(0.0)
            .max(0.0) as u64;
        let width_px = cap.get(videoio::CAP_PROP_FRAME_WIDTH).unwrap_or(0.0) as i32;
        let height_px = cap.get(videoio::CAP_PROP_FRAME_HEIGHT).unwrap_or(0.0) as i32;
        Ok(FrameReader {
            path: path.to_path_buf(),
            cap,
            fps,
            frame_count,
            width_px,
            height_px,
            next: 0,
            decode_s: 0.0,
        })
    }

    fn fail(&self, index: u64, what: &str) -> ReportError {
        ReportError::Video {
            path: self.path.clone(),
            problem: format!("frame {index}: {what}"),
        }
    }

    /// The frame `index`, or `None` past the end. Indices must not go backwards by much
    /// (a backward step seeks).
    pub fn read(&mut self, index: u64) -> Result<Option<Mat>, ReportError> {
        let t0 = std::time::Instant::now();
        let r = self.read_inner(index);
        self.decode_s += t0.elapsed().as_secs_f64();
        r
    }

    fn read_inner(&mut self, index: u64) -> Result<Option<Mat>, ReportError> {
        if index >= self.next + SEEK_AHEAD_FRAMES || index < self.next {
            self.cap
                .set(videoio::CAP_PROP_POS_FRAMES, index as f64)
                .map_err(|e| self.fail(index, &format!("cannot seek: {}", e.message)))?;
            self.next = index;
        }
        while self.next < index {
            let ok = self
                .cap
                .grab()
                .map_err(|e| self.fail(self.next, &format!("cannot be decoded: {}", e.message)))?;
            if !ok {
                return Ok(None);
            }
            self.next += 1;
        }
        let mut m = Mat::default();
        let ok = self
            .cap
            .read(&mut m)
            .map_err(|e| self.fail(index, &format!("cannot be decoded: {}", e.message)))?;
        if !ok || m.empty() {
            return Ok(None);
        }
        self.next = index + 1;
        Ok(Some(m))
    }

    /// The capture time of frame `index` (frame i at i / fps).
    pub fn t_s(&self, index: u64) -> f64 {
        index as f64 / self.fps
    }

    /// The frame holding time `t_s`.
    pub fn index_at(&self, t_s: f64) -> u64 {
        (t_s * self.fps).round().max(0.0) as u64
    }
}

//! Frames of the recording, fetched by index through the frame source
//! (`crate::capture::VideoReader::frame_at`: reads forward when the next wanted frame is
//! near, seeks when it is far; the evidence needs a few hundred frames scattered over the
//! match, so decoding the whole video for them would cost more than the analysis). This
//! module times the decoding and turns the frame source's errors into `ReportError`s.

use super::ReportError;
use crate::capture::{CaptureError, VideoReader};
use opencv::core::Mat;
use std::path::Path;

pub struct FrameReader {
    reader: VideoReader,
    pub fps: f64,
    pub frame_count: u64,
    pub width_px: i32,
    pub height_px: i32,
    /// Wall time spent seeking and decoding so far, seconds.
    pub decode_s: f64,
}

fn report_error(e: CaptureError) -> ReportError {
    match e {
        CaptureError::OpenCv(cv) => ReportError::OpenCv(cv),
        CaptureError::Input { ref path, .. } => ReportError::Video {
            path: path.clone(),
            problem: e.problem(),
        },
    }
}

impl FrameReader {
    pub fn open(path: &Path) -> Result<Self, ReportError> {
        let reader = VideoReader::open(path).map_err(report_error)?;
        Ok(FrameReader {
            fps: reader.fps,
            frame_count: reader.frame_count as u64,
            width_px: reader.width_px,
            height_px: reader.height_px,
            reader,
            decode_s: 0.0,
        })
    }

    /// The frame `index`, or `None` past the end. Indices must not go backwards by much
    /// (a backward step seeks).
    pub fn read(&mut self, index: u64) -> Result<Option<Mat>, ReportError> {
        let t0 = std::time::Instant::now();
        let r = self.reader.frame_at(index as usize).map_err(report_error);
        self.decode_s += t0.elapsed().as_secs_f64();
        r
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

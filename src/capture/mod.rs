//! The frame source, the bottom layer every stage reads video from: opening a recording's
//! video through OpenCV's FFmpeg backend (or a camera), each frame's capture time (from
//! `frames.csv` when present, else the container's `CAP_PROP_POS_MSEC`), dropped or
//! duplicated frames found from those times, and a reader thread feeding a bounded queue.
//!
//! Owns all video opening and decoding, and FFmpeg's process-wide settings. It knows
//! nothing of cards, hands or rules; it never writes files.

mod frames_csv;
mod reader;

pub use frames_csv::{load_frame_times, FrameTimes};
pub use reader::{spawn_reader, FrameSource, ReaderOptions, ReleaseClock, SourceItem};

use opencv::core::Mat;
use opencv::prelude::*;
use opencv::videoio::{self, VideoCapture};
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::Instant;

/// Extensions tried, in order, for a recording's `video.*`.
pub const VIDEO_EXTENSIONS: [&str; 4] = ["mp4", "avi", "mov", "mkv"];
/// The environment variable OpenCV 4.6 reads FFmpeg's log level from, once.
const FFMPEG_LOGLEVEL_ENV: &str = "OPENCV_FFMPEG_LOGLEVEL";
/// AV_LOG_QUIET: FFmpeg's own complaints would add lines to the one-line error.
const FFMPEG_QUIET: &str = "-8";
/// A gap between frame times longer than this many frame periods means frames were dropped.
pub const DROP_PERIODS: f64 = 1.5;
/// A step shorter than this many frame periods means a frame was repeated.
pub const DUPLICATE_PERIODS: f64 = 0.5;

/// What can go wrong while reading video.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The video (or frames.csv) cannot be opened, parsed or decoded: the input's fault.
    #[error("{path}: {place}: {problem}")]
    Input {
        path: PathBuf,
        place: String,
        problem: String,
    },
    /// An OpenCV call failed on data it accepted.
    #[error("opencv: {0}")]
    OpenCv(#[from] opencv::Error),
}

impl CaptureError {
    /// True when the input (not the program) is at fault.
    pub fn is_bad_input(&self) -> bool {
        matches!(self, CaptureError::Input { .. })
    }

    fn video(path: &Path, problem: impl Into<String>) -> CaptureError {
        CaptureError::Input {
            path: path.to_path_buf(),
            place: "video".into(),
            problem: problem.into(),
        }
    }

    /// The problem in words, without the path (for callers that add their own).
    pub fn problem(&self) -> String {
        match self {
            CaptureError::Input { place, problem, .. } if place == "video" => problem.clone(),
            CaptureError::Input { place, problem, .. } => format!("{place}: {problem}"),
            CaptureError::OpenCv(e) => e.message.clone(),
        }
    }
}

/// Beyond this many frames ahead, `frame_at` seeks (decoding from the keyframe before)
/// rather than decoding every frame in between.
pub const SEEK_AHEAD_FRAMES: usize = 240;

/// The frame size a capture reports, pixels (0 when unknown).
fn frame_size(cap: &VideoCapture) -> (i32, i32) {
    let get = |p| cap.get(p).unwrap_or(0.0).max(0.0) as i32;
    (
        get(videoio::CAP_PROP_FRAME_WIDTH),
        get(videoio::CAP_PROP_FRAME_HEIGHT),
    )
}

static FFMPEG_SETTINGS: Once = Once::new();

/// FFmpeg's process-wide settings, made once: its log is silenced unless the user set
/// `OPENCV_FFMPEG_LOGLEVEL`. Call it from `main` before any thread starts (setting the
/// environment is only sound then); every opener calls it too, for library users.
pub fn init_process() {
    FFMPEG_SETTINGS.call_once(|| {
        if std::env::var_os(FFMPEG_LOGLEVEL_ENV).is_none() {
            std::env::set_var(FFMPEG_LOGLEVEL_ENV, FFMPEG_QUIET);
        }
    });
}

/// The `video.*` file of a recording directory.
pub fn find_video(dir: &Path) -> Result<PathBuf, CaptureError> {
    VIDEO_EXTENSIONS
        .iter()
        .map(|ext| dir.join(format!("video.{ext}")))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            CaptureError::video(
                dir,
                format!(
                    "no video file (looked for video.{})",
                    VIDEO_EXTENSIONS.join(", video.")
                ),
            )
        })
}

/// One decoded frame.
pub struct Frame {
    pub index: usize,
    /// Capture time, seconds on the video's clock.
    pub t_s: f64,
    /// The decoded image, shared: the hands keep a few recent frames while the cards see
    /// them too.
    pub bgr: std::sync::Arc<Mat>,
}

/// Where frame times come from.
enum Clock {
    /// The container's presentation times.
    Container,
    /// `frames.csv`, by frame index.
    Table(FrameTimes),
    /// A live camera: the wall clock since the first frame.
    Wall(Option<Instant>),
}

/// A video (or camera) opened for reading, frame by frame, on the calling thread.
pub struct VideoReader {
    path: PathBuf,
    cap: VideoCapture,
    pub fps: f64,
    /// Frames the container says it holds (0 for a camera or when unknown).
    pub frame_count: usize,
    /// Frame size the container gives, pixels (0 when unknown).
    pub width_px: i32,
    pub height_px: i32,
    next_index: usize,
    clock: Clock,
    /// The time given to the frame before, s.
    last_t_s: Option<f64>,
}

impl VideoReader {
    /// Opens a video file; times from the container.
    pub fn open(path: &Path) -> Result<VideoReader, CaptureError> {
        init_process();
        if !path.is_file() {
            return Err(CaptureError::video(path, "file not found"));
        }
        let cap = VideoCapture::from_file(path, videoio::CAP_FFMPEG)
            .map_err(|e| CaptureError::video(path, format!("cannot be opened: {}", e.message)))?;
        if !cap.is_opened().unwrap_or(false) {
            return Err(CaptureError::video(
                path,
                "cannot be opened (not a video, or a codec FFmpeg does not read)",
            ));
        }
        let fps = cap.get(videoio::CAP_PROP_FPS).unwrap_or(0.0);
        if !(fps.is_finite() && fps > 0.0) {
            return Err(CaptureError::video(path, "no frame rate in the container"));
        }
        let frame_count = cap
            .get(videoio::CAP_PROP_FRAME_COUNT)
            .unwrap_or(0.0)
            .max(0.0) as usize;
        let (width_px, height_px) = frame_size(&cap);
        Ok(VideoReader {
            path: path.to_path_buf(),
            cap,
            fps,
            frame_count,
            width_px,
            height_px,
            next_index: 0,
            clock: Clock::Container,
            last_t_s: None,
        })
    }

    /// Opens a recording directory's `video.*`, with `frames.csv` times when present.
    pub fn open_recording(dir: &Path) -> Result<VideoReader, CaptureError> {
        let video = find_video(dir)?;
        let mut r = VideoReader::open(&video)?;
        let csv = dir.join("frames.csv");
        if csv.is_file() {
            r.clock = Clock::Table(load_frame_times(&csv)?);
        }
        Ok(r)
    }

    /// Opens camera `index` (V4L2 or whatever OpenCV picks); times from the wall clock.
    pub fn open_camera(index: i32) -> Result<VideoReader, CaptureError> {
        init_process();
        let name = PathBuf::from(format!("camera {index}"));
        let cap = VideoCapture::new(index, videoio::CAP_ANY)
            .map_err(|e| CaptureError::video(&name, format!("cannot be opened: {}", e.message)))?;
        if !cap.is_opened().unwrap_or(false) {
            return Err(CaptureError::video(&name, "cannot be opened"));
        }
        let fps = cap.get(videoio::CAP_PROP_FPS).unwrap_or(0.0);
        let (width_px, height_px) = frame_size(&cap);
        Ok(VideoReader {
            path: name,
            cap,
            width_px,
            height_px,
            fps: if fps.is_finite() && fps > 0.0 {
                fps
            } else {
                30.0
            },
            frame_count: 0,
            next_index: 0,
            clock: Clock::Wall(None),
            last_t_s: None,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Frames `frames.csv` lists, when the times come from it.
    pub fn table_len(&self) -> Option<usize> {
        match &self.clock {
            Clock::Table(t) => Some(t.len()),
            _ => None,
        }
    }

    /// Seconds of video, from the frame count and rate (0 when unknown).
    pub fn duration_s(&self) -> f64 {
        self.frame_count as f64 / self.fps
    }

    fn decode_error(&self, e: opencv::Error) -> CaptureError {
        CaptureError::video(
            &self.path,
            format!(
                "frame {}: cannot be decoded: {}",
                self.next_index, e.message
            ),
        )
    }

    /// The next frame, or `None` at the end of the stream.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, CaptureError> {
        let mut bgr = Mat::default();
        let ok = self.cap.read(&mut bgr).map_err(|e| self.decode_error(e))?;
        if !ok || bgr.empty() {
            return Ok(None);
        }
        let index = self.next_index;
        self.next_index += 1;
        let t_s = self.time_of(index)?;
        self.last_t_s = Some(t_s);
        Ok(Some(Frame {
            index,
            t_s,
            bgr: std::sync::Arc::new(bgr),
        }))
    }

    fn time_of(&mut self, index: usize) -> Result<f64, CaptureError> {
        match &mut self.clock {
            Clock::Table(t) => t.get(index).ok_or_else(|| CaptureError::Input {
                path: t.path().to_path_buf(),
                place: format!("frame {index}"),
                problem: "the video has more frames than frames.csv lists".into(),
            }),
            Clock::Wall(start) => {
                let s = *start.get_or_insert_with(Instant::now);
                Ok(s.elapsed().as_secs_f64())
            }
            Clock::Container => {
                let pos_ms = self.cap.get(videoio::CAP_PROP_POS_MSEC).unwrap_or(-1.0);
                // FFmpeg gives no position (0) for the frames it flushes at the end of a
                // stream with B-frames (a phone's H.264 High profile): such a frame
                // follows the one before by a period.
                Ok(match self.last_t_s {
                    _ if index == 0 => 0.0,
                    Some(last) if pos_ms <= 0.0 => last + 1.0 / self.fps,
                    _ if pos_ms >= 0.0 => pos_ms / 1000.0,
                    _ => index as f64 / self.fps,
                })
            }
        }
    }

    /// Skips frames without converting them to BGR; returns how many were skipped.
    pub fn skip(&mut self, n: usize) -> Result<usize, CaptureError> {
        let mut done = 0;
        while done < n {
            let ok = self.cap.grab().map_err(|e| self.decode_error(e))?;
            if !ok {
                break;
            }
            self.next_index += 1;
            done += 1;
        }
        Ok(done)
    }

    /// Decodes the next frame without converting it to BGR (decode cost alone); false at the end.
    pub fn grab(&mut self) -> Result<bool, CaptureError> {
        let ok = self.cap.grab().map_err(|e| self.decode_error(e))?;
        if ok {
            self.next_index += 1;
        }
        Ok(ok)
    }

    /// Puts the reader before frame `index`, so that the next frame read is that one:
    /// decodes forward when it is less than `SEEK_AHEAD_FRAMES` ahead, seeks otherwise
    /// (decoding from the keyframe before; also backwards). False when the video ends
    /// before it.
    pub fn seek(&mut self, index: usize) -> Result<bool, CaptureError> {
        if index >= self.next_index + SEEK_AHEAD_FRAMES || index < self.next_index {
            self.cap
                .set(videoio::CAP_PROP_POS_FRAMES, index as f64)
                .map_err(|e| {
                    CaptureError::video(
                        &self.path,
                        format!("frame {index}: cannot seek: {}", e.message),
                    )
                })?;
            self.next_index = index;
        }
        let ahead = index - self.next_index;
        Ok(self.skip(ahead)? == ahead)
    }

    /// The frame `index` as decoded (BGR), or `None` past the end, for readers that need a
    /// few frames scattered over a recording (`seek`, then a read).
    pub fn frame_at(&mut self, index: usize) -> Result<Option<Mat>, CaptureError> {
        if !self.seek(index)? {
            return Ok(None);
        }
        let mut bgr = Mat::default();
        let ok = self.cap.read(&mut bgr).map_err(|e| self.decode_error(e))?;
        if !ok || bgr.empty() {
            return Ok(None);
        }
        self.next_index = index + 1;
        Ok(Some(bgr))
    }

    /// Every `step`-th frame of the whole video (for calibration views), at most `max`.
    pub fn spread_frames(&mut self, max: usize) -> Result<Vec<Mat>, CaptureError> {
        let step = (self.frame_count.max(1) / max.max(1)).max(1);
        let mut frames = Vec::new();
        let mut i = 0usize;
        while self.cap.grab().map_err(|e| self.decode_error(e))? {
            if i.is_multiple_of(step) {
                let mut f = Mat::default();
                if self.cap.retrieve(&mut f, 0)? && !f.empty() {
                    frames.push(f);
                }
            }
            i += 1;
            self.next_index += 1;
        }
        Ok(frames)
    }
}

/// A stretch of time the camera did not see (dropped frames), or a repeated frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Gap {
    /// Time of the last frame seen before the gap, and of the first after it.
    pub from_s: f64,
    pub to_s: f64,
    /// Frames missing (dropped) in between; 0 for a duplicate.
    pub missing: usize,
    pub duplicate: bool,
}

/// Finds dropped and repeated frames from consecutive frame times.
#[derive(Debug, Clone)]
pub struct GapFinder {
    period_s: f64,
    last_t_s: Option<f64>,
}

impl GapFinder {
    pub fn new(fps: f64) -> GapFinder {
        GapFinder {
            period_s: 1.0 / fps.max(1e-6),
            last_t_s: None,
        }
    }

    /// The next frame's time; a gap when frames were dropped before it or it repeats one.
    pub fn step(&mut self, t_s: f64) -> Option<Gap> {
        let prev = self.last_t_s.replace(t_s)?;
        let dt = t_s - prev;
        if dt > DROP_PERIODS * self.period_s {
            Some(Gap {
                from_s: prev,
                to_s: t_s,
                missing: ((dt / self.period_s).round() as usize)
                    .saturating_sub(1)
                    .max(1),
                duplicate: false,
            })
        } else if dt < DUPLICATE_PERIODS * self.period_s {
            Some(Gap {
                from_s: prev,
                to_s: t_s,
                missing: 0,
                duplicate: true,
            })
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_from_frame_times() {
        let mut g = GapFinder::new(100.0);
        assert_eq!(g.step(0.0), None);
        assert_eq!(g.step(0.01), None);
        let d = g.step(0.04).expect("two frames dropped");
        assert_eq!((d.missing, d.duplicate), (2, false));
        let r = g.step(0.04).expect("a repeated frame");
        assert!(r.duplicate);
        assert_eq!(g.step(0.05), None);
    }
}

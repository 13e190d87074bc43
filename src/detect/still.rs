//! The layout frames: the still stretch before the first reading, averaged.
//!
//! At the end of memorisation nobody reaches over the field, so the frames there show
//! the layout unoccluded; averaging them beats sensor noise and compression artefacts.
//! Between readings the field is still again (`still_frames_between`): when the stretch
//! before the first reading is short, those later stretches add views of the cards
//! still in place.

use super::video::Video;
use super::DetectError;
use opencv::core::{self, Mat, Size};
use opencv::imgproc;
use opencv::prelude::*;
use std::path::Path;

/// How much of the video to scan when no reading time is known, in seconds.
pub const DEFAULT_SCAN_S: f64 = 3.0;
/// Never scan more than this many seconds for a still stretch.
pub const MAX_SCAN_S: f64 = 6.0;
/// Mean absolute frame-to-frame change (gray levels, after gain compensation) below which
/// a frame counts as still.
pub const STILL_DIFF_GRAY: f64 = 1.5;
/// Frames averaged into the layout image.
pub const MAX_AVERAGE_FRAMES: usize = 16;
/// A still stretch of fewer frames than this is short: later stretches are looked at too.
pub const ENOUGH_STILL_FRAMES: usize = 8;
/// Frames moved by less than this (px) against the first averaged frame are added as
/// they are.
const MIN_ALIGN_SHIFT_PX: f64 = 0.02;
/// Size of the thumbnails compared for motion, in pixels.
const THUMB_W_PX: i32 = 160;
const THUMB_H_PX: i32 = 90;

/// The averaged still image and where it came from.
pub struct LayoutFrames {
    /// Mean of the still frames, 8-bit BGR, as decoded (not undistorted).
    pub image: Mat,
    pub first_frame: usize,
    pub frames_averaged: usize,
    pub fps: f64,
    /// Time of the first averaged frame, seconds.
    pub t_s: f64,
}

fn thumbnail(bgr: &Mat) -> Result<Mat, DetectError> {
    gray_f32(bgr, Size::new(THUMB_W_PX, THUMB_H_PX))
}

/// A BGR image as a float gray image of `size` (area-averaged).
pub(crate) fn gray_f32(bgr: &Mat, size: Size) -> Result<Mat, DetectError> {
    let mut gray = Mat::default();
    imgproc::cvt_color_def(bgr, &mut gray, imgproc::COLOR_BGR2GRAY)?;
    let mut small = Mat::default();
    imgproc::resize(&gray, &mut small, size, 0.0, 0.0, imgproc::INTER_AREA)?;
    let mut f = Mat::default();
    small.convert_to(&mut f, core::CV_32F, 1.0, 0.0)?;
    Ok(f)
}

/// Mean absolute difference of two thumbnails after matching their mean brightness, so
/// that mains flicker does not count as motion.
fn change_gray(a: &Mat, b: &Mat) -> Result<f64, DetectError> {
    let ma = core::mean_def(a)?[0];
    let mb = core::mean_def(b)?[0];
    let gain = if mb > 1.0 { ma / mb } else { 1.0 };
    let mut scaled = Mat::default();
    b.convert_to(&mut scaled, core::CV_32F, gain, 0.0)?;
    let mut d = Mat::default();
    core::absdiff(a, &scaled, &mut d)?;
    Ok(core::mean_def(&d)?[0])
}

/// The longest run of still frames, as (first, len), from per-frame change scores
/// (`change[i]` compares frame i with frame i-1; `change[0]` is 0).
fn longest_still_run(change: &[f64]) -> (usize, usize) {
    let mut best = (0, 0);
    let mut start = 0;
    for i in 0..=change.len() {
        let still = i < change.len() && (i == start || change[i] <= STILL_DIFF_GRAY);
        if !still {
            if i - start > best.1 {
                best = (start, i - start);
            }
            start = i;
        }
    }
    best
}

/// Reads the frames before `until_s` (the first reading), finds the longest still
/// stretch and averages up to `MAX_AVERAGE_FRAMES` frames from its middle.
pub fn layout_frames(path: &Path, until_s: Option<f64>) -> Result<LayoutFrames, DetectError> {
    let scan_s = until_s.unwrap_or(DEFAULT_SCAN_S).clamp(0.0, MAX_SCAN_S);
    still_frames_in(path, 0.0, scan_s)
}

/// The longest still stretch in the last `MAX_SCAN_S` seconds before `until_s` and after
/// `from_s` (between two readings: the players wait for the next one), averaged; `until_s`
/// `None` reads to the end of the video. `None` when no frame lies in the window.
pub fn still_frames_between(
    path: &Path,
    from_s: f64,
    until_s: Option<f64>,
) -> Result<Option<LayoutFrames>, DetectError> {
    let end_s = match until_s {
        Some(t) => t,
        None => Video::open(path)?.duration_s(),
    };
    let start_s = from_s.max(end_s - MAX_SCAN_S);
    if end_s.is_nan() || start_s.is_nan() || end_s <= start_s {
        return Ok(None);
    }
    match still_frames_in(path, start_s, end_s) {
        Ok(f) => Ok(Some(f)),
        Err(DetectError::Video { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The longest still stretch among the frames of [from_s, until_s) (the first frame is
/// always read), averaged.
fn still_frames_in(path: &Path, from_s: f64, until_s: f64) -> Result<LayoutFrames, DetectError> {
    let scan_s = until_s;
    let mut video = Video::open(path)?;
    let fps = video.fps;
    let skipped = if from_s > 0.0 {
        (from_s * fps).floor() as usize
    } else {
        0
    };
    video.seek(skipped)?;
    let mut change = Vec::new();
    let mut prev: Option<Mat> = None;
    let mut times = Vec::new();
    while let Some(frame) = video.next_frame()? {
        if frame.index > skipped && frame.t_s >= scan_s {
            break;
        }
        let thumb = thumbnail(&frame.bgr)?;
        change.push(match &prev {
            Some(p) => change_gray(&thumb, p)?,
            None => 0.0,
        });
        times.push(frame.t_s);
        prev = Some(thumb);
    }
    if change.is_empty() {
        return Err(DetectError::Video {
            path: path.to_path_buf(),
            problem: "no frame could be decoded (empty or truncated file)".into(),
        });
    }
    let (run_start, run_len) = longest_still_run(&change);
    let n = run_len.clamp(1, MAX_AVERAGE_FRAMES);
    let first = run_start + (run_len - n) / 2;

    video.seek(skipped + first)?;
    let mut sum = Mat::default();
    let mut count = 0usize;
    let mut reference: Option<Mat> = None;
    let mut window = Mat::default();
    while count < n {
        let Some(frame) = video.next_frame()? else {
            break;
        };
        let mut f = Mat::default();
        frame.bgr.convert_to(&mut f, core::CV_32FC3, 1.0, 0.0)?;
        // A shaking camera moves the whole picture between frames: each frame is
        // brought onto the first by its phase-correlation shift before it is added, so
        // that the average stays as sharp as one frame.
        let gray = gray_f32(&frame.bgr, frame.bgr.size()?)?;
        match &reference {
            None => {
                imgproc::create_hanning_window(&mut window, gray.size()?, core::CV_32F)?;
                reference = Some(gray);
            }
            Some(r) => {
                let mut response = 0.0;
                let shift = imgproc::phase_correlate(r, &gray, &window, Some(&mut response))?;
                if shift.x.abs() > MIN_ALIGN_SHIFT_PX || shift.y.abs() > MIN_ALIGN_SHIFT_PX {
                    let m = Mat::from_slice_2d(&[[1.0, 0.0, -shift.x], [0.0, 1.0, -shift.y]])?;
                    let mut moved = Mat::default();
                    imgproc::warp_affine(
                        &f,
                        &mut moved,
                        &m,
                        f.size()?,
                        imgproc::INTER_LINEAR,
                        core::BORDER_REPLICATE,
                        core::Scalar::all(0.0),
                    )?;
                    f = moved;
                }
            }
        }
        if count == 0 {
            sum = f;
        } else {
            let mut acc = Mat::default();
            core::add(&sum, &f, &mut acc, &core::no_array(), -1)?;
            sum = acc;
        }
        count += 1;
    }
    if count == 0 {
        return Err(DetectError::Video {
            path: path.to_path_buf(),
            problem: format!("frame {first}: cannot be decoded on the second pass"),
        });
    }
    let mut image = Mat::default();
    sum.convert_to(&mut image, core::CV_8UC3, 1.0 / count as f64, 0.0)?;
    Ok(LayoutFrames {
        image,
        first_frame: skipped + first,
        frames_averaged: count,
        fps,
        t_s: times.get(first).copied().unwrap_or(0.0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_still_run_skips_motion() {
        let c = [0.0, 0.5, 0.4, 9.0, 0.3, 0.2, 0.1, 0.2, 8.0, 0.1];
        assert_eq!(longest_still_run(&c), (3, 5));
        assert_eq!(longest_still_run(&[0.0]), (0, 1));
    }
}

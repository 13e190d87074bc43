//! The per-frame "has this card moved, or is something over it" signal.
//!
//! Each known card keeps a small gray reference of its region, taken from the layout
//! frames. Every frame is shrunk once (linear, cheap), and each card's region is compared
//! with its reference after matching the frame's overall brightness (mains flicker). A
//! card whose region differs is `Disturbed`; when the region settles again but still
//! differs, the card has `Moved` (or something rests on it) and needs re-detection.
//! Reads decoded frames (not undistorted) and card outlines in the same pixels.

use super::{DetectError, QuadPx};
use opencv::core::{self, Mat, Point, Rect, Scalar, Size, Vector};
use opencv::imgproc;
use opencv::prelude::*;
use serde::{Deserialize, Serialize};

/// Frames are shrunk by this factor before comparison.
pub const MONITOR_SCALE: f64 = 0.25;
/// Mean absolute gray difference from the reference that marks a card disturbed.
pub const DISTURBED_GRAY: f64 = 10.0;
/// Mean absolute frame-to-frame change under which a disturbed region counts as settled.
pub const SETTLED_GRAY: f64 = 2.0;
/// Settled frames in a row before a still-different card counts as moved.
pub const SETTLE_FRAMES: u32 = 24;

/// What the monitor says about one card in the current frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CardState {
    Still,
    /// Its region differs from the reference: a hand or shadow over it, or it is moving.
    Disturbed,
    /// Its region has settled but no longer matches: moved, removed or covered.
    Moved,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CardSignal {
    /// Mean absolute difference from the reference, gray levels.
    pub diff_gray: f64,
    pub state: CardState,
}

struct Watched {
    rect: Rect,
    /// Pixel offsets (row-major within `rect`) inside the card outline.
    inside: Vec<usize>,
    reference: Vec<f32>,
    reference_mean: f64,
    previous: Vec<f32>,
    settled_frames: u32,
}

/// A monitor's state between frames, to continue exactly where it stood (a resumed run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MonitorState {
    small_size_px: [i32; 2],
    cards: Vec<WatchedState>,
    signals: Vec<CardSignal>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct WatchedState {
    rect_px: [i32; 4],
    inside: Vec<usize>,
    reference: Vec<f32>,
    reference_mean: f64,
    previous: Vec<f32>,
    settled_frames: u32,
}

/// Watches every known card, frame by frame.
pub struct MotionMonitor {
    small_size: Size,
    small: Mat,
    gray: Mat,
    cards: Vec<Watched>,
    signals: Vec<CardSignal>,
    scratch: Vec<f32>,
}

fn shrink(bgr: &Mat, size: Size, small: &mut Mat, gray: &mut Mat) -> Result<(), DetectError> {
    imgproc::resize(bgr, small, size, 0.0, 0.0, imgproc::INTER_LINEAR)?;
    if small.channels() == 1 {
        small.copy_to(gray)?;
    } else {
        imgproc::cvt_color_def(small, gray, imgproc::COLOR_BGR2GRAY)?;
    }
    Ok(())
}

fn region(gray: &Mat, w: &Watched, out: &mut Vec<f32>) -> Result<(), DetectError> {
    out.clear();
    let cols = gray.cols() as usize;
    let data = gray.data_bytes()?;
    let r = w.rect;
    let rw = r.width as usize;
    for &k in &w.inside {
        let (y, x) = (r.y as usize + k / rw, r.x as usize + k % rw);
        out.push(data[y * cols + x] as f32);
    }
    Ok(())
}

impl MotionMonitor {
    /// `reference` is a decoded frame (or the layout image) showing every card at rest;
    /// `outlines` are the cards in its pixels.
    pub fn new(reference: &Mat, outlines: &[QuadPx]) -> Result<MotionMonitor, DetectError> {
        let small_size = Size::new(
            ((reference.cols() as f64) * MONITOR_SCALE).round() as i32,
            ((reference.rows() as f64) * MONITOR_SCALE).round() as i32,
        );
        let mut m = MotionMonitor {
            small_size,
            small: Mat::default(),
            gray: Mat::default(),
            cards: Vec::with_capacity(outlines.len()),
            signals: Vec::with_capacity(outlines.len()),
            scratch: Vec::new(),
        };
        shrink(reference, small_size, &mut m.small, &mut m.gray)?;
        for q in outlines {
            let w = m.watch(q)?;
            m.cards.push(w);
            m.signals.push(CardSignal {
                diff_gray: 0.0,
                state: CardState::Still,
            });
        }
        Ok(m)
    }

    fn watch(&self, q: &QuadPx) -> Result<Watched, DetectError> {
        let pts: Vector<Point> = q
            .iter()
            .map(|p| {
                Point::new(
                    (p[0] * MONITOR_SCALE).round() as i32,
                    (p[1] * MONITOR_SCALE).round() as i32,
                )
            })
            .collect();
        let bounds = Rect::new(0, 0, self.small_size.width, self.small_size.height);
        let rect = imgproc::bounding_rect(&pts)? & bounds;
        let mask = polygon_mask(&pts, rect)?;
        let inside: Vec<usize> = mask
            .data_bytes()?
            .iter()
            .enumerate()
            .filter(|(_, v)| **v > 0)
            .map(|(k, _)| k)
            .collect();
        let mut w = Watched {
            rect,
            inside,
            reference: Vec::new(),
            reference_mean: 0.0,
            previous: Vec::new(),
            settled_frames: 0,
        };
        let mut buf = Vec::new();
        region(&self.gray, &w, &mut buf)?;
        w.reference_mean = buf.iter().map(|v| *v as f64).sum::<f64>() / buf.len().max(1) as f64;
        w.previous = buf.clone();
        w.reference = buf;
        Ok(w)
    }

    /// Takes a new reference for card `i` at `outline` in `frame` (after re-detection).
    pub fn rebase(&mut self, i: usize, frame: &Mat, outline: &QuadPx) -> Result<(), DetectError> {
        shrink(frame, self.small_size, &mut self.small, &mut self.gray)?;
        let w = self.watch(outline)?;
        if let Some(slot) = self.cards.get_mut(i) {
            *slot = w;
            self.signals[i] = CardSignal {
                diff_gray: 0.0,
                state: CardState::Still,
            };
        }
        Ok(())
    }

    /// The state between frames.
    pub fn state(&self) -> MonitorState {
        MonitorState {
            small_size_px: [self.small_size.width, self.small_size.height],
            cards: self
                .cards
                .iter()
                .map(|w| WatchedState {
                    rect_px: [w.rect.x, w.rect.y, w.rect.width, w.rect.height],
                    inside: w.inside.clone(),
                    reference: w.reference.clone(),
                    reference_mean: w.reference_mean,
                    previous: w.previous.clone(),
                    settled_frames: w.settled_frames,
                })
                .collect(),
            signals: self.signals.clone(),
        }
    }

    /// A monitor that continues from `state`.
    pub fn from_state(state: MonitorState) -> MotionMonitor {
        MotionMonitor {
            small_size: Size::new(state.small_size_px[0], state.small_size_px[1]),
            small: Mat::default(),
            gray: Mat::default(),
            cards: state
                .cards
                .into_iter()
                .map(|w| Watched {
                    rect: Rect::new(w.rect_px[0], w.rect_px[1], w.rect_px[2], w.rect_px[3]),
                    inside: w.inside,
                    reference: w.reference,
                    reference_mean: w.reference_mean,
                    previous: w.previous,
                    settled_frames: w.settled_frames,
                })
                .collect(),
            signals: state.signals,
            scratch: Vec::new(),
        }
    }

    /// Cards `i` and `j` trade the places they are watched at (and their signals): the
    /// card tracker found each followed under the other's name.
    pub fn swap(&mut self, i: usize, j: usize) {
        self.cards.swap(i, j);
        self.signals.swap(i, j);
    }

    pub fn signals(&self) -> &[CardSignal] {
        &self.signals
    }

    /// Compares one decoded frame with every card's reference.
    pub fn update(&mut self, frame: &Mat) -> Result<&[CardSignal], DetectError> {
        shrink(frame, self.small_size, &mut self.small, &mut self.gray)?;
        // Brightness gain of this frame: the median over cards of current/reference mean,
        // robust to the few cards a hand covers.
        let mut ratios = Vec::with_capacity(self.cards.len());
        let mut means = Vec::with_capacity(self.cards.len());
        let mut buf = std::mem::take(&mut self.scratch);
        let mut patches = Vec::with_capacity(self.cards.len());
        for w in &self.cards {
            region(&self.gray, w, &mut buf)?;
            let m = buf.iter().map(|v| *v as f64).sum::<f64>() / buf.len().max(1) as f64;
            means.push(m);
            if w.reference_mean > 1.0 {
                ratios.push(m / w.reference_mean);
            }
            patches.push(buf.clone());
        }
        ratios.sort_by(|a, b| a.total_cmp(b));
        let gain = ratios.get(ratios.len() / 2).copied().unwrap_or(1.0) as f32;
        for ((w, sig), patch) in self
            .cards
            .iter_mut()
            .zip(self.signals.iter_mut())
            .zip(patches)
        {
            let n = patch.len().max(1) as f64;
            let diff = patch
                .iter()
                .zip(&w.reference)
                .map(|(c, r)| (c - gain * r).abs() as f64)
                .sum::<f64>()
                / n;
            let change = patch
                .iter()
                .zip(&w.previous)
                .map(|(c, p)| (c - p).abs() as f64)
                .sum::<f64>()
                / n;
            w.previous = patch;
            if change < SETTLED_GRAY {
                w.settled_frames = w.settled_frames.saturating_add(1);
            } else {
                w.settled_frames = 0;
            }
            let state = if diff < DISTURBED_GRAY {
                CardState::Still
            } else if w.settled_frames >= SETTLE_FRAMES {
                CardState::Moved
            } else {
                CardState::Disturbed
            };
            *sig = CardSignal {
                diff_gray: diff,
                state,
            };
        }
        self.scratch = buf;
        Ok(&self.signals)
    }
}

/// A mask of `rect`'s size, 255 inside polygon `pts` (given in the image `rect` is cut
/// from) and 0 outside.
pub fn polygon_mask(pts: &Vector<Point>, rect: Rect) -> Result<Mat, opencv::Error> {
    let mut mask = Mat::new_rows_cols_with_default(
        rect.height.max(1),
        rect.width.max(1),
        core::CV_8U,
        Scalar::all(0.0),
    )?;
    let local: Vector<Point> = pts
        .iter()
        .map(|p| Point::new(p.x - rect.x, p.y - rect.y))
        .collect();
    imgproc::fill_poly_def(
        &mut mask,
        &Vector::<Vector<Point>>::from_iter([local]),
        Scalar::all(255.0),
    )?;
    Ok(mask)
}

//! The reader thread: decodes frames ahead of the consumer into a bounded queue, so
//! decoding runs beside perception and memory stays flat in the recording's length; a
//! file that ends well before the frames it announces ends with an error.

use super::{CaptureError, Frame, Gap, GapFinder, VideoReader};
use crossbeam_channel::{bounded, Receiver};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the reader thread sends, in order.
pub enum SourceItem {
    Frame(Frame),
    /// Frames were dropped (or one repeated) just before the next frame.
    Gap(Gap),
    /// Decoding failed; nothing follows.
    Error(CaptureError),
}

/// When a realtime reader released its first frame, and that frame's time: the wall
/// time any frame was due follows from it.
#[derive(Debug, Clone, Default)]
pub struct ReleaseClock(Arc<OnceLock<(Instant, f64)>>);

impl ReleaseClock {
    /// When the frame at `t_s` on the recording's clock was (or will be) released; `None`
    /// before the first frame, or when frames are not released in real time.
    pub fn due(&self, t_s: f64) -> Option<Instant> {
        let (start, t0) = self.0.get()?;
        Some(*start + Duration::from_secs_f64((t_s - t0).max(0.0)))
    }
}

/// Frames from a reader thread.
pub struct FrameSource {
    rx: Receiver<SourceItem>,
    handle: Option<JoinHandle<()>>,
    clock: ReleaseClock,
    pub fps: f64,
    pub frame_count: usize,
}

impl FrameSource {
    /// Items decoded and waiting to be taken.
    pub fn waiting(&self) -> usize {
        self.rx.len()
    }

    /// The release clock (set in realtime mode).
    pub fn clock(&self) -> ReleaseClock {
        self.clock.clone()
    }

    /// The next item, or `None` once the video has ended.
    pub fn recv(&self) -> Option<SourceItem> {
        self.rx.recv().ok()
    }
}

impl Iterator for FrameSource {
    type Item = SourceItem;
    fn next(&mut self) -> Option<SourceItem> {
        self.recv()
    }
}

impl Drop for FrameSource {
    fn drop(&mut self) {
        // Dropping the receiver makes the thread's next send fail, which ends it.
        let (_, dead) = bounded(0);
        let rx = std::mem::replace(&mut self.rx, dead);
        drop(rx);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// How the reader thread runs.
#[derive(Debug, Clone, Default)]
pub struct ReaderOptions {
    /// Frames held at most between the thread and its consumer (each a full BGR image).
    pub queue: usize,
    /// Frames decoded without conversion first (resuming a run).
    pub skip: usize,
    /// Release frames no faster than their capture times (live from a file), and drop
    /// those that find the queue full, as a camera does.
    pub realtime: bool,
    /// Time of the frame before the first one read (resuming), for the gap check.
    pub prev_t_s: Option<f64>,
}

/// Starts decoding `reader` on its own thread.
pub fn spawn_reader(mut reader: VideoReader, opts: ReaderOptions) -> FrameSource {
    let ReaderOptions {
        queue,
        skip,
        realtime,
        prev_t_s,
    } = opts;
    let (tx, rx) = bounded(queue.max(1));
    let fps = reader.fps;
    let frame_count = reader.frame_count;
    let clock = ReleaseClock::default();
    let released = clock.0.clone();
    // A file that ends well before the frames it announces was cut short.
    let expected = reader.table_len().unwrap_or(reader.frame_count);
    let handle = std::thread::Builder::new()
        .name("capture".into())
        .spawn(move || {
            // Frames decoded, those skipped and dropped included.
            let mut decoded = 0;
            if skip > 0 {
                match reader.skip(skip) {
                    Ok(n) => decoded = n,
                    Err(e) => {
                        let _ = tx.send(SourceItem::Error(e));
                        return;
                    }
                }
            }
            let mut gaps = GapFinder::new(reader.fps);
            if let Some(t) = prev_t_s {
                gaps.step(t);
            }
            let start = Instant::now();
            let mut first_t: Option<f64> = None;
            loop {
                match reader.next_frame() {
                    Ok(Some(f)) => {
                        decoded += 1;
                        if realtime {
                            let t0 = *first_t.get_or_insert(f.t_s);
                            let _ = released.set((start, t0));
                            let due = Duration::from_secs_f64((f.t_s - t0).max(0.0));
                            if let Some(wait) = due.checked_sub(start.elapsed()) {
                                std::thread::sleep(wait);
                            }
                            // As a camera does: a frame that finds the consumer still
                            // behind (the queue full) is dropped, so the delay stays
                            // bounded; the next frame sent carries the gap (`unseen`).
                            if tx.is_full() {
                                continue;
                            }
                        }
                        if let Some(g) = gaps.step(f.t_s) {
                            if tx.send(SourceItem::Gap(g)).is_err() {
                                return;
                            }
                        }
                        if tx.send(SourceItem::Frame(f)).is_err() {
                            return;
                        }
                    }
                    Ok(None) => {
                        if expected > 0 && decoded + 1 < expected {
                            let _ = tx.send(SourceItem::Error(CaptureError::Input {
                                path: reader.path().to_path_buf(),
                                place: format!("frame {decoded}"),
                                problem: format!(
                                    "the video ends after {decoded} of the {expected} frames it announces (truncated?)"
                                ),
                            }));
                        }
                        return;
                    }
                    Err(e) => {
                        let _ = tx.send(SourceItem::Error(e));
                        return;
                    }
                }
            }
        })
        .ok();
    FrameSource {
        rx,
        handle,
        clock,
        fps,
        frame_count,
    }
}

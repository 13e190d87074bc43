//! The video encoder: raw frames piped into the `ffmpeg` command (libx264 with a fixed
//! count of two threads, which x264 keeps deterministic, and bit-exact flags) so that the
//! same frames always give the same bytes on any machine. Measured much
//! faster than OpenCV's own writer, which cannot set the H.264 preset or quality.
//! Frames arrive as BGR and ffmpeg converts them to YUV 4:2:0. (Converting with OpenCV's
//! `COLOR_BGR2YUV_I420` instead was measured: faster, but its chroma differs from
//! ffmpeg's filtered downsampling enough to move colour edges, and the card detector's
//! field error on the simulator's recordings grew from 0.8 to 2.5 mm median.)
//! A writer thread takes frames from a short queue, so the renderer draws the next frame
//! while ffmpeg reads and converts the last.

use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum EncodeError {
    #[error("cannot start ffmpeg (install the Debian package `ffmpeg`): {0}")]
    Start(std::io::Error),
    #[error("writing a frame to ffmpeg failed: {0}")]
    Write(std::io::Error),
    #[error("ffmpeg failed: {0}")]
    Failed(String),
}

/// x264 speed preset: `ultrafast` keeps the encoder (on its own core) at about the
/// renderer's pace; slower presets make files 2-3x smaller but take 2-3x longer.
pub const X264_PRESET: &str = "ultrafast";

/// The pipe's buffer, asked of the kernel (Linux caps it at `/proc/sys/fs/pipe-max-size`,
/// 1 MiB by default): with the default 64 KiB a frame crosses in over forty pieces, each
/// a switch between the writer and ffmpeg, which costs most when both share one core.
const PIPE_BYTES: usize = 1 << 20;

/// Frames queued between the renderer and the pipe: the renderer draws the next frame
/// while ffmpeg still reads and converts the last one.
const QUEUED_FRAMES: usize = 2;

/// An H.264 .mp4 being written.
pub struct Encoder {
    child: Child,
    /// Frames to the writer thread, and their buffers back for reuse.
    frames: Option<SyncSender<Vec<u8>>>,
    spare: Receiver<Vec<u8>>,
    writer: Option<JoinHandle<std::io::Result<()>>>,
}

/// Writes queued frames into ffmpeg's standard input until the queue closes.
fn write_frames(
    mut stdin: ChildStdin,
    frames: Receiver<Vec<u8>>,
    spare: SyncSender<Vec<u8>>,
) -> std::io::Result<()> {
    for f in frames {
        stdin.write_all(&f)?;
        // The renderer may have stopped asking for buffers; then this one is dropped.
        let _ = spare.try_send(f);
    }
    Ok(())
}

impl Encoder {
    pub fn start(
        path: &Path,
        width: u32,
        height: u32,
        fps: f64,
        crf: u32,
    ) -> Result<Encoder, EncodeError> {
        let mut child = Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "bgr24"])
            .args(["-s", &format!("{width}x{height}"), "-r", &format!("{fps}")])
            .args(["-i", "-", "-an", "-c:v", "libx264", "-preset", X264_PRESET])
            .args([
                "-crf",
                &crf.to_string(),
                "-pix_fmt",
                "yuv420p",
                "-threads",
                "2",
            ])
            .args([
                "-fflags",
                "+bitexact",
                "-flags:v",
                "+bitexact",
                "-map_metadata",
                "-1",
            ])
            .arg(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(EncodeError::Start)?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| EncodeError::Start(std::io::Error::other("no pipe to ffmpeg")))?;
        // A larger buffer only saves switches; the default one works, so a refusal is fine.
        let _ = rustix::pipe::fcntl_setpipe_size(&stdin, PIPE_BYTES);
        let (frames_tx, frames_rx) = sync_channel(QUEUED_FRAMES);
        let (spare_tx, spare_rx) = sync_channel(QUEUED_FRAMES + 1);
        let writer = std::thread::spawn(move || write_frames(stdin, frames_rx, spare_tx));
        Ok(Encoder {
            child,
            frames: Some(frames_tx),
            spare: spare_rx,
            writer: Some(writer),
        })
    }

    /// Queues one frame, packed BGR; waits only when `QUEUED_FRAMES` are already queued.
    pub fn write(&mut self, bgr: &[u8]) -> Result<(), EncodeError> {
        let mut buf = self.spare.try_recv().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(bgr);
        let sent = match &self.frames {
            Some(tx) => tx.send(buf).is_ok(),
            None => false,
        };
        if sent {
            Ok(())
        } else {
            // The writer stopped: its error says why.
            Err(self
                .stop_writer()
                .err()
                .unwrap_or_else(|| EncodeError::Failed("encoder already closed".into())))
        }
    }

    /// Closes the queue and waits for the writer to empty it.
    fn stop_writer(&mut self) -> Result<(), EncodeError> {
        drop(self.frames.take());
        match self.writer.take().map(|w| w.join()) {
            Some(Ok(Err(e))) => Err(EncodeError::Write(e)),
            Some(Err(_)) => Err(EncodeError::Failed("the frame writer stopped".into())),
            _ => Ok(()),
        }
    }

    pub fn finish(mut self) -> Result<(), EncodeError> {
        let written = self.stop_writer();
        let out = self.child.wait_with_output().map_err(EncodeError::Start)?;
        written?;
        if out.status.success() {
            Ok(())
        } else {
            Err(EncodeError::Failed(
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ))
        }
    }
}

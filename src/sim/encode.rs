//! The video encoder: raw BGR frames piped into the `ffmpeg` command (libx264, one thread,
//! bit-exact flags) so that the same frames always give the same bytes. Measured much
//! faster than OpenCV's own writer, which cannot set the H.264 preset or quality.

use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
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

/// An H.264 .mp4 being written.
pub struct Encoder {
    child: Child,
    stdin: Option<ChildStdin>,
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
                "1",
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
        let stdin = child.stdin.take();
        Ok(Encoder { child, stdin })
    }

    pub fn write(&mut self, bgr: &[u8]) -> Result<(), EncodeError> {
        match self.stdin.as_mut() {
            Some(s) => s.write_all(bgr).map_err(EncodeError::Write),
            None => Err(EncodeError::Failed("encoder already closed".into())),
        }
    }

    pub fn finish(mut self) -> Result<(), EncodeError> {
        drop(self.stdin.take());
        let out = self.child.wait_with_output().map_err(EncodeError::Start)?;
        if out.status.success() {
            Ok(())
        } else {
            Err(EncodeError::Failed(
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ))
        }
    }
}

//! Sound in and out of a video through the `ffmpeg` command: the sound track decoded to
//! mono f32 samples, and a track muxed beside a copied video stream. Owns the tools'
//! command lines; knows nothing of readings.

use super::AudioError;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

/// Samples a second of the analysis signal.
pub const ANALYSIS_RATE_HZ: u32 = 16_000;
/// Samples a second of the muxed sound track (AAC, 48 kHz).
pub const TRACK_RATE_HZ: u32 = 48_000;

fn spawn_error(tool: &str, e: std::io::Error) -> AudioError {
    AudioError::tool(
        tool,
        format!("cannot be run ({e}); install the Debian package {tool}"),
    )
}

/// The number of sound streams in a media file and its duration in seconds.
pub fn probe(path: &Path) -> Result<(usize, f64), AudioError> {
    let out = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-show_entries",
            "stream=codec_type:format=duration",
        ])
        .args(["-of", "default=noprint_wrappers=1"])
        .arg(path)
        .output()
        .map_err(|e| spawn_error("ffprobe", e))?;
    if !out.status.success() {
        let msg = String::from_utf8_lossy(&out.stderr);
        return Err(AudioError::input(
            path,
            "file",
            format!(
                "not a readable video: {}",
                msg.lines().next().unwrap_or("ffprobe failed")
            ),
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let audio = text
        .lines()
        .filter(|l| l.trim() == "codec_type=audio")
        .count();
    let duration_s = text
        .lines()
        .find_map(|l| l.strip_prefix("duration="))
        .and_then(|d| d.trim().parse::<f64>().ok())
        .unwrap_or(0.0);
    Ok((audio, duration_s))
}

/// Decodes the first sound stream to mono f32 at `rate_hz`; `t = 0` is the video's clock.
pub fn decode(path: &Path, rate_hz: u32) -> Result<Vec<f32>, AudioError> {
    let (streams, _) = probe(path)?;
    if streams == 0 {
        return Err(AudioError::input(
            path,
            "sound track",
            "the video has no sound track: the readings cannot be heard (give readings.jsonl)",
        ));
    }
    let mut child = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-i"])
        .arg(path)
        .args([
            "-map",
            "0:a:0",
            "-vn",
            "-ac",
            "1",
            "-ar",
            &rate_hz.to_string(),
        ])
        .args(["-f", "f32le", "pipe:1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| spawn_error("ffmpeg", e))?;
    let mut bytes = Vec::new();
    let mut stderr = child.stderr.take();
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(e) = stderr.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        s
    });
    if let Some(mut out) = child.stdout.take() {
        out.read_to_end(&mut bytes)
            .map_err(|e| AudioError::io(path, e))?;
    }
    let status = child.wait().map_err(|e| AudioError::io(path, e))?;
    let err_text = err_thread.join().unwrap_or_default();
    if !status.success() {
        return Err(AudioError::input(
            path,
            "sound track",
            format!(
                "cannot be decoded: {}",
                err_text.lines().next().unwrap_or("ffmpeg failed")
            ),
        ));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// Reads any sound file ffmpeg knows as mono f32 at `rate_hz`.
pub fn read_sound_file(path: &Path, rate_hz: u32) -> Result<Vec<f32>, AudioError> {
    decode(path, rate_hz)
}

/// Writes `out` = the video stream of `video` (copied, not re-encoded) with `track`
/// (mono f32 at TRACK_RATE_HZ, t = 0 at the first frame) as its AAC sound.
pub fn mux(video: &Path, track: &[f32], out: &Path) -> Result<(), AudioError> {
    let mut child = Command::new("ffmpeg")
        .args(["-nostdin", "-y", "-v", "error", "-i"])
        .arg(video)
        .args([
            "-f",
            "f32le",
            "-ar",
            &TRACK_RATE_HZ.to_string(),
            "-ac",
            "1",
            "-i",
            "pipe:0",
        ])
        .args(["-map", "0:v:0", "-map", "1:a:0", "-c:v", "copy"])
        .args([
            "-c:a",
            "aac",
            "-b:a",
            "160k",
            "-ar",
            &TRACK_RATE_HZ.to_string(),
        ])
        .args(["-movflags", "+faststart"])
        .arg(out)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| spawn_error("ffmpeg", e))?;
    let mut stderr = child.stderr.take();
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(e) = stderr.as_mut() {
            let _ = e.read_to_string(&mut s);
        }
        s
    });
    if let Some(mut stdin) = child.stdin.take() {
        let mut bytes = Vec::with_capacity(track.len() * 4);
        for s in track {
            bytes.extend_from_slice(&s.clamp(-1.0, 1.0).to_le_bytes());
        }
        stdin
            .write_all(&bytes)
            .map_err(|e| AudioError::io(out, e))?;
    }
    let status = child.wait().map_err(|e| AudioError::io(out, e))?;
    let err_text = err_thread.join().unwrap_or_default();
    if !status.success() {
        return Err(AudioError::tool(
            "ffmpeg",
            format!("muxing {} failed: {}", out.display(), err_text.trim()),
        ));
    }
    Ok(())
}

/// TRACK_RATE_HZ samples brought to ANALYSIS_RATE_HZ (a windowed-sinc low-pass at
/// 7 kHz, then every third sample).
pub fn track_to_analysis_rate(x: &[f32]) -> Vec<f32> {
    const TAPS: usize = 97;
    const CUT: f64 = 7000.0 / TRACK_RATE_HZ as f64;
    let h: Vec<f32> = (0..TAPS)
        .map(|i| {
            let m = i as f64 - (TAPS - 1) as f64 / 2.0;
            let sinc = if m == 0.0 {
                2.0 * CUT
            } else {
                (2.0 * std::f64::consts::PI * CUT * m).sin() / (std::f64::consts::PI * m)
            };
            let w = 0.54 - 0.46 * (2.0 * std::f64::consts::PI * i as f64 / (TAPS - 1) as f64).cos();
            (sinc * w) as f32
        })
        .collect();
    let half = TAPS / 2;
    (0..x.len() / 3)
        .map(|o| {
            let c = o * 3;
            let mut acc = 0.0f32;
            for (k, hk) in h.iter().enumerate() {
                let idx = c as isize + k as isize - half as isize;
                if idx >= 0 && (idx as usize) < x.len() {
                    acc += x[idx as usize] * hk;
                }
            }
            acc
        })
        .collect()
}

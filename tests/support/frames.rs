//! Reduced frames (the hand network's input) sampled from a short simulated match.

use karuta_referee::hands::model::{shrink, SmallFrame};
use opencv::prelude::*;
use opencv::videoio;
use std::process::Command;

/// Up to `n` reduced frames, every 20th, of a one-reading 640x360 30 fps match drawn
/// with `seed` by the binary; the temporary recording is removed.
#[allow(dead_code)]
pub fn sampled_small_frames(seed: u64, n: usize) -> Vec<SmallFrame> {
    sampled_frames(seed, n)
        .iter()
        .map(|f| shrink(f).unwrap())
        .collect()
}

/// The same frames as decoded (640x360 BGR).
#[allow(dead_code)]
pub fn sampled_frames(seed: u64, n: usize) -> Vec<opencv::core::Mat> {
    let dir = std::env::temp_dir().join(format!("karuta-frames-{seed}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let ok = Command::new(env!("CARGO_BIN_EXE_karuta-referee"))
        .args(["simulate", "--seed", &seed.to_string(), "--readings", "1"])
        .args(["--size", "640x360", "--fps", "30", "--out"])
        .arg(&dir)
        .output()
        .expect("simulate");
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let mut cap =
        videoio::VideoCapture::from_file(dir.join("video.mp4").to_str().unwrap(), videoio::CAP_ANY)
            .unwrap();
    let mut frame = opencv::core::Mat::default();
    let mut out = Vec::new();
    let mut i = 0;
    while out.len() < n && cap.read(&mut frame).unwrap() {
        i += 1;
        if i % 20 == 0 {
            out.push(frame.try_clone().unwrap());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    out
}

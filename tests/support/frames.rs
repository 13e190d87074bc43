//! Reduced frames (the hand network's input) sampled from a short simulated match.

use karuta_referee::hands::model::{shrink, SmallFrame};
use karuta_referee::hands::HandModel;
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

/// The committed hand model.
#[allow(dead_code)]
pub fn committed_model() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/hands.onnx")
}

/// Two loadings of the hand network run on the same frames: the largest difference
/// between their logits, and how many of the first's cells are confident (|logit| > 2)
/// so that the maps are known to say something.
#[allow(dead_code)]
pub fn largest_logit_difference(
    a: &HandModel,
    b: &HandModel,
    frames: &[SmallFrame],
) -> (f32, usize) {
    let (mut worst, mut hot) = (0.0f32, 0usize);
    for small in frames {
        let x = a.run(small).unwrap();
        let y = b.run(small).unwrap();
        assert_eq!(x.data.len(), y.data.len());
        for (u, v) in x.data.iter().zip(&y.data) {
            worst = worst.max((u - v).abs());
        }
        hot += x.data.iter().filter(|v| v.abs() > 2.0).count();
    }
    (worst, hot)
}

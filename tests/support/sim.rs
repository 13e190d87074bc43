//! Small simulated recordings with labels, and `analyze` run on them with the labels'
//! hands: what the tracker tests share.

use karuta_referee::sim::{simulate, Preset, SimOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_karuta-referee");

/// A clean-preset 640x360 recording with labels in a fresh temporary directory named
/// after `tag` and `seed`.
pub fn labelled_recording(tag: &str, seed: u64, fps: f64, readings: usize) -> PathBuf {
    labelled_recording_as(tag, seed, fps, readings, Preset::Clean, (640, 360))
}

/// A recording with labels of `preset` at `size` (width, height) in a fresh temporary
/// directory named after `tag` and `seed`.
pub fn labelled_recording_as(
    tag: &str,
    seed: u64,
    fps: f64,
    readings: usize,
    preset: Preset,
    size: (u32, u32),
) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("karuta-{tag}-{seed}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = SimOptions {
        seed,
        fps,
        width_px: size.0,
        height_px: size.1,
        readings,
        preset,
        labels: true,
        ..SimOptions::default()
    };
    simulate(&opts, &dir, false).unwrap();
    dir
}

/// `analyze` on `rec` with the labels' hands and no report, into `rec/out`; fails the
/// test unless it exits 0.
pub fn analyze_with_labels(rec: &Path) -> PathBuf {
    let out = rec.join("out");
    let o = Command::new(BIN)
        .arg("analyze")
        .arg(rec)
        .arg("--out")
        .arg(&out)
        .args(["--hands-labels", "--no-report"])
        .output()
        .unwrap();
    super::assert_exit_0(&o);
    out
}

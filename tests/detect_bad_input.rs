//! `layout DIR` on input it cannot use: one line naming the file and the problem, exit 2.

use std::path::{Path, PathBuf};
use std::process::Command;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("karuta-detect-bad-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run_layout(dir: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_karuta-referee"))
        .arg("layout")
        .arg(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_one_line(stderr: &str, mentions: &str) {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line expected, got: {stderr}");
    assert!(
        lines[0].contains(mentions),
        "{} should mention {mentions}",
        lines[0]
    );
}

/// A short video of bare tatami-coloured noise: plays, but shows no field.
fn write_empty_scene(path: &Path) {
    use opencv::core::{self, Mat, Scalar, Size};
    use opencv::prelude::*;
    use opencv::videoio::{VideoWriter, CAP_FFMPEG};
    let mut w = VideoWriter::new_with_backend(
        path,
        CAP_FFMPEG,
        VideoWriter::fourcc('a', 'v', 'c', '1').unwrap(),
        10.0,
        Size::new(320, 180),
        true,
    )
    .unwrap();
    assert!(w.is_opened().unwrap());
    for _ in 0..10 {
        let mut f = Mat::new_rows_cols_with_default(
            180,
            320,
            core::CV_8UC3,
            Scalar::new(80.0, 150.0, 140.0, 0.0),
        )
        .unwrap();
        let mut n =
            Mat::new_rows_cols_with_default(180, 320, core::CV_8UC3, Scalar::all(0.0)).unwrap();
        core::randu(&mut n, &Scalar::all(0.0), &Scalar::all(20.0)).unwrap();
        let mut s = Mat::default();
        core::add(&f, &n, &mut s, &core::no_array(), -1).unwrap();
        f = s;
        w.write(&f).unwrap();
    }
    w.release().unwrap();
}

#[test]
fn video_with_no_field_in_view_is_one_line_exit_2() {
    let dir = tmp("empty");
    write_empty_scene(&dir.join("video.mp4"));
    let (code, err) = run_layout(&dir);
    assert_eq!(code, 2, "{err}");
    assert_one_line(&err, "no field in view");
}

#[test]
fn unreadable_video_is_one_line_exit_2() {
    let dir = tmp("garbage");
    std::fs::write(dir.join("video.mp4"), b"this is not a video at all").unwrap();
    let (code, err) = run_layout(&dir);
    assert_eq!(code, 2, "{err}");
    assert_one_line(&err, "video.mp4");
}

#[test]
fn truncated_video_is_one_line_exit_2() {
    let dir = tmp("truncated");
    write_empty_scene(&dir.join("full.mp4"));
    let bytes = std::fs::read(dir.join("full.mp4")).unwrap();
    std::fs::write(dir.join("video.mp4"), &bytes[..bytes.len().min(600)]).unwrap();
    let (code, err) = run_layout(&dir);
    assert_eq!(code, 2, "{err}");
    assert_one_line(&err, "video.mp4");
}

#[test]
fn missing_video_is_one_line_exit_2() {
    let dir = tmp("missing");
    let (code, err) = run_layout(&dir);
    assert_eq!(code, 2, "{err}");
    assert_one_line(&err, "no video file");
}

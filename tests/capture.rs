//! Frame times from the container, on a video encoded as a phone records it (H.264 High
//! profile with B-frames, no `frames.csv` beside it): every frame follows the one before
//! by one period, the frames FFmpeg flushes at the end of the stream included. And frames
//! fetched by index (the review page's evidence), forward, far ahead and back, are the
//! frames read in order.

use karuta_referee::capture::{VideoReader, SEEK_AHEAD_FRAMES};
use opencv::core::{self, Mat};
use std::path::Path;
use std::process::Command;

/// A test pattern of `seconds` at 240 fps, 320x180, as H.264 (keyframe every `gop` frames).
fn pattern_video(video: &Path, seconds: f64, gop: u32) {
    let ok = Command::new("ffmpeg")
        .args(["-nostdin", "-y", "-v", "error", "-f", "lavfi", "-i"])
        .arg(format!("testsrc2=s=320x180:r=240:d={seconds}"))
        .args([
            "-c:v",
            "libx264",
            "-g",
            &gop.to_string(),
            "-pix_fmt",
            "yuv420p",
        ])
        .arg(video)
        .status()
        .expect("ffmpeg");
    assert!(ok.success());
}

fn same_image(a: &Mat, b: &Mat) -> bool {
    let mut d = Mat::default();
    core::absdiff(a, b, &mut d).unwrap();
    core::norm(&d, core::NORM_INF, &core::no_array()).unwrap() == 0.0
}

#[test]
fn frames_fetched_by_index_are_the_frames_read_in_order() {
    let dir = std::env::temp_dir().join(format!("karuta-capture-at-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let video = dir.join("video.mp4");
    pattern_video(&video, 3.0, 60);
    let mut r = VideoReader::open(&video).unwrap();
    let mut in_order = Vec::new();
    let mut times = Vec::new();
    while let Some(f) = r.next_frame().unwrap() {
        in_order.push((*f.bgr).clone());
        times.push(f.t_s);
    }
    assert_eq!(in_order.len(), 720);
    let mut at = VideoReader::open(&video).unwrap();
    assert_eq!((at.width_px, at.height_px), (320, 180));
    // Near ahead (read forward), far ahead (a seek), back (a seek), the last, past the end.
    let far = 10 + SEEK_AHEAD_FRAMES + 77;
    for i in [3, 4, 10, far, far + 1, 150, 719] {
        let got = at.frame_at(i).unwrap().expect("a frame");
        assert!(same_image(&got, &in_order[i]), "frame {i} differs");
    }
    assert!(at.frame_at(720).unwrap().is_none());
    // A reader put before a frame (as the layout's still stretches are read) reads it
    // next, with its index and time, then the frames after it in order.
    let mut sought = VideoReader::open(&video).unwrap();
    for i in [far, 5, far + SEEK_AHEAD_FRAMES / 2, 700] {
        assert!(sought.seek(i).unwrap());
        for j in i..i + 3 {
            let f = sought.next_frame().unwrap().expect("a frame");
            assert_eq!(f.index, j);
            assert!((f.t_s - times[j]).abs() < 1e-9, "frame {j}: {} s", f.t_s);
            assert!(
                same_image(&f.bgr, &in_order[j]),
                "frame {j} differs after seek({i})"
            );
        }
    }
    assert!(!sought.seek(900).unwrap_or(false));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_phone_like_video_s_frames_are_timed_one_period_apart_to_the_last() {
    let dir = std::env::temp_dir().join(format!("karuta-capture-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let video = dir.join("video.mp4");
    let ok = Command::new("ffmpeg")
        .args(["-nostdin", "-y", "-v", "error", "-f", "lavfi", "-i"])
        .arg("testsrc2=s=320x180:r=240:d=0.5")
        .args([
            "-c:v",
            "libx264",
            "-profile:v",
            "high",
            "-bf",
            "3",
            "-g",
            "240",
            "-pix_fmt",
            "yuv420p",
        ])
        .arg(&video)
        .status()
        .expect("ffmpeg");
    assert!(ok.success());
    let mut r = VideoReader::open(&video).unwrap();
    let period = 1.0 / r.fps;
    let mut times = Vec::new();
    while let Some(f) = r.next_frame().unwrap() {
        times.push(f.t_s);
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(times.len(), 120);
    for (i, w) in times.windows(2).enumerate() {
        let step = w[1] - w[0];
        assert!(
            (step - period).abs() < 0.25 * period,
            "frame {}: {:.4} s after the one before",
            i + 1,
            step
        );
    }
    let last = *times.last().unwrap();
    assert!(
        (last - 119.0 * period).abs() < 1e-3,
        "last frame at {last:.4} s"
    );
}

//! Frame times from the container, on a video encoded as a phone records it (H.264 High
//! profile with B-frames, no `frames.csv` beside it): every frame follows the one before
//! by one period, the frames FFmpeg flushes at the end of the stream included.

use karuta_referee::capture::VideoReader;
use std::process::Command;

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

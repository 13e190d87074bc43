//! `readings` cost on a 10-minute recording: a black video dubbed with a tournament
//! reader's timeline (espeak-held over a moderate hall, or the voice named by
//! `KARUTA_BENCH_VOICE`), then the timeline heard back from the sound track (decoding
//! included). `cargo bench --bench audio` (needs ffmpeg and espeak-ng). Under `cargo test` (no `--bench` flag) it only checks it runs, on a
//! 40-second recording.

use karuta_referee::audio::{self, timeline::tournament_timeline, DubOptions, NoiseLevel};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn main() {
    let benching = std::env::args().any(|a| a == "--bench");
    let target_s = if benching { 600.0 } else { 40.0 };
    let dir = std::env::temp_dir().join(format!("karuta-bench-audio-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch folder");
    // Readings until the timeline passes the target length.
    let mut readings = tournament_timeline(9001, 100, 0.8);
    readings.retain(|r| r.shimo_start_s.unwrap_or(r.kami_start_s) + 5.0 < target_s);
    let black = dir.join("black.mp4");
    let ok = Command::new("ffmpeg")
        .args(["-nostdin", "-y", "-v", "error", "-f", "lavfi", "-i"])
        .arg(format!("color=c=black:s=160x90:r=5:d={target_s}"))
        .args(["-c:v", "libx264", "-pix_fmt", "yuv420p"])
        .arg(&black)
        .status()
        .expect("ffmpeg");
    assert!(ok.success());
    let opts = DubOptions {
        voice: std::env::var("KARUTA_BENCH_VOICE").unwrap_or_else(|_| "espeak-held".into()),
        noise: NoiseLevel::Moderate,
        seed: 3,
        cache_dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("data/audio-cache"),
    };
    let video = dir.join("video.mp4");
    audio::dub_video(&black, &readings, &opts, &video).expect("dub");
    let t0 = Instant::now();
    let heard = audio::readings_from_video(&video).expect("readings");
    let secs = t0.elapsed().as_secs_f64();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if benching {
        println!(
            "audio: readings on a {target_s:.0} s recording ({}, {} readings spoken, {} heard, {} named): {secs:.2} s ({threads} threads available)",
            opts.voice,
            readings.len(),
            heard.len(),
            heard.iter().filter(|r| r.poem.is_some()).count()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

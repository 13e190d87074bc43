//! `analyze`'s speed and memory (issue: the referee from video), as ratios measured in
//! one run on the same file: wall time over the recording's duration and over the time
//! to decode it alone, on the simulator's encoding and on the same video re-encoded like
//! a phone's (H.264 High profile at about 40 Mb/s, a key frame a second); and the peak
//! memory of a 1-minute and a 5-minute recording.
//!
//! `cargo bench --bench analyze`. The recording is `KARUTA_BENCH_RECORDING` when set (a
//! simulated 1280x720 240 fps match is what the README quotes), else a 3-reading one drawn
//! here. `KARUTA_BENCH_MEMORY=1` adds the memory comparison (two recordings drawn here,
//! about 15 minutes of simulation); `KARUTA_BENCH_MEMORY=only` runs it alone. Under `cargo test` (no `--bench` flag) it only checks
//! that it runs, on a 2-reading 320x180 recording.
//!
//! `analyze` runs as its own process (`--no-report`, the hand model) and reports its
//! peak memory in its summary line; the machine should be otherwise idle. Built with
//! `--features ort` (and `ORT_DYLIB_PATH` naming the ONNX Runtime library), each
//! encoding is analyzed again with `--backend ort` in the same run.

use karuta_referee::capture::VideoReader;
use karuta_referee::detect::video::find_video;
use karuta_referee::sim::{simulate, Preset, SimOptions};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

struct Measured {
    video_s: f64,
    decode_wall_s: f64,
    analyze_wall_s: f64,
    hands_cpu_s: f64,
    cards_cpu_s: f64,
    peak_mb: f64,
}

fn draw(dir: &Path, seed: u64, readings: usize, size: (u32, u32), fps: f64) {
    let _ = std::fs::remove_dir_all(dir);
    let opts = SimOptions {
        seed,
        fps,
        width_px: size.0,
        height_px: size.1,
        readings,
        preset: Preset::Realistic,
        labels: false,
        ..SimOptions::default()
    };
    simulate(&opts, dir, false).expect("simulate");
}

/// The same recording with its video re-encoded as a phone records: H.264 High profile
/// with B-frames, 40 Mb/s constant, a key frame a second, no frame-time table beside it
/// (frame times from the container).
fn phone_copy(dir: &Path, out: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(out);
    std::fs::create_dir_all(out).expect("phone folder");
    for f in ["readings.jsonl", "calibration.json"] {
        if dir.join(f).is_file() {
            std::fs::copy(dir.join(f), out.join(f)).expect("copy");
        }
    }
    let video = find_video(dir).expect("video");
    let fps = VideoReader::open(&video).expect("open").fps;
    let ok = Command::new("ffmpeg")
        .args(["-nostdin", "-y", "-v", "error", "-i"])
        .arg(&video)
        .args([
            "-an",
            "-c:v",
            "libx264",
            "-profile:v",
            "high",
            "-preset",
            "fast",
            "-b:v",
            "40M",
            "-minrate",
            "40M",
            "-maxrate",
            "40M",
            "-bufsize",
            "40M",
            "-x264-params",
            "nal-hrd=cbr",
            "-pix_fmt",
            "yuv420p",
            "-g",
        ])
        .arg(format!("{}", fps.round() as i64))
        .arg(out.join("video.mp4"))
        .status()
        .expect("ffmpeg");
    assert!(ok.success(), "ffmpeg re-encode failed");
    out.to_path_buf()
}

fn decode_only(dir: &Path) -> (f64, f64) {
    let video = find_video(dir).expect("video");
    let mut r = VideoReader::open(&video).expect("open");
    let t0 = Instant::now();
    let mut last_t = 0.0;
    while let Some(f) = r.next_frame().expect("decode") {
        last_t = f.t_s;
    }
    (t0.elapsed().as_secs_f64(), last_t + 1.0 / r.fps)
}

/// The engines the hand model is run with: tract, and ONNX Runtime when built in.
const BACKENDS: &[&str] = if cfg!(feature = "ort") {
    &["tract", "ort"]
} else {
    &["tract"]
};

fn analyze(dir: &Path, out: &Path, backend: &str) -> Measured {
    let (decode_wall_s, video_s) = decode_only(dir);
    let t0 = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_karuta-referee"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("analyze")
        .arg(dir)
        .arg("--out")
        .arg(out)
        .arg("--no-report")
        .args(["--backend", backend])
        .output()
        .expect("analyze");
    let analyze_wall_s = t0.elapsed().as_secs_f64();
    assert!(
        o.status.success(),
        "analyze failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let line = String::from_utf8_lossy(&o.stdout);
    let v: serde_json::Value =
        serde_json::from_str(line.lines().last().unwrap_or("{}")).expect("analyze's summary line");
    let num = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    assert!(v["rulings"].as_u64().is_some(), "no rulings count: {line}");
    Measured {
        video_s,
        decode_wall_s,
        analyze_wall_s,
        hands_cpu_s: num("hands_cpu_s"),
        cards_cpu_s: num("cards_and_judge_cpu_s"),
        peak_mb: num("peak_memory_mb"),
    }
}

fn row(name: &str, backend: &str, m: &Measured) {
    println!(
        "| {name} | {backend} | {:.1} s | {:.1} s | {:.1} s | **{:.2}** | {:.1} | {:.1} s / {:.1} s | {:.0} MB |",
        m.video_s,
        m.decode_wall_s,
        m.analyze_wall_s,
        m.analyze_wall_s / m.video_s,
        m.analyze_wall_s / m.decode_wall_s,
        m.hands_cpu_s,
        m.cards_cpu_s,
        m.peak_mb
    );
}

fn speed(benching: bool, scratch: &Path) {
    let rec = match std::env::var_os("KARUTA_BENCH_RECORDING") {
        Some(p) => PathBuf::from(p),
        None => {
            let d = scratch.join("rec");
            if benching {
                draw(&d, 77, 3, (1280, 720), 240.0);
            } else {
                draw(&d, 77, 2, (320, 180), 60.0);
            }
            d
        }
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "analyze --no-report, hand model, {threads} cores; {}",
        rec.display()
    );
    println!(
        "| encoding | engine | video | decode only | analyze | analyze / video | analyze / decode | CPU hands / cards and judge | peak memory |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let phone = phone_copy(&rec, &scratch.join("phone"));
    for (enc, name, dir) in [
        ("sim", "simulator (x264, CRF)", &rec),
        ("phone", "phone-like (H.264 High, 40 Mb/s)", &phone),
    ] {
        for backend in BACKENDS {
            let m = analyze(dir, &scratch.join(format!("an-{enc}-{backend}")), backend);
            row(name, backend, &m);
        }
    }
}

fn main() {
    let benching = std::env::args().any(|a| a == "--bench");
    let scratch = std::env::temp_dir().join(format!("karuta-bench-analyze-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch folder");
    let memory = std::env::var("KARUTA_BENCH_MEMORY").ok();
    if memory.as_deref() != Some("only") {
        speed(benching, &scratch);
    }
    if benching && memory.is_some() {
        println!();
        println!(
            "| recording (realistic, 1280x720, 240 fps) | video | analyze / video | peak memory |"
        );
        println!("| --- | --- | --- | --- |");
        let mut peaks = Vec::new();
        for (name, readings) in [("1 minute", 9), ("5 minutes", 46)] {
            let d = scratch.join(format!("mem-{readings}"));
            draw(&d, 78, readings, (1280, 720), 240.0);
            let m = analyze(&d, &scratch.join(format!("an-mem-{readings}")), "tract");
            println!(
                "| {name} ({readings} readings) | {:.1} s | {:.2} | {:.0} MB |",
                m.video_s,
                m.analyze_wall_s / m.video_s,
                m.peak_mb
            );
            peaks.push(m.peak_mb);
            let _ = std::fs::remove_dir_all(&d);
        }
        println!(
            "peak memory, 5 minutes over 1 minute: {:.3}",
            peaks[1] / peaks[0]
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

//! Benchmark of perception: CPU time of the hand stage per frame (the network at its
//! schedule, decoding, field projection, events), averaged over a whole recording, with
//! decoding on another thread and not counted. `cargo bench --bench hands`.
//!
//! The recording is `KARUTA_BENCH_RECORDING` when set (a simulated 1280x720 240 fps
//! match of 10 readings is what the README quotes), else a 2-reading one drawn here.
//! Engines: tract with 1 and 2 threads; ONNX Runtime with 1 and 2 threads when built with
//! `--features ort` and `ORT_DYLIB_PATH` is set.

use karuta_referee::detect::video::{find_video, Video};
use karuta_referee::field::Calibration;
use karuta_referee::hands::{Backend, PerceiveOptions, Perceiver};
use karuta_referee::judge::thread_cpu_s;
use karuta_referee::rules::parse::parse_layout;
use karuta_referee::sim::{simulate, Preset, SimOptions};
use std::path::{Path, PathBuf};

fn recording() -> PathBuf {
    if let Some(p) = std::env::var_os("KARUTA_BENCH_RECORDING") {
        return PathBuf::from(p);
    }
    let dir = std::env::temp_dir().join(format!("karuta-hands-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = SimOptions {
        seed: 77,
        fps: 240.0,
        width_px: 1280,
        height_px: 720,
        readings: 2,
        preset: Preset::Realistic,
        labels: false,
        ..SimOptions::default()
    };
    simulate(&opts, &dir, false).expect("simulate");
    dir
}

fn run(dir: &Path, backend: Backend, threads: usize) -> Option<String> {
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/hands.onnx");
    let cal: Calibration =
        serde_json::from_str(&std::fs::read_to_string(dir.join("calibration.json")).ok()?).ok()?;
    let layout = parse_layout(
        "layout.json",
        &std::fs::read_to_string(dir.join("layout.json")).ok()?,
    )
    .ok()?;
    let opts = PerceiveOptions {
        backend,
        threads,
        ..PerceiveOptions::default()
    };
    let mut p = match Perceiver::new(&model, &cal, &layout, &opts) {
        Ok(p) => p,
        Err(e) => return Some(format!("{backend:?} {threads}T: not run ({e})")),
    };
    let mut video = Video::open(&find_video(dir).ok()?).ok()?;
    let (tx, rx) = crossbeam_channel::bounded(16);
    let reader = std::thread::spawn(move || {
        while let Ok(Some(f)) = video.next_frame() {
            if tx.send(f).is_err() {
                break;
            }
        }
    });
    let wall = std::time::Instant::now();
    let c0 = thread_cpu_s();
    let mut events = 0;
    for f in rx.iter() {
        events += p.push(f.index, f.t_s, &f.bgr).ok()?.events.len();
    }
    let cpu = thread_cpu_s() - c0;
    let _ = reader.join();
    let s = &p.stats;
    Some(format!(
        "{backend:?} {threads}T: {} frames, {} network runs ({:.1}% of frames, {} of them \
         narrowing a change down), {events} events; perception CPU {:.2} ms a frame \
         ({:.1} ms a run); contact networks {} fingertips, {:.1} ms each; wall {:.1} s",
        s.frames,
        s.inferences,
        100.0 * s.inferences as f64 / s.frames.max(1) as f64,
        s.refine_runs,
        cpu * 1000.0 / s.frames.max(1) as f64,
        s.infer_s * 1000.0 / s.inferences.max(1) as f64,
        s.contact_runs,
        s.contact_s * 1000.0 / s.contact_runs.max(1) as f64,
        wall.elapsed().as_secs_f64()
    ))
}

fn main() {
    let dir = recording();
    println!("recording: {}", dir.display());
    for (backend, threads) in [
        (Backend::Tract, 1),
        (Backend::Tract, 2),
        (Backend::Ort, 1),
        (Backend::Ort, 2),
    ] {
        match run(&dir, backend, threads) {
            Some(line) => println!("{line}"),
            None => println!("{backend:?} {threads}T: the recording could not be read"),
        }
    }
}

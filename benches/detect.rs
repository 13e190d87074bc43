//! Benchmarks of the card detector: layout extraction from a recording (still frames,
//! quads, names, registration) and the per-frame moved-card signal at 1280x720.
//! `cargo bench --bench detect`; numbers go to the README.

use karuta_referee::detect::cards::{self, FindOptions};
use karuta_referee::detect::layout::{measure_image, measure_layout_readings, undistort_image};
use karuta_referee::detect::motion::MotionMonitor;
use karuta_referee::detect::naming::Namer;
use karuta_referee::detect::still::layout_frames;
use karuta_referee::detect::video::Video;
use karuta_referee::field::{Calibration, Intrinsics};
use karuta_referee::sim::{simulate, Preset, SimOptions};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let dir = std::env::temp_dir().join(format!("karuta-detect-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = SimOptions {
        seed: 7,
        fps: 60.0,
        width_px: 1280,
        height_px: 720,
        readings: 1,
        preset: Preset::Realistic,
        labels: false,
        ..SimOptions::default()
    };
    simulate(&opts, &dir, false).expect("simulate");
    let video = dir.join("video.mp4");
    let cal: Calibration =
        serde_json::from_str(&std::fs::read_to_string(dir.join("calibration.json")).unwrap())
            .unwrap();
    let k = Intrinsics::from_calibration(&cal);
    let readings = std::fs::read_to_string(dir.join("readings.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(readings.lines().next().unwrap()).unwrap();
    let until = first["kami_start_s"].as_f64();

    println!(
        "machine: {} threads available",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let t = Instant::now();
    let namer = Namer::new().unwrap();
    println!(
        "templates (100 poems x {} styles): {:.0} ms",
        namer.styles().len(),
        t.elapsed().as_secs_f64() * 1e3
    );

    let mut still_ms = Vec::new();
    let mut find_ms = Vec::new();
    let mut total_ms = Vec::new();
    for _ in 0..3 {
        let t0 = Instant::now();
        let still = layout_frames(&video, until).unwrap();
        still_ms.push(t0.elapsed().as_secs_f64() * 1e3);
        let img = undistort_image(&still.image, &k).unwrap();
        let t1 = Instant::now();
        let found = cards::find_cards(&img, &FindOptions::default()).unwrap();
        find_ms.push(t1.elapsed().as_secs_f64() * 1e3);
        assert_eq!(found.len(), 50);
        let m = measure_image(&video, still, Some(&k), &namer).unwrap();
        assert_eq!(m.cards.len(), 50);
        total_ms.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    let (s, f, tot) = (median(still_ms), median(find_ms), median(total_ms));
    println!("layout extraction at 1280x720 (median of 3): still frames {s:.0} ms, card quads {f:.0} ms, names + registration {:.0} ms, total {tot:.0} ms", tot - s - f);

    // The whole command's work: templates, still frames, quads, names, registration, and
    // the later still stretches when the first is short or a card stays unnamed.
    let starts: Vec<f64> = readings
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["kami_start_s"].as_f64())
        .collect();
    let t = Instant::now();
    let m = measure_layout_readings(&video, &starts, Some(&k)).unwrap();
    println!(
        "layout as the command measures it (templates included): {:.0} ms, {} named, {} later still stretches",
        t.elapsed().as_secs_f64() * 1e3,
        m.cards.iter().filter(|c| c.name.poem.is_some()).count(),
        m.more_stills.len()
    );

    // Per-frame signal: frames decoded up front, so only the monitor is timed.
    let still = layout_frames(&video, until).unwrap();
    let m = measure_image(&video, still, Some(&k), &namer).unwrap();
    let outlines: Vec<_> = m.cards.iter().map(|c| c.raw_px).collect();
    let mut v = Video::open(&video).unwrap();
    let mut frames = Vec::new();
    while let Some(f) = v.next_frame().unwrap() {
        frames.push(f.bgr);
        if frames.len() >= 200 {
            break;
        }
    }
    for threads in [1, 2] {
        opencv::core::set_num_threads(threads).unwrap();
        let mut monitor = MotionMonitor::new(&m.still.image, &outlines).unwrap();
        let mut us = Vec::new();
        for _ in 0..3 {
            for f in &frames {
                let t = Instant::now();
                monitor.update(f).unwrap();
                us.push(t.elapsed().as_secs_f64() * 1e6);
            }
        }
        let mean = us.iter().sum::<f64>() / us.len() as f64;
        println!(
            "moved-card signal, 50 cards, 1280x720 BGR frame, {threads} OpenCV thread(s): median {:.0} us, mean {mean:.0} us per frame ({} frames)",
            median(us.clone()),
            us.len()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

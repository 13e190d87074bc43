//! The hand network on tract gives the same maps with its matrix products on a pool of
//! 2 threads (`--threads 2`) as on one, on frames of a simulated match, within
//! `TOLERANCE` on every logit.

use karuta_referee::hands::model::shrink;
use karuta_referee::hands::{Backend, HandModel};
use opencv::prelude::*;
use opencv::videoio;
use std::path::Path;
use std::process::Command;

/// The largest difference allowed between the two runs' logits (float32 sums split
/// differently between threads).
const TOLERANCE: f32 = 1e-4;

#[test]
fn tract_on_two_threads_gives_the_maps_of_one() {
    let dir = std::env::temp_dir().join(format!("karuta-threads-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let ok = Command::new(env!("CARGO_BIN_EXE_karuta-referee"))
        .args(["simulate", "--seed", "9103", "--readings", "1"])
        .args(["--size", "640x360", "--fps", "30", "--out"])
        .arg(&dir)
        .output()
        .expect("simulate");
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/hands.onnx");
    let one = HandModel::load(&model, Backend::Tract, 1).expect("tract, 1 thread");
    let two = HandModel::load(&model, Backend::Tract, 2).expect("tract, 2 threads");
    let mut cap =
        videoio::VideoCapture::from_file(dir.join("video.mp4").to_str().unwrap(), videoio::CAP_ANY)
            .unwrap();
    let mut frame = opencv::core::Mat::default();
    let (mut n, mut worst, mut hot) = (0, 0.0f32, 0usize);
    let mut i = 0;
    while cap.read(&mut frame).unwrap() && n < 6 {
        i += 1;
        if i % 20 != 0 {
            continue;
        }
        let small = shrink(&frame).unwrap();
        let a = one.run(&small).unwrap();
        let b = two.run(&small).unwrap();
        assert_eq!(a.data.len(), b.data.len());
        for (x, y) in a.data.iter().zip(&b.data) {
            worst = worst.max((x - y).abs());
        }
        // The maps say something: some cells are confident either way.
        hot += a.data.iter().filter(|v| v.abs() > 2.0).count();
        n += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(n >= 3, "frames compared: {n}");
    assert!(hot > 0, "no confident cell in {n} frames");
    assert!(worst <= TOLERANCE, "largest logit difference {worst}");
}

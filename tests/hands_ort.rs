//! The two engines of the hand model give the same maps: tract (the default) and ONNX
//! Runtime (`--features ort`, with `ORT_DYLIB_PATH` naming `libonnxruntime.so`), on frames
//! of a simulated match, within `TOLERANCE` on every logit. Built only with the feature.
#![cfg(feature = "ort")]

use karuta_referee::hands::model::shrink;
use karuta_referee::hands::{Backend, HandModel};
use opencv::prelude::*;
use opencv::videoio;
use std::path::Path;
use std::process::Command;

/// The largest difference allowed between the engines' logits (float32 sums taken in
/// another order).
const TOLERANCE: f32 = 1e-3;

#[test]
fn tract_and_onnx_runtime_give_the_same_maps() {
    assert!(
        std::env::var_os("ORT_DYLIB_PATH").is_some(),
        "built with --features ort: ORT_DYLIB_PATH must name libonnxruntime.so"
    );
    let dir = std::env::temp_dir().join(format!("karuta-ort-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let ok = Command::new(env!("CARGO_BIN_EXE_karuta-referee"))
        .args([
            "simulate",
            "--seed",
            "9102",
            "--readings",
            "1",
            "--size",
            "640x360",
        ])
        .args(["--fps", "30", "--out"])
        .arg(&dir)
        .output()
        .expect("simulate");
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/hands.onnx");
    let tract = HandModel::load(&model, Backend::Tract, 1).expect("tract");
    let ort = HandModel::load(&model, Backend::Ort, 1).expect("onnx runtime");
    let mut cap =
        videoio::VideoCapture::from_file(dir.join("video.mp4").to_str().unwrap(), videoio::CAP_ANY)
            .unwrap();
    let mut frame = opencv::core::Mat::default();
    let (mut n, mut worst) = (0, 0.0f32);
    let mut i = 0;
    while cap.read(&mut frame).unwrap() && n < 6 {
        i += 1;
        if i % 20 != 0 {
            continue;
        }
        let small = shrink(&frame).unwrap();
        let a = tract.run(&small).unwrap();
        let b = ort.run(&small).unwrap();
        assert_eq!(a.data.len(), b.data.len());
        for (x, y) in a.data.iter().zip(&b.data) {
            worst = worst.max((x - y).abs());
        }
        n += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(n >= 3, "frames compared: {n}");
    eprintln!("{n} frames, largest logit difference {worst:e}");
    assert!(worst <= TOLERANCE, "largest logit difference {worst}");
}

//! The two engines of the hand model give the same maps: tract (the default) and ONNX
//! Runtime (`--features ort`, with `ORT_DYLIB_PATH` naming `libonnxruntime.so`), on frames
//! of a simulated match, within `TOLERANCE` on every logit. Built only with the feature.
#![cfg(feature = "ort")]

mod support;

use karuta_referee::hands::{Backend, HandModel};
use std::path::Path;
use support::frames::sampled_small_frames;

/// The largest difference allowed between the engines' logits (float32 sums taken in
/// another order).
const TOLERANCE: f32 = 1e-3;

#[test]
fn tract_and_onnx_runtime_give_the_same_maps() {
    assert!(
        std::env::var_os("ORT_DYLIB_PATH").is_some(),
        "built with --features ort: ORT_DYLIB_PATH must name libonnxruntime.so"
    );
    let frames = sampled_small_frames(9102, 6);
    let n = frames.len();
    assert!(n >= 3, "frames compared: {n}");
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/hands.onnx");
    let tract = HandModel::load(&model, Backend::Tract, 1).expect("tract");
    let ort = HandModel::load(&model, Backend::Ort, 1).expect("onnx runtime");
    let mut worst = 0.0f32;
    for small in &frames {
        let a = tract.run(small).unwrap();
        let b = ort.run(small).unwrap();
        assert_eq!(a.data.len(), b.data.len());
        for (x, y) in a.data.iter().zip(&b.data) {
            worst = worst.max((x - y).abs());
        }
    }
    eprintln!("{n} frames, largest logit difference {worst:e}");
    assert!(worst <= TOLERANCE, "largest logit difference {worst}");
}

//! The two engines of the hand model give the same maps: tract (the default) and ONNX
//! Runtime (`--features ort`, with `ORT_DYLIB_PATH` naming `libonnxruntime.so`), on frames
//! of a simulated match, within `TOLERANCE` on every logit; and the contact networks
//! beside it the same pressing probabilities and points. Built only with the feature.
#![cfg(feature = "ort")]

mod support;

use karuta_referee::hands::contact::{ContactModel, CropSource};
use karuta_referee::hands::{Backend, HandModel};
use support::frames::{
    committed_model, largest_logit_difference, sampled_frames, sampled_small_frames,
};

/// The library the feature loads at run time must be named.
fn assert_library_named() {
    assert!(
        std::env::var_os("ORT_DYLIB_PATH").is_some(),
        "built with --features ort: ORT_DYLIB_PATH must name libonnxruntime.so"
    );
}

/// The largest difference allowed between the engines' logits (float32 sums taken in
/// another order).
const TOLERANCE: f32 = 1e-3;

#[test]
fn tract_and_onnx_runtime_give_the_same_maps() {
    assert_library_named();
    let frames = sampled_small_frames(9102, 6);
    let n = frames.len();
    assert!(n >= 3, "frames compared: {n}");
    let model = committed_model();
    let tract = HandModel::load(&model, Backend::Tract, 1).expect("tract");
    let ort = HandModel::load(&model, Backend::Ort, 1).expect("onnx runtime");
    let (worst, _) = largest_logit_difference(&tract, &ort, &frames);
    eprintln!("{n} frames, largest logit difference {worst:e}");
    assert!(worst <= TOLERANCE, "largest logit difference {worst}");
}

/// The largest difference allowed between the engines' pressing probabilities, and
/// between their press points (frame pixels).
const CONTACT_TOLERANCE: f64 = 1e-3;
const POINT_TOLERANCE_PX: f64 = 1e-2;

#[test]
fn tract_and_onnx_runtime_give_the_same_contact() {
    assert_library_named();
    let model = committed_model();
    let tract = ContactModel::beside(&model, Backend::Tract)
        .expect("tract")
        .expect("contact.onnx beside the hand model");
    let ort = ContactModel::beside(&model, Backend::Ort)
        .expect("onnx runtime")
        .expect("contact.onnx beside the hand model");
    let frames = sampled_frames(9103, 6);
    assert!(frames.len() >= 3, "frames compared: {}", frames.len());
    let sources: Vec<CropSource> = frames.iter().map(|f| CropSource::new(f).unwrap()).collect();
    let (mut worst_p, mut worst_px, mut n) = (0.0f64, 0.0f64, 0);
    // Squares around points over the field, each frame with the one before and the
    // first as the plate; every network runs (`enough` nil).
    for k in 1..sources.len() {
        let three = [&sources[k], &sources[k - 1], &sources[0]];
        for tip in [[320.0, 180.0], [250.0, 140.0], [400.0, 220.0]] {
            let a = tract.press_p(three, tip, 0.9, 0.0).unwrap();
            let b = ort.press_p(three, tip, 0.9, 0.0).unwrap();
            worst_p = worst_p.max((a - b).abs());
            let pa = tract.press_point(three, tip, 0.9).unwrap();
            let pb = ort.press_point(three, tip, 0.9).unwrap();
            if let (Some(pa), Some(pb)) = (pa, pb) {
                worst_px = worst_px.max((pa[0] - pb[0]).hypot(pa[1] - pb[1]));
            }
            n += 1;
        }
    }
    eprintln!("{n} squares, largest difference {worst_p:e} in p, {worst_px:e} px");
    assert!(
        worst_p <= CONTACT_TOLERANCE,
        "largest difference in p {worst_p}"
    );
    assert!(
        worst_px <= POINT_TOLERANCE_PX,
        "largest point difference {worst_px} px"
    );
}

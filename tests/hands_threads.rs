//! The hand network on tract gives the same maps with its matrix products on a pool of
//! 2 threads (`--threads 2`) as on one, on frames of a simulated match, within
//! `TOLERANCE` on every logit.

mod support;

use karuta_referee::hands::{Backend, HandModel};
use std::path::Path;
use support::frames::sampled_small_frames;

/// The largest difference allowed between the two runs' logits (float32 sums split
/// differently between threads).
const TOLERANCE: f32 = 1e-4;

#[test]
fn tract_on_two_threads_gives_the_maps_of_one() {
    let frames = sampled_small_frames(9103, 6);
    assert!(frames.len() >= 3, "frames compared: {}", frames.len());
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/hands.onnx");
    let one = HandModel::load(&model, Backend::Tract, 1).expect("tract, 1 thread");
    let two = HandModel::load(&model, Backend::Tract, 2).expect("tract, 2 threads");
    let (mut worst, mut hot) = (0.0f32, 0usize);
    for small in &frames {
        let a = one.run(small).unwrap();
        let b = two.run(small).unwrap();
        assert_eq!(a.data.len(), b.data.len());
        for (x, y) in a.data.iter().zip(&b.data) {
            worst = worst.max((x - y).abs());
        }
        // The maps say something: some cells are confident either way.
        hot += a.data.iter().filter(|v| v.abs() > 2.0).count();
    }
    assert!(hot > 0, "no confident cell in {} frames", frames.len());
    assert!(worst <= TOLERANCE, "largest logit difference {worst}");
}

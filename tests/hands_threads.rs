//! The hand network on tract gives the same maps with its matrix products on a pool of
//! 2 threads (`--threads 2`) as on one, on frames of a simulated match, within
//! `TOLERANCE` on every logit.

mod support;

use karuta_referee::hands::{Backend, HandModel};
use support::frames::{committed_model, largest_logit_difference, sampled_small_frames};

/// The largest difference allowed between the two runs' logits (float32 sums split
/// differently between threads).
const TOLERANCE: f32 = 1e-4;

#[test]
fn tract_on_two_threads_gives_the_maps_of_one() {
    let frames = sampled_small_frames(9103, 6);
    assert!(frames.len() >= 3, "frames compared: {}", frames.len());
    let model = committed_model();
    let one = HandModel::load(&model, Backend::Tract, 1).expect("tract, 1 thread");
    let two = HandModel::load(&model, Backend::Tract, 2).expect("tract, 2 threads");
    let (worst, hot) = largest_logit_difference(&one, &two, &frames);
    // The maps say something: some cells are confident either way.
    assert!(hot > 0, "no confident cell in {} frames", frames.len());
    assert!(worst <= TOLERANCE, "largest logit difference {worst}");
}

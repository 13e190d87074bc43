//! Field-stage timings at 1280x720: registration from 50 card quads, point mapping, the
//! drift tracker's per-update cost, marker registration. `cargo bench --bench field`.
//! Plain timing loops (median of many runs); the numbers go into docs/field.md.

use karuta_referee::field::synth::{self, Camera};
use karuta_referee::field::{register_from_cards, register_from_markers, DriftTracker};
use karuta_referee::rules::geometry::Pt;
use karuta_referee::rules::model::FieldSize;
use std::time::Instant;

fn median_us(runs: usize, mut f: impl FnMut()) -> (f64, f64) {
    for _ in 0..3 {
        f();
    }
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (t[t.len() / 2], t[(t.len() * 9) / 10])
}

fn main() {
    let field = FieldSize::default();
    let cam = Camera::overhead(
        [1280, 720],
        1000.0,
        vec![-0.12, 0.03, 0.0, 0.0, 0.0],
        830.0,
        [4.0, -3.0],
        2.0,
    )
    .expect("camera");
    let cards = synth::layout(1, &field, 3.0, 1.5);
    let quads = synth::quads(&cam, &cards, &field, 0.5, 2).expect("quads");
    let intr = cam.intrinsics.clone();
    let (m, p90) = median_us(50, || {
        register_from_cards(&quads, Some(&intr), &field).expect("register");
    });
    println!(
        "register_from_cards, 50 cards, with undistortion: median {:.0} us, p90 {:.0} us",
        m, p90
    );
    let reg = register_from_cards(&quads, Some(&intr), &field).expect("register");
    let (m, p90) = median_us(2000, || {
        reg.map.card_is_out_px(&quads[7].corners_px).expect("map");
    });
    println!(
        "card_is_out_px (4 corners undistorted and mapped): median {:.1} us, p90 {:.1} us",
        m, p90
    );
    let (m, p90) = median_us(2000, || {
        reg.to_image(&[Pt::new(100.0, 50.0)]).expect("map");
    });
    println!(
        "to_image, 1 point (homography + distortion): median {:.1} us, p90 {:.1} us",
        m, p90
    );

    let plain = Camera::overhead([1280, 720], 1000.0, vec![0.0; 5], 830.0, [0.0, 0.0], 0.0)
        .expect("camera");
    let shaken = Camera::overhead([1280, 720], 1000.0, vec![0.0; 5], 830.0, [0.2, 0.2], 0.0)
        .expect("camera");
    let reference = synth::render(&plain, &cards, &field, &[], false, 3).expect("render");
    let frame = synth::render(
        &shaken,
        &cards,
        &field,
        &[(Pt::new(0.0, -100.0), 90.0)],
        false,
        3,
    )
    .expect("render");
    let mut tracker = DriftTracker::new(&reference, reg.clone()).expect("tracker");
    let (m, p90) = median_us(200, || {
        tracker.update(&frame).expect("drift");
    });
    println!(
        "DriftTracker::update, 1280x720 gray: median {:.0} us, p90 {:.0} us (every 24th frame at 240 fps: {:.0} us a frame)",
        m,
        p90,
        m / 24.0
    );

    let high = Camera::overhead([1280, 720], 1000.0, vec![0.0; 5], 1200.0, [1.5, -1.0], 2.0)
        .expect("camera");
    let marked = synth::render(&high, &cards, &field, &[], true, 4).expect("render");
    let (m, p90) = median_us(20, || {
        register_from_markers(&marked, None, &field).expect("markers");
    });
    println!(
        "register_from_markers, 1280x720 gray: median {:.0} us, p90 {:.0} us",
        m, p90
    );
}

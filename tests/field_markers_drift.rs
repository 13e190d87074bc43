//! Registration from corner markers pasted into a synthetic frame, and drift correction of
//! a shaken camera with hands moving over the field.

use karuta_referee::field::drift::DRIFT_INTERVAL_S;
use karuta_referee::field::synth::{self, Camera};
use karuta_referee::field::{
    register_from_markers, DriftTracker, FieldError, FieldMap, Registration,
};
use karuta_referee::rules::geometry::Pt;
use karuta_referee::rules::model::FieldSize;
use karuta_referee::util::apply_homography;

fn truth_registration(cam: &Camera) -> Registration {
    Registration {
        map: FieldMap::new(
            cam.image_to_field().unwrap(),
            None,
            FieldSize::default(),
            cam.intrinsics.image_size,
        )
        .unwrap(),
        cards: Vec::new(),
        corner_inliers: 0,
        corners_used: 0,
        reprojection_error_mm: 0.0,
    }
}

/// Largest field error (mm) of `reg` over a grid of field points seen by `cam`.
fn worst_error_mm(reg: &Registration, cam: &Camera) -> f64 {
    let f2i = cam.field_to_undistorted().unwrap();
    let mut worst: f64 = 0.0;
    for x in [-420.0, -200.0, 0.0, 200.0, 420.0] {
        for y in [-250.0, -100.0, 0.0, 100.0, 250.0] {
            let px = apply_homography(&f2i, [x, y]);
            let p = reg.map.point_to_field(px).unwrap();
            worst = worst.max((p.x_mm - x).hypot(p.y_mm - y));
        }
    }
    worst
}

#[test]
fn four_corner_markers_register_the_field() {
    let field = FieldSize::default();
    let cam =
        Camera::overhead([1280, 720], 1000.0, vec![0.0; 5], 1200.0, [1.5, -1.0], 2.0).unwrap();
    let cards = synth::layout(5, &field, 2.0, 1.0);
    let frame = synth::render(&cam, &cards, &field, &[], true, 1).unwrap();
    let reg = register_from_markers(&frame, None, &field).unwrap();
    assert_eq!(reg.corners_used, 16);
    let e = worst_error_mm(&reg, &cam);
    eprintln!(
        "markers: worst error {e:.2} mm, fit {:.2} mm",
        reg.reprojection_error_mm
    );
    assert!(e < 2.0, "{e}");

    // A hand over one marker: three still fix the field.
    let hand = [(Pt::new(-480.0, -300.0), 70.0)];
    let frame = synth::render(&cam, &cards, &field, &hand, true, 1).unwrap();
    let reg = register_from_markers(&frame, None, &field).unwrap();
    assert_eq!(reg.corners_used, 12);
    assert!(worst_error_mm(&reg, &cam) < 2.0);

    // No markers at all: a clear error.
    let frame = synth::render(&cam, &cards, &field, &[], false, 1).unwrap();
    let err = register_from_markers(&frame, None, &field).unwrap_err();
    assert!(matches!(err, FieldError::TooFew { found: 0, .. }), "{err}");
}

#[test]
fn a_5_px_camera_shake_is_corrected_within_one_second_despite_moving_hands() {
    const FPS: f64 = 240.0;
    let field = FieldSize::default();
    let cam = Camera::overhead([1280, 720], 1000.0, vec![0.0; 5], 830.0, [0.0, 0.0], 0.0).unwrap();
    // The shaken camera: turned by 0.2 degrees about two axes, about 5 px of image motion.
    let shaken =
        Camera::overhead([1280, 720], 1000.0, vec![0.0; 5], 830.0, [0.2, 0.2], 0.0).unwrap();
    let cards = synth::layout(6, &field, 2.0, 1.0);
    let reference = synth::render(&cam, &cards, &field, &[], false, 2).unwrap();
    let mut tracker = DriftTracker::new(&reference, truth_registration(&cam)).unwrap();
    let moved = worst_error_mm(tracker.registration(), &shaken);
    eprintln!("uncorrected error after the shake: {moved:.2} mm");
    assert!(moved > 4.0);

    let every = (DRIFT_INTERVAL_S * FPS).round() as u64;
    let shake_frame = 100u64;
    let mut corrected_at = None;
    for i in 0..(shake_frame + FPS as u64) {
        if i % every != 0 {
            continue;
        }
        // Two hands sweep over the field in every frame the tracker sees.
        let t = i as f64 / FPS;
        let hands = [
            (Pt::new(-300.0 + 400.0 * t, -120.0), 90.0),
            (Pt::new(250.0 - 300.0 * t, 140.0 - 50.0 * t), 80.0),
        ];
        let c = if i < shake_frame { &cam } else { &shaken };
        let frame = synth::render(c, &cards, &field, &hands, false, 2).unwrap();
        let est = tracker.update(&frame).unwrap();
        let err = worst_error_mm(tracker.registration(), c);
        if i < shake_frame {
            assert!(
                err < 0.5,
                "frame {i}: spurious correction {est:?}, error {err:.2} mm"
            );
        } else if corrected_at.is_none() && err < 1.0 {
            corrected_at = Some(i);
            eprintln!(
                "frame {i}: shift {:?} px, {} tiles agree, error {err:.2} mm",
                est.shift_px, est.tiles_agreeing
            );
        }
    }
    let at = corrected_at.expect("never corrected");
    assert!(((at - shake_frame) as f64) / FPS <= 1.0);
    assert!(worst_error_mm(tracker.registration(), &shaken) < 1.0);
}

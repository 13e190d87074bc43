//! Registration from the card layout, on synthetic views of known cameras: the field
//! position of card corners, outliers, mirrored input, and the layout check.

use karuta_referee::field::synth::{self, Camera};
use karuta_referee::field::{
    check_layout, measure_layout, register_from_cards, CardQuad, FieldError,
};
use karuta_referee::rules::geometry::Pt;
use karuta_referee::rules::model::{FieldSize, Player};

const W: u32 = 1280;
const H: u32 = 720;

fn camera(tilt: [f64; 2], roll: f64) -> Camera {
    Camera::overhead(
        [W, H],
        1000.0,
        vec![-0.12, 0.03, 0.0, 0.0, 0.0],
        830.0,
        tilt,
        roll,
    )
    .unwrap()
}

fn percentile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// Errors (mm) of every card corner mapped from its observed pixel, against the truth.
fn corner_errors(
    reg: &karuta_referee::field::Registration,
    quads: &[CardQuad],
    truth: &[[Pt; 4]],
) -> Vec<f64> {
    let mut e = Vec::new();
    for (q, t) in quads.iter().zip(truth) {
        let mm = reg.to_field(&q.corners_px).unwrap();
        for (a, b) in mm.iter().zip(t) {
            e.push(((a.x_mm - b.x_mm).powi(2) + (a.y_mm - b.y_mm).powi(2)).sqrt());
        }
    }
    e
}

#[test]
fn card_corners_land_within_2_mm_median_4_mm_p95_at_1280x720() {
    let field = FieldSize::default();
    for (seed, tilt, roll) in [
        (1u64, [0.0, 0.0], 0.0),
        (2, [6.0, -4.0], 2.5),
        (3, [-8.0, 3.0], -4.0),
    ] {
        let cam = camera(tilt, roll);
        let cards = synth::layout(seed, &field, 3.0, 1.5);
        let truth: Vec<[Pt; 4]> = cards
            .iter()
            .map(|c| synth::card_corners_mm(c, &field))
            .collect();
        // Detected corners: 0.5 px noise, as a subpixel corner detector gives.
        let quads = synth::quads(&cam, &cards, &field, 0.5, seed + 100).unwrap();
        let reg = register_from_cards(&quads, Some(&cam.intrinsics), &field).unwrap();
        let mut e = corner_errors(&reg, &quads, &truth);
        let (med, p95) = (percentile(&mut e, 0.5), percentile(&mut e, 0.95));
        eprintln!(
            "seed {seed}: median {med:.2} mm, p95 {p95:.2} mm, fit rms {:.2} mm, inliers {}/{}",
            reg.reprojection_error_mm, reg.corner_inliers, reg.corners_used
        );
        assert!(
            med <= 2.0 && p95 <= 4.0,
            "seed {seed}: median {med}, p95 {p95}"
        );
        assert_eq!(reg.corner_inliers, 200);
        // The truth's own sizes come back.
        assert!(
            (reg.map.field.width_mm - 870.0).abs() < 2.0,
            "{:?}",
            reg.map.field
        );
        assert!(
            (reg.map.field.gap_mm - 30.0).abs() < 2.0,
            "{:?}",
            reg.map.field
        );
    }
}

#[test]
fn misdetected_quads_are_outliers_and_do_not_move_the_fit() {
    let field = FieldSize::default();
    let cam = camera([4.0, 2.0], 1.0);
    let cards = synth::layout(7, &field, 3.0, 1.0);
    let truth: Vec<[Pt; 4]> = cards
        .iter()
        .map(|c| synth::card_corners_mm(c, &field))
        .collect();
    let mut quads = synth::quads(&cam, &cards, &field, 0.5, 8).unwrap();
    // Five quads wrong (none an outermost card, which sets the territory edge): a corner
    // snapped to a neighbour, an outline stretched by a hand.
    for (k, i) in [3usize, 11, 20, 30, 41].into_iter().enumerate() {
        let q = &mut quads[i].corners_px;
        match k % 2 {
            0 => {
                q[2][0] += 25.0;
                q[2][1] += 18.0;
            }
            _ => {
                for p in q.iter_mut() {
                    p[0] = (p[0] - 640.0) * 1.3 + 640.0;
                }
            }
        }
    }
    let reg = register_from_cards(&quads, Some(&cam.intrinsics), &field).unwrap();
    let bad = [3usize, 11, 20, 30, 41];
    for (i, pose) in reg.cards.iter().enumerate() {
        assert_eq!(pose.inlier, !bad.contains(&i), "card {i}: {pose:?}");
    }
    let good: Vec<usize> = (0..quads.len()).filter(|i| !bad.contains(i)).collect();
    let q: Vec<CardQuad> = good.iter().map(|i| quads[*i].clone()).collect();
    let t: Vec<[Pt; 4]> = good.iter().map(|i| truth[*i]).collect();
    let mut e = corner_errors(&reg, &q, &t);
    let (med, p95) = (percentile(&mut e, 0.5), percentile(&mut e, 0.95));
    eprintln!("with 5 bad quads: median {med:.2} mm, p95 {p95:.2} mm");
    assert!(med <= 2.0 && p95 <= 4.0);
}

#[test]
fn corner_order_starting_anywhere_is_reoriented() {
    let field = FieldSize::default();
    let cam = camera([0.0, 0.0], 0.0);
    let cards = synth::layout(9, &field, 2.0, 1.0);
    let mut quads = synth::quads(&cam, &cards, &field, 0.3, 10).unwrap();
    for (i, q) in quads.iter_mut().enumerate().filter(|(i, _)| i % 4 == 1) {
        q.corners_px.rotate_left(1 + i % 3);
    }
    let reg = register_from_cards(&quads, Some(&cam.intrinsics), &field).unwrap();
    assert_eq!(reg.corner_inliers, 200);
    let layout = measure_layout(&reg, &quads, &field);
    assert_eq!(layout.cards.len(), 50);
    for (c, t) in layout.cards.iter().zip(&cards) {
        assert!(
            (c.x_mm - t.x_mm).abs() < 2.0 && (c.y_mm - t.y_mm).abs() < 2.0,
            "{c:?} vs {t:?}"
        );
        assert_eq!((c.owner, c.row), (t.owner, t.row));
    }
}

#[test]
fn a_mirrored_view_folds_the_field_and_is_refused() {
    let field = FieldSize::default();
    let cam = camera([0.0, 0.0], 0.0);
    let cards = synth::layout(4, &field, 2.0, 1.0);
    let mut quads = synth::quads(&cam, &cards, &field, 0.3, 5).unwrap();
    for q in &mut quads {
        for p in &mut q.corners_px {
            p[0] = W as f64 - p[0];
        }
    }
    let err = register_from_cards(&quads, None, &field).unwrap_err();
    assert!(matches!(err, FieldError::BadHomography(_)), "{err}");
    assert!(err.to_string().contains("fold"), "{err}");
}

#[test]
fn too_few_cards_is_a_clear_error() {
    let field = FieldSize::default();
    let cam = camera([0.0, 0.0], 0.0);
    let cards = synth::layout(4, &field, 2.0, 1.0);
    let quads = synth::quads(&cam, &cards[..4], &field, 0.3, 5).unwrap();
    let err = register_from_cards(&quads, None, &field).unwrap_err();
    assert_eq!(
        err.to_string(),
        "too few cards to register the field: 4 found, 6 needed"
    );
}

fn check_for(field_laid: &FieldSize, seed: u64) -> karuta_referee::field::LayoutCheck {
    let nominal = FieldSize::default();
    let cam = camera([3.0, -2.0], 1.5);
    let cards = synth::layout(seed, field_laid, 3.0, 1.0);
    let quads = synth::quads(&cam, &cards, &nominal, 0.5, seed + 1).unwrap();
    let reg = register_from_cards(&quads, Some(&cam.intrinsics), &nominal).unwrap();
    let layout = measure_layout(&reg, &quads, &nominal);
    assert_eq!(
        layout.cards.iter().filter(|c| c.owner == Player::A).count(),
        25
    );
    check_layout(&layout, &nominal)
}

#[test]
fn art_7_layout_check_passes_a_legal_field() {
    let check = check_for(&FieldSize::default(), 21);
    eprintln!("{check:?}");
    assert!(check.is_legal(), "{:?}", check.violations);
    for t in &check.territories {
        assert!((t.width_mm - 870.0).abs() < 2.0);
        assert_eq!(t.row_gaps_mm.len(), 2);
    }
}

#[test]
fn art_7_1_layout_check_flags_an_84_cm_territory() {
    let laid = FieldSize {
        width_mm: 840.0,
        ..FieldSize::default()
    };
    let check = check_for(&laid, 22);
    let widths: Vec<_> = check
        .violations
        .iter()
        .filter(|v| v.what.contains("width"))
        .collect();
    assert_eq!(widths.len(), 2, "{:?}", check.violations);
    for v in widths {
        assert!((v.measured_mm - 840.0).abs() < 2.0, "{v}");
    }
    assert!(check.violations.iter().all(|v| v.what.contains("width")));
}

#[test]
fn art_7_2_layout_check_flags_a_2_cm_gap() {
    let laid = FieldSize {
        gap_mm: 20.0,
        ..FieldSize::default()
    };
    let check = check_for(&laid, 23);
    assert_eq!(check.violations.len(), 1, "{:?}", check.violations);
    let v = &check.violations[0];
    assert_eq!(v.what, "gap between territories");
    assert!((v.measured_mm - 20.0).abs() < 2.0, "{v}");
    assert_eq!(v.article, "7-2");
}

/// The truth map of a distorting camera, to test the pixel questions on known geometry.
fn truth_map(cam: &Camera) -> karuta_referee::field::FieldMap {
    karuta_referee::field::FieldMap::new(
        cam.image_to_field().unwrap(),
        Some(cam.intrinsics.clone()),
        FieldSize::default(),
        cam.intrinsics.image_size,
    )
    .unwrap()
}

#[test]
fn pixels_and_millimetres_round_trip_through_the_lens() {
    let cam = camera([5.0, -3.0], 2.0);
    let map = truth_map(&cam);
    let pts = [
        Pt::new(-430.0, -250.0),
        Pt::new(0.0, 0.0),
        Pt::new(300.0, 200.0),
    ];
    let px = map.to_image(&pts).unwrap();
    // The camera's own projection (with distortion) agrees with the map's inverse.
    let want = cam.project(&pts).unwrap();
    for (a, b) in px.iter().zip(&want) {
        assert!((a[0] - b[0]).hypot(a[1] - b[1]) < 0.01, "{a:?} vs {b:?}");
    }
    for (p, q) in map.to_field(&px).unwrap().iter().zip(&pts) {
        assert!((p.x_mm - q.x_mm).hypot(p.y_mm - q.y_mm) < 0.01);
    }
}

#[test]
fn art_17_2_card_out_hand_inside_and_territory_on_pixels() {
    use karuta_referee::rules::geometry::rotated_rect;
    let cam = camera([4.0, 2.0], -1.5);
    let map = truth_map(&cam);
    let card_px = |x: f64, y: f64, a: f64| -> [[f64; 2]; 4] {
        let px = cam.project(&rotated_rect(x, y, 52.0, 73.0, a)).unwrap();
        [px[0], px[1], px[2], px[3]]
    };
    // Half over the left edge: not out; a millimetre past its own half width: out.
    assert!(!map.card_is_out_px(&card_px(-435.0, -51.5, 0.0)).unwrap());
    assert!(map
        .card_is_out_px(&card_px(-435.0 - 27.0, -51.5, 0.0))
        .unwrap());
    // Tilted 45 degrees near the edge: the corner still reaches in.
    assert!(!map
        .card_is_out_px(&card_px(-435.0 - 40.0, -51.5, 45.0))
        .unwrap());
    // A hand's outline (non-convex: a hook) with only a finger over the area's right edge.
    let hook = [
        Pt::new(520.0, -60.0),
        Pt::new(433.0, -60.0),
        Pt::new(433.0, -50.0),
        Pt::new(500.0, -50.0),
        Pt::new(500.0, 40.0),
        Pt::new(520.0, 40.0),
    ];
    assert!(map.hand_is_inside_px(&cam.project(&hook).unwrap()).unwrap());
    let away: Vec<Pt> = hook
        .iter()
        .map(|p| Pt::new(p.x_mm + 10.0, p.y_mm))
        .collect();
    assert!(!map.hand_is_inside_px(&cam.project(&away).unwrap()).unwrap());
    // An outline enclosing the whole area counts too.
    let around = [
        Pt::new(-600.0, -300.0),
        Pt::new(600.0, -300.0),
        Pt::new(600.0, 300.0),
        Pt::new(-600.0, 300.0),
    ];
    let around_px = map.to_image(&around).unwrap();
    assert!(map.hand_is_inside_px(&around_px).unwrap());
    let px = |x: f64, y: f64| cam.project(&[Pt::new(x, y)]).unwrap()[0];
    assert_eq!(
        map.territory_of_px(px(100.0, -100.0)).unwrap(),
        Some(Player::A)
    );
    assert_eq!(
        map.territory_of_px(px(-300.0, 200.0)).unwrap(),
        Some(Player::B)
    );
    assert_eq!(map.territory_of_px(px(0.0, 0.0)).unwrap(), None);
}

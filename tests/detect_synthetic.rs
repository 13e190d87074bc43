//! The card detector on synthetic layout frames (tests/support/synth.rs).

mod support;

use karuta_referee::detect::cards::{self, FindOptions};
use karuta_referee::detect::naming::Namer;
use support::synth;

fn dist(a: [f64; 2], b: [f64; 2]) -> f64 {
    (a[0] - b[0]).hypot(a[1] - b[1])
}

#[test]
fn synthetic_layout_every_card_found_and_named() {
    let namer = Namer::new().unwrap();
    for seed in [1u64, 2, 3] {
        let f = synth::render(seed, 1280, 720);
        let found = cards::find_cards(&f.bgr, &FindOptions::default()).unwrap();
        assert_eq!(found.len(), 50, "seed {seed}: cards found");
        let mut corner_err = Vec::new();
        for t in &f.cards {
            let tc = {
                let s = t
                    .corners_px
                    .iter()
                    .fold([0.0, 0.0], |a, p| [a[0] + p[0], a[1] + p[1]]);
                [s[0] / 4.0, s[1] / 4.0]
            };
            let d = found
                .iter()
                .min_by(|a, b| dist(a.centre_px(), tc).total_cmp(&dist(b.centre_px(), tc)))
                .unwrap();
            for p in &t.corners_px {
                let e = d
                    .card_px
                    .iter()
                    .map(|q| dist(*q, *p))
                    .fold(f64::INFINITY, f64::min);
                corner_err.push(e);
            }
        }
        corner_err.sort_by(|a, b| a.total_cmp(b));
        let med = corner_err[corner_err.len() / 2];
        let p95 = corner_err[corner_err.len() * 95 / 100];
        eprintln!("seed {seed}: corner error median {med:.2} px, p95 {p95:.2} px");
        assert!(
            med < 1.5 && p95 < 3.0,
            "seed {seed}: corners median {med} p95 {p95}"
        );

        let faces: Vec<_> = found.iter().map(|c| c.face_px).collect();
        let flipped: Vec<bool> = found.iter().map(|c| c.centre_px()[1] < 360.0).collect();
        let names = namer.name_cards(&f.bgr, &faces, &flipped, None).unwrap();
        let mut right = 0;
        let mut wrong_confident = 0;
        for (c, n) in found.iter().zip(&names) {
            let t = f
                .cards
                .iter()
                .min_by(|a, b| {
                    let ca = a
                        .corners_px
                        .iter()
                        .fold([0.0, 0.0], |s, p| [s[0] + p[0] / 4.0, s[1] + p[1] / 4.0]);
                    let cb = b
                        .corners_px
                        .iter()
                        .fold([0.0, 0.0], |s, p| [s[0] + p[0] / 4.0, s[1] + p[1] / 4.0]);
                    dist(ca, c.centre_px()).total_cmp(&dist(cb, c.centre_px()))
                })
                .unwrap();
            match n.poem {
                Some(p) if p == t.poem => right += 1,
                Some(_) => wrong_confident += 1,
                None => {}
            }
            if n.poem != Some(t.poem) {
                eprintln!(
                    "  poem {} named {:?} best {} {:.3} runner {:?}",
                    t.poem, n.poem, n.best_poem, n.score, n.runner_up
                );
            }
        }
        eprintln!("seed {seed}: named right {right}/50, wrong {wrong_confident}");
        assert_eq!(wrong_confident, 0);
        assert!(right >= 47, "seed {seed}: {right} named right");
    }
}

//! The card detector on simulator recordings with their truth removed: only the video,
//! the readings and the lens intrinsics are copied into a fresh directory and measured;
//! the truth (layout.json, labels) is read from the original directory to score it.

use karuta_referee::detect::layout::{measure_layout, MeasuredLayout};
use karuta_referee::field::{Calibration, Intrinsics};
use karuta_referee::rules::model::Layout;
use karuta_referee::sim::{simulate, Preset, SimOptions};
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
struct LabelCard {
    poem: u8,
    corners_undist_px: [[f64; 2]; 4],
}

#[derive(Deserialize)]
struct Epoch {
    cards: Vec<LabelCard>,
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("karuta-detect-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// A short recording (one reading) at 1280x720 and a low frame rate.
fn record(seed: u64, preset: Preset) -> PathBuf {
    let dir = tmp(&format!("sim-{seed}-{preset:?}"));
    let opts = SimOptions {
        seed,
        fps: 10.0,
        width_px: 1280,
        height_px: 720,
        readings: 1,
        preset,
        labels: true,
        ..SimOptions::default()
    };
    simulate(&opts, &dir, false).unwrap();
    dir
}

fn dist(a: [f64; 2], b: [f64; 2]) -> f64 {
    (a[0] - b[0]).hypot(a[1] - b[1])
}

fn quantile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() as f64 - 1.0) * q).round() as usize]
}

struct Score {
    found: usize,
    truth: usize,
    owner_row_wrong: usize,
    centre_err_mm: Vec<f64>,
    corner_err_px: Vec<f64>,
    named_right: usize,
    named_wrong: usize,
    unnamed: usize,
    /// Median centre error when registering the simulator's exact corners.
    exact_corners_centre_mm: f64,
}

fn measure(dir: &Path) -> MeasuredLayout {
    let cal: Calibration =
        serde_json::from_str(&std::fs::read_to_string(dir.join("calibration.json")).unwrap())
            .unwrap();
    let readings = std::fs::read_to_string(dir.join("readings.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(readings.lines().next().unwrap()).unwrap();
    let until = first["kami_start_s"].as_f64();
    let k = Intrinsics::from_calibration(&cal);
    measure_layout(&dir.join("video.mp4"), until, Some(&k)).unwrap()
}

fn score(dir: &Path, m: &MeasuredLayout) -> Score {
    let truth: Layout =
        serde_json::from_str(&std::fs::read_to_string(dir.join("layout.json")).unwrap()).unwrap();
    let labels = std::fs::read_to_string(dir.join("labels/cards.jsonl")).unwrap();
    let epoch: Epoch = serde_json::from_str(labels.lines().next().unwrap()).unwrap();
    let mut s = Score {
        found: m.cards.len(),
        truth: truth.cards.len(),
        owner_row_wrong: 0,
        centre_err_mm: Vec::new(),
        corner_err_px: Vec::new(),
        named_right: 0,
        named_wrong: 0,
        unnamed: 0,
        exact_corners_centre_mm: f64::NAN,
    };
    {
        // The same registration on the simulator's exact corners: what a perfect
        // detector would reach, to tell detector error from registration error.
        use karuta_referee::field::{measure_layout, register_from_cards, CardQuad};
        let quads: Vec<CardQuad> = epoch
            .cards
            .iter()
            .map(|l| CardQuad {
                corners_px: l.corners_undist_px,
                poem: Some(l.poem),
                poem_score: None,
            })
            .collect();
        let f = karuta_referee::rules::model::FieldSize::default();
        let reg = register_from_cards(&quads, None, &f).unwrap();
        let lay = measure_layout(&reg, &quads, &f);
        let mut e: Vec<f64> = lay
            .cards
            .iter()
            .map(|c| {
                let t = truth.cards.iter().find(|t| t.poem == c.poem).unwrap();
                dist([t.x_mm, t.y_mm], [c.x_mm, c.y_mm])
            })
            .collect();
        s.exact_corners_centre_mm = quantile(&mut e, 0.5);
    }
    for c in &m.cards {
        let p = &c.placement;
        let t = truth
            .cards
            .iter()
            .min_by(|a, b| {
                dist([a.x_mm, a.y_mm], [p.x_mm, p.y_mm])
                    .total_cmp(&dist([b.x_mm, b.y_mm], [p.x_mm, p.y_mm]))
            })
            .unwrap();
        s.centre_err_mm
            .push(dist([t.x_mm, t.y_mm], [p.x_mm, p.y_mm]));
        if t.owner != p.owner || t.row != p.row {
            s.owner_row_wrong += 1;
        }
        match p.poem {
            None => s.unnamed += 1,
            Some(q) if Some(q) == t.poem => s.named_right += 1,
            Some(_) => s.named_wrong += 1,
        }
        if let Some(l) = epoch.cards.iter().find(|l| Some(l.poem) == t.poem) {
            for q in &c.quad.corners_px {
                let e = l
                    .corners_undist_px
                    .iter()
                    .map(|r| dist(*r, *q))
                    .fold(f64::INFINITY, f64::min);
                s.corner_err_px.push(e);
            }
        }
    }
    s
}

/// Card corner error against the simulator's corners, px.
const MAX_CORNER_MEDIAN_PX: f64 = 1.5;
const MAX_CORNER_P95_PX: f64 = 3.5;
/// Card centre error in the field frame, mm, over every card of every recording.
const MAX_CENTRE_MEDIAN_MM: f64 = 2.0;
const MAX_CENTRE_P95_MM: f64 = 4.0;

#[test]
fn layout_from_video_on_every_preset() {
    let mut all_centre = Vec::new();
    let mut all_corner = Vec::new();
    let (mut right, mut total) = (0, 0);
    for (preset, seeds) in [
        (Preset::Clean, [11u64, 12, 13]),
        (Preset::Realistic, [21, 22, 23]),
        (Preset::Hard, [31, 32, 33]),
    ] {
        for seed in seeds {
            let dir = record(seed, preset);
            let m = measure(&dir);
            let mut s = score(&dir, &m);
            let med = quantile(&mut s.centre_err_mm, 0.5);
            let p95 = quantile(&mut s.centre_err_mm, 0.95);
            let cmed = quantile(&mut s.corner_err_px, 0.5);
            let cp95 = quantile(&mut s.corner_err_px, 0.95);
            eprintln!(
                "{preset:?} seed {seed}: {}/{} cards, owner/row wrong {}, centre error median {med:.2} mm p95 {p95:.2} mm (exact corners: {:.2} mm), corner error median {cmed:.2} px p95 {cp95:.2} px, named right {} wrong {} unnamed {}",
                s.found, s.truth, s.owner_row_wrong, s.exact_corners_centre_mm, s.named_right, s.named_wrong, s.unnamed
            );
            all_centre.extend(s.centre_err_mm.iter());
            all_corner.extend(s.corner_err_px.iter());
            right += s.named_right;
            total += s.truth;
            assert_eq!(
                s.found, s.truth,
                "{preset:?} seed {seed}: every card, no extra"
            );
            assert_eq!(
                s.owner_row_wrong, 0,
                "{preset:?} seed {seed}: owner and row"
            );
            assert_eq!(
                s.named_wrong, 0,
                "{preset:?} seed {seed}: no confident wrong name"
            );
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    let med = quantile(&mut all_centre, 0.5);
    let p95 = quantile(&mut all_centre, 0.95);
    let cmed = quantile(&mut all_corner, 0.5);
    let cp95 = quantile(&mut all_corner, 0.95);
    eprintln!(
        "all: centre error median {med:.2} mm p95 {p95:.2} mm; corner error median {cmed:.2} px p95 {cp95:.2} px; named right {right}/{total}"
    );
    assert!(
        cmed <= MAX_CORNER_MEDIAN_PX && cp95 <= MAX_CORNER_P95_PX,
        "corner error median {cmed} px p95 {cp95} px"
    );
    assert!(
        med <= MAX_CENTRE_MEDIAN_MM && p95 <= MAX_CENTRE_P95_MM,
        "centre error median {med} mm p95 {p95} mm"
    );
    assert!(
        right as f64 >= 0.99 * total as f64,
        "named right {right}/{total}"
    );
}

//! `karuta-referee layout DIR` on a bare recording: a directory holding only the video and
//! the lens intrinsics, plus a stale `layout.json` and truth that the command must not
//! read. It writes the measured layout (contract section 3) and the calibration with its
//! measured `image_to_field`, and prints the layout check; both are scored against the
//! simulator's truth, kept elsewhere.

use karuta_referee::field::{check_layout, Calibration};
use karuta_referee::rules::model::{FieldSize, Layout};
use karuta_referee::rules::parse::parse_layout;
use karuta_referee::sim::{simulate, Preset, SimOptions};
use karuta_referee::util::{apply_homography, matrix_from_rows};
use serde::Deserialize;
use std::path::PathBuf;
use std::process::Command;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("karuta-layout-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[derive(Deserialize)]
struct LabelCard {
    poem: u8,
    corners_undist_px: [[f64; 2]; 4],
}

#[derive(Deserialize)]
struct Epoch {
    cards: Vec<LabelCard>,
}

/// The lens part of a calibration: what a hall that calibrated its camera has.
#[derive(serde::Serialize, Deserialize)]
struct Lens {
    image_size: [u32; 2],
    camera_matrix: [[f64; 3]; 3],
    dist_coeffs: Vec<f64>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Card centres and the measured homography, mm.
const MAX_CENTRE_MEDIAN_MM: f64 = 2.0;

#[test]
fn layout_command_measures_a_bare_recording() {
    let sim = tmp("sim");
    let opts = SimOptions {
        seed: 51,
        fps: 10.0,
        width_px: 1280,
        height_px: 720,
        readings: 1,
        preset: Preset::Realistic,
        labels: true,
        ..SimOptions::default()
    };
    simulate(&opts, &sim, false).unwrap();
    let truth: Layout =
        serde_json::from_str(&std::fs::read_to_string(sim.join("layout.json")).unwrap()).unwrap();
    let lens: Lens =
        serde_json::from_str(&std::fs::read_to_string(sim.join("calibration.json")).unwrap())
            .unwrap();

    let bare = tmp("bare");
    std::fs::create_dir_all(&bare).unwrap();
    std::fs::copy(sim.join("video.mp4"), bare.join("video.mp4")).unwrap();
    std::fs::write(
        bare.join("calibration.json"),
        serde_json::to_string(&lens).unwrap(),
    )
    .unwrap();
    // A stale layout that would fail to parse, and a truth file: neither may be read.
    std::fs::write(bare.join("layout.json"), "{ not a layout").unwrap();
    std::fs::write(bare.join("truth_events.jsonl"), "{ not events").unwrap();

    let out = Command::new(env!("CARGO_BIN_EXE_karuta-referee"))
        .arg("layout")
        .arg(&bare)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}{stderr}");
    assert_eq!(out.status.code(), Some(0), "layout failed: {stderr}");
    assert!(
        stdout.contains("50 cards"),
        "the report counts the cards: {stdout}"
    );
    // The layout check is printed, with the verdict the truth layout gets.
    let verdict = if check_layout(&truth, &FieldSize::default()).is_legal() {
        "layout: legal"
    } else {
        "violation:"
    };
    assert!(
        stdout.lines().any(|l| l.starts_with(verdict)),
        "the layout check says {verdict:?}: {stdout}"
    );

    // The written layout is valid under the contract's own parser.
    let text = std::fs::read_to_string(bare.join("layout.json")).unwrap();
    let measured = parse_layout("layout.json", &text).unwrap();
    assert_eq!(measured.cards.len(), truth.cards.len());
    let mut centre_err = Vec::new();
    let mut named = 0;
    for c in &measured.cards {
        let t = truth
            .cards
            .iter()
            .min_by(|a, b| {
                let da = (a.x_mm - c.x_mm).hypot(a.y_mm - c.y_mm);
                let db = (b.x_mm - c.x_mm).hypot(b.y_mm - c.y_mm);
                da.total_cmp(&db)
            })
            .unwrap();
        centre_err.push((t.x_mm - c.x_mm).hypot(t.y_mm - c.y_mm));
        assert_eq!((c.owner, c.row), (t.owner, t.row), "owner and row");
        if let Some(p) = c.poem {
            assert_eq!(Some(p), t.poem, "a poem named is the right one");
            named += 1;
        }
    }
    let layout_median = median(centre_err);
    eprintln!("layout.json: centre error median {layout_median:.2} mm, {named}/50 named");
    assert!(layout_median <= MAX_CENTRE_MEDIAN_MM);
    assert!(named >= 49, "{named}/50 named");

    // The written image_to_field maps the truth's card corners onto the truth's cards.
    let cal: Calibration =
        serde_json::from_str(&std::fs::read_to_string(bare.join("calibration.json")).unwrap())
            .unwrap();
    assert_eq!(cal.camera_matrix, lens.camera_matrix, "the lens is kept");
    let labels = std::fs::read_to_string(sim.join("labels/cards.jsonl")).unwrap();
    let epoch: Epoch = serde_json::from_str(labels.lines().next().unwrap()).unwrap();
    let image_to_field = matrix_from_rows(&cal.image_to_field);
    let mut map_err = Vec::new();
    for l in &epoch.cards {
        let t = truth.cards.iter().find(|t| t.poem == Some(l.poem)).unwrap();
        let c = l.corners_undist_px.iter().fold([0.0; 2], |a, p| {
            let f = apply_homography(&image_to_field, *p);
            [a[0] + f[0] / 4.0, a[1] + f[1] / 4.0]
        });
        map_err.push((t.x_mm - c[0]).hypot(t.y_mm - c[1]));
    }
    let map_median = median(map_err);
    eprintln!("calibration.json: truth corners mapped to {map_median:.2} mm of the truth");
    assert!(map_median <= MAX_CENTRE_MEDIAN_MM);

    // --out writes elsewhere and leaves the recording as it was.
    let elsewhere = tmp("out");
    let before = std::fs::read_to_string(bare.join("layout.json")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_karuta-referee"))
        .arg("layout")
        .arg(&bare)
        .arg("--out")
        .arg(&elsewhere)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(elsewhere.join("layout.json").is_file());
    assert!(elsewhere.join("calibration.json").is_file());
    assert_eq!(
        std::fs::read_to_string(bare.join("layout.json")).unwrap(),
        before
    );
    for d in [sim, bare, elsewhere] {
        let _ = std::fs::remove_dir_all(d);
    }
}

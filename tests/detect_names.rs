//! Card names on faces kept out of the templates and out of tuning
//! (`naming::HELD_OUT_FONT_PATHS`): short simulator recordings drawn in a held-out
//! typeface, stepped or level columns, with or without dakuten; only the video, the
//! first reading and the lens intrinsics are measured, and the names are scored against
//! the simulator's layout.json (each measured card against the truth card nearest to it
//! in the field frame).
//!
//! `NAMES_SWEEP="preset:seed:font:columns:dakuten ..."` with
//! `cargo test --release --test detect_names sweep -- --ignored --nocapture` measures any
//! set of recordings (font: an index into the held-out faces, or a path; columns: stepped
//! or level; dakuten: 0 or 1) and prints every card that is not named right.

use karuta_referee::detect::layout::{measure_layout, MeasuredLayout};
use karuta_referee::detect::naming::HELD_OUT_FONT_PATHS;
use karuta_referee::field::{Calibration, Intrinsics};
use karuta_referee::rules::model::Layout;
use karuta_referee::sim::look::{CardColumns, CardTextOptions};
use karuta_referee::sim::{simulate, Preset, SimOptions};
use std::path::{Path, PathBuf};

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("karuta-names-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[derive(Debug, Clone)]
struct Case {
    preset: Preset,
    seed: u64,
    font: Option<String>,
    columns: CardColumns,
    dakuten: bool,
    width_px: u32,
    height_px: u32,
}

fn record(c: &Case) -> PathBuf {
    let dir = tmp(&format!(
        "{}-{}-{:?}-{}",
        c.preset, c.seed, c.columns, c.dakuten
    ));
    let opts = SimOptions {
        seed: c.seed,
        fps: 10.0,
        width_px: c.width_px,
        height_px: c.height_px,
        readings: 1,
        preset: c.preset,
        card_text: CardTextOptions {
            font: c.font.clone(),
            columns: Some(c.columns),
            dakuten: c.dakuten,
        },
        ..SimOptions::default()
    };
    simulate(&opts, &dir, false).unwrap();
    dir
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

#[derive(Debug, Default, Clone, Copy)]
struct Count {
    cards: usize,
    right: usize,
    wrong: usize,
    unnamed: usize,
    /// Of the unnamed, those whose best candidate was right.
    unnamed_best_right: usize,
}

/// Names scored against the truth: per measured card, the truth's poem and what was
/// named (in measured order).
fn score(dir: &Path, m: &MeasuredLayout, label: &str) -> (Count, Vec<(u8, Option<u8>)>) {
    let truth: Layout =
        serde_json::from_str(&std::fs::read_to_string(dir.join("layout.json")).unwrap()).unwrap();
    let mut n = Count {
        cards: truth.cards.len(),
        ..Count::default()
    };
    let mut pairs = Vec::new();
    let mut zs_right = Vec::new();
    for c in &m.cards {
        let p = &c.placement;
        let t = truth
            .cards
            .iter()
            .min_by(|a, b| {
                (a.x_mm - p.x_mm)
                    .hypot(a.y_mm - p.y_mm)
                    .total_cmp(&(b.x_mm - p.x_mm).hypot(b.y_mm - p.y_mm))
            })
            .unwrap();
        let tp = t.poem.unwrap_or(0);
        pairs.push((tp, p.poem));
        if let Ok(path) = std::env::var("NAMES_DUMP") {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .unwrap();
            writeln!(
                f,
                "{label},{tp},{},{:.3},{:.3},{:.3},{:.3}",
                c.name.best_poem, c.name.score, c.name.z, c.name.gap_z, c.name.runner_up_z
            )
            .unwrap();
        }
        match p.poem {
            Some(q) if q == tp => {
                n.right += 1;
                zs_right.push((c.name.z, c.name.gap_z));
            }
            Some(_) => n.wrong += 1,
            None => {
                n.unnamed += 1;
                if c.name.best_poem == tp {
                    n.unnamed_best_right += 1;
                }
            }
        }
        if p.poem != Some(tp) {
            eprintln!(
                "  {label}: truth {tp} named {:?}: best {} (r {:.3}, z {:.1}, gap {:.1}), runner-up {:?}",
                p.poem, c.name.best_poem, c.name.score, c.name.z, c.name.gap_z, c.name.runner_up
            );
        }
    }
    let zmin = zs_right.iter().map(|v| v.0).fold(f64::INFINITY, f64::min);
    let gmin = zs_right.iter().map(|v| v.1).fold(f64::INFINITY, f64::min);
    eprintln!(
        "{label}: {} cards found of {}, named right {} wrong {} unnamed {} (best right {}); named: z >= {zmin:.1}, gap >= {gmin:.1}",
        m.cards.len(),
        n.cards,
        n.right,
        n.wrong,
        n.unnamed,
        n.unnamed_best_right
    );
    (n, pairs)
}

fn run(c: &Case) -> (Count, Vec<(u8, Option<u8>)>) {
    let dir = record(c);
    let m = measure(&dir);
    let label = format!(
        "{} {} {} {:?} dakuten {}",
        c.preset,
        c.seed,
        c.font.as_deref().unwrap_or("seed's font"),
        c.columns,
        c.dakuten
    );
    let out = score(&dir, &m, &label);
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// Held-out faces, stepped and level columns, one with dakuten printed and the same
/// recording without them: every card named right or left unnamed, none wrong, at
/// least 99% right, and the dakuten change no name.
#[test]
fn held_out_typefaces_named_without_a_wrong_name() {
    // Noto Sans CJK JP and the rounded Motoya L Maruberi. The brush face Aoyagi Soseki
    // (the third held-out face) is not held yet: see docs/detect.md.
    let (noto, maru) = (
        HELD_OUT_FONT_PATHS[0].to_string(),
        HELD_OUT_FONT_PATHS[1].to_string(),
    );
    for f in [&noto, &maru] {
        assert!(
            Path::new(f).is_file(),
            "held-out face {f} installed (./x installs it)"
        );
    }
    let (w, h) = (1280, 720);
    // Seeds 8101.. were never used by another test or for tuning.
    let cases = [
        Case {
            preset: Preset::Realistic,
            seed: 8111,
            font: Some(maru.clone()),
            columns: CardColumns::Level,
            dakuten: false,
            width_px: w,
            height_px: h,
        },
        Case {
            preset: Preset::Clean,
            seed: 8112,
            font: Some(noto.clone()),
            columns: CardColumns::Stepped,
            dakuten: false,
            width_px: w,
            height_px: h,
        },
    ];
    let (mut right, mut total) = (0, 0);
    for c in &cases {
        let (n, _) = run(c);
        assert_eq!(n.wrong, 0, "{c:?}: a card named wrongly");
        right += n.right;
        total += n.cards;
    }
    // Dakuten printed on the same recording: no name may change.
    let plain = Case {
        preset: Preset::Realistic,
        seed: 8113,
        font: Some(maru.clone()),
        columns: CardColumns::Stepped,
        dakuten: false,
        width_px: w,
        height_px: h,
    };
    let voiced = Case {
        dakuten: true,
        ..plain.clone()
    };
    let (np, pp) = run(&plain);
    let (nv, pv) = run(&voiced);
    assert_eq!(np.wrong + nv.wrong, 0, "a card named wrongly");
    let changed = pp
        .iter()
        .zip(&pv)
        .filter(|(a, b)| a.0 == b.0 && a.1 != b.1)
        .count();
    eprintln!("dakuten: {changed} names changed");
    assert_eq!(pp.len(), pv.len(), "same cards with and without dakuten");
    assert_eq!(changed, 0, "dakuten changed a name");
    right += np.right + nv.right;
    total += np.cards + nv.cards;
    eprintln!("held-out faces: named right {right}/{total}");
    assert!(
        right as f64 >= 0.99 * total as f64,
        "named right {right}/{total}"
    );
}

/// Any set of recordings, from `NAMES_SWEEP` (see the module doc).
#[test]
#[ignore]
fn sweep() {
    let spec = std::env::var("NAMES_SWEEP").unwrap_or_default();
    let (mut right, mut wrong, mut total) = (0, 0, 0);
    for item in spec.split_whitespace() {
        let f: Vec<&str> = item.split(':').collect();
        let preset = match f[0] {
            "clean" => Preset::Clean,
            "hard" => Preset::Hard,
            _ => Preset::Realistic,
        };
        let font = match f.get(2).copied().unwrap_or("-") {
            "-" => None,
            s => Some(match s.parse::<usize>() {
                Ok(i) => HELD_OUT_FONT_PATHS[i].to_string(),
                Err(_) => s.to_string(),
            }),
        };
        let c = Case {
            preset,
            seed: f[1].parse().unwrap(),
            font,
            columns: if f.get(3) == Some(&"level") {
                CardColumns::Level
            } else {
                CardColumns::Stepped
            },
            dakuten: f.get(4) == Some(&"1"),
            width_px: 1280,
            height_px: 720,
        };
        let (n, _) = run(&c);
        right += n.right;
        wrong += n.wrong;
        total += n.cards;
    }
    eprintln!("sweep: named right {right}/{total}, wrong {wrong}");
}

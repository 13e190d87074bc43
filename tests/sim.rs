//! Proofs for the match simulator (issue 4): determinism, truth consistent with what is
//! drawn, frame count, layout geometry, and truth decisions equal to the engine's.

use karuta_referee::cli;
use karuta_referee::rules::geometry::{FieldGeometry, Pt};
use karuta_referee::rules::{self, EventKind, Player};
use karuta_referee::sim::{self, Preset, SimOptions, SimSummary};
use opencv::prelude::*;
use opencv::videoio;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn small(seed: u64, preset: Preset, readings: usize) -> SimOptions {
    SimOptions {
        seed,
        fps: 60.0,
        width_px: 320,
        height_px: 180,
        readings,
        preset,
        labels: true,
        ..SimOptions::default()
    }
}

fn out_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join("sim-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Two recordings shared by the tests: a realistic one and a hard one (camera shake).
fn recordings() -> &'static Vec<(SimOptions, PathBuf, SimSummary)> {
    static R: OnceLock<Vec<(SimOptions, PathBuf, SimSummary)>> = OnceLock::new();
    R.get_or_init(|| {
        [
            ("realistic", small(5, Preset::Realistic, 8)),
            ("hard", small(9, Preset::Hard, 4)),
        ]
        .into_iter()
        .map(|(name, o)| {
            let d = out_dir(name);
            let s = sim::simulate(&o, &d, false).expect("simulate");
            (o, d, s)
        })
        .collect()
    })
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("read")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

/// Labels: frames, and the resting-card sets by epoch.
struct Labels {
    frames: Vec<Value>,
    epochs: BTreeMap<u64, Value>,
}

impl Labels {
    fn read(dir: &Path) -> Labels {
        let frames = lines(&dir.join("labels/frames.jsonl"));
        let epochs = lines(&dir.join("labels/cards.jsonl"))
            .into_iter()
            .map(|e| (e["epoch"].as_u64().unwrap(), e))
            .collect();
        Labels { frames, epochs }
    }
    /// Every card in a frame.
    fn cards(&self, f: usize) -> Vec<Value> {
        let fr = &self.frames[f];
        let mut v: Vec<Value> = self.epochs[&fr["cards_epoch"].as_u64().unwrap()]["cards"]
            .as_array()
            .unwrap()
            .clone();
        if let Some(m) = fr.get("moving_cards") {
            v.extend(m.as_array().unwrap().iter().cloned());
        }
        v
    }
}

fn frame_after(t: f64, fps: f64) -> usize {
    (t * fps - 1e-9).ceil() as usize
}

#[test]
fn same_seed_gives_byte_identical_files() {
    let (o, d, _) = &recordings()[1];
    let again = out_dir("hard-again");
    sim::simulate(o, &again, false).unwrap();
    for f in [
        "video.mp4",
        "readings.jsonl",
        "layout.json",
        "calibration.json",
        "truth.jsonl",
        "truth_decisions.jsonl",
        "frames.csv",
        "labels/frames.jsonl",
        "labels/cards.jsonl",
        "labels/scene.json",
    ] {
        let a = std::fs::read(d.join(f)).unwrap();
        let b = std::fs::read(again.join(f)).unwrap();
        assert!(a == b, "{f} differs between two runs of the same seed");
    }
    // A different seed is a different match.
    let other = out_dir("hard-other");
    sim::simulate(
        &SimOptions {
            seed: o.seed + 1,
            ..o.clone()
        },
        &other,
        false,
    )
    .unwrap();
    assert_ne!(
        std::fs::read(d.join("layout.json")).unwrap(),
        std::fs::read(other.join("layout.json")).unwrap()
    );
}

#[test]
fn every_touch_is_drawn_with_the_hand_on_the_card_at_height_zero() {
    for (o, d, _) in recordings() {
        let labels = Labels::read(d);
        let events = cli::load_events(&d.join("truth.jsonl")).unwrap();
        let mut direct = 0;
        for e in &events {
            let EventKind::Touch {
                player,
                hand,
                poem: Some(poem),
                direct: is_direct,
                ..
            } = &e.what
            else {
                continue;
            };
            let f = frame_after(e.t_s, o.fps);
            let fr = &labels.frames[f];
            let h = fr["hands"]
                .as_array()
                .unwrap()
                .iter()
                .find(|h| h["player"] == player.to_string() && h["hand"] == hand.to_string())
                .unwrap();
            if *is_direct {
                direct += 1;
                assert!(
                    h["height_mm"].as_f64().unwrap() < 0.5,
                    "touch at {}: hand not on the tatami in frame {f}",
                    e.t_s
                );
                assert!(
                    h["touching"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|p| p.as_u64() == Some(*poem as u64)),
                    "touch of {poem} at {}: frame {f} does not show the fingertip on it",
                    e.t_s
                );
                // The middle fingertip lies over the card's drawn outline.
                let tip = &h["keypoints_mm"]["middle"];
                let tip = Pt::new(tip[0].as_f64().unwrap(), tip[1].as_f64().unwrap());
                let card = labels
                    .cards(f)
                    .into_iter()
                    .find(|c| c["poem"].as_u64() == Some(*poem as u64))
                    .unwrap();
                let g = FieldGeometry::default();
                let corners = g.card_corners(
                    card["x_mm"].as_f64().unwrap(),
                    card["y_mm"].as_f64().unwrap(),
                    card["angle_deg"].as_f64().unwrap(),
                );
                let near = sim::body::dist_to_polygon(tip, &corners);
                assert!(
                    near <= sim::body::TIP_CONTACT_R_MM + 0.5,
                    "fingertip {near} mm from card {poem}"
                );
            } else {
                // Struck by another card: the card is moving.
                let card = labels
                    .cards(f)
                    .into_iter()
                    .find(|c| c["poem"].as_u64() == Some(*poem as u64))
                    .unwrap();
                assert_eq!(card["moving"], Value::Bool(true));
            }
        }
        assert!(direct >= 2, "too few touches to prove anything: {direct}");
    }
}

#[test]
fn every_out_card_is_outside_the_playing_area_in_the_next_frame() {
    let mut outs = 0;
    for (o, d, _) in recordings() {
        let labels = Labels::read(d);
        for e in cli::load_events(&d.join("truth.jsonl")).unwrap() {
            let EventKind::Out { poem, .. } = e.what else {
                continue;
            };
            outs += 1;
            let f = frame_after(e.t_s, o.fps);
            let card = labels
                .cards(f)
                .into_iter()
                .find(|c| c["poem"].as_u64() == Some(poem as u64))
                .unwrap();
            assert_eq!(
                card["out"],
                Value::Bool(true),
                "card {poem} not out in frame {f}"
            );
            // And it was still inside in the frame before.
            let before = labels
                .cards(f - 1)
                .into_iter()
                .find(|c| c["poem"].as_u64() == Some(poem as u64))
                .unwrap();
            assert_eq!(
                before["out"],
                Value::Bool(false),
                "card {poem} already out before {}",
                e.t_s
            );
        }
    }
    assert!(outs >= 2);
}

#[test]
fn enter_and_leave_match_the_hand_labels() {
    for (o, d, _) in recordings() {
        let labels = Labels::read(d);
        for e in cli::load_events(&d.join("truth.jsonl")).unwrap() {
            let (player, hand, inside) = match &e.what {
                EventKind::Enter { player, hand } => (*player, *hand, true),
                EventKind::Leave { player, hand } => (*player, *hand, false),
                _ => continue,
            };
            let f = frame_after(e.t_s, o.fps);
            let h = labels.frames[f]["hands"]
                .as_array()
                .unwrap()
                .iter()
                .find(|h| h["player"] == player.to_string() && h["hand"] == hand.to_string())
                .unwrap()
                .clone();
            assert_eq!(
                h["inside"],
                Value::Bool(inside),
                "{:?} at {} vs frame {f}",
                e.what,
                e.t_s
            );
        }
    }
}

#[test]
fn layout_obeys_the_geometry() {
    for (_, d, _) in recordings() {
        let layout = cli::load_layout(&d.join("layout.json")).unwrap();
        let g = FieldGeometry::new(layout.field.clone());
        for p in Player::BOTH {
            assert_eq!(layout.cards.iter().filter(|c| c.owner == p).count(), 25);
        }
        for c in &layout.cards {
            let terr = g.territory(c.owner);
            for k in g.card_corners(c.x_mm, c.y_mm, c.angle_deg) {
                assert!(
                    terr.contains(k),
                    "card {:?} pokes out of {}'s territory",
                    c.poem,
                    c.owner
                );
            }
            assert_eq!(g.row_of(c.owner, c.y_mm), c.row);
            assert!(c.angle_deg.abs() <= 3.0);
        }
        for (i, a) in layout.cards.iter().enumerate() {
            for b in &layout.cards[i + 1..] {
                let apart = (a.x_mm - b.x_mm).abs() >= 52.0 || (a.y_mm - b.y_mm).abs() >= 73.0;
                assert!(apart, "cards {:?} and {:?} overlap", a.poem, b.poem);
            }
        }
    }
}

#[test]
fn field_overrides_change_what_is_laid_out() {
    let o = SimOptions {
        territory_mm: 840.0,
        gap_mm: 20.0,
        readings: 1,
        labels: false,
        ..small(3, Preset::Clean, 1)
    };
    let (story, _, _) = sim::run::plan_story(&o);
    assert_eq!(story.layout.field.width_mm, 840.0);
    assert_eq!(story.layout.field.gap_mm, 20.0);
    let max_x = story
        .layout
        .cards
        .iter()
        .map(|c| c.x_mm.abs() + 26.0)
        .fold(0.0, f64::max);
    assert!(max_x <= 420.0 + 1e-9 && max_x > 400.0, "{max_x}");
    let min_y = story
        .layout
        .cards
        .iter()
        .map(|c| c.y_mm.abs() - 36.5)
        .fold(f64::INFINITY, f64::min);
    assert!((min_y - 10.0).abs() < 3.0, "{min_y}");
}

#[test]
fn video_has_fps_times_duration_frames() {
    for (o, d, s) in recordings() {
        let mut cap =
            videoio::VideoCapture::from_file(d.join("video.mp4"), videoio::CAP_FFMPEG).unwrap();
        assert!(cap.is_opened().unwrap());
        let mut n = 0u64;
        let mut img = opencv::core::Mat::default();
        while cap.read(&mut img).unwrap() {
            assert_eq!(
                (img.cols(), img.rows()),
                (o.width_px as i32, o.height_px as i32)
            );
            n += 1;
        }
        assert_eq!(n, s.frames);
        assert_eq!(n, (s.duration_s * o.fps).round() as u64);
        // The recording lasts past the last reading's shimo-no-ku.
        let readings = cli::load_readings(&d.join("readings.jsonl")).unwrap();
        let last = readings.last().unwrap().shimo_start_s.unwrap();
        assert!(s.duration_s > last);
        let csv = std::fs::read_to_string(d.join("frames.csv")).unwrap();
        assert_eq!(csv.lines().count() as u64, n + 1);
    }
}

#[test]
fn truth_decisions_are_the_engine_on_the_written_truth() {
    for (_, d, _) in recordings() {
        let layout = cli::load_layout(&d.join("layout.json")).unwrap();
        let readings = cli::load_readings(&d.join("readings.jsonl")).unwrap();
        let events = cli::load_events(&d.join("truth.jsonl")).unwrap();
        let mut buf: Vec<u8> = Vec::new();
        let (rulings, result) = rules::adjudicate(&layout, &readings, &events);
        for r in &rulings {
            cli::write_json_line(&mut buf, r).unwrap();
        }
        cli::write_json_line(&mut buf, &result).unwrap();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            std::fs::read_to_string(d.join("truth_decisions.jsonl")).unwrap()
        );
        // Every owed card was really sent before the shimo-no-ku, and placed.
        for r in &rulings {
            for (p, n) in &r.sends.owed {
                let done = r.sends.done.iter().filter(|s| s.from == *p).count() as u32;
                assert_eq!(done, *n, "reading {}: {p} owed {n}, sent {done}", r.seq);
            }
        }
        // Half the readings are dead cards.
        let dead = rulings.iter().filter(|r| r.card.owner.is_none()).count();
        assert_eq!(dead, readings.len() / 2);
    }
}

#[test]
fn events_are_ordered_and_readings_are_well_formed() {
    for (_, d, _) in recordings() {
        let events = cli::load_events(&d.join("truth.jsonl")).unwrap();
        assert!(events.windows(2).all(|w| w[0].t_s <= w[1].t_s));
        let readings = cli::load_readings(&d.join("readings.jsonl")).unwrap();
        for r in &readings {
            let on = r.onsets_s.as_ref().unwrap();
            assert!(on.len() >= 6);
            assert!(on[1] - on[0] > 0.9, "first mora held");
            assert!(r.shimo_start_s.unwrap() > r.kami_end_s.unwrap());
        }
        // Calibration maps the field centre near the image centre.
        let cal: karuta_referee::field::Calibration =
            serde_json::from_str(&std::fs::read_to_string(d.join("calibration.json")).unwrap())
                .unwrap();
        let c = cal.camera_matrix;
        assert!(c[0][0] > 100.0);
    }
}

#[test]
#[ignore = "writes docs/sim-contact-sheet.png; run by hand"]
fn contact_sheet() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sim-contact-sheet.png");
    sim::sheet::contact_sheet(&p).unwrap();
    assert!(std::fs::metadata(&p).unwrap().len() > 10_000);
}

#[test]
fn many_stories_send_what_they_owe_and_keep_the_rules_in_play() {
    // Planning only (no rendering): many seeds and every preset.
    let mut plots = std::collections::BTreeSet::new();
    for preset in [Preset::Clean, Preset::Realistic, Preset::Hard] {
        for seed in 100..106 {
            let o = SimOptions {
                seed,
                preset,
                ..SimOptions::default()
            };
            let (story, _, _) = sim::run::plan_story(&o);
            assert!(story.events.windows(2).all(|w| w[0].t_s <= w[1].t_s));
            let (rulings, _) = rules::adjudicate(&story.layout, &story.readings, &story.events);
            assert_eq!(rulings.len(), 10);
            for r in &rulings {
                for (p, n) in &r.sends.owed {
                    let done = r.sends.done.iter().filter(|s| s.from == *p).count() as u32;
                    assert_eq!(
                        done, *n,
                        "{preset} seed {seed} reading {}: {p} owed {n}, sent {done}",
                        r.seq
                    );
                }
                if let Some(t) = &r.take {
                    plots.insert(format!("{:?}", t.how));
                }
                for f in &r.fouls {
                    plots.insert(format!("{:?}", f.kind));
                }
            }
            // Hands are outside the playing area when each reading begins, unless the
            // story is an early entry (then the engine records it).
            for r in &rulings {
                let early = r
                    .fouls
                    .iter()
                    .any(|f| f.kind == rules::FoulKind::EarlyEntry);
                let story_early = story
                    .moments
                    .iter()
                    .any(|m| m.seq == r.seq && m.what == "early entry");
                assert_eq!(early, story_early, "{preset} seed {seed} reading {}", r.seq);
            }
        }
    }
    for want in [
        "Direct",
        "PushOut",
        "Awarded",
        "DeadCard",
        "WrongTerritory",
        "Double",
        "EarlyEntry",
    ] {
        assert!(plots.contains(want), "no {want} in 18 matches: {plots:?}");
    }
}

#[test]
fn a_players_first_touch_of_the_match_is_with_the_lead_hand_the_layout_declares() {
    // 13-2 note: the hand that first touches a card is the lead hand. The simulator
    // declares each player's lead hand in the layout; a video shows only the touches,
    // so the story must make the same lead hand of them, and the rulings must not
    // depend on the declaration. Seed 7421 (realistic, 9 readings) once made B's first
    // touch an other-hand touch in reading 1, and every later right-hand take of B's
    // was ruled 21-3 from the video.
    let mut cases: Vec<(u64, Preset, usize)> = vec![(7421, Preset::Realistic, 9)];
    for preset in [Preset::Realistic, Preset::Hard] {
        for seed in 200..206 {
            cases.push((seed, preset, 10));
        }
    }
    for (seed, preset, readings) in cases {
        let o = SimOptions {
            seed,
            preset,
            readings,
            ..SimOptions::default()
        };
        let (story, _, _) = sim::run::plan_story(&o);
        for (p, info) in &story.layout.players {
            let first = story.events.iter().find_map(|e| match e.what {
                EventKind::Touch { player, hand, .. } if player == *p => Some(hand),
                _ => None,
            });
            if let Some(hand) = first {
                assert_eq!(
                    Some(hand),
                    info.lead_hand,
                    "{preset} seed {seed}: {p}'s first touch is with the {hand:?} hand"
                );
            }
        }
        let declared = rules::adjudicate(&story.layout, &story.readings, &story.events).0;
        let mut undeclared = story.layout.clone();
        for info in undeclared.players.values_mut() {
            info.lead_hand = None;
        }
        let seen = rules::adjudicate(&undeclared, &story.readings, &story.events).0;
        for (a, b) in declared.iter().zip(&seen) {
            assert_eq!(
                (&a.take, &a.fouls),
                (&b.take, &b.fouls),
                "{preset} seed {seed} reading {}: the rulings depend on the declared lead hand",
                a.seq
            );
        }
    }
}

#[test]
fn close_takes_make_every_reading_a_race_both_players_touch_within_20_ms() {
    // `--close-takes` (training data for timing close takes): every reading is a card on
    // the field, touched directly by both players 0-20 ms apart (18-1's near tie).
    for preset in [Preset::Clean, Preset::Realistic, Preset::Hard] {
        for seed in 1090..1092 {
            let o = SimOptions {
                seed,
                preset,
                readings: 8,
                close_takes: true,
                ..SimOptions::default()
            };
            let (story, _, _) = sim::run::plan_story(&o);
            assert_eq!(story.readings.len(), 8, "{preset} seed {seed}");
            let (decisions, _) = rules::adjudicate(&story.layout, &story.readings, &story.events);
            for (r, d) in story.readings.iter().zip(&decisions) {
                let on_field = story.layout.cards.iter().any(|c| c.poem == Some(r.poem));
                assert!(
                    on_field,
                    "{preset} seed {seed} reading {}: dead card",
                    r.seq
                );
                let firsts: Vec<(Player, f64)> = Player::BOTH
                    .iter()
                    .filter_map(|p| {
                        story.events.iter().find_map(|e| match e.what {
                            EventKind::Touch {
                                player,
                                poem,
                                direct: true,
                                ..
                            } if player == *p
                                && poem == Some(r.poem)
                                && e.t_s >= r.kami_start_s =>
                            {
                                Some((player, e.t_s))
                            }
                            _ => None,
                        })
                    })
                    .collect();
                assert_eq!(
                    firsts.len(),
                    2,
                    "{preset} seed {seed} reading {}: touched by {firsts:?}",
                    r.seq
                );
                let gap_s = (firsts[0].1 - firsts[1].1).abs();
                assert!(
                    gap_s <= 0.020 + 1e-9,
                    "{preset} seed {seed} reading {}: touches {:.1} ms apart",
                    r.seq,
                    gap_s * 1e3
                );
                assert!(
                    d.take.is_some(),
                    "{preset} seed {seed} reading {}: no take",
                    r.seq
                );
            }
        }
    }
}

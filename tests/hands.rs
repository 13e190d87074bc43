//! The hand model from the command line: the committed `models/hands.onnx` run through
//! `perceive` on a short recording the test draws (a seed never used in training), its
//! hands scored against the simulator's labels and its touches against the truth; the
//! hurried schedule of `live`; the onset network timing touches at 240 fps; and bad model
//! files, each one line and exit status 2.

use karuta_referee::detect::video::{find_video, Video};
use karuta_referee::field::Calibration;
use karuta_referee::hands::{
    PerceiveOptions, PerceiveStats, Perceiver, ACTIVE_EVERY_S, HURRIED_STRETCH,
};
use karuta_referee::rules::model::EventKind;
use karuta_referee::rules::parse::parse_layout;
use karuta_referee::sim::{simulate, Preset, SimOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("karuta-hands-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_karuta-referee"))
}

fn model() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models/hands.onnx")
}

/// A small recording: 640x360 at 60 fps keeps the test short; the network sees every
/// recording at the same reduced size.
fn recording(name: &str, seed: u64, preset: Preset, readings: usize) -> PathBuf {
    let dir = tmp(name);
    let opts = SimOptions {
        seed,
        fps: 60.0,
        width_px: 640,
        height_px: 360,
        readings,
        preset,
        labels: true,
        ..SimOptions::default()
    };
    simulate(&opts, &dir, false).expect("simulate");
    dir
}

fn score(dir: &Path, out: &Path) -> serde_json::Value {
    let o = bin()
        .args(["score-hands", "--truth"])
        .arg(dir)
        .arg("--out")
        .arg(out)
        .output()
        .expect("run score-hands");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("score JSON")
}

#[test]
fn perceive_finds_hands_and_touches_on_an_unseen_seed() {
    let dir = recording("sim", 9101, Preset::Realistic, 3);
    let out = dir.join("out");
    let o = bin()
        .arg("perceive")
        .arg(&dir)
        .arg("--out")
        .arg(&out)
        .arg("--model")
        .arg(model())
        .output()
        .expect("run perceive");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["events.jsonl", "hands.jsonl"] {
        assert!(out.join(f).is_file(), "{f} written");
    }
    // The events file is the contract's: it parses, in time order.
    let events = std::fs::read_to_string(out.join("events.jsonl")).unwrap();
    karuta_referee::rules::parse::parse_events("events.jsonl", &events).expect("events.jsonl");
    let s = score(&dir, &out);
    let f = |k: &str| s[k].as_f64().unwrap_or(f64::NAN);
    eprintln!("{}", serde_json::to_string_pretty(&s).unwrap());
    // Floors for the committed model (docs/hands.md has its numbers; the issue's
    // targets are higher and not yet met): a worse model, or a broken decoding, schedule
    // or event step, fails here.
    assert!(
        f("visible_hands") >= 50.0,
        "hands in view: {}",
        f("visible_hands")
    );
    assert!(f("recall") >= 0.75, "hand recall {}", f("recall"));
    assert!(
        f("player_right_frac") >= 0.93,
        "player {}",
        f("player_right_frac")
    );
    // Outlines drawn where the mask is sure: 0.77 here (0.68 when drawn at even odds).
    assert!(f("iou_median") >= 0.74, "IoU median {}", f("iou_median"));
    assert!(
        f("tip_err_median_px") <= 10.0,
        "fingertip error {}",
        f("tip_err_median_px")
    );
    assert!(
        f("enter_leave_frac") >= 0.5,
        "enter/leave {}",
        f("enter_leave_frac")
    );
    // Touches against the truth, judged by the contact networks beside the hand model
    // (`perceive` presses the cards where the layout put them; on this small 60 fps
    // recording they find 1 of its 6 touches with 6 false ones; at 1280x720 and 240 fps,
    // in `analyze`, far more: docs/hands.md). A touch found must carry the right player,
    // hand and poem; without the networks none is found, and a network that takes every
    // hand near a card for pressing makes dozens of false ones.
    assert!(
        f("true_touches") >= 3.0,
        "touches in the story: {}",
        f("true_touches")
    );
    assert!(
        f("touches_found") >= 1.0,
        "touches found {} of {}",
        f("touches_found"),
        f("true_touches")
    );
    assert!(
        f("false_touches") <= 12.0,
        "false touches {} ({:?})",
        f("false_touches"),
        s["false_touch_list"]
    );

    // The same model inside `analyze`, its own output written beside the rulings
    // (`--hands-out`), with the cards where the card tracker placed them: the same hands,
    // scored the same way.
    let inside = dir.join("analysis");
    let hands_out = dir.join("analysis-hands");
    let o = bin()
        .arg("analyze")
        .arg(&dir)
        .arg("--out")
        .arg(&inside)
        .arg("--no-report")
        .arg("--hands-model")
        .arg(model())
        .arg("--hands-out")
        .arg(&hands_out)
        .output()
        .expect("run analyze");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let events = std::fs::read_to_string(hands_out.join("events.jsonl")).unwrap();
    karuta_referee::rules::parse::parse_events("events.jsonl", &events).expect("events.jsonl");
    let a = score(&dir, &hands_out);
    let g = |k: &str| a[k].as_f64().unwrap_or(f64::NAN);
    assert_eq!(
        g("visible_hands"),
        f("visible_hands"),
        "the same frames scored"
    );
    assert!(
        g("recall") >= 0.75,
        "hand recall in analyze {}",
        g("recall")
    );
    assert!(
        g("touches_found") >= 1.0 && g("false_touches") <= 12.0,
        "touches in analyze: {} found, false {:?}",
        g("touches_found"),
        a["false_touch_list"]
    );
}

fn bad_model(model: &Path) -> String {
    let dir = tmp("bad");
    std::fs::create_dir_all(&dir).unwrap();
    // The model is checked before the video is read: an empty recording will do.
    let o = bin()
        .arg("perceive")
        .arg(&dir)
        .arg("--model")
        .arg(model)
        .output()
        .expect("run perceive");
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains(&model.display().to_string()),
        "names the file: {err}"
    );
    err
}

#[test]
fn missing_model_is_one_line_and_exit_2() {
    let e = bad_model(Path::new("/nonexistent/hands.onnx"));
    assert!(e.contains("not found"), "{e}");
}

#[test]
fn truncated_model_is_one_line_and_exit_2() {
    let dir = tmp("trunc");
    std::fs::create_dir_all(&dir).unwrap();
    let bytes = std::fs::read(model()).unwrap();
    let p = dir.join("truncated.onnx");
    std::fs::write(&p, &bytes[..bytes.len() / 3]).unwrap();
    bad_model(&p);
}

#[test]
fn non_onnx_model_is_one_line_and_exit_2() {
    let dir = tmp("text");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("model.onnx");
    std::fs::write(&p, "this is not a network\n").unwrap();
    let e = bad_model(&p);
    assert!(e.contains("ONNX"), "{e}");
}

#[test]
fn model_with_another_input_shape_is_one_line_and_exit_2() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/wrong_input_shape.onnx");
    let e = bad_model(&p);
    assert!(e.contains("input shape"), "{e}");
}

/// `perceive` on a folder holding a copy of the hand model and the files `beside` it
/// (name, bytes): it must stop with one line on stderr and exit status 2. Returns the
/// folder and that line.
fn perceive_refuses(name: &str, beside: &[(&str, Vec<u8>)]) -> (PathBuf, String) {
    let dir = tmp(name);
    std::fs::create_dir_all(&dir).unwrap();
    let hands = dir.join("hands.onnx");
    std::fs::copy(model(), &hands).unwrap();
    for (file, bytes) in beside {
        std::fs::write(dir.join(file), bytes).unwrap();
    }
    let o = bin()
        .arg("perceive")
        .arg(&dir)
        .arg("--model")
        .arg(&hands)
        .output()
        .expect("run perceive");
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    (dir, err)
}

#[test]
fn bad_contact_model_beside_the_hand_model_is_one_line_and_exit_2() {
    let (dir, err) = perceive_refuses(
        "contact",
        &[("contact.onnx", b"this is not a network\n".to_vec())],
    );
    let contact = dir.join("contact.onnx");
    assert!(
        err.contains(&contact.display().to_string()) && err.contains("ONNX"),
        "names the contact model: {err}"
    );
}

#[test]
fn a_point_network_of_the_wrong_input_is_one_line_and_exit_2() {
    // The wide contact network (18 channels) where the point network (9) belongs.
    let models = model();
    let read = |name: &str| std::fs::read(models.with_file_name(name)).unwrap();
    let (dir, err) = perceive_refuses(
        "point",
        &[
            ("contact.onnx", read("contact.onnx")),
            ("contact-point.onnx", read("contact-second.onnx")),
        ],
    );
    let point = dir.join("contact-point.onnx");
    assert!(
        err.contains(&point.display().to_string()) && err.contains("9 channels"),
        "names the point network and what it must take: {err}"
    );
}

/// Every frame of `dir` through a perceiver, hurried throughout or not: its counters and
/// the `enter` events it gives (frame time, player, hand).
fn perceive_frames(dir: &Path, hurried: bool) -> (PerceiveStats, Vec<(f64, String)>) {
    let cal: Calibration =
        serde_json::from_str(&std::fs::read_to_string(dir.join("calibration.json")).unwrap())
            .unwrap();
    let layout = parse_layout(
        "layout.json",
        &std::fs::read_to_string(dir.join("layout.json")).unwrap(),
    )
    .unwrap();
    let mut p = Perceiver::new(&model(), &cal, &layout, &PerceiveOptions::default()).unwrap();
    p.hurry(hurried);
    let mut video = Video::open(&find_video(dir).unwrap()).unwrap();
    let mut enters = Vec::new();
    while let Some(f) = video.next_frame().unwrap() {
        for e in p.push(f.index, f.t_s, &f.bgr).unwrap().events {
            if let EventKind::Enter { player, hand } = e.what {
                enters.push((e.t_s, format!("{player:?} {hand:?}")));
            }
        }
    }
    (p.stats.clone(), enters)
}

/// `live` asks the hands to hurry while frames wait: fewer network runs, no narrowing
/// down between runs, and the same hands still seen entering, within the wider spacing.
#[test]
fn hurried_hands_run_less_and_still_see_each_entry() {
    let dir = recording("hurry", 9104, Preset::Clean, 2);
    let (calm, calm_enters) = perceive_frames(&dir, false);
    let (hurried, hurried_enters) = perceive_frames(&dir, true);
    eprintln!(
        "runs {} (refining {}) calm, {} (refining {}) hurried; enters {:?} / {:?}",
        calm.inferences,
        calm.refine_runs,
        hurried.inferences,
        hurried.refine_runs,
        calm_enters,
        hurried_enters
    );
    assert_eq!(hurried.refine_runs, 0, "no narrowing down while hurried");
    assert!(
        (hurried.inferences as f64) < 0.8 * calm.inferences as f64,
        "hurried runs {} against {}",
        hurried.inferences,
        calm.inferences
    );
    // Each true entry seen calmly (same hand, within a 60 fps frame of the truth) is seen
    // hurried, by the same hand, within two of the wider spacing of runs. A calm entry
    // that is no true one (a region taken briefly for another hand) is not owed.
    let frame_s = 1.0 / 60.0;
    let near = |list: &[(f64, String)], t: f64, who: &str, within_s: f64| {
        list.iter()
            .any(|(u, w)| w == who && (u - t).abs() <= within_s)
    };
    let seen_calm: Vec<(f64, String)> = true_enters(&dir)
        .into_iter()
        .filter(|(t, who)| near(&calm_enters, *t, who, frame_s))
        .collect();
    assert!(
        seen_calm.len() >= 5,
        "true entries seen calmly: {seen_calm:?} of {calm_enters:?}"
    );
    let spacing = ACTIVE_EVERY_S * HURRIED_STRETCH;
    for (t, who) in &seen_calm {
        assert!(
            near(&hurried_enters, *t, who, 2.0 * spacing + frame_s),
            "entry of {who} at {t:.3} s not seen hurried: {hurried_enters:?}"
        );
    }
}

/// The `enter` events of a simulated recording's truth: time, player and hand as
/// `perceive_frames` writes them.
fn true_enters(dir: &Path) -> Vec<(f64, String)> {
    let text = std::fs::read_to_string(dir.join("truth.jsonl")).expect("truth.jsonl");
    karuta_referee::rules::parse::parse_events("truth.jsonl", &text)
        .expect("truth parses")
        .into_iter()
        .filter_map(|e| match e.what {
            EventKind::Enter { player, hand } => Some((e.t_s, format!("{player:?} {hand:?}"))),
            _ => None,
        })
        .collect()
}

#[test]
fn an_onset_network_of_the_wrong_input_is_one_line_and_exit_2() {
    // The first contact network (9 channels) where the onset network (18) belongs.
    let models = model();
    let read = |name: &str| std::fs::read(models.with_file_name(name)).unwrap();
    let (dir, err) = perceive_refuses(
        "onset",
        &[
            ("contact.onnx", read("contact.onnx")),
            ("contact-onset.onnx", read("contact.onnx")),
        ],
    );
    let onset = dir.join("contact-onset.onnx");
    assert!(
        err.contains(&onset.display().to_string()) && err.contains("18"),
        "names the onset network and what it must take: {err}"
    );
}

/// `perceive` of `dir` with the committed networks, and `extra` files beside them: its
/// events.
fn perceive_with(dir: &Path, name: &str, extra: &[(&str, &str)]) -> Vec<serde_json::Value> {
    let models = dir.join(format!("models-{name}"));
    std::fs::create_dir_all(&models).unwrap();
    for f in [
        "hands.onnx",
        "contact.onnx",
        "contact-second.onnx",
        "contact-point.onnx",
    ] {
        std::fs::copy(model().with_file_name(f), models.join(f)).unwrap();
    }
    for (to, from) in extra {
        std::fs::copy(model().with_file_name(from), models.join(to)).unwrap();
    }
    let out = dir.join(format!("out-{name}"));
    let o = bin()
        .arg("perceive")
        .arg(dir)
        .arg("--out")
        .arg(&out)
        .arg("--model")
        .arg(models.join("hands.onnx"))
        .output()
        .expect("run perceive");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(out.join("events.jsonl")).unwrap();
    karuta_referee::rules::parse::parse_events("events.jsonl", &text).expect("in time order");
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_onset_network_times_touches_nearer_the_truth_and_drops_only_false_ones() {
    use karuta_referee::hands::perceive::{TIMED_AFTER_S, TIMED_BEFORE_S};
    // At 240 fps: the onset network sees the frames up to 25 ms before, 6 frames.
    let dir = tmp("timed");
    let opts = SimOptions {
        seed: 9102,
        fps: 240.0,
        width_px: 640,
        height_px: 360,
        readings: 2,
        preset: Preset::Clean,
        labels: true,
        ..SimOptions::default()
    };
    simulate(&opts, &dir, false).expect("simulate");
    let found = perceive_with(&dir, "found", &[]);
    let timed = perceive_with(
        &dir,
        "timed",
        &[("contact-onset.onnx", "contact-onset.onnx")],
    );
    let touches = |v: &[serde_json::Value]| -> Vec<serde_json::Value> {
        v.iter().filter(|e| e["kind"] == "touch").cloned().collect()
    };
    let others = |v: &[serde_json::Value]| -> Vec<serde_json::Value> {
        v.iter().filter(|e| e["kind"] != "touch").cloned().collect()
    };
    assert_eq!(others(&found), others(&timed), "enter and leave unchanged");
    let (a, b) = (touches(&found), touches(&timed));
    assert!(!a.is_empty(), "the story's touches are found");
    // Timing may reorder touches close in time: match each by who touched what. A touch
    // the onset network saw no finger land for is dropped.
    let truth = std::fs::read_to_string(dir.join("truth.jsonl")).unwrap();
    let true_touches: Vec<serde_json::Value> = truth
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|t| t["kind"] == "touch" && t["direct"] == true)
        .collect();
    let key = |e: &serde_json::Value| format!("{} {} {}", e["player"], e["hand"], e["poem"]);
    let mut moved = 0;
    let mut dropped = 0;
    for e in &a {
        let t = e["t_s"].as_f64().unwrap();
        let Some(m) = b
            .iter()
            .filter(|f| key(f) == key(e))
            .map(|f| f["t_s"].as_f64().unwrap())
            .filter(|m| *m >= t - TIMED_BEFORE_S - 1e-9 && *m <= t + TIMED_AFTER_S + 1e-9)
            .min_by(|x, y| (x - t).abs().total_cmp(&(y - t).abs()))
        else {
            dropped += 1;
            assert!(
                !true_touches.iter().any(|x| x["player"] == e["player"]
                    && x["poem"] == e["poem"]
                    && (x["t_s"].as_f64().unwrap() - t).abs() < 0.1),
                "a touch dropped has no true touch near it: {e}"
            );
            continue;
        };
        moved += usize::from((m - t).abs() > 1e-9);
    }
    assert_eq!(a.len(), b.len() + dropped, "no touch added");
    // Against the truth: each true touch's nearest found touch of the same player and
    // poem within 0.1 s, before and after timing.
    let errors = |v: &[serde_json::Value]| -> Vec<f64> {
        true_touches
            .iter()
            .filter_map(|t| {
                let tt = t["t_s"].as_f64().unwrap();
                v.iter()
                    .filter(|e| e["player"] == t["player"] && e["poem"] == t["poem"])
                    .map(|e| (e["t_s"].as_f64().unwrap() - tt).abs())
                    .filter(|d| *d < 0.1)
                    .min_by(f64::total_cmp)
            })
            .collect()
    };
    let (ea, eb) = (errors(&a), errors(&b));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    eprintln!(
        "{moved} of {} touches timed anew, {dropped} dropped; of the truth's, {} found, mean error {:.1} ms as found, {:.1} ms timed",
        a.len(),
        ea.len(),
        1000.0 * mean(&ea),
        1000.0 * mean(&eb)
    );
    assert!(moved >= 1, "the onset network times some touch");
    assert_eq!(ea.len(), eb.len(), "the same true touches found");
    assert!(
        mean(&eb) < mean(&ea),
        "timed touches lie nearer the truth: {:.1} ms against {:.1} ms",
        1000.0 * mean(&eb),
        1000.0 * mean(&ea)
    );
}

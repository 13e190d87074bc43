//! `karuta-referee analyze` on small simulated recordings (640x360 at 60 fps, so CI stays
//! quick): a run killed part-way (SIGKILL) and resumed ends with files identical to an
//! uninterrupted run; bad input gives one line, exit status 2, and no complete-looking
//! `decisions.jsonl`; `score` reads what `analyze` wrote.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;
use support::sim::labelled_recording;
use support::{assert_exit_0, kill_when};

const BIN: &str = env!("CARGO_BIN_EXE_karuta-referee");

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("karuta-analyze-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn analyze(dir: &Path, out: &Path, extra: &[&str]) -> Output {
    Command::new(BIN)
        .arg("analyze")
        .arg(dir)
        .arg("--out")
        .arg(out)
        .arg("--hands-labels")
        .args(extra)
        .output()
        .unwrap()
}

/// `score --truth TRUTH --out OUT`, which must succeed: its JSON.
fn score(truth: &Path, out: &Path) -> serde_json::Value {
    let s = Command::new(BIN)
        .args(["score", "--truth"])
        .arg(truth)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert_exit_0(&s);
    serde_json::from_slice(&s.stdout).unwrap()
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn a_killed_analysis_resumes_to_the_same_files() {
    let rec = labelled_recording("resume", 2201, 60.0, 3);
    let whole = rec.join("whole");
    let o = analyze(&rec, &whole, &[]);
    assert_exit_0(&o);
    let decisions = String::from_utf8_lossy(&read(&whole.join("decisions.jsonl"))).to_string();
    assert_eq!(
        decisions.lines().count(),
        4,
        "three rulings and the result: {decisions}"
    );
    assert!(
        !whole.join("resume.json").exists(),
        "a finished run leaves no checkpoint"
    );
    // The review page comes with the rulings, each ruling's reason on it.
    let page = String::from_utf8_lossy(&read(&whole.join("report.html"))).to_string();
    for line in decisions.lines().filter(|l| l.contains("\"seq\"")) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let seq = v["seq"].as_u64().unwrap();
        assert!(
            page.contains(&format!("id=\"ruling-{seq}\"")),
            "ruling {seq} on the page"
        );
    }

    // Killed once its first ruling is checkpointed.
    let cut = rec.join("cut");
    let mut child = Command::new(BIN)
        .arg("analyze")
        .arg(&rec)
        .arg("--out")
        .arg(&cut)
        .arg("--hands-labels")
        .spawn()
        .unwrap();
    let killed = kill_when(
        &mut child,
        || cut.join("resume.json").exists(),
        Duration::from_secs(300),
    );
    assert!(
        killed,
        "the run ended before its first checkpoint could be seen"
    );
    assert!(
        !cut.join("decisions.jsonl").exists(),
        "a killed run leaves no complete-looking decisions.jsonl"
    );
    assert!(cut.join("decisions.jsonl.part").exists());

    // Resumed with another hand source (the model, not the labels): refused, the run
    // left as it was.
    let o = Command::new(BIN)
        .arg("analyze")
        .arg(&rec)
        .arg("--out")
        .arg(&cut)
        .arg("--resume")
        .output()
        .unwrap();
    one_line_exit_2(&o, "resume.json");
    // A checkpoint that is not this recording's (its frame past the video's end, or its
    // hands' state spoilt): refused with one line, never a panic or a short run.
    let spoilt = |name: &str, spoil: &dyn Fn(&mut serde_json::Value)| {
        let odd = rec.join(name);
        std::fs::create_dir_all(&odd).unwrap();
        for f in ["decisions.jsonl.part", "events.jsonl.part", "layout.json"] {
            std::fs::copy(cut.join(f), odd.join(f)).unwrap();
        }
        let mut v: serde_json::Value =
            serde_json::from_slice(&read(&cut.join("resume.json"))).unwrap();
        spoil(&mut v);
        std::fs::write(odd.join("resume.json"), v.to_string()).unwrap();
        one_line_exit_2(&analyze(&rec, &odd, &["--resume"]), "resume.json");
    };
    spoilt("late", &|v| v["checkpoint"]["frame"] = 10_000_000.into());
    spoilt("spoilt", &|v| {
        v["checkpoint"]["hands"] = serde_json::json!({"touching": 3})
    });
    let o = analyze(&rec, &cut, &["--resume"]);
    assert_exit_0(&o);
    for f in ["decisions.jsonl", "events.jsonl", "layout.json"] {
        assert_eq!(
            read(&whole.join(f)),
            read(&cut.join(f)),
            "{f} differs after --resume"
        );
    }

    // The score reads both sides and counts every reading.
    let v = score(&rec, &whole);
    assert_eq!(v["readings"], 3);

    // Without its frame-time table (a recording re-encoded as a phone records has none),
    // the frame's length comes from the video: every count the same.
    std::fs::remove_file(rec.join("frames.csv")).unwrap();
    let v2 = score(&rec, &whole);
    let fps = |v: &serde_json::Value| v["counts"]["fps"].as_f64().unwrap_or(0.0);
    assert!(
        (fps(&v) - fps(&v2)).abs() < 0.01 && fps(&v2) > 0.0,
        "frame rate {} from frames.csv, {} from the video",
        fps(&v),
        fps(&v2)
    );
    for k in [
        "rulings_right",
        "outs_true",
        "outs_found",
        "outs_within_one_frame",
    ] {
        assert_eq!(
            v["counts"][k], v2["counts"][k],
            "{k} differs without frames.csv"
        );
    }
    let _ = std::fs::remove_dir_all(&rec);
}

fn one_line_exit_2(o: &Output, mentions: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains(mentions), "{err} should name {mentions}");
}

#[test]
fn bad_input_gets_one_line_and_exit_2() {
    let rec = labelled_recording("bad", 2202, 60.0, 1);
    let out = rec.join("out");

    // No video.
    let empty = tmp("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::copy(rec.join("readings.jsonl"), empty.join("readings.jsonl")).unwrap();
    one_line_exit_2(&analyze(&empty, &out, &[]), "no video");

    // Readings that do not parse.
    let bad_readings = tmp("badreadings");
    std::fs::create_dir_all(&bad_readings).unwrap();
    std::fs::copy(rec.join("video.mp4"), bad_readings.join("video.mp4")).unwrap();
    std::fs::write(
        bad_readings.join("readings.jsonl"),
        "{\"seq\": 1, \"poem\": 101}\n",
    )
    .unwrap();
    one_line_exit_2(&analyze(&bad_readings, &out, &[]), "readings.jsonl");

    // A reading past the video's end.
    let late = tmp("late");
    std::fs::create_dir_all(&late).unwrap();
    std::fs::copy(rec.join("video.mp4"), late.join("video.mp4")).unwrap();
    std::fs::write(
        late.join("readings.jsonl"),
        "{\"seq\": 1, \"poem\": 5, \"kami_start_s\": 9999.0}\n",
    )
    .unwrap();
    one_line_exit_2(&analyze(&late, &out, &[]), "past the video's end");

    // A truncated video.
    let cut = tmp("truncated");
    std::fs::create_dir_all(&cut).unwrap();
    let bytes = read(&rec.join("video.mp4"));
    std::fs::write(cut.join("video.mp4"), &bytes[..bytes.len() / 2]).unwrap();
    std::fs::copy(rec.join("readings.jsonl"), cut.join("readings.jsonl")).unwrap();
    let o = analyze(&cut, &cut.join("out"), &[]);
    one_line_exit_2(&o, "video.mp4");
    assert!(!cut.join("out/decisions.jsonl").exists());

    // A calibration whose homography folds the field.
    let fold = tmp("fold");
    std::fs::create_dir_all(&fold).unwrap();
    std::fs::copy(rec.join("video.mp4"), fold.join("video.mp4")).unwrap();
    std::fs::copy(rec.join("readings.jsonl"), fold.join("readings.jsonl")).unwrap();
    let mut cal: serde_json::Value =
        serde_json::from_slice(&read(&rec.join("calibration.json"))).unwrap();
    // The identity mirrors the field: A's right would be on the left.
    cal["image_to_field"] = serde_json::json!([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);
    std::fs::write(fold.join("calibration.json"), cal.to_string()).unwrap();
    one_line_exit_2(&analyze(&fold, &fold.join("out"), &[]), "calibration.json");
    assert!(!fold.join("out/decisions.jsonl").exists());

    // A layout.json whose players block names a hand that is neither left nor right.
    let hand = tmp("badhand");
    std::fs::create_dir_all(&hand).unwrap();
    std::fs::copy(rec.join("video.mp4"), hand.join("video.mp4")).unwrap();
    std::fs::copy(rec.join("readings.jsonl"), hand.join("readings.jsonl")).unwrap();
    std::fs::write(
        hand.join("layout.json"),
        "{\"players\": {\"A\": {\"lead_hand\": \"middle\"}}, \"cards\": []}\n",
    )
    .unwrap();
    one_line_exit_2(&analyze(&hand, &hand.join("out"), &[]), "layout.json");
    assert!(!hand.join("out/decisions.jsonl").exists());

    for d in [&rec, &empty, &bad_readings, &late, &cut, &fold, &hand] {
        let _ = std::fs::remove_dir_all(d);
    }
}

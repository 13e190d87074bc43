//! `karuta-referee analyze` with the committed hand model, killed part-way (SIGKILL) and
//! resumed: it ends with the same files as an uninterrupted run. The hands' state (the
//! frames kept between the network's runs, the contact crops and the plate, the hands
//! followed, the touches still being timed) goes into the checkpoint; the frames whose
//! pixels it keeps are decoded again.

mod support;

use karuta_referee::sim::Preset;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use support::sim::labelled_recording_as;
use support::{assert_exit_0, kill_when};

const BIN: &str = env!("CARGO_BIN_EXE_karuta-referee");

fn analyze(rec: &Path, out: &Path) -> Command {
    let mut c = Command::new(BIN);
    c.arg("analyze").arg(rec).arg("--out").arg(out);
    c
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The readings ruled in the checkpoint `out/resume.json`, if there is one.
fn ruled(out: &Path) -> Option<u64> {
    let text = std::fs::read(out.join("resume.json")).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&text).ok()?;
    v["checkpoint"]["ruled"].as_u64()
}

#[test]
fn a_killed_analysis_with_the_hand_model_resumes_to_the_same_files() {
    // 240 fps: the contact crops and the onset network's frames are kept and timed too.
    let rec: PathBuf = labelled_recording_as(
        "resume-model",
        2211,
        240.0,
        3,
        Preset::Realistic,
        (640, 360),
    );
    let whole = rec.join("whole");
    let o = analyze(&rec, &whole).output().unwrap();
    assert_exit_0(&o);
    let decisions = String::from_utf8_lossy(&read(&whole.join("decisions.jsonl"))).to_string();
    assert_eq!(decisions.lines().count(), 4, "three rulings and the result");
    let events = String::from_utf8_lossy(&read(&whole.join("events.jsonl"))).to_string();
    assert!(
        events.contains("\"touch\""),
        "the hands were seen touching: {events}"
    );

    // Killed once its second ruling is checkpointed: the hands are in mid-match then.
    let cut = rec.join("cut");
    let mut child = analyze(&rec, &cut).spawn().unwrap();
    let killed = kill_when(
        &mut child,
        || ruled(&cut).is_some_and(|n| n >= 2),
        Duration::from_secs(600),
    );
    assert!(
        killed,
        "the run ended before its second checkpoint was seen"
    );
    assert!(!cut.join("decisions.jsonl").exists());

    let o = analyze(&rec, &cut).arg("--resume").output().unwrap();
    assert_exit_0(&o);
    for f in ["decisions.jsonl", "events.jsonl", "layout.json"] {
        assert_eq!(
            String::from_utf8_lossy(&read(&whole.join(f))),
            String::from_utf8_lossy(&read(&cut.join(f))),
            "{f} differs after --resume"
        );
    }
    let _ = std::fs::remove_dir_all(&rec);
}

//! The sound stage end to end: a short black video dubbed with the reader's voice at a
//! real reader's pace, then the timeline heard back from the sound track alone and
//! compared with the truth; a video without sound and a silent one refused with exit 2.

mod support;

use karuta_referee::audio::{self, timeline::tournament_timeline, DubOptions, NoiseLevel};
use std::path::{Path, PathBuf};
use std::process::Command;
use support::assert_exit_0;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_karuta-referee"))
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("karuta-audio-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A small black video of `secs` seconds, with a silent sound track when `silent`.
fn black_video(path: &Path, secs: f64, silent: bool) {
    let mut c = Command::new("ffmpeg");
    c.args(["-nostdin", "-y", "-v", "error", "-f", "lavfi", "-i"])
        .arg(format!("color=c=black:s=160x90:r=10:d={secs}"));
    if silent {
        c.args(["-f", "lavfi", "-i"])
            .arg("anullsrc=r=48000:cl=mono")
            .args(["-t", &secs.to_string(), "-c:a", "aac"]);
    }
    let ok = c
        .args(["-c:v", "libx264", "-pix_fmt", "yuv420p"])
        .arg(path)
        .status()
        .unwrap();
    assert!(ok.success());
}

fn cache() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/audio-cache")
}

#[test]
fn heard_timeline_matches_the_spoken_one() {
    let dir = scratch("heard");
    let readings = tournament_timeline(4242, 3, 0.8);
    let end = readings.last().unwrap().shimo_start_s.unwrap() + 5.0;
    black_video(&dir.join("silent.mp4"), end, false);
    let opts = DubOptions {
        voice: "espeak-held".into(),
        noise: NoiseLevel::Moderate,
        seed: 7,
        cache_dir: cache(),
    };
    let video = dir.join("video.mp4");
    let truth = audio::dub_video(&dir.join("silent.mp4"), &readings, &opts, &video).unwrap();
    let heard = audio::readings_from_video(&video).unwrap();
    let s = audio::score::score(&truth.spoken, &heard);
    assert_eq!((s.missed, s.invented), (0, 0), "{heard:#?}");
    for r in &s.readings {
        let e = r.kami_start_err_s.unwrap();
        assert!(e.abs() <= 0.03, "reading {}: start off by {e:.3} s", r.seq);
        assert_eq!(r.heard_poem, Some(r.poem), "reading {}", r.seq);
        assert!(r.kimariji_hit, "reading {}: {:?}", r.seq, r.kimariji_err_s);
    }
    let median = s.onset_median_err_s.unwrap();
    assert!(median <= 0.02, "kana onsets: median error {median:.3} s");
}

#[test]
fn no_sound_track_or_silence_is_one_line_and_exit_2() {
    for (name, silent) in [("mute", false), ("silent", true)] {
        let dir = scratch(name);
        black_video(&dir.join("video.mp4"), 3.0, silent);
        let o = bin().arg("readings").arg(&dir).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("video.mp4") && err.contains("sound"), "{err}");
        // analyze without readings.jsonl falls back on the sound, and says what it needs.
        let o = bin()
            .arg("analyze")
            .arg(&dir)
            .arg("--out")
            .arg(dir.join("out"))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(
            err.contains("readings.jsonl") && err.contains("sound track"),
            "{err}"
        );
    }
}

/// Remakes src/audio/kana_templates.json from the tuning voices (needs espeak-ng).
#[test]
#[ignore]
fn make_kana_templates() {
    let file = audio::templates::build(&cache()).unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/audio/kana_templates.json");
    std::fs::write(path, serde_json::to_string(&file).unwrap()).unwrap();
}

/// A verse that ran on into its own short shimo-no-ku leaves the next reading's opening
/// where a shimo-no-ku is looked for, and `espeak-held` draws that reading's first kana
/// out with a moving spectrum, so it does not plainly open held; its sound names its poem,
/// so it is heard. Simulator seed 205: reading 9 (poem 54) runs into its shimo-no-ku, and
/// reading 10 (poem 83) went unheard.
#[test]
fn a_reading_opening_where_a_shimo_no_ku_may_stand_is_heard_when_it_names_a_poem() {
    let dir = scratch("shimo-place");
    let rec = dir.join("rec");
    let dubbed = dir.join("dubbed");
    let sim = bin()
        .args([
            "simulate",
            "--seed",
            "205",
            "--preset",
            "realistic",
            "--size",
            "320x180",
        ])
        .args(["--fps", "30", "--readings", "10", "--out"])
        .arg(&rec)
        .output()
        .unwrap();
    assert_exit_0(&sim);
    let dub = bin()
        .arg("dub")
        .arg(&rec)
        .arg("--out")
        .arg(&dubbed)
        .args([
            "--voice",
            "espeak-held",
            "--noise",
            "quiet",
            "--seed",
            "205",
            "--cache",
        ])
        .arg(cache())
        .output()
        .unwrap();
    assert_exit_0(&dub);
    let heard = audio::readings_from_video(&dubbed.join("video.mp4")).unwrap();
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dubbed.join("sound_truth.json")).unwrap())
            .unwrap();
    let spoken: Vec<audio::reader::Spoken> =
        serde_json::from_value(truth["spoken"].clone()).unwrap();
    let s = audio::score::score(&spoken, &heard);
    assert_eq!((s.missed, s.invented), (0, 0), "{heard:#?}");
    let last = s.readings.last().unwrap();
    assert_eq!((last.seq, last.heard_poem), (10, Some(83)), "{last:?}");
}

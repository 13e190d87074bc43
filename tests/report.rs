//! Proofs for the review page (issue 18): a small simulated match (640x360, 60 fps, 3
//! readings) is refereed from its truth, its page is written by the `report` command and
//! rendered in headless Chromium; the DOM must hold every ruling's reason, every plot and
//! every evidence strip; with the network pointed nowhere no request may fail; a player
//! named `<script>alert(1)</script>` must come out as text. `review` prints a ruling
//! with the paths of its clip and strip.

use karuta_referee::report::{self, page::esc};
use karuta_referee::sim::{self, Preset, SimOptions};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const EVIL_NAME: &str = "<script>alert(1)</script>";
const EVIL_WHAT: &str = "<b>A's hand</b> & \"B\"";

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_karuta-referee"))
}

struct Made {
    rec: PathBuf,
    out: PathBuf,
}

/// The recording and its report, made once for all tests.
fn made() -> &'static Made {
    static M: OnceLock<Made> = OnceLock::new();
    M.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target").join("report-tests");
        let _ = std::fs::remove_dir_all(&root);
        let rec = root.join("rec");
        let opts = SimOptions {
            seed: 4218,
            fps: 60.0,
            width_px: 640,
            height_px: 360,
            readings: 3,
            preset: Preset::Realistic,
            labels: true,
            ..SimOptions::default()
        };
        sim::simulate(&opts, &rec, false).expect("simulate");
        // The same layout with a hostile name for player A (names do not change rulings).
        let mut layout: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(rec.join("layout.json")).unwrap()).unwrap();
        layout["players"]["A"]["name"] = EVIL_NAME.into();
        let evil = root.join("layout-evil.json");
        std::fs::write(&evil, serde_json::to_string(&layout).unwrap()).unwrap();
        // The camera lost sight of something during reading 2: that ruling needs review,
        // and its reason carries markup from the input.
        let readings: Vec<serde_json::Value> = std::fs::read_to_string(rec.join("readings.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let from_s = readings[1]["kami_start_s"].as_f64().unwrap() + 0.5;
        let mut events: Vec<serde_json::Value> = std::fs::read_to_string(rec.join("truth.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        events.push(serde_json::json!({"t_s": from_s, "kind": "unseen", "from_s": from_s, "to_s": from_s + 0.1, "what": EVIL_WHAT}));
        events.sort_by(|a, b| a["t_s"].as_f64().unwrap().total_cmp(&b["t_s"].as_f64().unwrap()));
        let events_path = root.join("events.jsonl");
        std::fs::write(&events_path, events.iter().map(|e| format!("{e}\n")).collect::<String>()).unwrap();
        let o = bin()
            .arg("adjudicate")
            .arg("--layout")
            .arg(&evil)
            .arg("--readings")
            .arg(rec.join("readings.jsonl"))
            .arg("--events")
            .arg(&events_path)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::write(root.join("decisions.jsonl"), &o.stdout).unwrap();
        let out = root.join("out");
        let o = bin()
            .arg("report")
            .arg("--dir")
            .arg(&rec)
            .arg("--layout")
            .arg(&evil)
            .arg("--events")
            .arg(&events_path)
            .arg("--decisions")
            .arg(root.join("decisions.jsonl"))
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "report failed: {}", String::from_utf8_lossy(&o.stderr));
        Made { rec, out }
    })
}

/// The rulings the page was made from (`adjudicate` on the truth plus the unseen event).
fn rulings(rec: &Path) -> Vec<karuta_referee::rules::Ruling> {
    let text = std::fs::read_to_string(rec.parent().unwrap().join("decisions.jsonl")).unwrap();
    report::parse_decisions("decisions.jsonl", &text).unwrap().0
}

/// Headless Chromium with the network pointed at a closed port; returns (DOM, log).
fn chromium(page: &Path) -> (String, String) {
    static RUN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUN.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let profile =
        std::env::temp_dir().join(format!("karuta-report-chromium-{}-{n}", std::process::id()));
    let o = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            "--proxy-server=127.0.0.1:9",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=3000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs (Debian package `chromium`)");
    let _ = std::fs::remove_dir_all(&profile);
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Text as Chromium serialises it in the DOM (`&`, `<`, `>` escaped; quotes not).
fn as_dom_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[test]
fn page_in_chromium_holds_every_reason_plot_and_strip() {
    let m = made();
    let rs = rulings(&m.rec);
    assert_eq!(rs.len(), 3);
    let (dom, log) = chromium(&m.out.join("report.html"));
    assert!(dom.contains("</html>"), "no DOM from chromium: {log}");
    for r in &rs {
        assert!(
            dom.contains(&as_dom_text(&r.why)),
            "reason of reading {} missing",
            r.seq
        );
        assert!(dom.contains(&format!(r#"id="ruling-{}""#, r.seq)));
        assert!(
            dom.contains(&format!(
                r#"class="strip evidence-strip" data-seq="{}""#,
                r.seq
            )),
            "strip of reading {} missing",
            r.seq
        );
        if let Some(n) = &r.needs_review {
            assert!(
                dom.contains(&as_dom_text(&n.reason)),
                "review reason of reading {} missing",
                r.seq
            );
        }
    }
    // Reading 2 is flagged, listed first under "To review", with the input's markup as text.
    assert!(
        rs[1].needs_review.is_some(),
        "the unseen interval did not flag reading 2"
    );
    assert!(dom.contains(r##"<a href="#ruling-2">Reading 2"##));
    assert!(dom.contains(&as_dom_text(EVIL_WHAT)) && !dom.contains("<b>A's hand</b>"));
    for id in [
        "plot-timeline",
        "plot-card-count",
        "plot-reaction-card",
        "plot-reaction-length",
        "plot-territory",
        "plot-fouls",
    ] {
        assert!(
            dom.contains(&format!(r#"<svg id="{id}""#)),
            "plot {id} missing"
        );
    }
    // The stepper ran: each clip shows its frame counter.
    assert_eq!(
        dom.matches("ms from kimari-ji</span>").count(),
        rs.len(),
        "clip steppers did not start"
    );
    // The hostile name is text, never markup.
    assert!(dom.contains(&as_dom_text(EVIL_NAME)));
    assert!(!dom.contains(EVIL_NAME));
}

#[test]
fn page_loads_offline_with_no_failed_request() {
    let m = made();
    let html = std::fs::read_to_string(m.out.join("report.html")).unwrap();
    assert!(
        !html.contains("http://") && !html.contains("https://") && !html.contains("//cdn"),
        "the page refers to the network"
    );
    // Every local file the page refers to exists.
    let mut refs = 0;
    for part in html.split("src=\"").skip(1) {
        let src = part.split('"').next().unwrap();
        assert!(m.out.join(src).is_file(), "missing {src}");
        refs += 1;
    }
    for part in html.split("data-frames=\"").skip(1) {
        let json = part.split('"').next().unwrap().replace("&quot;", "\"");
        let frames: Vec<(String, u64, f64)> = serde_json::from_str(&json).unwrap();
        assert!(frames.len() >= 20, "clip too short: {}", frames.len());
        for f in frames {
            assert!(m.out.join(&f.0).is_file(), "missing clip frame {}", f.0);
            refs += 1;
        }
    }
    assert!(refs > 3 * 20);
    let (dom, log) = chromium(&m.out.join("report.html"));
    assert!(dom.contains("</html>"));
    // The page's own check: every image loaded (strips and the clips' current frames).
    let imgs = html.matches("<img ").count();
    assert_eq!(imgs, 6, "3 strips and 3 clips");
    assert!(
        dom.contains(&format!(r#"data-images="{imgs}/{imgs}""#)),
        "not every image loaded"
    );
    let problems: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("ERR_PROXY") || l.contains("net::"))
        .collect();
    assert!(problems.is_empty(), "chromium reported: {problems:?}");
}

#[test]
fn offline_check_catches_a_missing_file() {
    // The check above must be able to fail: the same page with one strip removed.
    let m = made();
    let copy = m.out.parent().unwrap().join("out-missing");
    let _ = std::fs::remove_dir_all(&copy);
    let o = Command::new("cp")
        .arg("-r")
        .arg(&m.out)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(o.success());
    std::fs::remove_file(copy.join("evidence/seq-002/strip.jpg")).unwrap();
    let (dom, log) = chromium(&copy.join("report.html"));
    assert!(
        dom.contains(r#"data-images="5/6""#),
        "the missing strip went unnoticed"
    );
    assert!(dom.contains("Evidence file missing: evidence/seq-002/strip.jpg"));
    assert!(
        log.contains("failed to load evidence/seq-002/strip.jpg"),
        "{log}"
    );
}

#[test]
fn evidence_strip_and_clip_frames_are_written() {
    let m = made();
    let data: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(m.out.join("review.json")).unwrap()).unwrap();
    let ev = data["evidence"].as_array().unwrap();
    assert_eq!(ev.len(), 3);
    for e in ev {
        let strip = m.out.join(e["strip"].as_str().unwrap());
        let img = opencv::imgcodecs::imread(&strip, opencv::imgcodecs::IMREAD_COLOR).unwrap();
        use opencv::prelude::*;
        // 11 tiles of 200 px with 4 px between them (fewer only at the recording's ends).
        assert_eq!(img.rows(), 200);
        assert!(img.cols() >= 200 * 9, "strip {} px wide", img.cols());
        let strip_frames = e["strip_frames"].as_array().unwrap();
        let d = e["deciding_frame"].as_u64().unwrap();
        let first = strip_frames[0][0].as_u64().unwrap();
        let last = strip_frames[strip_frames.len() - 1][0].as_u64().unwrap();
        assert!(first + 10 >= d && first <= d && last >= d && last <= d + 10);
    }
}

#[test]
fn review_prints_the_ruling_and_its_paths() {
    let m = made();
    let rs = rulings(&m.rec);
    let o = bin()
        .arg("review")
        .arg(&m.out)
        .args(["--seq", "2"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(&rs[1].why));
    assert!(text.contains("Strip: ") && text.contains("strip.jpg"));
    assert!(text.contains("Clip: ") && text.contains("seq-002"));
    let o = bin()
        .arg("review")
        .arg(&m.out)
        .args(["--seq", "9"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--seq") && err.contains("1..3"));
}

#[test]
fn bad_decisions_name_the_file_and_line() {
    let m = made();
    let bad = m.out.parent().unwrap().join("bad_decisions.jsonl");
    std::fs::write(&bad, "{\"kind\": \"reading\", \"seq\": 1}\n").unwrap();
    let o = bin()
        .arg("report")
        .arg("--dir")
        .arg(&m.rec)
        .arg("--decisions")
        .arg(&bad)
        .arg("--no-video")
        .arg("--out")
        .arg(m.out.parent().unwrap().join("bad-out"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad_decisions.jsonl: line 1: not a ruling"),
        "{err}"
    );
}

#[test]
fn escaping_covers_every_input_string() {
    assert_eq!(esc(EVIL_NAME), "&lt;script&gt;alert(1)&lt;/script&gt;");
}

#[test]
fn annotated_video_has_every_frame_with_the_overlay() {
    use opencv::prelude::*;
    use opencv::videoio::{self, VideoCapture};
    let m = made();
    let out = m.out.parent().unwrap().join("out-annotated");
    let o = bin()
        .arg("report")
        .arg("--dir")
        .arg(&m.rec)
        .arg("--out")
        .arg(&out)
        .arg("--annotate")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let open = |p: &Path| VideoCapture::from_file(p, videoio::CAP_FFMPEG).unwrap();
    let mut src = open(&m.rec.join("video.mp4"));
    let mut ann = open(&out.join("annotated.mp4"));
    let count = |c: &VideoCapture| c.get(videoio::CAP_PROP_FRAME_COUNT).unwrap() as u64;
    assert_eq!(count(&ann), count(&src));
    assert_eq!(
        ann.get(videoio::CAP_PROP_FPS).unwrap(),
        src.get(videoio::CAP_PROP_FPS).unwrap()
    );
    let (mut a, mut b) = (opencv::core::Mat::default(), opencv::core::Mat::default());
    assert!(src.read(&mut a).unwrap() && ann.read(&mut b).unwrap());
    assert_eq!(a.size().unwrap(), b.size().unwrap());
    let mut d = opencv::core::Mat::default();
    opencv::core::absdiff(&a, &b, &mut d).unwrap();
    let mean = opencv::core::mean(&d, &opencv::core::no_array()).unwrap();
    assert!(mean[0] + mean[1] + mean[2] > 1.0, "nothing drawn: {mean:?}");
}

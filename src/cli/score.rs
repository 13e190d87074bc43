//! `score --truth DIR --out OUT`: an analysis (`OUT/decisions.jsonl`, `OUT/events.jsonl`)
//! against a simulated recording's truth (`DIR/truth_decisions.jsonl`, `DIR/truth.jsonl`),
//! as JSON: rulings right (take winner and how, fouls by player and kind), takes decided
//! by less than 20 ms, `out` times within one frame, false fouls per 100 readings, and the
//! needs-review rate. Writes `OUT/score.json` and prints it.

use crate::capture::{find_video, load_frame_times, VideoReader};
use crate::cli::{capture_error, read_text};
use crate::rules::model::{Event, EventKind, FoulKind, Player, Ruling, TakeHow};
use crate::rules::InputError;
use anyhow::{Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// A take decided by less than this margin is a close one (issue 17's proof), ms.
pub const CLOSE_TAKE_MS: f64 = 20.0;

/// The score of one analysed recording.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Score {
    pub readings: usize,
    pub rulings_right: usize,
    pub take_right: usize,
    pub fouls_right: usize,
    pub close_takes: usize,
    pub close_takes_right: usize,
    pub needs_review: usize,
    /// Rulings right among those not flagged for review, and how many those are.
    pub unflagged: usize,
    pub unflagged_right: usize,
    pub false_fouls: usize,
    pub missed_fouls: usize,
    pub outs_true: usize,
    pub outs_found: usize,
    pub outs_within_one_frame: usize,
    pub out_error_ms: Vec<f64>,
    pub fps: f64,
    /// Readings ruled wrongly: seq, what the truth says, what the analysis says.
    pub wrong: Vec<String>,
}

fn load_lines<T: serde::de::DeserializeOwned>(
    path: &Path,
    kind_filter: Option<&str>,
) -> Result<Vec<T>> {
    let text = read_text(path)?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| {
            InputError::new(
                &path.display().to_string(),
                format!("line {}", i + 1),
                e.to_string(),
            )
        })?;
        if let Some(k) = kind_filter {
            if v.get("kind").and_then(|k| k.as_str()) != Some(k) {
                continue;
            }
        }
        out.push(serde_json::from_value(v).map_err(|e| {
            InputError::new(
                &path.display().to_string(),
                format!("line {}", i + 1),
                e.to_string(),
            )
        })?);
    }
    Ok(out)
}

fn fouls_of(r: &Ruling) -> Vec<(Player, FoulKind)> {
    let mut v: Vec<(Player, FoulKind)> = r
        .fouls
        .iter()
        .filter(|f| !f.cancelled)
        .map(|f| (f.player, f.kind))
        .collect();
    v.sort_by_key(|(p, k)| (*p, format!("{k:?}")));
    v
}

fn take_of(r: &Ruling) -> Option<(Player, TakeHow)> {
    r.take.as_ref().map(|t| (t.player, t.how))
}

/// The recording's frame rate: from its frame-time table (`frames.csv`, read by
/// `capture`), else from its video's container (a recording re-encoded, as a phone
/// records, has no table). With neither, an error: without a frame's length, no `out`
/// could be counted within one frame.
fn fps_of(dir: &Path) -> Result<f64> {
    let csv = dir.join("frames.csv");
    if csv.is_file() {
        let times = load_frame_times(&csv).map_err(capture_error)?;
        if let (Some(a), Some(b)) = (times.get(0), times.get(1)) {
            if b > a {
                return Ok(1.0 / (b - a));
            }
        }
    }
    let video = find_video(dir).map_err(|_| {
        InputError::new(
            &dir.display().to_string(),
            "frames.csv",
            "no frame times and no video to take the frame rate from",
        )
    })?;
    Ok(VideoReader::open(&video).map_err(capture_error)?.fps)
}

/// Scores the analysis in `out_dir` against the truth in `truth_dir`.
pub fn score_dirs(truth_dir: &Path, out_dir: &Path) -> Result<Score> {
    let truth: Vec<Ruling> = load_lines(&truth_dir.join("truth_decisions.jsonl"), Some("reading"))?;
    let ours: Vec<Ruling> = load_lines(&out_dir.join("decisions.jsonl"), Some("reading"))?;
    let truth_events: Vec<Event> = load_lines(&truth_dir.join("truth.jsonl"), None)?;
    let our_events: Vec<Event> = load_lines(&out_dir.join("events.jsonl"), None)?;
    let ours_by_seq: BTreeMap<u32, &Ruling> = ours.iter().map(|r| (r.seq, r)).collect();
    let mut s = Score {
        fps: fps_of(truth_dir)?,
        ..Score::default()
    };
    for t in &truth {
        s.readings += 1;
        let Some(o) = ours_by_seq.get(&t.seq) else {
            s.wrong.push(format!("seq {}: not ruled", t.seq));
            continue;
        };
        let take_ok = take_of(t) == take_of(o);
        let (tf, of) = (fouls_of(t), fouls_of(o));
        let fouls_ok = tf == of;
        let mut remaining = tf.clone();
        for f in &of {
            match remaining.iter().position(|x| x == f) {
                Some(i) => {
                    remaining.remove(i);
                }
                None => s.false_fouls += 1,
            }
        }
        s.missed_fouls += remaining.len();
        s.take_right += take_ok as usize;
        s.fouls_right += fouls_ok as usize;
        let right = take_ok && fouls_ok;
        s.rulings_right += right as usize;
        if o.needs_review.is_some() {
            s.needs_review += 1;
        } else {
            s.unflagged += 1;
            s.unflagged_right += right as usize;
        }
        if let Some(tt) = &t.take {
            if tt.margin_ms.is_some_and(|m| m.abs() < CLOSE_TAKE_MS) {
                s.close_takes += 1;
                s.close_takes_right += take_ok as usize;
            }
        }
        if !right {
            s.wrong.push(format!(
                "seq {}: truth take {:?} fouls {:?}; analysis take {:?} fouls {:?}{}",
                t.seq,
                take_of(t),
                tf,
                take_of(o),
                of,
                o.needs_review
                    .as_ref()
                    .map_or(String::new(), |r| format!(" (review: {})", r.reason))
            ));
        }
    }
    // Every true `out` against the analysis's `out` of the same card.
    let frame_s = if s.fps > 0.0 { 1.0 / s.fps } else { 0.0 };
    for e in &truth_events {
        let EventKind::Out { poem, .. } = e.what else {
            continue;
        };
        s.outs_true += 1;
        let found = our_events
            .iter()
            .filter(|o| matches!(o.what, EventKind::Out { poem: p, .. } if p == poem))
            .map(|o| o.t_s - e.t_s)
            .min_by(|a, b| a.abs().total_cmp(&b.abs()));
        if let Some(dt) = found {
            s.outs_found += 1;
            s.out_error_ms.push((dt * 1e4).round() / 10.0);
            if dt.abs() <= frame_s {
                s.outs_within_one_frame += 1;
            }
        }
    }
    Ok(s)
}

fn pct(a: usize, b: usize) -> Option<f64> {
    (b > 0).then(|| (1000.0 * a as f64 / b as f64).round() / 10.0)
}

/// The score with its rates, as written.
pub fn score_json(s: &Score) -> serde_json::Value {
    serde_json::json!({
        "readings": s.readings,
        "rulings_right_pct": pct(s.rulings_right, s.readings),
        "take_right_pct": pct(s.take_right, s.readings),
        "fouls_right_pct": pct(s.fouls_right, s.readings),
        "close_takes": s.close_takes,
        "close_takes_right_pct": pct(s.close_takes_right, s.close_takes),
        "needs_review_pct": pct(s.needs_review, s.readings),
        "unflagged_right_pct": pct(s.unflagged_right, s.unflagged),
        "false_fouls_per_100": if s.readings > 0 { Some((1000.0 * s.false_fouls as f64 / s.readings as f64).round() / 10.0) } else { None },
        "missed_fouls": s.missed_fouls,
        "outs_true": s.outs_true,
        "outs_found": s.outs_found,
        "outs_within_one_frame_pct": pct(s.outs_within_one_frame, s.outs_true),
        "counts": s,
    })
}

/// `score --truth DIR --out OUT`.
pub fn score(truth_dir: &Path, out_dir: &Path, out: &mut dyn Write) -> Result<()> {
    let s = score_dirs(truth_dir, out_dir)?;
    let v = score_json(&s);
    let text = serde_json::to_string_pretty(&v).context("encoding the score")?;
    std::fs::write(out_dir.join("score.json"), format!("{text}\n"))
        .with_context(|| format!("writing {}", out_dir.join("score.json").display()))?;
    writeln!(out, "{text}")?;
    Ok(())
}

fn take_text(r: &Ruling) -> String {
    match &r.take {
        Some(t) => format!(
            "{} {}",
            t.player,
            match t.how {
                TakeHow::Direct => "direct",
                TakeHow::PushOut => "push-out",
                TakeHow::Simultaneous => "simultaneous",
                TakeHow::Awarded => "awarded",
            }
        ),
        None => "-".into(),
    }
}

fn fouls_text(r: &Ruling) -> String {
    let f = fouls_of(r);
    if f.is_empty() {
        return "-".into();
    }
    f.iter()
        .map(|(p, k)| {
            format!(
                "{p} {}",
                serde_json::to_value(k)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `score --table`: each reading's ruling beside the truth, then the score, for people.
pub fn table(truth_dir: &Path, out_dir: &Path, out: &mut dyn Write) -> Result<()> {
    let truth: Vec<Ruling> = load_lines(&truth_dir.join("truth_decisions.jsonl"), Some("reading"))?;
    let ours: Vec<Ruling> = load_lines(&out_dir.join("decisions.jsonl"), Some("reading"))?;
    let s = score_dirs(truth_dir, out_dir)?;
    writeln!(
        out,
        "{:>3} {:>4}  {:<18} {:<18} {:<22} {:<22} {:<3} review",
        "seq", "poem", "take (truth)", "take (video)", "fouls (truth)", "fouls (video)", "ok"
    )?;
    for t in &truth {
        let o = ours.iter().find(|r| r.seq == t.seq);
        let (ot, of, ok, rev) = match o {
            Some(o) => (
                take_text(o),
                fouls_text(o),
                take_of(o) == take_of(t) && fouls_of(o) == fouls_of(t),
                o.needs_review
                    .as_ref()
                    .map_or(String::new(), |r| r.reason.clone()),
            ),
            None => ("(not ruled)".into(), String::new(), false, String::new()),
        };
        writeln!(
            out,
            "{:>3} {:>4}  {:<18} {:<18} {:<22} {:<22} {:<3} {}",
            t.seq,
            t.poem,
            take_text(t),
            ot,
            fouls_text(t),
            of,
            if ok { "yes" } else { "NO" },
            rev
        )?;
    }
    let v = score_json(&s);
    writeln!(
        out,
        "rulings right {}/{}; needs review {}; false fouls {}; out within one frame {}/{} (found {})",
        s.rulings_right, s.readings, s.needs_review, s.false_fouls, s.outs_within_one_frame, s.outs_true, s.outs_found
    )?;
    let _ = v;
    Ok(())
}

//! The review page: `OUT/report.html` (one static page that opens from disk), the
//! evidence of every ruling (a strip of frames and a slow-motion clip, zoomed on the card
//! with the field, cards and hands drawn), post-match analytics, `OUT/review.json` for
//! `review OUT --seq N`, and on request an annotated video of the whole match.
//!
//! Reads the contract's data (layout, readings, events, rulings, result), the video,
//! `calibration.json` and, when present, hand observations. It never judges: every
//! verdict shown is a `rules::Ruling` as given. Entry point: `write_report`.

pub mod annotate;
pub mod draw;
pub mod error;
pub mod evidence;
pub mod facts;
pub mod frames;
pub mod hands;
pub mod page;
pub mod plots;

pub use error::ReportError;
pub use evidence::Evidence;

use crate::field::Calibration;
use crate::rules::model::{Layout, MatchResult, Player, Reading, Ruling};
use crate::rules::{Event, InputError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Everything the page is made from.
#[derive(Debug, Clone)]
pub struct ReportInput {
    /// Shown in the page's title (e.g. the recording's folder name).
    pub title: String,
    pub layout: Layout,
    pub readings: Vec<Reading>,
    /// Ordered by `t_s` (as `rules::parse::parse_events` checks).
    pub events: Vec<Event>,
    pub rulings: Vec<Ruling>,
    pub result: Option<MatchResult>,
    /// The recording's video; `None` makes a page without evidence frames.
    pub video: Option<PathBuf>,
    /// `calibration.json`: without it no field, card or poem is drawn on the frames.
    pub calibration: Option<Calibration>,
    /// Hand observations (`labels/frames.jsonl` or `hands.jsonl`), optional.
    pub hands: Option<PathBuf>,
    /// Also write `annotated.mp4`, the whole match annotated.
    pub annotate: bool,
}

/// What `write_report` wrote.
#[derive(Debug, Clone)]
pub struct ReportPaths {
    pub html: PathBuf,
    pub review_json: PathBuf,
    pub evidence: Vec<Evidence>,
    pub annotated: Option<PathBuf>,
    /// Wall time of each part, seconds (evidence, page, annotated video).
    pub timings_s: Vec<(&'static str, f64)>,
}

/// `OUT/review.json`: what `review OUT --seq N` prints, without re-reading the inputs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReviewData {
    pub players: BTreeMap<Player, String>,
    pub rulings: Vec<Ruling>,
    pub evidence: Vec<serde_json::Value>,
}

/// Writes `out/report.html`, `out/review.json` and `out/evidence/`, and with
/// `input.annotate` `out/annotated.mp4`.
pub fn write_report(out: &Path, input: &ReportInput) -> Result<ReportPaths, ReportError> {
    std::fs::create_dir_all(out).map_err(|e| ReportError::write(out, e))?;
    let mut timings_s = Vec::new();
    let t0 = Instant::now();
    let evidence = match &input.video {
        Some(v) => {
            let run = evidence::write_evidence(out, input, v)?;
            timings_s.push(("evidence", t0.elapsed().as_secs_f64()));
            timings_s.push(("of which decoding", run.decode_s));
            timings_s.push(("of which JPEG", run.jpeg_s));
            run.evidence
        }
        None => Vec::new(),
    };

    let t1 = Instant::now();
    let html = out.join("report.html");
    std::fs::write(&html, page::render(input, &evidence))
        .map_err(|e| ReportError::write(&html, e))?;
    let review = ReviewData {
        players: input
            .layout
            .players
            .iter()
            .map(|(p, i)| (*p, i.name.clone()))
            .collect(),
        rulings: input.rulings.clone(),
        evidence: evidence
            .iter()
            .filter_map(|e| serde_json::to_value(e).ok())
            .collect(),
    };
    let review_json = out.join("review.json");
    let text = serde_json::to_string_pretty(&review)
        .map_err(|e| ReportError::write(&review_json, std::io::Error::other(e)))?;
    std::fs::write(&review_json, text).map_err(|e| ReportError::write(&review_json, e))?;
    timings_s.push(("page", t1.elapsed().as_secs_f64()));

    let annotated = match (&input.video, input.annotate) {
        (Some(v), true) => {
            let t2 = Instant::now();
            let p = annotate::write_annotated(out, input, v)?;
            timings_s.push(("annotated video", t2.elapsed().as_secs_f64()));
            Some(p)
        }
        _ => None,
    };
    Ok(ReportPaths {
        html,
        review_json,
        evidence,
        annotated,
        timings_s,
    })
}

/// `decisions.jsonl` as `adjudicate` writes it: the rulings, then the `result` line.
pub fn parse_decisions(
    src: &str,
    text: &str,
) -> Result<(Vec<Ruling>, Option<MatchResult>), InputError> {
    let rows: Vec<(usize, serde_json::Value)> = crate::rules::parse::parse_jsonl(src, text)?;
    let mut rulings = Vec::new();
    let mut result = None;
    for (line, v) in rows {
        let place = format!("line {line}");
        match v.get("kind").and_then(|k| k.as_str()) {
            Some("reading") => {
                let r: Ruling = serde_json::from_value(v)
                    .map_err(|e| InputError::new(src, &place, format!("not a ruling: {e}")))?;
                if rulings.last().is_some_and(|p: &Ruling| p.seq >= r.seq) {
                    return Err(InputError::new(
                        src,
                        &place,
                        format!("ruling {} is out of order", r.seq),
                    ));
                }
                rulings.push(r);
            }
            Some("result") => {
                result = Some(serde_json::from_value(v).map_err(|e| {
                    InputError::new(src, &place, format!("not a result line: {e}"))
                })?);
            }
            Some(k) => {
                return Err(InputError::new(
                    src,
                    &place,
                    format!("unknown kind {k:?} (expected \"reading\" or \"result\")"),
                ))
            }
            None => return Err(InputError::new(src, &place, "no \"kind\" field")),
        }
    }
    Ok((rulings, result))
}

/// `review OUT --seq N`: the ruling in words, and where its clip and strip are.
pub fn review_text(out: &Path, seq: u32) -> Result<String, ReportError> {
    let path = out.join("review.json");
    let src = path.display().to_string();
    let text = std::fs::read_to_string(&path).map_err(|e| {
        InputError::new(
            &src,
            "file",
            format!("cannot be read ({e}); make the report first"),
        )
    })?;
    let data: ReviewData = serde_json::from_str(&text).map_err(|e| {
        InputError::new(
            &src,
            format!("line {}", e.line()),
            format!("not a review file: {e}"),
        )
    })?;
    let r = data.rulings.iter().find(|r| r.seq == seq).ok_or_else(|| {
        InputError::new(
            "--seq",
            seq.to_string(),
            format!(
                "no ruling for reading {seq} (the report holds readings {})",
                match (data.rulings.first(), data.rulings.last()) {
                    (Some(a), Some(b)) => format!("{}..{}", a.seq, b.seq),
                    _ => "none".into(),
                }
            ),
        )
    })?;
    let name = |p: Player| match data.players.get(&p).map(|s| s.trim()) {
        Some(n) if !n.is_empty() && n != format!("Player {p}") => format!("{p} ({n})"),
        _ => p.to_string(),
    };
    let mut s = String::new();
    use std::fmt::Write;
    let _ = writeln!(
        s,
        "Reading {}: poem {}, kimari-ji {} (complete at {:.3} s{})",
        r.seq,
        r.poem,
        r.kimariji,
        r.decided_s,
        if r.decided_estimated {
            ", estimated"
        } else {
            ""
        }
    );
    let _ = writeln!(
        s,
        "Card: {}",
        match (r.card.owner, r.card.in_play) {
            (Some(o), true) => format!("in {o}'s territory"),
            (Some(o), false) => format!("{o}'s, not in play"),
            (None, _) => "dead card".into(),
        }
    );
    match &r.take {
        Some(t) => {
            let _ = writeln!(
                s,
                "Take: {}, {} at {:.3} s ({:+.1} ms after the kimari-ji), margin {}",
                name(t.player),
                match t.how {
                    crate::rules::TakeHow::Direct => "direct touch (17-1)",
                    crate::rules::TakeHow::PushOut => "push-out (17-2)",
                    crate::rules::TakeHow::Simultaneous => "simultaneous, to the owner (18)",
                    crate::rules::TakeHow::Awarded => "awarded",
                },
                t.t_s,
                (t.t_s - r.decided_s) * 1000.0,
                t.margin_ms
                    .map_or("- (no rival touch to compare)".into(), |m| format!(
                        "{m:.1} ms"
                    ))
            );
        }
        None => s.push_str("Take: nobody\n"),
    }
    for f in &r.fouls {
        let _ = writeln!(
            s,
            "Foul: {} {} at {:.3} s{}{}",
            name(f.player),
            facts::foul_name(f.kind),
            f.t_s,
            if f.count > 1 {
                format!(" (x{})", f.count)
            } else {
                String::new()
            },
            if f.cancelled {
                ", cancelled (25-4)"
            } else {
                ""
            }
        );
    }
    let owed: Vec<String> = r
        .sends
        .owed
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(p, n)| format!("{p} sends {n}"))
        .collect();
    let _ = writeln!(
        s,
        "Sends: {}",
        if owed.is_empty() {
            "none".into()
        } else {
            owed.join(", ")
        }
    );
    let _ = writeln!(
        s,
        "Cards after: {}",
        r.cards_after
            .iter()
            .map(|(p, n)| format!("{p} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(s, "Articles: {}", r.articles.join(", "));
    let _ = writeln!(s, "Why: {}", r.why);
    let _ = writeln!(s, "Confidence: {:.0} %", r.confidence * 100.0);
    let _ = writeln!(
        s,
        "Needs review: {}",
        r.needs_review
            .as_ref()
            .map_or("no".into(), |n| format!("{} ({:?})", n.reason, n.what))
    );
    let ev = data
        .evidence
        .iter()
        .find(|e| e.get("seq").and_then(|v| v.as_u64()) == Some(seq as u64));
    match ev {
        Some(e) => {
            let get = |k: &str| e.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
            let frames = e
                .get("clip")
                .and_then(|c| c.as_array())
                .map_or(0, |a| a.len());
            let _ = writeln!(
                s,
                "Deciding moment: {} (frame {})",
                get("focus"),
                e.get("deciding_frame")
                    .and_then(|v| v.as_u64())
                    .unwrap_or(0)
            );
            let _ = writeln!(s, "Strip: {}", out.join(get("strip")).display());
            let _ = writeln!(
                s,
                "Clip: {} ({frames} frames)",
                out.join(get("clip_dir")).display()
            );
        }
        None => s.push_str("Strip: none (the report was made without video)\nClip: none\n"),
    }
    let _ = writeln!(
        s,
        "Page: {}#ruling-{}",
        out.join("report.html").display(),
        r.seq
    );
    Ok(s)
}

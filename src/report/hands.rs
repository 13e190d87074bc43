//! Hand observations to draw on the evidence: the simulator's `labels/frames.jsonl`, or
//! the hands stage's `hands.jsonl` with the same fields (`frame`, `t_s`, `hands[]` with
//! `player`, `hand`, `keypoints_px` or `fingertips`, `outline_px`, `touching` or
//! `contact`). Optional input: the page is made without it, only without hands drawn.
//!
//! Reads only the frames asked for, so a 50 MB label file costs a scan, not a parse.

use super::ReportError;
use crate::rules::model::{Hand, Player};
use crate::rules::InputError;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::BufRead;
use std::path::Path;

/// One hand in one frame, in raw image pixels.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct HandObs {
    pub player: Player,
    #[serde(default)]
    pub hand: Option<Hand>,
    #[serde(default, alias = "fingertips")]
    pub keypoints_px: BTreeMap<String, [f64; 2]>,
    #[serde(default)]
    pub outline_px: Vec<[f64; 2]>,
    /// The cards touched (a list of poems), or just whether it touches (`true`/`false`).
    #[serde(default, alias = "contact")]
    pub touching: serde_json::Value,
}

impl HandObs {
    pub fn touched_poems(&self) -> Vec<u8> {
        match &self.touching {
            serde_json::Value::Array(a) => a
                .iter()
                .filter_map(|v| v.as_u64().and_then(|n| u8::try_from(n).ok()))
                .collect(),
            _ => Vec::new(),
        }
    }
    pub fn is_touching(&self) -> bool {
        match &self.touching {
            serde_json::Value::Array(a) => !a.is_empty(),
            serde_json::Value::Bool(b) => *b,
            _ => false,
        }
    }
}

#[derive(Deserialize)]
struct FrameObs {
    frame: u64,
    #[serde(default)]
    hands: Vec<HandObs>,
}

/// The frame number of a line, read without parsing the rest (`{"frame": 812, ...`).
fn frame_of(line: &str) -> Option<u64> {
    let i = line.find("\"frame\"")? + 7;
    let rest = line[i..].trim_start().strip_prefix(':')?.trim_start();
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

fn parse_line(path: &Path, no: usize, line: &str) -> Result<FrameObs, ReportError> {
    serde_json::from_str(line).map_err(|e| {
        InputError::new(
            &path.display().to_string(),
            format!("line {no}"),
            format!("not a frame of hand observations: {e}"),
        )
        .into()
    })
}

fn open(path: &Path) -> Result<std::io::BufReader<std::fs::File>, ReportError> {
    std::fs::File::open(path)
        .map(std::io::BufReader::new)
        .map_err(|e| {
            InputError::new(
                &path.display().to_string(),
                "file",
                format!("cannot be read: {e}"),
            )
            .into()
        })
}

/// The hands of the frames in `wanted`.
pub fn read_frames(
    path: &Path,
    wanted: &BTreeSet<u64>,
) -> Result<HashMap<u64, Vec<HandObs>>, ReportError> {
    let mut out = HashMap::new();
    let Some(last) = wanted.last().copied() else {
        return Ok(out);
    };
    for (i, line) in open(path)?.lines().enumerate() {
        let line = line.map_err(|e| {
            InputError::new(
                &path.display().to_string(),
                format!("line {}", i + 1),
                e.to_string(),
            )
        })?;
        match frame_of(&line) {
            Some(f) if wanted.contains(&f) => {
                let obs = parse_line(path, i + 1, &line)?;
                out.insert(obs.frame, obs.hands);
            }
            Some(f) if f > last => break,
            _ => {}
        }
    }
    Ok(out)
}

/// Hands frame by frame, in order (the annotated video walks the whole match).
pub struct HandStream {
    path: std::path::PathBuf,
    lines: std::io::Lines<std::io::BufReader<std::fs::File>>,
    line_no: usize,
    pending: Option<FrameObs>,
}

impl HandStream {
    pub fn open(path: &Path) -> Result<Self, ReportError> {
        Ok(HandStream {
            path: path.to_path_buf(),
            lines: open(path)?.lines(),
            line_no: 0,
            pending: None,
        })
    }

    /// The hands of `frame` (empty when the file has no line for it).
    pub fn at(&mut self, frame: u64) -> Result<Vec<HandObs>, ReportError> {
        loop {
            if let Some(p) = &self.pending {
                if p.frame == frame {
                    return Ok(self.pending.take().map(|p| p.hands).unwrap_or_default());
                }
                if p.frame > frame {
                    return Ok(Vec::new());
                }
            }
            let Some(line) = self.lines.next() else {
                return Ok(Vec::new());
            };
            self.line_no += 1;
            let line = line.map_err(|e| {
                InputError::new(
                    &self.path.display().to_string(),
                    format!("line {}", self.line_no),
                    e.to_string(),
                )
            })?;
            if line.trim().is_empty() {
                continue;
            }
            if frame_of(&line).is_some_and(|f| f < frame) {
                continue;
            }
            self.pending = Some(parse_line(&self.path, self.line_no, &line)?);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_number_is_read_from_the_line_start() {
        assert_eq!(frame_of(r#"{"frame": 812, "t_s": 3.38}"#), Some(812));
        assert_eq!(frame_of(r#"{"t_s": 1.0,"frame":7}"#), Some(7));
        assert_eq!(frame_of(r#"{"t_s": 1.0}"#), None);
    }

    #[test]
    fn contact_may_be_a_list_or_a_flag() {
        let h: HandObs =
            serde_json::from_str(r#"{"player":"A","fingertips":{"index":[1,2]},"contact":true}"#)
                .unwrap();
        assert!(h.is_touching());
        assert_eq!(h.keypoints_px["index"], [1.0, 2.0]);
        let h: HandObs = serde_json::from_str(r#"{"player":"B","touching":[17]}"#).unwrap();
        assert_eq!(h.touched_poems(), vec![17]);
    }
}

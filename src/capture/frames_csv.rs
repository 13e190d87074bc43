//! `frames.csv` (contract section 3): `frame,t_s` per frame, the capture time of each
//! frame when the container's timestamps cannot be trusted.

use super::CaptureError;
use std::path::{Path, PathBuf};

/// Capture times by frame index.
#[derive(Debug, Clone)]
pub struct FrameTimes {
    path: PathBuf,
    t_s: Vec<f64>,
}

impl FrameTimes {
    pub fn get(&self, index: usize) -> Option<f64> {
        self.t_s.get(index).copied()
    }
    pub fn len(&self) -> usize {
        self.t_s.len()
    }
    pub fn is_empty(&self) -> bool {
        self.t_s.is_empty()
    }
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Reads `frames.csv`: a header line, then `frame,t_s` with frames 0, 1, 2... and times
/// that never go back.
pub fn load_frame_times(path: &Path) -> Result<FrameTimes, CaptureError> {
    let bad = |line: usize, problem: String| CaptureError::Input {
        path: path.to_path_buf(),
        place: format!("line {line}"),
        problem,
    };
    let text = std::fs::read_to_string(path).map_err(|e| CaptureError::Input {
        path: path.to_path_buf(),
        place: "file".into(),
        problem: format!("cannot be read: {e}"),
    })?;
    let mut t_s = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim();
        if line.is_empty() || (i == 0 && line.starts_with("frame")) {
            continue;
        }
        let mut parts = line.split(',');
        let (Some(f), Some(t)) = (parts.next(), parts.next()) else {
            return Err(bad(n, "expected `frame,t_s`".into()));
        };
        let f: usize = f
            .trim()
            .parse()
            .map_err(|_| bad(n, format!("frame `{f}` is not a whole number")))?;
        let t: f64 = t
            .trim()
            .parse()
            .map_err(|_| bad(n, format!("t_s `{t}` is not a number")))?;
        if f != t_s.len() {
            return Err(bad(
                n,
                format!("frame {f} where {} was expected", t_s.len()),
            ));
        }
        if !t.is_finite() || t_s.last().is_some_and(|p| t < *p) {
            return Err(bad(n, format!("t_s {t} goes back in time")));
        }
        t_s.push(t);
    }
    Ok(FrameTimes {
        path: path.to_path_buf(),
        t_s,
    })
}

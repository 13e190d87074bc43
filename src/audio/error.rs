//! The sound stage's errors: what an official can fix (a video without sound, a silent
//! track, a missing tool) apart from our own failures.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum AudioError {
    /// The recording cannot give a reading: no sound track, silence, no video.
    #[error("{}: {place}: {problem}", path.display())]
    Input {
        path: PathBuf,
        place: String,
        problem: String,
    },
    /// A tool the stage runs (ffmpeg, espeak-ng) is missing or failed.
    #[error("{tool}: {problem}")]
    Tool { tool: String, problem: String },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl AudioError {
    /// True for input an official can fix (exit status 2).
    pub fn is_bad_input(&self) -> bool {
        matches!(self, AudioError::Input { .. })
    }

    pub(crate) fn input(path: &std::path::Path, place: &str, problem: impl Into<String>) -> Self {
        AudioError::Input {
            path: path.to_path_buf(),
            place: place.to_string(),
            problem: problem.into(),
        }
    }

    pub(crate) fn tool(tool: &str, problem: impl Into<String>) -> Self {
        AudioError::Tool {
            tool: tool.to_string(),
            problem: problem.into(),
        }
    }

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        AudioError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

//! Hands from pixels: an ONNX model (run by tract) that sees each player's hands in the
//! frame, and the events a camera can state about them (`touch`, `enter`, `leave`).
//!
//! Reads decoded frames, `calibration.json` (to project a hand onto the tatami) and the
//! card positions (from `layout.json`, later from the card tracker). Looks down only at
//! `field` and `rules` types; it never judges: fouls and takes belong to `rules`.
//!
//! - `model`: loading the network, preparing a frame, reading its output maps.
//! - `contact`: the contact networks: is a fingertip pressing (two that must agree), and
//!   where it presses (the point network), from crops around it.
//! - `decode`: output maps -> hands (player, hand, outline, fingertips, contact point).
//! - `perceive`: the per-frame schedule (a reduced rate, refined where something changes)
//!   and the events with sub-frame times.
//! - `record`: the hands and events written as they are made (`hands.jsonl`,
//!   `events.jsonl`).
//! - `score`: hands and events compared with the simulator's labels and truth.

pub mod contact;
pub mod decode;
pub mod model;
pub mod perceive;
pub mod record;
pub mod score;

pub use decode::{HandFrame, HandObs};
pub use model::{Backend, HandModel, MODEL_IN_H_PX, MODEL_IN_W_PX};
pub use perceive::{
    PerceiveOptions, PerceiveStats, Perceiver, PerceiverState, ACTIVE_EVERY_S, HURRIED_STRETCH,
    IDLE_EVERY_S,
};
pub use record::HandsRecord;

use std::path::PathBuf;

/// The committed model, relative to the repository.
pub const DEFAULT_MODEL: &str = "models/hands.onnx";

/// What can go wrong while seeing hands.
#[derive(Debug, thiserror::Error)]
pub enum HandsError {
    /// The model file is missing, unreadable, not ONNX, or not the expected network.
    #[error("{path}: model: {problem}")]
    Model { path: PathBuf, problem: String },
    /// The network failed on an input it accepted; a failure of ours.
    #[error("inference: {0}")]
    Inference(String),
    /// An OpenCV call failed on data it accepted.
    #[error("opencv: {0}")]
    OpenCv(#[from] opencv::Error),
    /// The field mapping failed.
    #[error("field: {0}")]
    Field(#[from] crate::field::FieldError),
    /// A saved state (`analyze --resume`) that does not fit this run.
    #[error("saved hand state: {0}")]
    Restore(String),
}

impl HandsError {
    /// True when the input (not the program) is at fault.
    pub fn is_bad_input(&self) -> bool {
        matches!(self, HandsError::Model { .. })
    }
}

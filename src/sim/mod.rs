//! The match simulator: an overhead high-frame-rate video of a karuta match with its exact
//! ground truth, written as a recording directory (docs/contract.md section 3, docs/sim.md).
//!
//! Owns the scene (tatami, cards, players' hands, light, camera), the story of each reading
//! (who reaches where and when), the truth events derived from that physical story, the
//! rendering and the per-frame labels. Reads only the rules engine (poems, kimari-ji, field
//! geometry, `adjudicate`); it must not reach into perception or the field stage's
//! estimators: what it knows is the truth they are judged against.

pub mod body;
pub mod camera;
pub mod encode;
pub mod labels;
pub mod look;
pub mod render;
pub mod run;
pub mod sheet;
pub mod story;

pub use run::{simulate, SimError, SimOptions, SimSummary};

use serde::{Deserialize, Serialize};

/// How demanding the recording is for perception.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// Good light, short exposure, no occlusion, no shake.
    Clean,
    /// Hall light with flicker, some occlusion and blur.
    Realistic,
    /// Close calls, occlusion, long exposure, low light, camera shake.
    Hard,
}

impl std::fmt::Display for Preset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Preset::Clean => "clean",
            Preset::Realistic => "realistic",
            Preset::Hard => "hard",
        })
    }
}

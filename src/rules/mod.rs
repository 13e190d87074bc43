//! The rules engine: the 100 poems, kimari-ji, the field frame's geometry, the contract's
//! types, and the judge of articles 15-26.
//!
//! Pure: no OpenCV, no file or network I/O, no clock. Every other stage answers to it;
//! it depends on none of them.

pub mod engine;
pub mod geometry;
pub mod kimariji;
pub mod model;
pub mod parse;
pub mod poems;

pub use engine::{adjudicate, adjudicate_with, Referee};
pub use model::*;
pub use parse::InputError;

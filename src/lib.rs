//! karuta-referee: referees competitive karuta from an overhead high-frame-rate camera.
//!
//! Stages (see ARCHITECTURE.md): `rules` (the judge, pure), `sim` (the match simulator),
//! `field` (calibration and the field frame), `cli` (the commands).

pub mod audio;
pub mod capture;
pub mod cli;
pub mod detect;
pub mod field;
pub mod hands;
pub mod judge;
pub mod report;
pub mod rules;
pub mod sim;
pub mod track;
pub mod util;

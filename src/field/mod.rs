//! The field: camera calibration, the image-to-field mapping, registration of the field
//! frame from the cards or markers, drift correction and the layout check.
//!
//! Owns everything that turns pixels into field millimetres. Reads video frames and
//! `calibration.json`; writes `calibration.json` and `layout.json`. It does not judge:
//! rulings belong to `rules`.

pub mod calibration;

pub use calibration::{Calibration, CardQuad};

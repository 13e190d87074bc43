//! The field: camera calibration, the image-to-field mapping, registration of the field
//! frame from the cards or markers, drift correction and the layout check.
//!
//! Owns everything that turns pixels into field millimetres. Reads video frames and
//! `calibration.json`; writes `calibration.json` and `layout.json`. It does not judge:
//! rulings belong to `rules`, whose geometry answers every question once in millimetres.
//! See `docs/field.md`.

pub mod calibration;
pub mod charuco;
pub mod drift;
pub mod error;
pub mod layout;
pub mod map;
pub mod markers;
pub mod register;
pub mod synth;

pub use calibration::{Calibration, CardQuad};
pub use drift::{DriftEstimate, DriftTracker};
pub use error::FieldError;
pub use layout::{check_layout, measure_layout, LayoutCheck, LAYOUT_TOLERANCE_MM};
pub use map::{FieldMap, Intrinsics};
pub use markers::register_from_markers;
pub use register::{register_from_cards, CardPose, Registration};

//! Whether a hand presses a card: the contact network asked about the fingertips
//! nearest the cards (`press`), on crops of the field at its own scale, beside the frame
//! 25 ms before and the plate.
//!
//! Reads the frame, the hand's fingertips and the cards' places; emits nothing itself
//! (the change of contact becomes a `touch` in `events`).

use super::fingers::{tips_to_look_at, wrist_and_tips};
use super::{Perceiver, CONTACT_MIN_P, CONTACT_TIPS_MAX};
use crate::hands::contact::CropSource;
use crate::hands::decode::HandObs;
use crate::hands::HandsError;
use crate::rules::geometry::Pt;
use std::sync::Arc;

/// The contact network sees each fingertip beside the same square this long before, s
/// (6 frames at 240 fps): a fingertip coming down meets its shadow while the hand stays
/// where it is, a hovering one keeps its shadow beside it.
pub const CONTACT_BEFORE_S: f64 = 0.025;
/// Frame times are rounded: a frame this much later than `CONTACT_BEFORE_S` still counts.
const CONTACT_BEFORE_SLACK_S: f64 = 0.001;
/// A pressing fingertip (by the contact network) presses the card within this distance.
pub const CONTACT_CARD_RADIUS_MM: f64 = 14.0;

impl Perceiver {
    /// Contact by the contact network: the hand's fingertips near a card
    /// (`tips_to_look_at`) are looked at; the most likely pressing one gives
    /// the contact probability and point, and the card it presses. `outline` and `tips`
    /// are the hand's outline and fingertips in the field, as `place` projected them.
    pub(super) fn press(
        &mut self,
        h: &mut HandObs,
        outline: &[Pt],
        tips: &[Pt],
        src: &CropSource,
        before: &CropSource,
    ) -> Result<(), HandsError> {
        let (Some(net), Some(plate)) = (&self.contact, &self.plate) else {
            return Ok(());
        };
        h.contact_p = 0.0;
        h.contact_px = None;
        if tips.is_empty() {
            return Ok(());
        }
        let wrist = wrist_and_tips(outline, tips).map(|(w, _)| w);
        let near = tips_to_look_at(self.cards.iter().map(|(_, c)| c), wrist, tips);
        let frames = [src, before, plate.as_ref()];
        // (probability, fingertip, image pixels a millimetre there)
        let mut seen: Vec<(f64, usize, f64)> = Vec::with_capacity(CONTACT_TIPS_MAX);
        for &i in &near {
            let t0 = std::time::Instant::now();
            let scale = self.px_per_mm(tips[i])?;
            let p = net.press_p(frames, h.fingertips_px[i], scale, CONTACT_MIN_P)?;
            self.stats.contact_s += t0.elapsed().as_secs_f64();
            self.stats.contact_runs += 1;
            seen.push((p, i, scale));
        }
        let Some(&(p, best, best_scale)) = seen.iter().max_by(|a, b| a.0.total_cmp(&b.0)) else {
            return Ok(());
        };
        // The card pressed is under the pressing fingertip farthest from the wrist (the
        // first pressing one looked at): a hand comes down on its longest finger, and the
        // fingers beside it, lying flat at table height too, look as pressing as it does
        // but may lie over the next card.
        let (i, scale) = match wrist {
            Some(_) => seen
                .iter()
                .find(|(q, ..)| *q >= CONTACT_MIN_P)
                .map_or((best, best_scale), |&(_, i, s)| (i, s)),
            None => (best, best_scale),
        };
        h.contact_p = p;
        h.contact_px = Some(h.fingertips_px[i]);
        if p >= CONTACT_MIN_P {
            // Where it presses: the point network's place when there is one, else the
            // fingertip itself.
            let at = match net.press_point(frames, h.fingertips_px[i], scale)? {
                Some(px) => {
                    h.contact_px = Some(px);
                    self.map.point_to_field(px)?
                }
                None => tips[i],
            };
            h.contact = self.card_near(at, CONTACT_CARD_RADIUS_MM);
        }
        Ok(())
    }

    /// Image pixels a millimetre of the field at a point (the mean of the two axes).
    pub(super) fn px_per_mm(&self, at: Pt) -> Result<f64, HandsError> {
        let d = 10.0;
        let q = self.map.to_image(&[
            at,
            Pt {
                x_mm: at.x_mm + d,
                y_mm: at.y_mm,
            },
            Pt {
                x_mm: at.x_mm,
                y_mm: at.y_mm + d,
            },
        ])?;
        let len = |a: [f64; 2], b: [f64; 2]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt();
        Ok(0.5 * (len(q[0], q[1]) + len(q[0], q[2])) / d)
    }

    /// The contact crop's frame `CONTACT_BEFORE_S` before `t_s` (the newest at or before
    /// it, with `CONTACT_BEFORE_SLACK_S` of slack), or the oldest kept when none is that
    /// old.
    pub(super) fn crop_before(&self, t_s: f64) -> Option<Arc<CropSource>> {
        let at = t_s - CONTACT_BEFORE_S + CONTACT_BEFORE_SLACK_S;
        self.crops
            .iter()
            .rev()
            .find(|(_, t, _)| *t <= at)
            .or_else(|| self.crops.front().filter(|(_, t, _)| *t < t_s))
            .map(|(_, _, c)| Arc::clone(c))
    }
}

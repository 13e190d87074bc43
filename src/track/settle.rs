//! A card coming to rest: `place` where it lies, after a `send` when that is in the
//! other player's territory (26-1), or out of play when it lies in the gap or outside.
//!
//! Reads the card's last outline and the field's territories. It moves the card's place
//! in the motion monitor and the known paper, and never looks for cards (that is
//! `search`).

use super::blob;
use super::flight::Flight;
use super::out::{out_on_course, out_while_unseen};
use super::{centre_px, CardTracker, Phase, TrackError, SETTLE_FRAMES, TOUCH_BACK_MAX_FRAMES};
use crate::detect::QuadPx;
use crate::rules::geometry::Pt;
use crate::rules::model::{Event, EventKind};
use opencv::core::Mat;

impl CardTracker {
    /// A followed card has come to rest: `place` there, after a `send` when it now lies
    /// in the other player's territory (26-1: the sender let go of it).
    pub(super) fn settle(
        &mut self,
        i: usize,
        frame: usize,
        t_s: f64,
        bgr: &Mat,
        f: Flight,
        events: &mut Vec<Event>,
    ) -> Result<(), TrackError> {
        let pts = self.map.to_field(&f.last.outline_px)?;
        let Some(quad_px) = blob::card_quad_px(&f.last.outline_px) else {
            self.cards[i].phase = Phase::Missing {
                since_frame: frame,
                given_up: false,
                lost_at_px: None,
                left: None,
                rest_mm: None,
            };
            return Ok(());
        };
        let c = self.map.point_to_field(centre_px(&quad_px))?;
        let _ = pts;
        let t_rest = t_s - f64::from(SETTLE_FRAMES) / self.fps;
        let from = events.len();
        self.place(i, frame, t_rest, bgr, quad_px, c, f.angle_deg, events)?;
        // Set moving by the receiver's hand and settled in the receiver's territory: the
        // sender had let go of it there before that touch (26-1), and the receiver only
        // straightened a card sent to him.
        let mover = f.by.player();
        // Likewise a card the receiver's fingertip was on while it moved: it was sent
        // before that.
        let back_s = (TOUCH_BACK_MAX_FRAMES + 1.0) / self.fps;
        for e in &mut events[from..] {
            if let EventKind::Send { from, .. } = e.what {
                let receiver = from.other();
                if mover == Some(receiver) {
                    e.t_s = e.t_s.min(f.start_t_s - back_s);
                }
                if let Some(t) = f.first_on_s[receiver.index()] {
                    // Not before the sender set it moving.
                    e.t_s = e.t_s.min((t - back_s).max(f.start_t_s));
                }
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn place(
        &mut self,
        i: usize,
        _frame: usize,
        t_s: f64,
        bgr: &Mat,
        quad_px: QuadPx,
        c: Pt,
        angle_deg: f64,
        events: &mut Vec<Event>,
    ) -> Result<(), TrackError> {
        let Some(territory) = self.geometry.territory_of(c) else {
            // Settled in the gap or outside: no longer in a territory, not followed.
            self.blobs.rebase(&quad_px)?;
            self.cards[i].phase = if self.geometry.card_is_out(c.x_mm, c.y_mm, angle_deg) {
                if let (Phase::Missing { left: Some(l), .. }, Some(poem)) =
                    (&self.cards[i].phase, self.cards[i].poem)
                {
                    let course = l
                        .lost
                        .and_then(|lost| out_on_course(&self.geometry, &lost, c, angle_deg));
                    events.extend(out_while_unseen(poem, l, t_s, course));
                }
                Phase::Out
            } else {
                Phase::Missing {
                    since_frame: _frame,
                    given_up: true,
                    lost_at_px: None,
                    left: None,
                    rest_mm: None,
                }
            };
            return Ok(());
        };
        let card = &mut self.cards[i];
        if let Some(poem) = card.poem {
            if territory != card.owner {
                events.push(Event::new(
                    t_s,
                    EventKind::Send {
                        from: card.owner,
                        poem,
                    },
                ));
            }
            let row = self.geometry.row_of(territory, c.y_mm);
            events.push(Event::new(
                t_s,
                EventKind::Place {
                    poem,
                    owner: territory,
                    row,
                    x_mm: (c.x_mm * 10.0).round() / 10.0,
                    y_mm: (c.y_mm * 10.0).round() / 10.0,
                },
            ));
        }
        card.owner = territory;
        card.rest_px = quad_px;
        card.centre_mm = [c.x_mm, c.y_mm];
        card.angle_deg = angle_deg;
        card.phase = Phase::Resting;
        self.monitor.rebase(i, bgr, &quad_px)?;
        self.blobs.rebase(&quad_px)?;
        Ok(())
    }
}

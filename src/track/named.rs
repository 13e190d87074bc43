//! The paper in flight named: a card followed in flight is compared, while its whole
//! face shows, with its own face and its neighbours' as the layout image showed them,
//! and read by the namer when another's face is about as likely. A hand that presses
//! one card and pushes it into its row-mate sets the row-mate flying while the pressed
//! card barely moves, and the paper that flies may have been taken for the pressed
//! card's.
//!
//! Reads the frame and the layout's faces; changes which card a flight belongs to (and
//! ends one that followed paper already followed), never how a flight is followed (that
//! is `flight`).

use super::blob::{self, SeenBlob};
use super::flight::Flight;
use super::{centre_px, CardTracker, Phase, TrackError};
use crate::detect::naming::{rectify_face, MATCH_H_PX, MATCH_W_PX, SHIFT_PX};
use crate::detect::{cards, QuadPx};
use crate::rules::model::{Event, EventKind};
use opencv::core::{self, Mat, Rect};
use opencv::imgproc;
use opencv::prelude::*;

/// A card whose place lies within this many of a card's long sides of the flying card's
/// place may be the paper that flies: a row-mate it was pushed into, or the card behind.
pub const NAMED_NEIGHBOUR_SIDES: f64 = 1.6;

/// The named cards' faces in the layout image (`faces_px`, decoded pixels, and their
/// `poems`), each rectified as the namer rectifies faces (with its margin for shifts),
/// 32-bit gray, by poem.
pub(super) fn layout_faces(
    still: &Mat,
    faces_px: &[QuadPx],
    poems: &[Option<u8>],
) -> Result<Vec<(u8, Mat)>, TrackError> {
    let mut faces = Vec::with_capacity(faces_px.len());
    for (q, poem) in faces_px.iter().zip(poems) {
        if let (Some(p), Some(m)) = (poem, rectified(still, q, false)?) {
            faces.push((*p, m));
        }
    }
    Ok(faces)
}

/// The frame is cut around a face with this margin, pixels, before it is rectified
/// (the corners of the face lie inside the cut whatever their rounding).
const CUT_PAD_PX: f64 = 4.0;
/// A cut narrower or lower than this, pixels (the face barely inside the frame), is no
/// face to compare.
const CUT_MIN_PX: i32 = 8;

/// The face `face_px` (decoded pixels, corners clockwise from top-left with a short
/// edge first) rectified; `None` when it does not lie in the frame.
fn rectified(bgr: &Mat, face_px: &QuadPx, flipped: bool) -> Result<Option<Mat>, TrackError> {
    let pad = CUT_PAD_PX;
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for p in face_px {
        x0 = x0.min(p[0]);
        y0 = y0.min(p[1]);
        x1 = x1.max(p[0]);
        y1 = y1.max(p[1]);
    }
    let x0 = ((x0 - pad).floor() as i32).max(0);
    let y0 = ((y0 - pad).floor() as i32).max(0);
    let x1 = ((x1 + pad).ceil() as i32).min(bgr.cols());
    let y1 = ((y1 + pad).ceil() as i32).min(bgr.rows());
    if x1 - x0 < CUT_MIN_PX || y1 - y0 < CUT_MIN_PX {
        return Ok(None);
    }
    let roi = Mat::roi(bgr, Rect::new(x0, y0, x1 - x0, y1 - y0))?;
    let mut gray = Mat::default();
    imgproc::cvt_color_def(&roi, &mut gray, imgproc::COLOR_BGR2GRAY)?;
    let mut gray_f = Mat::default();
    gray.convert_to(&mut gray_f, core::CV_32F, 1.0, 0.0)?;
    let local = face_px.map(|p| [p[0] - f64::from(x0), p[1] - f64::from(y0)]);
    Ok(Some(rectify_face(&gray_f, &local, flipped)?))
}

/// The best normalised correlation of `face` (rectified with its margin) with the
/// middle of `reference` over the shifts the margin allows.
fn likeness(face: &Mat, reference: &Mat) -> Result<f64, TrackError> {
    let tpl = Mat::roi(
        reference,
        Rect::new(SHIFT_PX, SHIFT_PX, MATCH_W_PX, MATCH_H_PX),
    )?;
    let mut out = Mat::default();
    imgproc::match_template_def(face, &tpl, &mut out, imgproc::TM_CCOEFF_NORMED)?;
    let mut best = 0.0;
    core::min_max_loc(&out, None, Some(&mut best), None, None, &core::no_array())?;
    Ok(best)
}

/// What the paper of a card in flight was read as.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Named {
    /// The card followed: its own face is the likeliest by `OWN_MARGIN`, or the namer
    /// named it (or there is nothing to tell it from, or nothing to read it with).
    Own,
    /// Another card's, named by the namer: card `j`.
    Other(usize),
    /// Not clear, and the namer was asked (`true`) or not.
    Unsure(bool),
}

/// The namer is asked this many times at most while a card is in flight and its paper
/// stays unclear (about 50 ms of CPU each, on the frames' own thread).
pub const NAME_TRIES: u32 = 6;

/// An `out` given under the wrong name is given again under the right one only this
/// long after it, s: less than the judge waits after a reading's window has closed
/// (`judge::windows::CLOSE_MARGIN_S`, 0.5 s), so that it is not ruled without it.
pub const OUT_AGAIN_MAX_S: f64 = 0.4;

/// A card's paper in flight whose likeness to its own face beats every neighbour's by
/// this much (normalised correlation) is its own without asking the namer.
pub const OWN_MARGIN: f64 = 0.1;

impl CardTracker {
    /// What the face `face_px` (decoded pixels, the paper of card `i` in flight, seen
    /// whole) is, among card `i` and the cards whose places lie near `i`'s: compared
    /// first with their faces in the layout image (cheap), then, when another's face is
    /// about as likely, read by the namer among their poems (`may_read`), whose
    /// field-relative rule names it or leaves it unsure.
    pub(super) fn name_paper(
        &self,
        i: usize,
        face_px: &QuadPx,
        bgr: &Mat,
        may_read: bool,
    ) -> Result<Named, TrackError> {
        // In `live` the frames do not wait for the namer (about 50 ms a reading, on the
        // frames' own thread, against a call due within 100 ms of its deciding event).
        let (Some(namer), Some(own), false) =
            (self.namer.as_ref(), self.cards[i].poem, self.eager_search)
        else {
            return Ok(Named::Own);
        };
        let home = self.cards[i].centre_mm;
        let reach = NAMED_NEIGHBOUR_SIDES * self.geometry.size.card_h_mm;
        let mut cand: Vec<usize> = (0..self.cards.len())
            .filter(|&j| {
                let c = &self.cards[j];
                j != i
                    && c.poem.is_some()
                    && (c.centre_mm[0] - home[0]).hypot(c.centre_mm[1] - home[1]) <= reach
            })
            .collect();
        if cand.is_empty() {
            return Ok(Named::Own);
        }
        cand.insert(0, i);
        let face = cards::order_upright(*face_px);
        let views = [rectified(bgr, &face, false)?, rectified(bgr, &face, true)?];
        let mut scores = Vec::with_capacity(cand.len());
        for &j in &cand {
            let mut best = f64::NEG_INFINITY;
            let face = self.cards[j]
                .poem
                .and_then(|p| self.faces.iter().find(|f| f.0 == p));
            if let Some((_, r)) = face {
                for v in views.iter().flatten() {
                    best = best.max(likeness(v, r)?);
                }
            }
            scores.push(best);
        }
        let others = scores[1..]
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        if scores[0] >= others + OWN_MARGIN {
            return Ok(Named::Own);
        }
        if !may_read {
            return Ok(Named::Unsure(false));
        }
        let poems: Vec<u8> = cand.iter().filter_map(|&j| self.cards[j].poem).collect();
        let names = namer.name_cards_either_way(bgr, &[face], Some(&poems), Some(&self.styles))?;
        Ok(match names.first().and_then(|n| n.poem) {
            Some(p) if p == own => Named::Own,
            Some(p) => cand
                .iter()
                .copied()
                .find(|&j| self.cards[j].poem == Some(p))
                .map_or(Named::Unsure(true), Named::Other),
            None => Named::Unsure(true),
        })
    }

    /// The paper followed as card `i` is card `j`'s: `i` takes `j`'s name and place
    /// (its flight goes on as `j`'s), and `j` takes `i`'s: followed on in flight or out
    /// of the area when it was, else lying near that place, left for the card search to
    /// find (`Missing` with its place: fingertips there press it meanwhile).
    pub(super) fn take_identity(&mut self, i: usize, j: usize, frame: usize) {
        let (a, b) = if i < j {
            let (x, y) = self.cards.split_at_mut(j);
            (&mut x[i], &mut y[0])
        } else {
            let (x, y) = self.cards.split_at_mut(i);
            (&mut y[0], &mut x[j])
        };
        std::mem::swap(&mut a.poem, &mut b.poem);
        std::mem::swap(&mut a.owner, &mut b.owner);
        std::mem::swap(&mut a.rest_px, &mut b.rest_px);
        std::mem::swap(&mut a.centre_mm, &mut b.centre_mm);
        std::mem::swap(&mut a.angle_deg, &mut b.angle_deg);
        // What was seen at each place goes with it.
        std::mem::swap(&mut a.disturbed_since_s, &mut b.disturbed_since_s);
        std::mem::swap(&mut a.pushed_by, &mut b.pushed_by);
        std::mem::swap(&mut a.bare_frames, &mut b.bare_frames);
        self.monitor.swap(i, j);
        self.traded.push((i, j));
        if self.vacated.len() > i.max(j) {
            self.vacated.swap(i, j);
        }
        match &mut self.cards[j].phase {
            // Card j, followed in flight meanwhile, was following card i's paper: the
            // two flights were crossed, and each goes on under its right name (card j's
            // to be named again under it).
            Phase::Moving(fj) => fj.named = false,
            // Gone out under card j's name: given again by `out_again`.
            Phase::Leaving(_) | Phase::Out => {}
            Phase::Resting | Phase::Missing { .. } => self.left_in_place(j, frame),
        }
    }

    /// Whether the paper `b` now followed as card `i` is the paper card `j`'s flight `fj`
    /// followed last: within half a card's long side of it.
    pub(super) fn same_paper(&self, i: usize, fj: &Flight, b: &SeenBlob) -> bool {
        let near = 0.5 * blob::quad_long_side(&self.cards[i].rest_px);
        cards::dist(fj.last.centre_px, b.centre_px) < near
    }

    /// Whether card `j`, out of the area and still followed, went out under its name
    /// lately enough (`OUT_AGAIN_MAX_S` before `t_s`) for its `out` to be given again
    /// under another name, and was not itself named as it flew.
    pub(super) fn may_give_again(&self, j: usize, t_s: f64) -> bool {
        matches!(&self.cards[j].phase, Phase::Leaving(fj)
            if !fj.named && fj.out.as_ref().is_some_and(|e| t_s - e.t_s <= OUT_AGAIN_MAX_S))
    }

    /// Card `j`'s `out`, given again under its name now (its flight's paper was taken
    /// for another card's as it went out). The `out` given before under the other name
    /// stands: events are never taken back.
    pub(super) fn out_again(&self, j: usize) -> Option<Event> {
        let (Phase::Leaving(fj), Some(poem)) = (&self.cards[j].phase, self.cards[j].poem) else {
            return None;
        };
        let mut e = fj.out.clone()?;
        if let EventKind::Out { by, hand, .. } = e.what {
            e.what = EventKind::Out { poem, by, hand };
        }
        Some(e)
    }

    /// Card `j`, thought to have left its place, lies near it still: the card search
    /// finds it there.
    pub(super) fn left_in_place(&mut self, j: usize, frame: usize) {
        let c = &mut self.cards[j];
        c.phase = Phase::Missing {
            since_frame: frame,
            given_up: false,
            lost_at_px: Some(centre_px(&c.rest_px)),
            left: None,
            rest_mm: Some((c.centre_mm, c.angle_deg)),
        };
        c.disturbed_since_s = None;
        c.pushed_by = None;
        c.pusher = None;
        c.bare_frames = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{Point2f, Scalar, Size, Vector, CV_8UC3};

    /// A card face 52 x 72 px: white paper with dark strokes placed by `seed` (the
    /// printed text of one poem, as far as a correlation can tell).
    fn face(seed: u64) -> Mat {
        let mut m = Mat::new_rows_cols_with_default(72, 52, CV_8UC3, Scalar::all(235.0)).unwrap();
        let mut x = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        for _ in 0..14 {
            let mut next = |n: i32| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 33) % n as u64) as i32
            };
            let (cx, cy, w, h) = (4 + next(40), 4 + next(60), 2 + next(8), 2 + next(10));
            imgproc::rectangle(
                &mut m,
                Rect::new(cx, cy, w, h),
                Scalar::all(40.0),
                -1,
                imgproc::LINE_8,
                0,
            )
            .unwrap();
        }
        m
    }

    /// `src` drawn into a tatami-coloured frame onto the quad `to` (corners clockwise
    /// from the face's top-left).
    fn draw(frame: &mut Mat, src: &Mat, to: &QuadPx) {
        let from: Vector<Point2f> = [[0.0, 0.0], [52.0, 0.0], [52.0, 72.0], [0.0, 72.0]]
            .iter()
            .map(|p| Point2f::new(p[0], p[1]))
            .collect();
        let dst: Vector<Point2f> = to
            .iter()
            .map(|p| Point2f::new(p[0] as f32, p[1] as f32))
            .collect();
        let m = imgproc::get_perspective_transform_def(&from, &dst).unwrap();
        imgproc::warp_perspective(
            src,
            frame,
            &m,
            Size::new(frame.cols(), frame.rows()),
            imgproc::INTER_LINEAR,
            core::BORDER_TRANSPARENT,
            Scalar::all(0.0),
        )
        .unwrap();
    }

    fn tatami() -> Mat {
        Mat::new_rows_cols_with_default(240, 320, CV_8UC3, Scalar::new(90.0, 170.0, 180.0, 0.0))
            .unwrap()
    }

    /// A quad of the face's size centred at `c`, turned by `deg`, corners clockwise from
    /// the face's own top-left.
    fn quad(c: [f64; 2], deg: f64) -> QuadPx {
        let (s, co) = deg.to_radians().sin_cos();
        [[-26.0, -36.0], [26.0, -36.0], [26.0, 36.0], [-26.0, 36.0]]
            .map(|[x, y]| [c[0] + x * co - y * s, c[1] + x * s + y * co])
    }

    #[test]
    fn paper_in_flight_is_most_like_its_own_face_turned_any_way() {
        // The layout: two faces side by side, upright.
        let (a, b) = (face(1), face(2));
        let mut layout = tatami();
        let (qa, qb) = (quad([100.0, 100.0], 0.0), quad([180.0, 100.0], 0.0));
        draw(&mut layout, &a, &qa);
        draw(&mut layout, &b, &qb);
        let refs = layout_faces(
            &layout,
            &[cards::order_upright(qa), cards::order_upright(qb)],
            &[Some(1), Some(2)],
        )
        .unwrap();
        let (ra, rb) = (&refs[0].1, &refs[1].1);
        // Card b in flight elsewhere, turned by 17 and by 197 degrees (upside down).
        for deg in [17.0, 197.0, 95.0] {
            let mut frame = tatami();
            let q = quad([150.0, 150.0], deg);
            draw(&mut frame, &b, &q);
            let seen = cards::order_upright(q);
            let best = |r: &Mat| {
                [false, true]
                    .iter()
                    .map(|&flip| {
                        likeness(&rectified(&frame, &seen, flip).unwrap().unwrap(), r).unwrap()
                    })
                    .fold(f64::NEG_INFINITY, f64::max)
            };
            let (own, other) = (best(rb), best(ra));
            assert!(
                own > 0.8 && own > other + OWN_MARGIN,
                "turned {deg}: own {own:.3}, other {other:.3}"
            );
        }
    }

    #[test]
    fn a_face_lies_inside_its_card_by_the_border() {
        let card = [[10.0, 10.0], [60.0, 10.0], [60.0, 80.0], [10.0, 80.0]];
        let face = super::super::inset(&card, 3.0);
        assert_eq!(
            face,
            [[13.0, 13.0], [57.0, 13.0], [57.0, 77.0], [13.0, 77.0]]
        );
    }
}

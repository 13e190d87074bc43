//! Drawing the evidence on video frames: the playing-area lines, card outlines and poem
//! numbers projected from the field frame through the calibration (distortion included),
//! hands coloured by player with their contact points, and labels. Shared by the
//! per-ruling strips and clips and by the annotated video.
//!
//! Reads the field's geometry (`rules::geometry`) and the mapping (`field::FieldMap`);
//! never decides anything: what it draws was measured or ruled elsewhere.

use super::facts::CardOnField;
use super::hands::HandObs;
use super::ReportError;
use crate::field::FieldMap;
use crate::rules::geometry::{FieldGeometry, Pt};
use crate::rules::model::Player;
use opencv::core::{self, Mat, Point, Rect, Scalar, Size, Vector};
use opencv::imgproc;
use opencv::prelude::*;

/// Field lines are sampled this often so that lens distortion bends them as in the image.
const LINE_SAMPLE_MM: f64 = 10.0;

pub fn bgr(hex: &str) -> Scalar {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or(0);
    Scalar::new(
        (v & 0xff) as f64,
        ((v >> 8) & 0xff) as f64,
        ((v >> 16) & 0xff) as f64,
        0.0,
    )
}

pub fn player_colour(p: Player) -> Scalar {
    match p {
        Player::A => bgr("#2f7fff"),
        Player::B => bgr("#ff8c1a"),
    }
}

const READ_CARD: &str = "#ffd600";
const CARD_LINE: &str = "#f0f0f0";
const FIELD_LINE: &str = "#39e639";
const CONTACT: &str = "#ff1744";

/// A card projected into the image: outline and centre in raw pixels.
#[derive(Debug, Clone)]
pub struct CardPx {
    pub poem: Option<u8>,
    pub corners_px: [[f64; 2]; 4],
    pub centre_px: [f64; 2],
}

/// Everything about the field that is fixed in the image: its lines, in raw pixels.
pub struct FieldPx {
    pub map: FieldMap,
    pub lines_px: Vec<Vec<[f64; 2]>>,
}

impl FieldPx {
    pub fn new(map: FieldMap) -> Result<Self, ReportError> {
        let g = map.geometry();
        let mut lines_px = Vec::new();
        // Each territory's outline: together they draw the playing area's edge and the
        // two inner lines across the gap (7-1).
        for p in Player::BOTH {
            let r = g.territory(p);
            let c = r.corners();
            for i in 0..4 {
                let (a, b) = (c[i], c[(i + 1) % 4]);
                let len =
                    ((b.x_mm - a.x_mm).hypot(b.y_mm - a.y_mm) / LINE_SAMPLE_MM).ceil() as usize;
                let pts: Vec<Pt> = (0..=len.max(1))
                    .map(|k| {
                        let f = k as f64 / len.max(1) as f64;
                        Pt::new(
                            a.x_mm + (b.x_mm - a.x_mm) * f,
                            a.y_mm + (b.y_mm - a.y_mm) * f,
                        )
                    })
                    .collect();
                lines_px.push(
                    map.to_image(&pts)
                        .map_err(|e| ReportError::Calibration(e.to_string()))?,
                );
            }
        }
        Ok(FieldPx { map, lines_px })
    }

    pub fn cards_px(&self, cards: &[CardOnField]) -> Result<Vec<CardPx>, ReportError> {
        let g = FieldGeometry::new(self.map.field.clone());
        let mut pts = Vec::with_capacity(cards.len() * 5);
        for c in cards {
            pts.extend(g.card_corners(c.x_mm, c.y_mm, c.angle_deg));
            pts.push(Pt::new(c.x_mm, c.y_mm));
        }
        let px = self
            .map
            .to_image(&pts)
            .map_err(|e| ReportError::Calibration(e.to_string()))?;
        Ok(cards
            .iter()
            .zip(px.chunks(5))
            .map(|(c, q)| CardPx {
                poem: c.poem,
                corners_px: [q[0], q[1], q[2], q[3]],
                centre_px: q[4],
            })
            .collect())
    }
}

/// A view of the raw frame: the crop's top-left corner and the zoom.
#[derive(Debug, Clone, Copy)]
pub struct View {
    pub x0: f64,
    pub y0: f64,
    pub scale: f64,
}

impl View {
    pub fn pt(&self, p: [f64; 2]) -> Point {
        Point::new(
            ((p[0] - self.x0) * self.scale).round() as i32,
            ((p[1] - self.y0) * self.scale).round() as i32,
        )
    }
}

/// A crop of `frame` (raw pixels) resized to `out`: returns the zoomed image and its view.
pub fn zoom(frame: &Mat, crop: Rect, out: Size) -> Result<(Mat, View), ReportError> {
    let roi = Mat::roi(frame, crop)?;
    let mut dst = Mat::default();
    imgproc::resize(&roi, &mut dst, out, 0.0, 0.0, imgproc::INTER_LINEAR)?;
    Ok((
        dst,
        View {
            x0: crop.x as f64,
            y0: crop.y as f64,
            scale: out.width as f64 / crop.width as f64,
        },
    ))
}

/// A crop of the given size (clamped to the frame) centred on `centre`.
pub fn crop_around(centre: [f64; 2], w: f64, h: f64, frame: Size) -> Rect {
    let w = w.min(frame.width as f64).max(8.0);
    let h = h.min(frame.height as f64).max(8.0);
    let x = (centre[0] - w / 2.0).clamp(0.0, frame.width as f64 - w);
    let y = (centre[1] - h / 2.0).clamp(0.0, frame.height as f64 - h);
    Rect::new(x as i32, y as i32, w as i32, h as i32)
}

fn poly(v: &View, pts: &[[f64; 2]]) -> Vector<Vector<Point>> {
    let inner: Vector<Point> = pts.iter().map(|p| v.pt(*p)).collect();
    let mut outer = Vector::new();
    outer.push(inner);
    outer
}

/// The field lines, every card's outline with its poem number (the read card in yellow).
pub fn draw_field(
    img: &mut Mat,
    v: &View,
    field: &FieldPx,
    cards: &[CardPx],
    read_poem: Option<u8>,
) -> Result<(), ReportError> {
    let thick = if v.scale > 1.5 { 2 } else { 1 };
    for line in &field.lines_px {
        let p: Vector<Point> = line.iter().map(|q| v.pt(*q)).collect();
        let mut pp = Vector::<Vector<Point>>::new();
        pp.push(p);
        imgproc::polylines(img, &pp, false, bgr(FIELD_LINE), thick, imgproc::LINE_AA, 0)?;
    }
    let font_scale = (0.22 * v.scale).clamp(0.3, 0.55);
    for c in cards {
        let read = c.poem.is_some() && c.poem == read_poem;
        let colour = bgr(if read { READ_CARD } else { CARD_LINE });
        imgproc::polylines(
            img,
            &poly(v, &c.corners_px),
            true,
            colour,
            if read { thick + 1 } else { thick },
            imgproc::LINE_AA,
            0,
        )?;
        let label = c.poem.map_or("?".to_string(), |p| p.to_string());
        outlined_text(img, &label, v.pt(c.centre_px), font_scale, colour)?;
    }
    Ok(())
}

/// Small text centred on `at`, light on a dark outline, so the card under it stays visible.
pub fn outlined_text(
    img: &mut Mat,
    text: &str,
    at: Point,
    scale: f64,
    colour: Scalar,
) -> Result<(), ReportError> {
    let mut base = 0;
    let sz = imgproc::get_text_size(text, imgproc::FONT_HERSHEY_SIMPLEX, scale, 1, &mut base)?;
    let org = Point::new(at.x - sz.width / 2, at.y + sz.height / 2);
    for (c, t) in [(Scalar::all(0.0), 3), (colour, 1)] {
        imgproc::put_text(
            img,
            text,
            org,
            imgproc::FONT_HERSHEY_SIMPLEX,
            scale,
            c,
            t,
            imgproc::LINE_AA,
            false,
        )?;
    }
    Ok(())
}

/// Text on a dark box, centred on `at` when `centred`, else with its top-left at `at`.
pub fn label_at(
    img: &mut Mat,
    text: &str,
    at: Point,
    scale: f64,
    colour: Scalar,
    centred: bool,
) -> Result<(), ReportError> {
    let mut base = 0;
    let thickness = if scale >= 0.6 { 2 } else { 1 };
    let sz = imgproc::get_text_size(
        text,
        imgproc::FONT_HERSHEY_SIMPLEX,
        scale,
        thickness,
        &mut base,
    )?;
    let (x, y) = if centred {
        (at.x - sz.width / 2, at.y + sz.height / 2)
    } else {
        (at.x, at.y + sz.height)
    };
    imgproc::rectangle(
        img,
        Rect::new(x - 2, y - sz.height - 2, sz.width + 4, sz.height + base + 3),
        Scalar::new(20.0, 20.0, 20.0, 0.0),
        -1,
        imgproc::LINE_8,
        0,
    )?;
    imgproc::put_text(
        img,
        text,
        Point::new(x, y),
        imgproc::FONT_HERSHEY_SIMPLEX,
        scale,
        colour,
        thickness,
        imgproc::LINE_AA,
        false,
    )?;
    Ok(())
}

/// Hands: a translucent fill in the player's colour, the outline, the fingertips, and a
/// ring on every fingertip that touches a card (the contact point).
pub fn draw_hands(
    img: &mut Mat,
    v: &View,
    hands: &[HandObs],
    cards: &[CardPx],
) -> Result<(), ReportError> {
    if hands.is_empty() {
        return Ok(());
    }
    let mut overlay = img.try_clone()?;
    for h in hands.iter().filter(|h| h.outline_px.len() >= 3) {
        imgproc::fill_poly(
            &mut overlay,
            &poly(v, &h.outline_px),
            player_colour(h.player),
            imgproc::LINE_AA,
            0,
            Point::new(0, 0),
        )?;
    }
    let mut blended = Mat::default();
    core::add_weighted(&overlay, 0.35, &*img, 0.65, 0.0, &mut blended, -1)?;
    *img = blended;
    let r = (3.0 * v.scale).clamp(3.0, 9.0) as i32;
    for h in hands {
        let colour = player_colour(h.player);
        if h.outline_px.len() >= 3 {
            imgproc::polylines(
                img,
                &poly(v, &h.outline_px),
                true,
                colour,
                2,
                imgproc::LINE_AA,
                0,
            )?;
        }
        for (name, p) in &h.keypoints_px {
            if name != "wrist" {
                imgproc::circle(
                    img,
                    v.pt(*p),
                    (r / 2).max(2),
                    colour,
                    -1,
                    imgproc::LINE_AA,
                    0,
                )?;
            }
        }
        for p in contact_points(h, cards) {
            imgproc::circle(img, v.pt(p), r + 3, bgr(CONTACT), 2, imgproc::LINE_AA, 0)?;
            imgproc::circle(
                img,
                v.pt(p),
                r + 6,
                Scalar::all(255.0),
                1,
                imgproc::LINE_AA,
                0,
            )?;
        }
    }
    Ok(())
}

fn inside(q: &[[f64; 2]; 4], p: [f64; 2]) -> bool {
    let mut sign = 0.0;
    for i in 0..4 {
        let (a, b) = (q[i], q[(i + 1) % 4]);
        let c = (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]);
        if sign == 0.0 {
            sign = c.signum();
        } else if c.signum() != sign && c != 0.0 {
            return false;
        }
    }
    true
}

/// Where a touching hand meets its card: the fingertips over a touched card's outline;
/// failing that, the middle (else index) fingertip.
pub fn contact_points(h: &HandObs, cards: &[CardPx]) -> Vec<[f64; 2]> {
    let touched = h.touched_poems();
    if !h.is_touching() {
        return Vec::new();
    }
    let tips: Vec<[f64; 2]> = h
        .keypoints_px
        .iter()
        .filter(|(n, _)| n.as_str() != "wrist")
        .map(|(_, p)| *p)
        .collect();
    let on_card: Vec<[f64; 2]> = tips
        .iter()
        .copied()
        .filter(|p| {
            cards
                .iter()
                .filter(|c| c.poem.is_some_and(|q| touched.contains(&q)))
                .any(|c| inside(&c.corners_px, *p))
        })
        .collect();
    if !on_card.is_empty() {
        return on_card;
    }
    ["middle", "index"]
        .iter()
        .find_map(|n| h.keypoints_px.get(*n).copied())
        .or_else(|| tips.first().copied())
        .into_iter()
        .collect()
}

/// A frame-wide border (the deciding frame of a strip is framed in red).
pub fn border(img: &mut Mat, colour: Scalar, px: i32) -> Result<(), ReportError> {
    let sz = img.size()?;
    imgproc::rectangle(
        img,
        Rect::new(0, 0, sz.width, sz.height),
        colour,
        px,
        imgproc::LINE_8,
        0,
    )?;
    Ok(())
}

/// Drawing that stays the same over many frames (field lines, card outlines, numbers),
/// rendered once and laid over each frame. Anti-aliased lines and Hershey text cost far
/// more than the frame itself, so drawing them per frame would dominate the report.
/// Rendered over black and over white: the difference is the coverage (alpha) of every
/// pixel, the black render the colour already multiplied by it.
pub struct Layer {
    premult: Mat,
    inv_alpha: Mat,
}

impl Layer {
    pub fn render(
        size: Size,
        draw: &dyn Fn(&mut Mat) -> Result<(), ReportError>,
    ) -> Result<Layer, ReportError> {
        let mut black = Mat::new_size_with_default(size, core::CV_8UC3, Scalar::all(0.0))?;
        let mut white = Mat::new_size_with_default(size, core::CV_8UC3, Scalar::all(255.0))?;
        draw(&mut black)?;
        draw(&mut white)?;
        // white - black = 255 * (1 - alpha): what of the frame shows through.
        let mut inv_alpha = Mat::default();
        core::subtract(&white, &black, &mut inv_alpha, &core::no_array(), -1)?;
        Ok(Layer {
            premult: black,
            inv_alpha,
        })
    }

    /// frame * (1 - alpha) + colour * alpha.
    pub fn apply(&self, img: &mut Mat) -> Result<(), ReportError> {
        let mut shown = Mat::default();
        core::multiply(&*img, &self.inv_alpha, &mut shown, 1.0 / 255.0, -1)?;
        core::add(&shown, &self.premult, img, &core::no_array(), -1)?;
        Ok(())
    }
}

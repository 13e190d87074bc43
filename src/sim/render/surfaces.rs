//! What lies flat on the tatami plane: the tatami with its weave and borders
//! (`draw_tatami`), and each card's printed face, drawn once at a fine scale and padded
//! for its border and shade (`card_texture`).

use super::{bgr, mat_zeros, CanvasFrame, CARD_SHADE_MM, SHIFT};
use crate::rules::geometry::Pt;
use crate::sim::look::Look;
use crate::sim::story::Story;
use opencv::core::{Mat, Point, Rect, Scalar, Size, CV_8UC3};
use opencv::prelude::*;
use opencv::{core, freetype, imgproc};
use rand::Rng;
use rand_chacha::ChaCha20Rng;

/// Card textures are drawn at least this fine, then scaled down onto the canvas.
const TEX_MIN_PX_PER_MM: f64 = 3.0;

/// Tatami: straw colour, woven lines, slow mottling, and the cloth edges of the mats.
pub(super) fn draw_tatami(
    cf: &CanvasFrame,
    look: &Look,
    story: &Story,
    rng: &mut ChaCha20Rng,
) -> opencv::Result<Mat> {
    let mut img = mat_zeros(cf.h, cf.w, CV_8UC3)?;
    let s = cf.mm_per_px;
    let period_px = look.weave_period_mm / s;
    let n_lines = ((if look.weave_along_x { cf.h } else { cf.w }) as f64 / period_px) as usize + 2;
    let line_var: Vec<f64> = (0..n_lines).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let blotch: Vec<f64> = (0..64).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let phase = rng.gen_range(0.0..std::f64::consts::TAU);
    let w = cf.w as usize;
    {
        let data = img.data_bytes_mut()?;
        for v in 0..cf.h as usize {
            for u in 0..w {
                let (along, across) = if look.weave_along_x {
                    (u as f64, v as f64)
                } else {
                    (v as f64, u as f64)
                };
                let pos = across / period_px;
                let li = (pos.floor() as usize).min(n_lines - 1);
                let frac = pos - pos.floor();
                // Each rush is brighter in its middle and darker at the seams.
                let profile = (std::f64::consts::PI * frac).sin() - 0.64;
                let knot = (along * s / 15.0 + phase + li as f64).sin() * 0.25;
                let mottle = blotch[(((u as f64 * s / 200.0) as usize) * 7
                    + ((v as f64 * s / 200.0) as usize) * 3)
                    % 64]
                    * 0.03;
                let g = 1.0
                    + look.weave_contrast * (profile + 0.35 * line_var[li] + knot * 0.3)
                    + mottle;
                let i = (v * w + u) * 3;
                for c in 0..3 {
                    data[i + c] = (look.tatami_bgr[c] * g).round().clamp(0.0, 255.0) as u8;
                }
            }
        }
    }
    for &y in &look.heri_y_mm {
        // A 30 mm cloth band along x at the edge of a mat.
        let w_mm = 30.0;
        let a = cf.pt(Pt::new(cf.x0_mm - 10.0, y + w_mm / 2.0));
        let b = cf.pt(Pt::new(cf.x0_mm + cf.w as f64 * s + 10.0, y - w_mm / 2.0));
        imgproc::rectangle_points(
            &mut img,
            a,
            b,
            bgr(look.heri_bgr),
            -1,
            imgproc::LINE_AA,
            SHIFT,
        )?;
    }
    let _ = story;
    Ok(img)
}

/// A card's texture, padded with transparent texels: premultiplied colour, and a
/// two-channel mask of the card's coverage and of its contact shadow.
pub(super) struct CardTexture {
    pub(super) bgr: Mat,
    pub(super) mask: Mat,
    /// The card's own texels, across and down.
    pub(super) w: i32,
    pub(super) h: i32,
    /// Transparent texels on each side.
    pub(super) pad: i32,
}

/// Pads a card texture for drawing: `ts` texels per millimetre.
fn pad_texture(tex: &Mat, ts: f64) -> opencv::Result<CardTexture> {
    let (w, h) = (tex.cols(), tex.rows());
    let pad = (CARD_SHADE_MM * ts).ceil() as i32 + 2;
    let mut bgr = Mat::default();
    core::copy_make_border(
        tex,
        &mut bgr,
        pad,
        pad,
        pad,
        pad,
        core::BORDER_CONSTANT,
        Scalar::all(0.0),
    )?;
    let mut mask =
        Mat::new_rows_cols_with_default(h + 2 * pad, w + 2 * pad, core::CV_8UC2, Scalar::all(0.0))?;
    for r in 0..h + 2 * pad {
        let row = mask.at_row_mut::<core::Vec2b>(r)?;
        // Distance of the texel's centre outside the card, in texels.
        let dy = ((pad as f64 - 0.5 - r as f64).max(r as f64 + 0.5 - (pad + h) as f64)).max(0.0);
        for (j, m) in row.iter_mut().enumerate() {
            let j = j as f64;
            let dx = ((pad as f64 - 0.5 - j).max(j + 0.5 - (pad + w) as f64)).max(0.0);
            let inside = dx == 0.0 && dy == 0.0;
            let d_mm = dx.hypot(dy) / ts;
            m[0] = if inside { 255 } else { 0 };
            m[1] = (255.0 * (1.0 - d_mm / CARD_SHADE_MM).max(0.0)).round() as u8;
        }
    }
    Ok(CardTexture {
        bgr,
        mask,
        w,
        h,
        pad,
    })
}

/// A torifuda: cream face, coloured border, the shimo-no-ku in vertical columns read
/// right to left, as printed (no dakuten unless the look asks for them), each column
/// stepped lower than the one to its right unless the look sets them level.
pub(super) fn card_texture(
    poem_no: u8,
    look: &Look,
    mm_per_px: f64,
    story: &Story,
    rng: &mut ChaCha20Rng,
) -> opencv::Result<CardTexture> {
    let g = &story.geom;
    let ts = (2.0 / mm_per_px).max(TEX_MIN_PX_PER_MM);
    let (w, h) = (
        (g.size.card_w_mm * ts).round() as i32,
        (g.size.card_h_mm * ts).round() as i32,
    );
    let mut tex = Mat::new_rows_cols_with_default(h, w, CV_8UC3, bgr(look.card_border_bgr))?;
    let b = (look.card_border_mm * ts).round() as i32;
    let cream = look
        .card_cream_bgr
        .map(|c| (c + rng.gen_range(-4.0..4.0)).clamp(0.0, 255.0));
    imgproc::rectangle(
        &mut tex,
        Rect::new(b, b, w - 2 * b, h - 2 * b),
        bgr(cream),
        -1,
        imgproc::LINE_8,
        0,
    )?;
    let text: Vec<char> = crate::rules::poems::poem(poem_no)
        .map(|p| {
            if look.dakuten {
                p.shimo_kana
                    .chars()
                    .filter(|c| !c.is_whitespace())
                    .collect()
            } else {
                p.torifuda_text()
            }
        })
        .unwrap_or_default()
        .chars()
        .collect();
    let stagger = if look.level_columns { 0.0 } else { 0.35 };
    if !text.is_empty() {
        let cols = rng.gen_range(3..=5usize).min(text.len());
        let per_col = text.len().div_ceil(cols);
        let inner_w = (w - 2 * b) as f64 * 0.88;
        let inner_h = (h - 2 * b) as f64 * 0.9;
        let cell_w = inner_w / cols as f64;
        let glyph = (inner_h / per_col as f64).min(cell_w * 1.05);
        let mut ft = freetype::create_free_type2()?;
        ft.load_font_data(&look.font, 0)?;
        let ink = bgr(look.ink_bgr);
        let size = glyph.round().max(4.0) as i32;
        for (i, ch) in text.iter().enumerate() {
            let col = i / per_col;
            let row = i % per_col;
            // Columns from the right.
            let cx = w as f64 - b as f64 - (w - 2 * b) as f64 * 0.06 - cell_w * (col as f64 + 0.5);
            let top = b as f64
                + (h - 2 * b) as f64 * 0.05
                + glyph * row as f64
                + (col as f64) * glyph * stagger;
            let s = ch.to_string();
            let mut base = 0;
            let sz = ft.get_text_size(&s, size, -1, &mut base)?;
            let org = Point::new(
                (cx - sz.width as f64 / 2.0).round() as i32,
                (top + glyph * 0.88).round() as i32,
            );
            ft.put_text(&mut tex, &s, org, size, ink, -1, imgproc::LINE_AA, true)?;
        }
    }
    // Soften so that scaling down onto the canvas does not alias the strokes.
    let ratio = ts * mm_per_px;
    if ratio > 1.2 {
        let mut soft = Mat::default();
        imgproc::gaussian_blur(
            &tex,
            &mut soft,
            Size::new(0, 0),
            0.45 * ratio,
            0.0,
            core::BORDER_REPLICATE,
        )?;
        tex = soft;
    }
    pad_texture(&tex, ts)
}

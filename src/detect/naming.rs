//! Naming a card by its printed shimo-no-ku.
//!
//! Each face is rectified to a small canonical image, both ways up (the opponent's cards
//! lie upside down), and compared by normalised correlation, over a few pixels of shift,
//! with templates of all 100 torifuda texts rendered from the installed Japanese fonts in
//! a few column layouts. The layouts that fit a sample of cards best are kept for the
//! rest. A field holds each poem once, so names are assigned greedily from the most
//! confident match down; a card whose best match is weak or not clearly ahead of the
//! runner-up keeps no name rather than a guess.

use super::{DetectError, QuadPx};
use crate::rules::poems::{self, POEM_COUNT};
use opencv::core::{self, Mat, Point, Point2f, Scalar, Size, Vector};
use opencv::prelude::*;
use opencv::{freetype, imgproc};
use std::path::Path;

/// Canonical face size for matching, px.
pub const MATCH_W_PX: i32 = 48;
pub const MATCH_H_PX: i32 = 68;
/// Shift searched around the rectified face, px each way.
pub const SHIFT_PX: i32 = 3;
/// Templates are drawn this many times larger, then reduced (anti-aliasing).
const RENDER_SCALE: i32 = 4;
/// Blur applied to templates and faces alike, px (sigma at match size).
const MATCH_BLUR_SIGMA_PX: f64 = 0.8;
/// The installed fonts tried (Debian packages fonts-ipafont-mincho, fonts-ipafont-gothic).
pub const FONT_PATHS: [&str; 2] = [
    "/usr/share/fonts/opentype/ipafont-mincho/ipam.ttf",
    "/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf",
];
/// A name is given only with at least this correlation...
pub const MIN_SCORE: f64 = 0.35;
/// ...and this lead over the best other poem.
pub const MIN_MARGIN: f64 = 0.04;
/// Cards sampled to choose the text layouts, and how close to the best a layout must
/// score (mean correlation) to be kept.
const STYLE_SAMPLE_CARDS: usize = 8;
const STYLE_KEEP_MARGIN: f64 = 0.02;
const STYLES_KEPT: usize = 2;

/// How the kana are split into vertical columns (read right to left).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Columns {
    /// At most this many kana per column.
    PerColumn(usize),
    /// Three columns of nearly equal length.
    Thirds,
}

/// One way of printing a card's text.
#[derive(Debug, Clone, PartialEq)]
pub struct TextStyle {
    pub font: usize,
    pub columns: Columns,
    /// Glyph size as a fraction of its cell.
    pub glyph_frac: f64,
    /// Blank margin around the text block, as a fraction of the face.
    pub margin_frac: f64,
}

/// The styles tried: every installed font, the column splits card sets use (three
/// columns, or four to seven kana a column), two glyph sizes and two margins.
pub fn default_styles(fonts: usize) -> Vec<TextStyle> {
    let mut out = Vec::new();
    for font in 0..fonts {
        for columns in [
            Columns::Thirds,
            Columns::PerColumn(4),
            Columns::PerColumn(5),
            Columns::PerColumn(6),
            Columns::PerColumn(7),
        ] {
            for glyph_frac in [0.75, 0.95] {
                for margin_frac in [0.05, 0.12] {
                    out.push(TextStyle {
                        font,
                        columns,
                        glyph_frac,
                        margin_frac,
                    });
                }
            }
        }
    }
    out
}

/// The name given to one card.
#[derive(Debug, Clone, PartialEq)]
pub struct CardName {
    /// The poem, or `None` when the match is not clear.
    pub poem: Option<u8>,
    /// The best-matching poem and its correlation, named or not.
    pub best_poem: u8,
    pub score: f64,
    /// The best other poem and its correlation.
    pub runner_up: Option<(u8, f64)>,
    /// True when the text reads upside down in the image.
    pub flipped: bool,
}

/// Rendered templates for every poem in every style.
pub struct Namer {
    styles: Vec<TextStyle>,
    /// templates[style][poem - 1]
    templates: Vec<Vec<Mat>>,
    pub fonts: Vec<String>,
}

fn column_split(n: usize, columns: Columns) -> usize {
    match columns {
        Columns::PerColumn(k) => k.max(1),
        Columns::Thirds => n.div_ceil(3).max(1),
    }
}

fn blur(m: &Mat) -> Result<Mat, DetectError> {
    let mut out = Mat::default();
    imgproc::gaussian_blur(
        m,
        &mut out,
        Size::new(0, 0),
        MATCH_BLUR_SIGMA_PX,
        0.0,
        core::BORDER_REPLICATE,
    )?;
    Ok(out)
}

fn render(
    ft: &mut core::Ptr<freetype::FreeType2>,
    text: &str,
    style: &TextStyle,
) -> Result<Mat, DetectError> {
    let (w, h) = (MATCH_W_PX * RENDER_SCALE, MATCH_H_PX * RENDER_SCALE);
    let mut canvas = Mat::new_rows_cols_with_default(h, w, core::CV_8UC3, Scalar::all(255.0))?;
    let chars: Vec<char> = text.chars().collect();
    let per_col = column_split(chars.len(), style.columns);
    let ncols = chars.len().div_ceil(per_col).max(1);
    let (wf, hf) = (w as f64, h as f64);
    let inner_w = wf * (1.0 - 2.0 * style.margin_frac);
    let inner_h = hf * (1.0 - 2.0 * style.margin_frac);
    let col_pitch = inner_w / ncols as f64;
    let row_pitch = inner_h / per_col as f64;
    let glyph_px = (col_pitch.min(row_pitch) * style.glyph_frac).round() as i32;
    for (i, c) in chars.iter().enumerate() {
        let (col, row) = (i / per_col, i % per_col);
        let cx = wf * style.margin_frac + inner_w - (col as f64 + 0.5) * col_pitch;
        let cy = hf * style.margin_frac + (row as f64 + 0.5) * row_pitch;
        let s = c.to_string();
        let mut base = 0;
        let size = ft.get_text_size(&s, glyph_px, -1, &mut base)?;
        let org = Point::new(
            (cx - size.width as f64 / 2.0).round() as i32,
            (cy + size.height as f64 / 2.0).round() as i32,
        );
        ft.put_text(
            &mut canvas,
            &s,
            org,
            glyph_px,
            Scalar::all(0.0),
            -1,
            imgproc::LINE_AA,
            true,
        )?;
    }
    let mut gray = Mat::default();
    imgproc::cvt_color_def(&canvas, &mut gray, imgproc::COLOR_BGR2GRAY)?;
    let mut small = Mat::default();
    imgproc::resize(
        &gray,
        &mut small,
        Size::new(MATCH_W_PX, MATCH_H_PX),
        0.0,
        0.0,
        imgproc::INTER_AREA,
    )?;
    let mut f = Mat::default();
    small.convert_to(&mut f, core::CV_32F, 1.0, 0.0)?;
    blur(&f)
}

/// Rectifies a face (corners clockwise from top-left, as `cards::order_upright` gives
/// them) into the canonical face plus `SHIFT_PX` of surroundings, 32-bit gray.
pub fn rectify_face(gray_f: &Mat, face: &QuadPx, flipped: bool) -> Result<Mat, DetectError> {
    let s = SHIFT_PX as f32;
    let (w, h) = (MATCH_W_PX as f32, MATCH_H_PX as f32);
    let mut dst = [
        Point2f::new(s, s),
        Point2f::new(s + w, s),
        Point2f::new(s + w, s + h),
        Point2f::new(s, s + h),
    ];
    if flipped {
        dst.rotate_left(2);
    }
    let src: Vector<Point2f> = face
        .iter()
        .map(|p| Point2f::new(p[0] as f32, p[1] as f32))
        .collect();
    let dstv: Vector<Point2f> = dst.iter().copied().collect();
    let m = imgproc::get_perspective_transform_def(&src, &dstv)?;
    let mut out = Mat::default();
    imgproc::warp_perspective(
        gray_f,
        &mut out,
        &m,
        Size::new(MATCH_W_PX + 2 * SHIFT_PX, MATCH_H_PX + 2 * SHIFT_PX),
        imgproc::INTER_LINEAR,
        core::BORDER_REPLICATE,
        Scalar::all(0.0),
    )?;
    blur(&out)
}

fn ncc(search: &Mat, template: &Mat) -> Result<f64, DetectError> {
    let mut res = Mat::default();
    imgproc::match_template(
        search,
        template,
        &mut res,
        imgproc::TM_CCOEFF_NORMED,
        &core::no_array(),
    )?;
    let mut max = 0.0;
    core::min_max_loc(&res, None, Some(&mut max), None, None, &core::no_array())?;
    Ok(if max.is_finite() { max } else { 0.0 })
}

impl Namer {
    /// Renders templates for the fonts that are installed.
    pub fn new() -> Result<Namer, DetectError> {
        let fonts: Vec<String> = FONT_PATHS
            .iter()
            .filter(|p| Path::new(p).is_file())
            .map(|p| p.to_string())
            .collect();
        Namer::with_styles(&fonts, default_styles(fonts.len()))
    }

    pub fn with_styles(fonts: &[String], styles: Vec<TextStyle>) -> Result<Namer, DetectError> {
        let mut engines = Vec::new();
        for f in fonts {
            let mut ft = freetype::create_free_type2()?;
            ft.load_font_data(f, 0)?;
            engines.push(ft);
        }
        let texts: Vec<String> = poems::poems().iter().map(|p| p.torifuda_text()).collect();
        let mut templates = Vec::with_capacity(styles.len());
        for style in &styles {
            let Some(ft) = engines.get_mut(style.font) else {
                continue;
            };
            let mut per_poem = Vec::with_capacity(texts.len());
            for t in &texts {
                per_poem.push(render(ft, t, style)?);
            }
            templates.push(per_poem);
        }
        Ok(Namer {
            styles,
            templates,
            fonts: fonts.to_vec(),
        })
    }

    pub fn styles(&self) -> &[TextStyle] {
        &self.styles
    }

    /// Best correlation of one rectified face with poem `poem` over the given styles.
    fn score(&self, face: &Mat, styles: &[usize], poem: u8) -> Result<f64, DetectError> {
        let mut best = f64::NEG_INFINITY;
        for &s in styles {
            if let Some(t) = self.templates.get(s).and_then(|v| v.get(poem as usize - 1)) {
                best = best.max(ncc(face, t)?);
            }
        }
        Ok(best)
    }

    /// Names the cards whose faces are given (image corners, clockwise from top-left).
    /// `candidates` limits the poems considered (e.g. the cards known to have moved).
    pub fn name_cards(
        &self,
        bgr: &Mat,
        faces: &[QuadPx],
        candidates: Option<&[u8]>,
    ) -> Result<Vec<CardName>, DetectError> {
        let all: Vec<u8> = (1..=POEM_COUNT).collect();
        let poems_considered = candidates.unwrap_or(&all);
        let mut gray = Mat::default();
        imgproc::cvt_color_def(bgr, &mut gray, imgproc::COLOR_BGR2GRAY)?;
        let mut gray_f = Mat::default();
        gray.convert_to(&mut gray_f, core::CV_32F, 1.0, 0.0)?;
        let mut views = Vec::with_capacity(faces.len());
        for f in faces {
            views.push([
                rectify_face(&gray_f, f, false)?,
                rectify_face(&gray_f, f, true)?,
            ]);
        }
        let styles = self.choose_styles(&views, poems_considered)?;

        // scores[card][k] = (poem, score, flipped), best orientation per poem.
        let mut table: Vec<Vec<(u8, f64, bool)>> = Vec::with_capacity(views.len());
        for v in &views {
            let mut row = Vec::with_capacity(poems_considered.len());
            for &p in poems_considered {
                let up = self.score(&v[0], &styles, p)?;
                let down = self.score(&v[1], &styles, p)?;
                row.push(if down > up {
                    (p, down, true)
                } else {
                    (p, up, false)
                });
            }
            row.sort_by(|a, b| b.1.total_cmp(&a.1));
            table.push(row);
        }
        Ok(assign(&table))
    }

    /// The styles that fit a sample of the cards best.
    fn choose_styles(
        &self,
        views: &[[Mat; 2]],
        poems_considered: &[u8],
    ) -> Result<Vec<usize>, DetectError> {
        let n = views.len();
        if n == 0 || self.templates.len() <= STYLES_KEPT {
            return Ok((0..self.templates.len()).collect());
        }
        let step = (n as f64 / STYLE_SAMPLE_CARDS as f64).max(1.0);
        let sample: Vec<usize> = (0..STYLE_SAMPLE_CARDS.min(n))
            .map(|k| ((k as f64 * step) as usize).min(n - 1))
            .collect();
        let mut means = Vec::with_capacity(self.templates.len());
        for s in 0..self.templates.len() {
            let mut total = 0.0;
            for &c in &sample {
                let mut best = f64::NEG_INFINITY;
                for &p in poems_considered {
                    for v in &views[c] {
                        best = best.max(self.score(v, &[s], p)?);
                    }
                }
                total += best;
            }
            means.push((s, total / sample.len() as f64));
        }
        means.sort_by(|a, b| b.1.total_cmp(&a.1));
        let top = means[0].1;
        Ok(means
            .iter()
            .take(STYLES_KEPT)
            .filter(|(_, m)| *m >= top - STYLE_KEEP_MARGIN)
            .map(|(s, _)| *s)
            .collect())
    }
}

/// Gives each poem to at most one card. A card is named when its best poem is strong
/// and clearly ahead of every other poem still open to it; a poem confidently given to
/// another card is no longer open (the field holds each poem once), so names settle over
/// a few rounds, most confident first. The rest keep no name.
fn assign(table: &[Vec<(u8, f64, bool)>]) -> Vec<CardName> {
    let mut named: Vec<Option<u8>> = vec![None; table.len()];
    loop {
        let taken: std::collections::HashSet<u8> = named.iter().flatten().copied().collect();
        // The clearest unnamed card this round.
        let mut pick: Option<(usize, u8, f64)> = None;
        for (c, row) in table.iter().enumerate() {
            if named[c].is_some() {
                continue;
            }
            let mut open = row.iter().filter(|(p, _, _)| !taken.contains(p));
            let Some(&(best, score, _)) = open.next() else {
                continue;
            };
            let second = open.next().map(|r| r.1).unwrap_or(0.0);
            let margin = score - second;
            if score >= MIN_SCORE && margin >= MIN_MARGIN && pick.is_none_or(|(_, _, m)| margin > m)
            {
                pick = Some((c, best, margin));
            }
        }
        match pick {
            Some((c, p, _)) => named[c] = Some(p),
            None => break,
        }
    }
    table
        .iter()
        .zip(named)
        .map(|(row, poem)| {
            let best = poem
                .and_then(|p| row.iter().find(|r| r.0 == p))
                .or_else(|| row.first());
            let Some(&(best_poem, score, flipped)) = best else {
                return CardName {
                    poem: None,
                    best_poem: 0,
                    score: 0.0,
                    runner_up: None,
                    flipped: false,
                };
            };
            let runner_up = row
                .iter()
                .find(|(p, _, _)| *p != best_poem)
                .map(|(p, s, _)| (*p, *s));
            CardName {
                poem,
                best_poem,
                score,
                runner_up,
                flipped,
            }
        })
        .collect()
}

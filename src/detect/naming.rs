//! Naming a card by its printed shimo-no-ku.
//!
//! Each face is rectified to a small canonical image, turned for the far player's cards
//! (they face the other way), and compared by normalised correlation, over a few pixels
//! of shift, with templates of all 100 torifuda texts rendered from the installed
//! Japanese fonts in several column layouts; a card's score for a poem is its best over
//! the layouts, and a sample of cards chooses the font of the set. A field holds each
//! poem once, so names are given clearest first, and a poem named on one card is out of
//! the running for the others; a card whose best match is weak or not clearly ahead of
//! the runner-up keeps no name rather than a guess.

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
/// Cards sampled to choose the font of the set, and how close to the best font another
/// must score (mean correlation) to be kept as well.
const FONT_SAMPLE_CARDS: usize = 8;
const FONT_KEEP_MARGIN: f64 = 0.02;
/// Poem baselines are only estimated over at least this many cards.
const BASELINE_MIN_CARDS: usize = 10;
/// The text block's share of the face.
const TEXT_BLOCK_W_FRAC: f64 = 0.88;
const TEXT_BLOCK_H_FRAC: f64 = 0.9;

/// How a card's kana are split into columns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Columns {
    /// This many columns of nearly equal length.
    Even(usize),
    /// Columns of this many kana, the last one shorter.
    AtMost(usize),
}

/// One way of printing a card's text: kana in vertical columns read right to left,
/// each glyph filling its cell, later columns optionally set lower ("scattered" writing).
#[derive(Debug, Clone, PartialEq)]
pub struct TextStyle {
    pub font: usize,
    pub columns: Columns,
    /// How much lower each column starts than the one to its right, in glyph heights.
    pub stagger: f64,
}

/// The styles tried for every card: every installed font; three to five even columns,
/// or columns of five or six kana; set level or scattered. Card sets differ in this, and
/// so may the cards of one set.
pub fn default_styles(fonts: usize) -> Vec<TextStyle> {
    let mut out = Vec::new();
    for font in 0..fonts {
        for columns in [
            Columns::Even(3),
            Columns::Even(4),
            Columns::Even(5),
            Columns::AtMost(5),
            Columns::AtMost(6),
        ] {
            for stagger in [0.0, 0.35] {
                out.push(TextStyle {
                    font,
                    columns,
                    stagger,
                });
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
    let n = chars.len().max(1);
    let (cols, per_col) = match style.columns {
        Columns::Even(c) => {
            let c = c.clamp(1, n);
            (c, n.div_ceil(c))
        }
        Columns::AtMost(k) => {
            let k = k.max(1);
            (n.div_ceil(k), k)
        }
    };
    let (wf, hf) = (w as f64, h as f64);
    let inner_w = wf * TEXT_BLOCK_W_FRAC;
    let inner_h = hf * TEXT_BLOCK_H_FRAC;
    let cell_w = inner_w / cols as f64;
    let glyph = (inner_h / per_col as f64).min(cell_w);
    let glyph_px = glyph.round().max(4.0) as i32;
    let right = (wf + inner_w) / 2.0;
    let top = (hf - inner_h) / 2.0;
    for (i, c) in chars.iter().enumerate() {
        let (col, row) = (i / per_col, i % per_col);
        let cx = right - (col as f64 + 0.5) * cell_w;
        let cy = top + (row as f64 + 0.5) * glyph + col as f64 * style.stagger * glyph;
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
    blur(&super::still::gray_f32(
        &canvas,
        Size::new(MATCH_W_PX, MATCH_H_PX),
    )?)
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

    /// The template of `poem` in style `style` (32-bit gray, match size).
    pub fn template(&self, style: usize, poem: u8) -> Option<&Mat> {
        self.templates
            .get(style)?
            .get((poem as usize).checked_sub(1)?)
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

    /// Names the cards whose faces are given (image corners, clockwise from top-left
    /// on screen); `flipped[i]` when card i's text reads upside down in the image (the
    /// far player's cards). `candidates` limits the poems considered (e.g. the cards
    /// known to have moved).
    pub fn name_cards(
        &self,
        bgr: &Mat,
        faces: &[QuadPx],
        flipped: &[bool],
        candidates: Option<&[u8]>,
    ) -> Result<Vec<CardName>, DetectError> {
        let all: Vec<u8> = (1..=POEM_COUNT).collect();
        let poems_considered = candidates.unwrap_or(&all);
        let mut gray = Mat::default();
        imgproc::cvt_color_def(bgr, &mut gray, imgproc::COLOR_BGR2GRAY)?;
        let mut gray_f = Mat::default();
        gray.convert_to(&mut gray_f, core::CV_32F, 1.0, 0.0)?;
        let mut views = Vec::with_capacity(faces.len());
        for (i, f) in faces.iter().enumerate() {
            views.push(rectify_face(
                &gray_f,
                f,
                flipped.get(i).copied().unwrap_or(false),
            )?);
        }
        let styles = self.choose_fonts(&views, poems_considered)?;
        let mut raw: Vec<Vec<f64>> = Vec::with_capacity(views.len());
        for v in &views {
            let mut row = Vec::with_capacity(poems_considered.len());
            for &p in poems_considered {
                row.push(self.score(v, &styles, p)?);
            }
            raw.push(row);
        }
        // Some texts correlate with any card (dense ink, long columns). Over a whole
        // field, most cards are not poem p, so the median over cards of p's score is
        // that poem's baseline: rank by the excess over it.
        let baseline: Vec<f64> = (0..poems_considered.len())
            .map(|k| {
                if raw.len() < BASELINE_MIN_CARDS {
                    return 0.0;
                }
                let mut col: Vec<f64> = raw.iter().map(|r| r[k]).collect();
                col.sort_by(|a, b| a.total_cmp(b));
                col[col.len() / 2]
            })
            .collect();
        let table: Vec<Vec<Candidate>> = raw
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let flipped = flipped.get(i).copied().unwrap_or(false);
                let mut row: Vec<Candidate> = r
                    .iter()
                    .zip(poems_considered)
                    .zip(&baseline)
                    .map(|((s, p), b)| Candidate {
                        poem: *p,
                        excess: s - b,
                        score: *s,
                        flipped,
                    })
                    .collect();
                row.sort_by(|a, b| b.excess.total_cmp(&a.excess));
                row
            })
            .collect();
        Ok(assign(&table))
    }

    /// The styles of the font (or fonts) that fit a sample of the cards best: a card set
    /// is printed in one font.
    fn choose_fonts(
        &self,
        views: &[Mat],
        poems_considered: &[u8],
    ) -> Result<Vec<usize>, DetectError> {
        let all: Vec<usize> = (0..self.templates.len()).collect();
        let n = views.len();
        if n == 0 || self.fonts.len() < 2 {
            return Ok(all);
        }
        let step = (n as f64 / FONT_SAMPLE_CARDS as f64).max(1.0);
        let sample: Vec<usize> = (0..FONT_SAMPLE_CARDS.min(n))
            .map(|k| ((k as f64 * step) as usize).min(n - 1))
            .collect();
        let mut means = Vec::new();
        for font in 0..self.fonts.len() {
            let styles: Vec<usize> = all
                .iter()
                .copied()
                .filter(|s| self.styles[*s].font == font)
                .collect();
            let mut total = 0.0;
            for &c in &sample {
                let mut best = f64::NEG_INFINITY;
                for &p in poems_considered {
                    best = best.max(self.score(&views[c], &styles, p)?);
                }
                total += best;
            }
            means.push((font, total / sample.len() as f64));
        }
        let top = means.iter().map(|m| m.1).fold(f64::NEG_INFINITY, f64::max);
        let fonts: Vec<usize> = means
            .iter()
            .filter(|m| m.1 >= top - FONT_KEEP_MARGIN)
            .map(|m| m.0)
            .collect();
        Ok(all
            .into_iter()
            .filter(|s| fonts.contains(&self.styles[*s].font))
            .collect())
    }
}

#[derive(Debug, Clone, Copy)]
struct Candidate {
    poem: u8,
    /// Correlation above the poem's baseline over the field.
    excess: f64,
    score: f64,
    flipped: bool,
}

/// Gives each poem to at most one card. A card is named when its best poem correlates
/// well and leads every other poem still open to it (by excess over the baseline); a
/// poem confidently given to another card is no longer open (the field holds each poem
/// once), so names settle over a few rounds, clearest first. The rest keep no name.
fn assign(table: &[Vec<Candidate>]) -> Vec<CardName> {
    let mut named: Vec<Option<u8>> = vec![None; table.len()];
    loop {
        let taken: std::collections::HashSet<u8> = named.iter().flatten().copied().collect();
        let mut pick: Option<(usize, u8, f64)> = None;
        for (c, row) in table.iter().enumerate() {
            if named[c].is_some() {
                continue;
            }
            let mut open = row.iter().filter(|k| !taken.contains(&k.poem));
            let Some(best) = open.next() else {
                continue;
            };
            let second = open.next().map(|k| k.excess).unwrap_or(f64::NEG_INFINITY);
            let margin = best.excess - second;
            if best.score >= MIN_SCORE
                && margin >= MIN_MARGIN
                && pick.is_none_or(|(_, _, m)| margin > m)
            {
                pick = Some((c, best.poem, margin));
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
                .and_then(|p| row.iter().find(|k| k.poem == p))
                .or_else(|| row.first());
            let Some(best) = best else {
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
                .find(|k| k.poem != best.poem)
                .map(|k| (k.poem, k.score));
            CardName {
                poem,
                best_poem: best.poem,
                score: best.score,
                runner_up,
                flipped: best.flipped,
            }
        })
        .collect()
}

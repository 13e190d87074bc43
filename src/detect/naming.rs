//! Naming a card by its printed shimo-no-ku.
//!
//! Each face is rectified to a small canonical image, turned for the far player's cards
//! (they face the other way), and compared by normalised correlation, over a few pixels
//! of shift, with templates of all 100 torifuda texts rendered from the installed
//! Japanese fonts in several column layouts; a card's score for a poem is its best over
//! the layouts, and a sample of cards chooses the font of the set. Absolute
//! correlations depend on the typeface, the ink and the blur, so names are decided in
//! the field's own terms: every score is measured against the card's scores for the
//! poems it is not (a robust z-score), the field holds each poem once, so the cards get
//! the best one-to-one assignment (Hungarian, `pathfinding::kuhn_munkres`), and a card
//! is named only when its poem stands far outside its non-matching scores and the
//! assignment would lose clearly without that pair; otherwise it keeps no name rather
//! than a guess. Reads images; writes nothing; knows nothing of the field frame.

use super::{DetectError, QuadPx};
use crate::rules::poems::{self, POEM_COUNT};
use opencv::core::{self, Mat, Point, Point2f, Scalar, Size, Vector};
use opencv::prelude::*;
use opencv::{freetype, imgproc};
use pathfinding::kuhn_munkres::kuhn_munkres;
use pathfinding::matrix::Matrix;
use rayon::prelude::*;
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
/// The fonts templates are rendered in, when installed (Debian packages
/// fonts-ipafont-mincho, fonts-ipafont-gothic, fonts-sawarabi-mincho,
/// fonts-aoyagi-kouzan-t (brush), fonts-motoya-l-cedar): printed Mincho and Gothic, a
/// thin modern Mincho, brush writing and a hand-drawn Gothic.
pub const FONT_PATHS: [&str; 5] = [
    "/usr/share/fonts/opentype/ipafont-mincho/ipam.ttf",
    "/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf",
    "/usr/share/fonts/truetype/sawarabi-mincho/sawarabi-mincho-medium.ttf",
    "/usr/share/fonts/truetype/aoyagi-kouzan-t/AoyagiKouzanT.ttf",
    "/usr/share/fonts/truetype/motoya-l-cedar/MTLc3m.ttf",
];
/// Faces kept out of the templates and out of every threshold's tuning, to test on
/// (fonts-noto-cjk, fonts-motoya-l-maruberi (rounded), fonts-aoyagi-soseki (brush)).
pub const HELD_OUT_FONT_PATHS: [&str; 3] = [
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/truetype/motoya-l-maruberi/MTLmr3m.ttf",
    "/usr/share/fonts/truetype/aoyagi-soseki/aoyagi-soseki.ttf",
];
/// A name is given only when the card's assigned poem stands out of the scores of the
/// poems it is not: its robust z-score (see `field_scores`) at least this many spreads
/// above the field's typical best non-matching score (the median over the cards of
/// each card's best z-score among the poems other than its own)...
pub const MIN_Z_ABOVE_RUNNERS: f64 = 1.0;
/// ...and never under this many spreads (the expected best of 99 normal scores is 2.5);
pub const MIN_Z: f64 = 4.0;
/// ...and the best one-to-one assignment of the whole field loses at least this much
/// (in the same units) when this card may not have this poem, and the poem leads every
/// poem that cannot be here (not a candidate: on the field elsewhere) by as much.
pub const MIN_GAP_Z: f64 = 1.0;
/// Cards sampled to choose the font of the set, and how close to the best font another
/// must come (share of the best font's mean z-score) to be kept as well.
const FONT_SAMPLE_CARDS: usize = 8;
const FONT_KEEP_SHARE: f64 = 0.85;
/// At most this many fonts are kept for the whole field.
const FONT_KEEP_MAX: usize = 2;
/// Poem baselines are only estimated over at least this many cards.
const BASELINE_MIN_CARDS: usize = 10;
/// The smallest spread a card's scores are divided by (correlation units).
const MIN_SPREAD: f64 = 0.005;
/// Fixed-point scale of the assignment's weights.
const WEIGHT_SCALE: f64 = 1000.0;
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
    /// The best-matching poem (the one the field's assignment gives this card, else the
    /// card's own best) and its correlation, named or not.
    pub best_poem: u8,
    pub score: f64,
    /// The best other poem and its correlation.
    pub runner_up: Option<(u8, f64)>,
    /// True when the text reads upside down in the image.
    pub flipped: bool,
    /// How far `best_poem` stands above the card's scores for the other poems, in
    /// spreads of those scores (robust z-score).
    pub z: f64,
    /// What the field's best one-to-one assignment loses when this card may not have
    /// `best_poem`, in the same units: the card's confidence.
    pub gap_z: f64,
    /// The runner-up's z-score.
    pub runner_up_z: f64,
}

/// A template ready for correlation: zero mean, unit norm, row-major at match size.
struct Prepared {
    data: Vec<f32>,
}

/// A rectified face ready for correlation: its pixels and, for every shift, the norm of
/// the zero-mean window under the template.
struct View {
    data: Vec<f32>,
    norms: Vec<f32>,
}

const VIEW_W: usize = (MATCH_W_PX + 2 * SHIFT_PX) as usize;
const TPL_W: usize = MATCH_W_PX as usize;
const TPL_H: usize = MATCH_H_PX as usize;
const SHIFTS: usize = (2 * SHIFT_PX + 1) as usize;

fn mat_f32(m: &Mat) -> Result<Vec<f32>, DetectError> {
    let c = if m.is_continuous() {
        m.clone()
    } else {
        m.try_clone()?
    };
    Ok(c.data_typed::<f32>()?.to_vec())
}

impl Prepared {
    fn new(m: &Mat) -> Result<Prepared, DetectError> {
        let mut data = mat_f32(m)?;
        let n = data.len().max(1) as f64;
        let mean = data.iter().map(|v| *v as f64).sum::<f64>() / n;
        let norm = data
            .iter()
            .map(|v| (*v as f64 - mean).powi(2))
            .sum::<f64>()
            .sqrt();
        let inv = if norm > 1e-9 { 1.0 / norm } else { 0.0 };
        for v in &mut data {
            *v = ((*v as f64 - mean) * inv) as f32;
        }
        Ok(Prepared { data })
    }
}

impl View {
    fn new(m: &Mat) -> Result<View, DetectError> {
        let data = mat_f32(m)?;
        let n = (TPL_W * TPL_H) as f64;
        let mut norms = Vec::with_capacity(SHIFTS * SHIFTS);
        for dy in 0..SHIFTS {
            for dx in 0..SHIFTS {
                let (mut s, mut s2) = (0.0f64, 0.0f64);
                for r in 0..TPL_H {
                    let row = &data[(dy + r) * VIEW_W + dx..][..TPL_W];
                    for v in row {
                        s += *v as f64;
                        s2 += (*v as f64) * (*v as f64);
                    }
                }
                norms.push((s2 - s * s / n).max(0.0).sqrt() as f32);
            }
        }
        Ok(View { data, norms })
    }

    /// Normalised correlation with a prepared template, best over the shifts (what
    /// `matchTemplate` with `TM_CCOEFF_NORMED` gives, computed directly: the template
    /// has zero mean, so the window's mean drops out of the numerator).
    fn ncc(&self, t: &Prepared) -> f64 {
        let mut best = f32::NEG_INFINITY;
        for dy in 0..SHIFTS {
            for dx in 0..SHIFTS {
                let norm = self.norms[dy * SHIFTS + dx];
                if norm <= 1e-6 {
                    continue;
                }
                let mut acc = [0.0f32; 16];
                for r in 0..TPL_H {
                    let w = &self.data[(dy + r) * VIEW_W + dx..][..TPL_W];
                    let tr = &t.data[r * TPL_W..][..TPL_W];
                    for (wc, tc) in w.chunks_exact(16).zip(tr.chunks_exact(16)) {
                        for k in 0..16 {
                            acc[k] += wc[k] * tc[k];
                        }
                    }
                }
                let v = acc.iter().sum::<f32>() / norm;
                best = best.max(v);
            }
        }
        if best.is_finite() {
            best as f64
        } else {
            0.0
        }
    }
}

/// Rendered templates for every poem in every style.
pub struct Namer {
    styles: Vec<TextStyle>,
    /// templates[style][poem - 1]
    templates: Vec<Vec<Mat>>,
    prepared: Vec<Vec<Prepared>>,
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

fn median(v: &mut [f64]) -> f64 {
    crate::util::median(v).unwrap_or(0.0)
}

/// Scores normalised by the field's own distribution. `raw[card][poem]` is a card's
/// correlation with every poem (all 100). Some texts correlate with any card (dense
/// ink, long columns): over a field of at least `BASELINE_MIN_CARDS` cards, most cards
/// are not poem p, so the median over cards of p's score is that poem's baseline, and
/// the excess over it is what counts. Then each card's excesses are centred on their
/// median and divided by their robust spread (1.4826 x the median absolute deviation):
/// a card's 99 or so poems it is not form its own yardstick, whatever the typeface,
/// ink, blur or light made of the absolute correlations.
pub fn field_scores(raw: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let poems = raw.first().map_or(0, |r| r.len());
    let baseline: Vec<f64> = (0..poems)
        .map(|k| {
            if raw.len() < BASELINE_MIN_CARDS {
                return 0.0;
            }
            let mut col: Vec<f64> = raw.iter().map(|r| r[k]).collect();
            median(&mut col)
        })
        .collect();
    raw.iter()
        .map(|r| {
            let e: Vec<f64> = r.iter().zip(&baseline).map(|(s, b)| s - b).collect();
            let centre = median(&mut e.clone());
            let mut dev: Vec<f64> = e.iter().map(|v| (v - centre).abs()).collect();
            let spread = (1.4826 * median(&mut dev)).max(MIN_SPREAD);
            e.iter().map(|v| (v - centre) / spread).collect()
        })
        .collect()
}

/// The best one-to-one assignment of cards to candidate poems (each poem on at most
/// one card; a card may also get none), maximising the summed z-scores, and each
/// card's gap: how much that sum drops when this card may not have its poem (solved
/// again with the pair forbidden). `z[card][k]` is the card's z-score for
/// `candidates[k]`. Returns, per card, the assigned candidate index (or `None`) and
/// the gap.
pub fn assign_field(z: &[Vec<f64>]) -> Vec<(Option<usize>, f64)> {
    let n = z.len();
    let m = z.first().map_or(0, |r| r.len());
    if n == 0 {
        return Vec::new();
    }
    // Columns: the candidates, then one "no poem" column per card (weight 0).
    let cols = m + n;
    let weight = |v: f64| (v * WEIGHT_SCALE).round().clamp(-1e12, 1e12) as i64;
    let mut w = Matrix::new(n, cols, 0i64);
    for (i, row) in z.iter().enumerate() {
        for (k, v) in row.iter().enumerate() {
            w[(i, k)] = weight(*v);
        }
    }
    let (total, assigned) = kuhn_munkres(&w);
    const FORBIDDEN: i64 = -1_000_000_000_000;
    assigned
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            if k >= m {
                return (None, 0.0);
            }
            let keep = w[(i, k)];
            let mut forbid = w.clone();
            forbid[(i, k)] = FORBIDDEN;
            let (alt, _) = kuhn_munkres(&forbid);
            let _ = keep;
            (Some(k), (total - alt) as f64 / WEIGHT_SCALE)
        })
        .collect()
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
        let mut prepared = Vec::with_capacity(styles.len());
        for style in &styles {
            let Some(ft) = engines.get_mut(style.font) else {
                continue;
            };
            let mut per_poem = Vec::with_capacity(texts.len());
            let mut per_poem_prepared = Vec::with_capacity(texts.len());
            for t in &texts {
                let m = render(ft, t, style)?;
                per_poem_prepared.push(Prepared::new(&m)?);
                per_poem.push(m);
            }
            templates.push(per_poem);
            prepared.push(per_poem_prepared);
        }
        Ok(Namer {
            styles,
            templates,
            prepared,
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
    fn score(&self, face: &View, styles: &[usize], poem: u8) -> f64 {
        let mut best = f64::NEG_INFINITY;
        for &s in styles {
            if let Some(t) = self.prepared.get(s).and_then(|v| v.get(poem as usize - 1)) {
                best = best.max(face.ncc(t));
            }
        }
        best
    }

    fn views(
        &self,
        bgr: &Mat,
        faces: &[QuadPx],
        flipped: &[bool],
    ) -> Result<Vec<View>, DetectError> {
        let mut gray = Mat::default();
        imgproc::cvt_color_def(bgr, &mut gray, imgproc::COLOR_BGR2GRAY)?;
        let mut gray_f = Mat::default();
        gray.convert_to(&mut gray_f, core::CV_32F, 1.0, 0.0)?;
        let mut views = Vec::with_capacity(faces.len());
        for (i, f) in faces.iter().enumerate() {
            views.push(View::new(&rectify_face(
                &gray_f,
                f,
                flipped.get(i).copied().unwrap_or(false),
            )?)?);
        }
        Ok(views)
    }

    /// Every card's correlation with all 100 poems over the given styles.
    /// The cards are read in parallel (every core: naming a layout is the longest step
    /// before the match can be followed).
    fn raw_scores(&self, views: &[View], styles: &[usize]) -> Vec<Vec<f64>> {
        views
            .par_iter()
            .map(|v| (1..=POEM_COUNT).map(|p| self.score(v, styles, p)).collect())
            .collect()
    }

    /// Names the cards whose faces are given (image corners, clockwise from top-left
    /// on screen); `flipped[i]` when card i's text reads upside down in the image (the
    /// far player's cards). `candidates` limits the poems a card may be given (e.g.
    /// the poems of the cards known to have moved); the scores are still normalised
    /// against all 100 poems.
    pub fn name_cards(
        &self,
        bgr: &Mat,
        faces: &[QuadPx],
        flipped: &[bool],
        candidates: Option<&[u8]>,
    ) -> Result<Vec<CardName>, DetectError> {
        let views = self.views(bgr, faces, flipped)?;
        let styles = self.choose_fonts(&views);
        let raw = self.raw_scores(&views, &styles);
        let flips: Vec<bool> = (0..faces.len())
            .map(|i| flipped.get(i).copied().unwrap_or(false))
            .collect();
        Ok(name_field(&raw, &flips, candidates))
    }

    /// Every card's correlation with the 100 poems (`[card][poem - 1]`) and the styles
    /// the sample of cards chose; `styles` reuses an earlier choice (the same card set
    /// seen again in another still image).
    pub fn raw_scores_in(
        &self,
        bgr: &Mat,
        faces: &[QuadPx],
        flipped: &[bool],
        styles: Option<&[usize]>,
    ) -> Result<(Vec<Vec<f64>>, Vec<usize>), DetectError> {
        let views = self.views(bgr, faces, flipped)?;
        let styles = self.styles_for(&views, styles);
        Ok((self.raw_scores(&views, &styles), styles))
    }

    /// Like `name_cards` for cards that may lie either way up (found again after a
    /// move): each card is read both ways and keeps the way its best candidate stands
    /// out more; then the field's assignment names them among `candidates`. `styles`
    /// reuses an earlier choice of typeface (the layout's: the same card set), else the
    /// cards given choose it.
    pub fn name_cards_either_way(
        &self,
        bgr: &Mat,
        faces: &[QuadPx],
        candidates: Option<&[u8]>,
        styles: Option<&[usize]>,
    ) -> Result<Vec<CardName>, DetectError> {
        let up = self.views(bgr, faces, &vec![false; faces.len()])?;
        let down = self.views(bgr, faces, &vec![true; faces.len()])?;
        let mut both: Vec<View> = Vec::with_capacity(2 * faces.len());
        both.extend(up);
        both.extend(down);
        let styles = self.styles_for(&both, styles);
        let raw = self.raw_scores(&both, &styles);
        let z = field_scores(&raw);
        let n = faces.len();
        let cand: Vec<usize> = candidate_columns(candidates);
        let best_z = |i: usize| {
            cand.iter()
                .map(|&k| z[i][k])
                .fold(f64::NEG_INFINITY, f64::max)
        };
        let mut rows = Vec::with_capacity(n);
        let mut flips = Vec::with_capacity(n);
        for i in 0..n {
            let down_better = best_z(n + i) > best_z(i);
            rows.push(raw[if down_better { n + i } else { i }].clone());
            flips.push(down_better);
        }
        Ok(name_field(&rows, &flips, candidates))
    }

    /// The styles to read `views` in: an earlier choice when given (the same card set
    /// seen again), else `choose_fonts`.
    fn styles_for(&self, views: &[View], styles: Option<&[usize]>) -> Vec<usize> {
        match styles {
            Some(s) => s.to_vec(),
            None => self.choose_fonts(views),
        }
    }

    /// The styles of the font (or fonts) that fit a sample of the cards best: a card set
    /// is printed in one font. A font fits when a card's best poem stands out from its
    /// other poems (mean z-score of the best poem over the sample), not when its
    /// correlations are high: heavy brush strokes correlate with anything.
    fn choose_fonts(&self, views: &[View]) -> Vec<usize> {
        let all: Vec<usize> = (0..self.prepared.len()).collect();
        let n = views.len();
        if n == 0 || self.fonts.len() < 2 {
            return all;
        }
        let step = (n as f64 / FONT_SAMPLE_CARDS as f64).max(1.0);
        let mut sample: Vec<usize> = (0..FONT_SAMPLE_CARDS.min(n))
            .map(|k| ((k as f64 * step) as usize).min(n - 1))
            .collect();
        sample.dedup();
        let mut means = Vec::new();
        for font in 0..self.fonts.len() {
            let styles: Vec<usize> = all
                .iter()
                .copied()
                .filter(|s| self.styles[*s].font == font)
                .collect();
            if styles.is_empty() {
                continue;
            }
            let raw: Vec<Vec<f64>> = sample
                .par_iter()
                .map(|&c| {
                    (1..=POEM_COUNT)
                        .map(|p| self.score(&views[c], &styles, p))
                        .collect()
                })
                .collect();
            let z = field_scores(&raw);
            let total: f64 = z
                .iter()
                .map(|r| r.iter().copied().fold(f64::NEG_INFINITY, f64::max))
                .sum();
            means.push((font, total / sample.len() as f64));
        }
        means.sort_by(|a, b| b.1.total_cmp(&a.1));
        let top = means.first().map_or(0.0, |m| m.1);
        let fonts: Vec<usize> = means
            .iter()
            .take(FONT_KEEP_MAX)
            .filter(|m| m.1 >= top * FONT_KEEP_SHARE)
            .map(|m| m.0)
            .collect();
        all.into_iter()
            .filter(|s| fonts.contains(&self.styles[*s].font))
            .collect()
    }
}

/// Column indices (poem - 1) of the candidate poems.
fn candidate_columns(candidates: Option<&[u8]>) -> Vec<usize> {
    match candidates {
        Some(c) => {
            let mut v: Vec<usize> = c
                .iter()
                .filter(|p| (1..=POEM_COUNT).contains(*p))
                .map(|p| *p as usize - 1)
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        }
        None => (0..POEM_COUNT as usize).collect(),
    }
}

/// Names a field from its raw scores (`raw[card][poem - 1]`, all 100 poems): z-scores
/// against the field's own distribution, the one-to-one assignment among the
/// candidates, and acceptance when the assigned poem stands far outside the card's
/// non-matching scores and the assignment would lose clearly without it.
pub fn name_field(raw: &[Vec<f64>], flipped: &[bool], candidates: Option<&[u8]>) -> Vec<CardName> {
    let z = field_scores(raw);
    let cand = candidate_columns(candidates);
    let zc: Vec<Vec<f64>> = z
        .iter()
        .map(|r| cand.iter().map(|&k| r[k]).collect())
        .collect();
    let assigned = assign_field(&zc);
    let is_candidate: Vec<bool> = {
        let mut v = vec![false; POEM_COUNT as usize];
        for &k in &cand {
            v[k] = true;
        }
        v
    };
    // The field's typical best non-matching score: per card, the best z among the
    // poems other than the one it is assigned (or its best); the median over cards.
    let mut runners: Vec<f64> = z
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let own = assigned.get(i).and_then(|a| a.0).map(|k| cand[k]);
            let own = own.unwrap_or_else(|| {
                (0..r.len())
                    .max_by(|a, b| r[*a].total_cmp(&r[*b]))
                    .unwrap_or(0)
            });
            r.iter()
                .enumerate()
                .filter(|(k, _)| *k != own)
                .map(|(_, v)| *v)
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .filter(|v| v.is_finite())
        .collect();
    let z_min = (median(&mut runners) + MIN_Z_ABOVE_RUNNERS).max(MIN_Z);
    raw.iter()
        .enumerate()
        .map(|(i, r)| {
            let mut order: Vec<usize> = cand.clone();
            order.sort_by(|a, b| z[i][*b].total_cmp(&z[i][*a]));
            let (slot, gap) = assigned.get(i).copied().unwrap_or((None, 0.0));
            let best = slot.map(|k| cand[k]).or_else(|| order.first().copied());
            let flipped = flipped.get(i).copied().unwrap_or(false);
            let Some(best) = best else {
                return CardName {
                    poem: None,
                    best_poem: 0,
                    score: 0.0,
                    runner_up: None,
                    flipped,
                    z: 0.0,
                    gap_z: 0.0,
                    runner_up_z: 0.0,
                };
            };
            let runner = order.iter().find(|k| **k != best).copied();
            let runner_up = runner.map(|k| (k as u8 + 1, r[k]));
            let outside = z[i]
                .iter()
                .enumerate()
                .filter(|(k, _)| !is_candidate[*k])
                .map(|(_, v)| *v)
                .fold(f64::NEG_INFINITY, f64::max);
            let gap = gap.min(z[i][best] - outside);
            let accepted = slot.is_some() && z[i][best] >= z_min && gap >= MIN_GAP_Z;
            CardName {
                poem: accepted.then_some(best as u8 + 1),
                best_poem: best as u8 + 1,
                score: r[best],
                runner_up,
                flipped,
                z: z[i][best],
                gap_z: gap,
                runner_up_z: runner.map_or(0.0, |k| z[i][k]),
            }
        })
        .collect()
}

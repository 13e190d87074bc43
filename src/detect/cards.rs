//! Finding cards as quadrilaterals in one (averaged, undistorted) image.
//!
//! A card is a pale face inside a coloured border, lying on tatami. The detector keys on
//! "whiteness" (the smallest of the white-balanced colour channels: high only for
//! near-white paper, low for tatami, coloured borders, ink and skin), not on any exact
//! colour: it thresholds that map at many levels, keeps the blobs that stay
//! quadrilateral with a card's aspect over several levels, sets the expected size from
//! the candidates' median, and refines each face edge to sub-pixel with a line fit on
//! the strongest edge across it. Then a blurred face-border-outside step model, fitted to
//! each side's mean colour profile, puts every face edge and the border's outer edge
//! where the blur-free picture has them; the border width comes from the short sides,
//! which face a row gap, and the card outline is the face grown by it. The outline sets
//! the field's scale, so a tenth of a pixel matters here.

use super::{DetectError, PointPx, QuadPx};
use crate::util::median;
use nalgebra::{Matrix3, Vector3};
use opencv::core::{self, Mat, Point, Point2f, Scalar, Size, Vector};
use opencv::imgproc;
use opencv::prelude::*;
use std::collections::HashMap;

/// Whiteness the paper is scaled to (out of 255), with headroom against clipping.
pub const PAPER_LEVEL: f64 = 200.0;
/// Threshold levels (on whiteness) at which blobs are collected.
const LEVELS: std::ops::RangeInclusive<i32> = 4..=19;
const LEVEL_STEP: i32 = 10;
/// Blob size limits as fractions of the image area, before the scale is known.
const MIN_FACE_AREA_FRAC: f64 = 0.0001;
const MAX_FACE_AREA_FRAC: f64 = 0.03;
/// Short over long side of a face: cards are 52 x 73 mm with a border of a few mm.
const FACE_ASPECT_MIN: f64 = 0.5;
const FACE_ASPECT_MAX: f64 = 0.9;
/// Blob area over its quadrilateral's area: a face is solid once ink holes are ignored.
const MIN_RECTANGULARITY: f64 = 0.88;
/// A card must stay a valid blob over this many threshold levels.
const MIN_STABLE_LEVELS: usize = 2;
/// Accepted face areas relative to the median face area.
const AREA_RATIO_MIN: f64 = 0.6;
const AREA_RATIO_MAX: f64 = 1.6;
/// Edge search half-width as a fraction of the face's short side (and at least this in px).
const EDGE_SEARCH_FRAC: f64 = 0.08;
const EDGE_SEARCH_MIN_PX: f64 = 3.0;
/// Step between samples along a profile, px.
const PROFILE_STEP_PX: f64 = 0.25;
/// Fraction of each edge near the corners left out of the line fit.
const EDGE_END_MARGIN: f64 = 0.15;
/// How far beyond the face edge the border may reach, as a fraction of the face's long side.
const BORDER_SEARCH_FRAC: f64 = 0.14;
/// Accepted border width (fraction of face long side) and the agreement it needs.
const BORDER_RATIO_MAX: f64 = 0.12;
/// Narrowest border the step model may fit, px.
const BORDER_MIN_WIDTH_PX: f64 = 0.5;
/// How far the step model may move the face edge, px, and the blur it may take.
const STEP_FACE_RANGE_PX: f64 = 1.0;
const STEP_SIGMA_PX: (f64, f64) = (0.4, 2.5);
/// The step model's normal equations with a determinant below this cannot tell the three
/// levels apart (the two edges, or an edge and the profile's end, coincide).
const STEP_SINGULAR_DET: f64 = 1e-12;
/// Tatami profiled beyond the farthest border edge, px, for the model's outside level.
const BORDER_OUTSIDE_PX: f64 = 3.0;
/// Face profiled inside its edge for the model's face level: at most this many px, and at
/// most this fraction of the face's long side (the text begins a little further in).
const BORDER_INSIDE_PX: f64 = 4.0;
const BORDER_INSIDE_FRAC: f64 = 0.055;
/// Two opposite short edges whose borders differ by more than this (px) are taken at the
/// narrower one: a shadow widens the side away from the light.
const BORDER_AGREE_PX: f64 = 0.3;
/// A face side shorter than this fraction of the long side is a short side.
const SHORT_SIDE_FRAC: f64 = 0.85;

/// One card found in the image. Corners run clockwise on screen, starting at the
/// top-left of the card as it stands upright in the image (its long side vertical).
#[derive(Debug, Clone, PartialEq)]
pub struct FoundCard {
    /// The pale face inside the border.
    pub face_px: QuadPx,
    /// The card's outline (face plus border).
    pub card_px: QuadPx,
}

impl FoundCard {
    pub fn centre_px(&self) -> PointPx {
        centre(&self.card_px)
    }
}

pub fn centre(q: &QuadPx) -> PointPx {
    let (sx, sy) = q.iter().fold((0.0, 0.0), |(x, y), p| (x + p[0], y + p[1]));
    [sx / 4.0, sy / 4.0]
}

/// The distance between two image points, px.
pub fn dist(a: PointPx, b: PointPx) -> f64 {
    (a[0] - b[0]).hypot(a[1] - b[1])
}

/// Short and long side lengths of a quad (means of opposite sides).
pub fn side_lengths(q: &QuadPx) -> (f64, f64) {
    let s01 = (dist(q[0], q[1]) + dist(q[2], q[3])) / 2.0;
    let s12 = (dist(q[1], q[2]) + dist(q[3], q[0])) / 2.0;
    (s01.min(s12), s01.max(s12))
}

/// The area enclosed by a quad, px².
pub fn quad_area(q: &QuadPx) -> f64 {
    let mut a = 0.0;
    for i in 0..4 {
        let (p, n) = (q[i], q[(i + 1) % 4]);
        a += p[0] * n[1] - n[0] * p[1];
    }
    a.abs() / 2.0
}

/// Orders four corners clockwise on screen starting top-left, with edge 0-1 a short
/// edge (the card's top as it stands in the image).
pub fn order_upright(q: QuadPx) -> QuadPx {
    let c = centre(&q);
    let mut pts = q;
    // Clockwise on screen (y down) = increasing atan2(y, x).
    pts.sort_by(|a, b| {
        let aa = (a[1] - c[1]).atan2(a[0] - c[0]);
        let ab = (b[1] - c[1]).atan2(b[0] - c[0]);
        aa.total_cmp(&ab)
    });
    // Start so that edge 0-1 is short and lies on top.
    let mut best = 0;
    let mut best_key = f64::INFINITY;
    for s in 0..4 {
        let a = pts[s];
        let b = pts[(s + 1) % 4];
        let len = dist(a, b);
        let other = dist(pts[(s + 1) % 4], pts[(s + 2) % 4]);
        let mid_y = (a[1] + b[1]) / 2.0;
        // Short edges first, then the upper one; the start is its left end.
        let key = if len <= other { 0.0 } else { 1e9 } + mid_y;
        if key < best_key {
            best_key = key;
            best = s;
        }
    }
    let mut out = [
        pts[best],
        pts[(best + 1) % 4],
        pts[(best + 2) % 4],
        pts[(best + 3) % 4],
    ];
    if out[0][0] > out[1][0] {
        // The "top-left" must be left of the top-right: walk the other way round.
        out = [out[1], out[0], out[3], out[2]];
    }
    out
}

/// Whiteness: the smallest white-balanced channel, 8-bit. Each channel is scaled so
/// that its 97th percentile maps to `PAPER_LEVEL`, which makes the paper white under any
/// light temperature as long as the cards cover a few percent of the view. The paper
/// must not clip: a clipped plateau would pull every edge's steepest point outwards.
pub fn whiteness(bgr: &Mat) -> Result<Mat, DetectError> {
    let mut channels = Vector::<Mat>::new();
    core::split(bgr, &mut channels)?;
    let mut out: Option<Mat> = None;
    for ch in channels.iter() {
        let p = percentile_u8(&ch, 0.97)?.max(16.0);
        let mut scaled = Mat::default();
        ch.convert_to(&mut scaled, core::CV_8U, PAPER_LEVEL / p, 0.0)?;
        out = Some(match out {
            None => scaled,
            Some(prev) => {
                let mut m = Mat::default();
                core::min(&prev, &scaled, &mut m)?;
                m
            }
        });
    }
    out.ok_or_else(|| DetectError::OpenCv(opencv::Error::new(core::StsBadArg, "no channels")))
}

/// The `q` quantile of an 8-bit single-channel image (the card tracker balances its
/// white with the same rule).
pub fn percentile_u8(ch: &Mat, q: f64) -> Result<f64, opencv::Error> {
    let mut hist = [0u64; 256];
    let c = if ch.is_continuous() {
        ch.clone()
    } else {
        ch.try_clone()?
    };
    for &v in c.data_bytes()? {
        hist[v as usize] += 1;
    }
    let total: u64 = hist.iter().sum();
    let target = (total as f64 * q) as u64;
    let mut acc = 0;
    for (v, n) in hist.iter().enumerate() {
        acc += n;
        if acc >= target {
            return Ok(v as f64);
        }
    }
    Ok(255.0)
}

#[derive(Debug, Clone)]
struct Blob {
    quad: QuadPx,
    centre: PointPx,
    area: f64,
    level: i32,
}

fn blobs_at_level(
    white: &Mat,
    level: i32,
    min_area: f64,
    max_area: f64,
) -> Result<Vec<Blob>, DetectError> {
    let mut bin = Mat::default();
    imgproc::threshold(white, &mut bin, level as f64, 255.0, imgproc::THRESH_BINARY)?;
    // A small opening parts faces that blur has bridged across a thin border.
    let kernel =
        imgproc::get_structuring_element(imgproc::MORPH_RECT, Size::new(3, 3), Point::new(-1, -1))?;
    let mut opened = Mat::default();
    imgproc::morphology_ex(
        &bin,
        &mut opened,
        imgproc::MORPH_OPEN,
        &kernel,
        Point::new(-1, -1),
        1,
        core::BORDER_CONSTANT,
        imgproc::morphology_default_border_value()?,
    )?;
    let mut contours = Vector::<Vector<Point>>::new();
    imgproc::find_contours(
        &opened,
        &mut contours,
        imgproc::RETR_EXTERNAL,
        imgproc::CHAIN_APPROX_SIMPLE,
        Point::new(0, 0),
    )?;
    let mut out = Vec::new();
    for c in contours.iter() {
        let area = imgproc::contour_area(&c, false)?;
        if area < min_area || area > max_area {
            continue;
        }
        let mut hull = Vector::<Point>::new();
        imgproc::convex_hull(&c, &mut hull, false, true)?;
        let rect = imgproc::min_area_rect(&hull)?;
        let mut pts = [Point2f::default(); 4];
        rect.points(&mut pts)?;
        let mut quad: QuadPx = pts.map(|p| [p.x as f64, p.y as f64]);
        // Perspective makes faces trapezoids: prefer a 4-vertex approximation of the hull.
        let peri = imgproc::arc_length(&hull, true)?;
        let mut approx = Vector::<Point>::new();
        imgproc::approx_poly_dp(&hull, &mut approx, 0.04 * peri, true)?;
        if approx.len() == 4 {
            let a: Vec<Point> = approx.to_vec();
            quad = [0, 1, 2, 3].map(|i| [a[i].x as f64, a[i].y as f64]);
        }
        let qa = quad_area(&quad);
        if qa <= 0.0 || area / qa < MIN_RECTANGULARITY {
            continue;
        }
        let (short, long) = side_lengths(&quad);
        let aspect = short / long;
        if !(FACE_ASPECT_MIN..=FACE_ASPECT_MAX).contains(&aspect) {
            continue;
        }
        out.push(Blob {
            centre: centre(&quad),
            quad,
            area: qa,
            level,
        });
    }
    Ok(out)
}

/// Groups blobs from all levels that sit on the same card; keeps groups seen at enough
/// levels, represented by the blob at their middle level.
fn stable_blobs(mut blobs: Vec<Blob>) -> Vec<Blob> {
    blobs.sort_by(|a, b| b.area.total_cmp(&a.area));
    let mut groups: Vec<Vec<Blob>> = Vec::new();
    for b in blobs {
        let r = 0.25 * b.area.sqrt();
        match groups.iter_mut().find(|g| {
            let h = &g[0];
            dist(h.centre, b.centre) < r && (b.area / h.area) > 0.6 && (b.area / h.area) < 1.67
        }) {
            Some(g) => g.push(b),
            None => groups.push(vec![b]),
        }
    }
    groups
        .into_iter()
        .filter_map(|mut g| {
            g.sort_by_key(|b| b.level);
            g.dedup_by_key(|b| b.level);
            (g.len() >= MIN_STABLE_LEVELS).then(|| g[g.len() / 2].clone())
        })
        .collect()
}

/// Samples `img` (CV_32F, one channel or several) at the given points, bilinear.
fn sample(img: &Mat, pts: &[[f32; 2]]) -> Result<Mat, DetectError> {
    let xs: Vec<f32> = pts.iter().map(|p| p[0]).collect();
    let ys: Vec<f32> = pts.iter().map(|p| p[1]).collect();
    let mx = Mat::from_slice(&xs)?;
    let my = Mat::from_slice(&ys)?;
    let mut out = Mat::default();
    imgproc::remap(
        img,
        &mut out,
        &mx,
        &my,
        imgproc::INTER_LINEAR,
        core::BORDER_REPLICATE,
        Scalar::all(0.0),
    )?;
    Ok(out)
}

/// A line as point + unit direction.
#[derive(Debug, Clone, Copy)]
struct Line {
    p: PointPx,
    d: PointPx,
}

fn intersect(a: Line, b: Line) -> Option<PointPx> {
    let det = a.d[0] * b.d[1] - a.d[1] * b.d[0];
    if det.abs() < 1e-9 {
        return None;
    }
    let t = ((b.p[0] - a.p[0]) * b.d[1] - (b.p[1] - a.p[1]) * b.d[0]) / det;
    Some([a.p[0] + t * a.d[0], a.p[1] + t * a.d[1]])
}

/// Outward unit normal of edge i of a quad.
fn outward_normal(q: &QuadPx, i: usize) -> PointPx {
    let (a, b) = (q[i], q[(i + 1) % 4]);
    let len = dist(a, b).max(1e-9);
    let (dx, dy) = ((b[0] - a[0]) / len, (b[1] - a[1]) / len);
    let c = centre(q);
    let mid = [(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0];
    let n = [dy, -dx];
    if (mid[0] - c[0]) * n[0] + (mid[1] - c[1]) * n[1] >= 0.0 {
        n
    } else {
        [-n[0], -n[1]]
    }
}

/// Stations along edge i (one every `step_px`, their count clamped to `count`, the ends
/// left out) and the sample points at `offsets` along the outward normal of each.
fn edge_stations(
    q: &QuadPx,
    i: usize,
    offsets: &[f64],
    step_px: f64,
    count: (f64, f64),
) -> (Vec<PointPx>, Vec<[f32; 2]>) {
    let (a, b) = (q[i], q[(i + 1) % 4]);
    let span = 1.0 - 2.0 * EDGE_END_MARGIN;
    let n_st = (dist(a, b) * span / step_px).clamp(count.0, count.1) as usize;
    let nrm = outward_normal(q, i);
    let mut stations = Vec::with_capacity(n_st);
    let mut pts = Vec::with_capacity(n_st * offsets.len());
    for s in 0..n_st {
        let f = EDGE_END_MARGIN + span * (s as f64 + 0.5) / n_st as f64;
        let p = [a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1])];
        stations.push(p);
        for &o in offsets {
            pts.push([(p[0] + o * nrm[0]) as f32, (p[1] + o * nrm[1]) as f32]);
        }
    }
    (stations, pts)
}

/// Profiles across edge i of a one-channel image: for each of `n` stations along the edge, samples at offsets
/// `offsets` along the outward normal. Returns (stations, values[station][offset]).
fn edge_profiles(
    img: &Mat,
    q: &QuadPx,
    i: usize,
    offsets: &[f64],
) -> Result<(Vec<PointPx>, Vec<Vec<f32>>), DetectError> {
    let (stations, pts) = edge_stations(q, i, offsets, 1.5, (6.0, 80.0));
    let n_st = stations.len();
    let m = sample(img, &pts)?;
    let ch = m.channels() as usize;
    let raw: &[f32] = m.data_typed()?;
    let mut values = Vec::with_capacity(n_st);
    for s in 0..n_st {
        let row: Vec<f32> = (0..offsets.len())
            .map(|k| {
                let base = (s * offsets.len() + k) * ch;
                raw[base..base + ch].iter().sum::<f32>()
            })
            .collect();
        values.push(row);
    }
    Ok((stations, values))
}

/// Sub-pixel position of the strongest falling step (inside bright, outside dark) in a
/// profile, as an offset.
fn falling_edge(values: &[f32], offsets: &[f64]) -> Option<f64> {
    let n = values.len();
    if n < 5 {
        return None;
    }
    let grad: Vec<f64> = (1..n - 1)
        .map(|k| (values[k - 1] - values[k + 1]) as f64)
        .collect();
    let (k, g) = grad
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(k, g)| (k, *g))?;
    if g <= 0.0 {
        return None;
    }
    let mut off = offsets[k + 1];
    if k > 0 && k + 1 < grad.len() {
        let (l, c, r) = (grad[k - 1], grad[k], grad[k + 1]);
        let den = l - 2.0 * c + r;
        if den.abs() > 1e-9 {
            off += (0.5 * (l - r) / den).clamp(-0.5, 0.5) * PROFILE_STEP_PX;
        }
    }
    Some(off)
}

fn fit_line(points: &[PointPx]) -> Result<Option<Line>, DetectError> {
    if points.len() < 4 {
        return Ok(None);
    }
    let v: Vector<Point2f> = points
        .iter()
        .map(|p| Point2f::new(p[0] as f32, p[1] as f32))
        .collect();
    let mut line = Vector::<f32>::new();
    imgproc::fit_line(&v, &mut line, imgproc::DIST_HUBER, 0.0, 0.01, 0.01)?;
    let l = line.to_vec();
    if l.len() < 4 {
        return Ok(None);
    }
    Ok(Some(Line {
        p: [l[2] as f64, l[3] as f64],
        d: [l[0] as f64, l[1] as f64],
    }))
}

fn offsets(from: f64, to: f64) -> Vec<f64> {
    let n = ((to - from) / PROFILE_STEP_PX).round() as usize + 1;
    (0..n).map(|k| from + k as f64 * PROFILE_STEP_PX).collect()
}

/// Moves each edge of the coarse face quad onto the strongest bright-to-dark step near
/// it, fits a line through those points and intersects neighbouring lines.
fn refine_face(white_f: &Mat, q: &QuadPx) -> Result<(QuadPx, [Line; 4]), DetectError> {
    let (short, _) = side_lengths(q);
    let r = (EDGE_SEARCH_FRAC * short).max(EDGE_SEARCH_MIN_PX);
    let offs = offsets(-r, r);
    let mut lines = [Line {
        p: [0.0; 2],
        d: [1.0, 0.0],
    }; 4];
    for i in 0..4 {
        let (stations, values) = edge_profiles(white_f, q, i, &offs)?;
        let nrm = outward_normal(q, i);
        let pts: Vec<PointPx> = stations
            .iter()
            .zip(&values)
            .filter_map(|(p, v)| {
                falling_edge(v, &offs).map(|o| [p[0] + o * nrm[0], p[1] + o * nrm[1]])
            })
            .collect();
        let (a, b) = (q[i], q[(i + 1) % 4]);
        let coarse = Line {
            p: a,
            d: {
                let l = dist(a, b).max(1e-9);
                [(b[0] - a[0]) / l, (b[1] - a[1]) / l]
            },
        };
        lines[i] = fit_line(&pts)?.unwrap_or(coarse);
    }
    let mut out = *q;
    for i in 0..4 {
        if let Some(p) = intersect(lines[(i + 3) % 4], lines[i]) {
            if dist(p, q[i]) < 2.0 * r + 2.0 {
                out[i] = p;
            }
        }
    }
    Ok((out, lines))
}

/// Where the face and the border end across face edge i, px from the face line: the edges of a
/// blurred three-level step model (face, border, outside) fitted to the edge's mean
/// colour profile. The strongest gradient would not do: blur pulls the two steps of a
/// thin border apart, so a gradient peak lies outside the true edge.
fn border_step(
    bgr_f: &Mat,
    face: &QuadPx,
    i: usize,
    max_px: f64,
    inside_px: f64,
) -> Result<Option<StepFit>, DetectError> {
    let offs = offsets(-inside_px, max_px + BORDER_OUTSIDE_PX);
    let (_, values) = edge_profiles_multi(bgr_f, face, i, &offs)?;
    if values.is_empty() {
        return Ok(None);
    }
    let n = offs.len();
    let mut mean = vec![[0.0f64; 3]; n];
    for v in &values {
        for (m, x) in mean.iter_mut().zip(v) {
            for c in 0..3 {
                m[c] += x[c] as f64 / values.len() as f64;
            }
        }
    }
    Ok(fit_border_step(&offs, &mean, max_px))
}

/// A fitted face-border-outside step.
#[derive(Debug, Clone, Copy)]
struct StepFit {
    /// The face's edge and the border's outer edge, px along the outward normal.
    face_px: f64,
    outer_px: f64,
}

/// Blurred unit step: a logistic close to the Gaussian's integral, symmetric like it, so
/// the fitted positions are those of the edges.
fn soft_step(x: f64, sigma: f64) -> f64 {
    1.0 / (1.0 + (-1.702 * x / sigma).exp())
}

/// Residual of the three-level model whose soft steps at the two edges are `s1` and `s2`
/// (`soft_step(offset - edge, sigma)` at each offset of `profile`): the levels of each
/// channel are solved by least squares.
fn step_residual(s1: &[f64], s2: &[f64], profile: &[[f64; 3]]) -> f64 {
    let mut ata = Matrix3::<f64>::zeros();
    let mut atb = Matrix3::<f64>::zeros();
    let row = |k: usize| Vector3::new(1.0 - s1[k], s1[k] - s2[k], s2[k]);
    for (k, y) in profile.iter().enumerate() {
        let a = row(k);
        ata += a * a.transpose();
        atb += a * Vector3::from(*y).transpose();
    }
    if ata.determinant().abs() < STEP_SINGULAR_DET {
        return f64::INFINITY;
    }
    let Some(inv) = ata.try_inverse() else {
        return f64::INFINITY;
    };
    // Row `level`, column `channel`.
    let levels = inv * atb;
    profile
        .iter()
        .enumerate()
        .map(|(k, y)| (levels.transpose() * row(k) - Vector3::from(*y)).norm_squared())
        .sum()
}

/// Fits the step model: a coarse grid over the face edge, the border width and the blur,
/// then a finer grid around the best.
fn fit_border_step(offs: &[f64], profile: &[[f64; 3]], max_px: f64) -> Option<StepFit> {
    let grid = |lo: f64, hi: f64, step: f64| -> Vec<f64> {
        let n = ((hi - lo) / step).round().max(0.0) as usize;
        (0..=n).map(|k| lo + k as f64 * step).collect()
    };
    type Best = Option<(f64, f64, f64, f64)>;
    // The soft step at every offset, by edge and blur: the grids share their edges, so
    // each column is worked out once.
    let mut steps: HashMap<(u64, u64), Vec<f64>> = HashMap::new();
    let mut search = |best: &mut Best, e1s: Vec<f64>, ws: Vec<f64>, sigmas: Vec<f64>| {
        for &e1 in &e1s {
            for &w in &ws {
                if w < BORDER_MIN_WIDTH_PX || e1 + w > max_px {
                    continue;
                }
                for &sg in &sigmas {
                    for e in [e1, e1 + w] {
                        steps.entry((e.to_bits(), sg.to_bits())).or_insert_with(|| {
                            offs.iter().map(|&x| soft_step(x - e, sg)).collect()
                        });
                    }
                    let s1 = &steps[&(e1.to_bits(), sg.to_bits())];
                    let s2 = &steps[&((e1 + w).to_bits(), sg.to_bits())];
                    let r = step_residual(s1, s2, profile);
                    if best.is_none_or(|b| r < b.3) {
                        *best = Some((e1, w, sg, r));
                    }
                }
            }
        }
    };
    let mut best: Best = None;
    search(
        &mut best,
        grid(-STEP_FACE_RANGE_PX, STEP_FACE_RANGE_PX, 0.25),
        grid(BORDER_MIN_WIDTH_PX, max_px, 0.25),
        grid(STEP_SIGMA_PX.0, STEP_SIGMA_PX.1, 0.25),
    );
    let (e1, w, sg, _) = best?;
    search(
        &mut best,
        grid(e1 - 0.25, e1 + 0.25, 0.05),
        grid(w - 0.25, w + 0.25, 0.05),
        grid((sg - 0.25).max(STEP_SIGMA_PX.0), sg + 0.25, 0.05),
    );
    let (e1, w, _, _) = best?;
    Some(StepFit {
        face_px: e1,
        outer_px: e1 + w,
    })
}

/// Like `edge_profiles` but keeps the channels apart: values[station][offset][channel].
#[allow(clippy::type_complexity)]
fn edge_profiles_multi(
    img: &Mat,
    q: &QuadPx,
    i: usize,
    offsets: &[f64],
) -> Result<(Vec<PointPx>, Vec<Vec<[f32; 3]>>), DetectError> {
    let (stations, pts) = edge_stations(q, i, offsets, 3.0, (4.0, 30.0));
    let n_st = stations.len();
    let m = sample(img, &pts)?;
    let raw: &[core::Vec3f] = m.data_typed()?;
    let values = (0..n_st)
        .map(|s| {
            (0..offsets.len())
                .map(|k| raw[s * offsets.len() + k].0)
                .collect()
        })
        .collect();
    Ok((stations, values))
}

/// Offsets each line outward by `by_px` and intersects them again.
fn grow(face: &QuadPx, lines: &[Line; 4], by_px: f64) -> QuadPx {
    let mut moved = *lines;
    for (i, l) in moved.iter_mut().enumerate() {
        let n = outward_normal(face, i);
        l.p = [l.p[0] + by_px * n[0], l.p[1] + by_px * n[1]];
    }
    let mut out = *face;
    for i in 0..4 {
        if let Some(p) = intersect(moved[(i + 3) % 4], moved[i]) {
            out[i] = p;
        }
    }
    out
}

/// Detection settings that a caller may know better than the defaults.
#[derive(Debug, Clone, Default)]
pub struct FindOptions {
    /// Expected face area in pixels, when the scale is already known (re-detection).
    pub expected_face_area_px: Option<f64>,
    /// The border's width over the face's long side, when the card set is already known
    /// (re-detection): then it is not measured again on the cards found.
    pub border_ratio: Option<f64>,
    /// Places not to look at (a centre and a radius, px): a card whose face centre lies
    /// there is not fitted or returned (re-detection skips the cards still in place).
    pub ignore_near: Vec<(PointPx, f64)>,
}

/// Finds every card in a BGR image (undistorted when intrinsics are known).
pub fn find_cards(bgr: &Mat, opts: &FindOptions) -> Result<Vec<FoundCard>, DetectError> {
    let white = whiteness(bgr)?;
    let mut white_blur = Mat::default();
    imgproc::gaussian_blur(
        &white,
        &mut white_blur,
        Size::new(3, 3),
        0.0,
        0.0,
        core::BORDER_DEFAULT,
    )?;
    let img_area = (bgr.cols() as f64) * (bgr.rows() as f64);
    let (min_a, max_a) = match opts.expected_face_area_px {
        Some(a) => (a * AREA_RATIO_MIN, a * AREA_RATIO_MAX),
        None => (img_area * MIN_FACE_AREA_FRAC, img_area * MAX_FACE_AREA_FRAC),
    };
    let mut blobs = Vec::new();
    for l in LEVELS {
        blobs.extend(blobs_at_level(&white_blur, l * LEVEL_STEP, min_a, max_a)?);
    }
    let mut stable = stable_blobs(blobs);
    let mut areas: Vec<f64> = stable.iter().map(|b| b.area).collect();
    let Some(med) = opts.expected_face_area_px.or_else(|| median(&mut areas)) else {
        return Ok(Vec::new());
    };
    stable.retain(|b| b.area >= med * AREA_RATIO_MIN && b.area <= med * AREA_RATIO_MAX);
    // Two survivors on the same spot: keep the one nearer the typical size.
    stable.sort_by(|a, b| {
        (a.area / med)
            .ln()
            .abs()
            .total_cmp(&(b.area / med).ln().abs())
    });
    let mut kept: Vec<Blob> = Vec::new();
    for b in stable {
        let r = 0.5 * b.area.sqrt();
        if kept.iter().all(|k| dist(k.centre, b.centre) > r) {
            kept.push(b);
        }
    }
    kept.retain(|b| opts.ignore_near.iter().all(|&(c, r)| dist(c, b.centre) > r));

    let mut white_f = Mat::default();
    white_blur.convert_to(&mut white_f, core::CV_32F, 1.0, 0.0)?;
    let mut refined = Vec::with_capacity(kept.len());
    for b in &kept {
        let q = order_upright(b.quad);
        let (face, lines) = refine_face(&white_f, &q)?;
        refined.push((order_upright(face), face, lines));
    }

    // Border: measured on the short edges, which face a row gap or the open tatami.
    let mut bgr_blur = Mat::default();
    imgproc::gaussian_blur(
        bgr,
        &mut bgr_blur,
        Size::new(3, 3),
        0.0,
        0.0,
        core::BORDER_DEFAULT,
    )?;
    let mut bgr_f = Mat::default();
    bgr_blur.convert_to(&mut bgr_f, core::CV_32FC3, 1.0, 0.0)?;
    // Each face edge is moved onto the fitted step (the strongest gradient sits a little
    // off it when the border is thin); the border's width is measured on the short
    // edges, which face a row gap or the open tatami, not a neighbour in the row.
    let mut ratios = Vec::new();
    let mut fits = Vec::with_capacity(refined.len());
    for (_, face, _) in &refined {
        let (_, long) = side_lengths(face);
        let max_px = BORDER_SEARCH_FRAC * long;
        let inside = BORDER_INSIDE_PX.min(BORDER_INSIDE_FRAC * long);
        let mut f = [None; 4];
        for (i, fi) in f.iter_mut().enumerate() {
            *fi = border_step(&bgr_f, face, i, max_px, inside)?;
        }
        if opts.border_ratio.is_some() {
            fits.push(f);
            continue;
        }
        let widths: Vec<f64> = (0..4)
            .filter(|&i| dist(face[i], face[(i + 1) % 4]) < SHORT_SIDE_FRAC * long)
            .filter_map(|i| f[i].map(|s: StepFit| s.outer_px - s.face_px))
            .collect();
        // A card's shadow widens the border on the side away from the light; the
        // narrower of two opposite edges that disagree is the border itself.
        let w = match widths[..] {
            [a, b] if (a - b).abs() > BORDER_AGREE_PX => Some(a.min(b)),
            [a, b] => Some(0.5 * (a + b)),
            [a] => Some(a),
            _ => None,
        };
        if let Some(w) = w {
            ratios.push(w / long);
        }
        fits.push(f);
    }
    let ratio = opts
        .border_ratio
        .or_else(|| median(&mut ratios))
        .filter(|r| *r <= BORDER_RATIO_MAX)
        .unwrap_or(0.0);

    let mut out = Vec::with_capacity(refined.len());
    for ((_, face, lines), f) in refined.into_iter().zip(fits) {
        let (_, long) = side_lengths(&face);
        let mut moved = lines;
        for (i, l) in moved.iter_mut().enumerate() {
            if let Some(fit) = f[i] {
                let n = outward_normal(&face, i);
                l.p = [l.p[0] + fit.face_px * n[0], l.p[1] + fit.face_px * n[1]];
            }
        }
        let card = order_upright(grow(&face, &moved, ratio * long));
        out.push(FoundCard {
            face_px: order_upright(grow(&face, &moved, 0.0)),
            card_px: card,
        });
    }
    out.sort_by(|a, b| {
        let (ca, cb) = (a.centre_px(), b.centre_px());
        (ca[1], ca[0])
            .partial_cmp(&(cb[1], cb[0]))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    Ok(out)
}

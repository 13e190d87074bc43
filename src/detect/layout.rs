//! The layout from a video: still frames -> undistort -> cards -> names -> the field
//! stage's registration -> `rules::Layout` and the image-to-field homography. When the
//! still stretch before the first reading is short, or a card stays unnamed, the still
//! stretches between readings add views of the cards still in place to name them.

use super::cards::{self, centre, side_lengths, FindOptions, FoundCard};
use super::naming::{self, CardName, Namer};
use super::relocate::CardScale;
use super::still::{self, LayoutFrames};
use super::{DetectError, QuadPx};
use crate::field::map::matrix_to_mat;
use crate::field::{self, CardQuad, Intrinsics};
use crate::rules::model::{CardPlacement, FieldSize, Layout};
use nalgebra::Matrix3;
use opencv::calib3d;
use opencv::core::Mat;
use opencv::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Fewer cards than this and the view shows no field.
pub const MIN_CARDS_FOR_FIELD: usize = 8;

/// One card of the measured layout with the evidence behind it.
#[derive(Debug, Clone)]
pub struct MeasuredCard {
    pub placement: CardPlacement,
    /// Card outline in undistorted pixels, in the card frame's corner order.
    pub quad: CardQuad,
    /// Card outline in the decoded frames' pixels, same order (for the motion monitor).
    pub raw_px: QuadPx,
    /// The face inside the border, undistorted pixels, clockwise from top-left on screen.
    pub face_px: QuadPx,
    pub name: CardName,
}

/// What `measure_layout` found.
pub struct MeasuredLayout {
    pub layout: Layout,
    /// Undistorted pixels -> field mm.
    pub image_to_field: Matrix3<f64>,
    pub cards: Vec<MeasuredCard>,
    /// Cards found in the image but left out by registration (not on the card grid).
    pub rejected: usize,
    pub image_size: [u32; 2],
    /// The averaged layout image as decoded (not undistorted).
    pub still: LayoutFrames,
    /// Later still stretches whose views helped name the cards (first frame, frames).
    pub more_stills: Vec<(usize, usize)>,
    /// Every found card's correlations with the 100 poems, summed over the still images
    /// that showed it in place, and how many did (found order).
    scores: NameScores,
}

impl MeasuredLayout {
    /// Names each card left unnamed whose best-matching poem is one of `read` (the poems
    /// the reader will read) and named nowhere else, when no other unnamed card matches
    /// that poem best: a poem read that no named card holds is on the field only if an
    /// unnamed card holds it, and that card's own best match says which. Returns the
    /// poems so named, with the card's score; their rulings are for a person to check.
    pub fn name_from_readings(&mut self, read: &[u8]) -> Vec<(u8, f64)> {
        let named: BTreeSet<u8> = self.cards.iter().filter_map(|c| c.placement.poem).collect();
        let mut best_of_unnamed: BTreeMap<u8, usize> = BTreeMap::new();
        for c in self.cards.iter().filter(|c| c.placement.poem.is_none()) {
            *best_of_unnamed.entry(c.name.best_poem).or_default() += 1;
        }
        let mut out = Vec::new();
        for (i, c) in self.cards.iter_mut().enumerate() {
            let best = c.name.best_poem;
            if c.placement.poem.is_some()
                || !read.contains(&best)
                || named.contains(&best)
                || best_of_unnamed.get(&best) != Some(&1)
            {
                continue;
            }
            c.placement.poem = Some(best);
            c.quad.poem = Some(best);
            if let Some(p) = self.layout.cards.get_mut(i) {
                p.poem = Some(best);
            }
            out.push((best, c.name.score));
        }
        out
    }

    /// Gives each card left unnamed the poems it may be (`CardPlacement::candidates`):
    /// the one the field's best one-to-one match gives it and its runner-up. A poem read
    /// that no named card holds and no unnamed card may be is, as far as the layout can
    /// tell, on no card: a dead card.
    pub fn note_candidates(&mut self) {
        for (i, c) in self.cards.iter_mut().enumerate() {
            if c.placement.poem.is_some() {
                continue;
            }
            let mut v = vec![c.name.best_poem];
            v.extend(c.name.runner_up.map(|(p, _)| p));
            v.retain(|p| (1..=crate::rules::poems::POEM_COUNT).contains(p));
            c.placement.candidates = v.clone();
            if let Some(p) = self.layout.cards.get_mut(i) {
                p.candidates = v;
            }
        }
    }

    /// The typeface styles the layout's cards were named in (`Namer`'s indices): a card
    /// set is printed in one typeface, so cards found again later are read in these.
    pub fn card_styles(&self) -> &[usize] {
        &self.scores.styles
    }

    /// The card set's scale as the layout measured it: the median face area and the
    /// median border width over the face's long side (a card set is cut and printed
    /// alike), so that cards found again are fitted to the same border.
    pub fn card_scale(&self) -> CardScale {
        let mut areas: Vec<f64> = self
            .cards
            .iter()
            .map(|c| cards::quad_area(&c.face_px))
            .collect();
        let mut ratios: Vec<f64> = self
            .cards
            .iter()
            .map(|c| {
                let (_, face) = side_lengths(&c.face_px);
                let (_, card) = side_lengths(&c.quad.corners_px);
                (card - face) / 2.0 / face.max(1.0)
            })
            .collect();
        CardScale {
            face_area_px: crate::util::median(&mut areas).unwrap_or(3000.0),
            border_ratio: crate::util::median(&mut ratios).map(|r| r.max(0.0)),
        }
    }
}

/// What naming needs to look at the cards again in another still image.
struct NameScores {
    faces: Vec<QuadPx>,
    flipped: Vec<bool>,
    styles: Vec<usize>,
    raw_sum: Vec<Vec<f64>>,
    views: Vec<usize>,
}

/// A later view's scores are added to a card's only when they rank the 100 poems alike
/// (correlation of the two score rows at least this): the same card, not another one
/// put in its place after a take or a send.
const SAME_CARD_MIN_ROW_CORR: f64 = 0.5;
/// A card in a later image within this share of its short side of its first place is
/// the card still in place.
const SAME_PLACE_FRAC: f64 = 0.25;
/// At most this many later still stretches are looked at.
const MAX_MORE_STILLS: usize = 2;

fn row_corr(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len()).max(1) as f64;
    let ma = a.iter().sum::<f64>() / n;
    let mb = b.iter().sum::<f64>() / n;
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma).powi(2);
        sbb += (y - mb).powi(2);
    }
    if saa <= 0.0 || sbb <= 0.0 {
        return 0.0;
    }
    sab / (saa * sbb).sqrt()
}

fn has_distortion(k: &Intrinsics) -> bool {
    k.dist_coeffs.iter().any(|d| *d != 0.0)
}

/// The image as a distortion-free camera with the same matrix would see it.
pub fn undistort_image(img: &Mat, k: &Intrinsics) -> Result<Mat, DetectError> {
    if !has_distortion(k) {
        return Ok(img.clone());
    }
    let km = matrix_to_mat(&k.camera_matrix)?;
    let dm = Mat::from_slice(&k.dist_coeffs)?.try_clone()?;
    let mut out = Mat::default();
    calib3d::undistort(img, &mut out, &km, &dm, &km)?;
    Ok(out)
}

/// An image outline (clockwise on screen from the top-left) in the card frame's order,
/// with player A at the bottom of the image: (-w/2,-h/2) is the bottom-left corner.
pub fn card_frame_order(q: &QuadPx) -> QuadPx {
    [q[3], q[2], q[1], q[0]]
}

fn registration_error(source: &Path, e: field::FieldError) -> DetectError {
    match e {
        field::FieldError::OpenCv(cv) => DetectError::OpenCv(cv),
        other => DetectError::Registration {
            path: source.to_path_buf(),
            problem: other.to_string(),
        },
    }
}

/// Measures the layout in an averaged still image (as decoded).
pub fn measure_image(
    source: &Path,
    still: LayoutFrames,
    intrinsics: Option<&Intrinsics>,
    namer: &Namer,
) -> Result<MeasuredLayout, DetectError> {
    let image = match intrinsics {
        Some(k) => undistort_image(&still.image, k)?,
        None => still.image.clone(),
    };
    let found: Vec<FoundCard> = cards::find_cards(&image, &FindOptions::default())?;
    if found.len() < MIN_CARDS_FOR_FIELD {
        return Err(DetectError::NoField {
            path: source.to_path_buf(),
            frame: still.first_frame,
            problem: format!(
                "{} card-like shapes found, at least {MIN_CARDS_FOR_FIELD} needed",
                found.len()
            ),
        });
    }
    let mut quads: Vec<CardQuad> = found
        .iter()
        .map(|c| CardQuad {
            corners_px: card_frame_order(&c.card_px),
            poem: None,
            poem_score: None,
        })
        .collect();
    let nominal = FieldSize::default();
    let reg = field::register_from_cards(&quads, None, &nominal)
        .map_err(|e| registration_error(source, e))?;
    // B's cards face B: upside down to a camera with A at the bottom of the image.
    let flipped: Vec<bool> = reg.cards.iter().map(|p| p.y_mm > 0.0).collect();
    let faces: Vec<QuadPx> = found.iter().map(|c| c.face_px).collect();
    let (raw, styles) = namer.raw_scores_in(&image, &faces, &flipped, None)?;
    let names = naming::name_field(&raw, &flipped, None);
    for (q, n) in quads.iter_mut().zip(&names) {
        q.poem = n.poem;
        q.poem_score = Some(round_to(n.score, 0.001));
    }
    let layout = field::measure_layout(&reg, &quads, &nominal);

    let mut measured = Vec::with_capacity(layout.cards.len());
    let mut placements = layout.cards.iter();
    for (i, pose) in reg.cards.iter().enumerate() {
        if !pose.inlier {
            continue;
        }
        let Some(placement) = placements.next() else {
            break;
        };
        let q = &quads[i];
        let k = pose.corner_shift % 4;
        let corners = [0, 1, 2, 3].map(|j| q.corners_px[(j + k) % 4]);
        let raw = match intrinsics {
            Some(ki) => ki
                .distort_px(&corners)
                .map_err(|e| registration_error(source, e))?,
            None => corners.to_vec(),
        };
        measured.push(MeasuredCard {
            placement: placement.clone(),
            quad: CardQuad {
                corners_px: corners,
                ..q.clone()
            },
            raw_px: [raw[0], raw[1], raw[2], raw[3]],
            face_px: found[i].face_px,
            name: names[i].clone(),
        });
    }
    let rejected = found.len() - measured.len();
    Ok(MeasuredLayout {
        image_to_field: reg.image_to_field(),
        layout,
        cards: measured,
        rejected,
        image_size: [image.cols() as u32, image.rows() as u32],
        still,
        more_stills: Vec::new(),
        scores: NameScores {
            faces,
            flipped,
            styles,
            views: vec![1; raw.len()],
            raw_sum: raw,
        },
    })
}

/// Adds the views of another still image (as decoded) of the same field: every card
/// still in place (a face found within `SAME_PLACE_FRAC` of its short side, whose scores
/// rank the poems alike) adds its scores, and the field is named again on the means.
/// Returns how many cards were seen again.
pub fn add_still_view(
    m: &mut MeasuredLayout,
    more: &LayoutFrames,
    intrinsics: Option<&Intrinsics>,
    namer: &Namer,
) -> Result<usize, DetectError> {
    let image = match intrinsics {
        Some(k) => undistort_image(&more.image, k)?,
        None => more.image.clone(),
    };
    let s = &mut m.scores;
    let mut areas: Vec<f64> = s.faces.iter().map(cards::quad_area).collect();
    areas.sort_by(|a, b| a.total_cmp(b));
    let area = areas.get(areas.len() / 2).copied().unwrap_or(0.0);
    let found = cards::find_cards(
        &image,
        &FindOptions {
            expected_face_area_px: (area > 0.0).then_some(area),
            ..FindOptions::default()
        },
    )?;
    // Each first-image card and the later face at its place, if any.
    let mut pairs: Vec<(usize, QuadPx)> = Vec::new();
    for (i, f) in s.faces.iter().enumerate() {
        let c = centre(f);
        let (short, _) = side_lengths(f);
        if let Some(g) = found.iter().find(|g| {
            let d = centre(&g.face_px);
            (d[0] - c[0]).hypot(d[1] - c[1]) < SAME_PLACE_FRAC * short
        }) {
            pairs.push((i, g.face_px));
        }
    }
    let faces: Vec<QuadPx> = pairs.iter().map(|p| p.1).collect();
    let flipped: Vec<bool> = pairs.iter().map(|p| s.flipped[p.0]).collect();
    let (raw, _) = namer.raw_scores_in(&image, &faces, &flipped, Some(&s.styles))?;
    let mut seen = 0;
    for ((i, _), row) in pairs.iter().zip(&raw) {
        let mean: Vec<f64> = s.raw_sum[*i]
            .iter()
            .map(|v| v / s.views[*i] as f64)
            .collect();
        if row_corr(&mean, row) < SAME_CARD_MIN_ROW_CORR {
            continue;
        }
        for (a, b) in s.raw_sum[*i].iter_mut().zip(row) {
            *a += b;
        }
        s.views[*i] += 1;
        seen += 1;
    }
    let mean: Vec<Vec<f64>> = s
        .raw_sum
        .iter()
        .zip(&s.views)
        .map(|(r, n)| r.iter().map(|v| v / *n as f64).collect())
        .collect();
    let names = naming::name_field(&mean, &s.flipped, None);
    for c in &mut m.cards {
        let Some(i) = s.faces.iter().position(|f| *f == c.face_px) else {
            continue;
        };
        c.name = names[i].clone();
        c.placement.poem = names[i].poem;
        c.placement.poem_score = Some(round_to(names[i].score, 0.001));
        c.quad.poem = names[i].poem;
        c.quad.poem_score = c.placement.poem_score;
    }
    for (p, c) in m.layout.cards.iter_mut().zip(&m.cards) {
        *p = c.placement.clone();
    }
    m.more_stills.push((more.first_frame, more.frames_averaged));
    Ok(seen)
}

/// Measures the layout of a recording: `until_s` is the first reading's start, if known.
pub fn measure_layout(
    video: &Path,
    until_s: Option<f64>,
    intrinsics: Option<&Intrinsics>,
) -> Result<MeasuredLayout, DetectError> {
    let starts: Vec<f64> = until_s.into_iter().collect();
    measure_layout_readings(video, &starts, intrinsics)
}

/// Measures the layout of a recording whose readings start at `reading_starts_s` (may be
/// empty). The layout comes from the still stretch before the first reading; when that
/// stretch is short (under `still::ENOUGH_STILL_FRAMES` frames) or a card stays unnamed,
/// the still stretches before the next readings (the last one: before the end of the
/// video) add views of the cards still in place to name them.
pub fn measure_layout_readings(
    video: &Path,
    reading_starts_s: &[f64],
    intrinsics: Option<&Intrinsics>,
) -> Result<MeasuredLayout, DetectError> {
    let still = still::layout_frames(video, reading_starts_s.first().copied())?;
    let short = still.frames_averaged < still::ENOUGH_STILL_FRAMES;
    let more = reading_starts_s.len().min(MAX_MORE_STILLS);
    let later = |k: usize| {
        let next = reading_starts_s.get(k + 1).copied();
        still::still_frames_between(video, reading_starts_s[k], next)
    };
    std::thread::scope(|scope| {
        // A short first stretch always needs the later ones: each is read on a thread
        // of its own while the first is measured (the decoding is most of the time, and
        // the pipeline has not started yet).
        let mut ahead: Vec<_> = if short {
            (0..more)
                .map(|k| Some(scope.spawn(move || later(k))))
                .collect()
        } else {
            Vec::new()
        };
        let namer = Namer::new()?;
        let mut m = measure_image(video, still, intrinsics, &namer)?;
        let unnamed = m.cards.iter().any(|c| c.name.poem.is_none());
        if !(short || unnamed) {
            return Ok(m);
        }
        for k in 0..more {
            let found = match ahead.get_mut(k).and_then(Option::take) {
                Some(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))?,
                None => later(k)?,
            };
            let Some(view) = found else {
                continue;
            };
            add_still_view(&mut m, &view, intrinsics, &namer)?;
            if m.cards.iter().all(|c| c.name.poem.is_some()) && !short {
                break;
            }
        }
        Ok(m)
    })
}

fn round_to(v: f64, step: f64) -> f64 {
    (v / step).round() * step
}

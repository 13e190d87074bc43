//! Moving paper: in a window of the frame, the pixels that are near-white now (the
//! smallest white-balanced channel, as the card detector's whiteness), of the cards' own
//! paper colour (measured on the layout's faces), and different from the layout image,
//! grouped into blobs; and the geometry of a card seen as such a blob.

use crate::detect::cards::{percentile_u8, PAPER_LEVEL};
use crate::detect::motion::polygon_mask;
use crate::detect::QuadPx;
use crate::rules::geometry::{Pt, Rect as AreaRect};
use opencv::core::{self, Mat, Point, Point2f, Rect, Scalar, Size, Vector};
use opencv::imgproc;
use opencv::prelude::*;

/// Whiteness at or above this is paper...
pub const WHITE_MIN: f64 = 160.0;
/// ...or at or above this share of the median whiteness inside the layout's card
/// outlines, when that is less (the white balance puts the frame's brightest 3% at
/// `PAPER_LEVEL`: a white sleeve or a bright reflection brighter than the cards pushes the
/// paper below `WHITE_MIN`). On the simulator's looks the median is 179-193, so the
/// share gives 150-162.
pub const WHITE_SHARE: f64 = 0.84;
/// Gray difference from the layout image at or above this is change...
pub const DIFF_MIN: f64 = 28.0;
/// ...or at or above this share of the gray step from the tatami to the cards' paper in
/// the layout image, when that is less (a dim, low-contrast recording: paper over the
/// tatami near the frame's edge, where the light falls off, differs by less)...
pub const DIFF_SHARE: f64 = 0.45;
/// ...but never less than this (a flickering light moves the paper's gray by several
/// levels).
pub const DIFF_FLOOR: f64 = 12.0;
/// A blob whose centre lies this near a claimed blob's box is part of it, px.
const SAME_BLOB_PX: f64 = 6.0;

/// `BlobFinder::vacated_share` samples every this many pixels along and across rows.
pub const VACATED_STEP_PX: usize = 2;

/// One blob of moving paper.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SeenBlob {
    pub centre_px: [f64; 2],
    pub area_px: f64,
    /// Its outer contour, decoded pixels.
    pub outline_px: Vec<[f64; 2]>,
}

/// Finds blobs of paper that was not in the layout image.
pub struct BlobFinder {
    gains: [f64; 3],
    tatami: Tatami,
    /// The card paper's colour on this recording (`None`: no card to measure it on, and
    /// any near-white pixel is taken for paper).
    paper: Option<Paper>,
    /// Gray difference from the layout image that is change (`DIFF_MIN`, `DIFF_SHARE`).
    diff_min: f64,
    /// Whiteness that is paper (`WHITE_MIN`, `WHITE_SHARE`).
    white_min: f64,
    reference_gray: Mat,
    /// Where cards settled after the layout: paper there is not new.
    known: Mat,
    placed: Vec<Vec<[f64; 2]>>,
}

impl BlobFinder {
    /// `layout_image`: the averaged still frames (decoded pixels, BGR); `cards_px`: the
    /// layout's card outlines in it, whose white pixels give the paper's colour.
    pub fn new(layout_image: &Mat, cards_px: &[QuadPx]) -> Result<BlobFinder, opencv::Error> {
        let mut channels = Vector::<Mat>::new();
        core::split(layout_image, &mut channels)?;
        let mut gains = [1.0; 3];
        for (k, ch) in channels.iter().enumerate().take(3) {
            gains[k] = PAPER_LEVEL / percentile_u8(&ch, 0.97)?.max(16.0);
        }
        let mut reference_gray = Mat::default();
        imgproc::cvt_color_def(layout_image, &mut reference_gray, imgproc::COLOR_BGR2GRAY)?;
        let cards = card_pixels(layout_image, cards_px)?;
        let mut whiteness: Vec<f64> = cards
            .iter()
            .flatten()
            .map(|px| min3(&balanced(px, &gains)))
            .collect();
        let white_min = if whiteness.len() < PAPER_MIN_PIXELS {
            WHITE_MIN
        } else {
            (WHITE_SHARE * median(&mut whiteness)).min(WHITE_MIN)
        };
        let tatami = Tatami::measure(layout_image, &gains, white_min)?;
        let paper = Paper::measure(&cards, &gains, white_min);
        let diff_min = match &paper {
            Some(p) => (DIFF_SHARE * (p.gray - tatami.gray)).clamp(DIFF_FLOOR, DIFF_MIN),
            _ => DIFF_MIN,
        };
        let known = Mat::new_rows_cols_with_default(
            reference_gray.rows(),
            reference_gray.cols(),
            core::CV_8U,
            Scalar::all(0.0),
        )?;
        Ok(BlobFinder {
            gains,
            tatami,
            paper,
            diff_min,
            white_min,
            reference_gray,
            known,
            placed: Vec::new(),
        })
    }

    /// Paper has come to rest inside `outline_px` (a card settled, or lying out of the
    /// area): it is not new (the outline and a few pixels around it are left out of
    /// every later search).
    pub fn rebase(&mut self, outline_px: &[[f64; 2]]) -> Result<(), opencv::Error> {
        let pts: Vector<Point> = outline_px
            .iter()
            .map(|p| Point::new(p[0].round() as i32, p[1].round() as i32))
            .collect();
        let mut hull = Vector::<Point>::new();
        imgproc::convex_hull_def(&pts, &mut hull)?;
        if hull.len() < 3 {
            return Ok(());
        }
        let polys = Vector::<Vector<Point>>::from_iter([hull]);
        imgproc::fill_poly_def(&mut self.known, &polys, Scalar::all(255.0))?;
        imgproc::polylines(
            &mut self.known,
            &polys,
            true,
            Scalar::all(255.0),
            7,
            imgproc::LINE_8,
            0,
        )?;
        self.placed.push(outline_px.to_vec());
        Ok(())
    }

    /// The share of a resting card's outline where the tatami shows (sampled every
    /// `VACATED_STEP_PX` pixels both ways): high when the
    /// card has left its place, low when it is still there (even with another card
    /// sliding over it) or only a hand covers it.
    pub fn vacated_share(&self, bgr: &Mat, quad_px: &QuadPx) -> Result<f64, opencv::Error> {
        let pts: Vector<Point> = quad_px
            .iter()
            .map(|p| Point::new(p[0].round() as i32, p[1].round() as i32))
            .collect();
        let bounds = Rect::new(0, 0, bgr.cols(), bgr.rows());
        let rect = imgproc::bounding_rect(&pts)? & bounds;
        if rect.width < 2 || rect.height < 2 {
            return Ok(0.0);
        }
        let mask = polygon_mask(&pts, rect)?;
        let (mut inside, mut bare) = (0usize, 0usize);
        let (x0, w) = (rect.x as usize, rect.width as usize);
        // Every other pixel of every other row: a card's place is thousands of pixels at
        // 720p, and a share needs no more (asked of every disturbed card, every frame).
        for y in (0..rect.height).step_by(VACATED_STEP_PX) {
            let row = &bgr.at_row::<core::Vec3b>(rect.y + y)?[x0..x0 + w];
            let mask_row = mask.at_row::<u8>(y)?;
            for (c, mv) in row.iter().zip(mask_row).step_by(VACATED_STEP_PX) {
                if *mv > 0 {
                    inside += 1;
                    if self.tatami.is_like(&c.0, &self.gains) {
                        bare += 1;
                    }
                }
            }
        }
        Ok(if inside == 0 {
            0.0
        } else {
            bare as f64 / inside as f64
        })
    }

    /// Whiteness: the smallest white-balanced channel.
    fn whiteness(&self, patch: &impl core::ToInputArray) -> Result<Mat, opencv::Error> {
        let mut channels = Vector::<Mat>::new();
        core::split(patch, &mut channels)?;
        let mut white: Option<Mat> = None;
        for (k, ch) in channels.iter().enumerate().take(3) {
            let mut s = Mat::default();
            ch.convert_to(&mut s, core::CV_8U, self.gains[k], 0.0)?;
            white = Some(match white {
                None => s,
                Some(prev) => {
                    let mut m = Mat::default();
                    core::min(&prev, &s, &mut m)?;
                    m
                }
            });
        }
        Ok(white.unwrap_or_default())
    }

    /// The outlines given to `rebase`, in order (to rebuild a finder).
    pub fn placed(&self) -> &[Vec<[f64; 2]>] {
        &self.placed
    }

    /// The blob nearest `centre_px` whose centre lies within `reach_px` of it, of
    /// `area_px` (at least, at most) large, and not part of a blob already `claimed`
    /// (boxes, as `SeenBlob::bbox_px`: the same paper cut differently by another search
    /// window).
    pub fn nearest(
        &self,
        bgr: &Mat,
        centre_px: [f64; 2],
        reach_px: f64,
        area_px: [f64; 2],
        claimed: &[[f64; 4]],
    ) -> Result<Option<SeenBlob>, opencv::Error> {
        let [min_area_px, max_area_px] = area_px;
        let half = (reach_px * 2.2).ceil() as i32;
        let (w, h) = (bgr.cols(), bgr.rows());
        let x0 = (centre_px[0] as i32 - half).clamp(0, w - 1);
        let y0 = (centre_px[1] as i32 - half).clamp(0, h - 1);
        let x1 = (centre_px[0] as i32 + half).clamp(x0 + 1, w);
        let y1 = (centre_px[1] as i32 + half).clamp(y0 + 1, h);
        let roi = Rect::new(x0, y0, x1 - x0, y1 - y0);
        let patch = bgr.roi(roi)?.try_clone()?;
        let white = self.whiteness(&patch)?;
        if white.empty() {
            return Ok(None);
        }
        let mut is_white = Mat::default();
        imgproc::threshold(
            &white,
            &mut is_white,
            self.white_min,
            255.0,
            imgproc::THRESH_BINARY,
        )?;
        let mut gray = Mat::default();
        imgproc::cvt_color_def(&patch, &mut gray, imgproc::COLOR_BGR2GRAY)?;
        let reference = self.reference_gray.roi(roi)?;
        let mut diff = Mat::default();
        core::absdiff(&gray, &reference, &mut diff)?;
        let mut changed = Mat::default();
        imgproc::threshold(
            &diff,
            &mut changed,
            self.diff_min,
            255.0,
            imgproc::THRESH_BINARY,
        )?;
        let mut fresh = Mat::default();
        core::bitwise_and(&is_white, &changed, &mut fresh, &core::no_array())?;
        let mut not_known = Mat::default();
        core::bitwise_not(&self.known.roi(roi)?, &mut not_known, &core::no_array())?;
        let mut mask = Mat::default();
        core::bitwise_and(&fresh, &not_known, &mut mask, &core::no_array())?;
        let kernel = imgproc::get_structuring_element_def(imgproc::MORPH_RECT, Size::new(3, 3))?;
        let mut opened = Mat::default();
        imgproc::morphology_ex_def(&mask, &mut opened, imgproc::MORPH_OPEN, &kernel)?;

        let mut labels = Mat::default();
        let mut stats = Mat::default();
        let mut centroids = Mat::default();
        let n = imgproc::connected_components_with_stats_def(
            &opened,
            &mut labels,
            &mut stats,
            &mut centroids,
        )?;
        let mut found: Vec<(f64, i32, [f64; 2], f64, Rect)> = Vec::new();
        for l in 1..n {
            let area = *stats.at_2d::<i32>(l, imgproc::CC_STAT_AREA)? as f64;
            if area < min_area_px || area > max_area_px {
                continue;
            }
            let c = [
                *centroids.at_2d::<f64>(l, 0)? + x0 as f64,
                *centroids.at_2d::<f64>(l, 1)? + y0 as f64,
            ];
            let bx = [
                (*stats.at_2d::<i32>(l, imgproc::CC_STAT_LEFT)? + x0) as f64,
                (*stats.at_2d::<i32>(l, imgproc::CC_STAT_TOP)? + y0) as f64,
            ];
            let bw = [
                *stats.at_2d::<i32>(l, imgproc::CC_STAT_WIDTH)? as f64,
                *stats.at_2d::<i32>(l, imgproc::CC_STAT_HEIGHT)? as f64,
            ];
            let mine = [bx[0], bx[1], bx[0] + bw[0], bx[1] + bw[1]];
            if claimed
                .iter()
                .any(|q| inside(c, q, SAME_BLOB_PX) || inside(box_centre(q), &mine, SAME_BLOB_PX))
            {
                continue;
            }
            let d = (c[0] - centre_px[0]).hypot(c[1] - centre_px[1]);
            if d > reach_px {
                continue;
            }
            let local = Rect::new(
                bx[0] as i32 - x0,
                bx[1] as i32 - y0,
                bw[0] as i32,
                bw[1] as i32,
            );
            found.push((d, l, c, area, local));
        }
        found.sort_by(|a, b| a.0.total_cmp(&b.0));
        // The nearest blob of the paper's colour.
        let mut best = None;
        for (_, l, c, area, local) in found {
            let paper = match &self.paper {
                Some(p) => p.is_paper(&patch, &labels, l, local, &self.gains)?,
                None => true,
            };
            if paper {
                best = Some((l, c, area));
                break;
            }
        }
        let Some((label, centre, area)) = best else {
            return Ok(None);
        };
        let mut one = Mat::default();
        core::compare(&labels, &Scalar::all(label as f64), &mut one, core::CMP_EQ)?;
        let mut contours = Vector::<Vector<Point>>::new();
        imgproc::find_contours(
            &one,
            &mut contours,
            imgproc::RETR_EXTERNAL,
            imgproc::CHAIN_APPROX_SIMPLE,
            Point::new(x0, y0),
        )?;
        let outline: Vec<[f64; 2]> = contours
            .iter()
            .max_by_key(|c| c.len())
            .map(|c| c.iter().map(|p| [p.x as f64, p.y as f64]).collect())
            .unwrap_or_default();
        if outline.len() < 3 {
            return Ok(None);
        }
        Ok(Some(SeenBlob {
            centre_px: centre,
            area_px: area,
            outline_px: outline,
        }))
    }
}

/// What the tatami looks like on this recording: the chromaticity and brightness of the
/// layout image's pixels that are not paper, in the middle of the frame (the field and
/// the tatami around it), with their spread.
#[derive(Debug, Clone)]
struct Tatami {
    chroma: [f64; 2],
    chroma_tol: [f64; 2],
    level: f64,
    /// Its median gray level (not balanced).
    gray: f64,
}

impl Tatami {
    fn measure(image: &Mat, gains: &[f64; 3], white_min: f64) -> Result<Tatami, opencv::Error> {
        let (w, h) = (image.cols() as usize, image.rows() as usize);
        let data = image.data_bytes()?;
        let (mut r, mut g, mut l, mut grays) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for y in (h / 5..h * 4 / 5).step_by(3) {
            for x in (w / 5..w * 4 / 5).step_by(3) {
                let i = (y * w + x) * 3;
                let c = balanced(&data[i..i + 3], gains);
                if min3(&c) >= white_min {
                    continue;
                }
                let sum = c[0] + c[1] + c[2];
                if sum < 30.0 {
                    continue;
                }
                r.push(c[2] / sum);
                g.push(c[1] / sum);
                l.push(sum);
                grays.push(gray_of(&data[i..i + 3]));
            }
        }
        let mad = |v: &[f64], m: f64| -> f64 {
            let mut d: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
            median(&mut d) * 1.4826
        };
        let (mr, mg) = (median(&mut r), median(&mut g));
        let level = median(&mut l);
        let gray = median(&mut grays);
        Ok(Tatami {
            chroma: [mr, mg],
            chroma_tol: [
                (TATAMI_SPREADS * mad(&r, mr)).max(TATAMI_MIN_TOL),
                (TATAMI_SPREADS * mad(&g, mg)).max(TATAMI_MIN_TOL),
            ],
            level,
            gray,
        })
    }

    /// Whether a BGR pixel looks like the tatami (its colour whatever the shade: a hand's
    /// shadow darkens the tatami, it does not change its colour).
    fn is_like(&self, bgr: &[u8], gains: &[f64; 3]) -> bool {
        let c = balanced(bgr, gains);
        let sum = c[0] + c[1] + c[2];
        if sum < 0.3 * self.level || sum > 1.6 * self.level {
            return false;
        }
        // The chromaticity test `|c / sum - chroma| <= tol`, multiplied out (sum > 0).
        (c[2] - self.chroma[0] * sum).abs() <= self.chroma_tol[0] * sum
            && (c[1] - self.chroma[1] * sum).abs() <= self.chroma_tol[1] * sum
    }
}

/// What the cards' paper looks like on this recording: the chromaticity of the white
/// pixels inside the layout's card outlines (the face; the border and the ink are not
/// white), and how far from it a blob of paper's pixels lie. A pale hand is as white as a
/// card's face by its smallest channel, but not of its colour: followed as new paper, it
/// was taken for the card it had just sent and ruled out.
#[derive(Debug, Clone, PartialEq)]
struct Paper {
    /// Red and green shares of the white-balanced sum.
    chroma: [f64; 2],
    tol: f64,
    /// Its median gray level (not balanced), as the frames show it.
    gray: f64,
}

impl Paper {
    /// From each layout card's pixels (`card_pixels`); `None` when they hold too few
    /// white pixels to measure.
    fn measure(cards: &[Vec<[u8; 3]>], gains: &[f64; 3], white_min: f64) -> Option<Paper> {
        let (mut r, mut g, mut grays) = (Vec::new(), Vec::new(), Vec::new());
        // Where each card's pixels begin in `r` and `g`.
        let mut starts = Vec::new();
        for card in cards {
            starts.push(r.len());
            for px in card {
                let c = balanced(px, gains);
                if min3(&c) < white_min {
                    continue;
                }
                let sum = c[0] + c[1] + c[2];
                r.push(c[2] / sum);
                g.push(c[1] / sum);
                grays.push(gray_of(px));
            }
        }
        if r.len() < PAPER_MIN_PIXELS {
            return None;
        }
        let chroma = [median(&mut r.clone()), median(&mut g.clone())];
        starts.push(r.len());
        // Each card's median distance from the paper's colour: how far a card's own
        // colour strays on this recording (the light across the field, the print).
        let mut cards: Vec<f64> = starts
            .windows(2)
            .filter(|w| w[1] > w[0])
            .map(|w| {
                let mut d: Vec<f64> = (w[0]..w[1])
                    .map(|k| (r[k] - chroma[0]).abs().max((g[k] - chroma[1]).abs()))
                    .collect();
                median(&mut d)
            })
            .collect();
        cards.sort_by(|a, b| a.total_cmp(b));
        let p90 = cards[cards.len() * 9 / 10];
        Some(Paper {
            chroma,
            tol: (PAPER_SPREAD * p90).max(PAPER_MIN_TOL),
            gray: median(&mut grays),
        })
    }

    /// How far a pixel's chromaticity lies from the paper's.
    fn off(&self, c: &[f64; 3]) -> f64 {
        let sum = (c[0] + c[1] + c[2]).max(1.0);
        (c[2] / sum - self.chroma[0])
            .abs()
            .max((c[1] / sum - self.chroma[1]).abs())
    }

    /// Whether blob `label` of `labels` (within `rect` of `patch`) is of the paper's
    /// colour: the median of its pixels' distances (every other pixel both ways).
    fn is_paper(
        &self,
        patch: &Mat,
        labels: &Mat,
        label: i32,
        rect: Rect,
        gains: &[f64; 3],
    ) -> Result<bool, opencv::Error> {
        let mut d = Vec::new();
        for y in (rect.y..rect.y + rect.height).step_by(2) {
            let row = patch.at_row::<core::Vec3b>(y)?;
            let lrow = labels.at_row::<i32>(y)?;
            for x in (rect.x..rect.x + rect.width).step_by(2) {
                if lrow[x as usize] == label {
                    d.push(self.off(&balanced(&row[x as usize].0, gains)));
                }
            }
        }
        Ok(d.is_empty() || median(&mut d) <= self.tol)
    }
}

/// The pixels inside each outline (BGR), in order.
fn card_pixels(image: &Mat, cards_px: &[QuadPx]) -> Result<Vec<Vec<[u8; 3]>>, opencv::Error> {
    let bounds = Rect::new(0, 0, image.cols(), image.rows());
    let mut cards = Vec::with_capacity(cards_px.len());
    for q in cards_px {
        let mut card = Vec::new();
        let pts: Vector<Point> = q
            .iter()
            .map(|p| Point::new(p[0].round() as i32, p[1].round() as i32))
            .collect();
        let rect = imgproc::bounding_rect(&pts)? & bounds;
        if rect.width >= 2 && rect.height >= 2 {
            let mask = polygon_mask(&pts, rect)?;
            for y in 0..rect.height {
                let row = &image.at_row::<core::Vec3b>(rect.y + y)?
                    [rect.x as usize..(rect.x + rect.width) as usize];
                for (px, m) in row.iter().zip(mask.at_row::<u8>(y)?) {
                    if *m > 0 {
                        card.push(px.0);
                    }
                }
            }
        }
        cards.push(card);
    }
    Ok(cards)
}

/// The smallest of three.
fn min3(c: &[f64; 3]) -> f64 {
    c[0].min(c[1]).min(c[2])
}

/// A BGR pixel white-balanced by `gains`.
fn balanced(bgr: &[u8], gains: &[f64; 3]) -> [f64; 3] {
    [
        f64::from(bgr[0]) * gains[0],
        f64::from(bgr[1]) * gains[1],
        f64::from(bgr[2]) * gains[2],
    ]
}

/// A BGR pixel's gray level, as `COLOR_BGR2GRAY` gives it.
fn gray_of(bgr: &[u8]) -> f64 {
    0.114 * f64::from(bgr[0]) + 0.587 * f64::from(bgr[1]) + 0.299 * f64::from(bgr[2])
}

/// The middle value (0 for none).
fn median(v: &mut [f64]) -> f64 {
    crate::util::median(v).unwrap_or(0.0)
}

/// The paper's colour is measured on at least this many white pixels of the layout's
/// cards (one card's face at 180p holds several hundred).
const PAPER_MIN_PIXELS: usize = 200;
/// A blob is of the paper's colour when its pixels' median distance from it is within
/// this many times the median distance of 90% of the layout's cards... (On the tuning
/// recordings a card's pixels, moving or not, lie a median 0.002-0.007 from the paper's
/// chromaticity, a pale hand's 0.027-0.048.)
const PAPER_SPREAD: f64 = 4.0;
/// ...or within this much, whichever is wider.
const PAPER_MIN_TOL: f64 = 0.015;

/// The tatami's colour spread: a pixel within this many spreads of its median colour
/// looks like the tatami...
const TATAMI_SPREADS: f64 = 3.0;
/// ...or within this much chromaticity, whichever is wider.
const TATAMI_MIN_TOL: f64 = 0.015;

/// Whether `p` lies in box `b` (`[x0, y0, x1, y1]`) grown by `grow`.
fn inside(p: [f64; 2], b: &[f64; 4], grow: f64) -> bool {
    p[0] >= b[0] - grow && p[0] <= b[2] + grow && p[1] >= b[1] - grow && p[1] <= b[3] + grow
}

fn box_centre(b: &[f64; 4]) -> [f64; 2] {
    [(b[0] + b[2]) / 2.0, (b[1] + b[3]) / 2.0]
}

impl SeenBlob {
    /// Its bounding box, `[x0, y0, x1, y1]`, px.
    pub fn bbox_px(&self) -> [f64; 4] {
        let mut b = [
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ];
        for p in &self.outline_px {
            b[0] = b[0].min(p[0]);
            b[1] = b[1].min(p[1]);
            b[2] = b[2].max(p[0]);
            b[3] = b[3].max(p[1]);
        }
        b
    }
}

/// The longer side of a quadrilateral.
pub fn quad_long_side(q: &QuadPx) -> f64 {
    (0..4)
        .map(|i| {
            let (a, b) = (q[i], q[(i + 1) % 4]);
            (a[0] - b[0]).hypot(a[1] - b[1])
        })
        .fold(0.0, f64::max)
}

fn min_rect(pts: &[[f64; 2]]) -> Option<core::RotatedRect> {
    if pts.len() < 3 {
        return None;
    }
    let v: Vector<Point2f> = pts
        .iter()
        .map(|p| Point2f::new(p[0] as f32, p[1] as f32))
        .collect();
    imgproc::min_area_rect(&v).ok()
}

/// Direction of the long axis of the smallest rectangle around field points, degrees.
pub fn long_axis_deg(pts: &[Pt]) -> Option<f64> {
    let xy: Vec<[f64; 2]> = pts.iter().map(|p| [p.x_mm, p.y_mm]).collect();
    let r = min_rect(&xy)?;
    let a = r.angle as f64;
    Some(if r.size.width >= r.size.height {
        a
    } else {
        a + 90.0
    })
}

/// The smallest rectangle around a blob outline, as a quad in pixels.
pub fn card_quad_px(outline_px: &[[f64; 2]]) -> Option<QuadPx> {
    let r = min_rect(outline_px)?;
    let mut pts = [Point2f::default(); 4];
    r.points(&mut pts).ok()?;
    Some(pts.map(|p| [p.x as f64, p.y as f64]))
}

/// How far a card seen as the points `pts` (its visible part, mm) lies beyond the
/// playing area, mm: positive when wholly out (17-2). The farthest visible point along
/// each edge's outward normal is taken as the card's far corner, and the card's extent
/// along that normal (from its size and angle) is subtracted: a card partly hidden on
/// the side towards the area (over a card, under a hand) is not taken for out too soon.
pub fn out_margin_mm(pts: &[Pt], angle_deg: f64, w_mm: f64, h_mm: f64, area: &AreaRect) -> f64 {
    let edges: [(f64, f64, f64); 4] = [
        (1.0, 0.0, area.x1_mm),
        (-1.0, 0.0, -area.x0_mm),
        (0.0, 1.0, area.y1_mm),
        (0.0, -1.0, -area.y0_mm),
    ];
    let th = angle_deg.to_radians();
    let (ux, uy) = (th.cos(), th.sin()); // the card's width axis
    let (vx, vy) = (-uy, ux); // its height axis
    edges
        .iter()
        .map(|&(dx, dy, o)| {
            let s_max = pts
                .iter()
                .map(|p| p.x_mm * dx + p.y_mm * dy)
                .fold(f64::NEG_INFINITY, f64::max);
            let extent = w_mm * (ux * dx + uy * dy).abs() + h_mm * (vx * dx + vy * dy).abs();
            s_max - extent - o
        })
        .fold(f64::NEG_INFINITY, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area() -> AreaRect {
        AreaRect {
            x0_mm: -435.0,
            y0_mm: -254.0,
            x1_mm: 435.0,
            y1_mm: 254.0,
        }
    }

    /// The layout's two cards.
    const LAYOUT: [Rect; 2] = [Rect::new(10, 10, 26, 36), Rect::new(40, 10, 26, 36)];

    fn quad(r: &Rect) -> QuadPx {
        let (x0, y0) = (r.x as f64, r.y as f64);
        let (x1, y1) = (x0 + r.width as f64, y0 + r.height as f64);
        [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]
    }

    fn finder() -> BlobFinder {
        let cards: Vec<QuadPx> = LAYOUT.iter().map(quad).collect();
        BlobFinder::new(&field_with(&[]), &cards).unwrap()
    }

    /// A frame of tatami with cream rectangles (cards) on it.
    fn drawn(tatami: Scalar, cream: Scalar, cards: &[Rect]) -> Mat {
        let mut img = Mat::new_rows_cols_with_default(240, 320, core::CV_8UC3, tatami).unwrap();
        for r in cards {
            imgproc::rectangle(&mut img, *r, cream, -1, imgproc::LINE_8, 0).unwrap();
        }
        img
    }

    /// A tatami-green frame with a few cream cards (the layout image), and the same
    /// frame with new paper on it.
    fn field_with(extra: &[Rect]) -> Mat {
        let cards: Vec<Rect> = LAYOUT.iter().chain(extra).copied().collect();
        drawn(
            Scalar::new(60.0, 140.0, 120.0, 0.0),
            Scalar::new(215.0, 235.0, 242.0, 0.0),
            &cards,
        )
    }

    /// The centre of the card-sized blob `finder` sees nearest `at` in `frame`.
    fn card_seen(finder: &BlobFinder, frame: &Mat, at: [f64; 2], reach: f64) -> Option<[f64; 2]> {
        let face = 26.0 * 36.0;
        finder
            .nearest(frame, at, reach, [0.2 * face, 1.6 * face], &[])
            .unwrap()
            .map(|b| b.centre_px)
    }

    #[test]
    fn a_blob_larger_than_the_area_allowed_is_not_taken_for_a_card() {
        let finder = finder();
        // A card's face of new paper, and nearer the point asked about a pale region
        // three faces large (a hand).
        let card = Rect::new(220, 150, 26, 36);
        let hand = Rect::new(120, 120, 52, 54);
        let frame = field_with(&[card, hand]);
        let face = 26.0 * 36.0;
        let at = [140.0, 140.0];
        let any = finder
            .nearest(&frame, at, 150.0, [0.2 * face, f64::INFINITY], &[])
            .unwrap()
            .expect("a blob");
        assert!(
            (any.centre_px[0] - 145.5).abs() < 3.0,
            "the nearer, larger: {:?}",
            any.centre_px
        );
        let capped = finder
            .nearest(&frame, at, 150.0, [0.2 * face, 1.6 * face], &[])
            .unwrap()
            .expect("the card");
        assert!(
            (capped.centre_px[0] - 232.5).abs() < 3.0,
            "the card: {:?}",
            capped.centre_px
        );
        assert!(capped.area_px <= 1.6 * face);
    }

    #[test]
    fn a_pale_hand_is_white_but_not_of_the_papers_colour() {
        // Nearer the point asked about, a region of pale skin as large as a face: white
        // by its smallest channel, but warmer than the cards' paper.
        let mut frame = field_with(&[Rect::new(220, 150, 26, 36)]);
        let skin = Scalar::new(170.0, 200.0, 240.0, 0.0);
        let hand = Rect::new(120, 120, 26, 36);
        imgproc::rectangle(&mut frame, hand, skin, -1, imgproc::LINE_8, 0).unwrap();
        let seen = card_seen(&finder(), &frame, [130.0, 130.0], 150.0).expect("the card");
        assert!(
            (seen[0] - 232.5).abs() < 3.0,
            "the card, not the hand: {seen:?}"
        );
        // Without a layout to measure the paper on, any white is paper.
        let blind = BlobFinder::new(&field_with(&[]), &[]).unwrap();
        let seen = card_seen(&blind, &frame, [130.0, 130.0], 150.0).expect("a blob");
        assert!((seen[0] - 132.5).abs() < 3.0, "{seen:?}");
    }

    #[test]
    fn on_a_dim_recording_paper_a_little_brighter_than_the_tatami_is_new_paper() {
        // Paper 21 gray levels over the tatami: less than `DIFF_MIN`. Eight cards, so that
        // the paper is the frame's brightest 3% (its white balance).
        let (tatami, cream) = (
            Scalar::new(90.0, 110.0, 110.0, 0.0),
            Scalar::new(125.0, 128.0, 128.0, 0.0),
        );
        let layout: Vec<Rect> = (0..8).map(|k| Rect::new(10 + 30 * k, 10, 26, 36)).collect();
        let cards: Vec<QuadPx> = layout.iter().map(quad).collect();
        let mut finder = BlobFinder::new(&drawn(tatami, cream, &layout), &cards).unwrap();
        assert!(finder.diff_min < DIFF_MIN, "{}", finder.diff_min);
        let mut moved = layout.clone();
        moved.push(Rect::new(220, 150, 26, 36));
        let frame = drawn(tatami, cream, &moved);
        let seen = card_seen(&finder, &frame, [200.0, 150.0], 150.0).expect("the card");
        assert!((seen[0] - 232.5).abs() < 3.0, "{seen:?}");
        // At the fixed level it is not seen.
        finder.diff_min = DIFF_MIN;
        assert!(card_seen(&finder, &frame, [200.0, 150.0], 150.0).is_none());
    }

    #[test]
    fn beside_a_white_sleeve_brighter_than_the_cards_their_paper_is_still_paper() {
        // A sleeve of pure white over a fifth of the frame: the white balance puts it at
        // `PAPER_LEVEL`, and the cards' paper below `WHITE_MIN`.
        let field = |extra: &[Rect]| {
            let cards: Vec<Rect> = LAYOUT.iter().chain(extra).copied().collect();
            let tatami = Scalar::new(60.0, 140.0, 120.0, 0.0);
            let mut img = drawn(tatami, Scalar::new(190.0, 205.0, 210.0, 0.0), &cards);
            let (sleeve, white) = (Rect::new(0, 190, 320, 50), Scalar::all(255.0));
            imgproc::rectangle(&mut img, sleeve, white, -1, imgproc::LINE_8, 0).unwrap();
            img
        };
        let cards: Vec<QuadPx> = LAYOUT.iter().map(quad).collect();
        let mut finder = BlobFinder::new(&field(&[]), &cards).unwrap();
        assert!(finder.white_min < WHITE_MIN, "{}", finder.white_min);
        let frame = field(&[Rect::new(220, 120, 26, 36)]);
        let seen = card_seen(&finder, &frame, [200.0, 130.0], 100.0).expect("the card");
        assert!((seen[0] - 232.5).abs() < 3.0, "{seen:?}");
        finder.white_min = WHITE_MIN;
        assert!(card_seen(&finder, &frame, [200.0, 130.0], 100.0).is_none());
    }

    #[test]
    fn a_card_just_past_the_side_line_is_out_and_one_touching_it_is_not() {
        // Upright card (52 wide along x), far edge at x = 435 + 52 + 1.
        let pts = [Pt::new(488.0, 0.0), Pt::new(470.0, 10.0)];
        assert!(out_margin_mm(&pts, 0.0, 52.0, 73.0, &area()) > 0.0);
        let pts = [Pt::new(486.0, 0.0)];
        assert!(out_margin_mm(&pts, 0.0, 52.0, 73.0, &area()) < 0.0);
        // Turned 90 degrees, its 73 mm side lies along x.
        let pts = [Pt::new(500.0, 0.0)];
        assert!(out_margin_mm(&pts, 90.0, 52.0, 73.0, &area()) < 0.0);
    }
}

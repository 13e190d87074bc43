//! Moving paper: in a window of the frame, the pixels that are near-white now (the
//! smallest white-balanced channel, as the card detector's whiteness), of the cards' own
//! paper colour (measured on the layout's faces), and different from the layout image,
//! grouped into blobs; and the geometry of a card seen as such a blob.
//!
//! The files: `looks` (the tatami and paper as this recording shows them), `shape` (a
//! blob's card geometry).

mod looks;
mod shape;

use self::looks::{balanced, card_pixels, median, min3, Paper, Tatami, PAPER_MIN_PIXELS};
pub use self::shape::{
    card_quad_px, long_axis_deg, margin_from_reach_mm, out_margin_mm, quad_long_side,
    reach_past_lines_mm,
};

use crate::detect::cards::{percentile_u8, PAPER_LEVEL};
use crate::detect::motion::polygon_mask;
use crate::detect::QuadPx;
use opencv::core::{self, Mat, Point, Rect, Scalar, Size, Vector};
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

#[cfg(test)]
mod tests;

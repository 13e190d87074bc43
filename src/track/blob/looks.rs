//! What the recording's own tatami and paper look like, measured on the layout image:
//! the tatami's chromaticity and brightness (`Tatami`), the cards' paper colour under
//! this light (`Paper`), so that moving paper is told from the tatami whatever the
//! light and the card stock.

use crate::detect::motion::polygon_mask;
use crate::detect::QuadPx;
use opencv::core::{Mat, Point, Rect, Vector};
use opencv::prelude::*;
use opencv::{core, imgproc};

/// The paper's colour is measured on at least this many white pixels of the layout's
/// cards (one card's face at 180p holds several hundred).
pub(super) const PAPER_MIN_PIXELS: usize = 200;
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

/// What the tatami looks like on this recording: the chromaticity and brightness of the
/// layout image's pixels that are not paper, in the middle of the frame (the field and
/// the tatami around it), with their spread.
#[derive(Debug, Clone)]
pub(super) struct Tatami {
    pub(super) chroma: [f64; 2],
    pub(super) chroma_tol: [f64; 2],
    pub(super) level: f64,
    /// Its median gray level (not balanced).
    pub(super) gray: f64,
}

impl Tatami {
    pub(super) fn measure(
        image: &Mat,
        gains: &[f64; 3],
        white_min: f64,
    ) -> Result<Tatami, opencv::Error> {
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
    pub(super) fn is_like(&self, bgr: &[u8], gains: &[f64; 3]) -> bool {
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
pub(super) struct Paper {
    /// Red and green shares of the white-balanced sum.
    pub(super) chroma: [f64; 2],
    pub(super) tol: f64,
    /// Its median gray level (not balanced), as the frames show it.
    pub(super) gray: f64,
}

impl Paper {
    /// From each layout card's pixels (`card_pixels`); `None` when they hold too few
    /// white pixels to measure.
    pub(super) fn measure(
        cards: &[Vec<[u8; 3]>],
        gains: &[f64; 3],
        white_min: f64,
    ) -> Option<Paper> {
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
    pub(super) fn off(&self, c: &[f64; 3]) -> f64 {
        let sum = (c[0] + c[1] + c[2]).max(1.0);
        (c[2] / sum - self.chroma[0])
            .abs()
            .max((c[1] / sum - self.chroma[1]).abs())
    }

    /// Whether blob `label` of `labels` (within `rect` of `patch`) is of the paper's
    /// colour: the median of its pixels' distances (every other pixel both ways).
    pub(super) fn is_paper(
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
pub(super) fn card_pixels(
    image: &Mat,
    cards_px: &[QuadPx],
) -> Result<Vec<Vec<[u8; 3]>>, opencv::Error> {
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
pub(super) fn min3(c: &[f64; 3]) -> f64 {
    c[0].min(c[1]).min(c[2])
}

/// A BGR pixel white-balanced by `gains`.
pub(super) fn balanced(bgr: &[u8], gains: &[f64; 3]) -> [f64; 3] {
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
pub(super) fn median(v: &mut [f64]) -> f64 {
    crate::util::median(v).unwrap_or(0.0)
}

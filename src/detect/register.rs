//! Image-to-field registration from the detected cards, for the layout command.
//!
//! Player A sits at the bottom of the image (the camera convention of the recording
//! directory); the field's +y runs up the image along the cards' long sides. Cards are
//! grouped into the six rows (7-1: rows 1 cm apart, 3 cm between the territories), and a
//! homography is fitted from every card corner to the card's nominal 52 x 73 mm outline
//! at its row's centre, refined a few times as the cards' x and angle become known.

use super::{DetectError, PointPx, QuadPx};
use crate::rules::geometry::{rotated_rect, FieldGeometry};
use crate::rules::model::{FieldSize, Player};
use opencv::calib3d;
use opencv::core::{self, Mat, Point2f, Vector};
use opencv::prelude::*;
use std::path::Path;

/// Distance between row centres that starts a new row, mm (rows are 83 mm apart).
const ROW_SPLIT_MM: f64 = 40.0;
/// RANSAC inlier distance on the field plane, mm.
const RANSAC_MM: f64 = 6.0;
/// Refinement rounds after the first fit.
const ROUNDS: usize = 4;

/// A 3x3 homography, row-major.
pub type H3 = [[f64; 3]; 3];

pub fn apply(h: &H3, p: PointPx) -> PointPx {
    let w = h[2][0] * p[0] + h[2][1] * p[1] + h[2][2];
    [
        (h[0][0] * p[0] + h[0][1] * p[1] + h[0][2]) / w,
        (h[1][0] * p[0] + h[1][1] * p[1] + h[1][2]) / w,
    ]
}

fn to_h3(m: &Mat) -> Result<Option<H3>, DetectError> {
    if m.rows() != 3 || m.cols() != 3 {
        return Ok(None);
    }
    let mut h = [[0.0; 3]; 3];
    for (r, row) in h.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v = *m.at_2d::<f64>(r as i32, c as i32)?;
        }
    }
    Ok(Some(h))
}

fn find_h(src: &[PointPx], dst: &[PointPx], method: i32) -> Result<Option<H3>, DetectError> {
    let s: Vector<Point2f> = src
        .iter()
        .map(|p| Point2f::new(p[0] as f32, p[1] as f32))
        .collect();
    let d: Vector<Point2f> = dst
        .iter()
        .map(|p| Point2f::new(p[0] as f32, p[1] as f32))
        .collect();
    let mut mask = Mat::default();
    let m = calib3d::find_homography(&s, &d, &mut mask, method, RANSAC_MM)?;
    to_h3(&m)
}

/// A card's place in the rows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowSlot {
    pub owner: Player,
    pub row: u8,
}

/// The fitted mapping and each card's row.
#[derive(Debug, Clone)]
pub struct Registration {
    pub image_to_field: H3,
    pub slots: Vec<RowSlot>,
}

/// Centre (x, y) and angle (degrees, counter-clockwise; 0 = long side along y) of a card
/// outline mapped into the field.
pub fn card_pose(h: &H3, quad: &QuadPx) -> (f64, f64, f64) {
    let f: Vec<PointPx> = quad.iter().map(|p| apply(h, *p)).collect();
    let cx = f.iter().map(|p| p[0]).sum::<f64>() / 4.0;
    let cy = f.iter().map(|p| p[1]).sum::<f64>() / 4.0;
    // Corners run clockwise from the top-left in the image: 0-1 is the top edge.
    let top = [(f[0][0] + f[1][0]) / 2.0, (f[0][1] + f[1][1]) / 2.0];
    let bottom = [(f[2][0] + f[3][0]) / 2.0, (f[2][1] + f[3][1]) / 2.0];
    let (vx, vy) = (top[0] - bottom[0], top[1] - bottom[1]);
    let mut angle = (-vx).atan2(vy).to_degrees();
    // A card's outline is symmetric: report the angle nearest zero.
    if angle > 90.0 {
        angle -= 180.0;
    } else if angle < -90.0 {
        angle += 180.0;
    }
    (cx, cy, angle)
}

/// Fits the image-to-field homography to card outlines (undistorted pixels, clockwise
/// from the top-left as they stand in the image).
pub fn register(
    source: &Path,
    quads: &[QuadPx],
    field: &FieldSize,
) -> Result<Registration, DetectError> {
    let bad = |problem: &str| DetectError::Registration {
        path: source.to_path_buf(),
        problem: problem.to_string(),
    };
    if quads.len() < 4 {
        return Err(bad("fewer than four cards found"));
    }
    let geom = FieldGeometry::new(field.clone());
    // Rough frame: +y up the image along the cards' long sides, scale from card height.
    let mut up = [0.0, 0.0];
    let mut heights = Vec::new();
    for q in quads {
        up[0] += (q[0][0] + q[1][0] - q[2][0] - q[3][0]) / 2.0;
        up[1] += (q[0][1] + q[1][1] - q[2][1] - q[3][1]) / 2.0;
        heights.push(
            ((q[0][0] + q[1][0] - q[2][0] - q[3][0]) / 2.0)
                .hypot((q[0][1] + q[1][1] - q[2][1] - q[3][1]) / 2.0),
        );
    }
    let n = up[0].hypot(up[1]).max(1e-9);
    let up = [up[0] / n, up[1] / n];
    let right = [-up[1], up[0]];
    heights.sort_by(|a, b| a.total_cmp(b));
    let px_per_mm = heights[heights.len() / 2] / field.card_h_mm;
    let centres: Vec<PointPx> = quads.iter().map(super::cards::centre).collect();
    let mean = [
        centres.iter().map(|c| c[0]).sum::<f64>() / centres.len() as f64,
        centres.iter().map(|c| c[1]).sum::<f64>() / centres.len() as f64,
    ];
    let rough: Vec<PointPx> = centres
        .iter()
        .map(|c| {
            let d = [c[0] - mean[0], c[1] - mean[1]];
            [
                (d[0] * right[0] + d[1] * right[1]) / px_per_mm,
                (d[0] * up[0] + d[1] * up[1]) / px_per_mm,
            ]
        })
        .collect();
    let slots =
        assign_rows(&rough).ok_or_else(|| bad("the cards do not form two territories of rows"))?;

    // Fit, then refine x and angle from the current fit.
    let mut xs: Vec<f64> = rough.iter().map(|p| p[0]).collect();
    let mut angles = vec![0.0; quads.len()];
    let mut h: Option<H3> = None;
    for round in 0..=ROUNDS {
        let mut src = Vec::with_capacity(quads.len() * 4);
        let mut dst = Vec::with_capacity(quads.len() * 4);
        for (i, q) in quads.iter().enumerate() {
            let y = geom.row_center_y_mm(slots[i].owner, slots[i].row);
            let ideal = rotated_rect(xs[i], y, field.card_w_mm, field.card_h_mm, angles[i]);
            // rotated_rect runs (-w,-h), (+w,-h), (+w,+h), (-w,+h): bottom-left first.
            let order = [ideal[3], ideal[2], ideal[1], ideal[0]];
            for k in 0..4 {
                src.push(q[k]);
                dst.push([order[k].x_mm, order[k].y_mm]);
            }
        }
        let method = if round == 0 { calib3d::RANSAC } else { 0 };
        let Some(fit) = find_h(&src, &dst, method)? else {
            return Err(bad("no homography fits the card outlines"));
        };
        for (i, q) in quads.iter().enumerate() {
            let (x, _, a) = card_pose(&fit, q);
            xs[i] = x;
            angles[i] = a;
        }
        h = Some(fit);
    }
    let mut h = h.ok_or_else(|| bad("no homography fits the card outlines"))?;
    // Centre x on the cards' extent: the outermost cards mark the territories' edges.
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for q in quads {
        for p in q {
            let f = apply(&h, *p);
            lo = lo.min(f[0]);
            hi = hi.max(f[0]);
        }
    }
    let shift = -(lo + hi) / 2.0;
    for c in 0..3 {
        h[0][c] += shift * h[2][c];
    }
    Ok(Registration {
        image_to_field: h,
        slots,
    })
}

/// Groups rough card centres (mm, +y towards B) into rows and names them: the widest gap
/// between neighbouring rows is the gap between the territories.
fn assign_rows(rough: &[PointPx]) -> Option<Vec<RowSlot>> {
    let mut order: Vec<usize> = (0..rough.len()).collect();
    order.sort_by(|a, b| rough[*a][1].total_cmp(&rough[*b][1]));
    let mut clusters: Vec<Vec<usize>> = Vec::new();
    for &i in &order {
        match clusters.last_mut() {
            Some(c) if rough[i][1] - rough[*c.last()?][1] < ROW_SPLIT_MM => c.push(i),
            _ => clusters.push(vec![i]),
        }
    }
    if clusters.len() < 2 {
        return None;
    }
    let means: Vec<f64> = clusters
        .iter()
        .map(|c| c.iter().map(|&i| rough[i][1]).sum::<f64>() / c.len() as f64)
        .collect();
    let split = (0..means.len() - 1)
        .max_by(|a, b| (means[a + 1] - means[*a]).total_cmp(&(means[b + 1] - means[*b])))?;
    let pitch = crate::rules::geometry::CARD_H_MM + crate::rules::geometry::ROW_GAP_MM;
    let mut slots = vec![
        RowSlot {
            owner: Player::A,
            row: 1
        };
        rough.len()
    ];
    for (k, c) in clusters.iter().enumerate() {
        let (owner, edge) = if k <= split {
            (Player::A, means[split])
        } else {
            (Player::B, means[split + 1])
        };
        let row = (1.0 + ((means[k] - edge).abs() / pitch).round()).clamp(1.0, 3.0) as u8;
        for &i in c {
            slots[i] = RowSlot { owner, row };
        }
    }
    Some(slots)
}

/// Maps undistorted pixel points into the field through `h` with OpenCV.
pub fn to_field(h: &H3, pts: &[PointPx]) -> Result<Vec<PointPx>, DetectError> {
    let m = Mat::from_slice_2d(h)?;
    let src: Vector<core::Point2d> = pts.iter().map(|p| core::Point2d::new(p[0], p[1])).collect();
    let mut dst = Vector::<core::Point2d>::new();
    core::perspective_transform(&src, &mut dst, &m)?;
    Ok(dst.iter().map(|p| [p.x, p.y]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_split_at_the_widest_gap() {
        // Rough centres of A3, A2, A1, B1, B2 (B3 empty).
        let ys = [-217.5, -134.5, -51.5, 51.5, 134.5];
        let pts: Vec<PointPx> = ys.iter().map(|y| [0.0, *y + 7.0]).collect();
        let s = assign_rows(&pts).unwrap();
        let got: Vec<(Player, u8)> = s.iter().map(|s| (s.owner, s.row)).collect();
        assert_eq!(
            got,
            vec![
                (Player::A, 3),
                (Player::A, 2),
                (Player::A, 1),
                (Player::B, 1),
                (Player::B, 2)
            ]
        );
    }
}

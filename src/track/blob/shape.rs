//! The geometry of a card seen as a blob: its quadrilateral and long axis, and how far
//! it lies beyond the playing area (`out_margin_mm`).

use crate::detect::QuadPx;
use crate::rules::geometry::{Pt, Rect as AreaRect};
use opencv::core::{Point2f, Vector};
use opencv::{core, imgproc};

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
    margin_from_reach_mm(&reach_past_lines_mm(pts, area), angle_deg, w_mm, h_mm)
}

/// The outward normals of the playing area's four lines: x1, x0, y1, y0.
const NORMALS: [(f64, f64); 4] = [(1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0)];

/// Each line of the area (`NORMALS`' order) as its offset along its normal.
fn line_offsets(area: &AreaRect) -> [f64; 4] {
    [area.x1_mm, -area.x0_mm, area.y1_mm, -area.y0_mm]
}

/// How far the farthest of the points `pts` (mm) lies past each of the playing area's
/// lines along its outward normal (x1, x0, y1, y0), mm: what `out_margin_mm` needs of a
/// sighting besides the card's angle, kept to measure it again at another angle.
pub fn reach_past_lines_mm(pts: &[Pt], area: &AreaRect) -> [f64; 4] {
    let o = line_offsets(area);
    std::array::from_fn(|i| {
        let (dx, dy) = NORMALS[i];
        pts.iter()
            .map(|p| p.x_mm * dx + p.y_mm * dy)
            .fold(f64::NEG_INFINITY, f64::max)
            - o[i]
    })
}

/// `out_margin_mm` of a card whose visible part reaches `reach` past the lines
/// (`reach_past_lines_mm`), turned at `angle_deg`.
pub fn margin_from_reach_mm(reach: &[f64; 4], angle_deg: f64, w_mm: f64, h_mm: f64) -> f64 {
    let th = angle_deg.to_radians();
    let (ux, uy) = (th.cos(), th.sin()); // the card's width axis
    let (vx, vy) = (-uy, ux); // its height axis
    reach
        .iter()
        .zip(NORMALS)
        .map(|(r, (dx, dy))| {
            let extent = w_mm * (ux * dx + uy * dy).abs() + h_mm * (vx * dx + vy * dy).abs();
            r - extent
        })
        .fold(f64::NEG_INFINITY, f64::max)
}

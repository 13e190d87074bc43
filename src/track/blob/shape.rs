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

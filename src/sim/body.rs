//! The players' hands and forearms as geometry on the field frame: a hand is placed by its
//! middle fingertip (the contact point), points away from its shoulder, and every vertex
//! carries a height above the tatami. Pure: the renderer draws these shapes, the story
//! derives touches and enter/leave events from the same shapes.

use crate::rules::geometry::Pt;

/// A hand touches a card when its middle fingertip is at the tatami (height 0) and this
/// close to (or over) the card.
pub const TIP_CONTACT_R_MM: f64 = 8.0;
/// Heights below this count as resting on the tatami.
pub const CONTACT_Z_MM: f64 = 1e-6;

/// A point with its height above the tatami.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct P3 {
    pub x_mm: f64,
    pub y_mm: f64,
    pub z_mm: f64,
}

impl P3 {
    pub fn xy(&self) -> Pt {
        Pt::new(self.x_mm, self.y_mm)
    }
}

/// What a player's hands look like (fixed for the match).
#[derive(Debug, Clone, PartialEq)]
pub struct Appearance {
    /// Wrist to middle fingertip.
    pub hand_len_mm: f64,
    /// Palm width at the knuckles.
    pub palm_w_mm: f64,
    pub skin_bgr: [f64; 3],
    pub sleeve_bgr: [f64; 3],
    pub sleeve_w_mm: f64,
}

/// A finger (or the thumb) from base to tip, with its width.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Finger {
    pub base: P3,
    pub tip: P3,
    pub width_mm: f64,
}

/// Named points of a hand, as labels give them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Keypoints {
    pub wrist: P3,
    pub thumb: P3,
    pub index: P3,
    pub middle: P3,
    pub ring: P3,
    pub little: P3,
}

impl Keypoints {
    pub const NAMES: [&'static str; 6] = ["wrist", "thumb", "index", "middle", "ring", "little"];
    pub fn all(&self) -> [P3; 6] {
        [
            self.wrist,
            self.thumb,
            self.index,
            self.middle,
            self.ring,
            self.little,
        ]
    }
}

/// One hand and its forearm in 3-D (field frame, heights above the tatami).
#[derive(Debug, Clone, PartialEq)]
pub struct HandShape {
    pub palm: Vec<P3>,
    /// Thumb first, then index to little finger.
    pub fingers: [Finger; 5],
    /// Wrist to elbow, skin.
    pub forearm: [P3; 4],
    /// The sleeve over the forearm, to beyond the frame.
    pub sleeve: [P3; 4],
    pub keypoints: Keypoints,
}

/// The shape of a hand whose middle fingertip is at `tip` (height `z_mm`), pointing away
/// from `shoulder`. `right` says which hand it is: with the palm down the thumb of a right
/// hand lies to the left of the pointing direction.
pub fn hand_shape(look: &Appearance, tip: Pt, z_mm: f64, shoulder: Pt, right: bool) -> HandShape {
    let (dx, dy) = (tip.x_mm - shoulder.x_mm, tip.y_mm - shoulder.y_mm);
    let n = (dx * dx + dy * dy).sqrt().max(1e-9);
    let d = (dx / n, dy / n);
    let lat = (-d.1, d.0);
    let s = if right { 1.0 } else { -1.0 };
    let l = look.hand_len_mm;
    let w = look.palm_w_mm;
    // Local (a along the pointing direction, 0 at the tip; b towards the thumb) to field.
    let at = |a: f64, b: f64, h: f64| P3 {
        x_mm: tip.x_mm + d.0 * a + lat.0 * b * s,
        y_mm: tip.y_mm + d.1 * a + lat.1 * b * s,
        z_mm: z_mm + h,
    };
    let knuckle_a = -0.45 * l;
    let bases = [0.27 * w, 0.0, -0.25 * w, -0.48 * w];
    let lens = [0.40 * l, 0.45 * l, 0.42 * l, 0.33 * l];
    let widths = [17.0, 18.0, 17.0, 15.0];
    let finger = |i: usize| {
        let tip_b = bases[i] * 1.2;
        let tip_a = knuckle_a + lens[i];
        let h_tip = if i == 1 { 0.0 } else { 2.0 };
        Finger {
            base: at(knuckle_a, bases[i], 12.0),
            tip: at(tip_a, tip_b, h_tip),
            width_mm: widths[i],
        }
    };
    let thumb = Finger {
        base: at(-0.85 * l, 0.33 * w, 20.0),
        tip: at(-0.50 * l, 0.72 * w, 8.0),
        width_mm: 21.0,
    };
    let fingers = [thumb, finger(0), finger(1), finger(2), finger(3)];
    let palm = vec![
        at(knuckle_a, 0.42 * w, 12.0),
        at(knuckle_a + 4.0, 0.0, 12.0),
        at(knuckle_a, -0.58 * w, 12.0),
        at(-0.80 * l, -0.50 * w, 22.0),
        at(-l, -0.38 * w, 25.0),
        at(-l, 0.25 * w, 25.0),
        at(-0.80 * l, 0.42 * w, 22.0),
    ];
    let wrist = at(-l, -0.06 * w, 25.0);
    let fw = 0.34 * w;
    let forearm = [
        at(-l + 5.0, 0.25 * w, 25.0),
        at(-l - 260.0, fw * 1.1, 150.0),
        at(-l - 260.0, -fw * 1.3, 150.0),
        at(-l + 5.0, -0.38 * w, 25.0),
    ];
    let sw = look.sleeve_w_mm / 2.0;
    let sleeve = [
        at(-l - 110.0, sw * 0.8 - 0.06 * w, 70.0),
        at(-l - 600.0, sw * 1.2, 320.0),
        at(-l - 600.0, -sw * 1.2, 320.0),
        at(-l - 110.0, -sw * 0.8 - 0.06 * w, 70.0),
    ];
    let keypoints = Keypoints {
        wrist,
        thumb: fingers[0].tip,
        index: fingers[1].tip,
        middle: fingers[2].tip,
        ring: fingers[3].tip,
        little: fingers[4].tip,
    };
    HandShape {
        palm,
        fingers,
        forearm,
        sleeve,
        keypoints,
    }
}

/// Where a point at height z appears on the tatami from a camera centred at `cam`
/// (x, y, height): the ray through the point meets the plane there.
pub fn project_to_tatami(cam: [f64; 3], p: P3) -> Pt {
    let k = cam[2] / (cam[2] - p.z_mm).max(1.0);
    Pt::new(
        cam[0] + (p.x_mm - cam[0]) * k,
        cam[1] + (p.y_mm - cam[1]) * k,
    )
}

/// Where a point at height z casts its shadow, for light travelling along `light`
/// (millimetres of shadow offset per millimetre of height).
pub fn shadow_on_tatami(light: [f64; 2], p: P3) -> Pt {
    Pt::new(p.x_mm + light[0] * p.z_mm, p.y_mm + light[1] * p.z_mm)
}

impl HandShape {
    /// Points outlining the hand (wrist to fingertips), fingers widened to their edges.
    pub fn outline_points(&self) -> Vec<P3> {
        let mut pts = self.palm.clone();
        for f in &self.fingers {
            let (ex, ey) = (f.tip.x_mm - f.base.x_mm, f.tip.y_mm - f.base.y_mm);
            let n = (ex * ex + ey * ey).sqrt().max(1e-9);
            let (ux, uy) = (ex / n, ey / n);
            let r = f.width_mm / 2.0;
            for (ox, oy) in [(ux * r, uy * r), (-uy * r, ux * r), (uy * r, -ux * r)] {
                pts.push(P3 {
                    x_mm: f.tip.x_mm + ox,
                    y_mm: f.tip.y_mm + oy,
                    z_mm: f.tip.z_mm,
                });
            }
        }
        pts
    }
}

/// The convex hull of points on the plane (monotone chain), counter-clockwise.
pub fn convex_hull(points: &[Pt]) -> Vec<Pt> {
    let mut p: Vec<Pt> = points.to_vec();
    p.sort_by(|a, b| a.x_mm.total_cmp(&b.x_mm).then(a.y_mm.total_cmp(&b.y_mm)));
    if p.len() < 3 {
        return p;
    }
    let cross = |o: Pt, a: Pt, b: Pt| {
        (a.x_mm - o.x_mm) * (b.y_mm - o.y_mm) - (a.y_mm - o.y_mm) * (b.x_mm - o.x_mm)
    };
    let mut hull: Vec<Pt> = Vec::with_capacity(p.len() * 2);
    for &pt in p.iter() {
        while hull.len() >= 2 && cross(hull[hull.len() - 2], hull[hull.len() - 1], pt) <= 0.0 {
            hull.pop();
        }
        hull.push(pt);
    }
    let lower = hull.len() + 1;
    for &pt in p.iter().rev().skip(1) {
        while hull.len() >= lower && cross(hull[hull.len() - 2], hull[hull.len() - 1], pt) <= 0.0 {
            hull.pop();
        }
        hull.push(pt);
    }
    hull.pop();
    hull
}

/// Distance from a point to a convex polygon (0 inside).
pub fn dist_to_polygon(p: Pt, poly: &[Pt]) -> f64 {
    let n = poly.len();
    let mut inside = true;
    let mut best = f64::INFINITY;
    for i in 0..n {
        let a = poly[i];
        let b = poly[(i + 1) % n];
        let (ex, ey) = (b.x_mm - a.x_mm, b.y_mm - a.y_mm);
        let (px, py) = (p.x_mm - a.x_mm, p.y_mm - a.y_mm);
        if ex * py - ey * px < 0.0 {
            inside = false;
        }
        let len2 = (ex * ex + ey * ey).max(1e-12);
        let u = ((px * ex + py * ey) / len2).clamp(0.0, 1.0);
        let (qx, qy) = (px - u * ex, py - u * ey);
        best = best.min((qx * qx + qy * qy).sqrt());
    }
    if inside {
        0.0
    } else {
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn look() -> Appearance {
        Appearance {
            hand_len_mm: 185.0,
            palm_w_mm: 85.0,
            skin_bgr: [150.0, 180.0, 220.0],
            sleeve_bgr: [60.0, 40.0, 30.0],
            sleeve_w_mm: 120.0,
        }
    }

    #[test]
    fn hand_points_away_from_shoulder_with_thumb_on_the_correct_side() {
        let tip = Pt::new(0.0, 0.0);
        let right = hand_shape(&look(), tip, 0.0, Pt::new(0.0, -500.0), true);
        assert!((right.keypoints.middle.x_mm).abs() < 1e-9);
        assert!(right.keypoints.wrist.y_mm < -150.0);
        // A's right hand reaching forward (+y): the thumb is towards -x.
        assert!(right.keypoints.thumb.x_mm < 0.0);
        let left = hand_shape(&look(), tip, 0.0, Pt::new(0.0, -500.0), false);
        assert!(left.keypoints.thumb.x_mm > 0.0);
    }

    #[test]
    fn hull_and_distance() {
        let sq = [
            Pt::new(0.0, 0.0),
            Pt::new(1.0, 0.0),
            Pt::new(1.0, 1.0),
            Pt::new(0.0, 1.0),
            Pt::new(0.5, 0.5),
        ];
        let h = convex_hull(&sq);
        assert_eq!(h.len(), 4);
        assert_eq!(dist_to_polygon(Pt::new(0.5, 0.5), &h), 0.0);
        assert!((dist_to_polygon(Pt::new(2.0, 0.5), &h) - 1.0).abs() < 1e-9);
    }
}

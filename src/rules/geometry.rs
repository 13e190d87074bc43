//! The field frame (docs/contract.md section 2): nominal sizes from article 7 and pure
//! geometry on the tatami plane in millimetres. No camera here: the `field` stage maps
//! pixels into this frame and then asks these questions.

use crate::rules::model::{FieldSize, Player};

/// Card size, w x h; the long side lies along y.
pub const CARD_W_MM: f64 = 52.0;
pub const CARD_H_MM: f64 = 73.0;
/// Territory width (7-1): 87 cm.
pub const TERRITORY_W_MM: f64 = 870.0;
/// Gap between the two territories' upper rows (7-2): 3 cm.
pub const GAP_MM: f64 = 30.0;
/// Gap between rows (7-1): 1 cm.
pub const ROW_GAP_MM: f64 = 10.0;
/// Rows per territory (9).
pub const ROWS: u8 = 3;
/// A fingertip this close to a card's outline, at table height, touches it: a finger
/// pad is about this wide. The hands and the card tracker both ask it.
pub const TOUCH_RADIUS_MM: f64 = 8.0;
/// A hand's outline runs past each fingertip point by half a finger's width (an adult's
/// finger is 15-18 mm across). The hands and the card tracker both ask it.
pub const FINGER_HALF_WIDTH_MM: f64 = 8.0;

/// A point on the tatami plane.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Pt {
    pub x_mm: f64,
    pub y_mm: f64,
}

impl Pt {
    pub fn new(x_mm: f64, y_mm: f64) -> Self {
        Pt { x_mm, y_mm }
    }

    /// The distance to `other`, mm.
    pub fn dist_mm(self, other: Pt) -> f64 {
        (self.x_mm - other.x_mm).hypot(self.y_mm - other.y_mm)
    }
}

/// An axis-aligned rectangle in the field frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub x0_mm: f64,
    pub y0_mm: f64,
    pub x1_mm: f64,
    pub y1_mm: f64,
}

impl Rect {
    pub fn contains(&self, p: Pt) -> bool {
        p.x_mm >= self.x0_mm && p.x_mm <= self.x1_mm && p.y_mm >= self.y0_mm && p.y_mm <= self.y1_mm
    }
    pub fn corners(&self) -> [Pt; 4] {
        [
            Pt::new(self.x0_mm, self.y0_mm),
            Pt::new(self.x1_mm, self.y0_mm),
            Pt::new(self.x1_mm, self.y1_mm),
            Pt::new(self.x0_mm, self.y1_mm),
        ]
    }
}

/// The field's sizes: nominal, or as measured (`layout.json` `field`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FieldGeometry {
    pub size: FieldSize,
}

impl FieldGeometry {
    pub fn new(size: FieldSize) -> Self {
        FieldGeometry { size }
    }

    /// Depth of a territory: three card rows and two row gaps.
    pub fn depth_mm(&self) -> f64 {
        3.0 * self.size.card_h_mm + 2.0 * self.size.row_gap_mm
    }

    /// A player's territory (jijin).
    pub fn territory(&self, p: Player) -> Rect {
        let (w, g, d) = (self.size.width_mm, self.size.gap_mm, self.depth_mm());
        match p {
            Player::A => Rect {
                x0_mm: -w / 2.0,
                y0_mm: -g / 2.0 - d,
                x1_mm: w / 2.0,
                y1_mm: -g / 2.0,
            },
            Player::B => Rect {
                x0_mm: -w / 2.0,
                y0_mm: g / 2.0,
                x1_mm: w / 2.0,
                y1_mm: g / 2.0 + d,
            },
        }
    }

    /// The playing area (kyogi-sen): both territories and the gap between them.
    pub fn playing_area(&self) -> Rect {
        let a = self.territory(Player::A);
        let b = self.territory(Player::B);
        Rect {
            x0_mm: a.x0_mm,
            y0_mm: a.y0_mm,
            x1_mm: b.x1_mm,
            y1_mm: b.y1_mm,
        }
    }

    /// Centre y of a row (1 = upper row, nearest the opponent; 3 = nearest the player).
    pub fn row_center_y_mm(&self, p: Player, row: u8) -> f64 {
        let pitch = self.size.card_h_mm + self.size.row_gap_mm;
        let upper = self.size.gap_mm / 2.0 + self.size.card_h_mm / 2.0;
        let dist = upper + pitch * (row.clamp(1, ROWS) as f64 - 1.0);
        match p {
            Player::A => -dist,
            Player::B => dist,
        }
    }

    /// The territory holding a point, if any (the gap and outside hold none).
    pub fn territory_of(&self, pt: Pt) -> Option<Player> {
        Player::BOTH
            .into_iter()
            .find(|p| self.territory(*p).contains(pt))
    }

    /// The row of a territory a point lies in, by nearest row centre.
    pub fn row_of(&self, p: Player, y_mm: f64) -> u8 {
        (1..=ROWS)
            .min_by(|a, b| {
                let da = (self.row_center_y_mm(p, *a) - y_mm).abs();
                let db = (self.row_center_y_mm(p, *b) - y_mm).abs();
                da.total_cmp(&db)
            })
            .unwrap_or(1)
    }

    /// The four corners of a card centred at (x, y), rotated by `angle_deg`.
    pub fn card_corners(&self, x_mm: f64, y_mm: f64, angle_deg: f64) -> [Pt; 4] {
        rotated_rect(
            x_mm,
            y_mm,
            self.size.card_w_mm,
            self.size.card_h_mm,
            angle_deg,
        )
    }

    /// A card is out when no part of it lies inside the playing area (17-2).
    pub fn card_is_out(&self, x_mm: f64, y_mm: f64, angle_deg: f64) -> bool {
        !convex_intersects_rect(
            &self.card_corners(x_mm, y_mm, angle_deg),
            &self.playing_area(),
        )
    }

    /// A hand (any convex outline, projected onto the tatami) is inside the playing area
    /// when any part of it is: the area includes the air above it (7-1 note).
    pub fn hand_is_inside(&self, outline: &[Pt]) -> bool {
        convex_intersects_rect(outline, &self.playing_area())
    }
}

/// Corners of a w x h rectangle centred at (cx, cy), rotated counter-clockwise.
pub fn rotated_rect(cx: f64, cy: f64, w: f64, h: f64, angle_deg: f64) -> [Pt; 4] {
    let (s, c) = angle_deg.to_radians().sin_cos();
    let (hw, hh) = (w / 2.0, h / 2.0);
    [(-hw, -hh), (hw, -hh), (hw, hh), (-hw, hh)]
        .map(|(dx, dy)| Pt::new(cx + dx * c - dy * s, cy + dx * s + dy * c))
}

/// Separating-axis test between a convex polygon and an axis-aligned rectangle.
/// Touching edges count as intersecting.
pub fn convex_intersects_rect(poly: &[Pt], r: &Rect) -> bool {
    if poly.is_empty() {
        return false;
    }
    let proj = |pts: &[Pt], ax: (f64, f64)| -> (f64, f64) {
        pts.iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                let d = p.x_mm * ax.0 + p.y_mm * ax.1;
                (lo.min(d), hi.max(d))
            })
    };
    let rc = r.corners();
    let mut axes = vec![(1.0, 0.0), (0.0, 1.0)];
    for i in 0..poly.len() {
        let a = poly[i];
        let b = poly[(i + 1) % poly.len()];
        let (ex, ey) = (b.x_mm - a.x_mm, b.y_mm - a.y_mm);
        if ex != 0.0 || ey != 0.0 {
            axes.push((-ey, ex));
        }
    }
    axes.into_iter().all(|ax| {
        let (p0, p1) = proj(poly, ax);
        let (r0, r1) = proj(&rc, ax);
        p1 >= r0 && r1 >= p0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn art_7_territory_is_870_wide_and_239_deep_with_30_gap() {
        let g = FieldGeometry::default();
        let a = g.territory(Player::A);
        let b = g.territory(Player::B);
        assert_eq!(a.x1_mm - a.x0_mm, 870.0);
        assert_eq!(a.y1_mm - a.y0_mm, 239.0);
        assert_eq!(b.y0_mm - a.y1_mm, 30.0);
        assert_eq!(g.row_center_y_mm(Player::A, 1), -51.5);
        assert_eq!(g.row_center_y_mm(Player::B, 3), 15.0 + 36.5 + 2.0 * 83.0);
    }

    #[test]
    fn art_17_2_card_is_out_only_when_wholly_outside_the_area() {
        let g = FieldGeometry::default();
        // Half over the left edge: not out.
        assert!(!g.card_is_out(-435.0, -51.5, 0.0));
        // Just past the edge by half a card width plus a millimetre: out.
        assert!(g.card_is_out(-435.0 - 27.0, -51.5, 0.0));
        // In the gap between territories: not out.
        assert!(!g.card_is_out(0.0, 0.0, 90.0));
        // Rotated 45 degrees near a corner: the diagonal reaches further.
        assert!(!g.card_is_out(-435.0 - 40.0, -51.5, 45.0));
        assert!(g.card_is_out(-435.0 - 70.0, -51.5, 45.0));
    }

    #[test]
    fn territory_of_points() {
        let g = FieldGeometry::default();
        assert_eq!(g.territory_of(Pt::new(0.0, -100.0)), Some(Player::A));
        assert_eq!(g.territory_of(Pt::new(0.0, 100.0)), Some(Player::B));
        assert_eq!(g.territory_of(Pt::new(0.0, 0.0)), None);
        assert_eq!(g.row_of(Player::B, 140.0), 2);
    }
}

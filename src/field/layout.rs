//! The measured layout and the layout check for officials (article 7).
//!
//! What is measured, from the cards (each card is 52 x 73 mm, laid square to the rows):
//! - territory width: from the leftmost card edge to the rightmost card edge across the
//!   territory's rows; players lay their outermost cards to the territory's edges, so this
//!   is the territory's width as laid;
//! - gap between territories: from the edge of A's upper row to the edge of B's upper row
//!   (the row lines are the median of each row's card centres);
//! - row gaps: between consecutive row lines of a territory, minus a card's height.
//!
//! Reads a `Registration` and card quads or a `Layout`; writes nothing.

use crate::field::calibration::CardQuad;
use crate::field::register::{Registration, ROW_CLUSTER_MM};
use crate::rules::geometry::{self, FieldGeometry};
use crate::rules::model::{CardPlacement, FieldSize, Layout, Player};
use serde::Serialize;

/// How far a measured size may differ from article 7's before the check reports it: the
/// gap, the row gaps, and a territory *wider* than 87 cm. The rules tolerate "a few
/// millimetres" (note to 7-1); 5 mm is well above the fit's own error (about 1 mm).
pub const LAYOUT_TOLERANCE_MM: f64 = 5.0;
/// How much *narrower* than 87 cm the outermost cards may span before the territory is
/// reported narrow. Nothing marks a territory's edge on the tatami: its width is where the
/// outermost cards lie, and players lay them a few millimetres inside the edge on each side
/// (the simulator: 3 to 9 mm a side, as real layouts), so a legal layout spans up to about
/// 17 mm less than 870. An 84 cm territory (30 mm short) is still reported.
pub const NARROW_TERRITORY_SLACK_MM: f64 = 20.0;

/// What the registration needs from a set of cards: where the field's centre lies in the
/// fitted frame, and the sizes measured.
#[derive(Debug, Clone, PartialEq)]
pub struct QuadMeasure {
    pub origin_x_mm: f64,
    pub origin_y_mm: f64,
    pub field: FieldSize,
}

/// A card's rows, one side of the field, ordered from the gap outwards.
struct Side {
    /// Row lines (median centre y) from the gap outwards, and each row's card indices.
    rows: Vec<(f64, Vec<usize>)>,
    x_min_mm: f64,
    x_max_mm: f64,
}

fn median(v: &mut [f64]) -> f64 {
    crate::util::median_mean_of_middle(v).unwrap_or(f64::NAN)
}

/// Splits cards (their mm corners, rows along x) into the two sides and their rows.
/// `None` unless both sides hold cards.
fn sides(quads_mm: &[[[f64; 2]; 4]], card_h_mm: f64) -> Option<(f64, Side, Side)> {
    let cy: Vec<f64> = quads_mm
        .iter()
        .map(|q| q.iter().map(|p| p[1]).sum::<f64>() / 4.0)
        .collect();
    let mut order: Vec<usize> = (0..cy.len()).collect();
    order.sort_by(|a, b| cy[*a].total_cmp(&cy[*b]));
    // The territories are split where consecutive card centres lie furthest apart.
    let (k, gap) = order
        .windows(2)
        .enumerate()
        .map(|(k, w)| (k, cy[w[1]] - cy[w[0]]))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    if gap < card_h_mm * 0.5 {
        return None;
    }
    let split_y = (cy[order[k]] + cy[order[k + 1]]) / 2.0;
    let build = |idx: Vec<usize>| -> Side {
        // From the gap outwards.
        let mut idx = idx;
        idx.sort_by(|a, b| {
            (cy[*a] - split_y)
                .abs()
                .total_cmp(&(cy[*b] - split_y).abs())
        });
        let mut rows: Vec<Vec<usize>> = Vec::new();
        let mut last = f64::NAN;
        for i in idx {
            let d = (cy[i] - split_y).abs();
            if rows.is_empty() || d - last > ROW_CLUSTER_MM {
                rows.push(Vec::new());
            }
            last = d;
            if let Some(r) = rows.last_mut() {
                r.push(i);
            }
        }
        let rows = rows
            .into_iter()
            .map(|r| {
                let mut ys: Vec<f64> = r.iter().map(|i| cy[*i]).collect();
                (median(&mut ys), r)
            })
            .collect::<Vec<_>>();
        let xs = rows
            .iter()
            .flat_map(|(_, r)| r.iter())
            .flat_map(|i| quads_mm[*i].iter().map(|p| p[0]));
        let (x_min_mm, x_max_mm) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
        Side {
            rows,
            x_min_mm,
            x_max_mm,
        }
    };
    let a = build(order[..=k].to_vec());
    let b = build(order[k + 1..].to_vec());
    Some((split_y, a, b))
}

fn row_gaps(side: &Side, card_h_mm: f64) -> Vec<f64> {
    side.rows
        .windows(2)
        .map(|w| (w[1].0 - w[0].0).abs() - card_h_mm)
        .collect()
}

/// The rows' common slope (dy/dx) in a frame where rows run roughly along x: least squares
/// over every row's card centres about that row's own mean. Rows are laid along a straight
/// edge, so they give the field's direction far better than the cards' own small turns.
pub fn row_slope(quads_mm: &[[[f64; 2]; 4]], card_h_mm: f64) -> Option<f64> {
    let (_, a, b) = sides(quads_mm, card_h_mm)?;
    let centre = |i: usize| -> [f64; 2] {
        let q = &quads_mm[i];
        [
            q.iter().map(|p| p[0]).sum::<f64>() / 4.0,
            q.iter().map(|p| p[1]).sum::<f64>() / 4.0,
        ]
    };
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (_, idx) in a.rows.iter().chain(b.rows.iter()) {
        if idx.len() < 2 {
            continue;
        }
        let pts: Vec<[f64; 2]> = idx.iter().map(|i| centre(*i)).collect();
        let n = pts.len() as f64;
        let mx = pts.iter().map(|p| p[0]).sum::<f64>() / n;
        let my = pts.iter().map(|p| p[1]).sum::<f64>() / n;
        for p in &pts {
            sxy += (p[0] - mx) * (p[1] - my);
            sxx += (p[0] - mx).powi(2);
        }
    }
    (sxx > 0.0).then(|| sxy / sxx)
}

/// Measures the field from cards already mapped to mm with rows along x (any origin).
pub fn measure_quads_mm(quads_mm: &[[[f64; 2]; 4]], field: &FieldSize) -> Option<QuadMeasure> {
    let h = field.card_h_mm;
    let (_, a, b) = sides(quads_mm, h)?;
    let a_inner = a.rows.first()?.0 + h / 2.0;
    let b_inner = b.rows.first()?.0 - h / 2.0;
    let width_a = a.x_max_mm - a.x_min_mm;
    let width_b = b.x_max_mm - b.x_min_mm;
    let gaps: Vec<f64> = row_gaps(&a, h).into_iter().chain(row_gaps(&b, h)).collect();
    let row_gap_mm = if gaps.is_empty() {
        field.row_gap_mm
    } else {
        gaps.iter().sum::<f64>() / gaps.len() as f64
    };
    Some(QuadMeasure {
        origin_x_mm: ((a.x_min_mm + a.x_max_mm) / 2.0 + (b.x_min_mm + b.x_max_mm) / 2.0) / 2.0,
        origin_y_mm: (a_inner + b_inner) / 2.0,
        field: FieldSize {
            width_mm: (width_a + width_b) / 2.0,
            gap_mm: b_inner - a_inner,
            row_gap_mm,
            card_w_mm: field.card_w_mm,
            card_h_mm: h,
        },
    })
}

/// The layout as the cards lie: each inlier card's centre, angle, owner (by the side of
/// y = 0 it lies on) and row (counted from the gap), with the measured field sizes.
/// Poems come from the quads when the detector named them.
pub fn measure_layout(reg: &Registration, quads: &[CardQuad], field: &FieldSize) -> Layout {
    let mut cards = Vec::new();
    let mut corners_mm = Vec::new();
    let mut src = Vec::new();
    for (i, pose) in reg.cards.iter().enumerate() {
        if !pose.inlier || i >= quads.len() {
            continue;
        }
        let c = geometry::rotated_rect(
            pose.x_mm,
            pose.y_mm,
            field.card_w_mm,
            field.card_h_mm,
            pose.angle_deg,
        );
        corners_mm.push(c.map(|p| [p.x_mm, p.y_mm]));
        src.push(i);
    }
    let mut row_of = vec![1u8; corners_mm.len()];
    if let Some((_, a, b)) = sides(&corners_mm, field.card_h_mm) {
        for side in [a, b] {
            for (r, (_, idx)) in side.rows.iter().enumerate() {
                for &k in idx {
                    row_of[k] = (r as u8 + 1).min(geometry::ROWS);
                }
            }
        }
    }
    for (k, &i) in src.iter().enumerate() {
        let pose = &reg.cards[i];
        cards.push(CardPlacement {
            poem: quads[i].poem,
            owner: if pose.y_mm < 0.0 {
                Player::A
            } else {
                Player::B
            },
            row: row_of[k],
            x_mm: pose.x_mm,
            y_mm: pose.y_mm,
            angle_deg: pose.angle_deg,
            poem_score: quads[i].poem_score,
            candidates: Vec::new(),
        });
    }
    Layout {
        field: reg.map.field.clone(),
        players: Default::default(),
        cards,
    }
}

/// One territory as measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TerritoryMeasure {
    pub player: Player,
    pub cards: usize,
    pub rows: usize,
    pub width_mm: f64,
    /// Between rows 1-2 and 2-3 (fewer when rows are empty).
    pub row_gaps_mm: Vec<f64>,
}

/// A size beyond the tolerance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    /// e.g. "A territory width", "gap between territories", "B rows 1-2 gap".
    pub what: String,
    pub measured_mm: f64,
    pub nominal_mm: f64,
    /// The article that sets the size.
    pub article: &'static str,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is {:.1} mm, not {:.0} mm ({:+.1} mm; article {})",
            self.what,
            self.measured_mm,
            self.nominal_mm,
            self.measured_mm - self.nominal_mm,
            self.article
        )
    }
}

/// The layout check's report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayoutCheck {
    pub territories: Vec<TerritoryMeasure>,
    /// `None` when a territory's upper row is empty.
    pub gap_mm: Option<f64>,
    pub tolerance_mm: f64,
    pub narrow_slack_mm: f64,
    pub violations: Vec<Violation>,
}

impl LayoutCheck {
    pub fn is_legal(&self) -> bool {
        self.violations.is_empty()
    }
}

/// Checks a measured layout against article 7's sizes (`nominal`, normally the default).
pub fn check_layout(layout: &Layout, nominal: &FieldSize) -> LayoutCheck {
    let g = FieldGeometry::new(layout.field.clone());
    let mut territories = Vec::new();
    let mut violations = Vec::new();
    let mut upper_edge = [None, None];
    for p in Player::BOTH {
        let mine: Vec<&CardPlacement> = layout.cards.iter().filter(|c| c.owner == p).collect();
        if mine.is_empty() {
            territories.push(TerritoryMeasure {
                player: p,
                cards: 0,
                rows: 0,
                width_mm: f64::NAN,
                row_gaps_mm: Vec::new(),
            });
            continue;
        }
        let (lo, hi) = mine
            .iter()
            .flat_map(|c| g.card_corners(c.x_mm, c.y_mm, c.angle_deg))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), q| {
                (lo.min(q.x_mm), hi.max(q.x_mm))
            });
        let mut lines: Vec<(u8, f64)> = Vec::new();
        for r in 1..=geometry::ROWS {
            let mut ys: Vec<f64> = mine.iter().filter(|c| c.row == r).map(|c| c.y_mm).collect();
            if !ys.is_empty() {
                lines.push((r, median(&mut ys)));
            }
        }
        if let Some((1, y)) = lines.first() {
            upper_edge[p.index()] = Some(y.abs() - layout.field.card_h_mm / 2.0);
        }
        let row_gaps_mm: Vec<f64> = lines
            .windows(2)
            .filter(|w| w[1].0 == w[0].0 + 1)
            .map(|w| (w[1].1 - w[0].1).abs() - layout.field.card_h_mm)
            .collect();
        let width_mm = hi - lo;
        // 7-1: the territory is 87 cm wide.
        if width_mm - nominal.width_mm > LAYOUT_TOLERANCE_MM
            || nominal.width_mm - width_mm > NARROW_TERRITORY_SLACK_MM
        {
            violations.push(Violation {
                what: format!("{p} territory width"),
                measured_mm: width_mm,
                nominal_mm: nominal.width_mm,
                article: "7-1",
            });
        }
        // 7-1: rows 1 cm apart.
        for (k, gap) in row_gaps_mm.iter().enumerate() {
            if (gap - nominal.row_gap_mm).abs() > LAYOUT_TOLERANCE_MM {
                violations.push(Violation {
                    what: format!("{p} rows {}-{} gap", k + 1, k + 2),
                    measured_mm: *gap,
                    nominal_mm: nominal.row_gap_mm,
                    article: "7-1",
                });
            }
        }
        territories.push(TerritoryMeasure {
            player: p,
            cards: mine.len(),
            rows: lines.len(),
            width_mm,
            row_gaps_mm,
        });
    }
    let gap_mm = match upper_edge {
        [Some(a), Some(b)] => Some(a + b),
        _ => None,
    };
    // 7-2: 3 cm between the territories.
    if let Some(gap) = gap_mm {
        if (gap - nominal.gap_mm).abs() > LAYOUT_TOLERANCE_MM {
            violations.push(Violation {
                what: "gap between territories".into(),
                measured_mm: gap,
                nominal_mm: nominal.gap_mm,
                article: "7-2",
            });
        }
    }
    LayoutCheck {
        territories,
        gap_mm,
        tolerance_mm: LAYOUT_TOLERANCE_MM,
        narrow_slack_mm: NARROW_TERRITORY_SLACK_MM,
        violations,
    }
}

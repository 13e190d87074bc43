//! The page's plots as inline SVG written straight from the data: grouped bars, a step
//! line and the match timeline. Only axes, bars, lines and labels; every label from
//! input goes through `esc`. No layout engine: fixed margins, linear scales.

use super::page::esc;
use std::fmt::Write;

/// Player colours used everywhere on the page and in the evidence (A blue, B orange).
pub const COLOUR_A: &str = "#1f5fbf";
pub const COLOUR_B: &str = "#d2691e";
pub const COLOUR_FOUL: &str = "#c62828";
pub const COLOUR_KIMARIJI: &str = "#6a1b9a";

const MARGIN_L: f64 = 52.0;
const MARGIN_R: f64 = 12.0;
const MARGIN_T: f64 = 24.0;
const MARGIN_B: f64 = 42.0;

/// One series of a chart: its name, colour and one value per group (`None`: no bar).
pub struct Series {
    pub name: String,
    pub colour: &'static str,
    pub values: Vec<Option<f64>>,
}

/// A "nice" tick step for a range (1, 2 or 5 times a power of ten).
fn tick_step(span: f64, ticks: f64) -> f64 {
    let raw = (span / ticks).max(1e-9);
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * p)
}

fn fmt_num(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        format!("{v:.1}")
    }
}

/// Y axis with gridlines between `lo` and `hi`; returns the value -> y mapping's parts.
fn y_axis(
    svg: &mut String,
    w: f64,
    h: f64,
    lo: f64,
    hi: f64,
    label: &str,
    integer_ticks: bool,
) -> (f64, f64) {
    let plot_h = h - MARGIN_T - MARGIN_B;
    let scale = plot_h / (hi - lo).max(1e-9);
    let y_of = |v: f64| MARGIN_T + (hi - v) * scale;
    let step = tick_step(hi - lo, 5.0);
    // Counts get whole-number ticks.
    let step = if integer_ticks { step.max(1.0) } else { step };
    let mut t = (lo / step).ceil() * step;
    while t <= hi + 1e-9 {
        let y = y_of(t);
        let _ = write!(
            svg,
            r##"<line x1="{MARGIN_L}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end" class="tick">{}</text>"##,
            w - MARGIN_R,
            MARGIN_L - 4.0,
            y + 4.0,
            fmt_num(t)
        );
        t += step;
    }
    let _ = write!(
        svg,
        r##"<line x1="{MARGIN_L}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#444"/><text x="12" y="{:.1}" transform="rotate(-90 12 {:.1})" text-anchor="middle" class="axis">{}</text>"##,
        y_of(0.0f64.clamp(lo, hi)),
        w - MARGIN_R,
        y_of(0.0f64.clamp(lo, hi)),
        MARGIN_T + plot_h / 2.0,
        MARGIN_T + plot_h / 2.0,
        esc(label)
    );
    (hi, scale)
}

/// Legend entries left to right from the plot's left edge, each as wide as its name.
fn legend(svg: &mut String, _w: f64, series: &[Series]) {
    let mut x = MARGIN_L + 8.0;
    for s in series {
        let _ = write!(
            svg,
            r#"<rect x="{x:.1}" y="2" width="10" height="10" fill="{}"/><text x="{:.1}" y="11" class="legend">{}</text>"#,
            s.colour,
            x + 14.0,
            esc(&s.name)
        );
        x += 30.0 + 7.0 * s.name.chars().count() as f64;
    }
}

/// Grouped bars: one group per label, one bar per series. Values may be negative.
pub fn bar_chart(id: &str, groups: &[String], series: &[Series], y_label: &str) -> String {
    let n = groups.len().max(1) as f64;
    let w = (MARGIN_L + MARGIN_R + n * (12.0 * series.len() as f64 + 10.0)).clamp(360.0, 1100.0);
    let h = 240.0;
    let vals = series.iter().flat_map(|s| s.values.iter().flatten());
    let lo = vals.clone().fold(0.0f64, |a, v| a.min(*v));
    let hi = vals.fold(0.0f64, |a, v| a.max(*v));
    let hi = if hi <= lo {
        lo + 1.0
    } else {
        hi + (hi - lo) * 0.05
    };
    let mut svg = format!(
        r#"<svg id="{id}" class="plot" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" role="img">"#
    );
    let integer = series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .all(|v| v.fract() == 0.0);
    let (top, scale) = y_axis(&mut svg, w, h, lo, hi, y_label, integer);
    let y_of = |v: f64| MARGIN_T + (top - v) * scale;
    let plot_w = w - MARGIN_L - MARGIN_R;
    let gw = plot_w / n;
    let bw = (gw * 0.8 / series.len().max(1) as f64).min(28.0);
    for (gi, g) in groups.iter().enumerate() {
        let gx = MARGIN_L + gi as f64 * gw;
        let x0 = gx + (gw - bw * series.len() as f64) / 2.0;
        for (si, s) in series.iter().enumerate() {
            if let Some(v) = s.values.get(gi).copied().flatten() {
                let (y0, y1) = (y_of(v.max(0.0)), y_of(v.min(0.0)));
                let _ = write!(
                    svg,
                    r#"<rect x="{:.1}" y="{y0:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {}</title></rect>"#,
                    x0 + si as f64 * bw,
                    (bw - 1.0).max(1.0),
                    (y1 - y0).max(0.5),
                    s.colour,
                    esc(&format!("{} {}", s.name, g)),
                    fmt_num((v * 10.0).round() / 10.0)
                );
            }
        }
        // Label every group when they fit, else every k-th.
        let every = ((groups.len() as f64 * 34.0 / plot_w).ceil() as usize).max(1);
        if gi % every == 0 {
            let _ = write!(
                svg,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" class="tick">{}</text>"#,
                gx + gw / 2.0,
                h - MARGIN_B + 14.0,
                esc(g)
            );
        }
    }
    legend(&mut svg, w, series);
    svg.push_str("</svg>");
    svg
}

/// Step lines over an integer x (e.g. cards on the field after each reading).
pub fn step_chart(id: &str, xs: &[u32], series: &[Series], x_label: &str, y_label: &str) -> String {
    let w = 720.0;
    let h = 240.0;
    let hi = series
        .iter()
        .flat_map(|s| s.values.iter().flatten())
        .fold(1.0f64, |a, v| a.max(*v))
        * 1.2;
    let mut svg = format!(
        r#"<svg id="{id}" class="plot" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" role="img">"#
    );
    let (top, scale) = y_axis(&mut svg, w, h, 0.0, hi, y_label, true);
    let y_of = |v: f64| MARGIN_T + (top - v) * scale;
    let x_max = xs.last().copied().unwrap_or(1).max(1) as f64;
    let x_of = |x: f64| MARGIN_L + x / x_max * (w - MARGIN_L - MARGIN_R);
    let step = tick_step(x_max, 10.0).max(1.0);
    let mut t = 0.0;
    while t <= x_max + 1e-9 {
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" class="tick">{}</text>"#,
            x_of(t),
            h - MARGIN_B + 14.0,
            fmt_num(t)
        );
        t += step;
    }
    let _ = write!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" class="axis">{}</text>"#,
        MARGIN_L + (w - MARGIN_L - MARGIN_R) / 2.0,
        h - 6.0,
        esc(x_label)
    );
    for s in series {
        let mut d = String::new();
        let mut prev: Option<f64> = None;
        for (x, v) in xs.iter().zip(&s.values) {
            let Some(v) = v else { continue };
            let (px, py) = (x_of(*x as f64), y_of(*v));
            match prev {
                None => {
                    let _ = write!(d, "M{px:.1},{py:.1}");
                }
                Some(_) => {
                    let _ = write!(d, " H{px:.1} V{py:.1}");
                }
            }
            prev = Some(*v);
        }
        let _ = write!(
            svg,
            r#"<path d="{d}" fill="none" stroke="{}" stroke-width="2.5"/>"#,
            s.colour
        );
    }
    legend(&mut svg, w, series);
    svg.push_str("</svg>");
    svg
}

/// One mark on the timeline.
pub struct Mark {
    pub t_s: f64,
    /// 0: readings lane, 1: player A, 2: player B.
    pub lane: usize,
    pub kind: MarkKind,
    pub title: String,
    /// The ruling it belongs to (links to its panel).
    pub seq: u32,
}

pub enum MarkKind {
    /// A reading from kami-no-ku start to its end (or the shimo-no-ku), with the kimari-ji moment.
    Reading {
        end_s: f64,
        decided_s: f64,
        review: bool,
        label: String,
    },
    Take,
    Foul,
    Send,
}

/// The match timeline: a lane of readings (kimari-ji moment marked) and a lane per player
/// with takes, fouls and sends. Every mark links to its ruling's panel.
pub fn timeline(id: &str, marks: &[Mark], end_s: f64, lane_names: [&str; 3]) -> String {
    let w = 1100.0;
    let lane_h = 34.0;
    let top = 10.0;
    let left = 110.0;
    let h = top + 3.0 * lane_h + 30.0;
    let start_s = marks
        .iter()
        .map(|m| m.t_s)
        .fold(f64::INFINITY, f64::min)
        .min(end_s);
    let start_s = if start_s.is_finite() {
        (start_s - 1.0).max(0.0)
    } else {
        0.0
    };
    let span = (end_s - start_s).max(1.0);
    let x_of = |t: f64| left + (t - start_s) / span * (w - left - 10.0);
    let mut svg = format!(
        r#"<svg id="{id}" class="plot timeline" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" role="img">"#
    );
    for (i, name) in lane_names.iter().enumerate() {
        let y = top + i as f64 * lane_h;
        let _ = write!(
            svg,
            r##"<rect x="{left}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{}"/><text x="{:.1}" y="{:.1}" text-anchor="end" class="lane">{}</text>"##,
            w - left - 10.0,
            lane_h - 4.0,
            if i % 2 == 0 { "#f4f4f4" } else { "#fafafa" },
            left - 6.0,
            y + lane_h / 2.0 + 2.0,
            esc(name)
        );
    }
    let step = tick_step(span, 12.0);
    let mut t = (start_s / step).ceil() * step;
    while t <= end_s {
        let x = x_of(t);
        let _ = write!(
            svg,
            r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{:.1}" stroke="#e2e2e2"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" class="tick">{} s</text>"##,
            top + 3.0 * lane_h,
            top + 3.0 * lane_h + 14.0,
            fmt_num(t)
        );
        t += step;
    }
    for m in marks {
        let y = top + m.lane as f64 * lane_h;
        let cy = y + (lane_h - 4.0) / 2.0;
        let x = x_of(m.t_s);
        let _ = write!(svg, r##"<a href="#ruling-{}">"##, m.seq);
        match &m.kind {
            MarkKind::Reading {
                end_s,
                decided_s,
                review,
                label,
            } => {
                let x1 = x_of(*end_s).max(x + 3.0);
                let _ = write!(
                    svg,
                    r##"<rect class="reading-bar" x="{x:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}" stroke="{}" stroke-width="{}"><title>{}</title></rect><line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{COLOUR_KIMARIJI}" stroke-width="2"/><text x="{:.1}" y="{:.1}" class="bar-label">{}</text>"##,
                    y + 6.0,
                    x1 - x,
                    lane_h - 16.0,
                    if *review { "#ffe0b2" } else { "#cfd8dc" },
                    if *review { "#e65100" } else { "#90a4ae" },
                    if *review { 2 } else { 1 },
                    esc(&m.title),
                    x_of(*decided_s),
                    y + 2.0,
                    x_of(*decided_s),
                    y + lane_h - 6.0,
                    x + 2.0,
                    y + lane_h - 12.0,
                    esc(label)
                );
            }
            MarkKind::Take => {
                let c = if m.lane == 1 { COLOUR_A } else { COLOUR_B };
                let _ = write!(
                    svg,
                    r#"<circle cx="{x:.1}" cy="{cy:.1}" r="6" fill="{c}"><title>{}</title></circle>"#,
                    esc(&m.title)
                );
            }
            MarkKind::Foul => {
                let _ = write!(
                    svg,
                    r#"<path d="M{:.1},{:.1} l10,10 m0,-10 l-10,10" stroke="{COLOUR_FOUL}" stroke-width="3"><title>{}</title></path>"#,
                    x - 5.0,
                    cy - 5.0,
                    esc(&m.title)
                );
            }
            MarkKind::Send => {
                let c = if m.lane == 1 { COLOUR_A } else { COLOUR_B };
                let dir = if m.lane == 1 { -1.0 } else { 1.0 };
                let _ = write!(
                    svg,
                    r#"<path d="M{x:.1},{:.1} l-6,{:.1} h12 z" fill="none" stroke="{c}" stroke-width="2"><title>{}</title></path>"#,
                    cy + dir * 7.0,
                    -dir * 12.0,
                    esc(&m.title)
                );
            }
        }
        svg.push_str("</a>");
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_steps_are_round() {
        assert_eq!(tick_step(100.0, 5.0), 20.0);
        assert_eq!(tick_step(7.0, 5.0), 2.0);
        assert_eq!(tick_step(0.3, 5.0), 0.1);
    }

    #[test]
    fn labels_in_a_bar_chart_are_escaped() {
        let svg = bar_chart(
            "p",
            &["<b>".into()],
            &[Series {
                name: "A & co".into(),
                colour: COLOUR_A,
                values: vec![Some(3.0)],
            }],
            "ms",
        );
        assert!(svg.contains("&lt;b&gt;"));
        assert!(svg.contains("A &amp; co"));
        assert!(!svg.contains("<b>"));
    }
}

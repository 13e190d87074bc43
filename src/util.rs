//! Small helpers every stage may use: a JSON line written and flushed, and the median.
//! Looks at nothing else in the crate.

use std::io::Write;

/// Writes `v` as one JSON line and flushes it (a ruling is never held in a buffer).
pub fn write_json_line<T: serde::Serialize>(out: &mut dyn Write, v: &T) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, v)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// The middle value of `v` (the upper of the two middle ones for an even count), sorting
/// `v` in place; `None` when empty.
pub fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[v.len() / 2])
}

/// The median of `v` with an even count's two middle values averaged, sorting `v` in
/// place; `None` when empty.
pub fn median_mean_of_middle(v: &mut [f64]) -> Option<f64> {
    let n = v.len();
    let upper = median(v)?;
    Some(if n % 2 == 1 {
        upper
    } else {
        (v[n / 2 - 1] + upper) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_odd_even_and_empty_lists() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(3.0));
        assert_eq!(median_mean_of_middle(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median_mean_of_middle(&mut [5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&mut []), None);
        assert_eq!(median_mean_of_middle(&mut []), None);
    }

    #[test]
    fn a_json_line_ends_in_a_newline() {
        let mut out = Vec::new();
        write_json_line(&mut out, &serde_json::json!({"seq": 1})).expect("written");
        assert_eq!(out, b"{\"seq\":1}\n");
    }
}

//! Small helpers every stage may use: a JSON line written and flushed, the median, and a
//! homography applied to a point, with the row arrays JSON files hold 3x3 matrices in.
//! Looks at nothing else in the crate.

use nalgebra::{Matrix3, Vector3};
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

/// A 3x3 homography applied to a point, with the homogeneous divide.
pub fn apply_homography(h: &Matrix3<f64>, p: [f64; 2]) -> [f64; 2] {
    let q = h * Vector3::new(p[0], p[1], 1.0);
    [q.x / q.z, q.y / q.z]
}

/// A matrix from nested row arrays, `[[a, b, c], [d, e, f], [g, h, i]]`: the form the JSON
/// files hold 3x3 matrices in, and the form they read best in code.
pub fn matrix_from_rows(rows: &[[f64; 3]; 3]) -> Matrix3<f64> {
    Matrix3::from_fn(|i, j| rows[i][j])
}

/// A matrix as nested row arrays (for the JSON files and OpenCV's `Mat::from_slice_2d`).
pub fn matrix_to_rows(m: &Matrix3<f64>) -> [[f64; 3]; 3] {
    std::array::from_fn(|i| std::array::from_fn(|j| m[(i, j)]))
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
    fn a_homography_divides_by_w_and_rows_stay_rows() {
        let rows = [[2.0, 0.0, 1.0], [0.0, 3.0, -1.0], [0.0, 0.5, 1.0]];
        let h = matrix_from_rows(&rows);
        assert_eq!(h[(0, 2)], 1.0);
        assert_eq!(h[(2, 1)], 0.5);
        assert_eq!(matrix_to_rows(&h), rows);
        assert_eq!(apply_homography(&h, [1.0, 2.0]), [1.5, 2.5]);
    }

    #[test]
    fn a_json_line_ends_in_a_newline() {
        let mut out = Vec::new();
        write_json_line(&mut out, &serde_json::json!({"seq": 1})).expect("written");
        assert_eq!(out, b"{\"seq\":1}\n");
    }
}

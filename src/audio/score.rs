//! Heard readings against the sound that was laid down (`dub`'s truth): the kami-no-ku
//! start, the kana onsets, the kimari-ji moment, the poem, and readings missed or
//! invented. Pure: takes both timelines, returns the numbers.

use super::listen::HeardReading;
use super::reader::Spoken;
use crate::rules::kimariji::ReadPool;
use crate::util::median;

/// A heard reading belongs to a spoken one when their starts are this close.
const MATCH_WINDOW_S: f64 = 1.0;
/// The proof's bound on the kami-no-ku start.
pub const KAMI_START_TOLERANCE_S: f64 = 0.030;

/// One spoken reading and what was heard of it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ReadingScore {
    pub seq: u32,
    pub poem: u8,
    /// The heard poem (`None`: left null or the reading was missed).
    pub heard_poem: Option<u8>,
    pub heard: bool,
    pub kami_start_err_s: Option<f64>,
    /// Median of |heard - spoken| over the kana onsets after the first.
    pub onset_median_err_s: Option<f64>,
    /// The kimari-ji's length in kana (against the poems not yet read).
    pub kimariji_len: usize,
    /// Heard minus spoken onset of the kimari-ji's last kana.
    pub kimariji_err_s: Option<f64>,
    /// The heard kimari-ji moment lies within that kana as spoken: after the previous
    /// kana's onset and before the next one.
    pub kimariji_hit: bool,
}

/// The whole recording's numbers.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SoundScore {
    pub spoken: usize,
    pub heard: usize,
    pub missed: usize,
    pub invented: usize,
    pub kami_start_within_30ms: usize,
    /// Every kana onset after the first, |heard - spoken|, seconds.
    pub onset_errors_s: Vec<f64>,
    pub onset_median_err_s: Option<f64>,
    pub kimariji_hits: usize,
    pub poem_right: usize,
    pub poem_wrong: usize,
    pub poem_null: usize,
    pub readings: Vec<ReadingScore>,
}

/// Scores `heard` against `spoken` (both in time order).
pub fn score(spoken: &[Spoken], heard: &[HeardReading]) -> SoundScore {
    let mut used = vec![false; heard.len()];
    let mut pool = ReadPool::new();
    let mut rows = Vec::new();
    let mut all_onsets = Vec::new();
    for s in spoken {
        let t0 = s.kami_onsets_s[0];
        let best = heard
            .iter()
            .enumerate()
            .filter(|(i, h)| !used[*i] && (h.kami_start_s - t0).abs() <= MATCH_WINDOW_S)
            .min_by(|a, b| {
                (a.1.kami_start_s - t0)
                    .abs()
                    .total_cmp(&(b.1.kami_start_s - t0).abs())
            })
            .map(|(i, _)| i);
        let kimariji_len = pool.kimariji(s.poem).map_or(1, |k| k.len);
        pool.mark_read(s.poem);
        let mut row = ReadingScore {
            seq: s.seq,
            poem: s.poem,
            heard_poem: None,
            heard: best.is_some(),
            kami_start_err_s: None,
            onset_median_err_s: None,
            kimariji_len,
            kimariji_err_s: None,
            kimariji_hit: false,
        };
        if let Some(i) = best {
            used[i] = true;
            let h = &heard[i];
            row.heard_poem = h.poem;
            row.kami_start_err_s = Some(h.kami_start_s - t0);
            let mut errs: Vec<f64> = h
                .onsets_s
                .iter()
                .zip(&s.kami_onsets_s)
                .skip(1)
                .map(|(a, b)| (a - b).abs())
                .collect();
            all_onsets.extend(errs.iter().copied());
            row.onset_median_err_s = median(&mut errs);
            let k = kimariji_len.max(1) - 1;
            if let (Some(&ht), Some(&st)) = (h.onsets_s.get(k), s.kami_onsets_s.get(k)) {
                row.kimariji_err_s = Some(ht - st);
                let before = if k == 0 {
                    st - 0.25
                } else {
                    s.kami_onsets_s[k - 1]
                };
                let after = s.kami_onsets_s.get(k + 1).copied().unwrap_or(s.kami_end_s);
                row.kimariji_hit = ht > before && ht < after;
            }
        }
        rows.push(row);
    }
    let heard_n = rows.iter().filter(|r| r.heard).count();
    SoundScore {
        spoken: spoken.len(),
        heard: heard.len(),
        missed: spoken.len() - heard_n,
        invented: used.iter().filter(|u| !**u).count(),
        kami_start_within_30ms: rows
            .iter()
            .filter(|r| {
                r.kami_start_err_s
                    .is_some_and(|e| e.abs() <= KAMI_START_TOLERANCE_S)
            })
            .count(),
        onset_median_err_s: median(&mut all_onsets.clone()),
        onset_errors_s: all_onsets,
        kimariji_hits: rows.iter().filter(|r| r.kimariji_hit).count(),
        poem_right: rows.iter().filter(|r| r.heard_poem == Some(r.poem)).count(),
        poem_wrong: rows
            .iter()
            .filter(|r| r.heard_poem.is_some_and(|p| p != r.poem))
            .count(),
        poem_null: rows
            .iter()
            .filter(|r| r.heard && r.heard_poem.is_none())
            .count(),
        readings: rows,
    }
}

//! A tournament reader's timeline without a match: readings at a real reader's pace and
//! pauses (the shimo-no-ku whole, its last kana held, about a second of silence, then
//! the next kami-no-ku), for sound tests and benchmarks that need no video of a match.
//! The simulator's own timeline is shorter between verses; both are tested.

use crate::rules::kimariji::sound_units;
use crate::rules::poems::{poem, POEM_COUNT};
use crate::rules::Reading;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// `n` readings of distinct poems from `start_s`, seeded.
pub fn tournament_timeline(seed: u64, n: usize, start_s: f64) -> Vec<Reading> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut order: Vec<u8> = (1..=POEM_COUNT).collect();
    order.shuffle(&mut rng);
    let mut t = start_s;
    let mut out = Vec::new();
    for (i, &no) in order.iter().take(n).enumerate() {
        let Some(p) = poem(no) else { continue };
        let units = sound_units(&p.kami_kana, &p.kami_pron).len();
        let first = rng.gen_range(0.9..1.3);
        let mora = rng.gen_range(0.21..0.29);
        let mut onsets = vec![round_ms(t)];
        let mut u = t + first;
        for _ in 1..units {
            onsets.push(round_ms(u));
            u += mora + rng.gen_range(-0.02..0.02);
        }
        let kami_end = u - 0.02;
        // The take and any sends, then the shimo-no-ku (14 kana, last held) and a pause.
        let shimo_start = kami_end + rng.gen_range(0.8..4.0);
        let shimo_len = 13.0 * rng.gen_range(0.2..0.26) + 1.2;
        out.push(Reading {
            seq: i as u32 + 1,
            poem: no,
            kami_start_s: onsets[0],
            onsets_s: Some(onsets),
            kami_end_s: Some(round_ms(kami_end)),
            shimo_start_s: Some(round_ms(shimo_start)),
            void: false,
        });
        t = shimo_start + shimo_len + rng.gen_range(0.8..1.3);
    }
    out
}

fn round_ms(t: f64) -> f64 {
    (t * 1000.0).round() / 1000.0
}

//! Kimari-ji: the shortest prefix of a poem's kami-no-ku, as pronounced, that no unread
//! poem shares (15-1). The unit is one kana of the historical spelling; units are
//! compared by their sound, with a long o (おう, おお) as one token. The rule is the one
//! written in the data set's README; a test checks it against the static kimari-ji.

use crate::rules::poems::{poem, poems, Poem};

/// The long-o comparison token.
const LONG_O: &str = "ō";

/// Splits the pronounced kami-no-ku into one sound per historical kana unit: small
/// ゃ/ゅ/ょ attach to the kana before them.
pub fn sound_units(kami_kana: &str, kami_pron: &str) -> Vec<String> {
    let mut units: Vec<String> = Vec::new();
    for c in kami_pron.chars() {
        if matches!(c, 'ゃ' | 'ゅ' | 'ょ') {
            if let Some(last) = units.last_mut() {
                last.push(c);
                continue;
            }
        }
        units.push(c.to_string());
    }
    debug_assert_eq!(units.len(), kami_kana.replace(' ', "").chars().count());
    units
}

fn has_o_vowel(unit: &str) -> bool {
    unit == LONG_O
        || unit.ends_with('ょ')
        || matches!(
            unit,
            "お" | "こ"
                | "ご"
                | "そ"
                | "ぞ"
                | "と"
                | "ど"
                | "の"
                | "ほ"
                | "ぼ"
                | "ぽ"
                | "も"
                | "よ"
                | "ろ"
        )
}

/// Comparison keys: a う or お after an o-vowel unit is one long-o token.
pub fn comparison_keys(units: &[String]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::with_capacity(units.len());
    for (i, u) in units.iter().enumerate() {
        let long = i > 0 && (u == "う" || u == "お") && has_o_vowel(&keys[i - 1]);
        keys.push(if long { LONG_O.to_string() } else { u.clone() });
    }
    keys
}

/// A kimari-ji: its length in units and its spelling in historical kana.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kimariji {
    pub poem: u8,
    pub len: usize,
    pub kana: String,
}

/// The kimari-ji of `target` when the poems in `unread` (which should hold `target`)
/// are the ones not yet read.
pub fn kimariji_in_pool(target: &Poem, unread: &[&Poem]) -> Kimariji {
    let mut len = 1;
    for other in unread.iter().filter(|o| o.no != target.no) {
        let shared = target
            .keys
            .iter()
            .zip(other.keys.iter())
            .take_while(|(a, b)| a == b)
            .count();
        len = len.max(shared + 1);
    }
    let len = len.min(target.keys.len());
    let kana = target
        .kami_kana
        .replace(' ', "")
        .chars()
        .take(len)
        .collect();
    Kimariji {
        poem: target.no,
        len,
        kana,
    }
}

/// Tracks which poems have been read, and answers kimari-ji questions.
#[derive(Debug, Clone)]
pub struct ReadPool {
    read: [bool; 101],
}

impl Default for ReadPool {
    fn default() -> Self {
        ReadPool { read: [false; 101] }
    }
}

impl ReadPool {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn mark_read(&mut self, no: u8) {
        if let Some(slot) = self.read.get_mut(no as usize) {
            *slot = true;
        }
    }

    pub fn is_read(&self, no: u8) -> bool {
        self.read.get(no as usize).copied().unwrap_or(false)
    }

    pub fn unread(&self) -> Vec<&'static Poem> {
        poems()
            .iter()
            .filter(|p| !self.read[p.no as usize])
            .collect()
    }

    /// Kimari-ji of poem `no` against the unread pool (the poem itself counted unread).
    pub fn kimariji(&self, no: u8) -> Option<Kimariji> {
        let target = poem(no)?;
        let mut pool = self.unread();
        if self.is_read(no) {
            pool.push(target);
        }
        Some(kimariji_in_pool(target, &pool))
    }
}

/// Static kimari-ji (nothing read yet) of poem `no`.
pub fn static_kimariji(no: u8) -> Option<Kimariji> {
    ReadPool::new().kimariji(no)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_kimariji_match_the_data_set_for_all_100() {
        for p in poems() {
            let k = static_kimariji(p.no).unwrap();
            assert_eq!(k.kana, p.static_kimariji, "poem {}", p.no);
        }
    }

    #[test]
    fn static_length_counts_are_7_42_37_6_2_6() {
        let mut counts = [0usize; 7];
        for p in poems() {
            counts[static_kimariji(p.no).unwrap().len] += 1;
        }
        assert_eq!(&counts[1..], &[7, 42, 37, 6, 2, 6]);
    }

    #[test]
    fn art_15_1_kimariji_shrinks_as_poems_are_read() {
        let mut pool = ReadPool::new();
        assert_eq!(pool.kimariji(44).unwrap().kana, "あふこ");
        pool.mark_read(60);
        pool.mark_read(95);
        assert_eq!(pool.kimariji(44).unwrap().kana, "あふ");
        let mut pool = ReadPool::new();
        assert_eq!(pool.kimariji(11).unwrap().len, 6);
        pool.mark_read(76);
        assert_eq!(pool.kimariji(11).unwrap().kana, "わた");
    }

    #[test]
    fn long_o_merges_ou_and_oo() {
        let k44 = &poem(44).unwrap().keys;
        let k60 = &poem(60).unwrap().keys;
        assert_eq!(k44[..2], k60[..2]);
    }
}
